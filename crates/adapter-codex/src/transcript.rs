//! Codex CLI's transcript, the rollout `~/.codex/sessions/Y/M/D/rollout-*.jsonl` (maybe compressed
//! to `.jsonl.zst`). Context usage is the last `event_msg` `token_count`'s
//! `info.last_token_usage.input_tokens`, with the window in `info.model_context_window`. Codex
//! writes a `token_usage_record` as soon as a reply is in, but the `token_count` only after the
//! reply's tool calls have run: a newer record takes the window of the `token_count` before it.
//! Reply text is a `response_item` assistant `message`'s `output_text` parts.

use checkpoint_core::agent::{LineUsage, TranscriptFiles, TranscriptFormat};
use checkpoint_core::turn_event::{TurnEvent, exit_code_in};
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
        reply_of(&v)
    }

    /// Codex states the window in every `token_count`; before the first one, 200,000 tokens.
    fn default_window(&self, _model: Option<&str>) -> u64 {
        200_000
    }

    fn window_from_earlier_record(&self) -> bool {
        true
    }

    /// `sessions/Y/M/D/rollout-*.jsonl`, maybe compressed to `.jsonl.zst`.
    fn files(&self) -> Option<TranscriptFiles> {
        Some(TranscriptFiles {
            dir: "sessions",
            depth: 3,
            is_transcript: |path| {
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                name.starts_with("rollout-")
                    && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst"))
            },
        })
    }

    /// `session_meta` names the session; an `event_msg` `user_message` is a prompt and an
    /// `exec_command_end` a command's exit code; a `response_item` is a shell call
    /// (`function_call` with the command in its JSON `arguments`, `local_shell_call`), an
    /// `apply_patch` (an edit), a call's output (its exit code) or the assistant's message.
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let payload = &v["payload"];
        let id = |key: &str| payload[key].as_str().unwrap_or_default().to_owned();
        out.extend(TurnEvent::at(&v));
        match (v["type"].as_str(), payload["type"].as_str()) {
            (Some("session_meta"), _) => out.push(TurnEvent::Session(id("id"))),
            (Some("event_msg"), Some("user_message")) => {
                out.push(TurnEvent::Prompt(id("message")));
            }
            (Some("event_msg"), Some("exec_command_end")) => out.push(TurnEvent::Result {
                id: id("call_id"),
                ok: payload["exit_code"].as_i64().map(|code| code == 0),
            }),
            (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                if payload["name"] == "apply_patch" {
                    out.push(TurnEvent::Edit);
                    return;
                }
                let arguments = (payload["arguments"].as_str())
                    .and_then(|a| serde_json::from_str::<Value>(a).ok())
                    .unwrap_or_default();
                let command =
                    command_line(&arguments["cmd"]).or_else(|| command_line(&arguments["command"]));
                match command {
                    // The patch tool run through the shell, as older versions do.
                    Some(command) if command.trim_start().starts_with("apply_patch") => {
                        out.push(TurnEvent::Edit);
                    }
                    Some(command) => out.push(TurnEvent::Shell {
                        id: id("call_id"),
                        command,
                    }),
                    None => {}
                }
            }
            (Some("response_item"), Some("local_shell_call")) => {
                if let Some(command) = command_line(&payload["action"]["command"]) {
                    out.push(TurnEvent::Shell {
                        id: id("call_id"),
                        command,
                    });
                }
            }
            (Some("response_item"), Some("function_call_output")) => out.push(TurnEvent::Result {
                id: id("call_id"),
                ok: output_exit_code(&payload["output"]).map(|code| code == 0),
            }),
            (Some("response_item"), Some("message")) => {
                out.extend(reply_of(&v).map(TurnEvent::Reply))
            }
            _ => {}
        }
    }
}

/// A command as Codex writes it: a string, or an argv whose shell script (`bash -lc SCRIPT`) is
/// the command line.
fn command_line(command: &Value) -> Option<String> {
    if let Some(line) = command.as_str() {
        return Some(line.to_owned());
    }
    let argv: Vec<&str> = command
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match argv.as_slice() {
        [_, flag, script] if flag.starts_with('-') && flag.ends_with('c') => {
            Some((*script).to_owned())
        }
        _ => Some(argv.join(" ")),
    }
}

/// The exit code a call's output states: `metadata.exit_code` of an output that is JSON, else
/// the `Process exited with code N` (or `Exit code: N`) of its header, before `Output:` (the
/// command's own output could say anything).
fn output_exit_code(output: &Value) -> Option<i64> {
    let text = output.as_str()?;
    if let Ok(json) = serde_json::from_str::<Value>(text) {
        return json["metadata"]["exit_code"].as_i64();
    }
    let header = text.split("\nOutput:").next().unwrap_or(text);
    exit_code_in(header)
}

