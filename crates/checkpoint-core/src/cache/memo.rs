//! Content digests remembered by their files' stat data, so that a stop whose change set holds
//! thousands of files that did not change since the last stop costs one `lstat` per file, as
//! `git status` does, instead of a read of every one.
//!
//! A remembered digest is used only while the file's `lstat` shows exactly what it showed when
//! the digest was taken: device, inode, size, mode, modification and status-change times (to the
//! nanosecond the filesystem keeps). The status-change time (`ctime`) cannot be set by anyone and
//! moves on every write, so a file written since shows another one; the one exception is a write
//! within the same tick of a coarse clock as the stat that was remembered. That is git's "racy
//! clean" case, and it is closed the way git closes it: a digest is remembered only for a file
//! whose times were at least [`SETTLED`] older than the moment the fingerprint began, more than
//! any filesystem's timestamp granularity. A file written in the last two seconds is read again
//! at every stop until it settles.
//!
//! The memo is one file per state directory (`cache/digests.bin`, postcard-encoded: a stop reads
//! it whole, and JSON for ten thousand entries cost more than `git status`), holding the entries
//! of the last fingerprint only (so it is bounded by the change set), read with a size cap and
//! replaced atomically when it changed. A missing, oversized, corrupt or other-version memo is
//! empty: the digests are then read from the files, as without a memo.
//!
//! A stop's change set is mostly the last one's, so the remembered files can be `lstat`ed while
//! `git status` still runs ([`DigestMemo::prestat`]), on the core git leaves idle. An early
//! `lstat` is as good as a late one: the digest it lets through is still of content read after
//! the stat data it was remembered with, and the tests run after both.

use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rustix::fs::{self, AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::bounded;
use crate::store::{self, StoreError};

/// How much older than the start of a fingerprint a file's times must be for its digest to be
/// remembered.
pub const SETTLED: Duration = Duration::from_secs(2);

/// The largest memo file read (about 400,000 entries).
const MAX_MEMO_BYTES: u64 = 64 * 1024 * 1024;

/// The memo file's name in the state directory's `cache/`.
const MEMO_FILE: &str = "digests.bin";

/// The encoding's version: a memo of another one is empty.
const MEMO_VERSION: u32 = 1;

/// How many `lstat`s [`DigestMemo::prestat`] makes between two looks at whether to stop.
const PRESTAT_BATCH: usize = 64;

/// The stat data a digest is valid for: device, inode, size, mode, and the modification and
/// status-change times as nanoseconds since the epoch (signed, stored as their bits).
pub(crate) type Stat = [u64; 6];

/// One remembered digest as the memo file holds it: the path (relative to the worktree), the stat
/// data it is valid for, and the digest.
type Remembered<'a> = (&'a str, Stat, &'a str);

/// The memo file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct MemoFile<'a> {
    /// [`MEMO_VERSION`].
    version: u32,
    /// The digests, sorted by path.
    #[serde(borrow)]
    files: Vec<Remembered<'a>>,
}

/// An entry of the loaded memo: where its path and digest are in the file's bytes (they are
/// never copied out), and the stat data.
#[derive(Debug)]
struct Entry {
    path: Range<usize>,
    stat: Stat,
    digest: Range<usize>,
}

/// Remembered content digests: the last fingerprint's, and those of this one.
///
/// A change set is looked up in the order it was saved in (sorted by path), so a lookup is
/// a comparison with the entry after the last one found, and a binary search otherwise.
#[derive(Debug)]
pub struct DigestMemo {
    /// Where the memo is kept; `None` for one that only forgets.
    file: Option<PathBuf>,
    /// The memo file as read, which `before` points into.
    bytes: Vec<u8>,
    /// What the last fingerprint remembered, sorted by path.
    before: Vec<Entry>,
    /// The stat data of the first of `before`'s files, taken by [`DigestMemo::prestat`].
    prestats: Vec<Option<Stat>>,
    /// Which of `before` this one found again.
    found: Vec<bool>,
    /// Where the next lookup is expected in `before`.
    next: usize,
    /// What this one remembers that `before` did not hold: path, stat data, digest.
    fresh: Vec<(String, Stat, String)>,
    /// Whether an entry of `before` no longer holds (another stat, or not remembered again).
    stale: bool,
    /// Files whose times are after this (nanoseconds since the epoch) are not remembered.
    settled_before: i64,
}

