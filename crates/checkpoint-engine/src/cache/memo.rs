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
//! The memo is one file per state directory (`cache/digests.bin`), holding the entries of the
//! last fingerprint only (so it is bounded by the change set), read with a size cap and replaced
//! atomically when it changed. It is laid out so that a stop reads as little as it needs:
//!
//! - a fixed prefix: the encoding's version and the length of the part after it (both `u32`,
//!   little-endian);
//! - that part, postcard-encoded: the last fingerprint and what it was taken of (`HEAD` and each
//!   change's kind), then every entry's path and stat data, sorted by path;
//! - the rest, postcard-encoded: the entries' digests, in the same order.
//!
//! The digests are read (from the file opened at load, so from the same version of it) only
//! when one is needed: a stop over a change set whose paths, kinds and `HEAD` are the last
//! fingerprint's, every file showing its remembered stat data, takes that fingerprint as it is
//! ([`DigestMemo::unchanged_fingerprint`]), since every part of it is what it was. A missing,
//! oversized, corrupt or other-version memo is empty, and an entry whose path or digest is not
//! UTF-8 is never used: the digests are then read from the files, as without a memo.
//!
//! A stop's change set is mostly the last one's, so the remembered files can be `lstat`ed while
//! `git status` still runs ([`DigestMemo::prestat`]), on the core git leaves idle. An early
//! `lstat` is as good as a late one: the digest it lets through is still of content read after
//! the stat data it was remembered with, and the tests run after both.

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rustix::fs::{self, AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::head_field;
use crate::bounded;
use crate::store::{self, StoreError};
use checkpoint_core::changes::{ChangeKind, ChangeSet};

/// How much older than the start of a fingerprint a file's times must be for its digest to be
/// remembered.
pub const SETTLED: Duration = Duration::from_secs(2);

/// The largest memo file read (about 400,000 entries).
const MAX_MEMO_BYTES: u64 = 64 * 1024 * 1024;

/// The memo file's name in the state directory's `cache/`.
const MEMO_FILE: &str = "digests.bin";

/// The encoding's version: a memo of another one is empty. It names the fingerprint's
/// encoding too (a remembered fingerprint is reused as it is): a change to
/// [`crate::cache::change_fingerprint`] moves it.
const MEMO_VERSION: u32 = 2;

/// The length of the memo file's fixed prefix: the version and the length of the entries' part.
const PREFIX: usize = 8;

/// A memo file larger than this (about 600 entries) is `lstat`ed on a thread of its own (see
/// [`DigestMemo::is_large`]).
const LARGE_MEMO_BYTES: u64 = 64 * 1024;

/// How many `lstat`s [`DigestMemo::prestat`] makes between two looks at whether to stop.
const PRESTAT_BATCH: usize = 64;

/// The stat data a digest is valid for: device, inode, size, mode, and the modification and
/// status-change times as nanoseconds since the epoch (signed, stored as their bits).
pub(crate) type Stat = [u64; 6];

/// One remembered entry as the entries' part holds it: the path (relative to the worktree) and
/// the stat data its digest is valid for. The path is read as bytes, postcard lays out `&str`
/// and `&[u8]` alike: its text is checked where the entry is used.
type RawEntry<'a> = (&'a [u8], Stat);

/// The fingerprint the entries made last, and what it was of: `HEAD`'s commit (or `unborn`) and
/// each change's kind (see [`kind_code`]), one per entry and in their order.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Last<'a> {
    head: &'a str,
    kinds: &'a [u8],
    fingerprint: &'a str,
}

/// The entries' part of the memo file as it is written (a stop reads it an entry at a time,
/// see [`Entries::read`]).
#[derive(Debug, Serialize)]
struct EntriesPart<'a> {
    last: Option<Last<'a>>,
    /// The entries, sorted by path.
    files: Vec<(&'a str, Stat)>,
}

