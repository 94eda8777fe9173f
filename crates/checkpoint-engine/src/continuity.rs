//! Session continuity: checkpoints of agent sessions, progress entries and restart counts, kept
//! per project so that a fresh session (after `/clear`, compaction, a crash or a context limit)
//! can go on where the last one stopped.
//!
//! The log is one JSON file, `<state dir>/continuity/log.json`, changed in locked transactions
//! (see [`crate::store`]). File contents a checkpoint saw are kept in a content-addressed blob
//! store beside it, so `checkpoint diff` can count changed lines since then. The gate saves
//! checkpoints (context thresholds, compaction, session end, every allowed stop) and injects the
//! latest one at session start; [`text`] renders what the agent reads. Entries are signed by
//! this user's key, and only those are resumed from ([`signed`]).

pub mod diff;
pub mod record;
pub mod restore;
pub mod signed;
pub mod text;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use gix::ObjectId;
use jiff::Timestamp;

use crate::file_content::FileContent;
use crate::git::Repo;
use crate::store::{self, StoreError};
use crate::travel::stream::{Edit, Import, Marker, Stream};
use checkpoint_core::changes::{ChangeKind, ChangeSet};
use checkpoint_core::hex::unhex;
use checkpoint_core::journal::{KeyCertificate, MasterKey, Receipt, Trigger};

pub use record::{
    ContextMark, ContinuityLog, FileMode, FileState, ProgressEntry, ProgressSource, RestartCount,
    SessionCheckpoint, SessionRef, TaskMark, ThreadKey,
};
pub use signed::{KeySource, ResumePoint, Signed};

/// Largest file whose content is kept for `checkpoint diff`; bigger files are only hashed.
pub const MAX_BLOB_BYTES: u64 = 1024 * 1024;

/// Where a cached log that does not parse is kept, beside the log (the last one only).
pub const CORRUPT_LOG: &str = "log.json.corrupt";
/// Beside [`CORRUPT_LOG`] once the user was told of it (see [`Continuity::untold_corrupt_log`]).
const CORRUPT_LOG_TOLD: &str = "log.json.corrupt.told";
/// Progress entries of a thread a checkpoint keeps (a restart context shows them all, see
/// [`text::resume_context`]).
pub const SHOWN_PROGRESS: usize = 10;

/// The continuity log of every worktree, as its ref holds it (see [`Stream::every_session`]):
/// `verify` reads the receipts of gate runs without a task there. A log that cannot be read or
/// does not parse (it may come from anywhere) is skipped.
pub fn logs_of_every_worktree(repo: &Repo) -> Result<Vec<ContinuityLog>, StoreError> {
    let mut logs = Vec::new();
    for stream in Stream::every_session(repo)? {
        let Some(head) = stream.head()? else {
            continue;
        };
        let Ok(Some(bytes)) = stream.read(head, "log.json") else {
            continue;
        };
        logs.extend(serde_json::from_slice::<ContinuityLog>(&bytes).ok());
    }
    Ok(logs)
}

/// The continuity log of one project.
#[derive(Debug, Clone)]
pub struct Continuity {
    dir: PathBuf,
    repo: Option<Repo>,
    keys: Option<Arc<dyn KeySource>>,
    /// The master key, read once (see [`Continuity::signed_with`]).
    master: Arc<OnceLock<Option<MasterKey>>>,
}

impl Continuity {
    /// The log kept under `<state_dir>/continuity/`, on this machine only.
    pub fn new(state_dir: &Path) -> Continuity {
        Continuity {
            dir: state_dir.join("continuity"),
            repo: None,
            keys: None,
            master: Arc::default(),
        }
    }

    /// The same log, committed to the worktree's ref in `repo` (see [`crate::travel`]) — the
    /// source of truth, which `<state_dir>/continuity/` caches.
    pub fn in_repo(self, repo: Option<Repo>) -> Continuity {
        Continuity { repo, ..self }
    }

