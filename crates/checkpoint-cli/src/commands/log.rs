//! `checkpoint log`: the task's history, oldest first, checkpoints with their triggers; without a
//! task, the project's session checkpoints, newest first.

use std::process::ExitCode;

use checkpoint_core::sanitize;
use checkpoint_engine::continuity::{SessionCheckpoint, Signed};
use checkpoint_engine::journal::JournalError;
use checkpoint_engine::project::Project;
use serde::Serialize;

use crate::args::ReadArgs;
use crate::error::CliError;
use crate::{continuity, fetching, output, project};

/// `checkpoint log`.
pub(crate) fn run(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let journal = project.journal();
    let task = match fetching::task(&project, args)? {
        Ok(task) => task,
        // Without a task, the log is the project's session checkpoints.
        Err(JournalError::NoActiveTask) => {
            let code = session_log(&project, args.json)?;
            continuity::tell_set_aside(&project);
            return Ok(code);
        }
        Err(e) => return Err(e.into()),
    };
    let history = journal.history(&task, 0)?;
    if args.json {
        output::json(&history)?;
        return Ok(ExitCode::SUCCESS);
    }
    let lines: Vec<String> = history
        .iter()
        .map(|h| {
            let kind = serde_json::to_value(h.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let step = h
                .step
                .as_deref()
                .map(|s| format!(" [{}]", sanitize::name(s)))
                .unwrap_or_default();
            let detail = h
                .detail
                .as_deref()
                .map(|d| format!(": {}", sanitize::line(d, sanitize::NAME_CHARS)))
                .unwrap_or_default();
            format!("{}  {kind}{step}{detail}  → {}", h.at, h.state.name())
        })
        .collect();
    output::out(&lines.join("\n"));
    continuity::tell_set_aside(&project);
    Ok(ExitCode::SUCCESS)
}

/// A checkpoint as `log --json` prints it: with whether this user's own key signed it (one
/// that is not came from elsewhere; its text is anyone's).
#[derive(Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    checkpoint: &'a SessionCheckpoint,
    verified: bool,
}

/// The project's session checkpoints, newest first.
fn session_log(project: &Project, json: bool) -> Result<ExitCode, CliError> {
    let checkpoints = continuity::newest_first(project)?;
    if json {
        let own = project.continuity().own_keys();
        let listed: Vec<Listed> = (checkpoints.iter())
            .map(|checkpoint| Listed {
                checkpoint,
                verified: checkpoint.signed_by(&own),
            })
            .collect();
        output::json(&listed)?;
    } else {
        output::out(&continuity::list(project, &checkpoints));
    }
    Ok(ExitCode::SUCCESS)
}