/// What is known of an entry of the loaded memo (bits of [`DigestMemo::marks`]): its file,
/// `lstat`ed ahead of the lookups (see [`DigestMemo::prestat`]), showed the stat data the digest
/// was remembered with (an entry without it is `lstat`ed by its lookup);
const UNCHANGED: u8 = 1;
/// this fingerprint used the entry.
const FOUND: u8 = 2;

/// The entries' part of a loaded memo: its bytes and where each entry starts in them.
#[derive(Debug, Default)]
struct Entries {
    /// The part as read.
    bytes: Vec<u8>,
    /// Where the last fingerprint starts in `bytes`, when there is one.
    last: Option<u32>,
    /// Where each entry starts in `bytes`, in the file's order (by path).
    starts: Vec<u32>,
}

/// The digests' part of a loaded memo, read when the first digest is needed.
#[derive(Debug)]
enum Digests {
    /// Not read yet: the memo file as opened at load, positioned at the part.
    Unread(Option<File>),
    /// Read: its bytes and where each digest starts in them, one per entry (none when the part
    /// could not be read or does not match the entries: every entry is then unusable).
    Read(Vec<u8>, Vec<u32>),
}

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
    /// The last fingerprint's entries.
    entries: Entries,
    /// Their digests.
    digests: Digests,
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
    /// The fingerprint this one took, when every change's digest is remembered: `HEAD`, each
    /// change's kind, the fingerprint.
    taken: Option<(String, Vec<u8>, String)>,
    /// Files whose times are after this (nanoseconds since the epoch) are not remembered.
    settled_before: i64,
}

impl DigestMemo {
    /// The memo kept in `state_dir`, for a fingerprint taken `now`.
    pub fn load(state_dir: &Path, now: Timestamp) -> DigestMemo {
        let file = memo_file(state_dir);
        let (entries, digests) = read_entries(&file).unwrap_or_default();
        let now = i64::try_from(now.as_nanosecond()).unwrap_or(i64::MAX);
        DigestMemo {
            file: Some(file),
            marks: vec![0; entries.starts.len()],
            entries,
            digests: Digests::Unread(digests),
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
            entries: Entries::default(),
            digests: Digests::Unread(None),
            marks: Vec::new(),
            stated: 0,
            next: 0,
            fresh: Vec::new(),
            stale: false,
            taken: None,
            settled_before: i64::MIN,
        }
    }