impl DigestMemo {
    /// The memo kept in `state_dir`, for a fingerprint taken `now`.
    pub fn load(state_dir: &Path, now: Timestamp) -> DigestMemo {
        let file = state_dir.join("cache").join(MEMO_FILE);
        let bytes = bounded::read_regular(&file, MAX_MEMO_BYTES).unwrap_or_default();
        let before = entries(&bytes).unwrap_or_default();
        let now = i64::try_from(now.as_nanosecond()).unwrap_or(i64::MAX);
        DigestMemo {
            file: Some(file),
            found: vec![false; before.len()],
            bytes,
            before,
            settled_before: now.saturating_sub(SETTLED.as_nanos() as i64),
            ..DigestMemo::forgetting()
        }
    }

    /// A memo that remembers nothing: every digest is read from its file.
    pub fn forgetting() -> DigestMemo {
        DigestMemo {
            file: None,
            bytes: Vec::new(),
            before: Vec::new(),
            prestats: Vec::new(),
            found: Vec::new(),
            next: 0,
            fresh: Vec::new(),
            stale: false,
            settled_before: i64::MIN,
        }
    }

    /// `lstat`s the remembered files under `workdir` in order, a batch at a time, until all are
    /// done or `enough` says to stop; a fingerprint then stats only the rest. Meant to
    /// run while `git status` does: `enough` is whether it has finished.
    pub fn prestat(&mut self, workdir: &Path, mut enough: impl FnMut() -> bool) {
        let mut files = DirStat::new(workdir);
        for batch in self.before.chunks(PRESTAT_BATCH) {
            if enough() {
                return;
            }
            let bytes = &self.bytes;
            (self.prestats).extend(
                batch
                    .iter()
                    .map(|entry| files.regular(text(bytes, &entry.path))),
            );
        }
    }

    /// The stat data of each of `paths` (relative to `workdir`) that is a regular file, in
    /// order: taken by [`DigestMemo::prestat`] where it reached the path, else now (see
    /// [`stat_all`]).
    pub(crate) fn stats(&self, workdir: &Path, paths: &[&str]) -> Vec<Option<Stat>> {
        let mut next = 0;
        let mut stats: Vec<Option<Option<Stat>>> = (paths.iter())
            .map(|path| {
                let at = self.find(path, next)?;
                next = at + 1;
                self.prestats.get(at).copied()
            })
            .collect();
        let missing: Vec<&str> = (paths.iter().zip(&stats))
            .filter_map(|(path, stat)| stat.is_none().then_some(*path))
            .collect();
        let mut fresh = stat_all(workdir, &missing).into_iter();
        (stats.iter_mut())
            .map(|stat| stat.take().unwrap_or_else(|| fresh.next().flatten()))
            .collect()
    }

    /// Where `path` is in `before`: at `next` when the lookups follow the saved order, else
    /// found by a binary search.
    fn find(&self, path: &str, next: usize) -> Option<usize> {
        match self.before.get(next) {
            Some(entry) if self.path(entry) == path => Some(next),
            _ => (self.before)
                .binary_search_by(|entry| self.path(entry).cmp(path))
                .ok(),
        }
    }

    /// The path of `entry`.
    fn path(&self, entry: &Entry) -> &str {
        text(&self.bytes, &entry.path)
    }

    /// The remembered digest of the regular file at `path` (relative to the worktree), when
    /// `stat` is what it was remembered with.
    pub(crate) fn remembered(&mut self, path: &str, stat: &Stat) -> Option<&str> {
        let at = self.find(path, self.next)?;
        self.next = at + 1;
        let entry = &self.before[at];
        if entry.stat != *stat {
            self.stale = true;
            return None;
        }
        self.found[at] = true;
        Some(text(&self.bytes, &entry.digest))
    }

    /// Remembers `digest` for the regular file at `path`, read after an `lstat` gave `stat`,
    /// when the file had settled by then.
    pub(crate) fn remember(&mut self, path: &str, stat: Stat, digest: &str) {
        let [.., mtime, ctime] = stat.map(|field| field as i64);
        if mtime < self.settled_before && ctime < self.settled_before {
            self.fresh.push((path.to_owned(), stat, digest.to_owned()));
        }
    }

    /// Keeps what this fingerprint remembered for the next one, when it differs from what the
    /// last one did.
    pub fn save(&self) -> Result<(), StoreError> {
        // An entry not found again is one the change set lost, or one that changed.
        let same = self.fresh.is_empty() && !self.stale && self.found.iter().all(|&f| f);
        let Some(file) = self.file.as_ref().filter(|_| !same) else {
            return Ok(());
        };
        let kept = (self.before.iter().zip(&self.found))
            .filter(|&(_, &found)| found)
            .map(|(entry, _)| {
                (
                    self.path(entry),
                    entry.stat,
                    text(&self.bytes, &entry.digest),
                )
            });
        let fresh = (self.fresh.iter()).map(|(path, stat, digest)| (&**path, *stat, &**digest));
        let mut files: Vec<Remembered> = kept.chain(fresh).collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        files.dedup_by(|a, b| a.0 == b.0);
        let memo = MemoFile {
            version: MEMO_VERSION,
            files,
        };
        // Encoding strings and numbers into a vector does not fail; were it to, the next stop
        // would read the files, as without a memo.
        let Ok(bytes) = postcard::to_stdvec(&memo) else {
            return Ok(());
        };
        store::write_atomic(file, &bytes)
    }
}

