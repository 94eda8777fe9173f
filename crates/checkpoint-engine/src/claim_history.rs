//! Reading `checkpoint history`'s input: every agent's transcripts on disk, turned into turns
//! ([`checkpoint_core::claim_history`]) and counted with what the gate recorded of their stops.
//!
//! Transcripts are somebody else's files and may be anything: the walk enters no symbolic link
//! (a link out of the agent's directory is not followed) and stops after [`MAX_ENTRIES`]
//! entries; a file is read only when it is a regular one (a FIFO is never opened), as a stream,
//! at most [`MAX_TRANSCRIPT_BYTES`] of it (decompressed, for a `.jsonl.zst` rollout); a line
//! longer than [`MAX_LINE_BYTES`], or not UTF-8, is skipped, and what a format cannot parse says
//! nothing. A file that cannot be read is counted as unreadable, never an error of the whole.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use checkpoint_core::agent::{Agent, TranscriptFiles, TranscriptFormat};
use checkpoint_core::claim_history::{History, SessionTurns, TurnBuilder};
use checkpoint_core::stop_verdict::StopVerdict;
use jiff::Timestamp;
use ruzstd::decoding::StreamingDecoder;

use crate::bounded;
use crate::session::SessionStore;
use crate::store::StoreError;

/// Directory entries the walk of one agent's directory looks at, at most.
pub const MAX_ENTRIES: usize = 200_000;
/// Bytes of one transcript read, at most (decompressed): the rest is left unread.
pub const MAX_TRANSCRIPT_BYTES: u64 = 1024 * 1024 * 1024;
/// The longest line read; a longer one is skipped.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Session records of the worktree read for their stops, at most (the latest).
const MAX_RECORDS: usize = 10_000;

/// One agent's transcripts: where they are and how they read.
pub struct Source<'a> {
    /// The agent.
    pub agent: Agent,
    /// How its transcript lines read.
    pub format: &'a dyn TranscriptFormat,
    /// Where they are, below its directory.
    pub files: TranscriptFiles,
    /// Its transcript directory (`~/.claude/projects`).
    pub dir: PathBuf,
}

/// The gate's recorded stops, by agent and session id: when, and the verdict, in order.
pub type Stops = HashMap<(Agent, String), Vec<(Timestamp, StopVerdict)>>;

/// The stops recorded in `store` (a worktree's session records).
pub fn recorded_stops(store: &SessionStore) -> Result<Stops, StoreError> {
    let mut stops = Stops::new();
    for stored in store.latest(MAX_RECORDS)? {
        let list = stops.entry((stored.agent, stored.id)).or_default();
        list.extend(stored.record.stops.iter().map(|s| (s.at, s.verdict)));
        list.sort_by_key(|(at, _)| *at);
    }
    Ok(stops)
}

/// Which sessions' transcripts count: all, or only those of these (agent, session id).
pub type Only<'a> = Option<&'a HashSet<(Agent, String)>>;

