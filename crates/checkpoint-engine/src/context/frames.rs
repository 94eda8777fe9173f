//! The tail of a zstd-compressed, append-only file, frame by frame, decompressing only what is
//! new since the last call and reading (parsing) only the last [`TAIL_BYTES`] of it.
//!
//! A zstd file is a sequence of independent frames; within a frame every block may refer to the
//! ones before it, so a frame is decompressed from its start. The decompressed text streams
//! through a window that keeps only its last [`TAIL_BYTES`] (whole lines): the caller concludes
//! from that tail and the state concluded before it, never from every line. What was concluded
//! after the last complete frame — the caller's state, the unfinished line, where that frame
//! ended and a digest of the bytes before that point — is remembered in a small memo file (at
//! most [`MAX_ENTRIES`] files, the most recently read kept). The next call on the same file
//! resumes there: a file that did not change is answered from the memo without decompressing
//! anything, a file that grew has only its new frames decompressed, and a file that was replaced,
//! rewritten or shortened is read again from the start. A broken memo is ignored, and failing to
//! write it only costs the next call the full read.
//!
//! Codex compresses a rollout once it is cold, whole, as one frame, and turns it back into plain
//! text before appending to it: the first call on such a file decompresses all of it (bounded by
//! the caller's `limit`), every later one is answered from the memo.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::bounded;
use crate::store;

/// Files the memo remembers.
pub(crate) const MAX_ENTRIES: usize = 8;
/// The longest unfinished line carried from one call to the next; a longer one is dropped.
const MAX_PENDING: usize = 64 * 1024;
/// How much of the decompressed text's end is read: as far back as the reader of a plain
/// transcript looks ([`super::MAX_TAIL_BYTES`]).
const TAIL_BYTES: usize = super::MAX_TAIL_BYTES as usize;
/// Bytes before a resume point whose digest must match for the resume to be trusted.
const CHECK_BYTES: u64 = 4096;

/// The memo of one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry<S> {
    path: String,
    dev: u64,
    ino: u64,
    /// The file as last read: its length and modification time (ns).
    len: u64,
    mtime: i128,
    /// The end of the last complete frame, and the digest of the bytes before it.
    offset: u64,
    check: String,
    /// The state after the complete frames, and the unfinished line they ended with.
    state: S,
    pending: Option<String>,
    /// The answer for the whole file as last read (the incomplete frame and last line too).
    answer: S,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(bound = "S: Serialize + DeserializeOwned")]
struct Memo<S> {
    entries: Vec<Entry<S>>,
}

impl<S> Default for Memo<S> {
    fn default() -> Self {
        Memo {
            entries: Vec::new(),
        }
    }
}

/// The last [`TAIL_BYTES`] (up to twice as many) of the decompressed text, from a line's start
/// (a line cut by a trim is dropped whole).
struct Window {
    bytes: Vec<u8>,
}

impl Window {
    /// Appends `bytes`; returns how many bytes were trimmed from the front.
    fn push(&mut self, bytes: &[u8]) -> usize {
        self.bytes.extend_from_slice(bytes);
        // Trimmed in steps of a tail's length, so that each byte is moved at most once or twice.
        if self.bytes.len() <= 2 * TAIL_BYTES {
            return 0;
        }
        let cut = self.bytes.len() - TAIL_BYTES;
        let start = (self.bytes[cut..].iter().position(|&b| b == b'\n'))
            .map_or(self.bytes.len(), |newline| cut + newline + 1);
        self.bytes.drain(..start);
        start
    }
}

/// `bytes` split after its last newline: the complete lines and the unfinished last one.
fn split_unfinished(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
    bytes.split_at(end)
}

/// The caller's reading of a tail: the state concluded from the `lines` (UTF-8 text, one record
/// a line) after the state `before` concluded from everything before them.
pub(crate) type Conclude<'f, S> = &'f dyn Fn(&S, &str) -> S;

