//! Durable small files: atomic replace with fsync, transactions under a sidecar lock, and the ids
//! that may become file names.
//!
//! Every write goes to a temporary file in the same directory, is fsynced, renamed over the target
//! and the directory is fsynced, so a reader sees either the old or the new content, never a mix,
//! even after a crash. Read-modify-write cycles hold an exclusive `flock` on `<file>.lock` (never
//! on the file that gets renamed over), waiting at most [`LOCK_TIMEOUT`] for it: a lock held by a
//! stuck process is an error the hooks fail open on, never a hang.
//!
//! Temporary files are named `.checkpoint-tmp-*` ([`TEMP_PREFIX`]). A writer killed between
//! creating one and renaming it leaves it behind. A write never lists its directory to look for
//! such leftovers (a directory of 10,000 session files would cost every write a listing of
//! 20,000 entries): [`sweep_temp_files`] removes ours that are older than [`TEMP_MAX_AGE`]
//! (younger ones may belong to a concurrent writer), run rarely — over the state directory at a
//! session start at most daily and by `checkpoint cleanup` (see `Project::housekeep`), and by the
//! user's commands that write outside it ([`write_atomic_sweeping`], `checkpoint restore`).

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A storage failure, with the file it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading, writing, locking or syncing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The file exists but is not valid JSON of the expected shape.
    #[error("{}: corrupt state file: {source}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What serde said.
        source: serde_json::Error,
    },
    /// Another process held the lock for longer than the wait allows.
    #[error("{}: still locked by another process after {} ms; gave up", path.display(), waited.as_millis())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long it was waited for.
        waited: Duration,
    },
    /// A ref of ours (see [`crate::travel`]) could not be read or moved.
    #[error("{0}")]
    Ref(String),
    /// An id that would reach a path is unsafe.
    #[error("invalid id {0:?}: ids may not be empty, contain `/`, `\\` or NUL, or be `.`/`..`")]
    InvalidId(String),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Checks that `id` can be used as one path component: not empty, no separators, no NUL, not
/// `.` or `..`, at most 128 bytes.
pub fn validate_id(id: &str) -> Result<&str, StoreError> {
    let bad = id.is_empty()
        || id.len() > 128
        || id == "."
        || id == ".."
        || id.chars().any(|c| matches!(c, '/' | '\\' | '\0'));
    if bad {
        Err(StoreError::InvalidId(id.to_owned()))
    } else {
        Ok(id)
    }
}

/// The name prefix of the temporary files [`temp_file_in`] creates.
pub const TEMP_PREFIX: &str = ".checkpoint-tmp-";

/// How old a leftover temporary file of ours must be before [`temp_file_in`] removes it. A write
/// takes milliseconds and touches its file as it goes; one not modified for this long belongs to a
/// writer that was killed.
pub const TEMP_MAX_AGE: Duration = Duration::from_secs(60);

/// Creates a temporary file (mode 0600) in `dir` for a write that is renamed into place. The
/// directory is not listed: leftovers of interrupted writes are [`sweep_temp_files`]'s.
pub fn temp_file_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
}

/// Removes the leftovers of interrupted writes in `dir`: regular files named [`TEMP_PREFIX`]`*`
/// not modified for [`TEMP_MAX_AGE`]. Other files are never touched; failing to remove one (or
/// to list `dir`) is not an error (the next sweep tries again). Returns how many were removed.
pub fn sweep_temp_files(dir: &Path) -> usize {
    sweep(dir, false)
}

/// [`sweep_temp_files`] in `root` and every directory under it (symbolic links are not
/// followed). Returns how many files were removed.
pub fn sweep_temp_files_under(root: &Path) -> usize {
    sweep(root, true)
}

fn sweep(dir: &Path, recurse: bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        // `DirEntry::file_type` and `DirEntry::metadata` do not follow symlinks: only our
        // regular files qualify, only real directories are entered.
        if recurse && entry.file_type().is_ok_and(|t| t.is_dir()) {
            removed += sweep(&entry.path(), true);
            continue;
        }
        if !entry
            .file_name()
            .as_encoded_bytes()
            .starts_with(TEMP_PREFIX.as_bytes())
        {
            continue;
        }
        let stale = entry.metadata().is_ok_and(|m| {
            m.is_file()
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= TEMP_MAX_AGE)
        });
        if stale && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Replaces `path` with `bytes` atomically and durably, creating parent directories. The file
/// is readable by its owner only (mode 0600).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = write_unsynced_dir(path, bytes, None)?;
    sync_dir(dir)
}

/// [`write_atomic`] for a file a user's command writes outside the state directory (a config
/// file, a git hook): the leftovers of interrupted writes in its directory are swept first
/// ([`sweep_temp_files`]), since no housekeeping visits it.
pub fn write_atomic_sweeping(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    sweep_temp_files(path.parent().unwrap_or(Path::new(".")));
    write_atomic(path, bytes)
}

