//! A zstd-compressed, append-only file read line by line, frame by frame, decompressing only what
//! is new since the last call.
//!
//! A zstd file is a sequence of independent frames. What a scan of the lines concluded after the
//! last complete frame — the caller's state, the unfinished line, where that frame ended and a
//! digest of the bytes before that point — is remembered in a small memo file (at most
//! [`MAX_ENTRIES`] files, the most recently read kept). The next call on the same file resumes
//! there: a file that did not change is answered from the memo without decompressing anything, a
//! file that grew has only its new frames decompressed, and a file that was replaced, rewritten
//! or shortened is read again from the start. A broken memo is ignored, and failing to write it
//! only costs the next call the full read.

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
/// The longest unfinished line carried from one frame to the next; a longer one is dropped.
const MAX_PENDING: usize = 64 * 1024;
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

/// A line splitter over decompressed bytes: complete lines go to `feed`, the rest waits.
struct Lines<'f, S> {
    state: S,
    /// The unfinished line; `None` while the rest of one longer than [`MAX_PENDING`] is skipped
    /// (a line that long is no record anyone reads).
    pending: Option<Vec<u8>>,
    feed: &'f dyn Fn(&mut S, &str),
}

impl<S: Clone> Lines<'_, S> {
    fn push(&mut self, mut bytes: &[u8]) {
        while let Some(newline) = bytes.iter().position(|&b| b == b'\n') {
            if let Some(mut line) = self.pending.replace(Vec::new()) {
                line.extend_from_slice(&bytes[..newline]);
                (self.feed)(&mut self.state, &String::from_utf8_lossy(&line));
            }
            bytes = &bytes[newline + 1..];
        }
        if let Some(line) = &mut self.pending {
            if line.len() + bytes.len() > MAX_PENDING {
                self.pending = None;
            } else {
                line.extend_from_slice(bytes);
            }
        }
    }

    /// The state with the unfinished last line counted as a line (the file's end).
    fn answer(&self) -> S {
        let mut state = self.state.clone();
        if let Some(line) = self.pending.as_ref().filter(|l| !l.is_empty()) {
            (self.feed)(&mut state, &String::from_utf8_lossy(line));
        }
        state
    }
}

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

/// Feeds every line of the zstd file at `path` to `feed`, starting from `S::default()`, and
/// returns the state after the last line; at most `limit` bytes are decompressed per call. With
/// `memo`, resumes where the last call on the same file left off and records where this one did.
pub(crate) fn scan<S>(
    path: &Path,
    memo: Option<&Path>,
    limit: u64,
    feed: &dyn Fn(&mut S, &str),
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
    let (start, state, pending) = match resume {
        Some(e) => (e.offset, e.state, e.pending.map(String::into_bytes)),
        None => (0, S::default(), Some(Vec::new())),
    };
    let mut lines = Lines {
        state,
        pending,
        feed,
    };
    file.seek(SeekFrom::Start(start))?;
    let mut source = Counted {
        inner: BufReader::new(file.by_ref().take(meta.len() - start)),
        count: start,
    };
    let mut decoder = FrameDecoder::new();
    let mut budget = limit;
    let mut committed = (start, lines.state.clone(), lines.pending.clone());
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
                lines.push(kept);
            }
            match finished {
                Ok(true) => break,
                Ok(false) if budget > 0 => {}
                // An unfinished last frame (still being written), a broken one or the budget
                // spent: what was decoded counts now, the next call decodes the frame again.
                _ => break 'frames,
            }
        }
        committed = (source.count, lines.state.clone(), lines.pending.clone());
    }
    drop(source);
    let answer = lines.answer();
    if let Some(memo) = memo {
        let (offset, state, pending) = committed;
        let entry = Entry {
            path: key,
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime,
            offset,
            check: check(&mut file, offset)?,
            state,
            pending: pending.map(|p| String::from_utf8_lossy(&p).into_owned()),
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
