//! The driver every adapter binary shares: read the payload, judge it, print exactly one answer.
//!
//! An adapter only says how its agent spells answers (a [`Protocol`]); reading stdin, the gate
//! call, failing open and the single write to stdout live here, once. Whatever goes wrong — bad
//! stdin, a broken config, a panic — the hook exits 0 with the agent's no-op answer and one line on
//! stderr, so an agent is never wedged by its hook.

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};

use serde_json::Value;

use crate::answer::{HookAnswer, StopAnswer};
use crate::event::{Agent, HookEvent, read_payload};
use crate::gate;
use crate::host::Host;

/// How one agent's hook protocol spells its answers.
pub trait Protocol {
    /// The agent whose payloads this protocol reads.
    const AGENT: Agent;
    /// What to print when there is nothing to say (and when failing open).
    const NO_OP: &'static str;

    /// The JSON answer for a judged stop, or `None` for the no-op answer.
    fn answer(event: &HookEvent, answer: &StopAnswer) -> Option<Value>;
}

/// The usual end-of-turn answer: `{"decision": <block_word>, "reason": <message>}` on a block,
/// `{"systemMessage": …}` when the user should hear about an allowed stop, else the no-op.
pub fn stop_answer(block_word: &str, answer: &StopAnswer) -> Option<Value> {
    if answer.decision.is_block() {
        return Some(serde_json::json!({"decision": block_word, "reason": answer.message}));
    }
    answer
        .user_notice()
        .map(|notice| serde_json::json!({"systemMessage": notice}))
}

/// Context for the model, the way all three agents take it on `SessionStart`, `PreToolUse`,
/// `PostToolUse` (Gemini: `AfterTool`) and prompt events: `hookSpecificOutput.additionalContext`
/// under the event's own name (Claude checks the name; Codex accepts no other keys).
pub fn context_answer(event: &HookEvent, context: &str) -> Value {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event.wire_name,
            "additionalContext": context,
        }
    })
}

/// Runs one hook call for protocol `P` on the process's stdin/stdout/stderr. Always exits 0.
pub fn main<P: Protocol>() -> std::process::ExitCode {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    run::<P>(stdin.lock(), &mut stdout, &mut stderr);
    std::process::ExitCode::SUCCESS
}

/// Runs one hook call: the answer goes to `stdout` (written once), problems to `stderr` (one
/// line each).
pub fn run<P: Protocol>(stdin: impl Read, stdout: &mut impl Write, stderr: &mut impl Write) {
    panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "checkpoint: internal error: {}",
            info.to_string().replace('\n', " ")
        );
    }));
    let answer = panic::catch_unwind(AssertUnwindSafe(|| answer::<P>(stdin, stderr)))
        .unwrap_or_else(|_| Err("internal error (see above)".to_owned()));
    let text = match answer {
        Ok(Some(value)) => value.to_string(),
        Ok(None) => P::NO_OP.to_owned(),
        Err(problem) => {
            let _ = writeln!(
                stderr,
                "checkpoint: {}; allowing",
                problem.replace('\n', " ")
            );
            P::NO_OP.to_owned()
        }
    };
    if !text.is_empty() {
        let _ = writeln!(stdout, "{text}");
    }
    let _ = stdout.flush();
}

fn answer<P: Protocol>(stdin: impl Read, stderr: &mut impl Write) -> Result<Option<Value>, String> {
    let bytes = read_payload(stdin).map_err(|e| e.to_string())?;
    let event = HookEvent::parse(Some(P::AGENT), &bytes).map_err(|e| e.to_string())?;
    if !gate::handles(&event.kind) {
        return Ok(None);
    }
    let outcome = gate::run(&Host::from_process(), &event).map_err(|e| e.to_string())?;
    for warning in &outcome.warnings {
        let _ = writeln!(stderr, "checkpoint: warning: {warning}");
    }
    Ok(match &outcome.answer {
        HookAnswer::Context(context) => Some(context_answer(&event, context)),
        HookAnswer::Stop(answer) => P::answer(&event, answer),
        _ => None,
    })
}
