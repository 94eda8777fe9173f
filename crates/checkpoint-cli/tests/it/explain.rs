//! `checkpoint explain`: why the last stop was answered as it was, from the sessions' records
//! written by real stops; and what a setting does, from the settings table (issue 38).

use insta::assert_snapshot;
use serde_json::json;

use super::{checkpoint_as, claude_payload, code, git, stable};

/// The session of [`claude_payload`].
const SESSION: &str = "6f1c2a4e-0000-4000-8000-000000000131";

/// `text` with the stop's time (`2026-11-27 22:40:01 UTC`) and commit made stable.
fn timeless(text: &str) -> String {
    let Some(end) = text.find(" UTC") else {
        return text.to_owned();
    };
    let start = end.saturating_sub("2026-11-27 22:40:01".len());
    let text = format!("{}[when]{}", &text[..start], &text[end + " UTC".len()..]);
    let Some(at) = text.find("commit ").map(|at| at + "commit ".len()) else {
        return text;
    };
    format!("{}[commit]{}", &text[..at], &text[at + 12..])
}

#[test]
fn explain_says_why_the_last_stop_was_blocked_then_allowed() {
    let repo = checkpoint_testkit::repo("failing-test");
    let dir = repo.path();
    let config = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(config.path(), dir, &[]);
    let run = |args: &[&str], stdin: &str| checkpoint_as(config.path(), dir, args, stdin);

    // Before any stop: nothing to explain, and the user is told where stops come from.
    let none = run(&["explain"], "");
    assert_eq!(code(&none), 2);
    assert_snapshot!(String::from_utf8_lossy(&none.stderr), @r"
    error: no stop recorded in this worktree's sessions
    hint: a stop is recorded when an agent's stop hook runs here; `checkpoint doctor` checks that it does, and `checkpoint check` judges the worktree now
    ");

    let stop = claude_payload(dir, "Stop", json!({"stop_hook_active": false}));
    let blocked = run(&["check"], &stop);
    assert_eq!(code(&blocked), 1, "{blocked:?}");
    let explained = run(&["explain"], "");
    assert_eq!(code(&explained), 0, "{explained:?}");
    assert_snapshot!(timeless(&stable(&explained.stdout, dir)), @r#"
    The last stop was blocked (tests_failed): Tests: FAILED
      claude session 6f1c2a4e-0000-4000-8000-000000000131, [when], judged from commit [commit]
    What the agent was told:
      $ python3 -m unittest -q (exit 1, [time])
      Failing tests:
      - test_calc.CalcTest.test_add
      Output (last 12 lines):
      ======================================================================
      FAIL: test_add (test_calc.CalcTest.test_add)
      ----------------------------------------------------------------------
      Traceback (most recent call last):
      File "[repo]/test_calc.py", line 8, in test_add
      self.assertEqual(add(2, 3), 5)
      AssertionError: -1 != 5
      ----------------------------------------------------------------------
    Test runs:
      python3 -m unittest -q: failed, 1 passed, 1 failed, [time]
    `checkpoint check` judges the worktree as it is now; `checkpoint report` shows every stop.
    "#);

    // Fixed and committed: the next stop is let through, and that is the last one.
    let fixed = std::fs::read_to_string(dir.join("calc.py")).unwrap();
    std::fs::write(dir.join("calc.py"), fixed.replace("a - b", "a + b")).unwrap();
    git(dir, &["commit", "-qam", "calc: add adds again"]);
    let allowed = run(&["check"], &stop);
    assert_eq!(code(&allowed), 0, "{allowed:?}");
    let explained = run(&["explain", "--session", SESSION], "");
    assert_snapshot!(timeless(&stable(&explained.stdout, dir)), @r"
    The last stop was allowed: No changes since the last commit.
      claude session 6f1c2a4e-0000-4000-8000-000000000131, [when], judged from commit [commit]
    `checkpoint report` shows every stop.
    ");

    let other = run(&["explain", "--session", "another"], "");
    assert_eq!(code(&other), 2);
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("no stop recorded in session another"),
        "{other:?}"
    );
}

#[test]
fn explain_key_says_what_a_setting_does_and_where_its_value_comes_from() {
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    std::fs::write(dir.join("checkpoint.toml"), "[stop]\nmax_blocks = 5\n").unwrap();
    let config = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| checkpoint_as(config.path(), dir, args, "");
    let out = run(&["explain", "stop.max_blocks"]);
    assert_eq!(code(&out), 0, "{out:?}");
    assert_snapshot!(stable(&out.stdout, dir), @r"
    stop.max_blocks: Consecutive blocks per turn; after that the stop is allowed with a warning. `0` never blocks: every stop is allowed with a report of what is unresolved.
      default:  3
      here:     5  # checkpoint.toml:2
      variable: CHECKPOINT_STOP_MAX_BLOCKS
      guarded:  a project's value applies once you approve it (`checkpoint trust`); an agent's tool cannot set it
    Set it with `checkpoint config set stop.max_blocks VALUE` (--user: your own config file).
    ");
    let out = run(&["explain", "context.window"]);
    assert_snapshot!(stable(&out.stdout, dir), @r"
    context.window: The context window's size in tokens.
      default:  (from the transcript or model)
      here:     (from the transcript or model)  # default
      variable: CHECKPOINT_CONTEXT_WINDOW
    Set it with `checkpoint config set context.window VALUE` (--user: your own config file).
    ");

    let unknown = run(&["explain", "stop.max_block"]);
    assert_eq!(code(&unknown), 2);
    assert_snapshot!(String::from_utf8_lossy(&unknown.stderr), @r#"
    error: unknown key "stop.max_block"
    hint: did you mean `stop.max_blocks`?
    "#);
}
