//! `checkpoint recover`: after a crash, record it, pick how to go on, and print hook.md.

use std::process::ExitCode;

use checkpoint_core::journal::{Recovery, Task, TaskState};
use serde::Serialize;

use crate::args::ReadArgs;
use crate::commands::receipts;
use crate::error::CliError;
use crate::{fetching, output, project};

/// `checkpoint recover`: records a crash of a stale task (once) and prints hook.md.
pub(crate) fn run(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let journal = project.journal();
    let task = fetching::task(&project, args)??;
    let recovered = journal.recover(&task.id, project.host.now)?;
    // Receipts are shown unverified rather than blocking recovery.
    if let Err(e) = receipts::trusted_keys(&journal) {
        output::warning(&e.to_string());
    }
    journal.refresh_markdown(&recovered.task)?;
    if args.json {
        #[derive(Serialize)]
        struct Recovered<'a> {
            recorded: &'a Option<Recovery>,
            task: &'a Task,
        }
        output::json(&Recovered {
            recorded: &recovered.recorded,
            task: &recovered.task,
        })?;
    } else {
        if recovered.recorded.is_none() {
            let why = match recovered.task.state {
                s if s.is_terminal() => format!("the task is {}", s.name()),
                TaskState::Recovering => "the crash was already recorded".to_owned(),
                _ => "the task is not stale".to_owned(),
            };
            output::note(&format!("note: nothing to recover: {why}"));
        }
        output::out(journal.markdown(&recovered.task).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}
