//! `checkpoint-codex` against real repositories, with payloads captured from Codex CLI 0.169.0,
//! and its legacy `notify` mode against a real tmux server.

use std::path::Path;
use std::process::Command;

use adapter_codex::HOME;
use checkpoint_testkit::adapter::{self, Adapter, Wire, uncommitted};
use checkpoint_testkit::{Tool, repo};
use insta::assert_snapshot;
use proptest::prelude::*;

const CODEX: Adapter = Adapter {
    bin: env!("CARGO_BIN_EXE_checkpoint-codex"),
    agent: "codex",
    stop: "Stop",
    stop_again: "Stop-2",
    no_op: "",
    wire: Wire::SHARED,
};

#[test]
fn block_has_no_key_beyond_decision_and_reason() {
    let repo = uncommitted();
    let run = CODEX.fire(repo.path(), "Stop");
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_snapshot!(run.stdout, @r#"{"decision":"block","reason":"Checkpoint — No tests to run\nYou have uncommitted code changes. Commit your work before stopping.\n  ? deploy.yml"}"#);
}

#[test]
fn allow_is_empty_stdout() {
    let repo = repo("docs-only");
    CODEX.assert_no_op(&CODEX.fire(repo.path(), "Stop"), 0, "docs-only stop");
}

#[test]
fn other_events_are_answered_with_nothing() {
    CODEX.assert_other_events_are_no_ops(&[
        "PreToolUse",
        "PostToolUse",
        "SessionStart",
        "SessionStart-compact",
        "SessionEnd",
        "PreCompact-auto",
        "PostCompact-auto",
        "UserPromptSubmit",
    ]);
}

#[test]
fn the_cap_is_told_to_the_user() {
    let repo = uncommitted();
    let capped = CODEX.fourth_stop(repo.path());
    assert_snapshot!(capped.stdout, @r#"{"systemMessage":"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: 1 file uncommitted."}"#);
}

#[test]
fn bad_input_fails_open() {
    CODEX.assert_bad_input_fails_open();
}

#[test]
fn subagents_answer_only_for_their_own_failing_tests() {
    adapter::assert_subagent_rules(&CODEX);
}

#[test]
fn the_turn_is_told_by_turn_id() {
    adapter::assert_turns_are_told_by(&CODEX, "turn_id");
}

/// An isolated tmux server with one pane running `cat`, which echoes each submitted line.
struct Tmux {
    dir: tempfile::TempDir,
}

impl Tmux {
    /// The server, or `None` without tmux (see [`checkpoint_testkit::has`]).
    fn start() -> Option<Tmux> {
        Tmux::running("cat")
    }

    /// The server with one pane running the shell `command`.
    fn running(command: &str) -> Option<Tmux> {
        if !checkpoint_testkit::has(Tool::Tmux) {
            return None;
        }
        let tmux = Tmux {
            dir: tempfile::tempdir().unwrap(),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "codex",
            "-x",
            "200",
            "-y",
            "50",
            command,
        ]);
        Some(tmux)
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(args)
            .env("TMUX_TMPDIR", self.dir.path())
            .env_remove("TMUX")
            .output()
            .expect("tmux is installed (.ci/run installs it)");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn notify(&self, repo: &Path, payload: &serde_json::Value) -> checkpoint_testkit::HookRun {
        let out = Command::new(CODEX.bin)
            .arg("notify")
            .arg(payload.to_string())
            .current_dir(repo)
            .env("TMUX_TMPDIR", self.dir.path())
            .env("CHECKPOINT_CODEX_PANE", "codex:0.0")
            .env("XDG_CONFIG_HOME", self.dir.path())
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .output()
            .unwrap();
        checkpoint_testkit::HookRun {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-server"])
            .env("TMUX_TMPDIR", self.dir.path())
            .status();
    }
}

fn notify_payload(repo: &Path, thread: &str, first_message: &str) -> serde_json::Value {
    let raw = checkpoint_testkit::payload("codex", "notify", repo);
    let mut v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    v["thread-id"] = thread.into();
    v["input-messages"] = serde_json::json!([first_message]);
    v
}

#[test]
fn notify_types_the_block_into_the_pane_and_submits_it() {
    // A file name with control characters must not reach the terminal as keys.
    let repo = uncommitted();
    std::fs::write(repo.path().join("evil\x1b[2J\x03name.yml"), "x: 1\n").unwrap();
    let Some(tmux) = Tmux::start() else { return };
    let run = tmux.notify(
        repo.path(),
        &notify_payload(repo.path(), "main-thread", "fix it"),
    );
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    let screen = tmux.run(&["capture-pane", "-p", "-t", "codex:0.0"]);
    // `cat` echoes the line only after Enter: the text appears once typed and once echoed.
    assert_eq!(
        screen.matches("Commit your work before stopping.").count(),
        2,
        "{screen}"
    );
    assert!(screen.contains("? evil[2Jname.yml"), "{screen}");
}

/// In a pane whose program asked for bracketed paste, as Codex's composer does, the message
/// arrives as one paste (`ESC [200~` … `ESC [201~`), and the Enter after it on its own.
#[test]
fn notify_pastes_the_block_as_one_bracketed_paste() {
    let repo = uncommitted();
    let Some(tmux) = Tmux::running("printf '\\033[?2004h'; exec cat -v") else {
        return;
    };
    let run = tmux.notify(
        repo.path(),
        &notify_payload(repo.path(), "main-thread", "fix it"),
    );
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    let screen = tmux.run(&["capture-pane", "-p", "-t", "codex:0.0"]);
    assert!(screen.contains("^[[200~Checkpoint"), "{screen}");
    assert!(screen.contains("before stopping."), "{screen}");
    assert!(screen.contains("^[[201~"), "{screen}");
}

#[test]
fn notify_ignores_title_generation_threads() {
    let repo = uncommitted();
    let Some(tmux) = Tmux::start() else { return };
    let payload = notify_payload(
        repo.path(),
        "title-thread",
        "Generate a concise, single-line task title for the conversation",
    );
    let run = tmux.notify(repo.path(), &payload);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    let screen = tmux.run(&["capture-pane", "-p", "-t", "codex:0.0"]);
    assert!(!screen.contains("Checkpoint"), "{screen}");
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
    fn arbitrary_notify_payloads_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        let _ = adapter_codex::notify::event(&bytes);
    }
}

#[test]
fn sessions_resume_and_context_is_watched() {
    let (_, notice) = CODEX.assert_continuity("SessionStart", "PreToolUse", "PostToolUse");
    assert_snapshot!(notice.to_string());
}

#[test]
fn help_names_the_notify_program() {
    let out = Command::new(env!("CARGO_BIN_EXE_checkpoint-codex"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let usage: Vec<&str> = (help.lines())
        .skip_while(|l| !l.starts_with("Usage:"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_snapshot!(usage.join("\n"), @r"
    Usage: checkpoint-codex < payload.json
           checkpoint-codex --version | --help
           checkpoint-codex notify '<json>'   (Codex's `notify` program: see `notify --help`)
    ");
}

#[test]
fn notify_help_says_what_it_is() {
    let out = Command::new(env!("CARGO_BIN_EXE_checkpoint-codex"))
        .args(["notify", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stderr, b"");
    assert_snapshot!(String::from_utf8(out.stdout).unwrap(), @r#"
    checkpoint-codex notify: checkpoint's stop gate for Codex's legacy `notify` program.

    Codex runs it after each turn with the turn's JSON as the last argument. On a block, the gate's
    message is typed into the Codex pane in tmux ($TMUX_PANE, or CHECKPOINT_CODEX_PANE). It always
    exits 0: a problem is one line on stderr.

    Usage: in ~/.codex/config.toml,
        notify = ["/path/to/checkpoint-codex", "notify"]
    "#);
}

#[test]
fn broken_config_fails_open_and_tells_the_user_once_per_session() {
    let answer =
        CODEX.assert_config_error_told_once_per_session("PreToolUse", "Stop", "SessionStart");
    assert_snapshot!(answer, @r#"{"systemMessage":"Checkpoint — The gate is off until its config is fixed (stops are allowed unchecked): [repo]/checkpoint.toml:1: syntax error: unclosed table, expected `]`"}"#);
}
