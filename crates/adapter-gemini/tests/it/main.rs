//! `checkpoint-gemini` against real repositories, with payloads captured from Gemini CLI 0.61.0.

use adapter_gemini::HOME;
use checkpoint_testkit::adapter::{self, Adapter, Wire, uncommitted};
use checkpoint_testkit::repo;
use insta::assert_snapshot;
use proptest::prelude::*;

const GEMINI: Adapter = Adapter {
    bin: env!("CARGO_BIN_EXE_checkpoint-gemini"),
    agent: "gemini",
    stop: "AfterAgent",
    stop_again: "AfterAgent-2",
    no_op: "{}",
    wire: Wire::SHARED,
};

#[test]
fn block_is_a_top_level_deny() {
    let repo = uncommitted();
    let run = GEMINI.fire(repo.path(), "AfterAgent");
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"decision":"deny","reason":"Checkpoint — No tests to run\nYou have uncommitted code changes. Commit your work before stopping.\n  ? deploy.yml"}"#);
}

/// A `CHECKPOINT_*` variable that the project's `.env` puts into every hook's environment is the
/// project's value, held back until approved (issue 31).
#[test]
fn a_variable_from_the_projects_env_file_is_held_back() {
    let dotenv = "# the project's\nCHECKPOINT_TESTS_COMMAND=true\n";
    let notice = adapter::assert_project_env_is_held_back(&GEMINI, ".env", dotenv);
    assert_snapshot!(notice, @r"
    Checkpoint: the agent's project configuration sets these variables in the hook's environment; they are the project's values, not yours, and the stop gate holds them back until you approve them:
    - CHECKPOINT_TESTS_COMMAND (from .env)
    To use such a value, write it in checkpoint.toml and approve it with `checkpoint trust`, or in your own config file.
    ");
}

#[test]
fn concurrent_blocked_stops_count_every_block() {
    adapter::assert_concurrent_blocks_are_counted(&GEMINI, 64);
}

#[test]
fn allow_is_an_empty_object() {
    let repo = repo("docs-only");
    let run = GEMINI.fire(repo.path(), "AfterAgent");
    GEMINI.assert_no_op(&run, 0, "docs-only stop");
}

#[test]
fn other_events_are_answered_with_an_empty_object() {
    GEMINI.assert_other_events_are_no_ops(&[
        "BeforeTool",
        "AfterTool",
        "SessionStart",
        "SessionStart-resume",
        "SessionEnd",
        "PreCompress",
        "BeforeAgent",
    ]);
}

#[test]
fn the_cap_is_told_to_the_user() {
    let repo = uncommitted();
    let capped = GEMINI.fourth_stop(repo.path());
    assert_snapshot!(capped.stdout, @r#"{"systemMessage":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: 1 file uncommitted."}"#);
}

/// Gemini re-sends a deny reason as the next prompt (BeforeAgent); that retry must not count as
/// a new user turn, or the block count would start over and the cap would never be reached.
#[test]
fn the_retry_prompt_does_not_reset_the_cap() {
    GEMINI.assert_retry_prompt_counts_on("BeforeAgent-2", "deny");
}

#[test]
fn bad_input_fails_open() {
    GEMINI.assert_bad_input_fails_open();
}

proptest! {
    #[test]
    fn arbitrary_stdin_fails_open(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        checkpoint_engine::hook::run(&HOME, &bytes[..], &mut out, &mut err);
        prop_assert_eq!(out, b"{}\n");
        let err = String::from_utf8_lossy(&err);
        prop_assert!(!err.contains("internal error"), "{}", err);
    }
}

#[test]
fn sessions_resume_and_context_is_watched() {
    let (_, notice) = GEMINI.assert_continuity("SessionStart", "BeforeTool", "AfterTool");
    assert_snapshot!(notice.to_string());
}

/// The continuity log of the repository at `dir`.
fn continuity_log(dir: &std::path::Path) -> serde_json::Value {
    let path = dir.join(".git/checkpoint/continuity/log.json");
    std::fs::read_to_string(path).map_or(serde_json::Value::Null, |text| {
        serde_json::from_str(&text).unwrap()
    })
}

#[test]
fn pre_compress_saves_only_when_a_compression_follows() {
    let repo = repo("docs-only");
    let dir = repo.path();
    let transcripts = tempfile::tempdir().unwrap();
    let transcript = transcripts.path().join("session.jsonl");
    let at = |input: u64| {
        let line = serde_json::json!({"type": "gemini", "tokens": {"input": input}});
        std::fs::write(&transcript, format!("{line}\n")).unwrap();
        [(
            "transcript_path",
            serde_json::Value::String(transcript.display().to_string()),
        )]
    };
    // Gemini fires PreCompress(auto) every turn; at 10 % of its window nothing is compressed.
    let run = GEMINI.fire_with(dir, "PreCompress", &at(104_857), &[]);
    GEMINI.assert_no_op(&run, 0, "PreCompress below the threshold");
    assert_eq!(continuity_log(dir), serde_json::Value::Null);
    // At 60 % a compression follows: checkpoint first.
    let run = GEMINI.fire_with(dir, "PreCompress", &at(629_146), &[]);
    GEMINI.assert_no_op(&run, 0, "PreCompress above the threshold");
    let log = continuity_log(dir);
    assert_eq!(log["checkpoints"][0]["trigger"], "pre_compact");
    assert_eq!(log["checkpoints"][0]["context"]["percent"], 60);
    // /compress by hand always counts.
    let mut fields = at(10).to_vec();
    fields.push(("trigger", "manual".into()));
    GEMINI.fire_with(dir, "PreCompress", &fields, &[]);
    assert_eq!(continuity_log(dir)["checkpoints"][1]["detail"], "manual");
}

#[test]
fn session_end_saves_unless_turned_off() {
    let repo = repo("docs-only");
    let dir = repo.path();
    let off = [("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "false")];
    let run = GEMINI.fire_with(dir, "SessionEnd", &[], &off);
    GEMINI.assert_no_op(&run, 0, "SessionEnd, auto_checkpoint off");
    assert_eq!(continuity_log(dir), serde_json::Value::Null);
    let run = GEMINI.fire(dir, "SessionEnd");
    GEMINI.assert_no_op(&run, 0, "SessionEnd");
    let checkpoint = &continuity_log(dir)["checkpoints"][0];
    assert_eq!(checkpoint["trigger"], "session_end");
    assert_eq!(checkpoint["detail"], "exit");
    assert_eq!(checkpoint["files"][0]["path"], "README.md");
}

#[test]
fn after_clear_the_resume_goes_with_the_next_prompt() {
    let repo = repo("docs-only");
    let dir = repo.path();
    GEMINI.fire(dir, "AfterAgent");
    let clear = [("source", serde_json::json!("clear"))];
    let run = GEMINI.fire_with(dir, "SessionStart", &clear, &[]);
    GEMINI.assert_no_op(&run, 0, "SessionStart(clear)");
    let run = GEMINI.fire(dir, "BeforeAgent");
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        context.starts_with("Resumed from checkpoint: Done.")
            && context.contains("SESSION RESET: the context was cleared (/clear)."),
        "{run:?}"
    );
    let again = GEMINI.fire(dir, "BeforeAgent");
    GEMINI.assert_no_op(&again, 0, "only once");
}

#[test]
fn broken_config_fails_open_and_tells_the_user_once_per_session() {
    let answer = GEMINI.assert_config_error_told_once_per_session(
        "BeforeTool",
        "AfterAgent",
        "SessionStart",
    );
    assert_snapshot!(answer, @r#"{"systemMessage":"Checkpoint — The gate is off until its config is fixed (stops are allowed unchecked): [repo]/checkpoint.toml:1: syntax error: unclosed table, expected `]`"}"#);
}

#[test]
fn an_edit_that_weakens_a_test_is_noted_with_its_result() {
    let answer = adapter::assert_edit_nudge(&GEMINI, "AfterTool", |path| {
        vec![
            ("tool_name", "replace".into()),
            (
                "tool_input",
                serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            ),
        ]
    });
    assert_snapshot!(serde_json::to_string_pretty(&answer).unwrap(), @r#"
    {
      "hookSpecificOutput": {
        "hookEventName": "AfterTool",
        "additionalContext": "Checkpoint: this edit weakened the tests:\n  test_calc.py:7: new skip/focus marker `@unittest.skip`\n  test_calc.py:8: assertions dropped from 2 to 1\nThe stop will block on this. Fix the code, not the tests; if a test itself was wrong, say so to the user in your final answer."
      }
    }
    "#);
}
