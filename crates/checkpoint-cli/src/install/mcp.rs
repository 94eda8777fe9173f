//! `checkpoint install <agent> --mcp` and `checkpoint uninstall <agent> --mcp`: register (or
//! remove) the MCP server `checkpoint` — this executable with the argument `mcp` — in the agent's
//! MCP configuration:
//!
//! - Claude Code: `<project>/.mcp.json`, or with `--user` `~/.claude.json`
//!   (`$CLAUDE_CONFIG_DIR/.claude.json`), under `mcpServers`;
//! - Gemini CLI: the settings file the hooks go to, under `mcpServers`;
//! - Codex CLI: `<project>/.codex/config.toml`, or `$CODEX_HOME/config.toml` (`~/.codex/…`), as
//!   the table `[mcp_servers.checkpoint]`, edited with its comments and layout kept.
//!
//! Every other server and setting stays as it is and where it is. A server named `checkpoint` that
//! does not run a program named `checkpoint` is someone else's: install refuses to replace it and
//! uninstall leaves it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toml_edit::{DocumentMut, Item};

use crate::output::one_line;
use crate::{CliError, output};

use checkpoint_core::agent::{McpFile, McpFormat as Format};

use super::agents::{AgentSpec, Scope};
use super::config_file::ConfigFile;
use super::settings::{self, Settings, SettingsError};
use super::{Change, Edit, Target, write_beside_hooks};

/// The server's name in every agent's configuration.
const SERVER: &str = "checkpoint";
/// The program our server entry runs, recognised by its file name in any directory.
const PROGRAM: &str = "checkpoint";
/// The arguments that make `checkpoint` serve MCP.
const ARGS: [&str; 1] = ["mcp"];

/// Where an agent's MCP servers are configured for a scope.
#[derive(Debug)]
struct McpConfig {
    path: PathBuf,
    format: Format,
}

/// Refuses `--mcp` for git, which has no MCP servers.
pub(crate) fn not_for_git(target: &Target) -> Result<(), CliError> {
    if target.mcp {
        return Err(CliError::usage(
            "--mcp needs an agent: git runs no MCP servers",
            "run `checkpoint install claude --mcp` (or gemini, codex, copilot)",
        ));
    }
    Ok(())
}

/// Refuses `--mcp` for an agent whose MCP configuration checkpoint does not write, before
/// anything is written.
pub(crate) fn check(target: &Target, spec: &AgentSpec) -> Result<(), CliError> {
    if target.mcp && spec.table.mcp.is_none() {
        return Err(unsupported(spec));
    }
    Ok(())
}

fn unsupported(spec: &AgentSpec) -> CliError {
    CliError::usage(
        format!(
            "--mcp: checkpoint does not register MCP servers for {}",
            spec.table.title
        ),
        format!(
            "install without --mcp, and add `checkpoint mcp` to {}'s MCP configuration by hand",
            spec.table.title
        ),
    )
}

/// With `--mcp`, registers the server for `spec` after its hooks (`hooks`: what their edit
/// did); else does nothing.
pub(crate) fn install(target: &Target, spec: &AgentSpec, hooks: &Edit) -> Result<(), CliError> {
    if !target.mcp {
        return Ok(());
    }
    let scope = &hooks.scope;
    let Some(config) = mcp_config(spec, scope)? else {
        return Err(unsupported(spec));
    };
    let command = own_command()?;
    let file = ConfigFile::read(config.path)?;
    let change = match config.format {
        Format::Json { typed } => set_json(&file, Some(&json_entry(&command, typed)))?,
        Format::Toml => set_toml(&file, Some(&command))?,
    };
    let path = file.path.display();
    let what = format!("the checkpoint MCP server for {}", spec.table.title);
    match change {
        Change::Foreign(command) => Err(CliError::new(
            format!("{path}: an MCP server named `{SERVER}` already runs `{command}`"),
            "rename or remove that server, then run this again (the file was left untouched)",
        )),
        Change::Unchanged if target.dry_run => {
            output::out("MCP server: nothing to change");
            Ok(())
        }
        Change::Unchanged => {
            output::out(&format!(
                "{} is already registered in {path}: nothing to change.",
                capitalised(&what)
            ));
            Ok(())
        }
        Change::To(text) => {
            let done = format!("Registered {what} in {path}: {command} {}.", ARGS.join(" "));
            if write_beside_hooks(&file, &text, hooks, target.dry_run, &done)?
                && let Some(note) = next_step(spec, scope)
            {
                output::out(note);
            }
            Ok(())
        }
    }
}

