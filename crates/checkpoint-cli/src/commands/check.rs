//! `checkpoint check`: the whole stop gate, as a human (or a script) runs it. It is the hook:
//! it runs only the commands the user approved for the project (`checkpoint trust`) and prints
//! the same notice to stderr when some are not approved.

use std::io::IsTerminal;
use std::process::ExitCode;

use serde::Serialize;

use checkpoint_core::answer::HookAnswer;
use checkpoint_core::decide::{AllowReason, Decision, Note};
use checkpoint_core::event::{self, HookEvent};
use checkpoint_core::home::{AgentHome, Manual};
use checkpoint_engine::gate;
use checkpoint_engine::runner::Unwatched;
use clap::builder::PossibleValuesParser;

use crate::error::CliError;
use crate::output::Tone;
use crate::ticker::Ticker;
use crate::{agents, exit_codes, output, project, schema};

/// Options of `checkpoint check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the typed decision as JSON instead of the message.
    #[arg(long)]
    json: bool,
    /// Read the stdin payload as this agent's (default: recognised from the payload).
    #[arg(long, value_parser = PossibleValuesParser::new(agents::possible_values()))]
    agent: Option<String>,
    /// Run every test command whole, not only the tests the changes can affect (as
    /// `CHECKPOINT_TESTS_SELECT=all`).
    #[arg(long)]
    all: bool,
    /// Judge the change set from this revision to the worktree: what was committed since
    /// counts as changed (default: the commit the session's turn began at, when a hook payload
    /// is read; else `HEAD`).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
}

/// What `checkpoint check --json` prints (and the MCP tool `checkpoint_verify` answers): the
/// schema version, the event, and the typed decision (its fields at the top level; none for an
/// event that is not an end of turn).
#[derive(Serialize)]
pub(crate) struct CheckJson<'a> {
    pub(crate) schema_version: u32,
    pub(crate) event: &'a str,
    /// The commit the change set was judged against (the turn's base, or the merge base when
    /// history moved under the turn); absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base: Option<&'a str>,
    #[serde(flatten)]
    pub(crate) decision: Option<&'a Decision>,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let (home, event) = read_event(args.agent.as_deref())?;
    let mut host = project::host();
    if args.all {
        host.env
            .push(("CHECKPOINT_TESTS_SELECT".to_owned(), "all".to_owned()));
    }
    let base = args.base.as_deref();
    let outcome = match Ticker::on_terminal() {
        Some(ticker) => gate::check(home, &host, &event, &ticker, base)?,
        None => gate::check(home, &host, &event, &Unwatched, base)?,
    };
    for warning in &outcome.warnings {
        output::warning(warning);
    }
    let HookAnswer::Stop(answer) = &outcome.answer else {
        if args.json {
            output::json(&CheckJson {
                schema_version: schema::SCHEMA_VERSION,
                event: &event.wire_name,
                base: None,
                decision: None,
            })?;
        } else {
            output::out(&format!(
                "Checkpoint — `{}` is not an end of turn: nothing to check.",
                event.wire_name
            ));
        }
        return Ok(ExitCode::SUCCESS);
    };
    let decision = &answer.decision;
    if let Some(err) = unchecked(decision, &event) {
        return Err(err);
    }
    if args.json {
        output::json(&CheckJson {
            schema_version: schema::SCHEMA_VERSION,
            event: &event.wire_name,
            base: outcome.base.as_deref(),
            decision: Some(decision),
        })?;
    } else {
        output::headline(tone(decision), &answer.message);
    }
    // What the hook would tell the user (e.g. that the project's commands are not approved).
    if let Some(notice) = &answer.notice {
        output::note(notice);
    }
    if decision.is_block() {
        return Ok(ExitCode::from(exit_codes::NO));
    }
    if decision.is_degraded() {
        output::hint(degraded_hint(decision));
        return Ok(ExitCode::from(exit_codes::DEGRADED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The event from stdin (with its agent's home), or a manual stop in the current directory when
/// stdin is a terminal or empty.
fn read_event(agent: Option<&str>) -> Result<(&'static dyn AgentHome, HookEvent), CliError> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let bytes = event::read_payload(checkpoint_engine::stdin::within(
            checkpoint_engine::stdin::LIMIT,
        ))?;
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(agents::parse(agent.and_then(agents::named), &bytes)?);
        }
    }
    Ok((&Manual, HookEvent::manual_stop(project::cwd()?)))
}

/// The error for a stop the gate could not look at (no repository, or one git cannot read): an
/// `error:` and a `hint:`, not a decision.
pub(crate) fn unchecked(decision: &Decision, event: &HookEvent) -> Option<CliError> {
    let Decision::Allow { reason, .. } = decision else {
        return None;
    };
    match reason {
        AllowReason::NoRepository => Some(CliError::new(
            format!("not inside a git repository: {}", event.cwd.display()),
            "run `checkpoint check` inside a git repository (`git init` makes one)",
        )),
        AllowReason::RepoUnreadable { reason } => Some(CliError::new(
            format!("git cannot read the repository: {reason}"),
            "run `git status` to see what is wrong with the repository",
        )),
        _ => None,
    }
}

/// The headline's colour: red for a block, yellow for a stop allowed with something unchecked,
/// green for a stop allowed.
fn tone(decision: &Decision) -> Tone {
    if decision.is_block() {
        Tone::Bad
    } else if decision.is_degraded() {
        Tone::Warn
    } else {
        Tone::Good
    }
}

fn degraded_hint(decision: &Decision) -> &'static str {
    let tests_unavailable = matches!(
        decision,
        Decision::Allow {
            reason: AllowReason::TestsUnavailable { .. },
            ..
        }
    ) || (decision.notes().iter())
        .any(|n| matches!(n, Note::TestsUnavailable { .. }));
    if tests_unavailable {
        "the gate failed to run the tests (its own error); run `checkpoint check` again"
    } else {
        "the gate could not check everything; see the notes above"
    }
}
