//! Session continuity by hand: `checkpoint progress`, `checkpoint resume`, session checkpoints
//! in `checkpoint save` and `checkpoint log`.

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::continuity::text;
use checkpoint_core::continuity::{Continuity, ProgressSource, SessionRef};
use checkpoint_core::event::Agent;
use checkpoint_core::gate::{Gate, GateError, SaveRequest};
use checkpoint_core::git;
use checkpoint_core::journal::Trigger;

use crate::journal_cmds::{journal_error, print_json};
use crate::{CliError, output};

/// Options of `checkpoint progress`.
#[derive(Debug, clap::Args)]
pub(crate) struct ProgressArgs {
    /// What is done, e.g. "created the schema".
    text: String,
}

/// Options of `checkpoint resume`.
#[derive(Debug, clap::Args)]
pub(crate) struct ResumeArgs {}

/// The session `checkpoint` commands act as.
fn cli_session() -> SessionRef {
    SessionRef {
        agent: Agent::Cli,
        id: "manual".to_owned(),
    }
}

fn cwd() -> Result<PathBuf, CliError> {
    std::env::current_dir()
        .map_err(|e| CliError::new(format!("current directory: {e}"), "cd into your project"))
}

/// A gate error with what to do about it.
pub(crate) fn gate_error(err: GateError) -> CliError {
    match err {
        GateError::Journal(e) => journal_error(e),
        GateError::NoRepository(_) => CliError::new(err, "cd into the project's git repository"),
        GateError::EmptyProgress => CliError::new(
            err,
            "say what is done: checkpoint progress \"created the schema\"",
        ),
        GateError::Config(_) => CliError::new(err, "fix the setting named above"),
        other => CliError::new(other, "see the message above"),
    }
}

/// `checkpoint progress TEXT`: logs a milestone for the next session's restart context.
pub(crate) fn progress(args: &ProgressArgs) -> Result<ExitCode, CliError> {
    let gate = Gate::from_process();
    let entry = gate
        .log_progress(&cwd()?, &args.text, None, ProgressSource::Cli)
        .map_err(gate_error)?;
    let task = entry
        .task
        .map(|t| format!(" (task {t})"))
        .unwrap_or_default();
    output::out(&format!("Progress logged{task}: {}", entry.text));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint save MESSAGE` without `--task`: a session checkpoint of the project, which also
/// checkpoints the active task if there is one.
pub(crate) fn save_session(message: &str) -> Result<ExitCode, CliError> {
    let gate = Gate::from_process();
    let checkpoint = gate
        .save_session(
            &cwd()?,
            SaveRequest {
                session: cli_session(),
                trigger: Trigger::Manual,
                detail: Some(message.to_owned()),
                summary: None,
                context: None,
            },
        )
        .map_err(gate_error)?;
    let files = checkpoint.files.len() + checkpoint.more_files;
    let task = checkpoint
        .task
        .as_ref()
        .map(|t| format!("; task {} checkpointed too", t.id))
        .unwrap_or_default();
    output::out(&format!(
        "Saved checkpoint #{}: {message} ({files} changed file(s) recorded{task})",
        checkpoint.id
    ));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint resume`: prints the restart context a new session would get, without counting a
/// restart.
pub(crate) fn resume(_: &ResumeArgs) -> Result<ExitCode, CliError> {
    let gate = Gate::from_process();
    match gate
        .resume_context(&cwd()?, None, None, false)
        .map_err(gate_error)?
    {
        Some(text) => output::out(&text),
        None => output::out(
            "No checkpoint saved yet. Hooks save one at every allowed stop; `checkpoint save \
             \"…\"` saves one by hand.",
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint log` when there is no task: the project's session checkpoints, newest first.
pub(crate) fn session_log(json: bool) -> Result<ExitCode, CliError> {
    let gate = Gate::from_process();
    let cwd = cwd()?;
    let repo = match git::discover(&cwd) {
        Ok(Some(repo)) => repo,
        Ok(None) => return Err(gate_error(GateError::NoRepository(cwd))),
        Err(e) => {
            return Err(CliError::new(
                e,
                "run this inside the project's working tree",
            ));
        }
    };
    let log = Continuity::new(&gate.state_dir(&repo))
        .load()
        .map_err(|e| CliError::new(e, "inspect or move the continuity log named above"))?;
    let newest_first: Vec<_> = log.checkpoints.iter().rev().collect();
    if json {
        return print_json(&newest_first).map(|()| ExitCode::SUCCESS);
    }
    if newest_first.is_empty() {
        output::out("No session checkpoints yet.");
    }
    for checkpoint in newest_first {
        output::out(&text::checkpoint_line(checkpoint, gate.now));
    }
    Ok(ExitCode::SUCCESS)
}
