//! The agent plugins committed in this repository, rendered from what `checkpoint install` writes,
//! so that they cannot drift from the installer:
//!
//! - Claude Code: the repository is a plugin marketplace (`.claude-plugin/marketplace.json`)
//!   offering the `checkpoint` plugin in `plugins/claude/`: its `plugin.json`, the hooks of
//!   `checkpoint install claude` (`hooks/hooks.json`), the `checkpoint-progress` skill and the
//!   MCP server (`.mcp.json`);
//! - GitHub Copilot CLI: the repository is its plugin marketplace too
//!   (`.github/plugin/marketplace.json`, which Copilot reads before `.claude-plugin/`) offering
//!   the `checkpoint` plugin in `plugins/copilot/`: its `plugin.json`, the hooks of `checkpoint
//!   install copilot` (`hooks/hooks.json`, Copilot's versioned format) and the MCP server
//!   (`.mcp.json`);
//! - OpenCode: `plugins/opencode/checkpoint.js`, the plugin `checkpoint install opencode` writes,
//!   for OpenCode's `plugin` list (`"plugin": ["<clone>/plugins/opencode/checkpoint.js"]`); the
//!   npm package (`scripts/package.sh`) carries it as its module, so `"plugin":
//!   ["checkpoint-gate"]` loads it too;
//! - Gemini CLI: the extension in `plugins/gemini/` (`gemini-extension.json` with the MCP server,
//!   and the hooks of `checkpoint install gemini` in `hooks/hooks.json`, where Gemini CLI reads an
//!   extension's hooks), for `gemini extensions install|link <clone>/plugins/gemini`. Not at the
//!   repository's root, where `gemini extensions install <repository URL>` would want it: its
//!   `hooks/hooks.json` there is what Claude Code reads for a plugin at the root, and `claude
//!   plugin validate` flags Gemini's events in it.
//!
//! A plugin cannot know where the adapters are installed: its hooks run the adapter found on
//! `PATH` (the handlers are otherwise exactly the installer's: events, order, timeouts in the
//! agent's unit, Gemini's handler name). When the adapter is not on `PATH` the hook prints one
//! line saying how to install it on stderr and exits 1, which both agents treat as a
//! non-blocking error shown to the user (Claude Code shows the stderr; Gemini CLI makes it a
//! `Warning:` system message): a missing binary never blocks the agent, and never goes unsaid.
//!
//! The test `committed_plugins_are_what_the_installer_renders` compares every file with the
//! repository; `CHECKPOINT_BLESS=1` makes it write them instead.

use checkpoint_core::agent::HooksLayout;
use checkpoint_engine::gate::PROGRESS_SKILL;
use serde_json::{Map, Value, json};

use super::adapter::HOOK_MARKER;
use super::agents::{AgentSpec, InstallTarget};
use super::settings::{self, Settings};
use super::{mcp, skill};

/// The plugin's (and the marketplace's, and the extension's) name.
const NAME: &str = "checkpoint";
/// What the plugin does, in one sentence.
const DESCRIPTION: &str = "A stop gate and journal for coding agents: the agent may end its \
                           turn only when the tests of what it changed pass and its work is \
                           committed; progress and checkpoints carry a session across resets.";
/// Where the Claude Code plugin lives, relative to the repository's root.
const CLAUDE_PLUGIN_DIR: &str = "plugins/claude";
/// Where the GitHub Copilot CLI plugin lives, relative to the repository's root.
const COPILOT_PLUGIN_DIR: &str = "plugins/copilot";
/// OpenCode's plugin, relative to the repository's root.
const OPENCODE_PLUGIN: &str = "plugins/opencode/checkpoint.js";
/// Where the Gemini CLI extension lives, relative to the repository's root.
const GEMINI_EXTENSION_DIR: &str = "plugins/gemini";
/// Who the plugin is by.
const AUTHOR: &str = "the checkpoint authors";

/// One file of a plugin: its path relative to the repository's root, and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginFile {
    /// Relative to the repository's root.
    pub(crate) path: String,
    /// The whole file.
    pub(crate) text: String,
}

