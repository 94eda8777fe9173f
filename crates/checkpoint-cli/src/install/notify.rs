//! `checkpoint install codex --notify`: for Codex without native hooks, the legacy `notify`
//! program in Codex's `config.toml` (`notify = ["/path/to/checkpoint-codex", "notify"]`) instead
//! of the hooks. The rest of the file — comments, order, the user's other settings — is kept; a
//! `notify` program of someone else's is never replaced. `checkpoint uninstall codex` removes ours.

use std::path::Path;

use toml_edit::{DocumentMut, Item};

use crate::{CliError, output};

use super::agents::AgentSpec;
use super::config_file::ConfigFile;
use super::ledger::{Ledger, Mode};
use super::{Target, drop_backup, report, scope};

/// The argument that makes the Codex adapter the `notify` program.
const NOTIFY_ARG: &str = "notify";

/// Refuses `--notify` for any agent but Codex.
pub(crate) fn check(wanted: bool, spec: Option<AgentSpec>) -> Result<(), CliError> {
    if wanted && spec.is_none_or(|spec| spec.name() != "codex") {
        return Err(CliError::usage(
            "--notify is for Codex CLI only: its legacy `notify` program",
            "run `checkpoint install codex --notify`",
        ));
    }
    Ok(())
}

/// Makes `program` (the Codex adapter) Codex's `notify` program in the `config.toml` of
/// `target`'s scope (with `None`, removes ours, and install's backup unless `mode` keeps it);
/// prints what it did.
pub(crate) fn set(
    target: &Target,
    spec: &AgentSpec,
    program: Option<&Path>,
    mode: Mode,
) -> Result<(), CliError> {
    let scope = scope(target.user)?;
    let file = ConfigFile::read(spec.config_dir(&scope)?.join("config.toml"))?;
    let path = file.path.display().to_string();
    let invalid = |message: String| {
        CliError::new(
            format!("{path}: {message}"),
            "the file was left untouched; fix it by hand and run this again",
        )
    };
    let original = file.text.as_deref().unwrap_or("");
    let mut doc: DocumentMut = original
        .parse()
        .map_err(|e: toml_edit::TomlError| invalid(output::one_line(&e.to_string())))?;
    if let Some(theirs) = doc.get("notify").filter(|item| !is_ours(item)) {
        let theirs = output::one_line(&theirs.to_string());
        return match program {
            Some(_) => Err(CliError::new(
                format!(
                    "{path}: Codex already runs another notify program: {}",
                    theirs.trim()
                ),
                "Codex runs one notify program: remove that line to use checkpoint's (the file \
                 was left untouched)",
            )),
            None => Ok(()),
        };
    }
    match program {
        Some(program) => {
            let program = program
                .to_str()
                .ok_or_else(|| invalid(format!("{}: not valid UTF-8", program.display())))?;
            let value: toml_edit::Array = [program, NOTIFY_ARG].into_iter().collect();
            doc.insert("notify", toml_edit::value(value));
        }
        None => {
            doc.remove("notify");
        }
    }
    let text = doc.to_string();
    if text == original {
        if program.is_some() {
            output::out(&format!(
                "Checkpoint is already Codex's notify program in {path}: nothing to change."
            ));
        }
        return Ok(());
    }
    if target.dry_run {
        output::out(file.diff(&text).trim_end());
        return Ok(());
    }
    let ledger = Ledger::of(&scope, mode)?;
    let replaced = file.replace(&text, &ledger)?;
    output::out(&match program {
        Some(program) => format!(
            "Made {} Codex's notify program in {path}: after each turn the gate runs, and a \
             block is pasted into Codex's tmux pane.",
            program.display()
        ),
        None => format!("Removed checkpoint's notify program from {path}."),
    });
    report(&file.path, &replaced);
    drop_backup(&ledger, &file.path)
}

/// Whether `item` is the `notify` line install writes: the absolute path of a
/// `checkpoint-codex`, then `notify`.
fn is_ours(item: &Item) -> bool {
    let words: Option<Vec<&str>> =
        (item.as_array()).and_then(|array| array.iter().map(|v| v.as_str()).collect());
    match words.as_deref() {
        Some([program, NOTIFY_ARG]) => {
            let program = Path::new(program);
            program.is_absolute() && program.file_name() == Some("checkpoint-codex".as_ref())
        }
        _ => false,
    }
}
