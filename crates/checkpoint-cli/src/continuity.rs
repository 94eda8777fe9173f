//! Session continuity by hand — save a checkpoint, log progress, the restart context, the list of
//! checkpoints, a restore — as both `checkpoint save|progress|resume|log|restore` and the MCP
//! tools `checkpoint_save|progress|resume|list|restore` do it, and the one sentence each result is told in, so
//! that a person in a terminal and an agent over MCP read the same thing.

use checkpoint_core::event::Agent;
use checkpoint_core::journal::Trigger;
use checkpoint_core::sanitize;
use checkpoint_engine::continuity::{ProgressSource, SessionCheckpoint, SessionRef, Signed, text};
use checkpoint_engine::project::Project;
use checkpoint_engine::project::restoring::{RestoreRequest, RestoreTo, Restored};
use checkpoint_engine::project::saving::SaveRequest;

use crate::args::FetchArgs;
use crate::error::CliError;
use crate::{fetching, output};

/// What `resume` says when nothing was saved yet.
const NO_CHECKPOINT: &str = "No checkpoint saved yet.";
/// What `resume` says when checkpoints were saved, but none signed by this user's key.
const NO_SIGNED_CHECKPOINT: &str = "No checkpoint signed by your key to resume from.";
/// What the list says when it is empty.
const NO_CHECKPOINTS: &str = "No session checkpoints yet.";

/// Who saves and logs: the session its checkpoints belong to (agent `cli`) and the source of its
/// progress entries.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Caller {
    /// A `checkpoint` command (session `manual`).
    Cli,
    /// A tool of `checkpoint mcp` (session `mcp`).
    Mcp,
}

impl Caller {
    fn session(self) -> SessionRef {
        let id = match self {
            Caller::Cli => "manual",
            Caller::Mcp => "mcp",
        };
        SessionRef {
            agent: Agent::Cli,
            id: id.to_owned(),
        }
    }

    fn source(self) -> ProgressSource {
        match self {
            Caller::Cli => ProgressSource::Cli,
            Caller::Mcp => ProgressSource::Mcp,
        }
    }
}

/// Saves a session checkpoint of `project` (and one of the active task, if any) with `message`
/// as its detail; says its number and what it recorded.
pub(crate) fn save(
    project: &Project,
    caller: Caller,
    message: Option<&str>,
) -> Result<String, CliError> {
    let checkpoint = project.save_session(SaveRequest {
        session: caller.session(),
        trigger: Trigger::Manual,
        detail: message.filter(|m| !m.trim().is_empty()).map(str::to_owned),
        summary: None,
        context: None,
        unresolved: None,
    })?;
    let files = checkpoint.files.len() + checkpoint.more_files;
    let task = checkpoint
        .task
        .map(|t| format!("; task {} checkpointed too", t.id))
        .unwrap_or_default();
    Ok(format!(
        "Saved checkpoint #{} ({files} changed {}{task})",
        checkpoint.id,
        if files == 1 { "file" } else { "files" }
    ))
}

/// Restores the worktree's files to the checkpoint `to` (only the repository-relative paths
/// `only`, when given; with `dry_run` nothing is changed); returns what was done and its report.
pub(crate) fn restore(
    project: &Project,
    caller: Caller,
    to: RestoreTo,
    only: Vec<String>,
    dry_run: bool,
) -> Result<(Restored, String), CliError> {
    let restored = project.restore(RestoreRequest {
        to,
        only,
        dry_run,
        session: caller.session(),
    })?;
    let report = text::restore_report(&restored.plan, restored.safety, dry_run, project.host.now);
    Ok((restored, report))
}

/// Logs a finished milestone for the next session's restart context; says what was logged.
pub(crate) fn progress(project: &Project, caller: Caller, text: &str) -> Result<String, CliError> {
    let entry = project.log_progress(text, None, caller.source())?;
    let task = entry
        .task
        .map(|t| format!(" (task {t})"))
        .unwrap_or_default();
    Ok(format!("Progress logged{task}: {}", entry.text))
}

/// The restart context a new session would get from the latest checkpoint signed by this user's
/// key, without counting a restart; then the checkpoints saved after it that are unverified,
/// marked so and without their text. With no such checkpoint here (or with `--fetch`), the
/// checkpoint refs are fetched first.
pub(crate) fn resume(project: &Project, fetch: FetchArgs) -> Result<String, CliError> {
    let restart = fetching::read(
        project,
        fetch,
        || Ok(project.resume_context(None, None, false)?),
        |restart| restart.context.is_none(),
    )?;
    let listed = text::unverified_note(&restart.unverified, project.host.now);
    let Some(context) = restart.context else {
        let nothing = match listed {
            Some(listed) => format!("{NO_SIGNED_CHECKPOINT}\n{listed}"),
            None => NO_CHECKPOINT.to_owned(),
        };
        return Ok(match adoptable(project)? {
            Some(tasks) => format!("{nothing}\n{tasks}"),
            None => nothing,
        });
    };
    Ok(match listed {
        Some(listed) => format!("{context}\n\n{listed}"),
        None => context,
    })
}

/// With no active task here, the unfinished tasks this worktree could adopt (fetched from
/// another clone, or another worktree's), each with the command that adopts it.
fn adoptable(project: &Project) -> Result<Option<String>, CliError> {
    let journal = project.journal();
    if journal.active()?.is_some() {
        return Ok(None);
    }
    let mut lines = Vec::new();
    for id in journal.task_ids()? {
        let Ok(task) = journal.load(&id) else {
            continue;
        };
        if !task.state.is_terminal() {
            let id = sanitize::name(&id);
            lines.push(format!(
                "Unfinished task {} ({id}), {}: `checkpoint task adopt {id}` makes it this \
                 worktree's active task.",
                sanitize::name(&task.name),
                task.state.name()
            ));
        }
    }
    Ok((!lines.is_empty()).then(|| lines.join("\n")))
}

/// Tells the user on stderr, once, that a continuity log that did not parse was set aside (see
/// [`checkpoint_engine::continuity::Continuity::untold_corrupt_log`]).
pub(crate) fn tell_set_aside(project: &Project) {
    if let Some(path) = project.continuity().untold_corrupt_log() {
        output::warning(&text::corrupt_log_notice(&path));
    }
}

/// The project's session checkpoints, newest first.
pub(crate) fn newest_first(project: &Project) -> Result<Vec<SessionCheckpoint>, CliError> {
    project.git()?;
    let mut checkpoints = project.continuity().load()?.checkpoints;
    checkpoints.reverse();
    Ok(checkpoints)
}

/// `checkpoints`, one line each: number, trigger, age, session, files, context and summary; one
/// this user's key did not sign is marked unverified, without its text.
pub(crate) fn list(project: &Project, checkpoints: &[SessionCheckpoint]) -> String {
    if checkpoints.is_empty() {
        return NO_CHECKPOINTS.to_owned();
    }
    let own = project.continuity().own_keys();
    let lines: Vec<String> = checkpoints
        .iter()
        .map(|c| text::checkpoint_line(c, c.signed_by(&own), project.host.now))
        .collect();
    lines.join("\n")
}
