//! Claude Code's home (2.1.330): everything checkpoint knows about Claude Code, in one place — its
//! event names, its answers, its transcript format ([`transcript`]) and its install table
//! ([`install`]). The core knows Claude only through [`HOME`], an [`AgentHome`].
//!
//! Answers ([`render`]): a block is `{"decision":"block","reason":…}` on stdout, which Claude
//! feeds back as `Stop hook feedback:\n<reason>`; context for the model is
//! `hookSpecificOutput.additionalContext` under the event's own name (Claude checks the name);
//! what the user should hear (a notice, an allowed stop worth telling, or beside a block) is a
//! `systemMessage`; an allow is empty stdout, exit 0. Claude caps consecutive Stop blocks at 8
//! itself; the gate's own cap is lower.
//!
//! Codex adopted this protocol: `adapter-codex` reuses [`event_kind`], [`render`] and
//! [`install::EVENTS`]. Gemini CLI and Copilot CLI answer in it too, but for one shape each:
//! `adapter-gemini` says `deny` for a block ([`render_stop`]), `adapter-copilot` puts context at
//! the top level.

pub mod doctor;
pub mod install;
pub mod transcript;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::{HookAnswer, StopAnswer};
use checkpoint_core::home::AgentHome;
use checkpoint_core::project_env::{EnvFormat, ProjectEnvSource};
use checkpoint_core::{EventKind, HookEvent, sanitize};
use serde_json::{Value, json};

/// Claude Code's home.
#[derive(Debug, Clone, Copy)]
pub struct Claude;

/// Claude Code's home, for the driver and the CLI.
pub static HOME: Claude = Claude;

impl AgentHome for Claude {
    fn agent(&self) -> Agent {
        Agent::Claude
    }

    /// Context before a tool reaches the model; Claude may write the reply that asked for a tool
    /// only after `PreToolUse` ran; `checkpoint statusline` can be its status line.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .context_before_tool(true)
            .context_after_clear(true)
            .reply_written_after_pre_tool(true)
            .status_line(true)
    }

    fn event_kind(&self, wire_name: &str) -> EventKind {
        event_kind(wire_name)
    }

    /// Claude sends nothing the others do not: it claims every payload, so ask it last.
    fn claims(&self, _payload: &Value) -> bool {
        true
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        render(event, answer)
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }

    fn project_env(&self) -> &'static [ProjectEnvSource] {
        PROJECT_ENV
    }
}

/// The `"env"` of the project's settings, shared and local: Claude Code puts it into every hook's
/// environment, user-scope hooks included (checked with 2.1.330).
pub static PROJECT_ENV: &[ProjectEnvSource] = &[
    ProjectEnvSource {
        path: ".claude/settings.json",
        format: EnvFormat::JsonMember("env"),
    },
    ProjectEnvSource {
        path: ".claude/settings.local.json",
        format: EnvFormat::JsonMember("env"),
    },
];

/// What a Claude-style event name means (Claude Code's, and Codex's, which took them over).
pub fn event_kind(wire_name: &str) -> EventKind {
    match wire_name {
        "Stop" => EventKind::Stop,
        "SubagentStop" => EventKind::SubagentStop,
        "SubagentStart" => EventKind::SubagentStart,
        "UserPromptSubmit" => EventKind::UserPrompt,
        "PreToolUse" => EventKind::PreTool,
        "PostToolUse" => EventKind::PostTool,
        "SessionStart" => EventKind::SessionStart,
        "SessionEnd" => EventKind::SessionEnd,
        "PreCompact" => EventKind::PreCompact,
        other => EventKind::Other(other.to_owned()),
    }
}

/// Claude's answer to `event`, in the JSON its hooks define: context is
/// `hookSpecificOutput.additionalContext` under the event's name, a notice for the user
/// `{"systemMessage":…}`, and a stop's answer is [`render_stop`]'s with `block`; `None` is the
/// no-op (empty stdout). Every text is a [`sanitize::message`]. Codex reads the same, Gemini CLI
/// and Copilot CLI all but one shape of it.
pub fn render(event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
    match answer {
        HookAnswer::Nothing => None,
        HookAnswer::Context(context) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": event.wire_name,
                "additionalContext": sanitize::message(context),
            }
        })),
        HookAnswer::Stop(stop) => render_stop(stop, "block"),
        HookAnswer::Notice(notice) => Some(json!({"systemMessage": sanitize::message(notice)})),
    }
}

/// The answer to an end of turn in the shape Claude Code's hooks introduced, with the agent's
/// word for a block (Claude's `block`, Gemini CLI's `deny`): `{"decision":<block_word>,
/// "reason":…}` on a block, with a `systemMessage` when the user should hear something too (e.g.
/// that the project's commands are not approved); `{"systemMessage":…}` for an allowed stop the
/// user should hear about; `None` (the no-op) for the rest.
pub fn render_stop(stop: &StopAnswer, block_word: &str) -> Option<Value> {
    match (stop.block_message(), stop.user_message()) {
        (Some(reason), None) => Some(json!({"decision": block_word, "reason": reason})),
        (Some(reason), Some(notice)) => Some(json!({
            "decision": block_word, "reason": reason, "systemMessage": notice
        })),
        (None, notice) => notice.map(|notice| json!({"systemMessage": notice})),
    }
}

/// Runs one Claude Code hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use checkpoint_core::event::EventError;

    use super::*;

    #[test]
    fn unknown_events_are_kept_by_name() {
        let raw = br#"{"cwd":"/p","hook_event_name":"Notification"}"#;
        let e = HookEvent::parse(&HOME, raw).unwrap();
        assert_eq!(e.kind, EventKind::Other("Notification".into()));
    }

    #[test]
    fn claude_stop_is_a_stop() {
        let raw = br#"{"session_id":"s1","cwd":"/p","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"Done."}"#;
        let e = HookEvent::parse(&HOME, raw).unwrap();
        assert_eq!(e.agent, Agent::Claude);
        assert_eq!(e.kind, EventKind::Stop);
        assert!(e.stop_hook_active);
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done."));
        assert!(matches!(
            HookEvent::parse(&HOME, b"{"),
            Err(EventError::Malformed(_))
        ));
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = br#"{"cwd":"/p","hook_event_name":"SessionStart"}"#;
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(&HOME, start));
    }
}
