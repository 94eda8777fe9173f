//! `checkpoint-copilot` against real repositories, with payloads captured from GitHub Copilot CLI
//! 1.0.102.

use adapter_copilot::HOME;
use checkpoint_testkit::adapter::{self, Adapter, Wire, uncommitted};
use checkpoint_testkit::repo;
use insta::assert_snapshot;
use proptest::prelude::*;

const COPILOT: Adapter = Adapter {
    bin: env!("CARGO_BIN_EXE_checkpoint-copilot"),
    agent: "copilot",
    stop: "agentStop",
    stop_again: "agentStop-2",
    no_op: "",
    wire: Wire {
        session_id: "sessionId",
        transcript_path: "transcriptPath",
        event_name: None,
        context: "/additionalContext",
        block: "/reason",
        notice: "/systemMessage",
    },
};

#[test]
fn block_is_a_decision_and_a_reason() {
    let repo = uncommitted();
    let run = COPILOT.fire(repo.path(), "agentStop");
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"decision":"block","reason":"Checkpoint — No tests to run\nYou have uncommitted code changes. Commit your work before stopping.\n  ? deploy.yml"}"#);
}

#[test]
fn allow_is_empty_stdout() {
    let repo = repo("docs-only");
    COPILOT.assert_no_op(&COPILOT.fire(repo.path(), "agentStop"), 0, "docs-only stop");
}

#[test]
fn other_events_are_answered_with_nothing() {
    COPILOT.assert_other_events_are_no_ops(&[
        "preToolUse",
        "postToolUse",
        "sessionStart",
        "sessionStart-resume",
        "sessionEnd",
        "preCompact-manual",
        "userPromptSubmitted",
    ]);
}

#[test]
fn the_cap_is_told_to_the_user() {
    let repo = uncommitted();
    let capped = COPILOT.fourth_stop(repo.path());
    assert_snapshot!(capped.stdout, @r#"{"systemMessage":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: 1 file uncommitted."}"#);
}

/// Copilot sends a block's reason as the next prompt (`userPromptSubmitted`); that prompt must
/// not count as a new user turn, or the block count would start over and the cap would never be
/// reached.
#[test]
fn the_retry_prompt_does_not_reset_the_cap() {
    COPILOT.assert_retry_prompt_counts_on("userPromptSubmitted-2", "block");
}

#[test]
fn concurrent_blocked_stops_count_every_block() {
    adapter::assert_concurrent_blocks_are_counted(&COPILOT, 64);
}

#[test]
fn bad_input_fails_open() {
    COPILOT.assert_bad_input_fails_open();
}

proptest! {
    #[test]
    fn arbitrary_stdin_fails_open(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        checkpoint_engine::hook::run(&HOME, &bytes[..], &mut out, &mut err);
        prop_assert_eq!(out, b"");
        let err = String::from_utf8_lossy(&err);
        prop_assert!(!err.contains("internal error"), "{}", err);
    }
}

#[test]
fn sessions_resume_and_context_is_watched() {
    let (resume, notice) = COPILOT.assert_continuity("sessionStart", "preToolUse", "postToolUse");
    assert_eq!(
        resume.as_object().map(|o| o.keys().collect::<Vec<_>>()),
        Some(vec![&"additionalContext".to_owned()])
    );
    assert_snapshot!(notice.to_string(), @r#"{"additionalContext":"Checkpoint saved (context 85 %) — 170,000 of 200,000 tokens in use. Your work so far is recorded and a new session will resume from it. Keep going; log each finished milestone with `checkpoint progress \"<what is done>\"`."}"#);
}

#[test]
fn broken_config_fails_open_and_tells_the_user_once_per_session() {
    let answer = COPILOT.assert_config_error_told_once_per_session(
        "preToolUse",
        "agentStop",
        "sessionStart",
    );
    assert_snapshot!(answer, @r#"{"systemMessage":"Checkpoint — The gate is off until its config is fixed (stops are allowed unchecked): [repo]/checkpoint.toml:1: syntax error: unclosed table, expected `]`"}"#);
}

#[test]
fn version_and_help_are_answered() {
    let run = |arg: &str| {
        let out = std::process::Command::new(COPILOT.bin)
            .arg(arg)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        run("--version").trim_end(),
        format!("checkpoint-copilot {}", checkpoint_engine::hook::VERSION)
    );
    assert!(run("--help").contains("checkpoint's hook adapter for GitHub Copilot CLI."));
}

#[test]
fn an_edit_that_weakens_a_test_is_noted_with_its_result() {
    let answer = adapter::assert_edit_nudge(&COPILOT, "postToolUse", |path| {
        vec![
            ("toolName", "edit".into()),
            (
                "toolArgs",
                serde_json::json!({"path": path, "old_str": "a", "new_str": "b"}),
            ),
        ]
    });
    assert_snapshot!(serde_json::to_string_pretty(&answer).unwrap(), @r#"
    {
      "additionalContext": "Checkpoint: this edit weakened the tests:\n  test_calc.py:7: new skip/focus marker `@unittest.skip`\n  test_calc.py:8: assertions dropped from 2 to 1\nThe stop will block on this. Fix the code, not the tests; if a test itself was wrong, say so to the user in your final answer."
    }
    "#);
}
