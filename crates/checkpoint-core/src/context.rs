//! How full the agent's context window is, read from the tail of its transcript.
//!
//! Hook payloads carry no context usage, so it comes from the transcript each agent writes:
//!
//! | agent | record (the last one wins) | tokens in context | window |
//! |---|---|---|---|
//! | Claude | main-thread `assistant` line with `message.usage` | `input + cache_creation + cache_read` | per model: 200,000, or 1,000,000 for 1M models |
//! | Gemini | `type: "gemini"` record with `tokens` | `tokens.input` | 1,048,576 |
//! | Codex | `event_msg` `token_count` | `info.last_token_usage.input_tokens` | `info.model_context_window` |
//!
//! Only the end of the file is read (64 KiB, doubling up to [`MAX_TAIL_BYTES`] until a usage
//! record turns up), so the cost does not grow with the transcript. A Claude compaction boundary
//! after the last usage means the context now holds the boundary's `postTokens`. Codex rollouts
//! compressed to `.jsonl.zst` are decompressed as a stream, keeping only the tail.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Agent;

/// The furthest back from the end of a transcript the reader looks.
pub const MAX_TAIL_BYTES: u64 = 4 * 1024 * 1024;
const FIRST_TAIL_BYTES: u64 = 64 * 1024;

/// Context usage at the agent's last model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUsage {
    /// Tokens the last request put into the context window.
    pub used: u64,
    /// The window size, when the transcript says (Codex).
    pub window: Option<u64>,
    /// The model that answered, when the transcript says (Claude, Gemini).
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
/// says, then the agent's and model's known size.
pub fn window(
    agent: Agent,
    model: Option<&str>,
    usage: &ContextUsage,
    configured: Option<u64>,
) -> u64 {
    configured.or(usage.window).unwrap_or_else(|| match agent {
        Agent::Gemini => 1_048_576,
        Agent::Claude | Agent::Codex | Agent::Cli => {
            let model = model.unwrap_or_default();
            if model.contains("[1m]") || model.contains("opus-5") {
                1_000_000
            } else {
                200_000
            }
        }
    })
}

/// What one transcript line says about context usage.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LineUsage {
    /// A usage record.
    Usage(ContextUsage),
    /// A Claude compaction boundary: the context was replaced by a summary of this size.
    Compacted(Option<u64>),
}

