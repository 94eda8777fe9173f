//! The task journal: durable task state an agent can resume from after a crash or a lost context.
//!
//! Each task lives in `<state dir>/tasks/<task id>/`:
//!
//! - `hook.json` — the [`Task`] record (versioned schema): state, steps, the latest history
//!   entries and the count of all, checkpoints, signed receipts and the master key's
//!   certificates of the task key that signed them ([`signing`]). Every change is one
//!   transaction under the sidecar lock `hook.json.lock`, written by atomic replace with fsync
//!   ([`crate::store`]). The version it replaced is kept as `hook.json.prev`; a corrupt
//!   `hook.json` is reported, never replaced.
//! - `history/<n>.jsonl` — the whole append-only history, in chunks of 1,000 entries of which
//!   only the last is ever rewritten ([`history`]), so that an update costs the same whatever
//!   the task's age.
//! - `hook.md` — generated from `hook.json` ([`markdown::render`]) for an agent to read: what to
//!   do now, what not to repeat, which files changed. Rewritten by every update and by the read
//!   commands whenever it is missing or differs.
//! - `current.json` — the task's state and when its running step was last checkpointed
//!   ([`current`]): what the hooks of every tool call read to decide on an interval checkpoint.
//!
//! `<state dir>/tasks/active.json` names the task the CLI and the hooks work on. A
//! [`crate::project::Project`] opens the journal of its state directory
//! ([`crate::project::Project::journal`]).
//!
//! The hooks call [`Journal::checkpoint_active`] (commit, push, PR, allowed stops) and
//! [`Journal::maybe_interval_checkpoint`] (any hook event); [`is_pr_creation`] recognises a PR.
//!
//! [`Journal`]'s methods live in one file per topic, each an `impl Journal` block (this file
//! holds the types and the helpers several topics share):
//!
//! - `open.rs` — a journal from its parts, its settings, the paths of its files;
//! - `active.rs` — the active task;
//! - `read.rs` — a task as stored, its [`Current`] record, its history, the ids of all;
//! - `transaction.rs` — one transaction on a task ([`Journal::update`]): its ref, `hook.json`,
//!   `hook.md`, `current.json` and the history chunks written;
//! - `lifecycle.rs` — starting a task, finishing a step;
//! - `checkpoints.rs` — checkpoints, of a task or of the active one, and interval checkpoints;
//! - `recover.rs` — crash detection and recovery;
//! - `trust.rs` — a task's signing key and the trusted master keys;
//! - `receipts.rs` — validations, the gate's receipts, and whether a cached pass is trusted;
//! - `cleanup.rs` — removing finished tasks past their retention;
//! - `verify.rs` — which commits a verified passing receipt covers ([`verify`]).
//!
//! [`signing`]: checkpoint_core::journal::signing
//! [`markdown::render`]: checkpoint_core::journal::markdown::render
//! [`current`]: checkpoint_core::journal::current
//! [`Current`]: checkpoint_core::journal::Current
//! [`is_pr_creation`]: checkpoint_core::journal::is_pr_creation

mod active;
pub mod allowed_signers;
mod checkpoints;
mod cleanup;
pub mod history;
pub mod keys;
mod lifecycle;
mod open;
mod read;
mod receipts;
mod recover;
mod snapshot;
pub mod template;
mod transaction;
mod trust;
pub mod verify;

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

pub use allowed_signers::SignersError;
use checkpoint_core::journal::{Receipt, Recovery, Task, TaskError, TaskState, task};
pub use keys::{FileKeyManager, KeyError, KeyManager};

use crate::git::Repo;
use crate::runner::Recorded;
use crate::store::{self, StoreError};
use crate::travel::stream::{Stream, StreamError};
use checkpoint_core::policy::Policy;

