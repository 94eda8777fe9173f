//! The whole turn is judged: a stop compares the worktree with the commit `HEAD` was at when the
//! turn began (recorded at the agent's prompt), so work the agent committed during the turn is
//! tested and integrity-checked like uncommitted work; history moved under the turn is judged
//! against the merge base, and the message says so.

use std::fs;
use std::path::Path;

use checkpoint_testkit::repo;
use insta::assert_snapshot;

use crate::{checkpoint_as, code, git, stable};

const SESSION: &str = "6f1c2a4e-0000-4000-8000-000000000031";

/// A copy of the `python-passing` fixture, and a user config directory that trusts it.
struct Trusted {
    repo: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Trusted {
    fn new() -> Trusted {
        let trusted = Trusted {
            repo: repo("python-passing"),
            user: tempfile::tempdir().unwrap(),
        };
        checkpoint_testkit::trust(trusted.user.path(), trusted.repo.path(), &[]);
        trusted
    }
}

/// A Claude Code `UserPromptSubmit` payload for `dir`: a turn begins.
fn prompt(dir: &Path) -> String {
    serde_json::json!({
        "session_id": SESSION,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "make add faster",
    })
    .to_string()
}

/// A Claude Code `Stop` payload for `dir`.
fn stop(dir: &Path, active: bool) -> String {
    serde_json::json!({
        "session_id": SESSION,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "Done.",
    })
    .to_string()
}

/// The commit `name` names in `dir`.
fn rev(dir: &Path, name: &str) -> String {
    let out = git(dir, &["rev-parse", name]);
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Breaks `add` and changes its test's expected value to match: the tests pass.
fn break_add_and_weaken_its_test(dir: &Path) {
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(dir.join("calc.py"), calc.replace("a + b", "a - b")).unwrap();
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let weakened = tests.replace("add(2, 3), 5)", "add(2, 3), -1)");
    assert_ne!(tests, weakened);
    fs::write(dir.join("test_calc.py"), weakened).unwrap();
}

#[test]
fn broken_code_with_a_weakened_test_committed_during_the_turn_is_blocked() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);

    assert_eq!(code(&check(&prompt(dir))), 0);
    break_add_and_weaken_its_test(dir);
    git(dir, &["commit", "-qam", "wip"]);
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    assert_snapshot!(stable(&blocked.stdout, dir), @r"
    Checkpoint — The tests were weakened:
      test_calc.py:8: expected value changed from `5` to `-1`
    Fix the code, not the tests: restore what was weakened. If a test itself was wrong, say so to the user in your final answer.
    Checkpoint — The tests were changed to fit the code:
      `python3 -m unittest -q`: the tests as they were fail on your code: `test_calc.CalcTest.test_add` (AssertionError: -1 != 5)
    Fix the code so that the tests as they were pass, and keep what their assertions meant. If the behaviour change is intended, say so to the user in your final answer: the user can accept it.
    ");

    // The same turn, asked again: still judged from where it began.
    let again = check(&stop(dir, true));
    assert_eq!(code(&again), 1, "{}", stdout(&again));

    // A manual check knows no turn: against `HEAD`, as before, unless told the base.
    let manual = checkpoint_as(user.path(), dir, &["check"], "");
    assert_eq!(code(&manual), 0, "{}", stdout(&manual));
    let based = checkpoint_as(user.path(), dir, &["check", "--base", "HEAD~1"], "");
    assert_eq!(code(&based), 1, "{}", stdout(&based));
    assert_eq!(stable(&based.stdout, dir), stable(&blocked.stdout, dir));
    let json = checkpoint_as(
        user.path(),
        dir,
        &["check", "--json", "--base", "HEAD~1"],
        "",
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["verdict"], "block");
    assert_eq!(value["base"], rev(dir, "HEAD~1").as_str());
    let bad = checkpoint_as(user.path(), dir, &["check", "--base", "no-such-rev"], "");
    assert_ne!(code(&bad), 0);
    assert_ne!(code(&bad), 1, "an unknown base is an error, not a verdict");
}

#[test]
fn a_failing_commit_names_the_failing_test() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);

    assert_eq!(code(&check(&prompt(dir))), 0);
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(dir.join("calc.py"), calc.replace("a + b", "a - b")).unwrap();
    git(dir, &["commit", "-qam", "wip"]);
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    assert!(
        stdout(&blocked).contains("test_add"),
        "{}",
        stdout(&blocked)
    );
}