/// Reads one line of `agent`'s transcript.
fn line_usage(agent: Agent, line: &str) -> Option<LineUsage> {
    // Cheap pre-filter: most lines are not usage records and need no JSON parse.
    let marker = match agent {
        Agent::Claude => {
            if line.contains("compact_boundary") {
                "compact_boundary"
            } else {
                "\"usage\""
            }
        }
        Agent::Gemini => "\"tokens\"",
        Agent::Codex => {
            if line.contains("token_usage_record") {
                "token_usage_record"
            } else {
                "token_count"
            }
        }
        Agent::Cli => return None,
    };
    if !line.contains(marker) {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    match agent {
        Agent::Claude => claude_line(&v),
        Agent::Gemini => {
            (v["type"] == "gemini").then_some(())?;
            let used = v["tokens"]["input"].as_u64()?;
            let model = v["model"].as_str().map(str::to_owned);
            Some(LineUsage::Usage(ContextUsage {
                used,
                window: None,
                model,
            }))
        }
        // Codex writes a `token_usage_record` as soon as a reply is in, but its `token_count`
        // event (the one with the window) only after the reply's tool calls have run.
        Agent::Codex if v["type"] == "token_usage_record" => {
            let used = v["payload"]["usage"]["input_tokens"].as_u64()?;
            Some(LineUsage::Usage(ContextUsage {
                used,
                window: None,
                model: None,
            }))
        }
        Agent::Codex => {
            let info = (v["payload"]["type"] == "token_count").then(|| &v["payload"]["info"])?;
            let used = info["last_token_usage"]["input_tokens"].as_u64()?;
            let window = info["model_context_window"].as_u64();
            Some(LineUsage::Usage(ContextUsage {
                used,
                window,
                model: None,
            }))
        }
        Agent::Cli => None,
    }
}

fn claude_line(v: &Value) -> Option<LineUsage> {
    if v["isSidechain"] == true {
        return None;
    }
    if v["type"] == "system" && v["subtype"] == "compact_boundary" {
        return Some(LineUsage::Compacted(
            v["compactMetadata"]["postTokens"].as_u64(),
        ));
    }
    let message = &v["message"];
    if v["type"] != "assistant" || message["model"] == "<synthetic>" {
        return None;
    }
    let usage = &message["usage"];
    let part = |key: &str| usage[key].as_u64().unwrap_or(0);
    usage["input_tokens"].as_u64()?;
    let used = part("input_tokens")
        + part("cache_creation_input_tokens")
        + part("cache_read_input_tokens");
    let model = message["model"].as_str().map(str::to_owned);
    Some(LineUsage::Usage(ContextUsage {
        used,
        window: None,
        model,
    }))
}

/// The usage the last of `lines` reports (scanning backwards), if any. A usage without a window
/// takes the window of an earlier record (Codex states it only in `token_count` events).
fn last_usage<'a>(
    agent: Agent,
    lines: impl DoubleEndedIterator<Item = &'a str>,
) -> Option<ContextUsage> {
    let mut found: Option<ContextUsage> = None;
    for line in lines.rev() {
        let usage = match line_usage(agent, line) {
            Some(LineUsage::Usage(usage)) => usage,
            Some(LineUsage::Compacted(post)) => ContextUsage {
                used: post.unwrap_or(0),
                window: None,
                model: None,
            },
            None => continue,
        };
        match &mut found {
            None if usage.window.is_some() || agent != Agent::Codex => return Some(usage),
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

/// Context usage from the tail of `agent`'s transcript at `path`; `Ok(None)` when the tail holds
/// no usage record (a new session).
pub fn read_usage(agent: Agent, path: &Path) -> io::Result<Option<ContextUsage>> {
    if path.extension().is_some_and(|e| e == "zst") {
        let decoder = ruzstd::decoding::StreamingDecoder::new(File::open(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        return Ok(last_usage_streamed(agent, decoder));
    }
    scan_tail(path, |lines| last_usage(agent, lines.iter().copied()))
}

/// The text of the agent's last reply, from the transcript's tail: a summary for checkpoints
/// taken between turns (the context watch, compaction, session end). `Ok(None)` when the tail
/// holds no reply with text.
pub fn last_reply(agent: Agent, path: &Path) -> io::Result<Option<String>> {
    if path.extension().is_some_and(|e| e == "zst") {
        let decoder = ruzstd::decoding::StreamingDecoder::new(File::open(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let lines = BufReader::new(decoder).lines().map_while(Result::ok);
        return Ok(lines.filter_map(|line| reply_text(agent, &line)).last());
    }
    scan_tail(path, |lines| {
        lines.iter().rev().find_map(|line| reply_text(agent, line))
    })
}

/// The assistant text one transcript line carries, if any.
fn reply_text(agent: Agent, line: &str) -> Option<String> {
    let marker = match agent {
        Agent::Claude => "\"assistant\"",
        Agent::Gemini => "\"gemini\"",
        Agent::Codex => "\"assistant\"",
        Agent::Cli => return None,
    };
    if !line.contains(marker) {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    let texts = |parts: &Value, kind: &str| -> String {
        parts
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["type"] == kind)
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = match agent {
        Agent::Claude if v["type"] == "assistant" && v["isSidechain"] != true => {
            texts(&v["message"]["content"], "text")
        }
        Agent::Gemini if v["type"] == "gemini" => v["content"].as_str()?.to_owned(),
        Agent::Codex
            if v["type"] == "response_item"
                && v["payload"]["type"] == "message"
                && v["payload"]["role"] == "assistant" =>
        {
            texts(&v["payload"]["content"], "output_text")
        }
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Runs `find` on the lines of the last 64 KiB of the file at `path` (the first, possibly cut,
/// line left out), doubling the span up to [`MAX_TAIL_BYTES`] until it finds something.
fn scan_tail<T>(path: &Path, find: impl Fn(&[&str]) -> Option<T>) -> io::Result<Option<T>> {
    let mut file = File::open(path)?;
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

/// Reads a compressed transcript front to back, remembering only the latest usage.
fn last_usage_streamed(agent: Agent, reader: impl Read) -> Option<ContextUsage> {
    let mut latest = None;
    for line in BufReader::new(reader).lines() {
        let Ok(line) = line else { break };
        if let Some(mut usage) = last_usage(agent, std::iter::once(line.as_str())) {
            if usage.window.is_none() {
                usage.window = latest.as_ref().and_then(|l: &ContextUsage| l.window);
            }
            latest = Some(usage);
        }
    }
    latest
}

#[cfg(test)]
mod tests;
