//! Factory Droid's transcript, `~/.factory/sessions/<cwd with / as ->/<session>.jsonl`: one
//! record per line, a message as `{"type":"message","message":{"role",…,"content":[…]}}` with
//! Anthropic-style content blocks. A reply's text is the text blocks of an assistant message, read
//! as Claude Code's are.
//!
//! The transcript holds no token counts: Droid keeps the last call's usage in the session's
//! `<session>.settings.json` beside it (`lastCallTokenUsage`), which the gate does not read, so
//! no context usage is known from it.

use checkpoint_core::agent::{LineUsage, TranscriptFormat};
use serde_json::Value;

/// Factory Droid's transcript format.
#[derive(Debug, Clone, Copy)]
pub struct Transcript;

impl TranscriptFormat for Transcript {
    fn line_usage(&self, _line: &str) -> Option<LineUsage> {
        None
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        // Cheap pre-filter: most lines are not an assistant's and need no JSON parse.
        if !line.contains("\"assistant\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        if v["type"] != "message" || v["message"]["role"] != "assistant" {
            return None;
        }
        adapter_claude::transcript::message_text(&v["message"])
    }

    fn default_window(&self, _model: Option<&str>) -> u64 {
        200_000
    }
}

#[cfg(test)]
mod tests {
    //! Replies from a real transcript excerpt.

    use checkpoint_engine::context::{last_reply, read_usage};
    use checkpoint_testkit::written;

    use super::Transcript;

    fn excerpt() -> String {
        checkpoint_testkit::transcript_excerpt("droid")
    }

    #[test]
    fn the_last_reply_is_the_last_assistant_text() {
        let (_d, path) = written(&excerpt(), "t.jsonl");
        assert_eq!(
            last_reply(&Transcript, &path).unwrap().as_deref(),
            Some("Really done.")
        );
        // A reply of only a tool call is none; a tool result (a user message) is none.
        let excerpt = excerpt();
        let lines: Vec<&str> = excerpt.lines().collect();
        let tool_call = lines[1].replace(r#"{"type":"text","text":"Running it."},"#, "");
        for line in [tool_call.as_str(), lines[2]] {
            let (_d, path) = written(&format!("{line}\n"), "t.jsonl");
            assert_eq!(last_reply(&Transcript, &path).unwrap(), None, "{line}");
        }
    }

    #[test]
    fn no_usage_is_read_from_the_transcript() {
        let (_d, path) = written(&excerpt(), "t.jsonl");
        assert_eq!(read_usage(&Transcript, &path).unwrap(), None);
    }
}