/// With `--mcp`, removes our server for `spec`, and nothing else (`hooks`: what the removal of
/// the hooks did); else does nothing. Returns the MCP configuration file it looked at.
pub(crate) fn uninstall(
    target: &Target,
    spec: &AgentSpec,
    hooks: &Edit,
) -> Result<Option<PathBuf>, CliError> {
    if !target.mcp {
        return Ok(None);
    }
    let Some(config) = mcp_config(spec, &hooks.scope)? else {
        return Ok(None);
    };
    let file = ConfigFile::read(config.path)?;
    let change = match config.format {
        Format::Json { .. } => set_json(&file, None)?,
        Format::Toml => set_toml(&file, None)?,
    };
    let path = file.path.display();
    match change {
        Change::Foreign(command) => output::out(&format!(
            "The MCP server `{SERVER}` in {path} runs `{command}`, not checkpoint: left as it is."
        )),
        Change::Unchanged if target.dry_run => output::out("MCP server: nothing to change"),
        Change::Unchanged => output::out(&format!(
            "No checkpoint MCP server for {} in {path}: nothing to change.",
            spec.table.title
        )),
        Change::To(text) => {
            let done = format!(
                "Removed the checkpoint MCP server for {} from {path}.",
                spec.table.title
            );
            write_beside_hooks(&file, &text, hooks, target.dry_run, &done)?;
        }
    }
    Ok(Some(file.path))
}

/// The agent's MCP configuration file for `scope`, and how it is written; `None` for an agent
/// whose MCP configuration checkpoint does not write.
fn mcp_config(spec: &AgentSpec, scope: &Scope) -> Result<Option<McpConfig>, CliError> {
    let Some(mcp) = &spec.table.mcp else {
        return Ok(None);
    };
    let file = match scope {
        Scope::Project(_) => mcp.project,
        Scope::User => mcp.user,
    };
    let path = match (file, scope) {
        (McpFile::HooksFile, _) => spec.config_path(scope)?,
        (McpFile::InConfigDir(name), _) | (McpFile::AtProjectRoot(name), Scope::User) => {
            spec.config_dir(scope)?.join(name)
        }
        (McpFile::AtProjectRoot(name), Scope::Project(root)) => root.join(name),
        (McpFile::BesideUserDir(name), _) => beside_user_dir(spec)?.join(name),
    };
    Ok(Some(McpConfig {
        path,
        format: mcp.format,
    }))
}

/// The directory beside the user's config directory (Claude Code keeps user-scope MCP servers
/// in `.claude.json` there): the one the agent's variable names when that is set, else the
/// directory that holds the config directory (the home, beside `~/.claude/`, not in it).
pub(super) fn beside_user_dir(spec: &AgentSpec) -> Result<PathBuf, CliError> {
    let dir = spec.config_dir(&Scope::User)?;
    if spec.table.user_dir.names_config_dir() && spec.user_dir_variable()?.is_some() {
        return Ok(dir);
    }
    Ok(dir.parent().map(Path::to_owned).unwrap_or(dir))
}

/// What the user still has to do before the agent starts a newly registered server.
fn next_step(spec: &AgentSpec, scope: &Scope) -> Option<&'static str> {
    match scope {
        Scope::Project(_) => spec.table.mcp.as_ref()?.project_next_step,
        Scope::User => None,
    }
}

/// The absolute path of the running `checkpoint` executable, as text.
fn own_command() -> Result<String, CliError> {
    let hint = "run the installed checkpoint (e.g. ~/.cargo/bin/checkpoint) from a UTF-8 path";
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot find this executable: {e}"), hint))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.to_str()
        .map(str::to_owned)
        .ok_or_else(|| CliError::new(format!("{}: not valid UTF-8", exe.display()), hint))
}

/// Whether `command` runs a program named `checkpoint`.
fn is_ours(command: &str) -> bool {
    Path::new(command).file_name() == Some(OsStr::new(PROGRAM))
}

/// Our server entry in the JSON spelling.
pub(super) fn json_entry(command: &str, typed: bool) -> Map<String, Value> {
    let mut entry = Map::new();
    if typed {
        entry.insert("type".to_owned(), "stdio".into());
    }
    entry.insert("command".to_owned(), command.into());
    entry.insert("args".to_owned(), ARGS.to_vec().into());
    entry
}

/// Registers `entry` as our server in a JSON file (or with `None`, removes ours).
fn set_json(file: &ConfigFile, entry: Option<&Map<String, Value>>) -> Result<Change, CliError> {
    let before = file.settings()?;
    let mut after = before.clone();
    if let Some(command) = edit_json(&mut after, entry).map_err(|e| file.invalid(e))? {
        return Ok(Change::Foreign(command));
    }
    if after == before {
        return Ok(Change::Unchanged);
    }
    Ok(Change::To(settings::render(&after, file.text.as_deref())))
}