/// [`write_atomic`], with the file's permission bits set to `mode` (for a file of the user's
/// worktree, which `checkpoint restore` writes).
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), StoreError> {
    let dir = write_unsynced_dir(path, bytes, Some(mode))?;
    sync_dir(dir)
}

/// [`write_atomic`] without the directory's fsync: the content is durable, the new name only
/// once [`sync_dir`] has run on the directory this returns. For a batch of files written into
/// one directory (one fsync per file, one for the directory), which the caller makes durable
/// before anything that refers to them.
pub fn write_atomic_unsynced_dir<'a>(path: &'a Path, bytes: &[u8]) -> Result<&'a Path, StoreError> {
    write_unsynced_dir(path, bytes, None)
}

fn write_unsynced_dir<'a>(
    path: &'a Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<&'a Path, StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut tmp = temp_file_in(dir).map_err(io_err(dir))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    if let Some(mode) = mode {
        (tmp.as_file())
            .set_permissions(fs::Permissions::from_mode(mode))
            .map_err(io_err(path))?;
    }
    tmp.as_file().sync_all().map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: e.error,
    })?;
    Ok(dir)
}

/// Replaces `path` with a symbolic link to `target`, atomically (the link is made under a
/// temporary name beside it and renamed into place) and durably.
pub fn link_atomic(path: &Path, target: &Path) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .make_in(dir, |name| std::os::unix::fs::symlink(target, name))
        .map_err(io_err(dir))?;
    let (_, name) = tmp.keep().map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: e.error,
    })?;
    if let Err(source) = fs::rename(&name, path) {
        let _ = fs::remove_file(&name);
        return Err(StoreError::Io {
            path: path.to_owned(),
            source,
        });
    }
    sync_dir(dir)
}

/// Makes the names in `dir` durable (fsync of the directory).
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

/// Reads a JSON file; `Ok(None)` when it does not exist.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| StoreError::Corrupt {
                    path: path.to_owned(),
                    source,
                })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Writes `value` as pretty JSON with [`write_atomic`].
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    write_atomic(path, &json_bytes(path, value)?)
}

/// `value` as the pretty JSON, ending in a newline, that [`write_json`] writes to `path` (named
/// in the error).
pub fn json_bytes<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, StoreError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StoreError::Corrupt {
        path: path.to_owned(),
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// How long [`Lock::acquire`] waits for a lock another process holds. One transaction takes
/// milliseconds, but 64 processes queued on one lock on a loaded 2-core machine took more than
/// 3 s in all; this is far below the agents' Stop budgets (10–30 min) and bounds a lock held by a
/// stuck process. (A `SessionEnd` hook with a shorter budget is killed first, which also fails
/// open.)
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(15);

/// Holds the exclusive lock on `<path>.lock` until dropped.
#[derive(Debug)]
pub struct Lock {
    file: File,
}

impl Lock {
    /// Takes the sidecar lock of `path`, waiting at most [`LOCK_TIMEOUT`].
    pub fn acquire(path: &Path) -> Result<Lock, StoreError> {
        Lock::acquire_within(path, LOCK_TIMEOUT)
    }

    /// Takes the sidecar lock of `path`, waiting at most `timeout`; then
    /// [`StoreError::LockTimeout`].
    pub fn acquire_within(path: &Path, timeout: Duration) -> Result<Lock, StoreError> {
        let lock_path = sidecar(path);
        let started = Instant::now();
        loop {
            let lock = Lock::acquire_file(&lock_path, timeout.saturating_sub(started.elapsed()))?;
            // [`remove_json`] unlinks the lock file while holding it: a lock taken on the
            // unlinked file guards nothing, so take the one now at that path.
            if lock.is_at(&lock_path) {
                return Ok(lock);
            }
        }
    }

    /// Whether the locked file is (still) the one named `lock_path`.
    fn is_at(&self, lock_path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), fs::metadata(lock_path)) {
            (Ok(held), Ok(named)) => (held.dev(), held.ino()) == (named.dev(), named.ino()),
            _ => false,
        }
    }

    /// Takes the lock of the file `lock_path` as it is now, waiting at most `timeout`.
    fn acquire_file(lock_path: &Path, timeout: Duration) -> Result<Lock, StoreError> {
        let lock_path = lock_path.to_owned();
        if let Some(dir) = lock_path.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        // A free lock (the usual case: hooks run one at a time) is taken at once, with no thread.
        match file.try_lock() {
            Ok(()) => return Ok(Lock { file }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(io_err(&lock_path)(e)),
        }
        // Else a blocking `flock` on a thread of its own: waiters are served in the kernel's
        // order (polling `try_lock` starves some of 64 concurrent writers), and the wait is
        // bounded. After a timeout the thread still takes the lock when it frees, and drops it
        // at once.
        let started = Instant::now();
        let (sender, receiver) = mpsc::channel();
        thread::Builder::new()
            .name("lock".to_owned())
            .spawn(move || {
                let _ = sender.send(file.lock().map(|()| file));
            })
            .map_err(io_err(&lock_path))?;
        match receiver.recv_timeout(timeout) {
            Ok(Ok(file)) => Ok(Lock { file }),
            Ok(Err(e)) => Err(io_err(&lock_path)(e)),
            Err(_) => Err(StoreError::LockTimeout {
                path: lock_path,
                waited: started.elapsed(),
            }),
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Closing the descriptor releases the flock as well; unlocking first is explicit.
        let _ = self.file.unlock();
    }
}

fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Under the file's sidecar lock, deletes the JSON file at `path` when `unused` says its value
/// holds nothing, and then the lock file too (a writer that was waiting on it takes the lock
/// afresh, see [`Lock::acquire_within`]); whether it deleted. A missing file counts as deleted.
pub fn remove_json<T>(path: &Path, unused: impl FnOnce(&T) -> bool) -> Result<bool, StoreError>
where
    T: DeserializeOwned,
{
    let lock = Lock::acquire(path)?;
    if let Some(value) = read_json::<T>(path)? {
        if !unused(&value) {
            return Ok(false);
        }
        fs::remove_file(path).map_err(io_err(path))?;
    }
    let lock_path = sidecar(path);
    fs::remove_file(&lock_path).map_err(io_err(&lock_path))?;
    drop(lock);
    Ok(true)
}

/// The directories on the way to `dir` (itself included) that do not exist yet, outermost first:
/// what creating `dir` would create.
pub fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = (dir.ancestors())
        .take_while(|d| !d.as_os_str().is_empty() && fs::symlink_metadata(d).is_err())
        .map(Path::to_owned)
        .collect();
    missing.reverse();
    missing
}

