//! Our refs as a store: a [`Stream`] is one ref: `refs/checkpoint/tasks/<id>` holds a task's journal (its
//! `hook.json`, with the receipts, and `hook.md`), `refs/checkpoint/sessions/<worktree>` a
//! worktree's continuity log and the file contents its checkpoints kept. Every change of that
//! state is one commit whose tree holds the state's files and whose parent is the state before,
//! so the ref only ever moves forward: pushing or fetching it is a fast-forward, and two
//! machines that both wrote it show up as a non-fast-forward instead of one losing the other's
//! work.
//!
//! The ref is the source of truth. A transaction commits first — the ref is moved by
//! compare-and-swap from the commit the transaction read — and only then rewrites the files
//! under the state directory, which are a cache of the ref marked with the commit they hold (a
//! `<file>.commit` sidecar, see [`Marker`]). Killed between the two, the cache is one commit
//! behind and is refreshed from the ref on the next read; a ref moved by someone else (a fetch,
//! another worktree of the same repository) is imported the same way. A writer that loses the
//! compare-and-swap changes nothing and says so.
//!
//! Objects are written by gitoxide in-process. No branch, index, worktree, `HEAD` or reflog is
//! touched: git keeps reflogs only for branches, remote-tracking refs and notes unless
//! `core.logAllRefUpdates` is `always`.

use std::fs;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::lock::acquire::Fail;
use gix::objs::tree::EntryKind;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use super::{NAMESPACE, objects};
use crate::git::Repo;
use crate::store::{self, StoreError};

/// The largest file a stream's tree may hold that is read back.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The most files one stream's tree is read back with.
const MAX_FILES: usize = 100_000;

/// The most bytes one import of a fetched ref writes to the cache, all its files together.
pub const MAX_IMPORT_BYTES: u64 = 256 * 1024 * 1024;

/// How long a ref's lock held by another git process is waited for.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a ref of ours could not be read or written. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Git failed to read or write it.
    #[error("{name}: cannot {what}: {message}")]
    Git {
        /// The ref.
        name: String,
        /// What was being done.
        what: &'static str,
        /// What gitoxide said.
        message: String,
    },
    /// Another writer moved the ref since it was read; this transaction changed nothing.
    #[error(
        "{0}: moved by another writer while this change was made; nothing was changed, try again"
    )]
    Moved(String),
    /// The id cannot be part of a ref name.
    #[error("{0:?} cannot be part of a ref name")]
    Name(String),
    /// A file in the ref is larger than [`MAX_FILE_BYTES`] or the tree has too many files.
    #[error("{name}: {path} is too large to read back")]
    TooLarge {
        /// The ref.
        name: String,
        /// The file in its tree.
        path: String,
    },
    /// The files to import are over [`MAX_IMPORT_BYTES`] together; nothing was imported.
    #[error(
        "{name}: {bytes} bytes to import, over the import budget of {MAX_IMPORT_BYTES}; nothing was imported"
    )]
    OverBudget {
        /// The ref.
        name: String,
        /// What its files hold together.
        bytes: u64,
    },
    /// A file named by its digest holds other content; nothing was imported.
    #[error("{name}: {path} does not match the digest it is named by; nothing was imported")]
    Mismatch {
        /// The ref.
        name: String,
        /// The file in its tree.
        path: String,
    },
}

impl From<StreamError> for StoreError {
    fn from(e: StreamError) -> StoreError {
        StoreError::Ref(e.to_string())
    }
}

/// One change a commit makes to a stream's tree: `path` (`/`-separated) gets `content`, or is
/// removed when it is `None`.
#[derive(Debug, Clone)]
pub struct Edit<'a> {
    /// The file's path in the tree.
    pub path: String,
    /// Its new content.
    pub content: Option<&'a [u8]>,
}

/// One ref of ours, opened.
pub struct Stream {
    repo: Repo,
    git: gix::Repository,
    name: FullName,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({})", self.name)
    }
}

impl Stream {
    /// The ref of task `id`.
    pub fn task(repo: &Repo, id: &str) -> Result<Stream, StreamError> {
        Stream::open(repo, &super::task_ref(id), id)
    }

    /// The ref of this worktree's continuity log: `sessions/main` for the main worktree,
    /// `sessions/wt-<name>` for a linked one.
    pub fn sessions(repo: &Repo) -> Result<Stream, StreamError> {
        let name = match repo.main_workdir() {
            None => "main".to_owned(),
            Some(_) => format!(
                "wt-{}",
                repo.git_dir
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
            ),
        };
        Stream::open(repo, &format!("{NAMESPACE}sessions/{name}"), &name)
    }

