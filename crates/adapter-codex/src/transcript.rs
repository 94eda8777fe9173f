//! Codex CLI's transcript, the rollout `~/.codex/sessions/Y/M/D/rollout-*.jsonl` (maybe compressed
//! to `.jsonl.zst`). Context usage is the last `event_msg` `token_count`'s
//! `info.last_token_usage.input_tokens`, with the window in `info.model_context_window`. Codex
//! writes a `token_usage_record` as soon as a reply is in, but the `token_count` only after the
//! reply's tool calls have run: a newer record takes the window of the `token_count` before it.
//! Reply text is a `response_item` assistant `message`'s `output_text` parts.

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Codex CLI's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

impl TranscriptFormat for Transcript {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        // Cheap pre-filter: most lines are not usage records and need no JSON parse.
        let marker = if line.contains("token_usage_record") {
            "token_usage_record"
        } else {
            "token_count"
        };
        if !line.contains(marker) {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        if v["type"] == "token_usage_record" {
            return Some(LineUsage::Usage {
                used: v["payload"]["usage"]["input_tokens"].as_u64()?,
                window: None,
                model: None,
            });
        }
        let info = (v["payload"]["type"] == "token_count").then(|| &v["payload"]["info"])?;
        Some(LineUsage::Usage {
            used: info["last_token_usage"]["input_tokens"].as_u64()?,
            window: info["model_context_window"].as_u64(),
            model: None,
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        if !line.contains("\"assistant\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let payload = &v["payload"];
        let reply = v["type"] == "response_item"
            && payload["type"] == "message"
            && payload["role"] == "assistant";
        if !reply {
            return None;
        }
        let text = payload["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|part| part["type"] == "output_text")
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// Codex states the window in every `token_count`; before the first one, 200,000 tokens.
    fn default_window(&self, _model: Option<&str>) -> u64 {
        200_000
    }

    fn window_from_earlier_record(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    //! Context usage and replies from a real rollout excerpt, plain and compressed.

    use checkpoint_engine::context::{ContextUsage, last_reply, read_usage, window};

    use checkpoint_testkit::written;

    use super::Transcript;

    fn excerpt() -> String {
        checkpoint_testkit::transcript_excerpt("codex")
    }

    #[test]
    fn codex_token_count_with_window() {
        let (_d, path) = written(&excerpt(), "rollout.jsonl");
        let usage = read_usage(&Transcript, &path).unwrap().unwrap();
        assert_eq!(
            usage,
            ContextUsage {
                used: 34_800,
                window: Some(258_400),
                model: None,
            }
        );
        assert_eq!(
            usage.percent_of(window(Some(&Transcript), None, &usage, None).unwrap()),
            13
        );
    }

    #[test]
    fn codex_compressed_rollouts_are_read() {
        let text = excerpt();
        let packed = ruzstd::encoding::compress_to_vec(
            text.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl.zst");
        std::fs::write(&path, packed).unwrap();
        assert_eq!(
            read_usage(&Transcript, &path).unwrap().unwrap().used,
            34_800
        );
    }

    #[test]
    fn codex_usage_record_before_its_token_count_keeps_the_earlier_window() {
        let mut text = excerpt();
        // The next reply's record is written before its token_count event.
        text.push_str(
            r#"{"type":"token_usage_record","payload":{"usage":{"input_tokens":170000,"output_tokens":5}}}"#,
        );
        text.push('\n');
        let (_d, path) = written(&text, "rollout.jsonl");
        let usage = read_usage(&Transcript, &path).unwrap().unwrap();
        assert_eq!((usage.used, usage.window), (170_000, Some(258_400)));
    }

    #[test]
    fn last_replies_from_codexs_rollout() {
        let codex = [
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Schema created."}]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command"}}"#,
        ];
        let (_d, path) = written(&codex.join("\n"), "rollout.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Schema created.")
        );
    }
}
