//! Claude Code's hook protocol (2.1.330): a block is `{"decision":"block","reason":…}` on stdout,
//! which Claude feeds back as `Stop hook feedback:\n<reason>`; an allow is empty stdout, exit 0.
//! Claude caps consecutive Stop blocks at 8 itself; the gate's own cap is lower.

use checkpoint_core::answer::StopAnswer;
use checkpoint_core::hook::{self, Protocol};
use checkpoint_core::{Agent, HookEvent};
use serde_json::Value;

/// Claude Code's spelling of hook answers.
#[derive(Debug)]
pub struct Claude;

impl Protocol for Claude {
    const AGENT: Agent = Agent::Claude;
    const NO_OP: &'static str = "";

    fn answer(_event: &HookEvent, answer: &StopAnswer) -> Option<Value> {
        hook::stop_answer("block", answer)
    }
}

/// Runs one Claude Code hook call.
pub fn main() -> std::process::ExitCode {
    hook::main::<Claude>()
}