/// Why a journal operation failed. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The task refused the operation.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// Reading or writing a state file failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `hook.json` exists but cannot be read as a task; it is left as it is.
    #[error("{}: corrupt task record ({reason}); left untouched, the last good copy is {}", path.display(), prev.display())]
    Corrupt {
        /// The broken `hook.json`.
        path: PathBuf,
        /// What the parser said.
        reason: String,
        /// `hook.json.prev`.
        prev: PathBuf,
    },
    /// `hook.json` was written by a newer version of checkpoint.
    #[error("{}: schema version {found} is newer than this checkpoint understands ({})", path.display(), task::SCHEMA_VERSION)]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: u32,
    },
    /// No task id was given and no task is active.
    #[error("no active task")]
    NoActiveTask,
    /// No task has this id.
    #[error("no task {0:?}")]
    NoSuchTask(String),
    /// A new task cannot start while another is unfinished.
    #[error("task {id:?} is still {}; complete or abandon it first", state.name())]
    Unfinished {
        /// The unfinished task.
        id: String,
        /// Its state.
        state: TaskState,
    },
    /// The task is finished; nothing can be recorded on it.
    #[error("task {id:?} is {}", state.name())]
    Finished {
        /// The task.
        id: String,
        /// How it ended.
        state: TaskState,
    },
    /// The signing key is unusable.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The project's `.checkpoint/allowed_signers` cannot be used.
    #[error(transparent)]
    Signers(#[from] SignersError),
    /// The task's ref could not be read or moved.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// The active-task pointer file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Active {
    task: Option<String>,
}

fn active_path(state_dir: &Path) -> PathBuf {
    state_dir.join("tasks").join("active.json")
}

/// Whether `state_dir` points at an active task: one small file read, no configuration. Hooks
/// that run on every tool call check this before opening a [`Journal`].
pub fn names_active_task(state_dir: &Path) -> bool {
    store::read_json::<Active>(&active_path(state_dir))
        .is_ok_and(|active| active.is_some_and(|a| a.task.is_some()))
}

/// A file one task transaction wrote, with what it holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Its name relative to the task's directory: `hook.json`, `hook.md`, `current.json`,
    /// `history/000001.jsonl`.
    pub name: String,
    /// Its full content as written.
    pub bytes: Vec<u8>,
}

/// The outcome of a validation command.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The run.
    pub run: Recorded,
    /// The receipt recorded for it.
    pub receipt: Receipt,
    /// Whether it passed.
    pub passed: bool,
    /// Why the receipt is unsigned, when it is.
    pub unsigned_because: Option<String>,
}

/// The outcome of finishing a step.
#[derive(Debug, Clone)]
pub struct StepFinish {
    /// The step's validation, when it ran now.
    pub validation: Option<Validated>,
    /// Whether the step is done (false when its validation failed).
    pub done: bool,
    /// The task afterwards.
    pub task: Task,
}

/// The outcome of `checkpoint recover`.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// The task afterwards.
    pub task: Task,
    /// The crash recorded now; `None` when nothing changed (not stale, finished, or already
    /// recovering — running recover twice is running it once).
    pub recorded: Option<Recovery>,
}

/// One state directory's tasks, with the settings, repository and keys they are kept with.
#[derive(Debug)]
pub struct Journal {
    state_dir: PathBuf,
    workdir: PathBuf,
    repo: Option<Repo>,
    policy: Policy,
    keys: Option<Box<dyn KeyManager>>,
}

/// A task's ref and the commit the transaction holding its lock read it at.
struct Synced {
    stream: Stream,
    head: Option<ObjectId>,
}

/// The error for `hook.json` at `path` that does not parse.
fn corrupt(path: &Path) -> impl Fn(serde_json::Error) -> JournalError + '_ {
    |e| JournalError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
        prev: path.with_file_name("hook.json.prev"),
    }
}

/// Refuses `hook.json` at `path` written by a newer version (`schema`).
fn known_schema(path: &Path, schema: u32) -> Result<(), JournalError> {
    if schema > task::SCHEMA_VERSION {
        return Err(JournalError::NewerSchema {
            path: path.to_owned(),
            found: schema,
        });
    }
    Ok(())
}

fn parse_task(path: &Path, bytes: &[u8]) -> Result<Task, JournalError> {
    #[derive(Deserialize)]
    struct Version {
        schema: u32,
    }
    // One pass in the common case; a file that is not a task of this version is told apart
    // (written by a newer one, or corrupt) only then.
    let mut task: Task = match serde_json::from_slice(bytes) {
        Ok(task) => task,
        Err(e) => {
            let version: Version = serde_json::from_slice(bytes).map_err(corrupt(path))?;
            known_schema(path, version.schema)?;
            return Err(corrupt(path)(e));
        }
    };
    known_schema(path, task.schema)?;
    if task.schema < task::SCHEMA_VERSION {
        task.upgrade_from_v1();
    }
    Ok(task)
}

/// `n` random bytes as lowercase hex.
fn random_hex(n: usize) -> Result<String, JournalError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(checkpoint_core::hex::hex(&bytes))
}

#[cfg(test)]
mod tests;
