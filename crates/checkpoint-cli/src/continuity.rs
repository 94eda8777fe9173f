//! Session continuity by hand: what `checkpoint progress`, `checkpoint resume`, `checkpoint save`
//! (without `--task`) and `checkpoint log` (without a task) do with the project in the current
//! directory.

use std::process::ExitCode;

use checkpoint_core::continuity::text;
use checkpoint_core::continuity::{ProgressSource, SessionRef};
use checkpoint_core::event::Agent;
use checkpoint_core::journal::Trigger;
use checkpoint_core::project::saving::SaveRequest;

use crate::project::open_git;
use crate::{CliError, output};

/// The session `checkpoint` commands act as.
fn cli_session() -> SessionRef {
    SessionRef {
        agent: Agent::Cli,
        id: "manual".to_owned(),
    }
}

/// `checkpoint progress TEXT`: logs a milestone for the next session's restart context.
pub(crate) fn progress(text: &str) -> Result<ExitCode, CliError> {
    let entry = open_git()?.log_progress(text, None, ProgressSource::Cli)?;
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
    let checkpoint = open_git()?.save_session(SaveRequest {
        session: cli_session(),
        trigger: Trigger::Manual,
        detail: Some(message.to_owned()),
        summary: None,
        context: None,
    })?;
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
pub(crate) fn resume() -> Result<ExitCode, CliError> {
    match open_git()?.resume_context(None, None, false)? {
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
    let project = open_git()?;
    let log = project.continuity().load()?;
    let newest_first: Vec<_> = log.checkpoints.iter().rev().collect();
    if json {
        return output::json(&newest_first).map(|()| ExitCode::SUCCESS);
    }
    if newest_first.is_empty() {
        output::out("No session checkpoints yet.");
    }
    for checkpoint in newest_first {
        output::out(&text::checkpoint_line(checkpoint, project.host.now));
    }
    Ok(ExitCode::SUCCESS)
}
