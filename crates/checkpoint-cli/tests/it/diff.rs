//! `checkpoint diff`: what changed since the latest session checkpoint, on real repositories.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;
use checkpoint_core::event::Agent;
use checkpoint_core::journal::Trigger;
use checkpoint_core::policy::GitBackend;
use checkpoint_engine::continuity::{Continuity, SessionCheckpoint, SessionRef};
use checkpoint_engine::git;
use checkpoint_engine::host::Host;
use checkpoint_testkit::repo;
use insta::assert_snapshot;
use serde_json::Value;

use crate::{checkpoint, code, git as run_git, stable};

/// Saves a session checkpoint of the worktree as it is now, dated 45 minutes ago, where the
/// binary looks for it (`<git dir>/checkpoint`).
fn save_checkpoint(dir: &Path) -> SessionCheckpoint {
    let repo = git::discover(dir).unwrap().unwrap();
    let continuity = Continuity::new(&repo.git_dir.join("checkpoint"));
    let changes = git::changes(&repo, GitBackend::Auto).unwrap();
    let (files, more_files) = continuity.capture(&repo.workdir, &changes).unwrap();
    let draft = SessionCheckpoint {
        id: 0,
        trigger: Trigger::Manual,
        // The crate's clock; the test crate does not depend on jiff itself.
        at: Host::from_process().now - Duration::from_secs(45 * 60),
        session: SessionRef {
            agent: Agent::Claude,
            id: "session-1".to_owned(),
        },
        detail: None,
        context: None,
        summary: Some("halfway".to_owned()),
        head: changes.head.commit().map(str::to_owned),
        files,
        more_files,
        task: None,
        progress: Vec::new(),
        unresolved: None,
        signature: None,
    };
    continuity.save(draft).unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `checkpoint diff ARGS` in `dir`, asserting the exit status; returns stdout.
fn diff_ok(dir: &Path, args: &[&str], expected: i32) -> String {
    let mut full = vec!["diff"];
    full.extend(args);
    let out = checkpoint(dir, &full, "");
    assert_eq!(
        code(&out),
        expected,
        "stdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    stable(&out.stdout, dir)
}

#[test]
fn without_a_checkpoint_it_says_how_to_save_one() {
    let repo = repo("python-passing");
    assert_snapshot!(diff_ok(repo.path(), &["--exit-code"], 0), @r#"No checkpoint yet: run `checkpoint save "<what is done>"` to save one (the hooks also save one at every allowed stop)."#);
    let json: Value = serde_json::from_str(&diff_ok(repo.path(), &["--json"], 0)).unwrap();
    assert_eq!(json, serde_json::json!({ "checkpoint": null }));
}

#[test]
fn nothing_changed_since_the_checkpoint() {
    let repo = repo("python-passing");
    fs::write(repo.path().join("calc.py"), "work in progress\n").unwrap();
    save_checkpoint(repo.path());
    assert_snapshot!(diff_ok(repo.path(), &[], 0), @"No work changed since the last checkpoint (45 min ago).");
    assert_eq!(
        diff_ok(repo.path(), &["--exit-code"], 0),
        diff_ok(repo.path(), &[], 0)
    );
}

#[test]
fn edits_new_files_and_deletions_are_listed_with_exact_counts() {
    let repo = repo("python-passing");
    let dir = repo.path();
    fs::write(dir.join("calc.py"), "a\nb\nc\n").unwrap();
    save_checkpoint(dir);
    fs::write(dir.join("calc.py"), "a\nB\nc\nd\n").unwrap();
    fs::write(dir.join("notes.md"), "# Notes\n\n- one\n").unwrap();
    fs::remove_file(dir.join("test_calc.py")).unwrap();
    assert_snapshot!(diff_ok(dir, &[], 0), @r"
    Work changed since last checkpoint: 3 files, +5 −16 lines, last checkpoint 45 min ago
      calc.py  +2 −1
      notes.md  +3 −0
      test_calc.py  +0 −15
    ");
    diff_ok(dir, &["--exit-code"], 1);

    let json: Value = serde_json::from_str(&diff_ok(dir, &["--json"], 0)).unwrap();
    assert_eq!(json["changed"], true);
    assert_eq!(
        (json["added"].as_u64(), json["removed"].as_u64()),
        (Some(5), Some(16))
    );
    assert_eq!(json["checkpoint"], 1);
    assert!(json["at"].is_string());
    assert_eq!(
        json["files"][0],
        serde_json::json!({ "path": "calc.py", "added": 2, "removed": 1, "binary": false })
    );
    assert_eq!(json["files"].as_array().unwrap().len(), 3);
}

#[test]
fn work_committed_after_the_checkpoint_still_shows() {
    let repo = repo("python-passing");
    let dir = repo.path();
    save_checkpoint(dir);
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(
        dir.join("calc.py"),
        format!("{calc}\n\ndef mul(a, b):\n    return a * b\n"),
    )
    .unwrap();
    fs::write(dir.join("db.py"), "DB = {}\n").unwrap();
    run_git(dir, &["add", "-A"]);
    run_git(dir, &["commit", "-q", "-m", "mul and db"]);
    assert_snapshot!(diff_ok(dir, &["--exit-code"], 1), @r"
    Work changed since last checkpoint: 2 files, +5 −0 lines, last checkpoint 45 min ago
      calc.py  +4 −0
      db.py  +1 −0
    ");
}

#[test]
fn big_and_binary_files_count_without_lines() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let big = "0123456789abcdef\n".repeat(70_000); // about 1.1 MiB: hashed, not kept
    fs::write(dir.join("big.log"), &big).unwrap();
    fs::write(dir.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    save_checkpoint(dir);
    fs::write(dir.join("big.log"), format!("{big}more\n")).unwrap();
    fs::write(dir.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0").unwrap();
    assert_snapshot!(diff_ok(dir, &[], 0), @r"
    Work changed since last checkpoint: 2 files, +0 −0 lines, last checkpoint 45 min ago
      big.log  changed, no lines counted
      logo.png  binary
    ");
}

#[test]
fn outside_a_repository_it_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = checkpoint(dir.path(), &["diff"], "");
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("is not inside a git repository"),
        "{}",
        stderr(&out)
    );
}

/// `checkpoint diff` in `dir` with `PATH` set to `path`.
fn diff_with_path(dir: &Path, path: &str) -> Output {
    let config_home = tempfile::tempdir().unwrap();
    let mut cmd = cargo_bin_cmd!("checkpoint");
    cmd.current_dir(dir)
        .arg("diff")
        .env("XDG_CONFIG_HOME", config_home.path())
        .envs(checkpoint_testkit::git_env())
        .env("PATH", path);
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKPOINT_") {
            cmd.env_remove(key);
        }
    }
    cmd.output().unwrap()
}

#[test]
fn without_git_it_fails_with_a_hint() {
    let repo = repo("python-passing");
    save_checkpoint(repo.path());
    // Changed after the checkpoint: its old content must come from git.
    fs::write(repo.path().join("README.md"), "new\n").unwrap();
    let empty = tempfile::tempdir().unwrap();
    let out = diff_with_path(repo.path(), &empty.path().display().to_string());
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert_snapshot!(stderr(&out), @r"
    error: cannot run git cat-file: No such file or directory (os error 2)
    hint: install git, or put it on PATH
    ");
}

#[test]
fn a_hanging_git_times_out() {
    let repo = repo("python-passing");
    save_checkpoint(repo.path());
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("git");
    fs::write(&fake, "#!/bin/sh\nexec sleep 8\n").unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    let out = diff_with_path(repo.path(), &path);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: git status did not finish within 5 s\n"),
        "{err}"
    );
    assert!(err.contains("hint: git is slow or stuck in"), "{err}");
}

#[test]
fn a_checkpoint_saved_by_the_binary_is_the_one_compared_with() {
    let repo = repo("python-passing");
    let dir = repo.path();
    fs::write(dir.join("calc.py"), "x = 1\n").unwrap();
    let saved = checkpoint(dir, &["save", "halfway"], "");
    assert_eq!(code(&saved), 0, "{}", stderr(&saved));
    assert!(
        diff_ok(dir, &["--exit-code"], 0).starts_with("No work changed since the last checkpoint")
    );
    fs::write(dir.join("calc.py"), "x = 2\n").unwrap();
    let changed = diff_ok(dir, &["--exit-code"], 1);
    assert!(changed.ends_with("\n  calc.py  +1 −1\n"), "{changed}");
}
