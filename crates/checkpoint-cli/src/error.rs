//! The CLI's one error type, [`CliError`]: what went wrong (one line), what to do about it (the
//! hint) and whose problem it is ([`ErrorKind`]), which sets the exit status.
//!
//! Every core error becomes a `CliError` through one `From` impl below, so the same failure gets
//! the same hint from every command and every MCP tool; commands just use `?`. An error made by
//! hand ([`CliError::new`], [`CliError::usage`]) is for a failure only the CLI knows about.
//!
//! Each kind exits with a status of its own; [`exit_codes`] has the whole table.

use std::process::ExitCode;

use checkpoint_core::event::EventError;
use checkpoint_core::journal::{InvalidTransition, TaskError, TaskEvent, TaskState};
use checkpoint_core::policy::config::ConfigError;
use checkpoint_engine::continuity::diff::DiffError;
use checkpoint_engine::continuity::restore::RestoreError;
use checkpoint_engine::git::GitError;
use checkpoint_engine::git::call::GitCallError;
use checkpoint_engine::journal::{JournalError, KeyError};
use checkpoint_engine::project::ProjectError;
use checkpoint_engine::store::StoreError;

use crate::exit_codes;

/// Whose problem an error is; each kind has its own exit status ([`ErrorKind::exit_code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request: an argument, a value, a payload, a task or step the journal refuses as asked.
    /// Asking differently fixes it, and the hint says how, so it is shown to MCP clients too.
    Usage,
    /// The project or the machine: no repository, a broken setting, state or a file that cannot
    /// be read or written, git missing or stuck. A person fixes it; the hint says what to fix.
    Setup,
    /// checkpoint itself.
    Bug,
}

impl ErrorKind {
    /// The exit status of a command that failed with this kind of error: [`exit_codes::USAGE`],
    /// [`exit_codes::SETUP`] or [`exit_codes::BUG`].
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(match self {
            ErrorKind::Usage => exit_codes::USAGE,
            ErrorKind::Setup => exit_codes::SETUP,
            ErrorKind::Bug => exit_codes::BUG,
        })
    }
}

/// A command failed; shown as `error: …` plus `hint: …` on stderr.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// Whose problem it is; sets the exit status.
    pub kind: ErrorKind,
    /// What went wrong, one line.
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
}

impl CliError {
    /// A [`ErrorKind::Setup`] error with a hint.
    pub fn new(message: impl std::fmt::Display, hint: impl Into<String>) -> CliError {
        CliError {
            kind: ErrorKind::Setup,
            message: message.to_string(),
            hint: Some(hint.into()),
        }
    }

    /// A [`ErrorKind::Usage`] error with a hint.
    pub fn usage(message: impl std::fmt::Display, hint: impl Into<String>) -> CliError {
        CliError {
            kind: ErrorKind::Usage,
            ..CliError::new(message, hint)
        }
    }

    /// A [`ErrorKind::Bug`].
    pub fn bug(message: impl std::fmt::Display) -> CliError {
        CliError {
            kind: ErrorKind::Bug,
            ..CliError::new(message, "this is a bug; please report it")
        }
    }

    /// The same error, told with `message` (the hint and kind stay).
    fn told(self, message: impl std::fmt::Display) -> CliError {
        CliError {
            message: message.to_string(),
            ..self
        }
    }
}

impl From<ProjectError> for CliError {
    fn from(err: ProjectError) -> CliError {
        let message = err.to_string();
        match err {
            ProjectError::Journal(inner) => CliError::from(inner),
            ProjectError::Git(inner) => CliError::from(inner),
            ProjectError::Config(inner) => CliError::from(inner),
            ProjectError::State(inner) => CliError::from(inner).told(message),
            ProjectError::MissingCwd(_) => {
                CliError::usage(message, "the payload's `cwd` must be an existing directory")
            }
            ProjectError::NoConfigDir => {
                CliError::new(message, "set HOME or XDG_CONFIG_HOME to an absolute path")
            }
            ProjectError::NoRepository(_) => {
                CliError::new(message, "cd into the project's git repository")
            }
            ProjectError::EmptyProgress => {
                CliError::usage(message, "say what is done, e.g. \"created the schema\"")
            }
            ProjectError::NoCheckpoint(_) => CliError::usage(
                message,
                "`checkpoint log` lists the session checkpoints; `checkpoint save` saves one",
            ),
            ProjectError::Restore(inner) => CliError::from(inner),
            ProjectError::StateDir(_) => CliError::usage(
                message,
                "set CHECKPOINT_STATE_DIR to an absolute path, or unset it to keep the state in \
                 the repository's git directory",
            ),
            _ => CliError::new(message, REPOSITORY_HINT),
        }
    }
}

