//! `checkpoint-opencode` against real repositories, with the payloads checkpoint's plugin
//! captured from OpenCode 1.18.33.

use adapter_opencode::HOME;
use checkpoint_testkit::adapter::{self, Adapter, Wire, uncommitted};
use checkpoint_testkit::repo;
use insta::assert_snapshot;
use proptest::prelude::*;
use serde_json::Value;

const OPENCODE: Adapter = Adapter {
    bin: env!("CARGO_BIN_EXE_checkpoint-opencode"),
    agent: "opencode",
    stop: "session.idle",
    stop_again: "session.idle-2",
    no_op: "{}",
    wire: Wire {
        session_id: "session_id",
        transcript_path: "transcript_path",
        event_name: Some("hook_event_name"),
        context: "/context",
        block: "/block",
        notice: "/notice",
    },
};

#[test]
fn block_is_the_message_the_plugin_sends_back() {
    let repo = uncommitted();
    let run = OPENCODE.fire(repo.path(), "session.idle");
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"block":"Checkpoint — No tests to run\nYou have uncommitted code changes. Commit your work before stopping.\n  ? deploy.yml"}"#);
}

#[test]
fn allow_is_an_empty_object() {
    let repo = repo("docs-only");
    OPENCODE.assert_no_op(
        &OPENCODE.fire(repo.path(), "session.idle"),
        0,
        "docs-only stop",
    );
}

#[test]
fn other_events_are_answered_with_nothing() {
    OPENCODE.assert_other_events_are_no_ops(&[
        "chat.message",
        "chat.message-2",
        "tool.execute.after",
        "session.start",
        "session.start-resume",
        "session.compacting",
    ]);
}

/// The plugin sends the last answer's token usage with a tool's result (captured: 170,000 of the
/// model's 1,000,000): past `[context] warn` the watch saves a checkpoint and its notice goes
/// with the tool's output, once per trigger and session.
#[test]
fn a_tool_result_past_the_warning_carries_the_context_notice() {
    let repo = repo("docs-only");
    let dir = repo.path();
    let low = OPENCODE.fire(dir, "tool.execute.after-usage");
    OPENCODE.assert_no_op(&low, 0, "17 % of the window");
    let high = [(
        "context_usage",
        serde_json::json!({"used": 850_000, "window": 1_000_000}),
    )];
    let run = OPENCODE.fire_with(dir, "tool.execute.after-usage", &high, &[]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"context":"Checkpoint saved (context 85 %) — 850,000 of 1,000,000 tokens in use. Your work so far is recorded and a new session will resume from it. Keep going; log each finished milestone with `checkpoint progress \"<what is done>\"`."}"#);
    let again = OPENCODE.fire_with(dir, "tool.execute.after-usage", &high, &[]);
    OPENCODE.assert_no_op(&again, 0, "the same trigger again");
    // A usage with no window known (no `[context] window` either) cannot be measured.
    let unmeasured = [("context_usage", serde_json::json!({"used": 950_000}))];
    let run = OPENCODE.fire_with(dir, "tool.execute.after-usage", &unmeasured, &[]);
    OPENCODE.assert_no_op(&run, 0, "no window");
}

