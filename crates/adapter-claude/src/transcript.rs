//! Claude Code's transcript, `~/.claude/projects/<slug>/<session>.jsonl`: one JSON object per
//! line. Context usage is the last main-thread `assistant` line's `message.usage`,
//! `input + cache_creation + cache_read` tokens; a `system`/`compact_boundary` line after it means
//! the context now holds the boundary's `postTokens`. Sidechain (subagent) lines and `<synthetic>`
//! messages do not count. The window is not written down: 200,000 tokens, or 1,000,000 for 1M
//! models.

use checkpoint_core::agent::{LineUsage, TranscriptFiles, TranscriptFormat};
use checkpoint_core::turn_event::TurnEvent;
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

    /// `projects/<slug>/<session>.jsonl` (not the subagents' `<session>/subagents/*.jsonl`).
    fn files(&self) -> Option<TranscriptFiles> {
        Some(TranscriptFiles {
            dir: "projects",
            depth: 1,
            is_transcript: |path| {
                path.components().count() == 2 && path.extension().is_some_and(|e| e == "jsonl")
            },
        })
    }

    /// Main-thread lines only. A `user` line is a prompt (text, not `isMeta`) or carries
    /// `tool_result`s (`is_error` for a command that failed); an `assistant` line carries
    /// `tool_use`s (`Bash`, and the edit tools) and text.
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        if !line.contains("\"user\"") && !line.contains("\"assistant\"") {
            return;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if v["isSidechain"] == true {
            return;
        }
        TurnEvent::session_and_time(&v, out);
        let content = &v["message"]["content"];
        let parts = content.as_array().map_or(&[][..], Vec::as_slice);
        match v["type"].as_str() {
            Some("user") if v["isMeta"] != true => {
                if let Some(text) = content.as_str() {
                    out.push(TurnEvent::Prompt(text.to_owned()));
                }
                for part in parts {
                    match part["type"].as_str() {
                        Some("text") => {
                            let text = part["text"].as_str().unwrap_or_default();
                            out.push(TurnEvent::Prompt(text.to_owned()));
                        }
                        Some("tool_result") => out.push(TurnEvent::Result {
                            id: part["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                            ok: Some(part["is_error"] != true),
                        }),
                        _ => {}
                    }
                }
            }
            Some("assistant") => {
                for part in parts.iter().filter(|p| p["type"] == "tool_use") {
                    match part["name"].as_str() {
                        Some("Edit" | "MultiEdit" | "Write" | "NotebookEdit") => {
                            out.push(TurnEvent::Edit);
                        }
                        Some("Bash") => out.push(TurnEvent::Shell {
                            id: part["id"].as_str().unwrap_or_default().to_owned(),
                            command: part["input"]["command"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        }),
                        _ => {}
                    }
                }
                out.extend(message_text(&v["message"]).map(TurnEvent::Reply));
            }
            _ => {}
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

    #[test]
    fn claude_turns_for_history() {
        use checkpoint_core::claim_history::Verification::*;
        let line = |kind: &str, content: &str, at: u32| {
            format!(
                r#"{{"parentUuid":null,"isSidechain":false,"type":"{kind}","message":{{"role":"{kind}","content":{content}}},"uuid":"u{at}","timestamp":"2026-11-22T02:27:{at:02}.000Z","sessionId":"651985dd"}}"#
            )
        };
        let tool = |id: &str, name: &str, input: &str| {
            format!(r#"[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]"#)
        };
        let result = |id: &str, error: bool| {
            format!(
                r#"[{{"tool_use_id":"{id}","type":"tool_result","content":"Exit code 1","is_error":{error}}}]"#
            )
        };
        let edit = tool(
            "toolu_1",
            "Edit",
            r#"{"file_path":"/home/dev/project/calc.py","old_string":"-","new_string":"+"}"#,
        );
        let pytest = |id| {
            tool(
                id,
                "Bash",
                r#"{"command":"python -m pytest -q","description":"Run the tests"}"#,
            )
        };
        let excerpt = excerpt();
        let done = excerpt.lines().nth(1).unwrap();
        let lines = [
            line("user", r#""fix add""#, 1),
            line("assistant", &edit, 2),
            line("assistant", &pytest("toolu_2"), 3),
            line("user", &result("toolu_2", true), 4),
            // A subagent's passing run is not the main thread's.
            line("assistant", &pytest("toolu_s"), 5)
                .replace(r#""isSidechain":false"#, r#""isSidechain":true"#),
            line("user", &result("toolu_s", false), 6)
                .replace(r#""isSidechain":false"#, r#""isSidechain":true"#),
            done.to_owned(),
            // The gate's block, fed back: the turn goes on and the agent runs the tests.
            line(
                "user",
                r#""Stop hook feedback:\nCheckpoint — 1 test failed""#,
                7,
            ),
            line("assistant", &pytest("toolu_3"), 8),
            line("user", &result("toolu_3", false), 9),
            line("assistant", r#"[{"type":"text","text":"Fixed."}]"#, 10),
            line("user", r#"[{"type":"text","text":"now sub"}]"#, 11),
            line("assistant", &edit, 12),
            line(
                "assistant",
                r#"[{"type":"text","text":"Implemented."}]"#,
                13,
            ),
            line("user", r#""<command-name>/clear</command-name>""#, 14)
                .replace(r#""isSidechain""#, r#""isMeta":true,"isSidechain""#),
            "{not json".to_owned(),
        ];
        assert_eq!(
            checkpoint_testkit::claim_classes(&Transcript, &lines.join("\n"), "t.jsonl"),
            [Some(Verified), Some(NeverRan)]
        );
    }
}
