//! How full the agent's context window is, and what it last said, read from the tail of its
//! transcript.
//!
//! Hook payloads carry no context usage, so it comes from the transcript the agent writes. Reading
//! it is the same for every agent; what a line means is the agent's own [`TranscriptFormat`],
//! which its home (the adapter crate) implements. The format is asked line by line, from the end:
//! the last usage record wins, and a compaction boundary after it means the context now holds the
//! boundary's summary.
//!
//! Only the end of the file is read (64 KiB, doubling up to [`MAX_TAIL_BYTES`] until a usage
//! record turns up), so the cost does not grow with the transcript. Transcripts compressed to
//! `.jsonl.zst` are decompressed as a stream, keeping only what the last record needs; with a
//! memo ([`read_usage_remembered`]) only the frames added since the last call are.

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounded;
use checkpoint_core::agent::{LineUsage, TranscriptFormat};

mod frames;

/// The furthest back from the end of a transcript the reader looks.
pub const MAX_TAIL_BYTES: u64 = 4 * 1024 * 1024;
const FIRST_TAIL_BYTES: u64 = 64 * 1024;
/// The most bytes a compressed transcript is decompressed to (a compression bomb stops here).
const MAX_DECOMPRESSED_BYTES: u64 = 256 * 1024 * 1024;

/// Context usage at the agent's last model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUsage {
    /// Tokens the last request put into the context window.
    pub used: u64,
    /// The window size, when the transcript says.
    pub window: Option<u64>,
    /// The model that answered, when the transcript says.
    pub model: Option<String>,
}

impl ContextUsage {
    /// Percentage of `window` in use, 0–100 (rounded, clamped).
    pub fn percent_of(&self, window: u64) -> u8 {
        if window == 0 {
            return 100;
        }
        let pct = (self.used as f64 / window as f64 * 100.0).round();
        pct.clamp(0.0, 100.0) as u8
    }
}

/// The context window to measure against: an explicit setting wins, then what the transcript
/// (or payload) says, then the format's default for the model; `None` without any of them.
pub fn window(
    format: Option<&dyn TranscriptFormat>,
    model: Option<&str>,
    usage: &ContextUsage,
    configured: Option<u64>,
) -> Option<u64> {
    (configured.or(usage.window)).or_else(|| format.map(|f| f.default_window(model)))
}

/// The usage the last of `lines` reports (scanning backwards), if any. With
/// [`TranscriptFormat::window_from_earlier_record`], a usage without a window takes the window of
/// an earlier record.
fn last_usage<'a>(
    format: &dyn TranscriptFormat,
    lines: impl DoubleEndedIterator<Item = &'a str>,
) -> Option<ContextUsage> {
    let carry_window = format.window_from_earlier_record();
    let mut found: Option<ContextUsage> = None;
    for line in lines.rev() {
        let usage = match format.line_usage(line) {
            Some(LineUsage::Usage {
                used,
                window,
                model,
            }) => ContextUsage {
                used,
                window,
                model,
            },
            Some(LineUsage::Compacted(post)) => ContextUsage {
                used: post.unwrap_or(0),
                window: None,
                model: None,
            },
            None => continue,
        };
        match &mut found {
            None if usage.window.is_some() || !carry_window => return Some(usage),
            None => found = Some(usage),
            Some(latest) => {
                if usage.window.is_some() {
                    latest.window = usage.window;
                    break;
                }
            }
        }
    }
    found
}

/// Context usage from the tail of the transcript at `path`; `Ok(None)` when the tail holds no
/// usage record (a new session).
pub fn read_usage(format: &dyn TranscriptFormat, path: &Path) -> io::Result<Option<ContextUsage>> {
    read_usage_remembered(format, path, None)
}

/// The memo of compressed transcripts [`read_usage_remembered`] keeps in `state_dir`: one small
/// file (at most eight transcripts).
pub fn memo_path(state_dir: &Path) -> PathBuf {
    state_dir.join("transcripts.json")
}

/// [`read_usage`], remembering in the file `memo` how far a compressed transcript was read, so
/// that the next call decompresses only the frames added since: an unchanged file is answered
/// from the memo, a rewritten or shorter one is read again from the start.
pub fn read_usage_remembered(
    format: &dyn TranscriptFormat,
    path: &Path,
    memo: Option<&Path>,
) -> io::Result<Option<ContextUsage>> {
    if path.extension().is_some_and(|e| e == "zst") {
        let feed = |latest: &mut Option<ContextUsage>, line: &str| {
            if let Some(mut usage) = last_usage(format, std::iter::once(line)) {
                if usage.window.is_none() {
                    usage.window = latest.as_ref().and_then(|l| l.window);
                }
                *latest = Some(usage);
            }
        };
        return frames::scan(path, memo, MAX_DECOMPRESSED_BYTES, &feed);
    }
    scan_tail(path, |lines| last_usage(format, lines.iter().copied()))
}

/// The text of the agent's last reply, from the transcript's tail: a summary for checkpoints
/// taken between turns (the context watch, compaction, session end). `Ok(None)` when the tail
/// holds no reply with text.
pub fn last_reply(format: &dyn TranscriptFormat, path: &Path) -> io::Result<Option<String>> {
    if path.extension().is_some_and(|e| e == "zst") {
        let decoder = ruzstd::decoding::StreamingDecoder::new(bounded::open_regular(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?
            .take(MAX_DECOMPRESSED_BYTES);
        let lines = BufReader::new(decoder).lines().map_while(Result::ok);
        return Ok(lines.filter_map(|line| format.reply_text(&line)).last());
    }
    scan_tail(path, |lines| {
        lines.iter().rev().find_map(|line| format.reply_text(line))
    })
}

/// Runs `find` on the lines of the last 64 KiB of the file at `path` (the first, possibly cut,
/// line left out), doubling the span up to [`MAX_TAIL_BYTES`] until it finds something.
fn scan_tail<T>(path: &Path, find: impl Fn(&[&str]) -> Option<T>) -> io::Result<Option<T>> {
    let mut file = bounded::open_regular(path)?;
    let len = file.metadata()?.len();
    let mut span = FIRST_TAIL_BYTES;
    loop {
        let start = len.saturating_sub(span);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity((len - start) as usize);
        file.by_ref().take(len - start).read_to_end(&mut buf)?;
        let text = String::from_utf8_lossy(&buf);
        let lines: Vec<&str> = text.lines().skip(usize::from(start > 0)).collect();
        if let Some(found) = find(&lines) {
            return Ok(Some(found));
        }
        if start == 0 || span >= MAX_TAIL_BYTES {
            return Ok(None);
        }
        span *= 2;
    }
}

#[cfg(test)]
mod tests;
