//! Copilot CLI's transcript, the session's event log
//! `~/.copilot/session-state/<session>/events.jsonl` (the `transcriptPath` of `agentStop`). Context
//! usage is the last `session.usage_record`'s `data.usage.inputTokens`, with the window in its
//! `maxPromptTokens` and the model in its `model`; reply text is an `assistant.message`'s
//! `data.content`.

use checkpoint_core::agent::{LineUsage, TranscriptFiles, TranscriptFormat};
use checkpoint_core::turn_event::{TurnEvent, exit_code_in};
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

    /// `session-state/<session>/events.jsonl`.
    fn files(&self) -> Option<TranscriptFiles> {
        Some(TranscriptFiles {
            dir: "session-state",
            depth: 1,
            is_transcript: |path| path.iter().count() == 2 && path.ends_with("events.jsonl"),
        })
    }

    /// `session.start` names the session, `user.message` is a prompt, `assistant.message` a
    /// reply with its `toolRequests` (`bash`, the edit tools), `tool.execution_complete` a
    /// call's result (the exit code its `result.content` states, else its `success`).
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let data = &v["data"];
        let text = |key: &str| data[key].as_str().unwrap_or_default().to_owned();
        out.extend(TurnEvent::at(&v));
        match v["type"].as_str() {
            Some("session.start") => out.push(TurnEvent::Session(text("sessionId"))),
            Some("user.message") => out.push(TurnEvent::Prompt(text("content"))),
            Some("assistant.message") => {
                for call in data["toolRequests"].as_array().into_iter().flatten() {
                    match call["name"].as_str() {
                        Some("edit" | "create" | "write" | "str_replace_editor") => {
                            out.push(TurnEvent::Edit);
                        }
                        Some("bash") => out.push(TurnEvent::Shell {
                            id: call["toolCallId"].as_str().unwrap_or_default().to_owned(),
                            command: call["arguments"]["command"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        }),
                        _ => {}
                    }
                }
                out.push(TurnEvent::Reply(text("content")));
            }
            Some("tool.execution_complete") => {
                let result = &data["result"];
                let said = (result["content"].as_str())
                    .or_else(|| result.as_str())
                    .and_then(exit_code_in);
                out.push(TurnEvent::Result {
                    id: text("toolCallId"),
                    ok: said
                        .map(|code| code == 0)
                        .or_else(|| data["success"].as_bool()),
                });
            }
            _ => {}
        }
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

    #[test]
    fn copilot_turns_for_history() {
        use checkpoint_core::claim_history::Verification::*;
        let event = |at: u32, kind: &str, data: &str| {
            format!(
                r#"{{"type":"{kind}","data":{data},"id":"e{at}","timestamp":"2026-11-23T20:18:{at:02}.000Z","parentId":null}}"#
            )
        };
        let asks = |at, content: &str, requests: &str| {
            event(
                at,
                "assistant.message",
                &format!(
                    r#"{{"messageId":"m{at}","model":"gpt-4.1","content":"{content}","toolRequests":[{requests}],"turnId":"0"}}"#
                ),
            )
        };
        let request = |id: &str, name: &str, arguments: &str| {
            format!(
                r#"{{"toolCallId":"{id}","name":"{name}","arguments":{arguments},"type":"function"}}"#
            )
        };
        let complete = |at, id: &str, content: &str| {
            event(
                at,
                "tool.execution_complete",
                &format!(
                    r#"{{"toolCallId":"{id}","success":true,"result":{{"content":"{content}"}}}}"#
                ),
            )
        };
        let excerpt = checkpoint_testkit::transcript_excerpt("copilot");
        let real: Vec<&str> = excerpt.lines().collect();
        let lines = [
            real[0].to_owned(),
            event(1, "user.message", r#"{"content":"fix add"}"#),
            asks(2, "", &request("call_1", "edit", r#"{"path":"calc.py"}"#)),
            complete(3, "call_1", "File edited"),
            asks(
                4,
                "",
                &request(
                    "call_2",
                    "bash",
                    r#"{"command":"npm test","description":"test"}"#,
                ),
            ),
            // The tool ran, the tests did not pass.
            complete(
                5,
                "call_2",
                "1 failing\n<shellId: 1 completed with exit code 1>",
            ),
            real[1].to_owned(),
            asks(6, "Done.", ""),
            event(7, "user.message", r#"{"content":"add sub"}"#),
            asks(8, "", &request("call_3", "create", r#"{"path":"sub.js"}"#)),
            asks(9, "Implemented.", ""),
        ];
        let text = lines.join("\n");
        assert_eq!(
            checkpoint_testkit::claim_classes(&Transcript, &text, "events.jsonl"),
            [Some(Failed), Some(NeverRan)]
        );
        let (_d, path) = written(&text, "events.jsonl");
        let turns = checkpoint_engine::claim_history::read_turns(&Transcript, &path).unwrap();
        assert_eq!(
            turns.session.as_deref(),
            Some("6387ea71-f18b-4543-9010-9ddf1b8f4627")
        );
    }
}
