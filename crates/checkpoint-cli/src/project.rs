//! The one place the CLI opens a project: the host of this process, the current directory, and
//! what to tell the user when that fails.

use std::path::PathBuf;

use checkpoint_core::host::Host;
use checkpoint_core::journal::JournalError;
use checkpoint_core::project::{Project, ProjectError};

use crate::CliError;

/// The current directory.
pub(crate) fn cwd() -> Result<PathBuf, CliError> {
    std::env::current_dir()
        .map_err(|e| CliError::new(format!("current directory: {e}"), "cd into your project"))
}

/// The project in the current directory: its git repository, else the directory itself (the
/// task journal works without git).
pub(crate) fn open() -> Result<Project, CliError> {
    Host::from_process().open(&cwd()?).map_err(project_error)
}

/// The git project in the current directory.
pub(crate) fn open_git() -> Result<Project, CliError> {
    Host::from_process()
        .require_git_project(&cwd()?)
        .map_err(project_error)
}

/// A project error with what to do about it.
pub(crate) fn project_error(err: ProjectError) -> CliError {
    let err = match err {
        ProjectError::Journal(err) => return journal_error(err),
        other => other,
    };
    let hint = match &err {
        ProjectError::MissingCwd(_) => "the payload's `cwd` must be an existing directory",
        ProjectError::NoRepository(_) => "cd into the project's git repository",
        ProjectError::Git(_) => "run this inside the project's working tree",
        ProjectError::EmptyProgress => {
            "say what is done: checkpoint progress \"created the schema\""
        }
        ProjectError::Config(_) => {
            "fix the setting named above (checkpoint.toml, the user config or the CHECKPOINT_* variable)"
        }
        ProjectError::State(_) => {
            "check the permissions of the repository's .git/checkpoint directory (or CHECKPOINT_STATE_DIR)"
        }
        _ => "see the message above",
    };
    CliError::new(err, hint)
}

/// A journal error with what to do about it.
pub(crate) fn journal_error(err: JournalError) -> CliError {
    let hint = match &err {
        JournalError::NoActiveTask => "start one with `checkpoint task start NAME --steps a,b,c`",
        JournalError::NoSuchTask(_) => "`checkpoint status` shows the active task",
        JournalError::Unfinished { .. } => {
            "run `checkpoint task complete` or `checkpoint task abandon` first"
        }
        JournalError::Corrupt { .. } => {
            "inspect the file; copy hook.json.prev over it to go back to the last good version"
        }
        JournalError::Key(_) => "fix the key file's permissions (chmod 600) or move it away",
        JournalError::Task(_) => "`checkpoint status` shows where the task is",
        _ => "see the message above",
    };
    CliError::new(err, hint)
}