#[test]
fn honest_work_committed_during_the_turn_is_allowed_at_once() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);

    assert_eq!(code(&check(&prompt(dir))), 0);
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(
        dir.join("calc.py"),
        calc + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();
    git(dir, &["commit", "-qam", "calc: mul"]);
    let allowed = check(&stop(dir, false));
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    // The tests ran on the committed change, and the commit gate has nothing to ask.
    assert_snapshot!(stable(&allowed.stdout, dir), @"Checkpoint — Tests: 2 passed ([time]). Nothing else required.");
    let json = checkpoint_as(user.path(), dir, &["check", "--json"], &stop(dir, false));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["verdict"], "allow");
    // The allowed stop ended the turn: the next stop is judged from the new `HEAD`.
    assert_eq!(value["base"], rev(dir, "HEAD").as_str());
    assert_eq!(value["reason"]["kind"], "no_changes");
}

#[test]
fn committing_the_work_a_stop_tested_reuses_its_results() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);

    assert_eq!(code(&check(&prompt(dir))), 0);
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(
        dir.join("calc.py"),
        calc + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();
    // The tests pass; the commit gate asks for a commit.
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    assert!(!stdout(&blocked).contains("cached"), "{}", stdout(&blocked));
    // The same tree, committed: the turn's change set from its base names it as before.
    git(dir, &["commit", "-qam", "calc: mul"]);
    let allowed = check(&stop(dir, true));
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    assert!(
        stdout(&allowed).contains(", cached"),
        "{}",
        stdout(&allowed)
    );
}

#[test]
fn a_retry_prompt_does_not_move_the_base() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);

    assert_eq!(code(&check(&prompt(dir))), 0);
    break_add_and_weaken_its_test(dir);
    git(dir, &["commit", "-qam", "wip"]);
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    // The agent sends our block message back as its next prompt (Gemini does): the same turn.
    let retry = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "UserPromptSubmit",
        "prompt": stdout(&blocked).trim(),
    });
    assert_eq!(code(&check(&retry.to_string())), 0);
    assert_eq!(code(&check(&stop(dir, true))), 1);
    // A real new prompt begins a new turn at `HEAD`.
    assert_eq!(code(&check(&prompt(dir))), 0);
    assert_eq!(code(&check(&stop(dir, false))), 0);
}

#[test]
fn history_moved_under_the_turn_is_judged_against_the_merge_base_and_said() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);
    // A commit the turn will begin on top of.
    fs::write(dir.join("README.md"), "# calc\n\nMore docs.\n").unwrap();
    git(dir, &["commit", "-qam", "docs"]);

    assert_eq!(code(&check(&prompt(dir))), 0);
    let (began, merge_base) = (rev(dir, "HEAD"), rev(dir, "HEAD~1"));
    // The agent resets the docs commit away, then commits the broken code on the old base.
    git(dir, &["reset", "-q", "--hard", "HEAD~1"]);
    break_add_and_weaken_its_test(dir);
    git(dir, &["commit", "-qam", "wip"]);
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    let text = (stable(&blocked.stdout, dir))
        .replace(&began[..12], "[began]")
        .replace(&merge_base[..12], "[merge base]");
    assert_snapshot!(text, @r"
    Checkpoint — The tests were weakened:
      test_calc.py:8: expected value changed from `5` to `-1`
    Fix the code, not the tests: restore what was weakened. If a test itself was wrong, say so to the user in your final answer.
    Checkpoint — The tests were changed to fit the code:
      `python3 -m unittest -q`: the tests as they were fail on your code: `test_calc.CalcTest.test_add` (AssertionError: -1 != 5)
    Fix the code so that the tests as they were pass, and keep what their assertions meant. If the behaviour change is intended, say so to the user in your final answer: the user can accept it.
    Note: history moved during the turn (it began at [began], no longer an ancestor of HEAD): the turn was judged against their merge base [merge base].
    ");

    // Honest work after a reset is allowed, and the message still says what it was judged
    // against: never silently.
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);
    fs::write(dir.join("README.md"), "# calc\n\nMore docs.\n").unwrap();
    git(dir, &["commit", "-qam", "docs"]);
    assert_eq!(code(&check(&prompt(dir))), 0);
    git(dir, &["reset", "-q", "--hard", "HEAD~1"]);
    let allowed = check(&stop(dir, false));
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    assert!(
        stdout(&allowed).contains("history moved during the turn"),
        "{}",
        stdout(&allowed)
    );
}

