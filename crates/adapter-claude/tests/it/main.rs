//! `checkpoint-claude` against real repositories, with payloads captured from Claude Code 2.1.330.

use adapter_claude::HOME;
use checkpoint_testkit::adapter::{self, Adapter, Wire, uncommitted};
use checkpoint_testkit::repo;
use insta::assert_snapshot;
use proptest::prelude::*;

mod hardening;
mod prewarm;
mod project_env;
mod sharing;
mod unrunnable;

const CLAUDE: Adapter = Adapter {
    bin: env!("CARGO_BIN_EXE_checkpoint-claude"),
    agent: "claude",
    stop: "Stop",
    stop_again: "Stop-2",
    no_op: "",
    wire: Wire::SHARED,
};

#[test]
fn block_is_decision_and_reason_only() {
    let repo = uncommitted();
    let run = CLAUDE.fire(repo.path(), "Stop");
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"decision":"block","reason":"Checkpoint — No tests to run\nYou have uncommitted code changes. Commit your work before stopping.\n  ? deploy.yml"}"#);
}

#[test]
fn failing_test_reason_names_the_test() {
    let repo = repo("failing-test");
    let run = CLAUDE.fire(repo.path(), "Stop");
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Checkpoint — Tests: FAILED\n"),
        "{reason}"
    );
    assert!(
        reason.contains("- test_calc.CalcTest.test_add\n"),
        "{reason}"
    );
}

#[test]
fn allow_is_empty_stdout() {
    let repo = repo("docs-only");
    let run = CLAUDE.fire(repo.path(), "Stop");
    CLAUDE.assert_no_op(&run, 0, "docs-only stop");
}

#[test]
fn subagents_answer_only_for_their_own_failing_tests() {
    adapter::assert_subagent_rules(&CLAUDE);
}

#[test]
fn concurrent_blocked_stops_count_every_block() {
    adapter::assert_concurrent_blocks_are_counted(&CLAUDE, 64);
}

#[test]
fn the_turn_is_told_by_prompt_id() {
    adapter::assert_turns_are_told_by(&CLAUDE, "prompt_id");
}

#[test]
fn a_stop_with_background_tasks_is_not_judged_yet() {
    let repo = repo("failing-test");
    let run = CLAUDE.fire(repo.path(), "Stop-background");
    CLAUDE.assert_no_op(&run, 0, "background tasks still running");
    let run = CLAUDE.fire(repo.path(), "Stop");
    assert!(run.stdout.contains("\"decision\":\"block\""), "{run:?}");
}

#[test]
fn other_events_are_answered_with_nothing() {
    CLAUDE.assert_other_events_are_no_ops(&[
        "PreToolUse",
        "PostToolUse",
        "SessionStart",
        "SessionEnd",
        "PreCompact-auto",
        "UserPromptSubmit",
    ]);
}

