//! Factory Droid's home (0.225.2): everything checkpoint knows about Droid, in one place — its
//! transcript format ([`transcript`]), its install table ([`install`]) and what `checkpoint
//! doctor` checks ([`doctor`]). The core knows Droid only through [`HOME`], an [`AgentHome`].
//!
//! Droid speaks Claude Code's hook protocol: Claude's event names, matcher groups in a settings
//! file, `stop_hook_active`, `hookSpecificOutput.additionalContext` and
//! `{"decision":"block","reason":…}` to keep a turn going. So this crate takes the event names,
//! the answer shapes and the disabled-hooks check from `adapter-claude`'s library. What is
//! Droid's own (checked with the real CLI, `droid exec` against a model on 127.0.0.1,
//! `tests/payloads/droid/`):
//!
//! - Its `Stop` payload has no `last_assistant_message`: the reply is read from the transcript,
//!   `~/.factory/sessions/<cwd with / as ->/<session>.jsonl`.
//! - A blocked `Stop` sends the reason back as a user message that is exactly the reason.
//! - Context returned by `PreToolUse` does **not** reach the model; `PostToolUse` context is a
//!   user message after the tool's result, `SessionStart` context the first user message.
//! - `droid exec` fires no `UserPromptSubmit` (0.225.2).

pub mod doctor;
pub mod install;
pub mod transcript;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::project_env::{EnvFormat, ProjectEnvSource};
use checkpoint_core::{EventKind, HookEvent};
use serde_json::Value;

/// Factory Droid's home.
#[derive(Debug, Clone, Copy)]
pub struct Droid;

/// Factory Droid's home, for the driver and the CLI.
pub static HOME: Droid = Droid;

impl AgentHome for Droid {
    fn agent(&self) -> Agent {
        Agent::Droid
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

    /// Every Droid payload names a transcript in Droid's sessions folder.
    fn claims(&self, payload: &Value) -> bool {
        payload
            .get("transcript_path")
            .and_then(Value::as_str)
            .is_some_and(|path| path.contains("/.factory/sessions/"))
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    /// Claude's answer shapes, which Droid reads as Claude Code does.
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

/// What the project puts into every hook's environment: the `"env"` of its `.factory` settings,
/// shared and local (Droid's settings take Claude Code's `env` key).
pub static PROJECT_ENV: &[ProjectEnvSource] = &[
    ProjectEnvSource {
        path: ".factory/settings.json",
        format: EnvFormat::JsonMember("env"),
    },
    ProjectEnvSource {
        path: ".factory/settings.local.json",
        format: EnvFormat::JsonMember("env"),
    },
];

/// Runs one Factory Droid hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(name: &str) -> String {
        payload_of("droid", name)
    }

    fn payload_of(agent: &str, name: &str) -> String {
        checkpoint_testkit::payload(agent, name, std::path::Path::new("/p"))
    }

    #[test]
    fn droid_is_recognised_by_its_sessions_folder() {
        for name in [
            "SessionStart",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd",
        ] {
            let raw = payload(name);
            assert!(HOME.claims(&serde_json::from_str(&raw).unwrap()), "{name}");
        }
        for (agent, name) in [("claude", "Stop"), ("qwen", "Stop"), ("codex", "Stop")] {
            let other = payload_of(agent, name);
            assert!(
                !HOME.claims(&serde_json::from_str(&other).unwrap()),
                "{other}"
            );
        }
    }

    #[test]
    fn the_captured_stops_parse_with_the_loop_guard_and_no_reply() {
        let first = HookEvent::parse(&HOME, payload("Stop").as_bytes()).unwrap();
        assert_eq!((first.agent, &first.kind), (Agent::Droid, &EventKind::Stop));
        assert!(!first.stop_hook_active);
        assert_eq!(first.last_assistant_message, None);
        let second = HookEvent::parse(&HOME, payload("Stop-2").as_bytes()).unwrap();
        assert!(second.stop_hook_active);
        let tool = HookEvent::parse(&HOME, payload("PreToolUse").as_bytes()).unwrap();
        assert_eq!(tool.kind, EventKind::PreTool);
        let end = HookEvent::parse(&HOME, payload("SessionEnd").as_bytes()).unwrap();
        assert_eq!(end.kind, EventKind::SessionEnd);
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