    /// The continuity log refs of every worktree, this machine's and those fetched from
    /// others: every ref under `sessions/`.
    pub fn every_session(repo: &Repo) -> Result<Vec<Stream>, StreamError> {
        let prefix = format!("{NAMESPACE}sessions/");
        let refs = super::local_refs(repo).map_err(|e| StreamError::Git {
            name: prefix.clone(),
            what: "list the refs",
            message: e.to_string(),
        })?;
        (refs.keys())
            .filter_map(|name| Some((name, name.strip_prefix(&prefix)?)))
            .map(|(name, id)| Stream::open(repo, name, id))
            .collect()
    }

    fn open(repo: &Repo, name: &str, id: &str) -> Result<Stream, StreamError> {
        let name = FullName::try_from(name).map_err(|_| StreamError::Name(id.to_owned()))?;
        let git = repo.isolated().map_err(|e| StreamError::Git {
            name: name.to_string(),
            what: "open the repository",
            message: e.to_string(),
        })?;
        Ok(Stream {
            repo: repo.clone(),
            git,
            name,
        })
    }

    /// The ref's full name.
    pub fn name(&self) -> String {
        self.name.to_string()
    }

    fn err<E: std::fmt::Display>(&self, what: &'static str) -> impl FnOnce(E) -> StreamError {
        let name = self.name();
        move |e| StreamError::Git {
            name,
            what,
            message: e.to_string(),
        }
    }

    /// The commit the ref points at; `None` when it does not exist.
    pub fn head(&self) -> Result<Option<ObjectId>, StreamError> {
        let found = (self.git)
            .try_find_reference(self.name.as_ref())
            .map_err(self.err("read the ref"))?;
        Ok(found.and_then(|r| r.try_id().map(|id| id.detach())))
    }

