//! Prints the git tree id of a repository's worktree as a receipt records it (`HEAD` plus every
//! change, untracked files included; the user's index untouched). Used by `bench/restore.sh` to
//! time what a receipt-writing stop adds.
//!
//! ```text
//! cargo run --release -p checkpoint-engine --example tree -- [DIR]
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_engine::git;

fn main() -> ExitCode {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let tree = match git::discover(&dir) {
        Ok(Some(repo)) => git::tree::worktree_tree(&repo).map_err(|e| e.to_string()),
        Ok(None) => Err("not inside a git repository".to_owned()),
        Err(err) => Err(err.to_string()),
    };
    let written = match tree {
        Ok(tree) => writeln!(std::io::stdout(), "{tree}"),
        Err(err) => {
            // Reporting the failure is best effort; the exit code carries it either way.
            let _ = writeln!(std::io::stderr(), "tree: {err}");
            return ExitCode::FAILURE;
        }
    };
    if written.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
