//! `checkpoint install claude --statusline`: make `checkpoint statusline` Claude Code's status
//! line — `"statusLine": {"type": "command", "command": "<this executable> statusline"}` in the
//! settings file the hooks go to — and `checkpoint uninstall claude`: remove it again.
//!
//! Claude Code has one status line. One that runs another program is the user's: install leaves
//! it and says how to chain ours into it, uninstall leaves it. Ours (a command whose program is
//! named `checkpoint`, in any directory) is updated in place, keeping its other keys.

use serde_json::{Map, Value};

use crate::{CliError, output};

use super::adapter;
use super::agents::AgentSpec;
use super::config_file::ConfigFile;
use super::settings::{self, Settings, SettingsError};
use super::{Change, Edit, Target, write_beside_hooks};

/// The settings key of Claude Code's status line.
const KEY: &str = "statusLine";
/// The program our status line runs, recognised by its file name.
const PROGRAM: &str = "checkpoint";
/// The subcommand that prints the status line.
const SUBCOMMAND: &str = "statusline";

/// Refuses `--statusline` for agents without a status line (Claude Code has one; `spec` is `None`
/// for git).
pub(crate) fn check(wanted: bool, spec: Option<AgentSpec>) -> Result<(), CliError> {
    if wanted && spec.is_none_or(|spec| !has_status_line(&spec)) {
        return Err(CliError::usage(
            "--statusline is for Claude Code only: the other agents have no status line command",
            "run `checkpoint install claude --statusline`",
        ));
    }
    Ok(())
}

/// With `wanted`, sets our status line in the settings file the hooks were written to (`hooks`:
/// what their edit did); a foreign one is left, with a note on how to chain ours.
pub(crate) fn install(
    wanted: bool,
    target: &Target,
    spec: &AgentSpec,
    hooks: &Edit,
) -> Result<(), CliError> {
    if !wanted {
        return Ok(());
    }
    let command = own_command()?;
    let file = ConfigFile::read(hooks.file.clone())?;
    let path = file.path.display();
    match change(&file, Some(&command))? {
        Change::Foreign(theirs) => output::out(&format!(
            "{}'s status line in {path} runs `{theirs}`: left as it is. To chain checkpoint's, \
             make it print both on one line from the same stdin, e.g. `in=$(cat); printf '%s · \
             %s\\n' \"$(printf %s \"$in\" | {theirs})\" \"$(printf %s \"$in\" | {command})\"`.",
            spec.table.title
        )),
        Change::Unchanged if target.dry_run => output::out("status line: nothing to change"),
        Change::Unchanged => output::out(&format!(
            "{}'s status line in {path} is already checkpoint's: nothing to change.",
            spec.table.title
        )),
        Change::To(text) => {
            let done = format!(
                "Set {}'s status line in {path}: {command}.",
                spec.table.title
            );
            write_beside_hooks(&file, &text, hooks, target.dry_run, &done)?;
        }
    }
    Ok(())
}

/// Whether the agent has a status line `checkpoint statusline` can be.
fn has_status_line(spec: &AgentSpec) -> bool {
    spec.home.capabilities().status_line
}

/// Removes our status line from the settings file the hooks were removed from, if it is there
/// (and only for an agent with a status line); a foreign one is left without a word.
pub(crate) fn uninstall(target: &Target, spec: &AgentSpec, hooks: &Edit) -> Result<(), CliError> {
    if !has_status_line(spec) {
        return Ok(());
    }
    let file = ConfigFile::read(hooks.file.clone())?;
    match change(&file, None)? {
        Change::Foreign(_) | Change::Unchanged => {}
        Change::To(text) => {
            let done = format!(
                "Removed checkpoint's status line for {} from {}.",
                spec.table.title,
                file.path.display()
            );
            write_beside_hooks(&file, &text, hooks, target.dry_run, &done)?;
        }
    }
    Ok(())
}

/// Sets our status line running `command` in `file` (with `None`, removes ours).
fn change(file: &ConfigFile, command: Option<&str>) -> Result<Change, CliError> {
    let before = file.settings()?;
    let mut after = before.clone();
    if let Some(theirs) = edit(&mut after, command).map_err(|e| file.invalid(e))? {
        return Ok(Change::Foreign(theirs));
    }
    if after == before {
        return Ok(Change::Unchanged);
    }
    Ok(Change::To(settings::render(&after, file.text.as_deref())))
}

