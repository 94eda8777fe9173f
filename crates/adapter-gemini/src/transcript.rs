//! Gemini CLI's transcript, `~/.gemini/tmp/<project>/chats/session-*.jsonl`: one record per line.
//! Context usage is the last `type: "gemini"` record's `tokens.input`; its reply text is the
//! record's `content`. The window is not written down: 1,048,576 tokens.

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Gemini CLI's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

impl TranscriptFormat for Transcript {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        // Cheap pre-filter: most lines are not usage records and need no JSON parse.
        if !line.contains("\"tokens\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        (v["type"] == "gemini").then_some(())?;
        Some(LineUsage::Usage {
            used: v["tokens"]["input"].as_u64()?,
            window: None,
            model: v["model"].as_str().map(str::to_owned),
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        if !line.contains("\"gemini\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        if v["type"] != "gemini" {
            return None;
        }
        let text = v["content"].as_str()?.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    fn default_window(&self, _model: Option<&str>) -> u64 {
        1_048_576
    }
}

#[cfg(test)]
mod tests {
    //! Context usage and replies from a real transcript excerpt and a generated large one.

    use std::io::Write;

    use checkpoint_engine::context::{ContextUsage, last_reply, read_usage, window};

    use checkpoint_testkit::written;

    use super::Transcript;

    fn excerpt() -> String {
        checkpoint_testkit::transcript_excerpt("gemini")
    }

    #[test]
    fn gemini_last_record_input_tokens() {
        let (_d, path) = written(&excerpt(), "session.jsonl");
        assert_eq!(
            read_usage(&Transcript, &path).unwrap(),
            Some(ContextUsage {
                used: 35_500,
                window: None,
                model: Some("gemini-3.8-flash".into()),
            })
        );
    }

    #[test]
    fn usage_far_back_in_a_big_tail_is_found_and_missing_usage_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        writeln!(file, r#"{{"type":"gemini","tokens":{{"input":777}}}}"#).unwrap();
        let filler = format!(r#"{{"type":"user","content":"{}"}}"#, "x".repeat(1000));
        for _ in 0..500 {
            writeln!(file, "{filler}").unwrap();
        }
        drop(file);
        // ~500 KB of lines without usage after the record: found by widening the tail.
        assert_eq!(read_usage(&Transcript, &path).unwrap().unwrap().used, 777);
        let (_d, empty) = written("", "empty.jsonl");
        assert_eq!(read_usage(&Transcript, &empty).unwrap(), None);
        assert!(read_usage(&Transcript, &dir.path().join("missing.jsonl")).is_err());
    }

    #[test]
    fn the_window_is_geminis() {
        let usage = ContextUsage {
            used: 170_000,
            window: None,
            model: None,
        };
        assert_eq!(
            window(Some(&Transcript), None, &usage, None).unwrap(),
            1_048_576
        );
    }

    #[test]
    fn last_replies_from_geminis_transcript() {
        let (_d, path) = written(&excerpt(), "t.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Resumed.")
        );
        let (_d, path) = written("", "t.jsonl");
        assert_eq!(last_reply(&Transcript, &path).unwrap(), None);
    }
}