/// The agent named `name`, which has an install table.
fn spec(name: &str) -> AgentSpec {
    InstallTarget::named(name)
        .and_then(InstallTarget::agent)
        .expect("the agent has an install table")
}

/// The shell command a plugin's hooks run for `spec`: its adapter from `PATH` with the hook
/// marker (stdin passed on by `exec`), or, when the adapter is not on `PATH`, one line on stderr
/// saying what to install (after reading the payload), and exit 1: a non-blocking error for
/// both agents.
pub(crate) fn hook_command(spec: &AgentSpec) -> String {
    let adapter = spec.adapter();
    let message = format!(
        "checkpoint: {adapter} is not on PATH, so the checkpoint plugin's hooks do nothing: \
         install checkpoint and its adapters (the Quickstart of checkpoint's README, e.g. \
         scripts/install.sh), then restart {}.",
        spec.table.title
    );
    let message = shlex::try_quote(&message).expect("the message has no NUL byte");
    // The payload is read to its end before the answer: the agent may still be writing it.
    format!(
        "command -v {adapter} >/dev/null 2>&1 && exec {adapter} {HOOK_MARKER}; \
         cat >/dev/null 2>&1; printf '%s\\n' {message} >&2; exit 1"
    )
}

/// `spec`'s hooks as a plugin's `hooks/hooks.json`: the installer's handlers for
/// [`hook_command`], laid out by the installer's own settings editor.
fn hooks_json(spec: &AgentSpec) -> String {
    let mut hooks = Settings::new();
    let layout = spec.table.layout;
    let handlers = spec.handlers(&hook_command(spec));
    settings::set_ours(&mut hooks, layout, |_| false, &handlers)
        .expect("hooks go into an empty object");
    settings::render(&hooks, None)
}

/// The text of `spec`'s plugin file of checkpoint's own (OpenCode's) running [`hook_command`].
fn plugin_file(spec: &AgentSpec) -> String {
    match spec.table.layout {
        HooksLayout::Plugin(source) => (source.render)(&hook_command(spec)),
        other => panic!("{}: no plugin file ({other:?})", spec.name()),
    }
}

/// `value` as a pretty JSON file with a final newline.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON serializes") + "\n"
}

/// The MCP server entry the installer writes for `spec`, running `checkpoint` from `PATH`.
fn mcp_servers(spec: &AgentSpec) -> Value {
    let typed = match spec.table.mcp.map(|mcp| mcp.format) {
        Some(checkpoint_core::agent::McpFormat::Json { typed }) => typed,
        other => panic!("{}: no JSON MCP entry ({other:?})", spec.name()),
    };
    let mut servers = Map::new();
    servers.insert(NAME.to_owned(), mcp::json_entry(NAME, typed).into());
    Value::Object(servers)
}

/// A plugin marketplace (Claude Code's format, which Copilot CLI reads too) offering the plugin
/// in `dir` to the users of `spec`'s agent.
fn marketplace(spec: &AgentSpec, dir: &str) -> String {
    pretty(&json!({
        "name": NAME,
        "owner": {"name": AUTHOR},
        "metadata": {"description": format!("checkpoint's plugin for {}", spec.table.title)},
        "plugins": [{
            "name": NAME,
            "source": format!("./{dir}"),
            "description": DESCRIPTION,
            "version": env!("CARGO_PKG_VERSION"),
        }],
    }))
}

/// A plugin's manifest (`plugin.json`, the same fields for Claude Code and Copilot CLI).
fn manifest() -> String {
    pretty(&json!({
        "name": NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "author": {"name": AUTHOR},
        "license": env!("CARGO_PKG_LICENSE"),
    }))
}

