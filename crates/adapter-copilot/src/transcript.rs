//! Copilot CLI's transcript, the session's event log
//! `~/.copilot/session-state/<session>/events.jsonl` (the `transcriptPath` of `agentStop`). Context
//! usage is the last `session.usage_record`'s `data.usage.inputTokens`, with the window in its
//! `maxPromptTokens` and the model in its `model`; reply text is an `assistant.message`'s
//! `data.content`.

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Copilot CLI's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

impl TranscriptFormat for Transcript {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        if !line.contains("session.usage_record") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let usage = (v["type"] == "session.usage_record").then(|| &v["data"]["usage"])?;
        Some(LineUsage::Usage {
            used: usage["inputTokens"].as_u64()?,
            window: usage["maxPromptTokens"].as_u64(),
            model: usage["model"].as_str().map(str::to_owned),
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        if !line.contains("assistant.message") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let text = (v["type"] == "assistant.message").then(|| v["data"]["content"].as_str())??;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// Copilot states the window in every usage record; before the first one, 128,000 tokens.
    fn default_window(&self, _model: Option<&str>) -> u64 {
        128_000
    }
}

#[cfg(test)]
mod tests {
    //! Context usage and replies from a real event log excerpt.

    use checkpoint_engine::context::{ContextUsage, last_reply, read_usage, window};
    use checkpoint_testkit::written;

    use super::Transcript;

    #[test]
    fn usage_records_with_their_window() {
        let (_d, path) = written(
            &checkpoint_testkit::transcript_excerpt("copilot"),
            "events.jsonl",
        );
        let usage = read_usage(&Transcript, &path).unwrap().unwrap();
        assert_eq!(
            usage,
            ContextUsage {
                used: 1_000,
                window: Some(64_000),
                model: Some("gpt-4.1".to_owned()),
            }
        );
        assert_eq!(
            usage.percent_of(window(Some(&Transcript), None, &usage, None).unwrap()),
            2
        );
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Nothing more.")
        );
    }

    #[test]
    fn other_lines_say_nothing() {
        let lines = [
            r#"{"type":"user.message","data":{"content":"session.usage_record"}}"#,
            r#"{"type":"assistant.message","data":{"content":"  ","toolRequests":[]}}"#,
            r#"{"type":"session.usage_record","data":{"usage":{"outputTokens":3}}}"#,
        ];
        let (_d, path) = written(&lines.join("\n"), "events.jsonl");
        assert_eq!(read_usage(&Transcript, &path).unwrap(), None);
        assert_eq!(last_reply(&Transcript, &path).unwrap(), None);
    }
}