#[test]
fn a_rebase_during_the_turn_is_judged_against_the_merge_base() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);
    // A feature branch with a commit of its own, and upstream work on the branch it came from.
    let upstream = stdout(&git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]));
    let upstream = upstream.trim();
    git(dir, &["checkout", "-qb", "feature"]);
    fs::write(dir.join("NOTES.md"), "feature notes\n").unwrap();
    git(dir, &["add", "NOTES.md"]);
    git(dir, &["commit", "-qm", "feature"]);
    git(dir, &["checkout", "-q", upstream]);
    fs::write(dir.join("README.md"), "# calc\n\nUpstream docs.\n").unwrap();
    git(dir, &["commit", "-qam", "upstream"]);
    git(dir, &["checkout", "-q", "feature"]);

    // The turn begins on the feature commit; the agent commits broken code with a weakened test
    // and rebases the branch onto upstream, rewriting the commit the turn began at.
    assert_eq!(code(&check(&prompt(dir))), 0);
    let began = rev(dir, "HEAD");
    break_add_and_weaken_its_test(dir);
    git(dir, &["commit", "-qam", "wip"]);
    git(dir, &["rebase", "-q", upstream]);
    let still_ancestor = std::process::Command::new("git")
        .args(["merge-base", "--is-ancestor", &began, "HEAD"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(
        !still_ancestor.success(),
        "the rebase rewrote the commit the turn began at"
    );
    let blocked = check(&stop(dir, false));
    let text = stdout(&blocked);
    assert_eq!(code(&blocked), 1, "{text}");
    assert!(
        text.contains("test_calc.py:8: expected value changed from `5` to `-1`"),
        "{text}"
    );
    assert!(text.contains("history moved during the turn"), "{text}");
}

#[test]
fn without_a_prompt_event_a_turn_begins_at_the_session_start_or_the_last_allowed_stop() {
    let trusted = Trusted::new();
    let (dir, user) = (trusted.repo.path(), &trusted.user);
    let check = |stdin: &str| checkpoint_as(user.path(), dir, &["check"], stdin);
    let start = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    assert_eq!(code(&check(&start.to_string())), 0);
    break_add_and_weaken_its_test(dir);
    git(dir, &["commit", "-qam", "wip"]);
    assert_eq!(code(&check(&stop(dir, false))), 1);

    // Put right and committed: allowed, and the next turn begins here.
    git(dir, &["revert", "--no-edit", "HEAD"]);
    let allowed = check(&stop(dir, true));
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    // A compaction's session start mid-turn does not move the base.
    let compact = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "compact",
    });
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(dir.join("calc.py"), calc.replace("a - b", "a + b - 1")).unwrap();
    git(dir, &["commit", "-qam", "wip again"]);
    assert_eq!(code(&check(&compact.to_string())), 0);
    let blocked = check(&stop(dir, false));
    assert_eq!(code(&blocked), 1, "{}", stdout(&blocked));
    assert!(
        stdout(&blocked).contains("test_sub"),
        "{}",
        stdout(&blocked)
    );
}
