//! The legacy `notify` path: Codex runs `checkpoint-codex notify '<json>'` after every turn, with
//! stdin, stdout and stderr on /dev/null and its answer ignored. The gate judges the turn as a
//! stop; on a block the message is typed into the Codex pane with tmux and submitted.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use checkpoint_core::answer::HookAnswer;
use checkpoint_core::sanitize;
use checkpoint_core::{Agent, EventKind, HookEvent};
use checkpoint_engine::gate;
use checkpoint_engine::host::Host;
use serde::Deserialize;

use crate::tmux;

/// Environment variable naming the tmux pane to type into; else `$TMUX_PANE` (set by tmux for the
/// pane Codex runs in, and inherited by its notify program).
pub const PANE_VAR: &str = "CHECKPOINT_CODEX_PANE";

/// Codex's internal title-generation thread sends notify calls too; its first message starts so.
const TITLE_PROMPT: &str = "Generate a concise, single-line task title";

/// The notify payload (kebab-case keys).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Notify {
    #[serde(rename = "type")]
    kind: String,
    thread_id: String,
    cwd: std::path::PathBuf,
    #[serde(default)]
    input_messages: Vec<String>,
    #[serde(default)]
    last_assistant_message: Option<String>,
}

/// Turns a notify payload into the stop it stands for; `Ok(None)` for calls to ignore (other
/// notification types, Codex's own helper threads).
pub fn event(payload: &[u8]) -> Result<Option<HookEvent>, String> {
    let notify: Notify =
        serde_json::from_slice(payload).map_err(|e| format!("malformed notify payload: {e}"))?;
    let internal = notify
        .input_messages
        .first()
        .is_some_and(|m| m.starts_with(TITLE_PROMPT));
    if notify.kind != "agent-turn-complete" || internal {
        return Ok(None);
    }
    let mut event = HookEvent::new(
        Agent::Codex,
        EventKind::Stop,
        "notify",
        &notify.thread_id,
        notify.cwd,
    );
    event.last_assistant_message = notify.last_assistant_message;
    event.prompt = notify.input_messages.last().cloned();
    Ok(Some(event))
}

/// What `checkpoint-codex notify --help` prints.
pub const HELP: &str =
    "checkpoint-codex notify: checkpoint's stop gate for Codex's legacy `notify` program.

Codex runs it after each turn with the turn's JSON as the last argument. On a block, the gate's
message is typed into the Codex pane in tmux ($TMUX_PANE, or CHECKPOINT_CODEX_PANE). It always
exits 0: a problem is one line on stderr.

Usage: in ~/.codex/config.toml,
    notify = [\"/path/to/checkpoint-codex\", \"notify\"]";

/// Runs the notify program on its last argument (`--help`: prints [`HELP`]). Always exits 0;
/// problems go to stderr.
pub fn main(payload: Option<OsString>) -> ExitCode {
    if payload
        .as_deref()
        .is_some_and(|a| a == "--help" || a == "-h")
    {
        let _ = writeln!(std::io::stdout(), "{HELP}");
        return ExitCode::SUCCESS;
    }
    if let Err(problem) = run(payload) {
        let _ = writeln!(std::io::stderr(), "checkpoint-codex notify: {problem}");
    }
    ExitCode::SUCCESS
}

fn run(payload: Option<OsString>) -> Result<(), String> {
    let payload = payload.ok_or("missing the JSON payload argument")?;
    let Some(event) = event(payload.as_encoded_bytes())? else {
        return Ok(());
    };
    let outcome =
        gate::run(&crate::HOME, &Host::from_process(), &event).map_err(|e| e.to_string())?;
    let HookAnswer::Stop(answer) = outcome.answer else {
        return Ok(());
    };
    if !answer.decision.is_block() {
        return Ok(());
    }
    let pane = std::env::var(PANE_VAR)
        .or_else(|_| std::env::var("TMUX_PANE"))
        .map_err(|_| format!("no tmux pane to type into: set {PANE_VAR} or run Codex in tmux"))?;
    tmux::submit(&pane, &sanitize::message(&answer.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_payload_is_a_stop() {
        let raw = include_bytes!("../payloads/notify.json");
        let e = event(raw).unwrap().unwrap();
        assert_eq!(e.kind, EventKind::Stop);
        assert_eq!(e.session_id, "01a20114-5ac8-7ea3-954c-3a7738f33306");
        assert_eq!(
            e.prompt.as_deref(),
            Some("Print a greeting with the shell, then finish.")
        );
        assert_eq!(
            e.last_assistant_message.as_deref(),
            Some("Tests pass now. Done.")
        );
    }

    #[test]
    fn title_generation_and_other_types_are_ignored() {
        let title = br#"{"type":"agent-turn-complete","thread-id":"t","cwd":"/p","input-messages":["Generate a concise, single-line task title for: fix it"]}"#;
        assert_eq!(event(title).unwrap(), None);
        let other = br#"{"type":"approval-requested","thread-id":"t","cwd":"/p"}"#;
        assert_eq!(event(other).unwrap(), None);
        assert!(event(b"not json").is_err());
    }
}
