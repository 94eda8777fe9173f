//! An agent whose hooks are a plugin file of checkpoint's own (OpenCode): install writes the
//! plugin its home renders for the adapter's command line; uninstall deletes it while it is the
//! plugin install wrote (an edited one is kept, and said so). A file of that name that is not
//! ours is never replaced.

use checkpoint_core::agent::PluginSource;

use serde_json::Value;

use crate::{CliError, output};

use super::agents::{AgentSpec, Scope};
use super::config_file::{ConfigFile, Replaced};
use super::ledger::{Ledger, Mode};
use super::{Edit, EditResult, Target};

/// [`super::edit`] for a plugin: makes the plugin file run the command of `handlers` (all run
/// the same), or without handlers removes it; previews the change with `--dry-run`.
pub(super) fn edit(
    source: PluginSource,
    target: &Target,
    spec: &AgentSpec,
    handlers: &[(&str, Value)],
    (scope, ledger, file): (Scope, Ledger, ConfigFile),
) -> Result<Edit, CliError> {
    // The plugin runs the command of the handlers (all alike), for every event.
    let command = handlers.first().map(|(_, handler)| {
        handler[spec.table.layout.command_key()]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    });
    let text = wanted(source, spec, &file, command.as_deref())?;
    let removed = match (&text, &command) {
        (Some(_), None) => spec
            .table
            .events
            .iter()
            .map(|e| e.name.to_owned())
            .collect(),
        _ => Vec::new(),
    };
    let result = match text {
        None if target.dry_run => {
            output::out("nothing to change");
            EditResult::Previewed
        }
        None => EditResult::Unchanged,
        Some(text) if target.dry_run => {
            output::out(file.diff(&text).trim_end());
            EditResult::Previewed
        }
        Some(text) => EditResult::Written(write(&file, &text, &ledger)?),
    };
    Ok(Edit {
        scope,
        ledger,
        file: file.path,
        removed,
        result,
    })
}

/// What the plugin file should hold after the edit: `Some(text)` to write, `None` to leave the
/// file as it is. `command` is the adapter's command line installing, `None` uninstalling.
pub(super) fn wanted(
    source: PluginSource,
    spec: &AgentSpec,
    file: &ConfigFile,
    command: Option<&str>,
) -> Result<Option<String>, CliError> {
    let ours = file.text.as_deref().map(source.command_of);
    match (command, ours) {
        (Some(_), Some(None)) => Err(CliError::new(
            format!(
                "{}: a file of that name is there, and it is not checkpoint's {} plugin",
                file.path.display(),
                spec.table.title
            ),
            "the file was left untouched; move it away and run this again",
        )),
        (Some(command), _) => {
            let text = (source.render)(command);
            Ok((file.text.as_deref() != Some(text.as_str())).then_some(text))
        }
        (None, Some(Some(installed))) => {
            if file.text.as_deref() == Some((source.render)(&installed).as_str()) {
                return Ok(Some(String::new()));
            }
            output::out(&format!(
                "{} was edited since checkpoint wrote it: left as it is (remove it by hand).",
                file.path.display()
            ));
            Ok(None)
        }
        (None, _) => Ok(None),
    }
}

/// Writes the plugin `text`, or with an empty `text` deletes the plugin (and the directories
/// this leaves empty in the project).
pub(super) fn write(file: &ConfigFile, text: &str, ledger: &Ledger) -> Result<Replaced, CliError> {
    if !text.is_empty() || ledger.mode == Mode::Install {
        return file.replace(text, ledger);
    }
    ledger.remove(&file.path)?;
    Ok(Replaced {
        backup_made: None,
        file_removed: true,
    })
}
