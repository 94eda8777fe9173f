//! Gemini CLI's home (0.61.0): everything checkpoint knows about Gemini CLI, in one place — its
//! event names, its answers, its transcript format ([`transcript`]) and its install table
//! ([`install`]). The core knows Gemini only through [`HOME`], an [`AgentHome`].
//!
//! Answers, in the shapes Claude Code's hooks introduced (`adapter-claude` renders them):
//! `AfterAgent` is the end of turn; a block is top-level `{"decision":"deny","reason":…}`, which
//! Gemini re-sends as the next user turn; context is `hookSpecificOutput.additionalContext`; what
//! the user should hear is a `systemMessage`; an allow is `{}`. Always JSON on stdout and exit 0:
//! Gemini parses stderr when stdout is empty and treats other exit codes with text as a deny.
//!
//! What Gemini cannot do shapes its [`Capabilities`]: context returned at `BeforeTool`, or at a
//! `SessionStart` after `/clear`, does not reach the model (the gate holds it for the next tool
//! result or prompt), and `PreCompress` fires every turn although Gemini compresses only from
//! half its window.

pub mod doctor;
pub mod install;
pub mod transcript;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::project_env::{EnvFormat, ProjectEnvSource};
use checkpoint_core::{EventKind, HookEvent};
use serde_json::Value;

/// Gemini fires `PreCompress` on every turn; it compresses only from this share of its window
/// (its default `model.compressionThreshold`), so an automatic `PreCompress` below it saves
/// nothing.
pub const COMPRESSION_PERCENT: u8 = 50;

/// Events only Gemini sends, by which `checkpoint check` recognises its payloads.
const OWN_EVENTS: &[&str] = &[
    "AfterAgent",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
    "BeforeModel",
    "AfterModel",
];

/// Gemini CLI's home.
#[derive(Debug, Clone, Copy)]
pub struct Gemini;

/// Gemini CLI's home, for the driver and the CLI.
pub static HOME: Gemini = Gemini;

impl AgentHome for Gemini {
    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE.compaction_threshold(Some(COMPRESSION_PERCENT))
    }

    /// Gemini's own names; it sends no other (its hooks config rejects them).
    fn event_kind(&self, wire_name: &str) -> EventKind {
        match wire_name {
            "AfterAgent" => EventKind::Stop,
            "BeforeAgent" => EventKind::UserPrompt,
            "BeforeTool" => EventKind::PreTool,
            "AfterTool" => EventKind::PostTool,
            "SessionStart" => EventKind::SessionStart,
            "SessionEnd" => EventKind::SessionEnd,
            "PreCompress" => EventKind::PreCompact,
            other => EventKind::Other(other.to_owned()),
        }
    }

    /// Only Gemini sends a `timestamp`, and some event names only Gemini uses.
    fn claims(&self, payload: &Value) -> bool {
        let timestamp = payload.get("timestamp").is_some_and(|t| !t.is_null());
        let own_event = payload["hook_event_name"]
            .as_str()
            .is_some_and(|name| OWN_EVENTS.contains(&name));
        timestamp || own_event
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        "{}"
    }

    /// Claude Code's answers ([`adapter_claude::render`]), with `deny` for a block
    /// ([`adapter_claude::render_stop`]); `None` is the no-op `{}`.
    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        match answer {
            HookAnswer::Stop(stop) => adapter_claude::render_stop(stop, "deny"),
            _ => adapter_claude::render(event, answer),
        }
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }

    fn project_env(&self) -> &'static [ProjectEnvSource] {
        PROJECT_ENV
    }
}

/// The project's `.env` files: Gemini CLI loads the nearest `.gemini/.env` or `.env` from the
/// session's directory up into its own environment, which every hook inherits (checked with
/// 0.61.0; a variable already set in its environment is kept).
pub static PROJECT_ENV: &[ProjectEnvSource] = &[
    ProjectEnvSource {
        path: ".gemini/.env",
        format: EnvFormat::DotEnv,
    },
    ProjectEnvSource {
        path: ".env",
        format: EnvFormat::DotEnv,
    },
];

/// Runs one Gemini CLI hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_agent_is_a_stop_with_its_reply() {
        let raw = br#"{"session_id":"g","cwd":"/p","hook_event_name":"AfterAgent","timestamp":"t","prompt":"hi","prompt_response":"Done.","stop_hook_active":false}"#;
        let e = HookEvent::parse(&HOME, raw).unwrap();
        assert_eq!((e.agent, e.kind), (Agent::Gemini, EventKind::Stop));
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done."));
    }

    #[test]
    fn payloads_with_a_timestamp_or_an_own_event_are_geminis() {
        let claimed = |raw: &str| HOME.claims(&serde_json::from_str(raw).unwrap());
        assert!(claimed(
            r#"{"hook_event_name":"SessionStart","timestamp":"t"}"#
        ));
        assert!(claimed(r#"{"hook_event_name":"BeforeTool"}"#));
        assert!(!claimed(
            r#"{"hook_event_name":"SessionStart","timestamp":null}"#
        ));
        assert!(!claimed(r#"{"hook_event_name":"Stop","turn_id":"t"}"#));
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = br#"{"cwd":"/p","hook_event_name":"SessionStart","timestamp":"t"}"#;
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(&HOME, start));
    }
}
