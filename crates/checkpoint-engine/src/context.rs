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
//! record and a reply turn up), so the cost does not grow with the transcript. Transcripts
//! compressed to `.jsonl.zst` are decompressed as a stream of which only the last
//! [`MAX_TAIL_BYTES`] are read; with a memo ([`read_tail`]) only the frames added since the last
//! call are decompressed, and a file that did not change is not read at all. The usage and the
//! reply come from the same read ([`Tail`]).

use std::io::{self, Read, Seek, SeekFrom};
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

/// What the end of a transcript says: the context usage at the agent's last model call and the
/// text of its last reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tail {
    /// The last usage record's; `None` when none was found (a new session).
    pub usage: Option<ContextUsage>,
    /// The last reply with text; `None` when none was found.
    pub reply: Option<String>,
}

impl Tail {
    /// The tail after `lines` (in order), given `before`, what the text before them says: what
    /// the lines say, else what `before` does (the window of a usage without one from `before`
    /// when the format carries windows).
    fn after(format: &dyn TranscriptFormat, before: &Tail, lines: &[&str]) -> Tail {
        let usage = match last_usage(format, lines.iter().copied()) {
            Some(mut usage) if usage.window.is_none() && format.window_from_earlier_record() => {
                usage.window = before.usage.as_ref().and_then(|u| u.window);
                Some(usage)
            }
            None => before.usage.clone(),
            found => found,
        };
        let reply = (lines.iter().rev().find_map(|line| format.reply_text(line)))
            .or_else(|| before.reply.clone());
        Tail { usage, reply }
    }
}

/// Context usage from the tail of the transcript at `path`; `Ok(None)` when the tail holds no
/// usage record (a new session).
pub fn read_usage(format: &dyn TranscriptFormat, path: &Path) -> io::Result<Option<ContextUsage>> {
    Ok(read_tail(format, path, None)?.usage)
}

/// The memo of compressed transcripts [`read_tail`] keeps in `state_dir`: one small file (at
/// most eight transcripts).
pub fn memo_path(state_dir: &Path) -> PathBuf {
    state_dir.join("transcripts.json")
}

/// The usage and the last reply from the tail of the transcript at `path`. With `memo`, a
/// compressed transcript is remembered there (how far it was read and what it said), so that the
/// next call decompresses only the frames added since: an unchanged file is answered from the
/// memo, a rewritten or shorter one is read again from the start.
pub fn read_tail(
    format: &dyn TranscriptFormat,
    path: &Path,
    memo: Option<&Path>,
) -> io::Result<Tail> {
    if path.extension().is_some_and(|e| e == "zst") {
        let conclude = |before: &Tail, text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            Tail::after(format, before, &lines)
        };
        return frames::scan(path, memo, MAX_DECOMPRESSED_BYTES, &conclude);
    }
    scan_tail(path, |lines| {
        let tail = Tail::after(format, &Tail::default(), lines);
        let complete = tail.usage.is_some() && tail.reply.is_some();
        (tail, complete)
    })
}

/// The text of the agent's last reply, from the transcript's tail: a summary for checkpoints
/// taken between turns (the context watch, compaction, session end). `Ok(None)` when the tail
/// holds no reply with text.
pub fn last_reply(format: &dyn TranscriptFormat, path: &Path) -> io::Result<Option<String>> {
    Ok(read_tail(format, path, None)?.reply)
}

/// Runs `find` on the lines of the last 64 KiB of the file at `path` (the first, possibly cut,
/// line left out), doubling the span up to [`MAX_TAIL_BYTES`] until it says it found everything;
/// returns its last answer.
fn scan_tail<T>(path: &Path, find: impl Fn(&[&str]) -> (T, bool)) -> io::Result<T> {
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
        let (found, complete) = find(&lines);
        if complete || start == 0 || span >= MAX_TAIL_BYTES {
            return Ok(found);
        }
        span *= 2;
    }
}

#[cfg(test)]
mod tests;
