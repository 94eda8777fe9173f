//! `checkpoint history` over a fake home holding the transcripts of five agents (one of them
//! moved by its own variable, one rollout compressed), joined to the stops the gate really
//! recorded in a repository: a Claude Code session whose failing test was blocked, then fixed.
//! The counts are pinned, as text and as JSON.

use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::{checkpoint, checkpoint_command, claude_payload, code};

/// The Claude Code session the gate judged (as `claude_payload` names it).
const GATED: &str = "6f1c2a4e-0000-4000-8000-000000000131";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn lines(records: &[Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

/// A Claude Code transcript of `session`: a turn that edits and claims without a test two hours
/// before `at`; then, at `at`, a turn that edits, runs pytest (`passes` or not) and says "Done.".
fn claude(session: &str, at: Timestamp, passes: bool) -> String {
    let t = |s: i64| (at + SignedDuration::from_secs(s)).to_string();
    let record = |s, kind: &str, content: Value| {
        json!({"type": kind, "isSidechain": false, "sessionId": session, "timestamp": t(s),
               "message": {"role": kind, "content": content}})
    };
    lines(&[
        record(-7200, "user", json!("add sub")),
        record(
            -7199,
            "assistant",
            json!([{"type": "tool_use", "id": "t3", "name": "Write",
                                           "input": {"file_path": "sub.py"}}]),
        ),
        record(
            -7198,
            "assistant",
            json!([{"type": "text", "text": "Implemented."}]),
        ),
        record(0, "user", json!("fix add")),
        record(
            1,
            "assistant",
            json!([{"type": "tool_use", "id": "t1", "name": "Edit",
                                       "input": {"file_path": "calc.py"}}]),
        ),
        record(
            2,
            "assistant",
            json!([{"type": "tool_use", "id": "t2", "name": "Bash",
                                       "input": {"command": "python -m pytest -q"}}]),
        ),
        record(
            3,
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t2",
                                  "content": "…", "is_error": !passes}]),
        ),
        record(4, "assistant", json!([{"type": "text", "text": "Done."}])),
    ])
}

/// A Codex rollout: an `apply_patch`, then `cargo test` failing (exit 101), then "Done.".
fn codex() -> String {
    let item = |kind: &str, payload: Value| json!({"timestamp": "2026-11-22T02:27:21.000Z", "type": kind, "payload": payload});
    lines(&[
        item(
            "session_meta",
            json!({"id": "01a20114-5ac8-7ea3-954c-3a7738f33306"}),
        ),
        item(
            "event_msg",
            json!({"type": "user_message", "message": "fix add"}),
        ),
        item(
            "response_item",
            json!({"type": "custom_tool_call", "name": "apply_patch",
                                      "call_id": "c1", "input": "*** Begin Patch"}),
        ),
        item(
            "response_item",
            json!({"type": "function_call", "name": "exec_command",
                                      "call_id": "c2", "arguments": "{\"cmd\":\"cargo test\"}"}),
        ),
        item(
            "response_item",
            json!({"type": "function_call_output", "call_id": "c2",
                                      "output": "Process exited with code 101\nOutput:\nFAILED"}),
        ),
        item(
            "response_item",
            json!({"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": "Done."}]}),
        ),
    ])
}

/// A Gemini CLI session: pytest passes, then an edit, then "Finished." (stale).
fn gemini() -> String {
    let shell = json!({"id": "s1", "name": "run_shell_command", "args": {"command": "pytest"},
                       "status": "success", "result": [{"functionResponse": {"id": "s1",
                       "response": {"output": "Output: 3 passed"}}}]});
    let edit = json!({"id": "e1", "name": "replace", "args": {"file_path": "calc.py"},
                      "status": "success"});
    lines(&[
        json!({"sessionId": "62faf3c7-05c1-49bd-a221-ae347fb0b3c7", "kind": "main"}),
        json!({"id": "u1", "timestamp": "2026-11-22T02:27:16.000Z", "type": "user",
               "content": [{"text": "fix add"}]}),
        json!({"id": "g1", "timestamp": "2026-11-22T02:27:17.000Z", "type": "gemini",
               "content": "", "toolCalls": [shell, edit]}),
        json!({"id": "g2", "timestamp": "2026-11-22T02:27:18.000Z", "type": "gemini",
               "content": "Finished."}),
    ])
}