    /// The log's file: checkpoints, progress entries and restart counts, as JSON.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("log.json")
    }

    fn blob_dir(&self) -> PathBuf {
        self.dir.join("blobs")
    }

    /// The whole log (empty when nothing was saved yet), after importing its ref's latest
    /// commit when the cache does not hold it.
    pub fn load(&self) -> Result<ContinuityLog, StoreError> {
        let path = self.log_path();
        if let Some(stream) = self.stream()?
            && !Marker::of(&path).holds(stream.head()?)
        {
            let _lock = store::Lock::acquire(&path)?;
            self.synced(&stream)?;
        }
        match store::read_json(&path) {
            Err(StoreError::Corrupt { .. }) => {
                let _lock = store::Lock::acquire(&path)?;
                self.read_log()
            }
            read => Ok(read?.unwrap_or_default()),
        }
    }

    /// The cached log, under its lock; one that does not parse (a crafted `log.json` fetched
    /// from a remote, a torn file) is moved to [`CORRUPT_LOG`] beside it, kept for inspection,
    /// and the log starts over empty: continuity goes on instead of failing every save.
    fn read_log(&self) -> Result<ContinuityLog, StoreError> {
        let path = self.log_path();
        match store::read_json(&path) {
            Err(StoreError::Corrupt { .. }) => {
                let aside = self.dir.join(CORRUPT_LOG);
                // Another log is set aside: the user is told of it.
                let _ = fs::remove_file(self.dir.join(CORRUPT_LOG_TOLD));
                fs::rename(&path, &aside).map_err(|source| StoreError::Io {
                    path: aside,
                    source,
                })?;
                Ok(ContinuityLog::default())
            }
            read => Ok(read?.unwrap_or_default()),
        }
    }

    /// The log last set aside as [`CORRUPT_LOG`], the first time this is asked since it was set
    /// aside (it records that the user was told); `None` after that, and when none was.
    pub fn untold_corrupt_log(&self) -> Option<PathBuf> {
        let aside = self.dir.join(CORRUPT_LOG);
        if !aside.exists() {
            return None;
        }
        // Created once: of two callers at once, one tells.
        (fs::OpenOptions::new().write(true).create_new(true))
            .open(self.dir.join(CORRUPT_LOG_TOLD))
            .ok()?;
        Some(aside)
    }

    /// The commit the log's ref points at: any checkpoint or progress saved in this worktree
    /// moves it. `None` outside git or before the first save.
    pub fn head(&self) -> Result<Option<ObjectId>, StoreError> {
        Ok(self.stream()?.map(|s| s.head()).transpose()?.flatten())
    }

    fn stream(&self) -> Result<Option<Stream>, StoreError> {
        Ok(self.repo.as_ref().map(Stream::sessions).transpose()?)
    }

    /// Under the log's lock: the commit the ref points at, imported into the cache when it
    /// does not hold it.
    fn synced(&self, stream: &Stream) -> Result<Option<ObjectId>, StoreError> {
        stream.sync(&Marker::of(&self.log_path()), |path| self.cache_file(path))
    }

    /// Where a file of the ref goes in the cache: `log.json`, and `blobs/<2 hex>/<62 hex>` as
    /// `blobs/<64 hex>`; nothing else a tree from another machine may hold.
    /// A kept content must hash to its name.
    fn cache_file(&self, path: &str) -> Option<Import> {
        if path == "log.json" {
            return Some(Import::to(self.log_path()));
        }
        let (fan, rest) = path.strip_prefix("blobs/")?.split_once('/')?;
        let sha = format!("{fan}{rest}").to_ascii_lowercase();
        (fan.len() == 2 && is_digest(&sha)).then(|| Import {
            to: self.blob_dir().join(&sha),
            sha256: Some(sha),
        })
    }

    /// Changes the log in one locked transaction: committed to the ref first (with the kept
    /// contents it starts or stops referring to), then written to the cache.
    fn update<R>(&self, f: impl FnOnce(&mut ContinuityLog) -> R) -> Result<R, StoreError> {
        let path = self.log_path();
        let _lock = store::Lock::acquire(&path)?;
        let stream = self.stream()?;
        let head = stream.as_ref().map(|s| self.synced(s)).transpose()?;
        let old = self.read_log()?;
        let mut log = old.clone();
        let result = f(&mut log);
        if log == old {
            return Ok(result);
        }
        let json = store::json_bytes(&path, &log)?;
        let committed = match (stream, head) {
            (Some(stream), Some(head)) => Some(self.commit(&stream, head, &old, &log, &json)?),
            _ => None,
        };
        store::write_atomic(&path, &json)?;
        if let Some(commit) = committed {
            Marker::of(&path).write(commit)?;
        }
        Ok(result)
    }

    /// Commits `log` (serialized as `json`) over `old` to the ref: `log.json`, plus the kept
    /// contents `log` refers to and `old` did not, minus those only `old` referred to. A kept
    /// content already pruned from the cache is left out (restore then says it was not kept).
    fn commit(
        &self,
        stream: &Stream,
        head: Option<ObjectId>,
        old: &ContinuityLog,
        log: &ContinuityLog,
        json: &[u8],
    ) -> Result<ObjectId, StoreError> {
        let (was, now) = (kept_blobs(old), kept_blobs(log));
        let added: Vec<(&str, Vec<u8>)> = (now.difference(&was))
            .filter_map(|sha| Some((*sha, fs::read(self.blob_dir().join(sha)).ok()?)))
            .collect();
        let mut edits = vec![Edit {
            path: "log.json".to_owned(),
            content: Some(json),
        }];
        edits.extend(added.iter().map(|(sha, bytes)| Edit {
            path: blob_path(sha),
            content: Some(bytes),
        }));
        edits.extend(was.difference(&now).map(|sha| Edit {
            path: blob_path(sha),
            content: None,
        }));
        let message = format!("continuity: checkpoint {}", log.next_id.saturating_sub(1));
        Ok(stream.commit(head, &edits, &message)?)
    }

    /// Saves `draft` as a new checkpoint, signed by this user's key when one is usable: it gets
    /// the next id and the thread's latest progress entries; the oldest checkpoints beyond
    /// [`record::MAX_CHECKPOINTS`] are pruned, with the blobs only they used. A draft that says
    /// nothing new — the latest checkpoint is of the same session, trigger and state, and signed
    /// alike — is not saved again; that checkpoint is returned.
    pub fn save(&self, mut draft: SessionCheckpoint) -> Result<SessionCheckpoint, StoreError> {
        let signer = self.signer();
        let saved = self.update(|log| {
            let thread = ThreadKey(draft.task.as_ref().map(|t| t.id.clone()));
            let mut progress = thread_progress(log, &thread);
            draft.progress = progress.split_off(progress.len().saturating_sub(SHOWN_PROGRESS));
            if let Some(last) =
                (log.checkpoints.last()).filter(|last| repeats(last, &draft, signer))
            {
                return (last.clone(), false);
            }
            draft.id = log.next_id;
            if let Some(key) = signer {
                draft.sign(key);
            }
            log.next_id += 1;
            log.checkpoints.push(draft.clone());
            let excess = log
                .checkpoints
                .len()
                .saturating_sub(record::MAX_CHECKPOINTS);
            log.checkpoints.drain(..excess);
            (draft, excess > 0)
        })?;
        let (checkpoint, pruned) = saved;
        if pruned {
            self.prune_blobs()?;
        }
        Ok(checkpoint)
    }

    /// Appends a progress entry, signed by this user's key when one is usable; the oldest beyond
    /// [`record::MAX_PROGRESS`] are dropped.
    pub fn log_progress(&self, mut entry: ProgressEntry) -> Result<(), StoreError> {
        if let Some(key) = self.signer() {
            entry.sign(key);
        }
        self.update(|log| {
            log.progress.push(entry);
            let excess = log.progress.len().saturating_sub(record::MAX_PROGRESS);
            log.progress.drain(..excess);
        })
    }

    /// Keeps `receipt`, of a gate run while no task was active, with the `certificate` of the
    /// key that signed it; the oldest beyond [`record::MAX_RECEIPTS`] are dropped, and with them
    /// the certificates no kept receipt needs.
    pub fn add_receipt(
        &self,
        receipt: Receipt,
        certificate: Option<KeyCertificate>,
    ) -> Result<(), StoreError> {
        self.update(|log| {
            log.receipts.push(receipt);
            let excess = log.receipts.len().saturating_sub(record::MAX_RECEIPTS);
            log.receipts.drain(..excess);
            if let Some(certificate) = certificate
                && !log.certificates.contains(&certificate)
            {
                log.certificates.push(certificate);
            }
            let used: BTreeSet<Option<[u8; 32]>> = (log.receipts.iter())
                .map(|r| r.public_key.as_deref().and_then(unhex::<32>))
                .collect();
            log.certificates
                .retain(|c| used.contains(&unhex::<32>(&c.task_key)));
        })
    }

    /// The checkpoint to resume from: the latest of `session` when it has one (a resumed
    /// session), else the project's latest.
    pub fn latest(
        &self,
        session: Option<&SessionRef>,
    ) -> Result<Option<SessionCheckpoint>, StoreError> {
        let log = self.load()?;
        let of_session = session.and_then(|s| {
            log.checkpoints
                .iter()
                .rev()
                .find(|c| c.session == *s)
                .cloned()
        });
        Ok(of_session.or_else(|| log.checkpoints.last().cloned()))
    }

    /// Whether `session` saved a `trigger` checkpoint less than `within` before `now`.
    pub fn saved_recently(
        &self,
        session: &SessionRef,
        trigger: Trigger,
        now: Timestamp,
        within: Duration,
    ) -> Result<bool, StoreError> {
        let within = i64::try_from(within.as_millis()).unwrap_or(i64::MAX);
        Ok(self.load()?.checkpoints.iter().rev().any(|c| {
            c.session == *session
                && c.trigger == trigger
                && now.as_millisecond().saturating_sub(c.at.as_millisecond()) < within
        }))
    }

    /// Counts a resume of `thread` from `from`: attempt 1 when this user logged progress or the
    /// work changed since the last resume, else one more than last time.
    pub fn count_restart(
        &self,
        thread: &ThreadKey,
        from: &SessionCheckpoint,
        now: Timestamp,
    ) -> Result<u32, StoreError> {
        let state = from.state_digest();
        // Only this user's own progress counts: an entry fetched from elsewhere does not make
        // a thread that goes in circles look as if it moved.
        let trusted = self.own_keys();
        self.update(|log| {
            let previous = log.restarts.get(thread.as_str());
            let stuck = previous.is_some_and(|last| {
                last.state == state
                    && !log.progress.iter().any(|p| {
                        ThreadKey(p.task.clone()) == *thread
                            && p.at > last.at
                            && p.signed_by(&trusted)
                    })
            });
            let count = match previous {
                Some(last) if stuck => last.count + 1,
                _ => 1,
            };
            log.restarts.insert(
                thread.as_str().to_owned(),
                RestartCount {
                    count,
                    at: now,
                    state,
                },
            );
            count
        })
    }

    /// Every progress entry of `thread` the log keeps that this user's own key signed (see
    /// [`Continuity::own_keys`]), oldest first.
    pub fn progress(&self, thread: &ThreadKey) -> Result<Vec<ProgressEntry>, StoreError> {
        let trusted = self.own_keys();
        let mut progress = thread_progress(&self.load()?, thread);
        progress.retain(|p| p.signed_by(&trusted));
        Ok(progress)
    }

    /// Records the state of every changed file (at most [`record::MAX_FILES`]), keeping the
    /// content of small files in the blob store. Returns the states and how many files were
    /// left out.
    pub fn capture(
        &self,
        workdir: &Path,
        changes: &ChangeSet,
    ) -> Result<(Vec<FileState>, usize), StoreError> {
        let more = changes.changes.len().saturating_sub(record::MAX_FILES);
        let mut kept = false;
        let files = changes
            .changes
            .iter()
            .take(record::MAX_FILES)
            .map(|change| {
                let (sha256, mode) = match change.kind {
                    ChangeKind::Deleted => (None, None),
                    _ => self.keep(&workdir.join(&change.path), &mut kept)?,
                };
                Ok(FileState {
                    path: change.path.clone(),
                    kind: change.kind,
                    sha256,
                    mode,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        // Each blob's content was synced as it was written; their names are, once, here —
        // before the checkpoint that refers to them is written.
        if kept {
            store::sync_dir(&self.blob_dir())?;
        }
        Ok((files, more))
    }

    /// Names what is at `path` by a digest and keeps its content when small (a symbolic link's
    /// content is its target, never what it points to), with the kind of file it is; `None`
    /// when it is neither a regular file nor a link. Sets `kept` when it wrote a blob, whose
    /// name the caller makes durable.
    fn keep(
        &self,
        path: &Path,
        kept: &mut bool,
    ) -> Result<(Option<String>, Option<FileMode>), StoreError> {
        let content = FileContent::read(path, MAX_BLOB_BYTES);
        let Some(sha) = content.id() else {
            return Ok((None, None));
        };
        let (bytes, mode) = match &content {
            FileContent::File {
                bytes, executable, ..
            } => (
                bytes.as_deref(),
                if *executable {
                    FileMode::Executable
                } else {
                    FileMode::Regular
                },
            ),
            FileContent::Link(target) => (Some(target.as_slice()), FileMode::Link),
            FileContent::Missing | FileContent::Other => return Ok((None, None)),
        };
        let blob = self.blob_dir().join(&sha);
        if let Some(bytes) = bytes
            && !blob.exists()
        {
            store::write_atomic_unsynced_dir(&blob, bytes)?;
            *kept = true;
        }
        Ok((Some(sha), Some(mode)))
    }

    /// The content a checkpoint kept for `sha256`, if it was small enough to keep.
    pub fn blob(&self, sha256: &str) -> Option<Vec<u8>> {
        store::validate_id(sha256).ok()?;
        fs::read(self.blob_dir().join(sha256)).ok()
    }

    /// Removes blobs no kept checkpoint refers to.
    fn prune_blobs(&self) -> Result<(), StoreError> {
        let log = self.load()?;
        let used = kept_blobs(&log);
        let Ok(entries) = fs::read_dir(self.blob_dir()) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_str().is_some_and(|n| used.contains(n)) {
                // Another process may have removed it already; nothing depends on it.
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}

/// The digests of the contents `log`'s checkpoints kept (a log from another machine may name
/// anything: only SHA-256 digests count).
fn kept_blobs(log: &ContinuityLog) -> BTreeSet<&str> {
    (log.checkpoints.iter())
        .flat_map(|c| c.files.iter().filter_map(|f| f.sha256.as_deref()))
        .filter(|sha| is_digest(sha))
        .collect()
}

/// Whether `s` is a SHA-256 digest in hex.
fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Where the content with digest `sha` is in the ref's tree: fanned out by its first two hex
/// digits, so that a commit rewrites small trees.
fn blob_path(sha: &str) -> String {
    format!("blobs/{}/{}", &sha[..2], &sha[2..])
}

/// Whether `draft` only repeats `last`: everything but the id, the time and the signature is the
/// same, and `last` is signed by `signer` (unsigned without one).
fn repeats(
    last: &SessionCheckpoint,
    draft: &SessionCheckpoint,
    signer: Option<&MasterKey>,
) -> bool {
    let same = SessionCheckpoint {
        id: last.id,
        at: last.at,
        signature: last.signature.clone(),
        ..draft.clone()
    } == *last;
    same && match signer {
        Some(key) => last.signed_by(&signed::trusting(key)),
        None => last.signature.is_none(),
    }
}

fn thread_progress(log: &ContinuityLog, thread: &ThreadKey) -> Vec<ProgressEntry> {
    (log.progress.iter())
        .filter(|p| ThreadKey(p.task.clone()) == *thread)
        .cloned()
        .collect()
}

#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod tests;