/// The text of a `response_item` assistant `message`'s `output_text` parts; `None` for any other
/// record, and without text.
fn reply_of(v: &Value) -> Option<String> {
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

    #[test]
    fn codex_turns_for_history_plain_and_compressed() {
        use checkpoint_core::claim_history::Verification::*;
        let item = |at: u32, kind: &str, payload: &str| {
            format!(
                r#"{{"timestamp":"2026-11-22T02:27:{at:02}.000Z","type":"{kind}","payload":{payload}}}"#
            )
        };
        let call = |id: &str, name: &str, arguments: &str| {
            let arguments = serde_json::to_string(arguments).unwrap();
            format!(
                r#"{{"type":"function_call","name":"{name}","arguments":{arguments},"call_id":"{id}"}}"#
            )
        };
        let output = |id: &str, output: &str| {
            let output = serde_json::to_string(output).unwrap();
            format!(r#"{{"type":"function_call_output","call_id":"{id}","output":{output}}}"#)
        };
        let reply = |text: &str| {
            format!(
                r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}"#
            )
        };
        let excerpt = excerpt();
        let usage: Vec<&str> = excerpt.lines().collect();
        let lines = [
            item(
                0,
                "session_meta",
                r#"{"id":"01a20114-5ac8-7ea3-954c-3a7738f33306","cwd":"/home/dev/project","originator":"codex_exec","cli_version":"0.169.0"}"#,
            ),
            item(
                1,
                "event_msg",
                r#"{"type":"user_message","message":"fix add","images":[]}"#,
            ),
            item(
                2,
                "response_item",
                r#"{"type":"custom_tool_call","status":"completed","call_id":"call_1","name":"apply_patch","input":"*** Begin Patch\n*** Update File: calc.py\n*** End Patch"}"#,
            ),
            usage[0].to_owned(),
            item(
                3,
                "response_item",
                &call(
                    "call_2",
                    "exec_command",
                    r#"{"cmd":"cargo test","workdir":"/home/dev/project"}"#,
                ),
            ),
            // The command's own output says "exit code 0"; the header says 101.
            item(
                4,
                "response_item",
                &output(
                    "call_2",
                    "Chunk ID: 1a2b\nWall time: 0.5 seconds\nProcess exited with code 101\nOriginal token count: 20\nOutput:\necho exit code 0\ntest result: FAILED",
                ),
            ),
            usage[1].to_owned(),
            item(
                5,
                "response_item",
                &call(
                    "call_3",
                    "shell",
                    r#"{"command":["bash","-lc","cargo test -q"]}"#,
                ),
            ),
            item(
                6,
                "response_item",
                &output(
                    "call_3",
                    r#"{"output":"ok","metadata":{"exit_code":0,"duration_seconds":0.2}}"#,
                ),
            ),
            item(
                7,
                "event_msg",
                r#"{"type":"exec_command_end","call_id":"call_3","exit_code":0}"#,
            ),
            item(8, "response_item", &reply("Done.")),
            item(
                9,
                "event_msg",
                r#"{"type":"user_message","message":"and sub","images":[]}"#,
            ),
            item(
                10,
                "response_item",
                &call(
                    "call_4",
                    "exec_command",
                    r#"{"cmd":"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"}"#,
                ),
            ),
            item(
                11,
                "response_item",
                &call("call_5", "exec_command", r#"{"cmd":"echo cargo test"}"#),
            ),
            item(
                12,
                "response_item",
                &output("call_5", "Process exited with code 0\nOutput:\ncargo test"),
            ),
            item(13, "response_item", &reply("Finished.")),
        ];
        let text = lines.join("\n") + "\n";
        let expected = [Some(Verified), Some(NeverRan)];
        assert_eq!(
            checkpoint_testkit::claim_classes(&Transcript, &text, "rollout-x.jsonl"),
            expected
        );
        let packed = ruzstd::encoding::compress_to_vec(
            text.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl.zst");
        std::fs::write(&path, packed).unwrap();
        let turns = checkpoint_engine::claim_history::read_turns(&Transcript, &path).unwrap();
        assert_eq!(
            turns.session.as_deref(),
            Some("01a20114-5ac8-7ea3-954c-3a7738f33306")
        );
        assert_eq!(turns.turns.len(), 2);
    }
}
