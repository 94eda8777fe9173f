//! Qwen Code's transcript, `~/.qwen/projects/<cwd with / as ->/chats/<session>.jsonl`: one
//! record per line. Context usage is the last `type: "assistant"` record's
//! `usageMetadata.promptTokenCount`; its reply text is the text parts of its `message.parts`. The
//! window is not written down (the `Stop` payload's `context_limit` said 200,000 for a model Qwen
//! does not know).

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Qwen Code's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

/// The record of a line that may be an assistant's, parsed only when it names that type.
fn assistant_record(line: &str) -> Option<Value> {
    if !line.contains("\"assistant\"") {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    (v["type"] == "assistant").then_some(v)
}

impl TranscriptFormat for Transcript {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        // Cheap pre-filter: most lines are not usage records and need no JSON parse.
        if !line.contains("\"promptTokenCount\"") {
            return None;
        }
        let v = assistant_record(line)?;
        Some(LineUsage::Usage {
            used: v["usageMetadata"]["promptTokenCount"].as_u64()?,
            window: None,
            model: v["model"].as_str().map(str::to_owned),
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        let v = assistant_record(line)?;
        let parts = v["message"]["parts"].as_array()?;
        let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        let text = text.concat();
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    fn default_window(&self, _model: Option<&str>) -> u64 {
        200_000
    }
}

#[cfg(test)]
mod tests {
    //! Context usage and replies from a real transcript excerpt.

    use checkpoint_engine::context::{ContextUsage, last_reply, read_usage};
    use checkpoint_testkit::written;

    use super::Transcript;

    fn excerpt() -> String {
        checkpoint_testkit::transcript_excerpt("qwen")
    }

    #[test]
    fn qwen_last_assistant_prompt_tokens() {
        let (_d, path) = written(&excerpt(), "session.jsonl");
        assert_eq!(
            read_usage(&Transcript, &path).unwrap(),
            Some(ContextUsage {
                used: 100,
                window: None,
                model: Some("e2e-mock".into()),
            })
        );
        // Without its last record, the one before it (12,345 tokens) is the last.
        let excerpt = excerpt();
        let lines: Vec<&str> = excerpt.lines().collect();
        let earlier = lines[..lines.len() - 1].join("\n") + "\n";
        let (_d, path) = written(&earlier, "session.jsonl");
        assert_eq!(
            read_usage(&Transcript, &path).unwrap().unwrap().used,
            12_345
        );
    }

    #[test]
    fn last_replies_from_qwens_transcript() {
        let (_d, path) = written(&excerpt(), "t.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Really done.")
        );
        // A tool result (`"role":"user"` parts) is no reply; a reply of only a tool call is none.
        let tool_only = r#"{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command"}}]}}"#;
        let (_d, path) = written(&format!("{tool_only}\n"), "t.jsonl");
        assert_eq!(last_reply(&Transcript, &path).unwrap(), None);
    }
}