/// The entries of the memo file `bytes`, pointing into it; `None` when it is not a memo of
/// this version.
fn entries(bytes: &[u8]) -> Option<Vec<Entry>> {
    let memo = postcard::from_bytes::<MemoFile>(bytes).ok()?;
    if memo.version != MEMO_VERSION {
        return None;
    }
    // Each string was borrowed from `bytes`: its place there is its address's distance from
    // the start.
    let place = |text: &str| {
        let start = text.as_ptr().addr() - bytes.as_ptr().addr();
        start..start + text.len()
    };
    let entries = (memo.files.iter())
        .map(|&(path, stat, digest)| Entry {
            path: place(path),
            stat,
            digest: place(digest),
        })
        .collect();
    Some(entries)
}

/// The text at `range` of a loaded memo: UTF-8, since it was decoded as a string.
fn text<'b>(bytes: &'b [u8], range: &Range<usize>) -> &'b str {
    std::str::from_utf8(&bytes[range.clone()]).unwrap_or_default()
}

/// The stat data of each of `paths` (relative to `workdir`) that is a regular file, in order
/// (see [`DirStat::regular`]); on a few threads when there are many, since each `lstat` is a
/// system call of a microsecond or two, and a change set may have tens of thousands.
fn stat_all(workdir: &Path, paths: &[&str]) -> Vec<Option<Stat>> {
    /// Fewer paths than this per thread are not worth a thread.
    const PER_THREAD: usize = 512;
    // Asking for the parallelism costs a few reads of cgroup files: only when it can matter.
    let wanted = paths.len().div_ceil(PER_THREAD);
    let threads = match wanted {
        0 | 1 => 1,
        _ => (std::thread::available_parallelism())
            .map_or(1, |n| n.get())
            .clamp(1, 8)
            .min(wanted),
    };
    let part = |paths: &[&str]| {
        let mut files = DirStat::new(workdir);
        paths
            .iter()
            .map(|path| files.regular(path))
            .collect::<Vec<_>>()
    };
    if threads == 1 {
        return part(paths);
    }
    std::thread::scope(|scope| {
        let parts: Vec<_> = (paths.chunks(paths.len().div_ceil(threads)))
            .map(|chunk| (chunk.len(), scope.spawn(move || part(chunk))))
            .collect();
        // A thread that could not finish leaves its files without stat data: they are read.
        (parts.into_iter())
            .flat_map(|(len, handle)| handle.join().unwrap_or_else(|_| vec![None; len]))
            .collect()
    })
}

/// `lstat`s files of one worktree through a handle on their directory, kept open while the
/// next path is in the same directory: a change set is sorted by path, so thousands of files
/// cost one directory lookup per directory and one short lookup per file, not a walk of every
/// file's whole path from the root.
#[derive(Debug)]
struct DirStat<'a> {
    workdir: &'a Path,
    /// The directory (relative to the worktree) and its handle; `None` when it cannot be opened.
    open: Option<(String, Option<OwnedFd>)>,
}

impl<'a> DirStat<'a> {
    /// Stats files under `workdir`.
    fn new(workdir: &'a Path) -> DirStat<'a> {
        DirStat {
            workdir,
            open: None,
        }
    }

    /// The stat data of `path` (relative to the worktree) when it is a regular file; `None` for
    /// anything else, or when it cannot be read.
    fn regular(&mut self, path: &str) -> Option<Stat> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if self.open.as_ref().is_none_or(|(open, _)| open != dir) {
            let handle = fs::open(
                self.workdir.join(dir),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            );
            self.open = Some((dir.to_owned(), handle.ok()));
        }
        let (_, handle) = self.open.as_ref()?;
        let stat = fs::statat(handle.as_ref()?, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile).then(|| {
            [
                stat.st_dev,
                stat.st_ino,
                stat.st_size as u64,
                u64::from(stat.st_mode),
                nanos(stat.st_mtime, stat.st_mtime_nsec as i64) as u64,
                nanos(stat.st_ctime, stat.st_ctime_nsec as i64) as u64,
            ]
        })
    }
}

/// Seconds and nanoseconds since the epoch as nanoseconds.
fn nanos(seconds: i64, nanoseconds: i64) -> i64 {
    seconds
        .saturating_mul(1_000_000_000)
        .saturating_add(nanoseconds)
}

#[cfg(test)]
mod tests;
