//! An approved test command that cannot run — not found, not executable, killed before it
//! reports — blocks the stop like failing tests, and the block cap bounds it (issue 31): a stop
//! the gate could not check is not a stop it let through.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use checkpoint_testkit::{git, repo};
use insta::assert_snapshot;

use super::CLAUDE;

/// The `failing-test` fixture (`add` broken, uncommitted) with `[tests] command = "<command>"`
/// committed, and `script` (when given) committed as `run_tests.sh`, not executable: a stop runs
/// the approved command on broken code.
fn broken_code_with(command: &str, script: Option<&str>) -> tempfile::TempDir {
    let repo = repo("failing-test");
    let dir = repo.path();
    fs::write(
        dir.join("checkpoint.toml"),
        format!("[tests]\ncommand = {command:?}\n"),
    )
    .unwrap();
    let mut files = vec!["checkpoint.toml"];
    if let Some(script) = script {
        let path = dir.join("run_tests.sh");
        fs::write(&path, script).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        files.push("run_tests.sh");
    }
    git(dir, &[&["add"][..], &files].concat());
    git(dir, &["commit", "-qm", "tests"]);
    repo
}

/// The block's reason, without the shell's own complaint (in parentheses; it differs between
/// shells) and with the repository's path as `[repo]`.
fn reason(stdout: &str, dir: &Path) -> String {
    let answer: serde_json::Value = serde_json::from_str(stdout).expect("a JSON answer");
    assert_eq!(answer["decision"], "block", "{stdout}");
    let text = answer["reason"].as_str().unwrap();
    let text = text.replace(&dir.display().to_string(), "[repo]");
    let lines: Vec<&str> = (text.lines())
        .map(|line| line.split(" (").next().unwrap().trim_end())
        .collect();
    lines.join("\n")
}

#[test]
fn a_runner_name_with_a_typo_blocks_until_the_cap() {
    let repo = broken_code_with("pyhton3 -m unittest -q", None);
    let first = CLAUDE.fire(repo.path(), "Stop");
    assert_snapshot!(reason(&first.stdout, repo.path()), @r"
    Checkpoint — Tests: COULD NOT RUN
    $ pyhton3 -m unittest -q
    test command not found: `pyhton3 -m unittest -q`
    The tests could not run, so nothing was checked. Make the tests runnable
    ");
    for _ in 0..2 {
        let again = CLAUDE.fire(repo.path(), CLAUDE.stop_again);
        assert!(CLAUDE.blocked(&again), "{again:?}");
    }
    let capped = CLAUDE.fire(repo.path(), CLAUDE.stop_again);
    assert_snapshot!(capped.stdout, @r#"{"systemMessage":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: the tests could not run (`pyhton3 -m unittest -q`)."}"#);
}

#[test]
fn a_test_script_that_is_not_executable_blocks() {
    let repo = broken_code_with("./run_tests.sh", Some("#!/bin/sh\nexit 0\n"));
    let first = CLAUDE.fire(repo.path(), "Stop");
    assert_snapshot!(reason(&first.stdout, repo.path()), @r"
    Checkpoint — Tests: COULD NOT RUN
    $ ./run_tests.sh
    test command not executable: `./run_tests.sh`
    The tests could not run, so nothing was checked. Make the tests runnable
    ");
}

#[test]
fn a_test_command_killed_before_it_reports_blocks() {
    let repo = broken_code_with("kill -9 $$", None);
    let first = CLAUDE.fire(repo.path(), "Stop");
    assert_snapshot!(reason(&first.stdout, repo.path()), @r"
    Checkpoint — Tests: COULD NOT RUN
    $ kill -9 $$
    test command killed by signal 9
    The tests could not run, so nothing was checked. Make the tests runnable
    ");
}
