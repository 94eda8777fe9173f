//! `checkpoint check` on a terminal — a real pseudo-terminal, from util-linux's `script` — shows a
//! ticking "running `…` (N s)…" line on stderr while the tests run, erases it, and colours its
//! headline; `NO_COLOR` takes the colour away and `CLICOLOR_FORCE` gives it to a pipe. Piped, the
//! output is the plain text the other tests pin.

use std::fs;
use std::path::Path;
use std::process::Command;

use checkpoint_testkit::{Tool, repo};

use crate::{checkpoint_as, code, git};

/// The failing fixture with a test command that takes 1.5 s, approved in `config_home`.
fn slow_failing_repo(config_home: &Path) -> tempfile::TempDir {
    let repo = repo("failing-test");
    fs::write(
        repo.path().join("checkpoint.toml"),
        "[tests]\ncommand = \"sleep 1.5; python3 -m unittest -q\"\n",
    )
    .unwrap();
    git(repo.path(), &["add", "checkpoint.toml"]);
    git(repo.path(), &["commit", "-qm", "slow tests"]);
    checkpoint_testkit::trust(config_home, repo.path(), &[]);
    repo
}

/// `checkpoint check` in `dir` on a pseudo-terminal (stdout and stderr both on it), with
/// `TERM=xterm` and the colour variables in `env` only; what the terminal received.
fn check_on_a_terminal(config_home: &Path, dir: &Path, env: &[(&str, &str)]) -> String {
    let bin = env!("CARGO_BIN_EXE_checkpoint");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("'{bin}' check"), "/dev/null"])
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", config_home)
        .env("TERM", "xterm")
        .envs(checkpoint_testkit::git_env());
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKPOINT_") || key.contains("COLOR") {
            cmd.env_remove(key);
        }
    }
    let out = cmd.envs(env.iter().copied()).output().expect("run script");
    assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stdout).unwrap()
}

const RED_HEADLINE: &str = "\x1b[1m\x1b[31mCheckpoint — Tests: FAILED\x1b[0m\r\n";

#[test]
fn on_a_terminal_check_ticks_while_the_tests_run_and_colours_its_verdict() {
    if !checkpoint_testkit::has(Tool::Script) {
        return;
    }
    let config = tempfile::tempdir().unwrap();
    let repo = slow_failing_repo(config.path());
    let tick = "\rrunning `sleep 1.5; python3 -m unittest -q` (1 s)…";

    let shown = check_on_a_terminal(config.path(), repo.path(), &[]);
    let (progress, report) = shown.split_once("\r\x1b[1m").expect(&shown);
    assert!(progress.starts_with(tick), "{shown:?}");
    // Erased: blanks over the whole line, then back to its start.
    let width = tick.chars().count() - 1;
    assert!(
        progress.ends_with(&format!("\r{}", " ".repeat(width))),
        "{shown:?}"
    );
    assert!(
        format!("\r\x1b[1m{report}").starts_with(&format!("\r{RED_HEADLINE}")),
        "{shown:?}"
    );
    assert!(report.contains("test_calc.CalcTest.test_add"), "{shown:?}");

    // Another change: the tests run again.
    fs::write(repo.path().join("notes.py"), "# more\n").unwrap();
    let no_color = check_on_a_terminal(config.path(), repo.path(), &[("NO_COLOR", "1")]);
    assert!(no_color.starts_with(tick), "{no_color:?}");
    assert!(!no_color.contains('\x1b'), "{no_color:?}");
    assert!(
        no_color.contains("\rCheckpoint — Tests: FAILED\r\n"),
        "{no_color:?}"
    );
}

#[test]
fn piped_check_shows_no_ticks_and_colours_only_when_forced() {
    let config = tempfile::tempdir().unwrap();
    let repo = slow_failing_repo(config.path());
    let plain = checkpoint_as(config.path(), repo.path(), &["check"], "");
    assert_eq!(code(&plain), 1);
    assert!(
        plain
            .stdout
            .starts_with("Checkpoint — Tests: FAILED\n".as_bytes())
    );
    assert!(!plain.stdout.contains(&b'\x1b') && plain.stderr.is_empty());

    // The cached outcome now: nothing runs, and CLICOLOR_FORCE colours the pipe.
    let mut forced = Command::new(env!("CARGO_BIN_EXE_checkpoint"));
    forced
        .arg("check")
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", config.path())
        .env("CLICOLOR_FORCE", "1")
        .env_remove("NO_COLOR")
        .envs(checkpoint_testkit::git_env());
    let forced = forced.output().unwrap();
    let stdout = String::from_utf8(forced.stdout).unwrap();
    assert!(
        stdout.starts_with(&RED_HEADLINE.replace("\r\n", "\n")),
        "{stdout:?}"
    );
    assert!(forced.stderr.is_empty(), "no ticks on a pipe");
}
