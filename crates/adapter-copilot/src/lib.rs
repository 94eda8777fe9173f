//! GitHub Copilot CLI's home (1.0.102): everything checkpoint knows about Copilot CLI, in one
//! place — its event names, its payloads ([`payload`]), its answers, its transcript format
//! ([`transcript`]) and its install table ([`install`]). The core knows Copilot only through
//! [`HOME`], an [`AgentHome`].
//!
//! Copilot runs the command hooks of `.github/hooks/*.json` (and `~/.copilot/hooks/*.json`) with
//! a camelCase payload that does not name its event; [`payload`] names it from the fields that
//! event alone sends and renames the fields to the shared shape. Answers, in the shapes Claude
//! Code's hooks introduced but for context (`adapter-claude` renders the rest): `agentStop` is
//! the end of turn; a block is `{"decision":"block","reason":…}`, which Copilot sends as the next
//! user prompt (firing `userPromptSubmitted` with it) and then stops again with
//! `stop_hook_active`; context is a top-level `additionalContext` (at `sessionStart` a user
//! message of its own, at `preToolUse` one after the tool's result, at `postToolUse` appended to
//! the result, at `userPromptSubmitted` a `<system_reminder>` in the prompt); what the user should
//! hear is a `systemMessage`; an allow is empty stdout.

pub mod doctor;
pub mod install;
pub mod payload;
pub mod transcript;

use std::borrow::Cow;
use std::path::PathBuf;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::{EventKind, HookEvent, sanitize};
use serde_json::{Value, json};

/// GitHub Copilot CLI's home.
#[derive(Debug, Clone, Copy)]
pub struct Copilot;

/// GitHub Copilot CLI's home, for the driver and the CLI.
pub static HOME: Copilot = Copilot;

impl AgentHome for Copilot {
    fn agent(&self) -> Agent {
        Agent::Copilot
    }

    /// Context returned at `preToolUse` reaches the model (after the tool's result). Copilot
    /// writes its event log in batches: at `preToolUse` the usage record of the reply that asked
    /// for the tool may not be in it yet, so the context watch looks again after the tool.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .context_before_tool(true)
            .context_after_clear(true)
            .reply_written_after_pre_tool(true)
    }

    /// Copilot's own event names, as [`payload`] names the event.
    fn event_kind(&self, wire_name: &str) -> EventKind {
        match wire_name {
            "agentStop" => EventKind::Stop,
            "subagentStop" => EventKind::SubagentStop,
            "userPromptSubmitted" => EventKind::UserPrompt,
            "preToolUse" => EventKind::PreTool,
            "postToolUse" => EventKind::PostTool,
            "sessionStart" => EventKind::SessionStart,
            "sessionEnd" => EventKind::SessionEnd,
            "preCompact" => EventKind::PreCompact,
            other => EventKind::Other(other.to_owned()),
        }
    }

    /// Only Copilot sends a camelCase `sessionId`.
    fn claims(&self, payload: &Value) -> bool {
        payload.get("sessionId").is_some_and(Value::is_string)
    }

    fn shared_payload<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        payload::shared(bytes, &session_state()).map_or(Cow::Borrowed(bytes), Cow::Owned)
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    /// Context as the top-level `additionalContext` Copilot reads, a [`sanitize::message`]; the
    /// rest Claude Code's answers ([`adapter_claude::render`]); `None` is the no-op (empty
    /// stdout).
    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        match answer {
            HookAnswer::Context(context) => {
                Some(json!({"additionalContext": sanitize::message(context)}))
            }
            _ => adapter_claude::render(event, answer),
        }
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }
}

/// Copilot's `session-state` directory, which holds each session's transcript:
/// `$COPILOT_HOME/session-state`, else `~/.copilot/session-state`.
fn session_state() -> PathBuf {
    let config = std::env::var_os("COPILOT_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".copilot")))
        .unwrap_or_default();
    config.join("session-state")
}

/// Runs one GitHub Copilot CLI hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_stop_is_a_stop() {
        let raw = br#"{"sessionId":"s","timestamp":1,"cwd":"/p","transcriptPath":"/t.jsonl","stopReason":"end_turn","stop_hook_active":true}"#;
        let e = HookEvent::parse(&HOME, raw).unwrap();
        assert_eq!((e.agent, e.kind), (Agent::Copilot, EventKind::Stop));
        assert_eq!(e.wire_name, "agentStop");
        assert_eq!(e.session_id, "s");
        assert!(e.stop_hook_active);
        assert_eq!(
            e.transcript_path.as_deref(),
            Some(std::path::Path::new("/t.jsonl"))
        );
    }

    #[test]
    fn payloads_with_a_camel_case_session_id_are_copilots() {
        let claimed = |raw: &str| HOME.claims(&serde_json::from_str(raw).unwrap());
        assert!(claimed(r#"{"sessionId":"s","cwd":"/p","prompt":"hi"}"#));
        assert!(!claimed(r#"{"session_id":"s","hook_event_name":"Stop"}"#));
        assert!(!claimed(r#"{"sessionId":null}"#));
    }

    #[test]
    fn context_is_top_level() {
        let event = HookEvent::parse(
            &HOME,
            br#"{"sessionId":"s","cwd":"/p","source":"new","initialPrompt":"x"}"#,
        )
        .unwrap();
        let answer = HOME.render(&event, &HookAnswer::Context("C".to_owned()));
        assert_eq!(answer.unwrap().to_string(), r#"{"additionalContext":"C"}"#);
        assert_eq!(HOME.render(&event, &HookAnswer::Nothing), None);
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = br#"{"sessionId":"s","cwd":"/p","source":"new","initialPrompt":"x"}"#;
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(&HOME, start));
    }
}
