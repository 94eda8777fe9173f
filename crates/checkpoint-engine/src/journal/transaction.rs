//! A transaction on one task: under its lock, synced with its ref, read, changed, committed,
//! then written to its directory — `hook.json` (the version it replaces kept as
//! `hook.json.prev`), the history chunks, `current.json` and `hook.md`, regenerated.

use std::fs;
use std::io;
use std::path::Path;

use super::{Active, Journal, JournalError, Synced, Written, history, parse_task};
use crate::store::{self, StoreError};
use crate::travel::stream::{Edit, Import, Marker, Stream};
use checkpoint_core::journal::{Current, Task, current, markdown, task};

impl Journal {
    /// The ref task `id` travels in; `None` without a repository.
    pub(super) fn stream(&self, id: &str) -> Result<Option<Stream>, JournalError> {
        let Some(repo) = &self.repo else {
            return Ok(None);
        };
        Ok(Some(Stream::task(repo, store::validate_id(id)?)?))
    }

    /// Under task `id`'s lock: the commit its ref points at, imported into the task directory
    /// when the directory does not hold it.
    pub(super) fn synced(&self, id: &str, stream: Stream) -> Result<Synced, JournalError> {
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
    pub(super) fn write_task(
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
}

/// Where a file of a task's ref goes in its directory: `hook.json`, `hook.md`, `current.json`
/// and the history chunks; nothing else a tree from another machine may hold.
fn task_file(dir: &Path, path: &str) -> Option<Import> {
    let ours = matches!(path, "hook.json" | "hook.md" | current::FILE) || history::is_chunk(path);
    ours.then(|| Import::to(dir.join(path)))
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
