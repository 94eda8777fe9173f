//! `checkpoint status` (and `checkpoint task status`): the active task, or the one named.

use std::process::ExitCode;

use checkpoint_core::journal::recovery;
use checkpoint_core::journal::{Task, TaskState};
use checkpoint_core::sanitize;
use checkpoint_engine::journal::JournalError;
use serde::Serialize;

use crate::args::ReadArgs;
use crate::error::CliError;
use crate::{fetching, output, project};

/// `checkpoint status`.
pub(crate) fn run(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let journal = project.journal();
    let task = match fetching::task(&project, args)? {
        Ok(task) => Some(task),
        Err(JournalError::NoActiveTask) => None,
        Err(e) => return Err(e.into()),
    };
    let Some(task) = task else {
        if args.json {
            output::json(&serde_json::json!({ "task": null }))?;
        } else {
            output::out(
                "No active task. Start one with `checkpoint task start NAME --steps a,b,c`.",
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    journal.refresh_markdown(&task)?;
    let now = project.host.now;
    let stale = recovery::is_stale(&task, now, journal.settings().stale_threshold);
    let hook_md = journal.hook_md(&task.id)?;
    if args.json {
        #[derive(Serialize)]
        struct Status<'a> {
            task: &'a Task,
            stale: bool,
            hook_md: &'a std::path::Path,
        }
        output::json(&Status {
            task: &task,
            stale,
            hook_md: &hook_md,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut lines = vec![format!(
        "Task: {} ({})",
        sanitize::name(&task.name),
        sanitize::name(&task.id)
    )];
    let every_step_done = task.state == TaskState::StepPending && task.next_step().is_none();
    if every_step_done {
        lines.push("State: every step done; the task is not completed yet".to_owned());
    } else {
        lines.push(format!("State: {}", task.state.name()));
    }
    if let Some((index, step)) = task
        .current_step
        .zip(task.current())
        .filter(|_| !every_step_done)
    {
        lines.push(format!(
            "Step: {} ({} of {}), attempt {}",
            sanitize::name(&step.name),
            index + 1,
            task.steps.len(),
            step.attempt
        ));
    }
    let idle = now.duration_since(task.updated_at).as_secs().max(0);
    lines.push(format!("Last update: {} ({idle}s ago)", task.updated_at));
    if stale {
        lines.push("STALE: the agent seems to have stopped; run `checkpoint recover`.".into());
    }
    if let Some(next) = next_action(&task) {
        lines.push(format!("Next: {next}"));
    }
    let last = task
        .checkpoints
        .last()
        .map(|c| format!(" (last #{} {} at {})", c.id, c.trigger.name(), c.at))
        .unwrap_or_default();
    lines.push(format!("Checkpoints: {}{last}", task.checkpoints.len()));
    lines.push(format!("Receipts: {}", task.receipts.len()));
    lines.push(format!("hook.md: {}", hook_md.display()));
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// What to do next in the states that wait for someone: a step to start, the task to complete,
/// a human's decision. `None` while a step is under way and for a finished task.
fn next_action(task: &Task) -> Option<String> {
    let next = task.next_step();
    match task.state {
        TaskState::StepPending => Some(match next {
            Some((index, step)) => format!(
                "start step {:?} ({} of {}) with `checkpoint step start`.",
                step.name,
                index + 1,
                task.steps.len()
            ),
            None => "every step is done: finish with `checkpoint task complete`.".to_owned(),
        }),
        TaskState::AwaitingHuman => Some(match next {
            Some((_, step)) => format!(
                "a human decides: step {:?} failed {} times. `checkpoint step start` tries it \
                 again; `checkpoint task fail` or `checkpoint task abandon` ends the task.",
                step.name, step.failures
            ),
            None => "a human decides: `checkpoint task complete`, `checkpoint task fail` or \
                     `checkpoint task abandon`."
                .to_owned(),
        }),
        _ => None,
    }
}