    /// Commits `edits` on top of `parent` (the tree of `parent`, or an empty one) and moves the
    /// ref from `parent` to the new commit — [`StreamError::Moved`] when it no longer points
    /// at `parent`. Returns the new commit.
    pub fn commit(
        &self,
        parent: Option<ObjectId>,
        edits: &[Edit<'_>],
        message: &str,
    ) -> Result<ObjectId, StreamError> {
        let writing = objects::writing(&self.repo);
        let base = match parent {
            Some(parent) => self.tree_of(parent)?,
            None => ObjectId::empty_tree(self.git.object_hash()),
        };
        let mut editor = self.git.edit_tree(base).map_err(self.err("edit a tree"))?;
        for edit in edits {
            match edit.content {
                Some(bytes) => {
                    let blob = self
                        .git
                        .write_blob(bytes)
                        .map_err(self.err("write a blob"))?;
                    editor
                        .upsert(edit.path.as_str(), EntryKind::Blob, blob)
                        .map_err(self.err("edit a tree"))?;
                }
                None => {
                    editor
                        .remove(edit.path.as_str())
                        .map_err(self.err("edit a tree"))?;
                }
            }
        }
        let tree = editor.write().map_err(self.err("write a tree"))?.detach();
        let signature = signature();
        let mut time = gix::date::parse::TimeBuf::default();
        let who = signature.to_ref(&mut time);
        let commit = (self.git)
            .new_commit_as(who, who, message, tree, parent)
            .map_err(self.err("write a commit"))?
            .id;
        self.edit(
            Change::Update {
                log: log_change(message),
                expected: expect(parent),
                new: Target::Object(commit),
            },
            parent,
            "move the ref",
        )?;
        drop(writing);
        objects::written(&self.repo, written_objects(edits));
        Ok(commit)
    }

    /// Deletes the ref if it still points at `expected`.
    pub fn delete(&self, expected: ObjectId) -> Result<(), StreamError> {
        self.edit(
            Change::Delete {
                expected: expect(Some(expected)),
                log: RefLog::AndReference,
            },
            Some(expected),
            "delete the ref",
        )
    }

    /// Applies `change` to the ref, which the caller read as `was`. Git's lock of the ref is
    /// waited for up to [`LOCK_WAIT`]; a lock that was there before and is still there,
    /// unchanged, after the whole wait was left by a writer killed while it held it (ours hold
    /// it for microseconds, under the state directory's lock) and is removed, once.
    fn edit(
        &self,
        change: Change,
        was: Option<ObjectId>,
        what: &'static str,
    ) -> Result<(), StreamError> {
        let lock = self.git.common_dir().join(format!("{}.lock", self.name));
        let found = stamp(&lock);
        let result = match self.apply(change.clone()) {
            Err(_) if found.is_some() && stamp(&lock) == found => {
                // Gone already is as good as removed.
                let _ = fs::remove_file(&lock);
                self.apply(change)
            }
            result => result,
        };
        result.map_err(|message| match self.head() {
            Ok(now) if now != was => StreamError::Moved(self.name()),
            _ => StreamError::Git {
                name: self.name(),
                what,
                message,
            },
        })
    }

    fn apply(&self, change: Change) -> Result<(), String> {
        let edit = RefEdit {
            change,
            name: self.name.clone(),
            deref: false,
        };
        let wait = Fail::AfterDurationWithBackoff(LOCK_WAIT);
        let signature = signature();
        let mut time = gix::date::parse::TimeBuf::default();
        (self.git.refs.transaction())
            .prepare([edit], wait, wait)
            .map_err(|e| e.to_string())?
            .commit(Some(signature.to_ref(&mut time)))
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, StreamError> {
        let commit = (self.git)
            .find_commit(commit)
            .map_err(self.err("read a commit"))?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(self.err("read a commit"))
    }

    /// The content of `path` in `commit`'s tree; `None` when it has no such file.
    pub fn read(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, StreamError> {
        let tree = (self.git)
            .find_tree(self.tree_of(commit)?)
            .map_err(self.err("read a tree"))?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .map_err(self.err("read a tree"))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_blob() {
            return Ok(None);
        }
        self.blob(entry.object_id(), path).map(Some)
    }

    fn blob(&self, id: ObjectId, path: &str) -> Result<Vec<u8>, StreamError> {
        let header = self.git.find_header(id).map_err(self.err("read a blob"))?;
        if header.size() > MAX_FILE_BYTES {
            return Err(StreamError::TooLarge {
                name: self.name(),
                path: path.to_owned(),
            });
        }
        let blob = self.git.find_blob(id).map_err(self.err("read a blob"))?;
        Ok(blob.data.clone())
    }

    /// Under the cache's lock: the commit the ref points at, after making the cache hold it
    /// when `marker` names another — every file of its tree that `local` maps to a file of the
    /// cache (`None`: not a file of the cache, skipped; the tree may come from another machine
    /// and hold anything) is written there atomically, then `marker` names it.
    ///
    /// Nothing is written unless all of it is sound: the files' sizes, from the object headers
    /// alone, fit [`MAX_IMPORT_BYTES`] together (a tree that names one big blob many times is
    /// refused before any is read), and each file an [`Import`] names by its digest has that
    /// content. Files are read one at a time: memory holds the largest, never the whole tree.
    pub fn sync(
        &self,
        marker: &Marker,
        local: impl Fn(&str) -> Option<Import>,
    ) -> Result<Option<ObjectId>, StoreError> {
        let head = self.head()?;
        if let Some(head) = head.filter(|&head| !marker.holds(Some(head))) {
            let mut entries = Vec::new();
            self.walk(self.tree_of(head)?, "", &mut entries)?;
            let wanted: Vec<(Import, Entry)> = (entries.into_iter())
                .filter_map(|entry| Some((local(&entry.path)?, entry)))
                .collect();
            let total = wanted
                .iter()
                .map(|(_, e)| e.size)
                .fold(0u64, u64::saturating_add);
            if total > MAX_IMPORT_BYTES {
                return Err(StreamError::OverBudget {
                    name: self.name(),
                    bytes: total,
                }
                .into());
            }
            for (import, entry) in &wanted {
                if let Some(sha256) = &import.sha256 {
                    let content = self.blob(entry.id, &entry.path)?;
                    if checkpoint_core::hex::sha256_hex(&content) != *sha256 {
                        return Err(StreamError::Mismatch {
                            name: self.name(),
                            path: entry.path.clone(),
                        }
                        .into());
                    }
                }
            }
            for (import, entry) in wanted {
                let content = self.blob(entry.id, &entry.path)?;
                store::write_atomic(&import.to, &content)?;
            }
            marker.write(head)?;
        }
        Ok(head)
    }

    /// Collects every file of `tree` (under `prefix`) with its size from the object header,
    /// reading no content; at most [`MAX_FILES`], each at most [`MAX_FILE_BYTES`].
    fn walk(&self, tree: ObjectId, prefix: &str, out: &mut Vec<Entry>) -> Result<(), StreamError> {
        let tree = self.git.find_tree(tree).map_err(self.err("read a tree"))?;
        for entry in tree.iter() {
            let entry = entry.map_err(self.err("read a tree"))?;
            let path = format!("{prefix}{}", entry.filename());
            if out.len() >= MAX_FILES {
                return Err(StreamError::TooLarge {
                    name: self.name(),
                    path,
                });
            }
            let id = entry.object_id();
            if entry.mode().is_tree() {
                self.walk(id, &format!("{path}/"), out)?;
            } else if entry.mode().is_blob() {
                let header = self.git.find_header(id).map_err(self.err("read a blob"))?;
                if header.size() > MAX_FILE_BYTES {
                    return Err(StreamError::TooLarge {
                        name: self.name(),
                        path,
                    });
                }
                out.push(Entry {
                    path,
                    id,
                    size: header.size(),
                });
            }
        }
        Ok(())
    }
}

/// Where a file of a ref's tree goes in the local cache (see [`Stream::sync`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The cache file it is written to.
    pub to: PathBuf,
    /// The SHA-256 its content must have (a file named by its digest), when it has one.
    pub sha256: Option<String>,
}

impl Import {
    /// A file imported as it is.
    pub fn to(to: PathBuf) -> Import {
        Import { to, sha256: None }
    }
}

/// A file of a ref's tree, as [`Stream::walk`] lists it.
struct Entry {
    path: String,
    id: ObjectId,
    size: u64,
}

/// About how many objects a commit of `edits` writes: its blobs, the trees on their paths
/// (the root's included) and itself.
fn written_objects(edits: &[Edit<'_>]) -> u64 {
    let blobs = edits.iter().filter(|e| e.content.is_some()).count();
    let trees: std::collections::HashSet<&str> = (edits.iter())
        .flat_map(|e| e.path.match_indices('/').map(|(i, _)| &e.path[..i]))
        .chain([""])
        .collect();
    u64::try_from(blobs + trees.len() + 1).unwrap_or(u64::MAX)
}

/// Who commits to our refs, now (never the user's identity: these are not the user's commits).
fn signature() -> gix::actor::Signature {
    gix::actor::Signature {
        name: "checkpoint".into(),
        email: "checkpoint@localhost".into(),
        time: gix::date::Time::now_utc(),
    }
}

/// What identifies the file at `path` as the same file: inode and modification time.
fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path).ok()?;
    Some((meta.ino(), meta.modified().ok()?))
}

fn expect(parent: Option<ObjectId>) -> PreviousValue {
    match parent {
        Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
        None => PreviousValue::MustNotExist,
    }
}

fn log_change(message: &str) -> LogChange {
    LogChange {
        mode: RefLog::AndReference,
        force_create_reflog: false,
        message: message.into(),
    }
}

/// The ids of the tasks that have a ref in `repo`, sorted.
pub fn task_ids(repo: &Repo) -> Result<Vec<String>, StreamError> {
    let prefix = super::task_ref("");
    let err = |what| {
        let name = prefix.clone();
        move |e: gix::Error| StreamError::Git {
            name,
            what,
            message: e.to_string(),
        }
    };
    let git = repo.isolated().map_err(|e| StreamError::Git {
        name: prefix.clone(),
        what: "open the repository",
        message: e.to_string(),
    })?;
    let refs = git.references().map_err(err("list refs"))?;
    let mut ids: Vec<String> = refs
        .prefixed(prefix.as_str())
        .map_err(err("list refs"))?
        .filter_map(Result::ok)
        .filter_map(|r| {
            let name = r.name().as_bstr().to_string();
            let id = name.strip_prefix(&prefix)?;
            (!id.contains('/')).then(|| id.to_owned())
        })
        .collect();
    ids.sort();
    Ok(ids)
}

/// The sidecar that names the commit a cached file holds: `<file>.commit`.
#[derive(Debug, Clone)]
pub struct Marker(PathBuf);

impl Marker {
    /// The marker of the cache file `path`.
    pub fn of(path: &Path) -> Marker {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".commit");
        Marker(path.with_file_name(name))
    }

    /// The commit it names; `None` when it is missing or unreadable (the cache is then treated
    /// as not holding the ref's state).
    pub fn read(&self) -> Option<ObjectId> {
        let text = fs::read_to_string(&self.0).ok()?;
        ObjectId::from_hex(text.trim().as_bytes()).ok()
    }

    /// Names `commit`, after the cache's files were written. Its directory entry is not
    /// synced: a marker lost in a crash only makes the next read import the ref again.
    pub fn write(&self, commit: ObjectId) -> Result<(), StoreError> {
        store::write_atomic_unsynced_dir(&self.0, format!("{commit}\n").as_bytes()).map(drop)
    }

    /// Whether the cache holds what `head` says — the ref is missing (nothing to import) or
    /// the marker names it.
    pub fn holds(&self, head: Option<ObjectId>) -> bool {
        head.is_none_or(|head| self.read() == Some(head))
    }
}

#[cfg(test)]
mod tests;