/// The counts over the transcripts of `sources` written at or after `since` (of the sessions in
/// `only`, when given), their turns joined to `stops`; completion claims are `phrases`.
pub fn history(
    sources: &[Source<'_>],
    stops: &Stops,
    phrases: &[String],
    since: Option<Timestamp>,
    only: Only<'_>,
) -> History {
    let mut history = History::new(since);
    for source in sources {
        history.agent(source.agent);
        for path in transcripts(&source.dir, &source.files, since) {
            let turns = match read_turns(source.format, &path) {
                Ok(turns) => turns,
                Err(_) if only.is_none() => {
                    history.agent(source.agent).unreadable += 1;
                    continue;
                }
                Err(_) => continue,
            };
            let key = (source.agent, turns.session.clone().unwrap_or_default());
            if only.is_some_and(|only| !only.contains(&key)) {
                continue;
            }
            history.agent(source.agent).transcripts += 1;
            let recorded = stops.get(&key).map_or(&[][..], Vec::as_slice);
            history.add(source.agent, &turns, recorded, phrases);
        }
    }
    history
}

/// The transcripts below `dir` that `files` names, modified at or after `since`, in path order.
/// Symbolic links are not followed; a directory that cannot be read is left out.
pub fn transcripts(dir: &Path, files: &TranscriptFiles, since: Option<Timestamp>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut budget = MAX_ENTRIES;
    walk(
        dir,
        Path::new(""),
        files,
        files.depth,
        &mut budget,
        &mut found,
    );
    found.retain(|path| {
        let modified = fs::symlink_metadata(path).and_then(|m| m.modified());
        since.is_none_or(|since| {
            (modified.ok()).and_then(|m| Timestamp::try_from(m).ok()) >= Some(since)
        })
    });
    found
}

fn walk(
    dir: &Path,
    relative: &Path,
    files: &TranscriptFiles,
    depth: usize,
    budget: &mut usize,
    found: &mut Vec<PathBuf>,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<fs::DirEntry> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        // The entry's own type: a symbolic link is neither a file nor a directory here.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let relative = relative.join(entry.file_name());
        if kind.is_dir() && depth > 0 {
            walk(&entry.path(), &relative, files, depth - 1, budget, found);
        } else if kind.is_file() && (files.is_transcript)(&relative) {
            found.push(entry.path());
        }
    }
}

/// The turns of the transcript at `path`, read as `format` says (see the module's bounds).
pub fn read_turns(format: &dyn TranscriptFormat, path: &Path) -> io::Result<SessionTurns> {
    let file = bounded::open_regular(path)?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "zst") {
        Box::new(BufReader::new(
            Frames::new(file)?.take(MAX_TRANSCRIPT_BYTES),
        ))
    } else {
        Box::new(BufReader::new(file.take(MAX_TRANSCRIPT_BYTES)))
    };
    let mut builder = TurnBuilder::default();
    let mut events = Vec::new();
    for_each_line(reader, |line| {
        format.turn_events(line, &mut events);
        events.drain(..).for_each(|event| builder.push(event));
    })?;
    Ok(builder.finish())
}

/// Runs `each` on the lines of `reader` that are UTF-8 and at most [`MAX_LINE_BYTES`] long. An
/// error after the first line ends the reading (a compressed file cut short keeps what came
/// before the cut); one at the first is returned.
fn for_each_line(mut reader: impl BufRead, mut each: impl FnMut(&str)) -> io::Result<()> {
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let read = match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(read) => read,
            Err(e) if first => return Err(e),
            Err(_) => return Ok(()),
        };
        if read == 0 {
            return Ok(());
        }
        first = false;
        if line.len() > MAX_LINE_BYTES {
            skip_line(&mut reader)?;
            continue;
        }
        if let Ok(text) = std::str::from_utf8(&line) {
            each(text.trim_end());
        }
    }
}

/// Reads past the rest of the current line without keeping it.
fn skip_line(reader: &mut impl BufRead) -> io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(newline) = buf.iter().position(|&b| b == b'\n') {
            reader.consume(newline + 1);
            return Ok(());
        }
        let len = buf.len();
        reader.consume(len);
    }
}

/// The decompressed text of a zstd file of one frame or more, one frame after the other.
struct Frames {
    decoder: Option<StreamingDecoder<BufReader<File>, ruzstd::decoding::FrameDecoder>>,
}

impl Frames {
    fn new(file: File) -> io::Result<Frames> {
        let decoder = StreamingDecoder::new(BufReader::new(file)).map_err(io::Error::other)?;
        Ok(Frames {
            decoder: Some(decoder),
        })
    }
}

impl Read for Frames {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let read = decoder.read(buf)?;
            if read > 0 || buf.is_empty() {
                return Ok(read);
            }
            // This frame is done: the next one, if more bytes follow.
            let Some(mut rest) = self.decoder.take().map(StreamingDecoder::into_inner) else {
                return Ok(0);
            };
            if rest.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.decoder = Some(StreamingDecoder::new(rest).map_err(io::Error::other)?);
        }
    }
}

#[cfg(test)]
mod tests;
