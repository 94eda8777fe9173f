//! The agents `checkpoint` knows: the homes of the adapter crates (`adapter-claude`,
//! `adapter-gemini`, `adapter-codex`, `adapter-copilot`, `adapter-opencode`, `adapter-qwen`,
//! `adapter-droid`).
//! `checkpoint install` takes their install tables,
//! `checkpoint check` their event names and payload recognition — the same facts the adapters'
//! hooks run on.

use checkpoint_core::event::{EventError, HookEvent};
use checkpoint_core::home::AgentHome;
use clap::builder::PossibleValue;
use serde_json::Value;

/// Every agent's home, in the order they are listed.
pub(crate) static HOMES: [&dyn AgentHome; 7] = [
    &adapter_claude::HOME,
    &adapter_gemini::HOME,
    &adapter_codex::HOME,
    &adapter_copilot::HOME,
    &adapter_opencode::HOME,
    &adapter_qwen::HOME,
    &adapter_droid::HOME,
];

/// The order payloads of unknown origin are recognised in: Claude Code sends nothing the others
/// do not, and claims every payload, so it is asked last; Copilot CLI, whose payloads carry a
/// `timestamp` as Gemini CLI's do, and Qwen Code, whose payloads carry Gemini CLI's `timestamp`
/// beside Claude Code's `permission_mode`, before Gemini CLI; OpenCode's plugin, whose event
/// names no other agent uses, first; Factory Droid, whose payloads are Claude Code's but for the
/// transcript's folder, before Claude Code.
static RECOGNITION: [&dyn AgentHome; 7] = [
    &adapter_opencode::HOME,
    &adapter_droid::HOME,
    &adapter_copilot::HOME,
    &adapter_qwen::HOME,
    &adapter_gemini::HOME,
    &adapter_codex::HOME,
    &adapter_claude::HOME,
];

/// The agent called `name` on the command line.
pub(crate) fn named(name: &str) -> Option<&'static dyn AgentHome> {
    HOMES.into_iter().find(|home| home.agent().name() == name)
}

/// The agents as command-line values, with their product names as help.
pub(crate) fn possible_values() -> impl Iterator<Item = PossibleValue> {
    HOMES.into_iter().map(|home| {
        let value = PossibleValue::new(home.agent().name());
        match home.install() {
            Some(spec) => value.help(spec.title),
            None => value,
        }
    })
}

/// Parses a payload of `home`'s agent, or, without one, of the agent that claims it; returns the
/// agent's home with the event.
pub(crate) fn parse(
    home: Option<&'static dyn AgentHome>,
    bytes: &[u8],
) -> Result<(&'static dyn AgentHome, HookEvent), EventError> {
    let home = home.unwrap_or_else(|| recognise(bytes));
    Ok((home, HookEvent::parse(home, bytes)?))
}

/// The agent whose payload `bytes` is: the first that claims it.
fn recognise(bytes: &[u8]) -> &'static dyn AgentHome {
    let payload: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    RECOGNITION
        .into_iter()
        .find(|home| home.claims(&payload))
        .unwrap_or(&adapter_claude::HOME)
}

#[cfg(test)]
mod tests {
    use checkpoint_core::event::{Agent, EventKind};

    use super::*;

    #[test]
    fn claude_stop_is_a_stop() {
        let raw = br#"{"session_id":"s1","cwd":"/p","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"Done."}"#;
        let (_, e) = parse(None, raw).unwrap();
        assert_eq!(e.agent, Agent::Claude);
        assert_eq!(e.kind, EventKind::Stop);
        assert!(e.stop_hook_active);
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done."));
    }

    #[test]
    fn gemini_after_agent_is_a_stop_with_its_reply() {
        let raw = br#"{"session_id":"g","cwd":"/p","hook_event_name":"AfterAgent","timestamp":"t","prompt":"hi","prompt_response":"Done.","stop_hook_active":false}"#;
        let (_, e) = parse(None, raw).unwrap();
        assert_eq!((e.agent, e.kind), (Agent::Gemini, EventKind::Stop));
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done."));
    }

    #[test]
    fn codex_is_recognised_by_turn_id() {
        let raw = br#"{"session_id":"c","turn_id":"t","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":null}"#;
        assert_eq!(parse(None, raw).unwrap().1.agent, Agent::Codex);
    }

    #[test]
    fn copilot_is_recognised_by_its_camel_case_session_id() {
        let raw = br#"{"sessionId":"s","timestamp":1795465113926,"cwd":"/p","transcriptPath":"/t","stopReason":"end_turn","stop_hook_active":false}"#;
        let (_, event) = parse(None, raw).unwrap();
        assert_eq!((event.agent, event.kind), (Agent::Copilot, EventKind::Stop));
    }

    #[test]
    fn opencode_is_recognised_by_its_plugins_event_names() {
        let raw = br#"{"hook_event_name":"session.idle","session_id":"ses_1","cwd":"/p"}"#;
        let (_, event) = parse(None, raw).unwrap();
        assert_eq!(
            (event.agent, event.kind),
            (Agent::OpenCode, EventKind::Stop)
        );
    }

    #[test]
    fn qwen_is_recognised_before_gemini_by_its_permission_mode() {
        let raw = br#"{"session_id":"q","cwd":"/p","hook_event_name":"Stop","timestamp":"2026-11-27T23:10:25.822Z","permission_mode":"yolo","stop_hook_active":false}"#;
        let (_, event) = parse(None, raw).unwrap();
        assert_eq!((event.agent, event.kind), (Agent::Qwen, EventKind::Stop));
        let gemini = br#"{"session_id":"g","cwd":"/p","hook_event_name":"SessionStart","timestamp":"t","source":"startup"}"#;
        assert_eq!(parse(None, gemini).unwrap().1.agent, Agent::Gemini);
    }

    #[test]
    fn droid_is_recognised_before_claude_by_its_transcripts_folder() {
        let raw = br#"{"session_id":"d","transcript_path":"/h/.factory/sessions/-p/d.jsonl","cwd":"/p","permission_mode":"auto-high","hook_event_name":"Stop","stop_hook_active":false}"#;
        let (_, event) = parse(None, raw).unwrap();
        assert_eq!((event.agent, event.kind), (Agent::Droid, EventKind::Stop));
        let claude = br#"{"session_id":"c","transcript_path":"/h/.claude/projects/-p/c.jsonl","cwd":"/p","hook_event_name":"Stop"}"#;
        assert_eq!(parse(None, claude).unwrap().1.agent, Agent::Claude);
    }

    #[test]
    fn an_agent_named_reads_the_payload_as_its_own() {
        let raw = br#"{"session_id":"c","turn_id":"t","cwd":"/p","hook_event_name":"Stop"}"#;
        let claude = named("claude").unwrap();
        let (home, event) = parse(Some(claude), raw).unwrap();
        assert_eq!((home.agent(), event.agent), (Agent::Claude, Agent::Claude));
        assert!(named("git").is_none());
        assert!(matches!(parse(None, b"{"), Err(EventError::Malformed(_))));
    }

    #[test]
    fn every_agent_is_installable_under_its_name() {
        let names: Vec<_> = possible_values().map(|v| v.get_name().to_owned()).collect();
        assert_eq!(
            names,
            [
                "claude", "gemini", "codex", "copilot", "opencode", "qwen", "droid"
            ]
        );
        for home in HOMES {
            assert!(home.install().is_some(), "{}", home.agent().name());
        }
    }
}