/// A Qwen Code session that edits and asks a question: no claim.
fn qwen() -> String {
    let record = |kind: &str, parts: Value| {
        json!({"sessionId": "37ae128b", "timestamp": "2026-11-27T23:11:45.000Z", "type": kind,
               "message": {"role": "model", "parts": parts}})
    };
    lines(&[
        record("user", json!([{"text": "fix add"}])),
        record(
            "assistant",
            json!([{"functionCall": {"id": "c1", "name": "edit",
                                                      "args": {"file_path": "calc.py"}}}]),
        ),
        record("assistant", json!([{"text": "Should I also fix sub?"}])),
    ])
}

/// A Copilot CLI session: an edit, `npm test` passing, "All tests pass." (verified).
fn copilot() -> String {
    let event = |kind: &str, data: Value| json!({"type": kind, "data": data, "timestamp": "2026-11-23T20:18:33.000Z"});
    lines(&[
        event("session.start", json!({"sessionId": "6387ea71"})),
        event("user.message", json!({"content": "fix add"})),
        event(
            "assistant.message",
            json!({"content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "edit", "arguments": {"path": "calc.js"}},
            {"toolCallId": "c2", "name": "bash", "arguments": {"command": "npm test"}}]}),
        ),
        event(
            "tool.execution_complete",
            json!({"toolCallId": "c2", "success": true,
            "result": {"content": "ok\n<shellId: 0 completed with exit code 0>"}}),
        ),
        event(
            "assistant.message",
            json!({"content": "All tests pass.", "toolRequests": []}),
        ),
    ])
}

/// `checkpoint history ARGS` in `repo` with `home` as the home directory, and Codex's moved to
/// `codex_home`.
fn history(repo: &Path, home: &Path, codex_home: &Path, args: &[&str]) -> String {
    run(repo, home, codex_home, &[&["history"], args].concat())
}

