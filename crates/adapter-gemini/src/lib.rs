//! Gemini CLI's hook protocol (0.61.0): `AfterAgent` is the end of turn; a block is top-level
//! `{"decision":"deny","reason":…}`, which Gemini re-sends as the next user turn; an allow is
//! `{}`. Always JSON on stdout and exit 0: Gemini parses stderr when stdout is empty and treats
//! other exit codes with text as a deny.

use checkpoint_core::answer::StopAnswer;
use checkpoint_core::hook::{self, Protocol};
use checkpoint_core::{Agent, HookEvent};
use serde_json::Value;

/// Gemini CLI's spelling of hook answers.
#[derive(Debug)]
pub struct Gemini;

impl Protocol for Gemini {
    const AGENT: Agent = Agent::Gemini;
    const NO_OP: &'static str = "{}";

    fn answer(_event: &HookEvent, answer: &StopAnswer) -> Option<Value> {
        hook::stop_answer("deny", answer)
    }
}

/// Runs one Gemini CLI hook call.
pub fn main() -> std::process::ExitCode {
    hook::main::<Gemini>()
}
