//! OpenCode's home (1.18.33): everything checkpoint knows about OpenCode, in one place — its
//! events, its answers and its install table ([`install`]), with the plugin that runs the adapter
//! ([`plugin`]). The core knows OpenCode only through [`HOME`], an [`AgentHome`].
//!
//! OpenCode has no command hooks: its plugins are JavaScript modules it loads from
//! `.opencode/plugins/` (and `~/.config/opencode/plugins/`). Checkpoint's plugin
//! (`checkpoint.js`) stays thin: at each hook point it runs `checkpoint-opencode` with one JSON
//! event on stdin and acts on the JSON answer on stdout. All judging happens here.
//!
//! # Wire format
//!
//! The plugin writes one JSON object, in the shape every agent's payload is read in:
//! `hook_event_name`, `session_id` (OpenCode's `ses_…`), `cwd` (the directory OpenCode serves),
//! and per event:
//!
//! | `hook_event_name` | OpenCode's hook point | fields | answer |
//! |---|---|---|---|
//! | `session.start` | `chat.message`, the session's first message this plugin sees (not of a subagent's session) | `source`: `startup` (a session created while the plugin ran) or `resume` | `context` |
//! | `chat.message` | `chat.message` (not of a subagent's session) | `prompt`: the message's text | `context` |
//! | `tool.execute.after` | `tool.execute.after` | `tool_name`, `tool_input` (the tool's arguments); `context_usage` once the session's model has answered: `{"used": <tokens>, "window": <tokens>}` — `used` the last assistant message's `tokens.input + tokens.cache.read + tokens.cache.write` (what its request put into the window), `window` the model's `limit.context` from OpenCode's provider list (absent when unknown, or when that list is not given within 2 s) | `context` |
//! | `session.compacting` | `experimental.session.compacting` | `trigger`: `auto` | — |
//! | `session.idle` | `event` `session.idle` (not of a subagent's session) | `stop_hook_active`: the last idle was blocked and its message sent back; `last_assistant_message` | `block` |
//!
//! The answer is one JSON object: `{}` (nothing to do), or any of `"context": "<text>"` (the
//! plugin adds it to the model's context: a synthetic text part of the user's message, or after
//! the tool's output), `"block": "<message>"` (the plugin sends it to the same session as the
//! next prompt, `client.session.promptAsync`) and `"notice": "<text>"` (for the user: a toast in
//! the TUI, and OpenCode's log).
//!
//! A lone `opencode run` ends at the session's first idle and disposes of OpenCode's instance
//! while the adapter is still judging that stop. The plugin's `dispose` hook, which OpenCode
//! awaits, waits for the stops being judged; a block answered then is stored in the session
//! without a reply (`client.session.prompt` with `noReply`), and the model reads it with the
//! session's next prompt (`opencode run --session <id>`). A block counts toward the cap once its
//! message is in the session — OpenCode fires `chat.message` with it, which the plugin carries
//! here — or at the next idle of its turn; one never stored is never counted
//! ([`Capabilities::block_counted_when_delivered`]).

pub mod doctor;
pub mod install;
pub mod plugin;

use checkpoint_core::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::home::AgentHome;
use checkpoint_core::{EventKind, HookEvent, sanitize};
use serde_json::{Value, json};

/// OpenCode's home.
#[derive(Debug, Clone, Copy)]
pub struct OpenCode;

/// OpenCode's home, for the driver and the CLI.
pub static HOME: OpenCode = OpenCode;

/// The plugin's event names, and what each means.
const EVENTS: &[(&str, EventKind)] = &[
    ("session.idle", EventKind::Stop),
    ("chat.message", EventKind::UserPrompt),
    ("tool.execute.after", EventKind::PostTool),
    ("session.start", EventKind::SessionStart),
    ("session.compacting", EventKind::PreCompact),
];

impl AgentHome for OpenCode {
    fn agent(&self) -> Agent {
        Agent::OpenCode
    }

