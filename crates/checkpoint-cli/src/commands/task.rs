//! `checkpoint task …` and `checkpoint step …`: starting tasks and moving through their steps.

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::host::Host;
use checkpoint_core::journal::template::{self, Template};
use checkpoint_core::journal::{Journal, JournalError, StepSpec, Task};

use crate::journal_cmds::{self, ReadArgs, journal_error, open};
use crate::{CliError, output};

/// `checkpoint task …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum TaskCommand {
    /// Start a task: a named list of steps, from --steps or a template file.
    Start(StartArgs),
    /// Show the task (same as `checkpoint status`).
    Status(ReadArgs),
    /// Finish the task; every step must be done.
    Complete(EndArgs),
    /// Give the task up.
    Abandon(EndArgs),
    /// Mark the task failed.
    Fail(EndArgs),
}

/// Options of `checkpoint task start`.
#[derive(Debug, clap::Args)]
pub(crate) struct StartArgs {
    /// The task's name (default with --template: the template's name).
    name: Option<String>,
    /// The steps, in order, comma-separated: plan,implement,test,review.
    #[arg(
        long,
        conflicts_with = "template",
        required_unless_present = "template"
    )]
    steps: Option<String>,
    /// A step's validation command, STEP=CMD; repeatable.
    #[arg(long, value_name = "STEP=CMD", requires = "steps")]
    validate: Vec<String>,
    /// A TOML template: `name = "…"` and `[[step]] name = "…" validate = "…"`.
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
}

/// Options of the commands that end a task.
#[derive(Debug, clap::Args)]
pub(crate) struct EndArgs {
    /// Why, for the history.
    #[arg(long)]
    note: Option<String>,
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
}

/// `checkpoint step …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum StepCommand {
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

fn bad_usage(message: String) -> CliError {
    CliError::new(message, "see `checkpoint task start --help`")
}

/// `checkpoint task …`.
pub(crate) fn task(command: &TaskCommand) -> Result<ExitCode, CliError> {
    let (journal, gate) = open()?;
    let now = gate.now;
    let (verb, task) = match command {
        TaskCommand::Start(args) => return start(&journal, &gate, args),
        TaskCommand::Status(args) => return journal_cmds::status(args),
        TaskCommand::Complete(args) => (
            "Completed",
            change(&journal, args.task.as_deref(), |t| t.complete(now))?,
        ),
        TaskCommand::Abandon(args) => (
            "Abandoned",
            change(&journal, args.task.as_deref(), |t| {
                t.abandon(args.note.clone(), now)
            })?,
        ),
        TaskCommand::Fail(args) => (
            "Failed",
            change(&journal, args.task.as_deref(), |t| {
                t.fail(args.note.clone(), now)
            })?,
        ),
    };
    output::out(&format!("{verb} task {} ({}).", task.name, task.id));
    Ok(ExitCode::SUCCESS)
}

/// One task operation on `id` (or the active task) in one transaction.
fn change(
    journal: &Journal,
    id: Option<&str>,
    f: impl FnOnce(&mut Task) -> Result<(), checkpoint_core::journal::TaskError>,
) -> Result<Task, CliError> {
    let task = journal.resolve(id).map_err(journal_error)?;
    let (_, task) = journal
        .update(&task.id, |t| f(t).map_err(JournalError::from))
        .map_err(journal_error)?;
    Ok(task)
}

fn start(journal: &Journal, gate: &Host, args: &StartArgs) -> Result<ExitCode, CliError> {
    let (name, steps): (Option<String>, Vec<StepSpec>) = match (&args.template, &args.steps) {
        (Some(path), _) => {
            let template = Template::read(path)
                .map_err(|e| CliError::new(e, "fix the template file named above"))?;
            (args.name.clone().or(template.name), template.steps)
        }
        (None, Some(steps)) => (
            args.name.clone(),
            template::steps_from_cli(steps, &args.validate).map_err(bad_usage)?,
        ),
        (None, None) => return Err(bad_usage("give --steps or --template".into())),
    };
    let name = name.ok_or_else(|| bad_usage("the task needs a NAME".into()))?;
    let task = journal
        .start_task(&name, steps, gate.now)
        .map_err(journal_error)?;
    let steps: Vec<&str> = task.steps.iter().map(|s| s.name.as_str()).collect();
    output::out(&format!(
        "Started task {} ({}): {}.\nhook.md: {}",
        task.name,
        task.id,
        steps.join(" → "),
        journal.hook_md(&task.id).map_err(journal_error)?.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint step …`.
pub(crate) fn step(command: &StepCommand) -> Result<ExitCode, CliError> {
    let (journal, gate) = open()?;
    let now = gate.now;
    match command {
        StepCommand::Start { name, note, task } => {
            let task = change(&journal, task.as_deref(), |t| {
                t.start_step(name.as_deref(), now)?;
                t.note(note.clone());
                Ok(())
            })?;
            let step = task.current().map_or("?", |s| s.name.as_str());
            output::out(&format!("Working on step {step} of task {}.", task.id));
        }
        StepCommand::Done(args) => {
            let task = journal
                .resolve(args.task.as_deref())
                .map_err(journal_error)?;
            let timeout = journal.policy().tests.timeout;
            let finish = journal
                .finish_step(&task.id, args.note.clone(), timeout, now)
                .map_err(journal_error)?;
            if let Some(validation) = &finish.validation {
                journal_cmds::report_validation(validation);
            }
            if !finish.done {
                output::note(
                    "hint: fix what the validation reports, then run `checkpoint step done` again",
                );
                return Ok(ExitCode::from(1));
            }
            let next = finish.task.next_step().map_or_else(
                || "every step is done: run `checkpoint task complete`".to_owned(),
                |(_, s)| format!("next: `checkpoint step start {}`", s.name),
            );
            output::out(&format!("Step done; {next}."));
        }
        StepCommand::Fail(args) => {
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
