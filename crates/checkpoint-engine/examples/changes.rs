//! Prints how many paths differ from `HEAD` in a repository, read with a chosen backend. Used by
//! `bench/changes.sh` to time the backends; `--json` prints the whole change set instead.
//!
//! ```text
//! cargo run --release -p checkpoint-engine --example changes -- <cli|gix|auto> [DIR] [--json]
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::policy::GitBackend;
use checkpoint_engine::git;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let mut positional = args.iter().filter(|a| *a != "--json");
    let backend = match positional.next().map(String::as_str) {
        Some("cli") => GitBackend::Cli,
        Some("gix") => GitBackend::Gix,
        Some("auto") => GitBackend::Auto,
        _ => return fail("usage: changes <cli|gix|auto> [DIR] [--json]"),
    };
    let dir = positional
        .next()
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let repo = match git::discover(&dir) {
        Ok(Some(repo)) => repo,
        Ok(None) => return fail("not inside a git repository"),
        Err(err) => return fail(&err.to_string()),
    };
    let changes = match git::changes(&repo, backend) {
        Ok(changes) => changes,
        Err(err) => return fail(&err.to_string()),
    };
    let out = if json {
        serde_json::to_string_pretty(&changes).unwrap_or_else(|err| err.to_string())
    } else {
        changes.changes.len().to_string()
    };
    match writeln!(std::io::stdout(), "{out}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn fail(message: &str) -> ExitCode {
    // Reporting the failure is best effort; the exit code carries it either way.
    let _ = writeln!(std::io::stderr(), "changes: {message}");
    ExitCode::FAILURE
}