/// Sets (or with `None`, removes) our entry in `settings.mcpServers`. An existing entry of ours
/// keeps its other keys (`env`, `timeout`, …) and its place; `mcpServers` left empty by a removal
/// goes. Returns the command of a foreign server of our name instead of touching it.
fn edit_json(
    settings: &mut Settings,
    entry: Option<&Map<String, Value>>,
) -> Result<Option<String>, SettingsError> {
    let shape = |at: &str, expected| SettingsError::Shape {
        at: at.to_owned(),
        expected,
    };
    if entry.is_none() && !settings.contains_key("mcpServers") {
        return Ok(None);
    }
    let servers = settings
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("mcpServers", "an object"))?;
    if let Some(existing) = servers.get(SERVER) {
        let at = format!("mcpServers.{SERVER}");
        let existing = existing
            .as_object()
            .ok_or_else(|| shape(&at, "an object"))?;
        let command = existing
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !is_ours(command) {
            return Ok(Some(describe(command, existing.get("url"))));
        }
    }
    match entry {
        Some(entry) => {
            let server = servers
                .entry(SERVER)
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("checked to be an object above");
            for (key, value) in entry {
                server.insert(key.clone(), value.clone());
            }
        }
        None => {
            servers.shift_remove(SERVER);
            if servers.is_empty() {
                settings.shift_remove("mcpServers");
            }
        }
    }
    Ok(None)
}

/// A foreign server for a message: its command, or its URL, or that it has neither.
fn describe(command: &str, url: Option<&Value>) -> String {
    match (command, url.and_then(Value::as_str)) {
        ("", Some(url)) => url.to_owned(),
        ("", None) => "no command".to_owned(),
        (command, _) => command.to_owned(),
    }
}

/// Registers our server running `command` in Codex's TOML (or with `None`, removes ours). An
/// existing table of ours keeps its other keys, comments and place.
fn set_toml(file: &ConfigFile, command: Option<&str>) -> Result<Change, CliError> {
    let original = file.text.as_deref().unwrap_or("");
    let invalid = |message: String| {
        CliError::new(
            format!("{}: {message}", file.path.display()),
            "the file was left untouched; fix it by hand and run this again",
        )
    };
    let mut doc: DocumentMut = original
        .parse()
        .map_err(|e: toml_edit::TomlError| invalid(one_line(&e.to_string())))?;
    if let Some(foreign) = edit_toml(&mut doc, command).map_err(invalid)? {
        return Ok(Change::Foreign(foreign));
    }
    let text = doc.to_string();
    if text == original {
        return Ok(Change::Unchanged);
    }
    Ok(Change::To(text))
}

/// Sets (or removes) `[mcp_servers.checkpoint]` in `doc`; returns the command of a foreign server
/// of our name instead of touching it. An error names the part that has the wrong type.
fn edit_toml(doc: &mut DocumentMut, command: Option<&str>) -> Result<Option<String>, String> {
    let not_a_table = |at: &str| format!("`{at}` is not a table");
    if command.is_none() && !doc.contains_key("mcp_servers") {
        return Ok(None);
    }
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_like_mut()
        .ok_or_else(|| not_a_table("mcp_servers"))?;
    if let Some(existing) = servers.get(SERVER) {
        let existing = existing
            .as_table_like()
            .ok_or_else(|| not_a_table(&format!("mcp_servers.{SERVER}")))?;
        let their = existing.get("command").and_then(Item::as_str).unwrap_or("");
        if !is_ours(their) {
            let url = existing.get("url").and_then(Item::as_str).map(Value::from);
            return Ok(Some(describe(their, url.as_ref())));
        }
    }
    match command {
        Some(command) => {
            let args: toml_edit::Array = ARGS.iter().copied().collect();
            match servers.get_mut(SERVER).and_then(Item::as_table_like_mut) {
                Some(server) => {
                    // Only the values change: their keys keep their place and decor.
                    set_value(server, "command", command.into());
                    set_value(server, "args", args.into());
                }
                None => {
                    let mut server = toml_edit::Table::new();
                    server.insert("command", toml_edit::value(command));
                    server.insert("args", toml_edit::value(args));
                    servers.insert(SERVER, Item::Table(server));
                }
            }
        }
        None => {
            servers.remove(SERVER);
            if servers.is_empty() {
                doc.remove("mcp_servers");
            }
        }
    }
    Ok(None)
}

/// Sets `table[key]` to `value` unless it already is that value, keeping the key's decor.
fn set_value(table: &mut dyn toml_edit::TableLike, key: &str, value: toml_edit::Value) {
    match table.get_mut(key) {
        Some(Item::Value(old)) if old.to_string().trim() == value.to_string().trim() => {}
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = value;
            *old.decor_mut() = decor;
        }
        _ => {
            table.insert(key, Item::Value(value));
        }
    }
}

