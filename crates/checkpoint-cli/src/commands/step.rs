//! `checkpoint step …`: start, finish or fail the current step of the active task.

use std::process::ExitCode;

use checkpoint_core::sanitize;

use crate::commands::task::{EndArgs, change};
use crate::commands::validate;
use crate::error::CliError;
use crate::{exit_codes, output, project};

/// `checkpoint step …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Start (or resume) a step: NAME, or the next one not done.
    Start {
        /// The step (default: the next one not done).
        name: Option<String>,
        /// What you are about to do.
        #[arg(long)]
        note: Option<String>,
        /// The task (default: the active one).
        #[arg(long, value_name = "ID")]
        task: Option<String>,
    },
    /// Finish the current step; its validation runs first and must pass.
    Done(EndArgs),
    /// The current step failed; it can be retried (after 3 failures a human is asked).
    Fail(EndArgs),
}

/// `checkpoint step …`.
pub(crate) fn run(command: &Command) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let journal = project.journal();
    let now = project.host.now;
    match command {
        Command::Start { name, note, task } => {
            let task = change(&journal, task.as_deref(), |t| {
                t.start_step(name.as_deref(), now)?;
                t.note(note.clone());
                Ok(())
            })?;
            let step = sanitize::name(task.current().map_or("?", |s| s.name.as_str()));
            output::out(&format!("Working on step {step} of task {}.", task.id));
        }
        Command::Done(args) => {
            let task = journal.resolve(args.task.as_deref())?;
            let timeout = journal.policy().tests.timeout;
            let finish = journal.finish_step(&task.id, args.note.clone(), timeout, now)?;
            if let Some(validation) = &finish.validation {
                validate::report(validation);
            }
            if !finish.done {
                output::hint(
                    "fix what the validation reports, then run `checkpoint step done` again",
                );
                return Ok(ExitCode::from(exit_codes::NO));
            }
            let next = finish.task.next_step().map_or_else(
                || "every step is done: run `checkpoint task complete`".to_owned(),
                |(_, s)| format!("next: `checkpoint step start {}`", sanitize::name(&s.name)),
            );
            output::out(&format!("Step done; {next}."));
        }
        Command::Fail(args) => {
            let task = change(&journal, args.task.as_deref(), |t| {
                t.fail_step(args.note.clone(), now)
            })?;
            output::out(&format!(
                "Step failed; the task is now {}.",
                task.state.name()
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
