//! Claude Code's transcript, `~/.claude/projects/<slug>/<session>.jsonl`: one JSON object per
//! line. Context usage is the last main-thread `assistant` line's `message.usage`,
//! `input + cache_creation + cache_read` tokens; a `system`/`compact_boundary` line after it means
//! the context now holds the boundary's `postTokens`. Sidechain (subagent) lines and `<synthetic>`
//! messages do not count. The window is not written down: 200,000 tokens, or 1,000,000 for 1M
//! models.

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Claude Code's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

/// The text of a message in Anthropic's shape (Claude Code's transcript, and Factory Droid's):
/// its `content`'s `text` blocks, one per line, trimmed; `None` when that is empty (a message of
/// only tool calls).
pub fn message_text(message: &Value) -> Option<String> {
    let text = message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|part| part["type"] == "text")
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

impl TranscriptFormat for Transcript {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        // Cheap pre-filter: most lines are not usage records and need no JSON parse.
        let marker = if line.contains("compact_boundary") {
            "compact_boundary"
        } else {
            "\"usage\""
        };
        if !line.contains(marker) {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
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
        Some(LineUsage::Usage {
            used: part("input_tokens")
                + part("cache_creation_input_tokens")
                + part("cache_read_input_tokens"),
            window: None,
            model: message["model"].as_str().map(str::to_owned),
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        if !line.contains("\"assistant\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        if v["type"] != "assistant" || v["isSidechain"] == true {
            return None;
        }
        message_text(&v["message"])
    }

    fn default_window(&self, model: Option<&str>) -> u64 {
        let model = model.unwrap_or_default();
        if model.contains("[1m]") || model.contains("opus-5") {
            1_000_000
        } else {
            200_000
        }
    }
}

#[cfg(test)]
mod tests {
    //! Context usage and replies from a real transcript excerpt.

    use checkpoint_engine::context::{ContextUsage, last_reply, read_usage, window};

    use checkpoint_testkit::written;

    use super::Transcript;

    fn excerpt() -> String {
        checkpoint_testkit::transcript_excerpt("claude")
    }

    #[test]
    fn claude_compaction_boundary_after_the_last_usage_wins() {
        let text = excerpt();
        let (_d, path) = written(&text, "t.jsonl");
        assert_eq!(
            read_usage(&Transcript, &path).unwrap(),
            Some(ContextUsage {
                used: 2616,
                window: None,
                model: None,
            })
        );
        // Without the boundary, the last main-thread assistant usage counts: 2200 + 100 + 32500.
        let before: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("compact_boundary"))
            .collect();
        let (_d, path) = written(&before.join("\n"), "t.jsonl");
        assert_eq!(
            read_usage(&Transcript, &path).unwrap().unwrap().used,
            34_800
        );
    }

    #[test]
    fn claude_sidechains_and_synthetic_messages_are_skipped() {
        let main = r#"{"type":"assistant","isSidechain":false,"message":{"model":"claude-opus-5-5","usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30}}}"#;
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"model":"claude-opus-5-5","usage":{"input_tokens":99999}}}"#;
        let synthetic = r#"{"type":"assistant","isSidechain":false,"message":{"model":"<synthetic>","usage":{"input_tokens":0}}}"#;
        let (_d, path) = written(&[main, side, synthetic].join("\n"), "t.jsonl");
        assert_eq!(read_usage(&Transcript, &path).unwrap().unwrap().used, 60);
    }

    #[test]
    fn windows_and_percentages() {
        let usage = ContextUsage {
            used: 170_000,
            window: None,
            model: None,
        };
        assert_eq!(
            window(Some(&Transcript), Some("claude-sonnet-4"), &usage, None),
            Some(200_000)
        );
        assert_eq!(
            window(Some(&Transcript), Some("claude-opus-5-5"), &usage, None),
            Some(1_000_000)
        );
        assert_eq!(
            window(Some(&Transcript), Some("claude-sonnet-4[1m]"), &usage, None),
            Some(1_000_000)
        );
        assert_eq!(
            window(Some(&Transcript), None, &usage, Some(180_000)),
            Some(180_000)
        );
    }

    #[test]
    fn last_replies_from_claudes_transcript() {
        let (_d, path) = written(&excerpt(), "t.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Tests pass now. Done.")
        );
        // A tool call without text, a sidechain, nothing at all.
        let claude = [
            r#"{"type":"assistant","isSidechain":false,"message":{"content":[{"type":"text","text":"Main."}]}}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"Side."}]}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"content":[{"type":"tool_use","id":"t"}]}}"#,
        ];
        let (_d, path) = written(&claude.join("\n"), "t.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Main.")
        );
    }
}
