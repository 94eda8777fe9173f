//! Gemini CLI's transcript, `~/.gemini/tmp/<project>/chats/session-*.jsonl`: one record per line.
//! Context usage is the last `type: "gemini"` record's `tokens.input`; its reply text is the
//! record's `content`. The window is not written down: 1,048,576 tokens.

use checkpoint_core::agent::{LineUsage, TranscriptFiles, TranscriptFormat};
use checkpoint_core::turn_event::{TurnEvent, exit_code_in};
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
        reply_of(&v)
    }

    fn default_window(&self, _model: Option<&str>) -> u64 {
        1_048_576
    }

    /// `tmp/<project>/chats/session-*.jsonl`.
    fn files(&self) -> Option<TranscriptFiles> {
        Some(TranscriptFiles {
            dir: "tmp",
            depth: 2,
            is_transcript: |path| {
                let mut parts = path.iter().skip(1);
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                parts.next().is_some_and(|dir| dir == "chats")
                    && path.iter().count() == 3
                    && name.starts_with("session-")
                    && name.ends_with(".jsonl")
            },
        })
    }

    /// A `user` record is a prompt; a `gemini` record is a reply whose `toolCalls` hold each
    /// call with its result: `run_shell_command` (its `status`, and the `Exit Code: N` its output
    /// states on a failure) and the edit tools. A record may be written twice (the later copy
    /// adds `toolCalls`); a session id is a record's `sessionId`.
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        TurnEvent::session_and_time(&v, out);
        match v["type"].as_str() {
            Some("user") => out.push(TurnEvent::Prompt(text_of(&v["content"]))),
            Some("gemini") => {
                for call in v["toolCalls"].as_array().into_iter().flatten() {
                    tool_call(call, out);
                }
                out.extend(reply_of(&v).map(TurnEvent::Reply));
            }
            _ => {}
        }
    }
}

/// The text of a record's `content`: a string, or the `text` of its parts.
fn text_of(content: &Value) -> String {
    match content.as_array() {
        Some(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        None => content.as_str().unwrap_or_default().to_owned(),
    }
}

/// The events of one of a `gemini` record's `toolCalls`.
fn tool_call(call: &Value, out: &mut Vec<TurnEvent>) {
    let id = call["id"].as_str().unwrap_or_default().to_owned();
    match call["name"].as_str() {
        Some("write_file" | "replace" | "edit" | "smart_edit") => out.push(TurnEvent::Edit),
        Some("run_shell_command") => {
            let command = call["args"]["command"].as_str().unwrap_or_default();
            let output: String = (call["result"].as_array().into_iter().flatten())
                .filter_map(|r| r["functionResponse"]["response"]["output"].as_str())
                .collect();
            let ok = match (call["status"].as_str(), exit_code_in(&output)) {
                (Some("error" | "cancelled"), _) => Some(false),
                (_, Some(code)) => Some(code == 0),
                (Some("success"), None) => Some(true),
                _ => None,
            };
            out.push(TurnEvent::Shell {
                id: id.clone(),
                command: command.to_owned(),
            });
            out.push(TurnEvent::Result { id, ok });
        }
        _ => {}
    }
}

/// A `gemini` record's reply text; `None` for another record, and without text.
fn reply_of(v: &Value) -> Option<String> {
    if v["type"] != "gemini" {
        return None;
    }
    let text = v["content"].as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
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

    #[test]
    fn gemini_turns_for_history() {
        use checkpoint_core::claim_history::Verification::*;
        let user = |at: u32, text: &str| {
            format!(
                r#"{{"id":"u{at}","timestamp":"2026-11-22T02:27:{at:02}.000Z","type":"user","content":[{{"text":{}}}]}}"#,
                serde_json::to_string(text).unwrap()
            )
        };
        let gemini = |at: u32, content: &str, calls: &[String]| {
            format!(
                r#"{{"id":"g{at}","timestamp":"2026-11-22T02:27:{at:02}.000Z","type":"gemini","content":"{content}","thoughts":[],"tokens":{{"input":100,"output":5}},"model":"gemini-3.8-flash","toolCalls":[{}]}}"#,
                calls.join(",")
            )
        };
        let shell = |id: &str, command: &str, output: &str| {
            let output = serde_json::to_string(output).unwrap();
            format!(
                r#"{{"id":"{id}","name":"run_shell_command","args":{{"command":"{command}"}},"result":[{{"functionResponse":{{"id":"{id}","name":"run_shell_command","response":{{"output":{output}}}}}}}],"status":"success"}}"#
            )
        };
        let edit = |name: &str| {
            format!(
                r#"{{"id":"{name}_1","name":"{name}","args":{{"file_path":"calc.py"}},"result":[],"status":"success"}}"#
            )
        };
        let excerpt = excerpt();
        let hello = excerpt.lines().nth(1).unwrap();
        let failing = shell(
            "s1",
            "pytest -q",
            "Output: 1 failed\nExit Code: 1\nProcess Group PGID: 1",
        );
        let lines = [
            r#"{"sessionId":"62faf3c7-05c1-49bd-a221-ae347fb0b3c7","projectHash":"a1","startTime":"2026-11-22T02:27:00.000Z","kind":"main"}"#.to_owned(),
            user(1, "fix add"),
            gemini(2, "", &[edit("replace")]),
            hello.to_owned(),
            // Written twice: the call counts once.
            gemini(3, "", std::slice::from_ref(&failing)),
            gemini(3, "", &[failing]),
            gemini(4, "Done.", &[]),
            user(5, "Checkpoint — 1 test failed: tests/test_calc.py::test_add"),
            gemini(6, "", &[shell("s2", "pytest -q", "Output: 3 passed")]),
            gemini(7, "Fixed.", &[]),
            user(8, "now sub"),
            gemini(9, "Implemented.", &[edit("write_file"), shell("s3", "echo pytest", "Output: pytest")]),
        ];
        assert_eq!(
            checkpoint_testkit::claim_classes(&Transcript, &lines.join("\n"), "session-x.jsonl"),
            [Some(Verified), Some(NeverRan)]
        );
    }
}