/// Every file of the plugins, in a fixed order.
pub(crate) fn files() -> Vec<PluginFile> {
    let (claude, copilot, gemini) = (spec("claude"), spec("copilot"), spec("gemini"));
    let file = |path: &str, text: String| PluginFile {
        path: path.to_owned(),
        text,
    };
    let mcp = |spec: &AgentSpec| pretty(&json!({"mcpServers": mcp_servers(spec)}));
    let in_claude = |path: &str| format!("{CLAUDE_PLUGIN_DIR}/{path}");
    let in_copilot = |path: &str| format!("{COPILOT_PLUGIN_DIR}/{path}");
    let in_gemini = |path: &str| format!("{GEMINI_EXTENSION_DIR}/{path}");
    vec![
        file(
            ".claude-plugin/marketplace.json",
            marketplace(&claude, CLAUDE_PLUGIN_DIR),
        ),
        file(&in_claude(".claude-plugin/plugin.json"), manifest()),
        file(&in_claude("hooks/hooks.json"), hooks_json(&claude)),
        file(&in_claude(".mcp.json"), mcp(&claude)),
        file(
            &in_claude(&format!("skills/{PROGRESS_SKILL}/SKILL.md")),
            skill::SKILL_MD.to_owned(),
        ),
        file(
            ".github/plugin/marketplace.json",
            marketplace(&copilot, COPILOT_PLUGIN_DIR),
        ),
        file(&in_copilot("plugin.json"), manifest()),
        file(&in_copilot("hooks/hooks.json"), hooks_json(&copilot)),
        file(&in_copilot(".mcp.json"), mcp(&copilot)),
        file(OPENCODE_PLUGIN, plugin_file(&spec("opencode"))),
        file(
            &in_gemini("gemini-extension.json"),
            pretty(&json!({
                "name": NAME,
                "version": env!("CARGO_PKG_VERSION"),
                "description": DESCRIPTION,
                "mcpServers": mcp_servers(&gemini),
            })),
        ),
        file(&in_gemini("hooks/hooks.json"), hooks_json(&gemini)),
    ]
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    use super::*;

    /// The repository's root.
    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Every committed plugin file is exactly what the installer renders; with
    /// `CHECKPOINT_BLESS=1` the files are written instead.
    #[test]
    fn committed_plugins_are_what_the_installer_renders() {
        let bless = std::env::var_os("CHECKPOINT_BLESS").is_some_and(|v| v == "1");
        let mut stale = Vec::new();
        for PluginFile { path, text } in files() {
            let full = root().join(&path);
            if bless {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, &text).unwrap();
            } else if std::fs::read_to_string(&full).ok().as_deref() != Some(text.as_str()) {
                stale.push(format!("--- {path} should be:\n{text}"));
            }
        }
        assert!(
            stale.is_empty(),
            "the committed plugins differ from what `checkpoint install` renders; run \
             `CHECKPOINT_BLESS=1 cargo test -p checkpoint-gate packaged` and commit:\n{}",
            stale.join("\n")
        );
    }

    /// The plugin's hook set is the installer's: the same events in the same order, the same
    /// handlers but for the command, which runs the same adapter with the same marker.
    #[test]
    fn plugin_hooks_are_the_installers_with_the_adapter_from_path() {
        for (name, path) in [
            ("claude", "plugins/claude/hooks/hooks.json"),
            ("copilot", "plugins/copilot/hooks/hooks.json"),
            ("gemini", "plugins/gemini/hooks/hooks.json"),
        ] {
            let spec = spec(name);
            let installed = spec.handlers("/opt/bin/checkpoint-x --hook");
            let file = files().into_iter().find(|f| f.path == path).unwrap();
            let plugin: Value = serde_json::from_str(&file.text).unwrap();
            let events: Vec<&str> = plugin["hooks"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let expected: Vec<&str> = installed.iter().map(|(event, _)| *event).collect();
            assert_eq!(events, expected, "{name}");
            let key = spec.table.layout.command_key();
            for (event, mut handler) in installed {
                let [entry] = plugin["hooks"][event].as_array().unwrap().as_slice() else {
                    panic!("{name}: one entry for {event}");
                };
                // Claude's layout nests the handler in a matcher group (here without a matcher).
                let ours = match spec.table.layout {
                    HooksLayout::Versioned { version, .. } => {
                        assert_eq!(plugin["version"], version, "{name}");
                        entry
                    }
                    _ => {
                        assert_eq!(entry.as_object().unwrap().len(), 1, "no matcher: {entry}");
                        let [ours] = entry["hooks"].as_array().unwrap().as_slice() else {
                            panic!("{name}: one handler for {event}");
                        };
                        ours
                    }
                };
                handler[key] = ours[key].clone();
                assert_eq!(ours, &handler, "{name} {event}");
                let command = ours[key].as_str().unwrap();
                let adapter = spec.adapter();
                assert!(
                    command.starts_with(&format!(
                        "command -v {adapter} >/dev/null 2>&1 && exec {adapter} --hook;"
                    )),
                    "{command}"
                );
            }
        }
    }

    /// OpenCode's plugin is the one `checkpoint install opencode` writes, recognised as ours,
    /// running the adapter from `PATH`.
    #[test]
    fn the_opencode_plugin_is_the_installers_with_the_adapter_from_path() {
        let spec = spec("opencode");
        let HooksLayout::Plugin(source) = spec.table.layout else {
            panic!("OpenCode's hooks are a plugin");
        };
        let file = files().into_iter().find(|f| f.path == OPENCODE_PLUGIN);
        let text = file.unwrap().text;
        assert_eq!(text, (source.render)(&hook_command(&spec)));
        assert_eq!((source.command_of)(&text), Some(hook_command(&spec)));
    }

    /// Runs a plugin hook's command as the agents do (`bash -c`, the payload on stdin) with
    /// `path` as `PATH` (plus `/bin` for `cat`, at its end); panics when the hook does not read
    /// the whole payload.
    fn run_hook(command: &str, path: &str) -> std::process::Output {
        let path = format!("{path}:/bin");
        let mut child = Command::new("/bin/bash")
            .args(["-c", command])
            .env_clear()
            .env("PATH", path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        // A payload larger than a pipe's buffer: the hook must read all of it.
        let padding = "x".repeat(256 * 1024);
        let payload = format!(r#"{{"hook_event_name":"Stop","padding":"{padding}"}}"#);
        stdin.write_all(payload.as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    }

    /// Without the adapter on `PATH`: exit 1 (non-blocking for both agents), nothing on stdout
    /// (Gemini CLI would parse it), one line on stderr naming the adapter and how to install it.
    /// With it: the adapter runs with the marker and gets the payload on stdin, and its exit code
    /// and output are the hook's (a stand-in adapter here: the agents' runs are in the e2e
    /// suite's `plugin` tests).
    #[test]
    fn a_hook_without_its_adapter_says_so_in_one_line_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["claude", "copilot", "gemini", "opencode"] {
            let spec = spec(name);
            let command = hook_command(&spec);
            assert!(!Path::new("/bin").join(spec.adapter()).exists());
            let missing = run_hook(&command, dir.path().to_str().unwrap());
            assert_eq!(missing.status.code(), Some(1), "{missing:?}");
            assert!(missing.stdout.is_empty(), "{missing:?}");
            let stderr = String::from_utf8(missing.stderr).unwrap();
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.starts_with(&format!("checkpoint: checkpoint-{name} is not on PATH")),
                "{stderr}"
            );
            assert!(stderr.contains("scripts/install.sh"), "{stderr}");
            assert!(stderr.contains(spec.table.title), "{stderr}");

            // A stand-in adapter: prints its arguments and its stdin, exits 7.
            let fake = dir.path().join(spec.adapter());
            std::fs::write(
                &fake,
                "#!/bin/sh\necho \"args:$*\"; cat >\"$0.stdin\"; exit 7\n",
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
            let found = run_hook(&command, dir.path().to_str().unwrap());
            assert_eq!(found.status.code(), Some(7), "{found:?}");
            assert_eq!(String::from_utf8_lossy(&found.stdout), "args:--hook\n");
            let stdin =
                std::fs::read_to_string(dir.path().join(format!("{}.stdin", spec.adapter())));
            assert!(
                stdin
                    .unwrap()
                    .starts_with(r#"{"hook_event_name":"Stop","padding":"xx"#)
            );
            assert!(found.stderr.is_empty(), "{found:?}");
            std::fs::remove_file(&fake).unwrap();
        }
    }
}
