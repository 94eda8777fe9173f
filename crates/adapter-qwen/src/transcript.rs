//! Qwen Code's transcript, `~/.qwen/projects/<cwd with / as ->/chats/<session>.jsonl`: one
//! record per line. Context usage is the last `type: "assistant"` record's
//! `usageMetadata.promptTokenCount`; its reply text is the text parts of its `message.parts`. The
//! window is not written down (the `Stop` payload's `context_limit` said 200,000 for a model Qwen
//! does not know).

use checkpoint_core::agent::{LineUsage, TranscriptFiles, TranscriptFormat};
use checkpoint_core::turn_event::{TurnEvent, exit_code_in};
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
        text_of(&assistant_record(line)?)
    }

    fn default_window(&self, _model: Option<&str>) -> u64 {
        200_000
    }

    /// `projects/<cwd with / as ->/chats/<session>.jsonl`.
    fn files(&self) -> Option<TranscriptFiles> {
        Some(TranscriptFiles {
            dir: "projects",
            depth: 2,
            is_transcript: |path| {
                path.iter().count() == 3
                    && path.iter().nth(1).is_some_and(|dir| dir == "chats")
                    && path.extension().is_some_and(|e| e == "jsonl")
            },
        })
    }

    /// A `user` record is a prompt; an `assistant` record's `message.parts` hold its text and
    /// its `functionCall`s (`run_shell_command`, the edit tools); a `tool_result` record's
    /// `toolCallResult` gives the call's exit code (`resultDisplay.exitCode`, else the
    /// `Exit Code: N` of its output, else its `status`).
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        TurnEvent::session_and_time(&v, out);
        let parts = v["message"]["parts"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        match v["type"].as_str() {
            Some("user") => out.push(TurnEvent::Prompt(text_of(&v).unwrap_or_default())),
            Some("assistant") => {
                for call in parts.iter().map(|p| &p["functionCall"]) {
                    match call["name"].as_str() {
                        Some("write_file" | "edit" | "replace") => out.push(TurnEvent::Edit),
                        Some("run_shell_command") => out.push(TurnEvent::Shell {
                            id: call["id"].as_str().unwrap_or_default().to_owned(),
                            command: call["args"]["command"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        }),
                        _ => {}
                    }
                }
                out.extend(text_of(&v).map(TurnEvent::Reply));
            }
            Some("tool_result") => {
                let result = &v["toolCallResult"];
                let output: String = parts
                    .iter()
                    .filter_map(|p| p["functionResponse"]["response"]["output"].as_str())
                    .collect();
                let code = (result["resultDisplay"]["exitCode"].as_i64())
                    .or_else(|| exit_code_in(&output));
                let ok = match (code, result["status"].as_str()) {
                    (Some(code), _) => Some(code == 0),
                    (None, Some(status)) => Some(status == "success"),
                    (None, None) => None,
                };
                out.push(TurnEvent::Result {
                    id: result["callId"].as_str().unwrap_or_default().to_owned(),
                    ok,
                });
            }
            _ => {}
        }
    }
}

/// The text parts of a record's `message.parts`, joined; `None` without text.
fn text_of(v: &Value) -> Option<String> {
    let parts = v["message"]["parts"].as_array()?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    let text = text.concat();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
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

    #[test]
    fn qwen_turns_for_history() {
        use checkpoint_core::claim_history::Verification::*;
        let record = |at: u32, kind: &str, rest: &str| {
            format!(
                r#"{{"uuid":"r{at}","sessionId":"37ae128b-db5d-4beb-8b1e-91732cc30ad2","timestamp":"2026-11-27T23:11:{at:02}.000Z","type":"{kind}","cwd":"/home/dev/project",{rest}}}"#
            )
        };
        let user = |at, text: &str| {
            record(
                at,
                "user",
                &format!(r#""message":{{"role":"user","parts":[{{"text":"{text}"}}]}}"#),
            )
        };
        let call = |at, id: &str, name: &str, args: &str| {
            record(
                at,
                "assistant",
                &format!(
                    r#""model":"e2e-mock","message":{{"role":"model","parts":[{{"functionCall":{{"id":"{id}","name":"{name}","args":{args}}}}}]}}"#
                ),
            )
        };
        let result = |at, id: &str, code: i64| {
            record(
                at,
                "tool_result",
                &format!(
                    r#""message":{{"role":"user","parts":[{{"functionResponse":{{"id":"{id}","name":"run_shell_command","response":{{"output":"Output: x\nExit Code: {code}"}}}}}}]}},"toolCallResult":{{"callId":"{id}","status":"success","resultDisplay":{{"type":"shell_result","exitCode":{code}}}}}"#
                ),
            )
        };
        let reply = |at, text: &str| {
            record(
                at,
                "assistant",
                &format!(
                    r#""model":"e2e-mock","message":{{"role":"model","parts":[{{"text":"{text}"}}]}}"#
                ),
            )
        };
        let excerpt = excerpt();
        let real: Vec<&str> = excerpt.lines().collect();
        let lines = [
            user(1, "fix add"),
            call(2, "c1", "edit", r#"{"file_path":"calc.py"}"#),
            call(
                3,
                "c2",
                "run_shell_command",
                r#"{"command":"uv run pytest"}"#,
            ),
            result(4, "c2", 0),
            call(5, "c3", "edit", r#"{"file_path":"calc.py"}"#),
            real[0].to_owned(),
            real[1].to_owned(),
            real[2].to_owned(),
            reply(6, "Done."),
            user(7, "again"),
            call(8, "c4", "write_file", r#"{"file_path":"sub.py"}"#),
            call(9, "c5", "run_shell_command", r#"{"command":"pytest"}"#),
            result(10, "c5", 1),
            reply(11, "Really done."),
        ];
        assert_eq!(
            checkpoint_testkit::claim_classes(&Transcript, &lines.join("\n"), "s.jsonl"),
            [Some(Stale), Some(Failed)]
        );
    }
}
