//! Codex CLI's hook protocol (0.169.0): a block is `{"decision":"block","reason":…}` and nothing
//! else — Codex rejects an answer with any key its schema does not list — fed back to the model as
//! `<hook_prompt …>reason</hook_prompt>`; an allow is empty stdout. Codex has no loop cap of its
//! own; the gate's bounds it.
//!
//! `checkpoint-codex notify '<json>'` serves Codex versions (or setups) without native hooks: the
//! legacy `notify` program gets the turn-complete payload as its last argument, and a block is
//! typed into the Codex tmux pane (see [`notify`]).

pub mod notify;
mod tmux;

use checkpoint_core::answer::StopAnswer;
use checkpoint_core::hook::{self, Protocol};
use checkpoint_core::{Agent, HookEvent};
use serde_json::Value;

/// Codex CLI's spelling of hook answers.
#[derive(Debug)]
pub struct Codex;

impl Protocol for Codex {
    const AGENT: Agent = Agent::Codex;
    const NO_OP: &'static str = "";

    fn answer(_event: &HookEvent, answer: &StopAnswer) -> Option<Value> {
        hook::stop_answer("block", answer)
    }
}

/// Runs one Codex hook call, or the legacy `notify` program when the first argument is `notify`.
pub fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|a| a == "notify") {
        return notify::main(args.last());
    }
    hook::main::<Codex>()
}