    /// `lstat`s the remembered files under `workdir` in order, a batch at a time, until all are
    /// done or `enough` says to stop; a fingerprint then stats only the rest. Meant to
    /// run while `git status` does: `enough` is whether it has finished.
    pub fn prestat(&mut self, workdir: &Path, mut enough: impl FnMut() -> bool) {
        let mut files = DirStat::new(workdir);
        let Entries { bytes, starts, .. } = &self.entries;
        while self.stated < starts.len() && !enough() {
            let end = (self.stated + PRESTAT_BATCH).min(starts.len());
            let batch = (self.marks[self.stated..end].iter_mut()).zip(&starts[self.stated..end]);
            for (mark, &start) in batch {
                *mark |= check(bytes, start, &mut files);
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
        let rest = self.entries.starts.len() - self.stated;
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
        let (bytes, starts) = (&self.entries.bytes, &self.entries.starts[self.stated..]);
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
        self.stated = self.entries.starts.len();
    }

    /// The last fingerprint, when `changes` is what it was taken of (the same `HEAD`, the same
    /// paths with the same kinds, in order) and every file shows the stat data its digest was
    /// remembered with: each part of it is then what it was. Every entry then counts as used.
    pub(crate) fn unchanged_fingerprint(
        &mut self,
        workdir: &Path,
        changes: &ChangeSet,
    ) -> Option<String> {
        let count = changes.changes.len();
        let last = self.entries.last()?;
        let same = last.head == head_field(changes)
            && last.kinds.len() == count
            && self.entries.starts.len() == count;
        if !same {
            return None;
        }
        self.prestat_rest(workdir);
        let mut files = DirStat::new(workdir);
        let Entries { bytes, starts, .. } = &self.entries;
        let last = self.entries.last()?;
        let each = (changes.changes.iter()).zip(starts).zip(last.kinds);
        for (((change, &start), &kind), mark) in each.zip(&mut self.marks) {
            if path_of(bytes, start) != change.path.as_bytes() || kind != kind_code(change.kind) {
                return None;
            }
            if *mark & UNCHANGED == 0 {
                // Not reached by the prestat: `lstat`ed now.
                *mark |= check(bytes, start, &mut files);
                if *mark & UNCHANGED == 0 {
                    return None;
                }
            }
        }
        for mark in &mut self.marks {
            *mark |= FOUND;
        }
        Some(last.fingerprint.to_owned())
    }

    /// Remembers that `changes`, each of whose digests this memo remembers (`covered`: found or
    /// remembered by [`DigestMemo::lookup`] and [`DigestMemo::remember`]), made `fingerprint`,
    /// for [`DigestMemo::unchanged_fingerprint`] to take again. It is kept only with entries
    /// that are exactly those changes, in their order (see [`DigestMemo::save`]).
    pub(crate) fn remember_fingerprint(
        &mut self,
        changes: &ChangeSet,
        covered: bool,
        fingerprint: &str,
    ) {
        let ordered = (changes.changes.windows(2)).all(|pair| pair[0].path < pair[1].path);
        self.taken = (covered && ordered).then(|| {
            let kinds = (changes.changes.iter()).map(|change| kind_code(change.kind));
            let head = head_field(changes).to_owned();
            (head, kinds.collect(), fingerprint.to_owned())
        });
    }

    /// The remembered digest of `path` (relative to the worktree `files` stats in), when it is a
    /// regular file whose stat data is what the digest was remembered with; else `Err` with its
    /// stat data now (`None` when it is no regular file), taken before its content is read.
    pub(crate) fn lookup(&mut self, files: &mut DirStat, path: &str) -> Result<&str, Option<Stat>> {
        let Some(at) = self.find(path) else {
            return Err(files.regular(path));
        };
        self.next = at + 1;
        let Some((_, stat)) = self.entries.entry(at) else {
            return Err(files.regular(path));
        };
        if self.marks[at] & UNCHANGED == 0 {
            let now = files.regular(path);
            if now != Some(stat) {
                self.stale = true;
                return Err(now);
            }
        }
        self.digests.read(self.entries.starts.len());
        let DigestMemo { digests, marks, .. } = self;
        let Some(digest) = digests.get(at) else {
            return Err(files.regular(path));
        };
        marks[at] |= FOUND;
        Ok(digest)
    }

    /// Where `path` is among the entries: at [`DigestMemo::next`] when the lookups follow the
    /// saved order, else found by a binary search.
    fn find(&self, path: &str) -> Option<usize> {
        let Entries { bytes, starts, .. } = &self.entries;
        let (path, path_at) = (path.as_bytes(), |start: &u32| path_of(bytes, *start));
        match starts.get(self.next) {
            Some(start) if path_at(start) == path => Some(self.next),
            _ => starts
                .binary_search_by(|start| path_at(start).cmp(path))
                .ok(),
        }
    }

    /// Remembers `digest` for the regular file at `path`, read after an `lstat` gave `stat`,
    /// when the file had settled by then; returns whether it had.
    pub(crate) fn remember(&mut self, path: &str, stat: Stat, digest: &str) -> bool {
        let [.., mtime, ctime] = stat.map(|field| field as i64);
        let settled = mtime < self.settled_before && ctime < self.settled_before;
        if settled {
            self.fresh.push((path.to_owned(), stat, digest.to_owned()));
        }
        settled
    }

    /// Keeps what this fingerprint remembered for the next one, when it differs from what the
    /// last one did.
    pub fn save(mut self) -> Result<(), StoreError> {
        let taken = (self.taken.as_ref()).map(|(head, kinds, fingerprint)| Last {
            head,
            kinds,
            fingerprint,
        });
        // An entry not found again is one the change set lost, or one that changed; a
        // fingerprint taken anew of the same entries is kept too.
        let same = self.fresh.is_empty()
            && !self.stale
            && self.marks.iter().all(|&mark| mark & FOUND != 0)
            && (taken.is_none() || taken == self.entries.last());
        let Some(file) = self.file.as_ref().filter(|_| !same) else {
            return Ok(());
        };
        self.digests.read(self.entries.starts.len());
        let kept = (0..self.marks.len())
            .filter(|&at| self.marks[at] & FOUND != 0)
            .filter_map(|at| {
                let (path, stat) = self.entries.entry(at)?;
                Some((path, stat, self.digests.get(at)?))
            });
        let fresh = (self.fresh.iter()).map(|(path, stat, digest)| (&**path, *stat, &**digest));
        let mut files: Vec<(&str, Stat, &str)> = kept.chain(fresh).collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let listed = files.len();
        files.dedup_by(|a, b| a.0 == b.0);
        // A fingerprint is kept with exactly the entries it was taken of, one digest a path.
        let last = taken.filter(|last| last.kinds.len() == files.len() && files.len() == listed);
        // Encoding strings and numbers into a vector does not fail; were it to, the next stop
        // would read the files, as without a memo.
        let Some(bytes) = encode(last, &files) else {
            return Ok(());
        };
        store::write_atomic(file, &bytes)
    }
}

impl Entries {
    /// The entries' part `bytes` as read; `None` when it is not whole. It is an
    /// [`EntriesPart`] as postcard encodes it: the last fingerprint (an option: a tag byte, then
    /// the value), the number of entries, then each entry, read here one after the other
    /// without a copy.
    fn read(bytes: Vec<u8>) -> Option<Entries> {
        let (last, rest) = postcard::take_from_bytes::<Option<Last>>(&bytes).ok()?;
        let starts = starts::<RawEntry>(&bytes, rest)?;
        Some(Entries {
            last: last.map(|_| 1),
            starts,
            bytes,
        })
    }

    /// The last fingerprint, when there is one.
    fn last(&self) -> Option<Last<'_>> {
        let at = self.bytes.get(self.last? as usize..)?;
        postcard::take_from_bytes::<Last>(at)
            .ok()
            .map(|(last, _)| last)
    }

    /// The path and stat data of entry `at`; `None` when its path is not UTF-8.
    fn entry(&self, at: usize) -> Option<(&str, Stat)> {
        let bytes = self.bytes.get(*self.starts.get(at)? as usize..)?;
        postcard::take_from_bytes::<(&str, Stat)>(bytes)
            .ok()
            .map(|(entry, _)| entry)
    }
}

impl Digests {
    /// Reads the digests' part, if it is not read yet, for `count` entries.
    fn read(&mut self, count: usize) {
        if let Digests::Unread(file) = self {
            let (bytes, starts) = (file.take())
                .and_then(|file| read_digests(file, count))
                .unwrap_or_default();
            *self = Digests::Read(bytes, starts);
        }
    }

