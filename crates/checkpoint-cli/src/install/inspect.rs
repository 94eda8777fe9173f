//! What `checkpoint install` left behind, read back the way it writes: for `checkpoint doctor`.
//! The same hooks files, the same strict parse, the same recognition of our handlers (by the
//! command install writes), bounded reads.

use std::path::{Path, PathBuf};

use checkpoint_core::agent::{HooksLayout, PluginSource};
use checkpoint_core::doctor::TrustFile;
use serde_json::Value;

use crate::CliError;

use super::adapter;
use super::agents::{AgentSpec, Scope};
use super::config_file::{ConfigFile, read_bounded};
use super::mcp::beside_user_dir;
use super::settings::Settings;

/// Our handlers found in one hooks file.
#[derive(Debug)]
pub(crate) struct Installed {
    /// The scope the file belongs to.
    pub(crate) scope: Scope,
    /// The hooks file.
    pub(crate) file: PathBuf,
    /// Each handler of ours: the event and the command it runs, in the file's order.
    pub(crate) handlers: Vec<(String, String)>,
}

/// Every hooks file of `spec` (the project's at `root`, then the user's) that holds a handler of
/// ours. A file that cannot be read or parsed is an error naming it.
pub(crate) fn installed(spec: &AgentSpec, root: &Path) -> Result<Vec<Installed>, CliError> {
    let mut found = Vec::new();
    for scope in scopes(root) {
        let file = ConfigFile::read(spec.config_path(&scope)?)?;
        let handlers = match spec.table.layout {
            HooksLayout::Plugin(source) => plugin_handlers(spec, source, &file),
            _ => ours(spec, &file.settings()?),
        };
        if !handlers.is_empty() {
            found.push(Installed {
                scope,
                file: file.path,
                handlers,
            });
        }
    }
    Ok(found)
}

/// The agent's settings files where hooks are written (the project's at `root`, then the
/// user's) that exist, with their content (none for a plugin): what the agent reads besides our handlers (switches
/// that turn hooks off, folder trust). A file that cannot be read or parsed is an error naming
/// it.
pub(crate) fn settings_files(
    spec: &AgentSpec,
    root: &Path,
) -> Result<Vec<(PathBuf, Settings)>, CliError> {
    let mut found = Vec::new();
    if matches!(spec.table.layout, HooksLayout::Plugin(_)) {
        return Ok(found);
    }
    for scope in scopes(root) {
        let file = ConfigFile::read(spec.config_path(&scope)?)?;
        if file.text.is_some() {
            let settings = file.settings()?;
            found.push((file.path, settings));
        }
    }
    Ok(found)
}

/// The (event, command) of each event a plugin of ours in `file` handles, when it runs our
/// adapter.
fn plugin_handlers(
    spec: &AgentSpec,
    source: PluginSource,
    file: &ConfigFile,
) -> Vec<(String, String)> {
    let command = file.text.as_deref().and_then(source.command_of);
    let ours = command.filter(|command| {
        let handler = serde_json::json!({"command": command});
        adapter::runs(&handler, "command", &spec.adapter(), adapter::HOOK_MARKER)
    });
    ours.map(|command| {
        spec.table
            .events
            .iter()
            .map(|event| (event.name.to_owned(), command.clone()))
            .collect()
    })
    .unwrap_or_default()
}

/// The scopes a project at `root` is under, innermost first.
fn scopes(root: &Path) -> [Scope; 2] {
    [Scope::Project(root.to_owned()), Scope::User]
}

/// The (event, command) of each handler of ours in `settings`.
fn ours(spec: &AgentSpec, settings: &Settings) -> Vec<(String, String)> {
    let adapter = spec.adapter();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let key = spec.table.layout.command_key();
    let grouped = spec.table.layout.grouped();
    let mut found = Vec::new();
    for (event, entries) in hooks {
        let entries = entries.as_array().into_iter().flatten();
        let handlers: Vec<&Value> = if grouped {
            entries
                .filter_map(|group| group.get("hooks").and_then(Value::as_array))
                .flatten()
                .collect()
        } else {
            entries.collect()
        };
        let ours = handlers
            .into_iter()
            .filter(|handler| adapter::runs(handler, key, &adapter, adapter::HOOK_MARKER));
        for handler in ours {
            if let Some(command) = handler.get(key).and_then(Value::as_str) {
                found.push((event.clone(), command.to_owned()));
            }
        }
    }
    found
}

/// The agent's trust file and its text (`None` when it does not exist), read bounded.
pub(crate) fn trust_file(
    spec: &AgentSpec,
    file: TrustFile,
) -> Result<(PathBuf, Result<Option<String>, String>), CliError> {
    let path = match file {
        TrustFile::InUserDir(name) => spec.config_dir(&Scope::User)?.join(name),
        TrustFile::BesideUserDir(name) => beside_user_dir(spec)?.join(name),
    };
    let text = read_bounded(&path).map_err(|e| e.to_string());
    Ok((path, text))
}

/// The command that asks `program` for its version: its path, shell-quoted, and `--version`.
pub(crate) fn version_command(program: &Path) -> Option<String> {
    adapter::command_line(program, "--version").ok()
}

/// The program a handler's command runs: its first word after environment assignments.
pub(crate) fn program(command: &str) -> Option<PathBuf> {
    adapter::invocation(command)?
        .into_iter()
        .next()
        .map(PathBuf::from)
}

/// The id Claude Code enables the plugin of this repository's marketplace by, in
/// `enabledPlugins`: `<plugin>@<marketplace>` (`.claude-plugin/marketplace.json`).
const CLAUDE_PLUGIN_ID: &str = "checkpoint@checkpoint";

/// Where the agent is told to load checkpoint's packaged plugin (`plugins/`), when it is: the
/// Claude Code settings file that enables it, or the Gemini CLI extension's directory. Wired
/// beside `checkpoint install`'s hooks, every event runs the adapter twice.
pub(crate) fn packaged_plugin(spec: &AgentSpec, root: &Path) -> Result<Option<PathBuf>, CliError> {
    match spec.name() {
        "claude" => Ok(settings_files(spec, root)?
            .into_iter()
            .find(|(_, settings)| {
                let enabled = settings.get("enabledPlugins");
                enabled.and_then(|e| e.get(CLAUDE_PLUGIN_ID)) == Some(&Value::Bool(true))
            })
            .map(|(path, _)| path)),
        "gemini" => {
            let extension = spec.config_dir(&Scope::User)?.join("extensions/checkpoint");
            Ok(extension.exists().then_some(extension))
        }
        _ => Ok(None),
    }
}