/// One read-modify-write transaction on a JSON file under its sidecar lock. A missing file starts
/// from `T::default()`; `f`'s result is returned after the new value is durably written. A value
/// that `f` left as it was is not written again (hooks run on every tool call; an fsync each time
/// would be most of their cost).
pub fn update_json<T, R>(path: &Path, f: impl FnOnce(&mut T) -> R) -> Result<R, StoreError>
where
    T: Serialize + DeserializeOwned + Default,
{
    let _lock = Lock::acquire(path)?;
    let before = match fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(path)(e)),
    };
    let mut value = match &before {
        Some(bytes) => serde_json::from_slice(bytes).map_err(|source| StoreError::Corrupt {
            path: path.to_owned(),
            source,
        })?,
        None => T::default(),
    };
    let result = f(&mut value);
    let after = json_bytes(path, &value)?;
    if before.as_deref() != Some(after.as_slice()) {
        write_atomic(path, &after)?;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_json_deletes_an_unused_file_and_its_lock_and_a_later_update_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        update_json(&path, |v: &mut Vec<u32>| v.push(1)).unwrap();
        assert!(!remove_json(&path, Vec::<u32>::is_empty).unwrap());
        assert!(path.exists());
        update_json(&path, Vec::<u32>::clear).unwrap();
        assert!(remove_json(&path, Vec::<u32>::is_empty).unwrap());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        update_json(&path, |v: &mut Vec<u32>| v.push(2)).unwrap();
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), Some(vec![2]));
    }

    #[test]
    fn missing_dirs_are_the_ones_creating_a_directory_would_create() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        fs::create_dir(dir.path().join("a")).unwrap();
        assert_eq!(
            missing_dirs(&deep),
            [dir.path().join("a/b"), dir.path().join("a/b/c")]
        );
        assert_eq!(missing_dirs(dir.path()), Vec::<PathBuf>::new());
    }

    #[test]
    fn an_update_that_changes_nothing_writes_nothing() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        update_json(&path, |v: &mut Vec<u32>| v.push(1)).unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        update_json(&path, |v: &mut Vec<u32>| v.len()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode, "not replaced");
        update_json(&path, |v: &mut Vec<u32>| v.push(2)).unwrap();
        assert_ne!(fs::metadata(&path).unwrap().ino(), inode, "replaced");
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), Some(vec![1, 2]));
    }

    /// A lock another process holds (and never lets go of) is given up on after the timeout.
    #[test]
    fn a_lock_held_by_another_process_times_out() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let lock_path = sidecar(&path);
        let ready = dir.path().join("ready");
        let mut holder = std::process::Command::new("flock")
            .arg(&lock_path)
            .process_group(0)
            .args(["sh", "-c", "touch \"$0\"; sleep 300"])
            .arg(&ready)
            .spawn()
            .unwrap();
        while !ready.exists() {
            thread::sleep(Duration::from_millis(5));
        }
        let started = Instant::now();
        let err = Lock::acquire_within(&path, Duration::from_millis(200)).unwrap_err();
        let waited = started.elapsed();
        let group = format!("-{}", holder.id());
        std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &group])
            .status()
            .unwrap();
        holder.wait().unwrap();
        assert!(matches!(err, StoreError::LockTimeout { .. }), "{err}");
        assert!(err.to_string().contains("still locked by another process"));
        assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(5));
        // Once the holder is gone, the lock is free again.
        Lock::acquire_within(&path, Duration::from_secs(5)).unwrap();
    }

    /// A writer killed mid-write leaves its temporary file. Writes do not look for it (they
    /// never list their directory); a sweep removes it, but not a younger one (a concurrent
    /// writer's) nor anybody else's files, in the directory and, with `_under`, below it.
    #[test]
    fn leftovers_of_killed_writers_are_swept_not_listed_by_writes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sub");
        fs::create_dir(&dir).unwrap();
        let path = dir.join("state.json");
        // A real interrupted write: a child that creates our temporary file, then is SIGKILLed.
        let leftover = dir.join(format!("{TEMP_PREFIX}killed"));
        let mut child = std::process::Command::new("sh")
            .args(["-c", "head -c 1000000 /dev/zero > \"$0\"; sleep 300"])
            .arg(&leftover)
            .spawn()
            .unwrap();
        while fs::metadata(&leftover).map_or(true, |m| m.len() < 1_000_000) {
            thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let old = std::time::SystemTime::now() - TEMP_MAX_AGE - Duration::from_secs(1);
        let backdate = |p: &Path| {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(old)
                .unwrap()
        };
        backdate(&leftover);
        let young = dir.join(format!("{TEMP_PREFIX}in-flight"));
        fs::write(&young, "x").unwrap();
        let foreign = dir.join(".tmpAbC123");
        fs::write(&foreign, "x").unwrap();
        backdate(&foreign);
        let linked = dir.join(format!("{TEMP_PREFIX}link"));
        std::os::unix::fs::symlink(&foreign, &linked).unwrap();
        // A directory reached only through a symlink is not swept.
        let outside = tempfile::tempdir().unwrap();
        let beyond = outside.path().join(format!("{TEMP_PREFIX}beyond"));
        fs::write(&beyond, "x").unwrap();
        backdate(&beyond);
        std::os::unix::fs::symlink(outside.path(), root.path().join("linked-dir")).unwrap();

        write_atomic(&path, b"{}").unwrap();
        write_atomic_unsynced_dir(&path, b"{}").unwrap();
        assert!(leftover.exists(), "a write does not sweep");
        assert_eq!(sweep_temp_files(root.path()), 0, "not below the directory");
        assert!(leftover.exists());
        assert_eq!(sweep_temp_files_under(root.path()), 1);

        assert!(!leftover.exists(), "the stale leftover is removed");
        assert!(beyond.exists(), "a symlinked directory is not entered");
        assert!(young.exists(), "a concurrent writer's file is kept");
        assert!(foreign.exists(), "other temporary names are not ours");
        assert!(
            linked.symlink_metadata().is_ok(),
            "a symlink is not our file"
        );
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".checkpoint-tmp-in-flight",
                ".checkpoint-tmp-link",
                ".tmpAbC123",
                "state.json"
            ]
        );
        // A user's command writing outside the state directory sweeps the one it writes.
        let stale = dir.join(format!("{TEMP_PREFIX}again"));
        fs::write(&stale, "x").unwrap();
        backdate(&stale);
        write_atomic_sweeping(&path, b"[]").unwrap();
        assert!(!stale.exists());
        assert_eq!(fs::read(&path).unwrap(), b"[]");
    }

    #[test]
    fn ids_that_could_escape_are_refused() {
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "../x",
            "a\\b",
            "a\0b",
            &"x".repeat(129),
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?}");
        }
        for good in ["abc", "ab1e7b0a-f307-48c7", "a.b", "..a"] {
            assert!(validate_id(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn update_creates_then_modifies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        update_json(&path, |n: &mut u32| *n += 1).unwrap();
        update_json(&path, |n: &mut u32| *n += 1).unwrap();
        assert_eq!(read_json::<u32>(&path).unwrap(), Some(2));
        assert!(dir.path().join("sub/state.json.lock").exists());
    }

    #[test]
    fn corrupt_file_is_reported_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, "{not json").unwrap();
        let err = update_json(&path, |n: &mut u32| *n += 1).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }));
        assert_eq!(fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("count.json");
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..25 {
                        update_json(&path, |n: &mut u32| *n += 1).unwrap();
                    }
                });
            }
        });
        assert_eq!(read_json::<u32>(&path).unwrap(), Some(200));
    }
}