    /// The digest of entry `at`, once read; `None` when it cannot be read or is not UTF-8.
    fn get(&self, at: usize) -> Option<&str> {
        let Digests::Read(bytes, starts) = self else {
            return None;
        };
        let at = bytes.get(*starts.get(at)? as usize..)?;
        postcard::take_from_bytes::<&str>(at)
            .ok()
            .map(|(digest, _)| digest)
    }
}

/// The memo file at `path`, read up to its digests: its entries, and the file to read the
/// digests from later (positioned at them); `None` when it is missing, not a regular file,
/// oversized, of another version or not whole.
fn read_entries(path: &Path) -> Option<(Entries, Option<File>)> {
    let mut file = bounded::open_regular(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut prefix = [0; PREFIX];
    file.read_exact(&mut prefix).ok()?;
    let [v0, v1, v2, v3, p0, p1, p2, p3] = prefix;
    let version = u32::from_le_bytes([v0, v1, v2, v3]);
    let part = u64::from(u32::from_le_bytes([p0, p1, p2, p3]));
    if len > MAX_MEMO_BYTES || version != MEMO_VERSION || PREFIX as u64 + part > len {
        return None;
    }
    let mut bytes = Vec::with_capacity(part as usize);
    (&mut file).take(part).read_to_end(&mut bytes).ok()?;
    let entries = Entries::read(bytes)?;
    Some((entries, Some(file)))
}

/// The digests' part of a memo file, read from `file` where [`read_entries`] left it: its
/// bytes and where each of its `count` digests starts; `None` when it is not whole or holds
/// another number of digests.
fn read_digests(file: File, count: usize) -> Option<(Vec<u8>, Vec<u32>)> {
    let mut bytes = Vec::new();
    file.take(MAX_MEMO_BYTES).read_to_end(&mut bytes).ok()?;
    let starts = starts::<&[u8]>(&bytes, &bytes)?;
    (starts.len() == count).then_some((bytes, starts))
}

/// Where each item of the postcard-encoded sequence of `T`s that `rest` (the end of `bytes`)
/// holds starts in `bytes`, read one after the other without a copy; `None` when the sequence is
/// not whole, or something follows it.
fn starts<'a, T: Deserialize<'a>>(bytes: &'a [u8], rest: &'a [u8]) -> Option<Vec<u32>> {
    let (count, mut rest) = postcard::take_from_bytes::<usize>(rest).ok()?;
    // Each item takes a byte at least: a count beyond that is a corrupt file.
    let mut starts = Vec::with_capacity(count.min(rest.len()));
    for _ in 0..count {
        starts.push(u32::try_from(bytes.len() - rest.len()).ok()?);
        rest = postcard::take_from_bytes::<T>(rest).ok()?.1;
    }
    rest.is_empty().then_some(starts)
}

/// The memo file holding `files` (path, stat data, digest; sorted by path) and the fingerprint
/// `last` taken of them: the prefix, the entries' part, the digests' part.
fn encode(last: Option<Last>, files: &[(&str, Stat, &str)]) -> Option<Vec<u8>> {
    let part = EntriesPart {
        last,
        files: files.iter().map(|&(path, stat, _)| (path, stat)).collect(),
    };
    let part = postcard::to_stdvec(&part).ok()?;
    let mut bytes = MEMO_VERSION.to_le_bytes().to_vec();
    bytes.extend(u32::try_from(part.len()).ok()?.to_le_bytes());
    bytes.extend(part);
    let digests: Vec<&str> = files.iter().map(|&(.., digest)| digest).collect();
    postcard::to_extend(&digests, bytes).ok()
}

/// The byte a change's kind is remembered as in the last fingerprint.
fn kind_code(kind: ChangeKind) -> u8 {
    match kind {
        ChangeKind::Added => 0,
        ChangeKind::Modified => 1,
        ChangeKind::Deleted => 2,
        ChangeKind::Untracked => 3,
    }
}

/// The memo file of the state directory `state_dir`.
fn memo_file(state_dir: &Path) -> PathBuf {
    state_dir.join("cache").join(MEMO_FILE)
}

/// The path of the entry that starts at `start` in the entries' part `bytes`: its first field,
/// read alone and as bytes (a lookup compares paths only, and a path that is not UTF-8 equals
/// none it is asked for); empty when it cannot be read.
fn path_of(bytes: &[u8], start: u32) -> &[u8] {
    (bytes.get(start as usize..))
        .and_then(|at| postcard::take_from_bytes::<&[u8]>(at).ok())
        .map_or(&[], |(path, _)| path)
}

/// [`UNCHANGED`] when the file of the entry at `start` in the entries' part `bytes` shows the
/// stat data its digest was remembered with, else no mark.
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