/// Sets `settings.statusLine` to ours running `command` (with `None`, removes ours). An entry of
/// ours keeps its other keys (`padding`, …) and its place; a missing or `null` one is added at
/// the end. Returns what a foreign status line runs instead of touching it.
fn edit(settings: &mut Settings, command: Option<&str>) -> Result<Option<String>, SettingsError> {
    match settings.get(KEY) {
        None | Some(Value::Null) => {}
        Some(existing) if is_ours(existing) => {}
        Some(existing) => return Ok(Some(describe(existing))),
    }
    let Some(command) = command else {
        if settings.get(KEY).is_some_and(Value::is_object) {
            settings.shift_remove(KEY);
        }
        return Ok(None);
    };
    let entry = settings
        .entry(KEY)
        .or_insert_with(|| Value::Object(Map::new()));
    if entry.is_null() {
        *entry = Value::Object(Map::new());
    }
    let entry = entry.as_object_mut().ok_or_else(|| SettingsError::Shape {
        at: KEY.to_owned(),
        expected: "an object",
    })?;
    entry.insert("type".to_owned(), "command".into());
    entry.insert("command".to_owned(), command.into());
    Ok(None)
}

/// Whether a status line is the one [`own_command`] writes (from any path).
fn is_ours(status_line: &Value) -> bool {
    status_line.is_object() && adapter::runs(status_line, "command", PROGRAM, SUBCOMMAND)
}

/// A foreign status line for a message: its command, else its JSON.
fn describe(status_line: &Value) -> String {
    match status_line.get("command").and_then(Value::as_str) {
        Some(command) => command.to_owned(),
        None => status_line.to_string(),
    }
}

/// The command line of our status line: this executable's absolute path (shell-quoted when it
/// needs it) and `statusline`.
fn own_command() -> Result<String, CliError> {
    let hint = "run the installed checkpoint (e.g. ~/.cargo/bin/checkpoint) from a UTF-8 path";
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot find this executable: {e}"), hint))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    adapter::command_line(&exe, SUBCOMMAND)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Settings {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn ours_is_set_updated_in_place_and_removed() {
        let mut settings = object(json!({"a": 1}));
        assert_eq!(
            edit(&mut settings, Some("/bin/checkpoint statusline")).unwrap(),
            None
        );
        assert_eq!(
            Value::Object(settings.clone()),
            json!({"a": 1, "statusLine": {"type": "command", "command": "/bin/checkpoint statusline"}})
        );
        let mut settings = object(json!({
            "statusLine": {"type": "command", "command": "'/old dir/checkpoint' statusline", "padding": 1},
            "z": 2
        }));
        assert_eq!(
            edit(&mut settings, Some("/new/checkpoint statusline")).unwrap(),
            None
        );
        assert_eq!(
            Value::Object(settings.clone()),
            json!({
                "statusLine": {"type": "command", "command": "/new/checkpoint statusline", "padding": 1},
                "z": 2
            })
        );
        assert_eq!(edit(&mut settings, None).unwrap(), None);
        assert_eq!(Value::Object(settings), json!({"z": 2}));
        let mut null = object(json!({"statusLine": null}));
        assert_eq!(
            edit(&mut null, Some("/bin/checkpoint statusline")).unwrap(),
            None
        );
        assert_eq!(null[KEY]["command"], "/bin/checkpoint statusline");
    }

    #[test]
    fn a_foreign_status_line_is_reported_and_kept() {
        for (value, described) in [
            (
                json!({"type": "command", "command": "~/.claude/statusline.sh"}),
                "~/.claude/statusline.sh",
            ),
            (
                json!({"type": "command", "command": "checkpoint-claude"}),
                "checkpoint-claude",
            ),
            (json!("plain"), "\"plain\""),
        ] {
            let original = json!({"statusLine": value});
            let mut settings = object(original.clone());
            let installed = edit(&mut settings, Some("/bin/checkpoint statusline")).unwrap();
            assert_eq!(installed.as_deref(), Some(described));
            let uninstalled = edit(&mut settings, None).unwrap();
            assert_eq!(uninstalled.as_deref(), Some(described));
            assert_eq!(Value::Object(settings), original);
        }
    }
}
