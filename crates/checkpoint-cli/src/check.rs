//! `checkpoint check`: the whole stop gate, as a human (or a script) runs it.

use std::io::IsTerminal;
use std::process::ExitCode;

use checkpoint_core::decide::{AllowReason, Decision, Note};
use checkpoint_core::event::{self, HookEvent};
use checkpoint_core::gate::{Gate, GateError};
use clap::builder::PossibleValuesParser;

use crate::{CliError, agents, output};

/// Options of `checkpoint check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the typed decision as JSON instead of the message.
    #[arg(long)]
    json: bool,
    /// Read the stdin payload as this agent's (default: recognised from the payload).
    #[arg(long, value_parser = PossibleValuesParser::new(agents::possible_values()))]
    agent: Option<String>,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let event = read_event(args.agent.as_deref())?;
    let outcome = Gate::from_process().run(&event).map_err(gate_error)?;
    for warning in &outcome.warnings {
        output::note(&format!("warning: {warning}"));
    }
    if args.json {
        let json = serde_json::to_string_pretty(&outcome.decision)
            .map_err(|e| CliError::new(e, "this is a bug; please report it"))?;
        output::out(&json);
    } else if outcome.message.is_empty() {
        output::out(&format!(
            "Checkpoint — `{}` is not an end of turn: nothing to check.",
            event.wire_name
        ));
    } else {
        output::out(&outcome.message);
    }
    if outcome.decision.is_block() {
        return Ok(ExitCode::from(1));
    }
    if outcome.decision.is_degraded() {
        output::note(&format!("hint: {}", degraded_hint(&outcome.decision)));
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// The event from stdin, or a manual stop in the current directory when stdin is a terminal or
/// empty.
fn read_event(agent: Option<&str>) -> Result<HookEvent, CliError> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let bytes = event::read_payload(stdin.lock()).map_err(|e| {
            CliError::new(
                e,
                "pipe one hook payload (JSON) or nothing into `checkpoint check`",
            )
        })?;
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            return agents::parse(agent.and_then(agents::named), &bytes).map_err(|e| {
                CliError::new(
                    e,
                    "stdin must hold one hook payload as an agent sends it, e.g. \
                     {\"hook_event_name\":\"Stop\",\"cwd\":\"/path\",\"session_id\":\"s\"}",
                )
            });
        }
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("current directory: {e}"), "cd into your project"))?;
    Ok(HookEvent::manual_stop(cwd))
}

fn gate_error(err: GateError) -> CliError {
    let hint = match &err {
        GateError::MissingCwd(_) => "the payload's `cwd` must be an existing directory",
        GateError::Config(_) => {
            "fix the setting named above (checkpoint.toml, the user config or the CHECKPOINT_* variable)"
        }
        GateError::State(_) => {
            "check the permissions of the repository's .git/checkpoint directory (or CHECKPOINT_STATE_DIR)"
        }
        _ => "see the message above",
    };
    CliError::new(err, hint)
}

fn degraded_hint(decision: &Decision) -> &'static str {
    match decision {
        Decision::Allow {
            reason: AllowReason::NoRepository,
            ..
        } => "run `checkpoint check` inside a git repository",
        Decision::Allow {
            reason: AllowReason::RepoUnreadable { .. },
            ..
        } => "run `git status` to see what is wrong with the repository",
        _ if decision
            .notes()
            .iter()
            .any(|n| matches!(n, Note::TestsUnavailable { .. })) =>
        {
            "set a working [tests] command in checkpoint.toml"
        }
        _ => "the gate could not check everything; see the notes above",
    }
}
