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
//! empty, and an entry whose path or digest is not UTF-8 is never used: the digests are then
//! read from the files, as without a memo.
//!
//! A stop's change set is mostly the last one's, so the remembered files can be `lstat`ed while
//! `git status` still runs ([`DigestMemo::prestat`]), on the core git leaves idle. An early
//! `lstat` is as good as a late one: the digest it lets through is still of content read after
//! the stat data it was remembered with, and the tests run after both.

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

/// A memo file larger than this (about 500 entries) is `lstat`ed on a thread of its own (see
/// [`DigestMemo::is_large`]).
const LARGE_MEMO_BYTES: u64 = 64 * 1024;

/// How many `lstat`s [`DigestMemo::prestat`] makes between two looks at whether to stop.
const PRESTAT_BATCH: usize = 64;

/// The stat data a digest is valid for: device, inode, size, mode, and the modification and
/// status-change times as nanoseconds since the epoch (signed, stored as their bits).
pub(crate) type Stat = [u64; 6];

/// One remembered digest as the memo file holds it: the path (relative to the worktree), the stat
/// data it is valid for, and the digest.
type Remembered<'a> = (&'a str, Stat, &'a str);

/// A [`Remembered`] entry with its path and digest left as bytes: postcard lays both out as it
/// does bytes, so this reads the same entries without checking that their text is UTF-8 (done
/// where an entry is used).
type RawEntry<'a> = (&'a [u8], Stat, &'a [u8]);

/// The memo file as it is written (a stop reads it an entry at a time, see [`starts`]).
#[derive(Debug, Serialize, Deserialize)]
struct MemoFile<'a> {
    /// [`MEMO_VERSION`].
    version: u32,
    /// The digests, sorted by path.
    #[serde(borrow)]
    files: Vec<Remembered<'a>>,
}

/// What is known of an entry of the loaded memo (bits of [`DigestMemo::marks`]): its file,
/// `lstat`ed ahead of the lookups (see [`DigestMemo::prestat`]), showed the stat data the digest
/// was remembered with (an entry without it is `lstat`ed by its lookup);
const UNCHANGED: u8 = 1;
/// this fingerprint used the entry.
const FOUND: u8 = 2;

/// Remembered content digests: the last fingerprint's, and those of this one.
///
/// The memo file's entries are read where they lie in its bytes, one at a time: loading
/// allocates only the bytes, a start offset and a byte of marks per entry (a stop over ten
/// thousand files touches kilobytes, not megabytes, of fresh memory, and every fresh page is a
/// page fault). A change set is looked up in the order it was saved in (sorted by path), so a
/// lookup is a comparison with the entry after the last one found, and a binary search
/// otherwise.
#[derive(Debug)]
pub struct DigestMemo {
    /// Where the memo is kept; `None` for one that only forgets.
    file: Option<PathBuf>,
    /// The memo file as read.
    bytes: Vec<u8>,
    /// Where each entry of the last fingerprint starts in `bytes`, in the file's order (by path).
    starts: Vec<u32>,
    /// What is known of each entry: [`UNCHANGED`], [`FOUND`].
    marks: Vec<u8>,
    /// How many entries, from the first, [`DigestMemo::prestat`] has `lstat`ed.
    stated: usize,
    /// Where the next lookup is expected among the entries.
    next: usize,
    /// What this one remembers that the last one did not hold: path, stat data, digest.
    fresh: Vec<(String, Stat, String)>,
    /// Whether an entry no longer holds (another stat, or not remembered again).
    stale: bool,
    /// Files whose times are after this (nanoseconds since the epoch) are not remembered.
    settled_before: i64,
}

impl DigestMemo {
    /// The memo kept in `state_dir`, for a fingerprint taken `now`.
    pub fn load(state_dir: &Path, now: Timestamp) -> DigestMemo {
        let file = memo_file(state_dir);
        let bytes = bounded::read_regular(&file, MAX_MEMO_BYTES).unwrap_or_default();
        let starts = starts(&bytes).unwrap_or_default();
        let now = i64::try_from(now.as_nanosecond()).unwrap_or(i64::MAX);
        DigestMemo {
            file: Some(file),
            marks: vec![0; starts.len()],
            bytes,
            starts,
            settled_before: now.saturating_sub(SETTLED.as_nanos() as i64),
            ..DigestMemo::forgetting()
        }
    }