#[test]
fn the_cap_is_told_to_the_user() {
    let repo = uncommitted();
    let capped = OPENCODE.fourth_stop(repo.path());
    assert_snapshot!(capped.stdout, @r#"{"notice":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: 1 file uncommitted."}"#);
}

/// The plugin sends a block back as the session's next prompt (`chat.message` with it); that
/// prompt must not count as a new user turn, or the cap would never be reached.
#[test]
fn the_retry_prompt_does_not_reset_the_cap() {
    OPENCODE.assert_retry_prompt_counts_on("chat.message-2", "block");
}

/// A block counts once its message is in the session (the plugin's `chat.message` carries it
/// back), or at the next idle of its turn — never while nobody saw it: a lone `opencode run` may
/// end before the plugin stores it (issue 38).
#[test]
fn a_block_counts_once_delivered() {
    let repo = uncommitted();
    let dir = repo.path();
    let counted = || {
        let record = adapter::stored_session(dir, &OPENCODE, "").expect("a session record");
        (
            record["consecutive_blocks"].as_u64(),
            record["undelivered_block"] == true,
        )
    };
    let first = OPENCODE.fire(dir, "session.idle");
    assert!(OPENCODE.blocked(&first), "{first:?}");
    assert_eq!(counted(), (Some(0), true), "answered, not yet delivered");
    let block: Value = serde_json::from_str(&first.stdout).unwrap();
    let back = [("prompt", block["block"].clone())];
    let delivered = OPENCODE.fire_with(dir, "chat.message-2", &back, &[]);
    OPENCODE.assert_no_op(&delivered, 0, "the block, back as the prompt");
    assert_eq!(counted(), (Some(1), false), "in the session: counted");
    // The same message seen again (a second chat.message) counts nothing more.
    let again = OPENCODE.fire_with(dir, "chat.message-2", &back, &[]);
    OPENCODE.assert_no_op(&again, 0, "the block again");
    assert_eq!(counted(), (Some(1), false));

    // A block never delivered, then the user's next prompt: a new turn, nothing counted.
    let second = OPENCODE.fire(dir, "session.idle-2");
    assert!(OPENCODE.blocked(&second), "{second:?}");
    assert_eq!(counted(), (Some(1), true));
    let user = [("prompt", Value::String("Go on.".into()))];
    OPENCODE.fire_with(dir, "chat.message-2", &user, &[]);
    assert_eq!(counted(), (Some(0), false));
}

#[test]
fn concurrent_blocked_stops_count_every_block() {
    adapter::assert_concurrent_blocks_are_counted(&OPENCODE, 64);
}

#[test]
fn bad_input_fails_open() {
    OPENCODE.assert_bad_input_fails_open();
}

proptest! {
    #[test]
    fn arbitrary_stdin_fails_open(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        checkpoint_engine::hook::run(&HOME, &bytes[..], &mut out, &mut err);
        let out = String::from_utf8_lossy(&out);
        prop_assert_eq!(out.trim_end(), "{}");
        let err = String::from_utf8_lossy(&err);
        prop_assert!(!err.contains("internal error"), "{}", err);
    }
}

/// A new session gets the last checkpoint as context, which the plugin adds to its first
/// message; a resumed one (`opencode run --session`) gets the same session's.
#[test]
fn sessions_resume_from_the_last_checkpoint() {
    let repo = repo("docs-only");
    let dir = repo.path();
    let quiet = OPENCODE.fire(dir, "session.start");
    OPENCODE.assert_no_op(&quiet, 0, "session start before any checkpoint");
    OPENCODE.assert_no_op(&OPENCODE.fire(dir, "session.idle"), 0, "allowed stop");
    for (fixture, why) in [
        ("session.start", "⚠️ SESSION RESET: a new session started."),
        (
            "session.start-resume",
            "⚠️ SESSION RESET: the session was resumed.",
        ),
    ] {
        let run = OPENCODE.fire(dir, fixture);
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["context"], "{fixture}");
        let text = answer["context"].as_str().unwrap();
        for expected in [
            "Resumed from checkpoint: Done first. (saved just now)",
            why,
            "Files modified (do not recreate):\n- README.md\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in {text}");
        }
    }
}

#[test]
fn broken_config_fails_open_and_tells_the_user_once_per_session() {
    let answer = OPENCODE.assert_config_error_told_once_per_session(
        "session.start",
        "session.idle",
        "session.start",
    );
    assert_snapshot!(answer, @r#"{"notice":"Checkpoint — The gate is off until its config is fixed (stops are allowed unchecked): [repo]/checkpoint.toml:1: syntax error: unclosed table, expected `]`"}"#);
}

#[test]
fn version_and_help_are_answered() {
    let run = |arg: &str| {
        let out = std::process::Command::new(OPENCODE.bin)
            .arg(arg)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        run("--version").trim_end(),
        format!("checkpoint-opencode {}", checkpoint_engine::hook::VERSION)
    );
    assert!(run("--help").contains("checkpoint's hook adapter for OpenCode."));
}

#[test]
fn an_edit_that_weakens_a_test_is_noted_with_its_result() {
    let answer = adapter::assert_edit_nudge(&OPENCODE, "tool.execute.after", |path| {
        vec![
            ("tool_name", "edit".into()),
            (
                "tool_input",
                serde_json::json!({"filePath": path, "oldString": "a", "newString": "b"}),
            ),
        ]
    });
    assert_snapshot!(serde_json::to_string_pretty(&answer).unwrap(), @r#"
    {
      "context": "Checkpoint: this edit weakened the tests:\n  test_calc.py:7: new skip/focus marker `@unittest.skip`\n  test_calc.py:8: assertions dropped from 2 to 1\nThe stop will block on this. Fix the code, not the tests; if a test itself was wrong, say so to the user in your final answer."
    }
    "#);
}