/// `text` with its first letter upper-case.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
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
    fn json_register_keeps_foreign_servers_and_our_extra_keys() {
        let mut settings = object(json!({
            "a": 1,
            "mcpServers": {
                "other": {"command": "npx", "args": ["x"]},
                "checkpoint": {"command": "/old/checkpoint", "args": [], "env": {"A": "1"}}
            }
        }));
        let entry = json_entry("/new/checkpoint", true);
        assert_eq!(edit_json(&mut settings, Some(&entry)).unwrap(), None);
        assert_eq!(
            Value::Object(settings.clone()),
            json!({
                "a": 1,
                "mcpServers": {
                    "other": {"command": "npx", "args": ["x"]},
                    "checkpoint": {
                        "command": "/new/checkpoint",
                        "args": ["mcp"],
                        "env": {"A": "1"},
                        "type": "stdio"
                    }
                }
            })
        );
        assert_eq!(edit_json(&mut settings, None).unwrap(), None);
        assert_eq!(
            Value::Object(settings),
            json!({"a": 1, "mcpServers": {"other": {"command": "npx", "args": ["x"]}}})
        );
    }

    #[test]
    fn json_foreign_server_of_our_name_is_reported_not_touched() {
        let original = json!({"mcpServers": {"checkpoint": {"url": "https://x.invalid/mcp"}}});
        let mut settings = object(original.clone());
        let entry = json_entry("/bin/checkpoint", false);
        assert_eq!(
            edit_json(&mut settings, Some(&entry)).unwrap(),
            Some("https://x.invalid/mcp".to_owned())
        );
        assert_eq!(Value::Object(settings), original);
    }

    #[test]
    fn json_wrong_shapes_are_named() {
        let entry = json_entry("/bin/checkpoint", false);
        for (value, message) in [
            (json!({"mcpServers": []}), "`mcpServers` is not an object"),
            (
                json!({"mcpServers": {"checkpoint": 1}}),
                "`mcpServers.checkpoint` is not an object",
            ),
        ] {
            let err = edit_json(&mut object(value), Some(&entry)).unwrap_err();
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn toml_register_update_and_remove_keep_comments() {
        let original =
            "# my config\nmodel = \"o3\" # pinned\n\n[mcp_servers.other]\ncommand = \"npx\"\n";
        let mut doc: DocumentMut = original.parse().unwrap();
        assert_eq!(edit_toml(&mut doc, Some("/a/checkpoint")).unwrap(), None);
        let once = doc.to_string();
        assert_eq!(
            once,
            format!(
                "{original}\n[mcp_servers.checkpoint]\ncommand = \"/a/checkpoint\"\nargs = [\"mcp\"]\n"
            )
        );
        let mut doc: DocumentMut = once.parse().unwrap();
        edit_toml(&mut doc, Some("/a/checkpoint")).unwrap();
        assert_eq!(doc.to_string(), once, "a second run changes nothing");
        let mut doc: DocumentMut = once
            .replace("args = [\"mcp\"]", "args = [\"mcp\"] # ours\ntimeout = 5")
            .parse()
            .unwrap();
        edit_toml(&mut doc, Some("/b/checkpoint")).unwrap();
        assert!(
            doc.to_string()
                .ends_with("command = \"/b/checkpoint\"\nargs = [\"mcp\"] # ours\ntimeout = 5\n"),
            "{doc}"
        );
        edit_toml(&mut doc, None).unwrap();
        assert_eq!(doc.to_string(), original);
    }

    #[test]
    fn toml_removal_of_the_only_server_drops_the_table() {
        let mut doc = DocumentMut::new();
        edit_toml(&mut doc, Some("/a/checkpoint")).unwrap();
        edit_toml(&mut doc, None).unwrap();
        assert_eq!(doc.to_string(), "");
    }

    #[test]
    fn toml_foreign_server_and_wrong_types() {
        let mut doc: DocumentMut = "[mcp_servers.checkpoint]\ncommand = \"other-tool\"\n"
            .parse()
            .unwrap();
        assert_eq!(
            edit_toml(&mut doc, Some("/a/checkpoint")).unwrap(),
            Some("other-tool".to_owned())
        );
        let mut doc: DocumentMut = "mcp_servers = 3\n".parse().unwrap();
        assert_eq!(
            edit_toml(&mut doc, Some("/a/checkpoint")).unwrap_err(),
            "`mcp_servers` is not a table"
        );
    }

    #[test]
    fn ours_is_recognised_by_the_programs_file_name() {
        assert!(is_ours("/home/me/.cargo/bin/checkpoint"));
        assert!(!is_ours("/home/me/.cargo/bin/checkpoint-claude"));
        assert_eq!(capitalised("the server"), "The server");
    }
}
