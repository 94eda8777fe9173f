//! `checkpoint task …`: start, inspect and end tasks, the named lists of steps an agent works
//! through.

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::journal::{StepSpec, Task, TaskError};
use checkpoint_core::sanitize;
use checkpoint_engine::host::Host;
use checkpoint_engine::journal::template::{self, Template};
use checkpoint_engine::journal::{Journal, JournalError};

use crate::args::ReadArgs;
use crate::commands::{status, task_list};
use crate::error::CliError;
use crate::{output, project};

/// `checkpoint task …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Start a task: a named list of steps, from --steps or a template file.
    Start(StartArgs),
    /// List every task: id (what --task takes), state, current step, last update, name; the
    /// active one marked.
    List(task_list::Args),
    /// Show the task (same as `checkpoint status`).
    Status(ReadArgs),
    /// Make a task this worktree's active one: a task fetched from another clone (see
    /// `checkpoint resume`), or another worktree's.
    Adopt(AdoptArgs),
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

/// Options of `checkpoint task adopt`.
#[derive(Debug, clap::Args)]
pub(crate) struct AdoptArgs {
    /// The task's id (`checkpoint task list` shows them).
    id: String,
}

/// Options of the commands that end a task or a step.
#[derive(Debug, clap::Args)]
pub(crate) struct EndArgs {
    /// Why, for the history.
    #[arg(long)]
    pub(crate) note: Option<String>,
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    pub(crate) task: Option<String>,
}

fn bad_usage(message: String) -> CliError {
    CliError::usage(message, "see `checkpoint task start --help`")
}

/// `checkpoint task …`.
pub(crate) fn run(command: &Command) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let journal = project.journal();
    let now = project.host.now;
    let (verb, task) = match command {
        Command::Start(args) => return start(&journal, &project.host, args),
        Command::List(args) => return task_list::run(&journal, now, args),
        Command::Status(args) => return status::run(args),
        Command::Adopt(args) => {
            let task = journal.adopt(&args.id)?;
            output::out(&format!(
                "Task {} ({}) is this worktree's active task.\nhook.md: {}",
                sanitize::name(&task.name),
                task.id,
                journal.hook_md(&task.id)?.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
        Command::Complete(args) => (
            "Completed",
            change(&journal, args.task.as_deref(), |t| t.complete(now))?,
        ),
        Command::Abandon(args) => (
            "Abandoned",
            change(&journal, args.task.as_deref(), |t| {
                t.abandon(args.note.clone(), now)
            })?,
        ),
        Command::Fail(args) => (
            "Failed",
            change(&journal, args.task.as_deref(), |t| {
                t.fail(args.note.clone(), now)
            })?,
        ),
    };
    output::out(&format!(
        "{verb} task {} ({}).",
        sanitize::name(&task.name),
        sanitize::name(&task.id)
    ));
    Ok(ExitCode::SUCCESS)
}

/// One task operation on `id` (or the active task) in one transaction.
pub(crate) fn change(
    journal: &Journal,
    id: Option<&str>,
    f: impl FnOnce(&mut Task) -> Result<(), TaskError>,
) -> Result<Task, CliError> {
    let task = journal.resolve(id)?;
    let (_, task) = journal.update(&task.id, |t| f(t).map_err(JournalError::from))?;
    Ok(task)
}

fn start(journal: &Journal, host: &Host, args: &StartArgs) -> Result<ExitCode, CliError> {
    let (name, steps): (Option<String>, Vec<StepSpec>) = match (&args.template, &args.steps) {
        (Some(path), _) => {
            let template = Template::read(path)
                .map_err(|e| CliError::usage(e, "fix the template file named above"))?;
            (args.name.clone().or(template.name), template.steps)
        }
        (None, Some(steps)) => (
            args.name.clone(),
            template::steps_from_cli(steps, &args.validate).map_err(bad_usage)?,
        ),
        (None, None) => return Err(bad_usage("give --steps or --template".into())),
    };
    let name = name.ok_or_else(|| bad_usage("the task needs a NAME".into()))?;
    let task = journal.start_task(&name, steps, host.now)?;
    let steps: Vec<String> = task.steps.iter().map(|s| sanitize::name(&s.name)).collect();
    output::out(&format!(
        "Started task {} ({}): {}.\nhook.md: {}",
        sanitize::name(&task.name),
        task.id,
        steps.join(" → "),
        journal.hook_md(&task.id)?.display()
    ));
    Ok(ExitCode::SUCCESS)
}
