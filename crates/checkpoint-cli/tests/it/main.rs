//! Integration tests of the `checkpoint` binary against real git repositories built by the
//! fixture scripts in `tests/fixtures/`.

mod check;
mod checks;
mod ci;
mod completions;
mod config;
mod diff;
mod doctor;
mod exit_codes;
mod explain;
mod first_hour;
mod hints;
mod history;
mod install;
mod install_mcp;
mod integrity;
mod integrity_gate;
mod journal;
mod mcp;
mod objects;
mod old_tests;
mod old_tests_compiled;
mod report;
mod restore;
mod select;
mod select_compiled;
mod select_dynamic;
mod select_pytest;
mod statusline;
mod terminal;
mod travel;
mod trust;
mod turn_base;

use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;

/// `checkpoint ARGS` in `dir`, isolated from the developer's own config and state overrides, by
/// the test user (see [`checkpoint_testkit::as_test_user`]), who trusts the project in `dir`.
pub fn checkpoint(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let config_home = tempfile::tempdir().expect("temp config home");
    checkpoint_testkit::as_test_user(config_home.path());
    checkpoint_testkit::trust(config_home.path(), dir, &[]);
    checkpoint_as(config_home.path(), dir, args, stdin)
}

/// `checkpoint ARGS` in `dir` as [`checkpoint`] runs it, for the user whose config directory (an
/// `XDG_CONFIG_HOME`, with its trust store) is `config_home`.
pub fn checkpoint_as(config_home: &Path, dir: &Path, args: &[&str], stdin: &str) -> Output {
    checkpoint_command(config_home, dir, args)
        .write_stdin(stdin)
        .output()
        .expect("run checkpoint")
}

/// The command [`checkpoint_as`] runs, for a test to add to (its environment) before running it.
pub fn checkpoint_command(config_home: &Path, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = cargo_bin_cmd!("checkpoint");
    cmd.current_dir(dir)
        .args(args)
        .env("XDG_CONFIG_HOME", config_home)
        .envs(checkpoint_testkit::git_env());
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKPOINT_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// A Claude Code hook payload of `event` in `dir`, for one session (`extra` adds fields): what
/// `checkpoint check` reads from stdin as the hook would.
pub fn claude_payload(dir: &Path, event: &str, extra: serde_json::Value) -> String {
    let mut value = serde_json::json!({
        "session_id": "6f1c2a4e-0000-4000-8000-000000000131",
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": event,
    });
    if let (Some(to), Some(from)) = (value.as_object_mut(), extra.as_object()) {
        to.extend(from.clone());
    }
    value.to_string()
}

/// stdout, with the repository path and timings made stable for snapshots.
pub fn stable(out: &[u8], repo: &Path) -> String {
    let text = String::from_utf8_lossy(out).replace(&repo.display().to_string(), "[repo]");
    let mut result = String::with_capacity(text.len());
    let mut rest = text.as_str();
    // Replace every "<digits>[.<digits>](ms|s|m NNs)" with "[time]".
    while let Some(pos) = rest.find(|c: char| c.is_ascii_digit()) {
        result.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        let num_len = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        let after = &tail[num_len..];
        let unit = ["ms", "s"]
            .into_iter()
            .find(|u| after.starts_with(u) && !after[u.len()..].starts_with(char::is_alphanumeric));
        match unit {
            Some(u) => {
                result.push_str("[time]");
                rest = &after[u.len()..];
            }
            None => {
                result.push_str(&tail[..num_len]);
                rest = after;
            }
        }
    }
    result.push_str(rest);
    result
}

/// The exit code, panicking on a signal.
pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

pub use checkpoint_testkit::git;
