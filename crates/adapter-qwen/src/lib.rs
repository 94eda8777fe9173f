//! Qwen Code's home (0.24.4): everything checkpoint knows about Qwen Code, in one place — its
//! transcript format ([`transcript`]), its install table ([`install`]) and what `checkpoint
//! doctor` checks ([`doctor`]). The core knows Qwen Code only through [`HOME`], an [`AgentHome`].
//!
//! Qwen Code is a fork of Gemini CLI that took over Claude Code's hook protocol: Claude's event
//! names (`Stop`, `UserPromptSubmit`, `PreToolUse`, …), `stop_hook_active`, `hookSpecificOutput`,
//! and `{"decision":"block","reason":…}` to keep a turn going. So this crate takes the event
//! names, the answer shapes and the installed event list from `adapter-claude`'s library, and
//! Gemini CLI's folder-trust rules from `adapter-gemini`'s. What is Qwen's own (checked with the
//! real CLI, `tests/payloads/qwen/`):
//!
//! - A blocked Stop sends the reason back as a **user message that is exactly the reason**, as
//!   Gemini CLI does (after a `UserPromptSubmit` whose `prompt` is the reason); Qwen caps
//!   consecutive blocks at 8 itself (`stopHookBlockingCap`), the gate's own cap is lower.
//! - Context returned by `PreToolUse` does **not** reach the model; `PostToolUse` context is
//!   appended to the tool's result, `UserPromptSubmit` context goes beside the prompt, and
//!   `SessionStart` context into the system prompt.
//! - Payloads carry Gemini CLI's ISO `timestamp` and, on every event, `permission_mode`:
//!   neither Gemini CLI (no `permission_mode`) nor Claude Code and Codex (no `timestamp`) send
//!   both.

pub mod doctor;
pub mod install;
pub mod transcript;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::project_env::{EnvFormat, ProjectEnvSource};
use checkpoint_core::{EventKind, HookEvent};
use serde_json::Value;

/// Qwen Code's home.
#[derive(Debug, Clone, Copy)]
pub struct Qwen;

/// Qwen Code's home, for the driver and the CLI.
pub static HOME: Qwen = Qwen;

impl AgentHome for Qwen {
    fn agent(&self) -> Agent {
        Agent::Qwen
    }

    /// Context returned before a tool is dropped (held back for the tool's result instead);
    /// context at a `SessionStart` after `/clear` is not known to reach the model, so it waits
    /// for the next prompt.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    /// Claude's event names.
    fn event_kind(&self, wire_name: &str) -> EventKind {
        adapter_claude::event_kind(wire_name)
    }

    /// Only Qwen Code sends both a `timestamp` and a `permission_mode`.
    fn claims(&self, payload: &Value) -> bool {
        payload.get("timestamp").is_some_and(Value::is_string)
            && payload.get("permission_mode").is_some_and(Value::is_string)
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    /// Claude's answer shapes, which Qwen Code reads as Claude Code does.
    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        adapter_claude::render(event, answer)
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }

    fn project_env(&self) -> &'static [ProjectEnvSource] {
        PROJECT_ENV
    }
}

/// What the project puts into every hook's environment (checked with 0.24.4): the `"env"` of its
/// `.qwen/settings.json`, and the nearest `.qwen/.env` or `.env`.
pub static PROJECT_ENV: &[ProjectEnvSource] = &[
    ProjectEnvSource {
        path: ".qwen/settings.json",
        format: EnvFormat::JsonMember("env"),
    },
    ProjectEnvSource {
        path: ".qwen/.env",
        format: EnvFormat::DotEnv,
    },
    ProjectEnvSource {
        path: ".env",
        format: EnvFormat::DotEnv,
    },
];

/// Runs one Qwen Code hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(name: &str) -> String {
        payload_of("qwen", name)
    }

    fn payload_of(agent: &str, name: &str) -> String {
        checkpoint_testkit::payload(agent, name, std::path::Path::new("/p"))
    }

    #[test]
    fn qwen_is_recognised_by_timestamp_and_permission_mode() {
        for name in ["SessionStart", "Stop", "PreToolUse"] {
            let raw = payload(name);
            assert!(HOME.claims(&serde_json::from_str(&raw).unwrap()), "{name}");
        }
        let gemini = payload_of("gemini", "SessionStart");
        let claude = payload_of("claude", "Stop");
        for other in [gemini, claude] {
            assert!(
                !HOME.claims(&serde_json::from_str(&other).unwrap()),
                "{other}"
            );
        }
    }

    #[test]
    fn the_captured_stops_parse_with_the_loop_guard_and_the_reply() {
        let first = HookEvent::parse(&HOME, payload("Stop").as_bytes()).unwrap();
        assert_eq!((first.agent, &first.kind), (Agent::Qwen, &EventKind::Stop));
        assert!(!first.stop_hook_active);
        assert_eq!(first.last_assistant_message.as_deref(), Some("Done."));
        let second = HookEvent::parse(&HOME, payload("Stop-2").as_bytes()).unwrap();
        assert!(second.stop_hook_active);
        assert_eq!(
            second.last_assistant_message.as_deref(),
            Some("Really done.")
        );
        let tool = HookEvent::parse(&HOME, payload("PreToolUse").as_bytes()).unwrap();
        assert_eq!(tool.kind, EventKind::PreTool);
        let batch = HookEvent::parse(&HOME, payload("PostToolBatch").as_bytes()).unwrap();
        assert_eq!(batch.kind, EventKind::Other("PostToolBatch".into()));
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = payload("SessionStart");
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(
            &HOME,
            start.as_bytes()
        ));
    }
}