    /// No context before a tool runs (OpenCode's `tool.execute.before` can only refuse the
    /// tool): the plugin sends the last reply's token usage with each tool's result, where the
    /// context watch runs and its notice goes with the output. Context at a session's start goes
    /// into its first message. A block counts once its message is in the session (the plugin's
    /// `chat.message` carries it back), or at the next idle of its turn: the plugin's prompt may
    /// never be stored (OpenCode gone before).
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .context_after_clear(true)
            .usage_in_payload(true)
            .block_counted_when_delivered(true)
    }

    fn event_kind(&self, wire_name: &str) -> EventKind {
        EVENTS
            .iter()
            .find(|(name, _)| *name == wire_name)
            .map_or_else(
                || EventKind::Other(wire_name.to_owned()),
                |(_, kind)| kind.clone(),
            )
    }

    /// Only checkpoint's OpenCode plugin names its events with OpenCode's dotted names.
    fn claims(&self, payload: &Value) -> bool {
        payload
            .get("hook_event_name")
            .and_then(Value::as_str)
            .is_some_and(|name| EVENTS.iter().any(|(ours, _)| *ours == name))
    }

    /// OpenCode keeps its sessions in a database, not in a transcript file: the plugin sends the
    /// usage instead ([`Capabilities::usage_in_payload`]).
    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        None
    }

    fn no_op(&self) -> &'static str {
        "{}"
    }

    /// The plugin's answer: `context` for context, `block` for a block and `notice` for what the
    /// user should hear (beside a block too), each a [`sanitize::message`]; `None` is the no-op,
    /// `{}`.
    fn render(&self, _event: &HookEvent, answer: &HookAnswer) -> Option<Value> {
        match answer {
            HookAnswer::Nothing => None,
            HookAnswer::Context(context) => Some(json!({"context": sanitize::message(context)})),
            HookAnswer::Stop(stop) => match (stop.block_message(), stop.user_message()) {
                (Some(block), None) => Some(json!({"block": block})),
                (Some(block), Some(notice)) => Some(json!({"block": block, "notice": notice})),
                (None, notice) => notice.map(|notice| json!({"notice": notice})),
            },
            HookAnswer::Notice(notice) => Some(json!({"notice": sanitize::message(notice)})),
        }
    }

    fn install(&self) -> Option<&InstallSpec> {
        Some(&install::INSTALL)
    }
}

/// Runs one OpenCode hook call.
pub fn main() -> std::process::ExitCode {
    checkpoint_engine::hook::main(&HOME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_is_a_stop() {
        let raw = br#"{"hook_event_name":"session.idle","session_id":"ses_1","cwd":"/p","stop_hook_active":true,"last_assistant_message":"Done."}"#;
        let e = HookEvent::parse(&HOME, raw).unwrap();
        assert_eq!((e.agent, e.kind), (Agent::OpenCode, EventKind::Stop));
        assert_eq!(e.session_id, "ses_1");
        assert!(e.stop_hook_active);
        assert_eq!(e.last_assistant_message.as_deref(), Some("Done."));
    }

    #[test]
    fn only_the_plugins_events_are_claimed() {
        let claimed = |raw: &str| HOME.claims(&serde_json::from_str(raw).unwrap());
        assert!(claimed(r#"{"hook_event_name":"session.idle","cwd":"/p"}"#));
        assert!(claimed(r#"{"hook_event_name":"chat.message","cwd":"/p"}"#));
        assert!(!claimed(r#"{"hook_event_name":"Stop","cwd":"/p"}"#));
        assert!(!claimed(
            r#"{"hook_event_name":"session.deleted","cwd":"/p"}"#
        ));
        assert!(!claimed(r#"{"sessionId":"s"}"#));
    }

    #[test]
    fn answers_are_the_plugins_small_shape() {
        let event = HookEvent::parse(
            &HOME,
            br#"{"hook_event_name":"session.start","session_id":"s","cwd":"/p","source":"startup"}"#,
        )
        .unwrap();
        let render = |answer| HOME.render(&event, &answer).map(|v| v.to_string());
        insta::assert_snapshot!(render(HookAnswer::Context("C".to_owned())).unwrap(), @r#"{"context":"C"}"#);
        insta::assert_snapshot!(render(HookAnswer::Notice("N".to_owned())).unwrap(), @r#"{"notice":"N"}"#);
        assert_eq!(render(HookAnswer::Nothing), None);
    }

    #[test]
    fn every_answer_on_the_wire() {
        let start = br#"{"hook_event_name":"session.start","cwd":"/p","source":"startup"}"#;
        insta::assert_snapshot!(checkpoint_testkit::answers::on_the_wire(&HOME, start));
    }
}
