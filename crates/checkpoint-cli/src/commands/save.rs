//! `checkpoint save "message"`: a session checkpoint of the project (and one of the active task),
//! or with `--task` a checkpoint of that task only.

use std::process::ExitCode;

use checkpoint_core::journal::Trigger;

use crate::continuity::{self, Caller};
use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint save`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What was reached, e.g. "halfway through the refactor".
    message: String,
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
}

/// `checkpoint save "message"`: a manual checkpoint.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    if args.message.trim().is_empty() {
        return Err(CliError::usage(
            "the message is empty",
            "say what was reached: `checkpoint save \"halfway through the refactor\"`",
        ));
    }
    if args.task.is_none() {
        let saved = continuity::save(&project::open_git()?, Caller::Cli, Some(&args.message))?;
        output::out(&saved);
        return Ok(ExitCode::SUCCESS);
    }
    let project = project::open()?;
    let journal = project.journal();
    let task = journal.resolve(args.task.as_deref())?;
    let checkpoint = journal.checkpoint(
        &task.id,
        Trigger::Manual,
        Some(args.message.clone()),
        project.host.now,
    )?;
    output::out(&format!(
        "Saved checkpoint #{} of {}: {} ({} file(s) snapshotted)",
        checkpoint.id,
        task.id,
        args.message,
        checkpoint.files.len()
    ));
    Ok(ExitCode::SUCCESS)
}
