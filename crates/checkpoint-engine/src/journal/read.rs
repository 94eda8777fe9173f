//! Reading tasks: a task as its ref and its directory hold it, its [`Current`] record, its
//! history, and the ids of all.

use std::fs;
use std::io;
use std::path::PathBuf;

use super::{Journal, JournalError, history, parse_task};
use crate::store::{self, StoreError};
use crate::travel::stream::{self, Marker};
use checkpoint_core::journal::{Current, HistoryEntry, Task, current, task};

impl Journal {
    /// Task `id` as stored: its ref's latest commit, imported into the task directory first
    /// when that does not hold it yet (fetched from elsewhere, or a writer killed between
    /// committing and rewriting the directory).
    pub fn load(&self, id: &str) -> Result<Task, JournalError> {
        self.sync_behind(id)?;
        self.read_task(id)
    }

    /// Imports task `id`'s ref into its directory when the directory does not hold its latest
    /// commit.
    pub(super) fn sync_behind(&self, id: &str) -> Result<(), JournalError> {
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
    pub(super) fn read_task(&self, id: &str) -> Result<Task, JournalError> {
        let (path, bytes) = self.task_bytes(id)?;
        parse_task(&path, &bytes)
    }

    /// `hook.json` of task `id`, and its content.
    pub(super) fn task_bytes(&self, id: &str) -> Result<(PathBuf, Vec<u8>), JournalError> {
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
}
