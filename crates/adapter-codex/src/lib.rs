//! Codex CLI's home (0.169.0): everything checkpoint knows about Codex, in one place — its event
//! names, its answers, its transcript format ([`transcript`]), its install table ([`install`])
//! and the legacy `notify` path ([`notify`]). The core knows Codex only through [`HOME`], an
//! [`AgentHome`].
//!
//! Codex adopted Claude Code's hook protocol — the same event names, `hookSpecificOutput` and
//! `stop_hook_active` — so this crate takes the event names, the answer shapes and the installed
//! event list from `adapter-claude`'s library. A block is `{"decision":"block","reason":…}` and
//! nothing else — Codex rejects an answer with any key its schema does not list — fed back to the
//! model as `<hook_prompt …>reason</hook_prompt>`; an allow is empty stdout. Codex has no loop cap
//! of its own; the gate's bounds it.
//!
//! `checkpoint-codex notify '<json>'` serves Codex versions (or setups) without native hooks: the
//! legacy `notify` program gets the turn-complete payload as its last argument, and a block is
//! typed into the Codex tmux pane (see [`notify`]).

pub mod doctor;
pub mod install;
pub mod notify;
mod tmux;
pub mod transcript;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::{EventKind, HookEvent};
use serde_json::Value;

/// Codex CLI's home.
#[derive(Debug, Clone, Copy)]
pub struct Codex;

/// Codex CLI's home, for the driver and the CLI.
pub static HOME: Codex = Codex;

impl AgentHome for Codex {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .context_before_tool(true)
            .context_after_clear(true)
    }

    /// Claude's event names.
    fn event_kind(&self, wire_name: &str) -> EventKind {
        adapter_claude::event_kind(wire_name)
    }

    /// Only Codex sends turn ids.
    fn claims(&self, payload: &Value) -> bool {
        payload.get("turn_id").is_some_and(|id| !id.is_null())
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        Some(&transcript::Transcript)
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    /// Claude's answer shapes, which carry no key Codex's schema lacks.
    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        adapter_claude::render(event, answer)
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }

    fn more_usage(&self) -> &'static [&'static str] {
        &["checkpoint-codex notify '<json>'   (Codex's `notify` program: see `notify --help`)"]
    }
}

/// Runs one Codex hook call, or the legacy `notify` program when the first argument is `notify`.
pub fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|a| a == "notify") {
        return notify::main(args.last());
    }
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_is_recognised_by_turn_id() {
        let raw = r#"{"session_id":"c","turn_id":"t","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":null}"#;
        assert!(HOME.claims(&serde_json::from_str(raw).unwrap()));
        assert_eq!(
            HookEvent::parse(&HOME, raw.as_bytes()).unwrap().agent,
            Agent::Codex
        );
        let claude = r#"{"session_id":"c","cwd":"/p","hook_event_name":"Stop","turn_id":null}"#;
        assert!(!HOME.claims(&serde_json::from_str(claude).unwrap()));
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = br#"{"turn_id":"t","cwd":"/p","hook_event_name":"SessionStart"}"#;
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(&HOME, start));
    }
}
