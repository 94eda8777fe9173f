//! Writing a project's hook configuration for an agent.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::Agent;

/// Per-hook timeout the harness writes: 60 s (Gemini counts in milliseconds).
const HOOK_TIMEOUT_SECS: u64 = 60;

/// Writes `repo`'s project hook config for `agent`: `.claude/settings.json`,
/// `.gemini/settings.json`, `.codex/hooks.json`, `.github/hooks/e2e.json` (version 1) or
/// `.qwen/settings.json`; not
/// for OpenCode, which has no hooks file (panics).
/// `end_of_turn` is the command for the agent's end-of-turn event
/// ([`Agent::end_of_turn_event`]); `others` adds `(event, command)` pairs, with event names in the
/// agent's own vocabulary. Each command gets its own matcher-less group (Copilot: its own entry).
///
/// Other keys of an existing settings file are kept; its `hooks` are replaced. Tests whose hooks
/// were installed some other way (for example by `checkpoint install <agent>`) skip this.
/// Returns the path written. Panics on I/O errors.
pub fn write_hooks(
    agent: Agent,
    repo: &Path,
    end_of_turn: &str,
    others: &[(&str, &str)],
) -> PathBuf {
    let path = repo.join(match agent {
        Agent::Claude => ".claude/settings.json",
        Agent::Gemini => ".gemini/settings.json",
        Agent::Codex => ".codex/hooks.json",
        Agent::Copilot => ".github/hooks/e2e.json",
        Agent::Qwen => ".qwen/settings.json",
        Agent::Droid => ".factory/settings.json",
        Agent::OpenCode => panic!(
            "OpenCode runs no hook commands: its plugin is written by `checkpoint install \
             opencode` (install_checkpoint)"
        ),
    });
    let mut settings = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str::<Map<String, Value>>(&text)
            .unwrap_or_else(|e| panic!("{} is not a JSON object: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => panic!("read {}: {e}", path.display()),
    };
    if agent == Agent::Copilot {
        settings.insert("version".to_owned(), 1.into());
    }
    settings.insert("hooks".to_owned(), hooks_value(agent, end_of_turn, others));
    let dir = path.parent().expect("a config path has a parent");
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let text = serde_json::to_string_pretty(&Value::Object(settings)).expect("JSON serializes");
    std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

/// The `hooks` object: `{"<Event>": [{"hooks": [handler]}, …], …}`.
fn hooks_value(agent: Agent, end_of_turn: &str, others: &[(&str, &str)]) -> Value {
    let mut hooks = Map::new();
    let all =
        std::iter::once((agent.end_of_turn_event(), end_of_turn)).chain(others.iter().copied());
    for (index, (event, command)) in all.enumerate() {
        let handler = match agent {
            Agent::Claude | Agent::Codex | Agent::Qwen | Agent::Droid => {
                json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS})
            }
            Agent::Gemini => json!({"type": "command", "command": command,
                                    "name": format!("e2e-{event}-{index}"),
                                    "timeout": HOOK_TIMEOUT_SECS * 1000}),
            Agent::Copilot => {
                json!({"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_SECS})
            }
            Agent::OpenCode => unreachable!("write_hooks refuses OpenCode before"),
        };
        let entries = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(entries) = entries {
            // Copilot lists handlers straight in the event's list; the others in groups.
            entries.push(match agent {
                Agent::Copilot => handler,
                _ => json!({ "hooks": [handler] }),
            });
        }
    }
    Value::Object(hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_each_agents_shape_and_keeps_other_settings() {
        let repo = tempfile::tempdir().unwrap();
        let gemini_settings = repo.path().join(".gemini/settings.json");
        std::fs::create_dir_all(gemini_settings.parent().unwrap()).unwrap();
        std::fs::write(
            &gemini_settings,
            r#"{"general":{"x":1},"hooks":{"Old":[]}}"#,
        )
        .unwrap();

        let path = write_hooks(
            Agent::Gemini,
            repo.path(),
            "/h/stop",
            &[("BeforeAgent", "/h/ba")],
        );
        assert_eq!(path, gemini_settings);
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({"general": {"x": 1}, "hooks": {
                "AfterAgent": [{"hooks": [{"type": "command", "command": "/h/stop",
                                           "name": "e2e-AfterAgent-0", "timeout": 60000}]}],
                "BeforeAgent": [{"hooks": [{"type": "command", "command": "/h/ba",
                                            "name": "e2e-BeforeAgent-1", "timeout": 60000}]}]}})
        );

        let path = write_hooks(
            Agent::Codex,
            repo.path(),
            "/h/stop",
            &[("Stop", "/h/second")],
        );
        assert_eq!(path, repo.path().join(".codex/hooks.json"));
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({"hooks": {"Stop": [
                {"hooks": [{"type": "command", "command": "/h/stop", "timeout": 60}]},
                {"hooks": [{"type": "command", "command": "/h/second", "timeout": 60}]}]}})
        );

        let path = write_hooks(Agent::Claude, repo.path(), "/h/stop", &[]);
        assert_eq!(path, repo.path().join(".claude/settings.json"));
    }
}