/// `checkpoint ARGS` as [`history`] runs it; its stdout.
fn run(repo: &Path, home: &Path, codex_home: &Path, args: &[&str]) -> String {
    let config_home = tempfile::tempdir().unwrap();
    let mut cmd = checkpoint_command(config_home.path(), repo, args);
    cmd.env("HOME", home).env("CODEX_HOME", codex_home);
    for var in [
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "COPILOT_HOME",
        "QWEN_HOME",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 0, "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn history_counts_every_agents_claims_and_what_the_gate_said() {
    let repo = checkpoint_testkit::repo("failing-test");
    let dir = repo.path();
    let began = Timestamp::now() - SignedDuration::from_secs(60);
    // The gate blocks the failing test, then allows once add is fixed.
    let stop = |message: &str, active: bool| {
        let payload = claude_payload(
            dir,
            "Stop",
            json!({"stop_hook_active": active, "last_assistant_message": message}),
        );
        code(&checkpoint(dir, &["check"], &payload))
    };
    assert_eq!(stop("Done.", false), 1, "the failing test blocks");
    let calc = std::fs::read_to_string(dir.join("calc.py")).unwrap();
    std::fs::write(
        dir.join("calc.py"),
        calc.replace("return a - b\n\n\ndef sub", "return a + b\n\n\ndef sub"),
    )
    .unwrap();
    assert_eq!(stop("Fixed.", true), 0, "fixed, the stop is allowed");

    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let codex_home = h.join("elsewhere/codex");
    write(
        &h.join(".claude/projects/-p/a.jsonl"),
        &claude(GATED, began, false),
    );
    let old = "2026-11-22T02:00:00Z".parse().unwrap();
    write(
        &h.join(".claude/projects/-p/b.jsonl"),
        &claude("other", old, true),
    );
    // A subagent's transcript is not a session's.
    write(
        &h.join(".claude/projects/-p/a/subagents/agent-1.jsonl"),
        &claude("x", old, true),
    );
    let packed = ruzstd::encoding::compress_to_vec(
        codex().as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let rollout = codex_home.join("sessions/2026/11/22/rollout-2026-11-22T02-27-20-01a2.jsonl.zst");
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    std::fs::write(&rollout, packed).unwrap();
    // Not read: ~/.codex is not where CODEX_HOME says.
    write(
        &h.join(".codex/sessions/2026/11/22/rollout-x.jsonl"),
        &codex(),
    );
    write(
        &h.join(".gemini/tmp/proj/chats/session-2026-11-22T02-27-62faf3c7.jsonl"),
        &gemini(),
    );
    write(
        &h.join(".qwen/projects/-home-dev-project/chats/37ae128b.jsonl"),
        &qwen(),
    );
    write(
        &h.join(".copilot/session-state/6387ea71/events.jsonl"),
        &copilot(),
    );
    // Hostile: malformed lines, a FIFO, a link out of the home.
    write(
        &h.join(".claude/projects/-p/broken.jsonl"),
        "{\n\u{0}\u{ff}\n[]\n",
    );
    let made = std::process::Command::new("mkfifo")
        .arg(h.join(".claude/projects/-p/fifo.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    let outside = tempfile::tempdir().unwrap();
    write(
        &outside.path().join("s.jsonl"),
        &claude("outside", old, false),
    );
    std::os::unix::fs::symlink(outside.path(), h.join(".claude/projects/linked")).unwrap();

    let text = history(dir, h, &codex_home, &[]);
    insta::assert_snapshot!(text, @r"
    Completion claims after an edit, from the agents' transcripts (every turn on record):

    agent     sessions  turns claims verified stale failed never ran unverified
    claude           2      4      4        1     0      1         2       75 %
    gemini           1      1      1        0     1      0         0      100 %
    codex            1      1      1        0     0      1         0      100 %
    copilot          1      1      1        1     0      0         0        0 %
    qwen             1      1      0        0     0      0         0          –
    total            6      8      7        2     1      2         2       71 %

    the gate  not gated allowed blocked fixed capped
    claude            3       0       0     1      0
    gemini            1       0       0     0      0
    codex             1       0       0     0      0
    copilot           1       0       0     0      0
    qwen              0       0       0     0      0
    total             6       0       0     1      0

    verified: a test command passed after the last edit; stale: one passed only before it;
    failed: the last one after it failed; never ran: none ran after it. fixed: blocked, then
    allowed; capped: let through by stop.max_blocks; not gated: no stop of the turn is in
    this worktree's records.
    7 transcripts read.
    ");

    let json: Value = serde_json::from_str(&history(dir, h, &codex_home, &["--json"])).unwrap();
    insta::assert_json_snapshot!(json["total"], @r#"
    {
      "sessions": 6,
      "turns": 8,
      "claims": 7,
      "verification": {
        "verified": 2,
        "stale": 1,
        "failed": 2,
        "never_ran": 2
      },
      "gate": {
        "not_gated": 6,
        "allowed": 0,
        "blocked": 0,
        "fixed": 1,
        "capped": 0
      }
    }
    "#);
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["since"], Value::Null);
    let claude = &json["agents"][0];
    assert_eq!(
        (&claude["agent"], &claude["transcripts"]),
        (&json!("claude"), &json!(3))
    );

    // The last hour: only the gated session's last turn.
    let json: Value =
        serde_json::from_str(&history(dir, h, &codex_home, &["--json", "--since", "1h"])).unwrap();
    assert_eq!(json["total"]["claims"], 1);
    assert_eq!(json["total"]["gate"]["fixed"], 1);
    let only: Value = serde_json::from_str(&history(
        dir,
        h,
        &codex_home,
        &["--json", "--agent", "codex"],
    ))
    .unwrap();
    assert_eq!(only["agents"].as_array().unwrap().len(), 1);
    assert_eq!(only["total"]["verification"]["failed"], 1);

    // The report counts the same, over the sessions it shows: the gated one.
    let report: Value =
        serde_json::from_str(&run(dir, h, &codex_home, &["report", "--json"])).unwrap();
    let claims = &report["claims"]["total"];
    assert_eq!(claims["claims"], 2, "{claims}");
    assert_eq!(claims["verification"]["failed"], 1);
    assert_eq!(claims["verification"]["never_ran"], 1);
    assert_eq!(claims["gate"]["fixed"], 1);
    let page = dir.join(".git/report.html");
    run(
        dir,
        h,
        &codex_home,
        &["report", "-o", page.to_str().unwrap()],
    );
    let page = std::fs::read_to_string(page).unwrap();
    let section = &page[page.find("<section id=\"claims\">").unwrap()..];
    assert!(
        section.contains(
            "<tr data-agent=\"claude\"><td>claude</td><td>2</td><td>0</td><td>0</td><td>1</td>\
             <td>1</td><td>1</td><td>0</td><td>0</td><td>1</td><td>0</td></tr>"
        ),
        "{section}"
    );
}
