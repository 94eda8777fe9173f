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

pub mod allowed_signers;
pub mod history;
pub mod keys;
mod snapshot;
pub mod template;
pub mod verify;

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub use allowed_signers::SignersError;
use checkpoint_core::journal::{
    Checkpoint, Current, FileSnapshot, HistoryEntry, KeyCertificate, Receipt, ReceiptPayload,
    ReceiptSigner, ReceiptSource, Recovery, Removal, StepSpec, StepStatus, Task, TaskError,
    TaskEvent, TaskKey, TaskState, Trigger, TrustedKeys, checkpoint, current, markdown, receipt,
    recovery, retention, state, task,
};
pub use keys::{FileKeyManager, KeyError, KeyManager};

use crate::git::{self, Repo};
use crate::runner::{self, Recorded};
use crate::store::{self, StoreError};
use crate::travel::stream::{self, Edit, Marker, Stream, StreamError};
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::policy::{JournalSettings, Policy};
use snapshot::Observation;

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

/// A task's signing key, or why its receipts go unsigned.
type Signing = (Option<TaskKey>, Option<String>);

/// What `signed` returns: a receipt, and the certificate of the key that signed it.
type Signed = (Receipt, Option<KeyCertificate>);

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

/// The receipt payload for one recorded run of `command` in `task`'s current step.
fn run_payload(
    task: &Task,
    source: ReceiptSource,
    command: &str,
    run: &Recorded,
    (started, ended): (Timestamp, Timestamp),
    fingerprint: Option<String>,
    tree: Option<String>,
) -> Result<ReceiptPayload, JournalError> {
    Ok(ReceiptPayload {
        version: receipt::RECEIPT_VERSION,
        id: new_receipt_id()?,
        task_id: task.id.clone(),
        step: task.current_ref(),
        source,
        command: command.to_owned(),
        status: run.outcome.status,
        exit_code: run.outcome.exit_code,
        started_at: started,
        ended_at: ended,
        duration_ms: run.outcome.duration_ms,
        stdout_sha256: run.stdout_sha256.clone(),
        stderr_sha256: run.stderr_sha256.clone(),
        fingerprint,
        tree,
    })
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

impl Journal {
    /// A journal from its parts.
    pub fn new(
        state_dir: PathBuf,
        workdir: PathBuf,
        repo: Option<Repo>,
        policy: Policy,
        keys: Option<Box<dyn KeyManager>>,
    ) -> Journal {
        Journal {
            state_dir,
            workdir,
            repo,
            policy,
            keys,
        }
    }

    /// The `[journal]` settings in force.
    pub fn settings(&self) -> &JournalSettings {
        &self.policy.journal
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The working tree the journal's checkpoints and validations look at.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    fn tasks_dir(&self) -> PathBuf {
        self.state_dir.join("tasks")
    }

    /// The directory of task `id` (the id is validated).
    pub fn task_dir(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.tasks_dir().join(store::validate_id(id)?))
    }

    /// `hook.json` of task `id`.
    pub fn hook_json(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.task_dir(id)?.join("hook.json"))
    }

    /// `hook.md` of task `id`.
    pub fn hook_md(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.task_dir(id)?.join("hook.md"))
    }

    fn active_path(&self) -> PathBuf {
        active_path(&self.state_dir)
    }

    /// The id of the active task, if any.
    pub fn active_id(&self) -> Result<Option<String>, JournalError> {
        let active: Option<Active> = store::read_json(&self.active_path())?;
        Ok(active.and_then(|a| a.task))
    }

    /// Task `id` as stored: its ref's latest commit, imported into the task directory first
    /// when that does not hold it yet (fetched from elsewhere, or a writer killed between
    /// committing and rewriting the directory).
    pub fn load(&self, id: &str) -> Result<Task, JournalError> {
        self.sync_behind(id)?;
        self.read_task(id)
    }

    /// Imports task `id`'s ref into its directory when the directory does not hold its latest
    /// commit.
    fn sync_behind(&self, id: &str) -> Result<(), JournalError> {
        let path = self.hook_json(id)?;
        if let Some(stream) = self.stream(id)?
            && !Marker::of(&path).holds(stream.head()?)
        {
            let _lock = store::Lock::acquire(&path)?;
            self.synced(id, stream)?;
        }
        Ok(())
    }

    /// Task `id` as its directory holds it.
    fn read_task(&self, id: &str) -> Result<Task, JournalError> {
        let (path, bytes) = self.task_bytes(id)?;
        parse_task(&path, &bytes)
    }

    /// `hook.json` of task `id`, and its content.
    fn task_bytes(&self, id: &str) -> Result<(PathBuf, Vec<u8>), JournalError> {
        let path = self.hook_json(id)?;
        match fs::read(&path) {
            Ok(bytes) => Ok((path, bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(JournalError::NoSuchTask(id.to_owned()))
            }
            Err(source) => Err(StoreError::Io { path, source }.into()),
        }
    }

    /// The [`Current`] record of task `id`: its small `current.json`, or, for a task no
    /// transaction of this version has written yet, what its `hook.json` says.
    pub fn current(&self, id: &str) -> Result<Current, JournalError> {
        match store::read_json(&self.task_dir(id)?.join(current::FILE))? {
            Some(current) => Ok(current),
            None => Ok(Current::of(&self.load(id)?)),
        }
    }

    /// The id of the active task when there is one and its [`Current`] record says it is not
    /// finished: two small files read, not the task.
    fn active_unfinished(&self) -> Result<Option<String>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.current(&id) {
            Ok(current) if !current.state.is_terminal() => Ok(Some(id)),
            Ok(_) | Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `task`'s history from entry `from` (0-based) on, oldest first: read from `history/`, of
    /// which only the chunks holding those entries (`from` near [`Task::history_len`] reads the
    /// last one or two).
    pub fn history(&self, task: &Task, from: u64) -> Result<Vec<HistoryEntry>, JournalError> {
        if task.schema < task::SCHEMA_VERSION {
            // Not moved out of hook.json yet: all of it is there.
            let from = usize::try_from(from).unwrap_or(usize::MAX);
            return Ok(task.history.get(from..).unwrap_or_default().to_vec());
        }
        Ok(history::read(
            &self.task_dir(&task.id)?,
            from,
            task.history_len,
        )?)
    }

    /// Task `id`, or the active task when `id` is `None`.
    pub fn resolve(&self, id: Option<&str>) -> Result<Task, JournalError> {
        match id {
            Some(id) => self.load(id),
            None => self.load(&self.active_id()?.ok_or(JournalError::NoActiveTask)?),
        }
    }

    /// The active task, when there is one and it is not finished.
    pub fn active(&self) -> Result<Option<Task>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.load(&id) {
            Ok(task) if !task.state.is_terminal() => Ok(Some(task)),
            Ok(_) | Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The active task's id and the commit its ref points at (`None` outside git): any update
    /// of the task moves it.
    pub fn active_head(&self) -> Result<Option<(String, Option<ObjectId>)>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        let head = self.stream(&id)?.map(|s| s.head()).transpose()?.flatten();
        Ok(Some((id, head)))
    }

    /// The ref task `id` travels in; `None` without a repository.
    fn stream(&self, id: &str) -> Result<Option<Stream>, JournalError> {
        let Some(repo) = &self.repo else {
            return Ok(None);
        };
        Ok(Some(Stream::task(repo, store::validate_id(id)?)?))
    }

    /// Under task `id`'s lock: the commit its ref points at, imported into the task directory
    /// when the directory does not hold it.
    fn synced(&self, id: &str, stream: Stream) -> Result<Synced, JournalError> {
        let dir = self.task_dir(id)?;
        let marker = Marker::of(&self.hook_json(id)?);
        let head = stream.sync(&marker, |path| task_file(&dir, path))?;
        Ok(Synced { stream, head })
    }

    /// One transaction on task `id`: under its lock, reads `hook.json`, applies `f`, and — when
    /// `f` succeeded and changed the task — commits it to the task's ref and writes the history
    /// entries `f` recorded to `history/`, then `hook.json` (keeping the version it replaces as
    /// `hook.json.prev`), `hook.md` and `current.json`; a task that
    /// `f` finished stops being the active task.
    pub fn update<R>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Task) -> Result<R, JournalError>,
    ) -> Result<(R, Task), JournalError> {
        let path = self.hook_json(id)?;
        let _lock = store::Lock::acquire(&path)?;
        let synced = match self.stream(id)? {
            Some(stream) => Some(self.synced(id, stream)?),
            None => None,
        };
        let old = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(JournalError::NoSuchTask(id.to_owned()));
            }
            Err(source) => return Err(StoreError::Io { path, source }.into()),
        };
        let mut task = parse_task(&path, &old)?;
        let before = task.clone();
        let result = f(&mut task)?;
        if task != before {
            task.revision += 1;
            self.write_task(Some(&before), &mut task, synced)?;
            // A finished task is no longer the active one: progress, resume, log and the hooks
            // stop counting it.
            if task.state.is_terminal() && !before.state.is_terminal() {
                store::update_json(&self.active_path(), |active: &mut Active| {
                    if active.task.as_deref() == Some(id) {
                        active.task = None;
                    }
                })?;
            }
        }
        Ok((result, task))
    }

    /// Starts a new task and makes it the active one. Refused while the active task is
    /// unfinished.
    pub fn start_task(
        &self,
        name: &str,
        steps: Vec<StepSpec>,
        now: Timestamp,
    ) -> Result<Task, JournalError> {
        let active_path = self.active_path();
        let _lock = store::Lock::acquire(&active_path)?;
        if let Some(task) = self.active()? {
            return Err(JournalError::Unfinished {
                id: task.id,
                state: task.state,
            });
        }
        let id = new_task_id(name, now)?;
        let mut task = Task::new(id.clone(), name.to_owned(), steps, now)?;
        task.revision = 1;
        let _task_lock = store::Lock::acquire(&self.hook_json(&id)?)?;
        let synced = self
            .stream(&id)?
            .map(|stream| Synced { stream, head: None });
        self.write_task(None, &mut task, synced)?;
        store::write_json(&active_path, &Active { task: Some(id) })?;
        Ok(task)
    }

    /// What writing `task`, new or changed from `before`, puts in its directory: the history
    /// chunks the entries recorded since `before` change, `hook.json`, `hook.md` and, when it
    /// changed, `current.json` — each with its full new content. Leaves in `task.history` the
    /// latest [`task::RECENT_HISTORY`] entries. Reads only the last history chunk.
    fn files(&self, before: Option<&Task>, task: &mut Task) -> Result<Vec<Written>, JournalError> {
        let dir = self.task_dir(&task.id)?;
        // A version 1 task's whole history is in its hook.json: all of it goes to the store.
        let stored = before
            .filter(|b| b.schema == task::SCHEMA_VERSION)
            .map_or(0, |b| b.history_len);
        let fresh = usize::try_from(task.history_len.saturating_sub(stored))
            .unwrap_or(usize::MAX)
            .min(task.history.len());
        let fresh = &task.history[task.history.len() - fresh..];
        let mut written: Vec<Written> = history::appended(&dir, stored, fresh)?
            .into_iter()
            .map(|(name, bytes)| Written { name, bytes })
            .collect();
        task.schema = task::SCHEMA_VERSION;
        let excess = task.history.len().saturating_sub(task::RECENT_HISTORY);
        task.history.drain(..excess);

        let current = Current::of(task);
        let changed =
            before.is_none_or(|b| b.schema != task::SCHEMA_VERSION || Current::of(b) != current);
        let mut files = vec![
            (
                "hook.json",
                store::json_bytes(&dir.join("hook.json"), task)?,
            ),
            ("hook.md", self.markdown(task).into_bytes()),
        ];
        if changed {
            files.push((
                current::FILE,
                store::json_bytes(&dir.join(current::FILE), &current)?,
            ));
        }
        written.extend(files.into_iter().map(|(name, bytes)| Written {
            name: name.to_owned(),
            bytes,
        }));
        Ok(written)
    }

    /// Writes `task`, new or changed from `before`, under its lock ([`Journal::files`] says
    /// what): committed to the task's ref first, when it has one — the commit point — then to
    /// its directory: the history chunks (made durable first), then `hook.json` — the version
    /// it replaces kept as `hook.json.prev` — `hook.md` and `current.json`, and last the marker
    /// naming the commit they hold. Returns every file written.
    fn write_task(
        &self,
        before: Option<&Task>,
        task: &mut Task,
        synced: Option<Synced>,
    ) -> Result<Vec<Written>, JournalError> {
        let written = self.files(before, task)?;
        let committed = match synced {
            Some(Synced { stream, head }) => {
                let edits: Vec<Edit<'_>> = (written.iter())
                    .map(|w| Edit {
                        path: w.name.clone(),
                        content: Some(&w.bytes),
                    })
                    .collect();
                let message = format!("{} revision {}", task.id, task.revision);
                Some(stream.commit(head, &edits, &message)?)
            }
            None => None,
        };
        let dir = self.task_dir(&task.id)?;
        let (chunks, rest): (Vec<&Written>, Vec<&Written>) = written
            .iter()
            .partition(|w| w.name.starts_with(history::DIR));
        for chunk in chunks {
            store::write_atomic(&dir.join(&chunk.name), &chunk.bytes)?;
        }
        let json = dir.join("hook.json");
        if before.is_some() {
            keep_previous(&json)?;
        }
        // One fsync of the directory for the three names, before the transaction returns.
        for file in rest {
            store::write_atomic_unsynced_dir(&dir.join(&file.name), &file.bytes)?;
        }
        store::sync_dir(&dir)?;
        if let Some(commit) = committed {
            Marker::of(&json).write(commit)?;
        }
        Ok(written)
    }

    /// What git says now about the worktree.
    fn observe(&self) -> Observation {
        snapshot::observe(self.repo.as_ref(), self.policy.git.backend)
    }

    /// What `changes` says about the worktree when the caller read them, else what git says now.
    fn observe_or(&self, changes: Option<&ChangeSet>) -> Observation {
        changes.map_or_else(|| self.observe(), snapshot::observed)
    }

    /// Records the changed files in the task's current step, snapshots them and adds a
    /// checkpoint; returns it.
    fn take_checkpoint(
        &self,
        task: &mut Task,
        seen: &Observation,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
    ) -> Checkpoint {
        task.touch_files(&seen.changed);
        let step_files = task
            .current()
            .filter(|s| s.status == StepStatus::Running)
            .map_or(&[][..], |s| &s.files[..]);
        let files = (step_files.iter().take(checkpoint::MAX_FILES))
            .map(|f| snapshot::snapshot(&self.workdir, &f.path))
            .collect();
        let checkpoint = Checkpoint {
            id: 0,
            trigger,
            at: now,
            step: task.current_ref(),
            vcs: seen.vcs.clone(),
            files,
            more_files: step_files.len().saturating_sub(checkpoint::MAX_FILES),
            message,
        };
        let max = usize::try_from(self.settings().max_checkpoints).unwrap_or(usize::MAX);
        let id = task.add_checkpoint(checkpoint.clone(), max);
        Checkpoint { id, ..checkpoint }
    }

    /// Marks the current step's files whose content differs from the last checkpoint's snapshot;
    /// returns their paths.
    fn mark_drift(&self, task: &mut Task) -> Vec<String> {
        let last = task.last_step_checkpoint().cloned();
        let Some(i) = task.current_step else {
            return Vec::new();
        };
        let snapshots: Option<HashMap<&str, &FileSnapshot>> = last
            .as_ref()
            .map(|c| c.files.iter().map(|s| (s.path.as_str(), s)).collect());
        let mut drifted = Vec::new();
        for file in &mut task.steps[i].files {
            let changed =
                snapshots
                    .as_ref()
                    .is_some_and(|snaps| match snaps.get(file.path.as_str()) {
                        Some(snap) => snapshot::changed_since(&self.workdir, snap),
                        None => true,
                    });
            file.changed_since_checkpoint = changed;
            if changed {
                drifted.push(file.path.clone());
            }
        }
        drifted
    }

    /// Takes a checkpoint of task `id`. Refused on a finished task.
    pub fn checkpoint(
        &self,
        id: &str,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
    ) -> Result<Checkpoint, JournalError> {
        let (checkpoint, _) = self.checkpoint_seen(id, trigger, message, now, self.observe())?;
        Ok(checkpoint)
    }

    /// [`Journal::checkpoint`] of what `seen` says about the worktree; returns the task too.
    fn checkpoint_seen(
        &self,
        id: &str,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        mut seen: Observation,
    ) -> Result<(Checkpoint, Task), JournalError> {
        if let (Trigger::Commit, Some(repo)) = (trigger, &self.repo) {
            seen.changed.extend(snapshot::head_commit_paths(repo));
        }
        self.update(id, |task| {
            refuse_finished(task)?;
            Ok(self.take_checkpoint(task, &seen, trigger, message, now))
        })
    }

    /// Takes a checkpoint of the active task, if there is an unfinished one, of `changes` when
    /// the caller has read them (a stop: one `git status` per stop), else of what git says now.
    /// The git hooks (commit, push), the adapters (PR creation) and the gate (every allowed
    /// stop, with [`Trigger::Stop`]) call this.
    pub fn checkpoint_active(
        &self,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<Checkpoint>, JournalError> {
        let taken = self.checkpoint_active_task(trigger, message, now, changes)?;
        Ok(taken.map(|(checkpoint, _)| checkpoint))
    }

    /// [`Journal::checkpoint_active`], with the task as the checkpoint left it: the task is
    /// read once, in the transaction.
    pub fn checkpoint_active_task(
        &self,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<(Checkpoint, Task)>, JournalError> {
        let Some(id) = self.active_unfinished()? else {
            return Ok(None);
        };
        let seen = self.observe_or(changes);
        match self.checkpoint_seen(&id, trigger, message, now, seen) {
            Ok(taken) => Ok(Some(taken)),
            // Finished or removed since `current.json` was written.
            Err(JournalError::Finished { .. } | JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// On any hook event: when the active task's running step has had no checkpoint for the
    /// checkpoint interval, takes an [`Trigger::Interval`] checkpoint (of `changes` when the
    /// caller has read them). Cheap when none is due: two small files read (`active.json`,
    /// the task's [`Current`] record), whatever the task's size; no git.
    pub fn maybe_interval_checkpoint(
        &self,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<Checkpoint>, JournalError> {
        let interval = self.settings().checkpoint_interval;
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.current(&id) {
            Ok(current) if current.interval_due(now, interval) => {}
            Ok(_) | Err(JournalError::NoSuchTask(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let seen = self.observe_or(changes);
        let (checkpoint, _) = self.update(&id, |task| {
            // Checked again on the task itself: another process may have taken it meanwhile.
            Ok(Current::of(task)
                .interval_due(now, interval)
                .then(|| self.take_checkpoint(task, &seen, Trigger::Interval, None, now)))
        })?;
        Ok(checkpoint)
    }

    /// Task `task_id`'s signing key, derived from the master key along `[journal]
    /// key_derivation` (never stored: derived again each time): `Ok(None)` with the reason when
    /// no key directory is known; an unusable master key (insecure permissions, garbage) is an
    /// error.
    fn task_key(&self, task_id: &str) -> Result<Signing, JournalError> {
        match &self.keys {
            Some(keys) => {
                let key = keys
                    .master()?
                    .task_key(task_id, &self.settings().key_derivation);
                Ok((Some(key), None))
            }
            None => Ok((
                None,
                Some("no config directory (set HOME or XDG_CONFIG_HOME) for a signing key".into()),
            )),
        }
    }

    /// This user's own master public key as the only trusted key, with a warning when there is
    /// none. Never fails: a missing or unusable key only means it cannot vouch for receipts.
    fn own_keys(&self) -> (TrustedKeys, Option<String>) {
        let mut trusted = TrustedKeys::default();
        let warning = match self.keys.as_ref().map(|k| k.master_public_key()) {
            Some(Ok(Some(key))) => {
                trusted.add("you", key);
                None
            }
            Some(Ok(None)) => Some("no signing key yet".to_owned()),
            Some(Err(e)) => Some(e.to_string()),
            None => Some("no config directory for a signing key".to_owned()),
        };
        (trusted, warning)
    }

    /// The master public keys receipts are checked against: this user's own and those the
    /// project lists in `.checkpoint/allowed_signers` ([`allowed_signers`]). The warning says why
    /// no key at all is trusted, when none is; a broken `allowed_signers` is an error.
    pub fn trusted_keys(&self) -> Result<(TrustedKeys, Option<String>), JournalError> {
        let (mut trusted, warning) = self.own_keys();
        for signer in allowed_signers::read(&self.workdir)? {
            trusted.add(signer.name, signer.key);
        }
        let warning = match warning {
            Some(why) if trusted.is_empty() => Some(format!(
                "{why} and no {}: receipts cannot be verified",
                allowed_signers::ALLOWED_SIGNERS
            )),
            _ => None,
        };
        Ok((trusted, warning))
    }

    /// Signs `payload` with task `task_id`'s key, or leaves it unsigned without one (`key` is
    /// what [`Journal::task_key`] gave).
    fn signed(payload: &ReceiptPayload, key: Option<&TaskKey>) -> Signed {
        let receipt = Receipt::new(payload, key.map(|k| &k.signer as &dyn ReceiptSigner));
        (receipt, key.map(|k| k.certificate.clone()))
    }

    /// Runs `command` as a validation of the current step of task `id` (or of `step`, which must
    /// be the current one), records a signed receipt and, when it passed, a checkpoint.
    pub fn validate(
        &self,
        id: &str,
        step: Option<&str>,
        command: &str,
        timeout: Duration,
    ) -> Result<Validated, JournalError> {
        let (key, unsigned_because) = self.task_key(id)?;
        let started = Timestamp::now();
        let (_, task) = self.update(id, |task| {
            task.check_current(step)?;
            task.start_validation(command, started)?;
            Ok(())
        })?;
        // Named before the run: what the command tested, not what it left behind.
        let tree = self.worktree_tree();
        let run = runner::run_recorded(command, &self.workdir, timeout);
        let ended = Timestamp::now();
        let payload = run_payload(
            &task,
            ReceiptSource::Validate,
            command,
            &run,
            (started, ended),
            None,
            tree,
        )?;
        let (receipt, certificate) = Journal::signed(&payload, key.as_ref());
        let passed = payload.passed();
        let seen = passed.then(|| self.observe());
        self.update(id, |task| {
            task.finish_validation(receipt.clone(), passed, command, ended)?;
            task.certify(certificate.as_ref());
            if let Some(seen) = &seen {
                self.take_checkpoint(task, seen, Trigger::Validation, Some(command.into()), ended);
            }
            Ok(())
        })?;
        Ok(Validated {
            run,
            receipt,
            passed,
            unsigned_because,
        })
    }

    /// Finishes the current step of task `id`: runs its validation first when it has one that
    /// has not passed in this attempt, then marks it done with a [`Trigger::StepDone`]
    /// checkpoint. A failing validation leaves the step running (`done: false`).
    pub fn finish_step(
        &self,
        id: &str,
        note: Option<String>,
        timeout: Duration,
        now: Timestamp,
    ) -> Result<StepFinish, JournalError> {
        let task = self.load(id)?;
        let pending = task
            .current()
            .filter(|s| s.validated_by.is_none() && task.state == TaskState::StepRunning)
            .and_then(|s| s.validate.clone());
        let validation = match pending {
            Some(command) => Some(self.validate(id, None, &command, timeout)?),
            None => None,
        };
        // The validation took time: what follows happened after it.
        let now = match &validation {
            Some(_) => now.max(Timestamp::now()),
            None => now,
        };
        if validation.as_ref().is_some_and(|v| !v.passed) {
            return Ok(StepFinish {
                validation,
                done: false,
                task: self.load(id)?,
            });
        }
        let seen = self.observe();
        let (_, task) = self.update(id, |task| {
            transition_allowed(task, TaskEvent::StepDone)?;
            self.take_checkpoint(task, &seen, Trigger::StepDone, None, now);
            task.finish_step(note, now)?;
            Ok(())
        })?;
        Ok(StepFinish {
            validation,
            done: true,
            task,
        })
    }

    /// Checks whether task `id` has crashed and, if so, records it and moves it to
    /// `recovering` with a recommended action. Idempotent: a task already recovering, not stale
    /// or finished is left as it is.
    pub fn recover(&self, id: &str, now: Timestamp) -> Result<Recovered, JournalError> {
        let threshold = self.settings().stale_threshold;
        let task = self.load(id)?;
        if recovery::classify(&task, now, threshold).is_none() {
            self.refresh_markdown(&task)?;
            return Ok(Recovered {
                task,
                recorded: None,
            });
        }
        let seen = self.observe();
        let (recorded, task) = self.update(id, |task| {
            let Some(kind) = recovery::classify(task, now, threshold) else {
                return Ok(None);
            };
            let last_update = task.updated_at;
            let state_before = task.state;
            task.touch_files(&seen.changed);
            let changed_since_checkpoint = self.mark_drift(task);
            let recovery = Recovery {
                detected_at: now,
                last_update,
                state_before,
                kind,
                action: recovery::recommend(task, kind),
                step: task.current_ref(),
                changed_since_checkpoint,
            };
            task.crashed(recovery.clone(), now)?;
            Ok(Some(recovery))
        })?;
        Ok(Recovered { task, recorded })
    }

    /// The git tree id of the worktree now, as a receipt records it (see [`crate::git::tree`]);
    /// `None` outside git or when git cannot say.
    pub fn worktree_tree(&self) -> Option<String> {
        git::tree::worktree_tree(self.repo.as_ref()?).ok()
    }

    /// The tree a receipt of the gate's next run would record: [`Journal::worktree_tree`] while
    /// a task is active, `None` (nothing computed) otherwise, since only then is a receipt
    /// written. The gate asks before the run, so that files the tests create are not in it.
    pub fn tree_for_gate_receipt(&self) -> Option<String> {
        self.active_unfinished().ok().flatten()?;
        self.worktree_tree()
    }

    /// The receipt for one of the stop gate's own test runs, recorded in the active task (when
    /// there is an unfinished one) and returned. The gate calls this after a fresh run, with
    /// the run's test fingerprint and the tree it tested ([`Journal::tree_for_gate_receipt`]).
    pub fn receipt_for_gate_run(
        &self,
        command: &str,
        run: &Recorded,
        tested: (&str, Option<String>),
        started: Timestamp,
        ended: Timestamp,
    ) -> Result<Option<Receipt>, JournalError> {
        let (fingerprint, tree) = tested;
        let Some(id) = self.active_unfinished()? else {
            return Ok(None);
        };
        let (key, _) = self.task_key(&id)?;
        // The task is read once: the receipt names its current step as the transaction sees it.
        let updated = self.update(&id, |task| {
            if task.state.is_terminal() {
                return Ok(None);
            }
            let payload = run_payload(
                task,
                ReceiptSource::Gate,
                command,
                run,
                (started, ended),
                Some(fingerprint.to_owned()),
                tree,
            )?;
            let (receipt, certificate) = Journal::signed(&payload, key.as_ref());
            let verdict = if payload.passed() {
                "passed"
            } else {
                "did not pass"
            };
            let detail = format!("`{command}` {verdict} (receipt {})", receipt.id);
            task.add_receipt(receipt.clone(), detail, ended);
            task.certify(certificate.as_ref());
            Ok(Some(receipt))
        });
        match updated {
            Ok((receipt, _)) => Ok(receipt),
            Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the gate's cache may trust a cached pass of `command` on `fingerprint` instead
    /// of running the command again: always without an active unfinished task; with one, only
    /// when the task holds a passing receipt of it that verifies — task key, certificate,
    /// trusted master key. The task's `current.json` is asked first (it holds the latest pass of
    /// each command); `hook.json` is read only when that has none. An error trusts nothing.
    pub fn trusts_cached_pass(&self, command: &str, fingerprint: &str) -> bool {
        let id = match self.active_id() {
            Ok(Some(id)) => id,
            Ok(None) => return true,
            Err(_) => return false,
        };
        match self.sync_behind(&id).and_then(|()| self.current(&id)) {
            Err(JournalError::NoSuchTask(_)) => return true,
            Ok(c)
                if c.state.is_terminal()
                    || (self.trusted_pass(
                        &id,
                        &c.passes,
                        &c.certificates,
                        command,
                        fingerprint,
                    )) =>
            {
                return true;
            }
            // Unreadable, or not this pass (an older one may be): the task's receipts decide.
            Ok(_) | Err(_) => {}
        }
        let held = self
            .task_bytes(&id)
            .and_then(|(path, bytes)| parse_receipts(&path, &bytes));
        match held {
            Ok(held) if held.state.is_terminal() => true,
            Ok(held) => self.trusted_pass(
                &held.id,
                &held.receipts,
                &held.certificates,
                command,
                fingerprint,
            ),
            Err(JournalError::NoSuchTask(_)) => true,
            Err(_) => false,
        }
    }

    /// Whether `receipts` (of task `id`, which holds `certificates`) have a passing receipt of
    /// `command` on `fingerprint` that verifies.
    fn trusted_pass(
        &self,
        id: &str,
        receipts: &[Receipt],
        certificates: &[KeyCertificate],
        command: &str,
        fingerprint: &str,
    ) -> bool {
        let Ok((trusted, _)) = self.trusted_keys() else {
            return false;
        };
        receipts.iter().rev().any(|r| {
            r.parsed().is_ok_and(|p| {
                p.passed() && p.command == command && p.fingerprint.as_deref() == Some(fingerprint)
            }) && (r.check_in(id, certificates, &trusted)).is_verified()
        })
    }

    /// `hook.md` for `task` as it should be now. Its receipts are checked against the trusted
    /// keys, or against this user's own alone when `allowed_signers` is broken.
    pub fn markdown(&self, task: &Task) -> String {
        let trusted = self
            .trusted_keys()
            .map_or_else(|_| self.own_keys().0, |(trusted, _)| trusted);
        markdown::render(task, &trusted)
    }

    /// Rewrites `hook.md` when it is missing or differs from what `hook.json` says (corrupt,
    /// edited, or left behind by a crash between the two writes). Returns whether it did.
    pub fn refresh_markdown(&self, task: &Task) -> Result<bool, JournalError> {
        let path = self.hook_md(&task.id)?;
        let _lock = store::Lock::acquire(&self.hook_json(&task.id)?)?;
        let want = self.markdown(task);
        if fs::read(&path).is_ok_and(|have| have == want.as_bytes()) {
            return Ok(false);
        }
        store::write_atomic(&path, want.as_bytes())?;
        Ok(true)
    }

    /// The id of every task, sorted: each task directory, and each task ref (a task fetched
    /// from elsewhere has no directory until it is first read).
    pub fn task_ids(&self) -> Result<Vec<String>, JournalError> {
        let dir = self.tasks_dir();
        let mut ids: Vec<String> = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(source) => return Err(StoreError::Io { path: dir, source }.into()),
        };
        if let Some(repo) = &self.repo {
            ids.extend(stream::task_ids(repo)?);
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// Removes (unless `dry_run`) every finished task older than its end state's retention.
    /// Unfinished and unreadable tasks are never touched.
    pub fn cleanup(&self, now: Timestamp, dry_run: bool) -> Result<Vec<Removal>, JournalError> {
        let mut removed = Vec::new();
        let active = self.active_id()?;
        for id in self.task_ids()? {
            let Ok(task) = self.load(&id) else {
                continue;
            };
            let Some(removal) = retention::expired(&task, now, self.settings()) else {
                continue;
            };
            if !dry_run {
                let dir = self.task_dir(&id)?;
                let lock = store::Lock::acquire(&self.hook_json(&id)?)?;
                // Re-read under the lock: a finished task cannot change, but be sure.
                let stream = self.stream(&id)?;
                let head = stream.as_ref().map(Stream::head).transpose()?.flatten();
                if self.read_task(&id).is_ok_and(|t| t.state.is_terminal()) {
                    if let (Some(stream), Some(head)) = (stream, head) {
                        stream.delete(head)?;
                    }
                    fs::remove_dir_all(&dir)
                        .map_err(|source| StoreError::Io { path: dir, source })?;
                }
                drop(lock);
                if active.as_deref() == Some(id.as_str()) {
                    store::write_json(&self.active_path(), &Active::default())?;
                }
            }
            removed.push(removal);
        }
        Ok(removed)
    }
}

/// A task's ref and the commit the transaction holding its lock read it at.
struct Synced {
    stream: Stream,
    head: Option<ObjectId>,
}

/// Where a file of a task's ref goes in its directory: `hook.json`, `hook.md`, `current.json`
/// and the history chunks; nothing else a tree from another machine may hold.
fn task_file(dir: &Path, path: &str) -> Option<PathBuf> {
    let ours = matches!(path, "hook.json" | "hook.md" | current::FILE) || history::is_chunk(path);
    ours.then(|| dir.join(path))
}

/// Makes the committed `hook.json` also `hook.json.prev`, by a hard link renamed into place: its
/// content is already durable, and the write of the new `hook.json` that follows replaces the
/// name, not the file, then fsyncs the directory (covering this rename too). Runs under the lock.
fn keep_previous(path: &Path) -> Result<(), JournalError> {
    let tmp = path.with_file_name("hook.json.prev.tmp");
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| JournalError::Store(StoreError::Io { path, source })
    };
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err(&tmp)(e)),
        _ => {}
    }
    fs::hard_link(path, &tmp).map_err(io_err(&tmp))?;
    fs::rename(&tmp, path.with_file_name("hook.json.prev")).map_err(io_err(&tmp))
}

/// What the gate's check of a cached pass reads of a task: its receipts and what they are checked
/// against. Its checkpoints and steps, most of `hook.json`, are skipped, not built.
#[derive(Deserialize)]
struct HeldReceipts {
    schema: u32,
    id: String,
    state: TaskState,
    receipts: Vec<Receipt>,
    #[serde(default)]
    certificates: Vec<KeyCertificate>,
}

/// The receipts `bytes` (read from `path`) hold.
fn parse_receipts(path: &Path, bytes: &[u8]) -> Result<HeldReceipts, JournalError> {
    let held: HeldReceipts = serde_json::from_slice(bytes).map_err(corrupt(path))?;
    known_schema(path, held.schema)?;
    Ok(held)
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

fn refuse_finished(task: &Task) -> Result<(), JournalError> {
    if task.state.is_terminal() {
        return Err(JournalError::Finished {
            id: task.id.clone(),
            state: task.state,
        });
    }
    Ok(())
}

fn transition_allowed(task: &Task, event: TaskEvent) -> Result<(), JournalError> {
    state::transition(task.state, event)
        .map(|_| ())
        .map_err(|e| TaskError::from(e).into())
}

/// `n` random bytes as lowercase hex.
fn random_hex(n: usize) -> Result<String, JournalError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(checkpoint_core::hex::hex(&bytes))
}

fn new_receipt_id() -> Result<String, JournalError> {
    Ok(format!("r-{}", random_hex(6)?))
}

/// `<slug of name>-<UTC yyyymmddThhmmss>-<4 hex>`.
fn new_task_id(name: &str, now: Timestamp) -> Result<String, JournalError> {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let slug: String = slug.chars().take(40).collect();
    let stamp = now.strftime("%Y%m%dT%H%M%S");
    let id = match slug.as_str() {
        "" => format!("task-{stamp}-{}", random_hex(2)?),
        slug => format!("{slug}-{stamp}-{}", random_hex(2)?),
    };
    Ok(store::validate_id(&id)?.to_owned())
}

#[cfg(test)]
mod tests;