    /// Whether the memo kept in `state_dir` remembers so many files that loading and
    /// `lstat`ing them may outlast `git status`: worth a thread started before git, where a
    /// small one is done between looks at git's output (a thread costs more than it saves).
    pub(crate) fn is_large(state_dir: &Path) -> bool {
        std::fs::metadata(memo_file(state_dir)).is_ok_and(|meta| meta.len() > LARGE_MEMO_BYTES)
    }

    /// A memo that remembers nothing: every digest is read from its file.
    pub fn forgetting() -> DigestMemo {
        DigestMemo {
            file: None,
            bytes: Vec::new(),
            starts: Vec::new(),
            marks: Vec::new(),
            stated: 0,
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
        while self.stated < self.starts.len() && !enough() {
            let end = (self.stated + PRESTAT_BATCH).min(self.starts.len());
            for at in self.stated..end {
                self.marks[at] |= check(&self.bytes, self.starts[at], &mut files);
            }
            self.stated = end;
        }
    }

    /// `lstat`s the remembered files [`DigestMemo::prestat`] did not reach, on a few threads
    /// when there are many (each `lstat` is a system call of a microsecond or two, and a change
    /// set may have tens of thousands); fewer are left to the lookups, one at a time.
    pub(crate) fn prestat_rest(&mut self, workdir: &Path) {
        /// Fewer files than this per thread are not worth a thread.
        const PER_THREAD: usize = 512;
        let rest = self.starts.len() - self.stated;
        let wanted = rest / PER_THREAD;
        if wanted < 2 {
            return;
        }
        // Asking for the parallelism costs a few reads of cgroup files: only when it can matter.
        let threads = (std::thread::available_parallelism())
            .map_or(1, |n| n.get())
            .clamp(1, 8)
            .min(wanted);
        let part = rest.div_ceil(threads);
        let (bytes, starts) = (&self.bytes, &self.starts[self.stated..]);
        std::thread::scope(|scope| {
            for (marks, starts) in
                (self.marks[self.stated..].chunks_mut(part)).zip(starts.chunks(part))
            {
                // A thread that cannot finish leaves its files to the lookups.
                scope.spawn(move || {
                    let mut files = DirStat::new(workdir);
                    for (mark, &start) in marks.iter_mut().zip(starts) {
                        *mark |= check(bytes, start, &mut files);
                    }
                });
            }
        });
        self.stated = self.starts.len();
    }

    /// The remembered digest of `path` (relative to the worktree `files` stats in), when it is a
    /// regular file whose stat data is what the digest was remembered with; else `Err` with its
    /// stat data now (`None` when it is no regular file), taken before its content is read.
    pub(crate) fn lookup(&mut self, files: &mut DirStat, path: &str) -> Result<&str, Option<Stat>> {
        let Some(at) = self.find(path) else {
            return Err(files.regular(path));
        };
        self.next = at + 1;
        let mark = self.marks[at];
        let Some((_, stat, digest)) = entry(&self.bytes, self.starts[at]) else {
            return Err(files.regular(path));
        };
        if mark & UNCHANGED == 0 {
            let now = files.regular(path);
            if now != Some(stat) {
                self.stale = true;
                return Err(now);
            }
        }
        self.marks[at] |= FOUND;
        Ok(digest)
    }

    /// Where `path` is among the entries: at [`DigestMemo::next`] when the lookups follow the
    /// saved order, else found by a binary search.
    fn find(&self, path: &str) -> Option<usize> {
        let (path, path_at) = (path.as_bytes(), |start: &u32| path_of(&self.bytes, *start));
        match self.starts.get(self.next) {
            Some(start) if path_at(start) == path => Some(self.next),
            _ => (self.starts)
                .binary_search_by(|start| path_at(start).cmp(path))
                .ok(),
        }
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
        let same = self.fresh.is_empty()
            && !self.stale
            && self.marks.iter().all(|&mark| mark & FOUND != 0);
        let Some(file) = self.file.as_ref().filter(|_| !same) else {
            return Ok(());
        };
        let kept = (self.starts.iter().zip(&self.marks))
            .filter(|&(_, &mark)| mark & FOUND != 0)
            .filter_map(|(&start, _)| entry(&self.bytes, start));
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

/// The memo file of the state directory `state_dir`.
fn memo_file(state_dir: &Path) -> PathBuf {
    state_dir.join("cache").join(MEMO_FILE)
}

/// Where each entry of the memo file `bytes` starts; `None` when it is not a memo of this
/// version, or not whole. The file is a [`MemoFile`] as postcard encodes it: the version, the
/// number of entries, then each entry, read here one after the other without a copy.
fn starts(bytes: &[u8]) -> Option<Vec<u32>> {
    let (version, rest) = postcard::take_from_bytes::<u32>(bytes).ok()?;
    if version != MEMO_VERSION {
        return None;
    }
    let (count, mut rest) = postcard::take_from_bytes::<usize>(rest).ok()?;
    // Each entry takes a few bytes at least: a count beyond that is a corrupt file.
    let mut starts = Vec::with_capacity(count.min(rest.len()));
    for _ in 0..count {
        starts.push(u32::try_from(bytes.len() - rest.len()).ok()?);
        rest = postcard::take_from_bytes::<RawEntry>(rest).ok()?.1;
    }
    rest.is_empty().then_some(starts)
}

/// The entry of the loaded memo `bytes` that starts at `start` (see [`starts`]).
fn entry(bytes: &[u8], start: u32) -> Option<Remembered<'_>> {
    let at = bytes.get(start as usize..)?;
    postcard::take_from_bytes::<Remembered>(at)
        .ok()
        .map(|(entry, _)| entry)
}

/// The path of the entry of the loaded memo `bytes` that starts at `start`: its first field,
/// read alone and as bytes (a lookup compares paths only, and a path that is not UTF-8 equals
/// none it is asked for); empty when it cannot be read.
fn path_of(bytes: &[u8], start: u32) -> &[u8] {
    (bytes.get(start as usize..))
        .and_then(|at| postcard::take_from_bytes::<&[u8]>(at).ok())
        .map_or(&[], |(path, _)| path)
}

/// [`UNCHANGED`] when the file of the entry at `start` in `bytes` shows the stat data its digest
/// was remembered with, else no mark. Reads the path and stat data only: the digest is needed by
/// a lookup, not here.
fn check(bytes: &[u8], start: u32, files: &mut DirStat) -> u8 {
    let head = (bytes.get(start as usize..))
        .and_then(|at| postcard::take_from_bytes::<(&str, Stat)>(at).ok());
    match head {
        Some(((path, stat), _)) if files.regular(path) == Some(stat) => UNCHANGED,
        _ => 0,
    }
}

/// `lstat`s files of one worktree through a handle on their directory, kept open while the
/// next path is in the same directory: a change set is sorted by path, so thousands of files
/// cost one directory lookup per directory and one short lookup per file, not a walk of every
/// file's whole path from the root.
#[derive(Debug)]
pub(crate) struct DirStat<'a> {
    workdir: &'a Path,
    /// The directory (relative to the worktree) and its handle; `None` when it cannot be opened.
    open: Option<(String, Option<OwnedFd>)>,
}

impl<'a> DirStat<'a> {
    /// Stats files under `workdir`.
    pub(crate) fn new(workdir: &'a Path) -> DirStat<'a> {
        DirStat {
            workdir,
            open: None,
        }
    }

    /// The stat data of `path` (relative to the worktree) when it is a regular file; `None` for
    /// anything else, or when it cannot be read.
    pub(crate) fn regular(&mut self, path: &str) -> Option<Stat> {
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