/// Counts the bytes the decoder took: after a complete frame, where the next one starts.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Concludes (with `conclude`, from `S::default()`) the tail of the zstd file at `path`, the
/// unfinished last line counted as a line; at most `limit` bytes are decompressed per call. With
/// `memo`, resumes where the last call on the same file left off and records where this one did.
pub(crate) fn scan<S>(
    path: &Path,
    memo: Option<&Path>,
    limit: u64,
    conclude: Conclude<'_, S>,
) -> io::Result<S>
where
    S: Clone + Default + Serialize + DeserializeOwned,
{
    let mut file = bounded::open_regular(path)?;
    let meta = file.metadata()?;
    let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    let key = path.to_string_lossy().into_owned();
    let known = memo
        .and_then(|m| store::read_json::<Memo<S>>(m).ok().flatten())
        .and_then(|m| m.entries.into_iter().find(|e| e.path == key))
        .filter(|e| e.dev == meta.dev() && e.ino == meta.ino());
    if let Some(entry) = known
        .as_ref()
        .filter(|e| e.len == meta.len() && e.mtime == mtime)
    {
        return Ok(entry.answer.clone());
    }
    let resume = match known {
        Some(entry)
            if entry.offset <= meta.len() && check(&mut file, entry.offset)? == entry.check =>
        {
            Some(entry)
        }
        _ => None,
    };
    let (start, before, pending) = match resume {
        Some(e) => (
            e.offset,
            e.state,
            e.pending.unwrap_or_default().into_bytes(),
        ),
        None => (0, S::default(), Vec::new()),
    };
    let mut window = Window {
        bytes: pending.clone(),
    };
    file.seek(SeekFrom::Start(start))?;
    let mut source = Counted {
        inner: BufReader::new(file.by_ref().take(meta.len() - start)),
        count: start,
    };
    let mut decoder = FrameDecoder::new();
    let mut budget = limit;
    // Where the last complete frame ended and how many bytes of the window it filled; `None`
    // once a trim reached them (an unfinished frame of more than a tail): the memo then keeps
    // the resume point it had.
    let mut committed = Some((start, window.bytes.len()));
    'frames: while source.count < meta.len() && budget > 0 {
        if decoder.reset(&mut source).is_err() {
            break;
        }
        loop {
            let finished = decoder.decode_blocks(&mut source, BlockDecodingStrategy::UptoBlocks(1));
            if let Some(bytes) = decoder.collect() {
                let room = usize::try_from(budget).unwrap_or(usize::MAX);
                let kept = &bytes[..bytes.len().min(room)];
                budget -= kept.len() as u64;
                let trimmed = window.push(kept);
                committed = committed
                    .and_then(|(offset, filled)| Some((offset, filled.checked_sub(trimmed)?)));
            }
            match finished {
                Ok(true) => break,
                Ok(false) if budget > 0 => {}
                // An unfinished last frame (still being written), a broken one or the budget
                // spent: what was decoded counts now, the next call decodes the frame again.
                _ => break 'frames,
            }
        }
        committed = Some((source.count, window.bytes.len()));
    }
    drop(source);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let answer = conclude(&before, &text(&window.bytes));
    if let Some(memo) = memo {
        let (offset, state, rest) = match committed {
            // All of it complete lines: what was concluded already.
            Some((offset, filled))
                if filled == window.bytes.len() && window.bytes.ends_with(b"\n") =>
            {
                (offset, answer.clone(), &[][..])
            }
            Some((offset, filled)) => {
                let (lines, rest) = split_unfinished(&window.bytes[..filled]);
                (offset, conclude(&before, &text(lines)), rest)
            }
            None => (start, before, pending.as_slice()),
        };
        let entry = Entry {
            path: key,
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime,
            offset,
            check: check(&mut file, offset)?,
            state,
            pending: (rest.len() <= MAX_PENDING).then(|| text(rest)),
            answer: answer.clone(),
        };
        remember(memo, entry);
    }
    Ok(answer)
}

/// The digest of the (up to) [`CHECK_BYTES`] bytes of `file` before `offset`.
fn check(file: &mut File, offset: u64) -> io::Result<String> {
    let from = offset.saturating_sub(CHECK_BYTES);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.by_ref().take(offset - from).read_to_end(&mut bytes)?;
    Ok(checkpoint_core::hex::sha256_hex(&bytes))
}

/// Records `entry` as the newest of the memo at `path` (a corrupt memo is replaced); failing to
/// is not an error (the next call reads the file in full).
fn remember<S>(path: &Path, entry: Entry<S>)
where
    S: Clone + Serialize + DeserializeOwned,
{
    let updated = store::update_json(path, |memo: &mut Memo<S>| {
        memo.entries.retain(|e| e.path != entry.path);
        memo.entries.push(entry.clone());
        let excess = memo.entries.len().saturating_sub(MAX_ENTRIES);
        memo.entries.drain(..excess);
    });
    if let Err(store::StoreError::Corrupt { .. }) = updated {
        let fresh = Memo {
            entries: vec![entry],
        };
        let _ = store::write_json(path, &fresh);
    }
}