impl From<JournalError> for CliError {
    fn from(err: JournalError) -> CliError {
        let message = err.to_string();
        match err {
            JournalError::Task(inner) => CliError::from(inner),
            JournalError::Store(inner) => CliError::from(inner),
            JournalError::Key(inner) => CliError::from(inner),
            JournalError::Signers(_) => CliError::new(
                message,
                "fix or remove the line named; `checkpoint keys export` prints a valid one",
            ),
            JournalError::Corrupt { .. } => CliError::new(
                message,
                "inspect the file; copy hook.json.prev over it to go back to the last good version",
            ),
            JournalError::NewerSchema { .. } => {
                CliError::new(message, "use the newer checkpoint that wrote it")
            }
            JournalError::NoActiveTask => CliError::usage(
                message,
                "start one with `checkpoint task start NAME --steps a,b,c`",
            ),
            JournalError::NoSuchTask(_) => {
                CliError::usage(message, "`checkpoint status` shows the active task")
            }
            JournalError::Unfinished { .. } => CliError::usage(
                message,
                "run `checkpoint task complete` or `checkpoint task abandon` first",
            ),
            JournalError::Finished { .. } => CliError::usage(
                message,
                "start a new task with `checkpoint task start NAME --steps a,b,c`",
            ),
            _ => CliError::new(message, "see the message above"),
        }
    }
}

impl From<TaskError> for CliError {
    fn from(err: TaskError) -> CliError {
        let hint = match &err {
            TaskError::Transition(InvalidTransition {
                from: TaskState::StepPending,
                event: TaskEvent::StepDone | TaskEvent::StepFailed,
            }) => "no step is running: start it first with `checkpoint step start`",
            _ => "`checkpoint status` shows where the task is",
        };
        CliError::usage(err, hint)
    }
}

impl From<KeyError> for CliError {
    fn from(err: KeyError) -> CliError {
        CliError::new(
            err,
            "fix the key file's permissions (chmod 600) or move it away",
        )
    }
}

impl From<StoreError> for CliError {
    fn from(err: StoreError) -> CliError {
        match err {
            StoreError::InvalidId(_) => {
                CliError::usage(err, "use a plain name as the id (a task id, a session id)")
            }
            StoreError::Corrupt { .. } => {
                CliError::new(err, "inspect or move the file named above")
            }
            StoreError::Ref(_) => CliError::new(
                err,
                "a ref fetched from a remote may hold anything: `git for-each-ref refs/checkpoint` \
                 lists them, `git update-ref -d <ref>` removes one you do not trust",
            ),
            _ => CliError::new(
                err,
                "check the permissions of the file named above and its directory",
            ),
        }
    }
}

/// The hint for a repository git cannot read.
const REPOSITORY_HINT: &str = "run `git status` to see what is wrong with the repository";
/// The hint when git cannot be started.
const NO_GIT_HINT: &str = "install git, or put it on PATH";

impl From<GitError> for CliError {
    fn from(err: GitError) -> CliError {
        match err {
            GitError::Cwd { .. } => CliError::new(err, "cd into your project"),
            GitError::Spawn(_) => CliError::new(err, NO_GIT_HINT),
            GitError::Bare { .. } => {
                CliError::new(err, "run this in a working tree of the repository")
            }
            _ => CliError::new(err, REPOSITORY_HINT),
        }
    }
}

impl From<DiffError> for CliError {
    fn from(err: DiffError) -> CliError {
        match err {
            DiffError::Status(inner) => CliError::from(inner),
            DiffError::Call(inner) => CliError::from(inner),
            _ => CliError::new(err, REPOSITORY_HINT),
        }
    }
}

impl From<RestoreError> for CliError {
    fn from(err: RestoreError) -> CliError {
        match err {
            RestoreError::Diff(inner) => CliError::from(inner),
            RestoreError::Refused { .. } => CliError::usage(
                err,
                "`checkpoint restore --dry-run` shows the plan; `--files PATH…` restores the \
                 others alone",
            ),
            _ => CliError::new(
                err,
                "some files were restored before this failed; `checkpoint restore --undo` \
                 returns to the state before",
            ),
        }
    }
}

impl From<GitCallError> for CliError {
    fn from(err: GitCallError) -> CliError {
        match err {
            GitCallError::Spawn { .. } => CliError::new(err, NO_GIT_HINT),
            GitCallError::TimedOut { .. } => CliError::new(
                err,
                "git is slow or stuck in this repository; try again, or check `git status` there",
            ),
            _ => CliError::new(err, REPOSITORY_HINT),
        }
    }
}

impl From<ConfigError> for CliError {
    fn from(err: ConfigError) -> CliError {
        CliError::new(
            err,
            "fix the setting named above (checkpoint.toml, the user config or the CHECKPOINT_* variable)",
        )
    }
}

impl From<EventError> for CliError {
    fn from(err: EventError) -> CliError {
        match err {
            EventError::Malformed(_) => CliError::usage(
                err,
                "stdin must hold one hook payload as an agent sends it, e.g. \
                 {\"hook_event_name\":\"Stop\",\"cwd\":\"/path\",\"session_id\":\"s\"}",
            ),
            _ => CliError::usage(
                err,
                "pipe one hook payload (JSON) or nothing into `checkpoint check`",
            ),
        }
    }
}
