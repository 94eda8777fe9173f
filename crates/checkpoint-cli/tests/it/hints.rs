//! Errors met in the first hour, each with a hint that fits it, and states said as they are.

use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use insta::assert_snapshot;

use crate::{checkpoint, code};

/// stderr of `out`, which must have failed as a usage error.
fn refused(out: &Output) -> String {
    assert_eq!(code(out), 2, "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    checkpoint(dir, args, "")
}

/// A fresh repository with task `t` of one step `a` started, then each of `commands` run in it;
/// each must succeed.
fn task_then(commands: &[&[&str]]) -> tempfile::TempDir {
    let repo = checkpoint_testkit::repo("fresh-repo");
    for args in [&["task", "start", "t", "--steps", "a"][..]]
        .iter()
        .chain(commands)
    {
        assert_eq!(code(&run(repo.path(), args)), 0, "{args:?}");
    }
    repo
}

#[test]
fn a_step_finished_before_it_started_says_to_start_it() {
    let repo = task_then(&[]);
    let dir = repo.path();
    assert_snapshot!(refused(&run(dir, &["step", "done"])), @r"
    error: cannot finish a step while the task is step_pending
    hint: no step is running: start it first with `checkpoint step start`
    ");
}

#[test]
fn status_says_every_step_is_done_not_step_pending() {
    let repo = task_then(&[&["step", "start"], &["step", "done"]]);
    let dir = repo.path();
    let status = String::from_utf8(run(dir, &["status"]).stdout).unwrap();
    let lines: Vec<&str> = (status.lines())
        .filter(|l| l.starts_with("State:") || l.starts_with("Step:") || l.starts_with("Next:"))
        .collect();
    assert_snapshot!(lines.join("\n"), @r"
    State: every step done; the task is not completed yet
    Next: every step is done: finish with `checkpoint task complete`.
    ");
}

#[test]
fn a_relative_state_dir_says_how_to_set_it() {
    let repo = checkpoint_testkit::repo("fresh-repo");
    let out = cargo_bin_cmd!("checkpoint")
        .current_dir(repo.path())
        .args(["status"])
        .env("CHECKPOINT_STATE_DIR", "rel")
        .output()
        .unwrap();
    assert_snapshot!(refused(&out), @r#"
    error: CHECKPOINT_STATE_DIR must be an absolute path, not "rel"
    hint: set CHECKPOINT_STATE_DIR to an absolute path, or unset it to keep the state in the repository's git directory
    "#);
}

#[test]
fn verify_of_an_unknown_revision_says_so_in_its_own_words() {
    let repo = checkpoint_testkit::repo("fresh-repo");
    assert_snapshot!(refused(&run(repo.path(), &["verify", "nosuchrev"])), @r"
    error: nosuchrev names no commit
    hint: give a commit (`HEAD`, a branch) or a range with commits in it (`main..HEAD`)
    ");
}

#[test]
fn resume_does_not_offer_a_completed_task() {
    let repo = task_then(&[&["step", "start"], &["save", "mid-task"]]);
    let dir = repo.path();
    let task_lines = || {
        let resumed = String::from_utf8(run(dir, &["resume"]).stdout).unwrap();
        assert!(
            resumed.starts_with("Resumed from checkpoint: mid-task"),
            "{resumed}"
        );
        (resumed.lines()).filter(|l| l.starts_with("Task")).count()
    };
    assert_eq!(task_lines(), 2, "the task and its journal, while it runs");
    for args in [&["step", "done"][..], &["task", "complete"]] {
        assert_eq!(code(&run(dir, args)), 0, "{args:?}");
    }
    assert_eq!(task_lines(), 0, "a completed task is not offered");
}