#[test]
fn the_cap_is_told_to_the_user() {
    let repo = uncommitted();
    let capped = CLAUDE.fourth_stop(repo.path());
    assert_snapshot!(capped.stdout, @r#"{"systemMessage":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: 1 file uncommitted."}"#);
}

#[test]
fn bad_input_fails_open() {
    CLAUDE.assert_bad_input_fails_open();
}

#[test]
fn broken_config_fails_open_and_tells_the_user_once_per_session() {
    let answer =
        CLAUDE.assert_config_error_told_once_per_session("PreToolUse", "Stop", "SessionStart");
    assert_snapshot!(answer, @r#"{"systemMessage":"Checkpoint — The gate is off until its config is fixed (stops are allowed unchecked): [repo]/checkpoint.toml:1: syntax error: unclosed table, expected `]`"}"#);
}

/// Under an approval, a broken config turns nothing off: no event says the gate is off, and the
/// stop still blocks on the failing test, telling the user the approved configuration applies.
#[test]
fn a_broken_config_under_an_approval_keeps_the_gate_on() {
    let config = tempfile::tempdir().unwrap();
    let repo = repo("failing-test");
    let dir = repo.path();
    checkpoint_testkit::trust(config.path(), dir, &[]);
    std::fs::write(dir.join("checkpoint.toml"), "[tests\n").unwrap();
    for event in ["SessionStart", "UserPromptSubmit", "PreToolUse"] {
        let run = CLAUDE.fire_in(config.path(), dir, event);
        assert!(!run.stdout.contains("gate is off"), "{event}: {run:?}");
    }
    let stop = CLAUDE.fire_in(config.path(), dir, "Stop");
    let (reason, notice) = reason_and_notice(&stop);
    assert!(
        reason.starts_with("Checkpoint — Tests: FAILED\n"),
        "{reason}"
    );
    let notice = notice.unwrap_or_default();
    assert!(
        notice.contains("checkpoint.toml is not a valid configuration"),
        "{notice}"
    );
}

proptest! {
    #[test]
    fn arbitrary_stdin_fails_open(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        checkpoint_engine::hook::run(&HOME, &bytes[..], &mut out, &mut err);
        prop_assert!(out.is_empty());
        let err = String::from_utf8_lossy(&err);
        prop_assert!(!err.contains("internal error"), "{}", err);
    }

    #[test]
    fn unknown_events_and_extra_fields_are_no_ops(
        name in "[A-Z][A-Za-z]{0,20}",
        extra in proptest::collection::btree_map("[a-z_]{1,10}", any::<i64>(), 0..5),
    ) {
        prop_assume!(!["Stop", "SubagentStop", "UserPromptSubmit"].contains(&name.as_str()));
        let mut v = serde_json::json!({"session_id": "s", "cwd": "/", "hook_event_name": name});
        for (k, x) in extra { v[k] = x.into(); }
        let (mut out, mut err) = (Vec::new(), Vec::new());
        checkpoint_engine::hook::run(&HOME, v.to_string().as_bytes(), &mut out, &mut err);
        prop_assert!(out.is_empty() && err.is_empty());
    }
}

#[test]
fn sessions_resume_and_context_is_watched() {
    let (_, notice) = CLAUDE.assert_continuity("SessionStart", "PreToolUse", "PostToolUse");
    assert_snapshot!(notice.to_string());
}

#[test]
fn prompt_mode_tells_the_user_about_unsaved_work() {
    let repo = repo("docs-only");
    let prompt = [("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "prompt")];
    let run = CLAUDE.fire_with(repo.path(), "Stop", &[], &prompt);
    assert_snapshot!(run.stdout.trim_end(), @r#"{"systemMessage":"No checkpoint saved yet: run `checkpoint save \"…\"` before /clear to keep it."}"#);
    // Once a checkpoint holds the work, nothing more is said.
    CLAUDE.fire(repo.path(), "Stop");
    let run = CLAUDE.fire_with(repo.path(), "Stop", &[], &prompt);
    CLAUDE.assert_no_op(&run, 0, "no unsaved work");
}

#[test]
fn the_progress_skill_logs_its_argument_for_the_next_session() {
    let repo = repo("docs-only");
    let skill = [
        ("tool_name", serde_json::json!("Skill")),
        (
            "tool_input",
            serde_json::json!({"skill": "checkpoint-progress", "args": "created the schema"}),
        ),
    ];
    let run = CLAUDE.fire_with(repo.path(), "PostToolUse", &skill, &[]);
    CLAUDE.assert_no_op(&run, 0, "progress skill");
    CLAUDE.fire(repo.path(), "Stop");
    let resume = CLAUDE.fire(repo.path(), "SessionStart");
    assert!(
        resume
            .stdout
            .contains("Progress logged before reset:\\n✓ created the schema ("),
        "{resume:?}"
    );
}

#[test]
fn a_fresh_status_line_is_preferred_to_the_transcript() {
    let repo = repo("docs-only");
    let dir = repo.path();
    // Out of the worktree, so it is no change of the repository's.
    let transcript = dir.join(".git/transcript.jsonl");
    let at_10 = serde_json::json!({"type": "assistant", "isSidechain": false, "message": {
        "model": "claude-sonnet-5", "usage": {"input_tokens": 20_000}}});
    std::fs::write(&transcript, format!("{at_10}\n")).unwrap();
    let fields = [(
        "transcript_path",
        serde_json::json!(transcript.display().to_string()),
    )];
    let session: serde_json::Value =
        serde_json::from_str(&checkpoint_testkit::payload("claude", "PreToolUse", dir)).unwrap();
    let sessions = dir.join(".git/checkpoint/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let record = sessions.join(format!(
        "claude-{}.json",
        session["session_id"].as_str().unwrap()
    ));
    let status_line = |at: String| {
        let value = serde_json::json!({"consecutive_blocks": 0, "status_line": {
            "used": 176_000, "window": 200_000, "percent": 88, "at": at}});
        std::fs::write(&record, value.to_string()).unwrap();
    };

    // A stale status line is ignored: the transcript says 10 %.
    status_line("2020-01-02T03:04:05Z".to_owned());
    let run = CLAUDE.fire_with(dir, "PreToolUse", &fields, &[]);
    CLAUDE.assert_no_op(&run, 0, "stale status line, transcript at 10 %");

    status_line(
        checkpoint_engine::host::Host::from_process()
            .now
            .to_string(),
    );
    let run = CLAUDE.fire_with(dir, "PreToolUse", &fields, &[]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let text = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("Checkpoint saved (context 88 %) — 176,000 of 200,000 tokens in use."),
        "{run:?}"
    );
}

/// Commits `checkpoint.toml` with `[tests] command = "<command>"` in `dir`.
fn commit_test_command(dir: &std::path::Path, command: &str) {
    let text = format!("[tests]\ncommand = {command:?}\n");
    std::fs::write(dir.join("checkpoint.toml"), text).unwrap();
    checkpoint_testkit::git(dir, &["add", "checkpoint.toml"]);
    checkpoint_testkit::git(dir, &["commit", "-qm", "test command"]);
}

/// The stop answer of `run`: the block reason and the message for the user.
fn reason_and_notice(run: &checkpoint_testkit::HookRun) -> (String, Option<String>) {
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let text = |key: &str| answer[key].as_str().map(str::to_owned);
    (text("reason").unwrap_or_default(), text("systemMessage"))
}

/// A fresh clone's `checkpoint.toml` runs nothing until the user trusts the project; the user
/// (not the model) is told once how to; after trusting, a failing test blocks; an edit of the
/// command runs the approved one and is reported once.
#[test]
fn project_commands_run_only_once_trusted() {
    let config = tempfile::tempdir().unwrap();
    let repo = repo("failing-test");
    let dir = repo.path();
    let marker = |name: &str| config.path().join(name);
    let command =
        |name: &str| format!("touch {} && python3 -m unittest -q", marker(name).display());
    commit_test_command(dir, &command("first"));
    let stable = |text: String| {
        (text.replace(&dir.display().to_string(), "[repo]"))
            .replace(&config.path().display().to_string(), "[config]")
    };

    // Each stop ends a turn of its own: Claude names the turn in every payload (`prompt_id`).
    let stop = || {
        CLAUDE.fire_in(config.path(), dir, "UserPromptSubmit");
        CLAUDE.fire_in(config.path(), dir, "Stop")
    };
    let untrusted = stop();
    assert!(!marker("first").exists(), "an untrusted command ran");
    let (reason, notice) = reason_and_notice(&untrusted);
    // The checks that run nothing still apply.
    assert!(
        reason.contains("Commit your work before stopping"),
        "{reason}"
    );
    assert!(!reason.contains("checkpoint trust"), "{reason}");
    // The model is told why no tests ran, not that none is configured.
    assert!(
        reason.contains("the project's test command awaits the user's approval")
            && !reason.contains("no test command is configured"),
        "{reason}"
    );
    assert_snapshot!(stable(notice.unwrap()), @r"
    Checkpoint: this project's commands are not approved, so the stop gate ran none of them and showed the model none of its actions (the commit gate still applies):
    - tests.command: touch [config]/first && python3 -m unittest -q
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");
    let again = stop();
    assert_eq!(reason_and_notice(&again).1, None, "told once per session");

    checkpoint_testkit::trust(config.path(), dir, &[]);
    let trusted = stop();
    assert!(marker("first").exists());
    let (reason, notice) = reason_and_notice(&trusted);
    assert!(
        reason.starts_with("Checkpoint — Tests: FAILED\n"),
        "{reason}"
    );
    assert_eq!(notice, None);

    // The agent edits the command; the work changes too, so nothing comes from the cache.
    commit_test_command(dir, &command("second"));
    std::fs::remove_file(marker("first")).unwrap();
    std::fs::write(dir.join("extra.py"), "X = 1\n").unwrap();
    let changed = stop();
    assert!(marker("first").exists(), "the approved command runs");
    assert!(!marker("second").exists(), "the edited command ran");
    let (reason, notice) = reason_and_notice(&changed);
    assert!(
        reason.starts_with("Checkpoint — Tests: FAILED\n"),
        "{reason}"
    );
    assert_snapshot!(stable(notice.unwrap()), @r"
    Checkpoint: checkpoint.toml changed since you approved it; the stop gate keeps applying the configuration you approved, in full, until you approve the new one.
    - new: tests.command: touch [config]/second && python3 -m unittest -q
    - no longer: tests.command: touch [config]/first && python3 -m unittest -q
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");
    let again = stop();
    assert_eq!(reason_and_notice(&again).1, None, "told once per change");
}

/// A repository's `core.fsmonitor` runs nothing at a stop, with either git backend.
#[test]
fn git_config_runs_no_program() {
    for backend in ["cli", "gix"] {
        let repo = repo("python-passing");
        let dir = repo.path();
        let marker = dir.join("..").join(format!(
            "{}-fsmonitor-ran",
            dir.file_name().unwrap().to_string_lossy()
        ));
        let hook = dir.join(".git").join("fsmonitor.sh");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        checkpoint_testkit::git(dir, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
        std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
        let env = [("CHECKPOINT_GIT_BACKEND", backend)];
        let stdin = checkpoint_testkit::payload("claude", "Stop", dir);
        let run = checkpoint_testkit::run_hook(CLAUDE.bin.as_ref(), dir, stdin.as_bytes(), &env);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stdout.contains("\"decision\""), "{backend}: {run:?}");
        assert!(!marker.exists(), "{backend}: core.fsmonitor ran");
    }
}

/// A trusted project whose `checkpoint.toml` the agent then edits, appending `edit`, with
/// uncommitted work (`deploy.yml`): the stops' answers before and after the user approves the
/// edit (as `checkpoint trust --yes` does), and the notice the user got on the first.
struct GuardedEdit {
    blocked: checkpoint_testkit::HookRun,
    notice: String,
    again: checkpoint_testkit::HookRun,
    approved: checkpoint_testkit::HookRun,
}

impl GuardedEdit {
    fn run(edit: &str) -> GuardedEdit {
        let config = tempfile::tempdir().unwrap();
        let repo = uncommitted();
        let dir = repo.path();
        checkpoint_testkit::trust(config.path(), dir, &[]);
        let file = dir.join("checkpoint.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}{edit}")).unwrap();

        let blocked = CLAUDE.fire_in(config.path(), dir, "Stop");
        let (_, notice) = reason_and_notice(&blocked);
        let notice = notice
            .expect("the user is told")
            .replace(&dir.display().to_string(), "[repo]");
        let again = CLAUDE.fire_in(config.path(), dir, "Stop-2");
        checkpoint_testkit::trust(config.path(), dir, &[]);
        let approved = CLAUDE.fire_in(config.path(), dir, "Stop");
        GuardedEdit {
            blocked,
            notice,
            again,
            approved,
        }
    }
}

/// `stop.commit_gate = false` written into a trusted project's file does not switch the commit
/// gate off: uncommitted work still blocks and the user is told, once, what is held back; once
/// the user approves it, the stop is allowed.
#[test]
fn an_edited_commit_gate_is_held_back_until_approved() {
    let edit = GuardedEdit::run("\n[stop]\ncommit_gate = false\n");
    let (reason, _) = reason_and_notice(&edit.blocked);
    assert!(
        reason.contains("Commit your work before stopping"),
        "{reason}"
    );
    assert_snapshot!(edit.notice, @r"
    Checkpoint: checkpoint.toml changed since you approved it; the stop gate keeps applying the configuration you approved, in full, until you approve the new one.
    - new: stop.commit_gate: false
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");
    let (reason, notice) = reason_and_notice(&edit.again);
    assert!(
        reason.contains("Commit your work before stopping"),
        "{reason}"
    );
    assert_eq!(notice, None, "told once per change");
    assert!(
        !edit.approved.stdout.contains("\"decision\""),
        "{:?}",
        edit.approved
    );
}

/// `stop.max_blocks = 0` written into a trusted project's file does not let the next stop
/// through: it still blocks, and the user is told what is held back; once approved, it applies.
#[test]
fn an_edited_block_cap_is_held_back_until_approved() {
    let edit = GuardedEdit::run("\n[stop]\nmax_blocks = 0\n");
    let (reason, _) = reason_and_notice(&edit.blocked);
    assert!(
        reason.contains("Commit your work before stopping"),
        "{reason}"
    );
    assert_snapshot!(edit.notice, @r"
    Checkpoint: checkpoint.toml changed since you approved it; the stop gate keeps applying the configuration you approved, in full, until you approve the new one.
    - new: stop.max_blocks: 0
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");
    assert!(
        edit.again.stdout.contains("\"decision\":\"block\""),
        "{:?}",
        edit.again
    );
    assert!(
        !edit.approved.stdout.contains("\"decision\""),
        "{:?}",
        edit.approved
    );
}

/// `python-passing` with `@unittest.skip("flaky")` added to `test_add`.
fn skipped_test() -> tempfile::TempDir {
    let repo = repo("python-passing");
    let test = repo.path().join("test_calc.py");
    let text = std::fs::read_to_string(&test).unwrap();
    let skipped = text.replace(
        "    def test_add",
        "    @unittest.skip(\"flaky\")\n    def test_add",
    );
    std::fs::write(&test, skipped).unwrap();
    repo
}

#[test]
fn a_skipped_test_blocks_and_names_the_file() {
    let repo = skipped_test();
    let run = CLAUDE.fire(repo.path(), "Stop");
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{run:?}");
    assert_snapshot!(answer["reason"].as_str().unwrap(), @r"
    Checkpoint — The tests were weakened:
      test_calc.py:7: new skip/focus marker `@unittest.skip`
    Fix the code, not the tests: restore what was weakened. If a test itself was wrong, say so to the user in your final answer.
    ");
}

#[test]
fn a_new_or_renamed_test_is_no_integrity_block() {
    for (from, to, passed) in [
        (
            "\n\nif __name__",
            "\n    def test_add_zero(self):\n        self.assertEqual(add(0, 0), 0)\n\n\nif __name__",
            "3 passed",
        ),
        ("def test_add(", "def test_addition(", "2 passed"),
    ] {
        let repo = repo("python-passing");
        let test = repo.path().join("test_calc.py");
        let text = std::fs::read_to_string(&test).unwrap();
        std::fs::write(&test, text.replace(from, to)).unwrap();
        let run = CLAUDE.fire(repo.path(), "Stop");
        let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let reason = answer["reason"].as_str().unwrap();
        assert!(!reason.contains("weakened"), "{reason}");
        let headline = format!("Checkpoint — Tests: {passed}");
        assert!(reason.starts_with(&headline), "{reason}");
    }
}

#[test]
fn integrity_warn_tells_the_user_and_allows() {
    let repo = skipped_test();
    let env = [
        ("CHECKPOINT_INTEGRITY_MODE", "warn"),
        ("CHECKPOINT_STOP_COMMIT_GATE", "false"),
    ];
    let run = CLAUDE.fire_with(repo.path(), "Stop", &[], &env);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let notice = answer["systemMessage"].as_str().unwrap();
    assert!(
        notice.starts_with("Checkpoint — Tests: 1 passed"),
        "{notice}"
    );
    assert!(
        notice.ends_with(
            "\nNote: the tests were weakened (test_calc.py:7: new skip/focus marker \
             `@unittest.skip`).\nIf the test change is intended, accept it with `checkpoint \
             integrity accept`."
        ),
        "{notice}"
    );
}

#[test]
fn help_and_version_say_what_the_adapter_is() {
    let run = |arg: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_checkpoint-claude"))
            .arg(arg)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stderr, b"");
        String::from_utf8(out.stdout).unwrap()
    };
    let version = run("--version");
    assert_eq!(
        version,
        format!("checkpoint-claude {}\n", env!("CARGO_PKG_VERSION"))
    );
    let help = run("--help").replace(env!("CARGO_PKG_VERSION"), "[version]");
    assert_snapshot!(help, @r"
    checkpoint-claude [version]: checkpoint's hook adapter for Claude Code.

    Claude Code runs it for each hook event with the event's JSON on stdin. It answers on stdout and
    always exits 0: a problem is one line on stderr and the agent's no-op answer.

    Usage: checkpoint-claude < payload.json
           checkpoint-claude --version | --help

    Install its hooks with `checkpoint install claude`; check them with `checkpoint doctor`.
    ");
}

/// A session start expires session files past their retention and sweeps the leftovers of
/// interrupted writes anywhere in the state directory — at most once a day: a second session
/// start the same day leaves new ones alone, one a day later removes them.
#[test]
fn a_session_start_housekeeps_the_state_at_most_daily() {
    use std::fs;
    use std::time::{Duration, SystemTime};
    let repo = repo("docs-only");
    let state = repo.path().join(".git/checkpoint");
    let now = SystemTime::now();
    let aged = |path: &std::path::Path, days: u64| {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "{}").unwrap();
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(now - Duration::from_secs(days * 86_400 + 60))
            .unwrap();
    };
    let plant = |tag: &str| {
        let files = [
            state.join(format!("sessions/claude-old-{tag}.json")),
            state.join(format!("sessions/.checkpoint-tmp-{tag}")),
            state.join(format!("tasks/t/history/.checkpoint-tmp-{tag}")),
        ];
        for file in &files {
            aged(file, 40);
        }
        files
    };
    let first = plant("1");
    let young = state.join("sessions/claude-young.json");
    aged(&young, 0);
    let env = [("CHECKPOINT_JOURNAL_RETENTION_SESSIONS", "30d")];
    let run = CLAUDE.fire_with(repo.path(), "SessionStart", &[], &env);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    for file in &first {
        assert!(!file.exists(), "{}", file.display());
    }
    assert!(young.is_file());

    let second = plant("2");
    CLAUDE.fire_with(repo.path(), "SessionStart", &[], &env);
    for file in &second {
        assert!(
            file.exists(),
            "swept again within a day: {}",
            file.display()
        );
    }
    let stamp = fs::File::options()
        .write(true)
        .open(state.join("housekeeping"))
        .unwrap();
    stamp
        .set_modified(now - Duration::from_secs(86_400 + 60))
        .unwrap();
    CLAUDE.fire_with(repo.path(), "SessionStart", &[], &env);
    for file in &second {
        assert!(!file.exists(), "{}", file.display());
    }
    assert!(young.is_file());
}

#[test]
fn an_edit_that_weakens_a_test_is_noted_with_its_result() {
    let answer = adapter::assert_edit_nudge(&CLAUDE, "PostToolUse", |path| {
        vec![
            ("tool_name", "Edit".into()),
            (
                "tool_input",
                serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            ),
        ]
    });
    assert_snapshot!(serde_json::to_string_pretty(&answer).unwrap(), @r#"
    {
      "hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": "Checkpoint: this edit weakened the tests:\n  test_calc.py:7: new skip/focus marker `@unittest.skip`\n  test_calc.py:8: assertions dropped from 2 to 1\nThe stop will block on this. Fix the code, not the tests; if a test itself was wrong, say so to the user in your final answer."
      }
    }
    "#);
}
