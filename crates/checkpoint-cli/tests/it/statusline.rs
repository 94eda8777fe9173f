//! `checkpoint statusline` (Claude Code's status line command) and `checkpoint install claude
//! --statusline`.

use std::fs;
use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use insta::assert_snapshot;
use serde_json::{Value, json};

use crate::{checkpoint, code};

const SESSION: &str = "5e55-10n";

/// A status-line payload of Claude Code for a session in `cwd` at `used` of 200,000 tokens.
fn payload(cwd: &Path, used: u64) -> String {
    json!({
        "session_id": SESSION,
        "transcript_path": "/nowhere/transcript.jsonl",
        "cwd": cwd.display().to_string(),
        "model": {"id": "claude-sonnet-5", "display_name": "Sonnet 5"},
        "workspace": {"current_dir": cwd.display().to_string(), "project_dir": cwd.display().to_string()},
        "context_window": {
            "total_input_tokens": used, "total_output_tokens": 7, "context_window_size": 200_000,
            "current_usage": {"input_tokens": 100, "output_tokens": 7,
                "cache_creation_input_tokens": 900, "cache_read_input_tokens": used - 1000},
            "used_percentage": (used * 100).div_ceil(200_000), "remaining_percentage": 0
        },
        "exceeds_200k_tokens": false
    })
    .to_string()
}

/// stdout of a successful `checkpoint statusline`, checked to be one line with nothing on stderr.
fn status_line(dir: &Path, stdin: &str) -> String {
    let out = checkpoint(dir, &["statusline"], stdin);
    assert_eq!(code(&out), 0, "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    stdout.trim_end().to_owned()
}

fn ok(out: &Output) -> String {
    assert_eq!(code(out), 0, "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_line_shows_context_checkpoint_and_task() {
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    assert_eq!(status_line(dir, &payload(dir, 84_000)), "ctx 42 %");

    ok(&checkpoint(dir, &["save", "schema done"], ""));
    ok(&checkpoint(
        dir,
        &["task", "start", "add-auth", "--steps", "schema,api,ui,docs"],
        "",
    ));
    for args in [
        &["step", "start"][..],
        &["step", "done"],
        &["step", "start"],
    ] {
        ok(&checkpoint(dir, args, ""));
    }
    assert_eq!(
        status_line(dir, &payload(dir, 84_000)),
        "ctx 42 % · checkpoint just now · task add-auth 2/4"
    );
    // A subdirectory of the project is the project.
    let sub = dir.join("pkg");
    fs::create_dir_all(&sub).unwrap();
    assert_eq!(
        status_line(&sub, &payload(&sub, 176_000)),
        "ctx 88 % · checkpoint just now · task add-auth 2/4"
    );
}

#[test]
fn the_exact_usage_is_recorded_for_the_session() {
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    status_line(dir, &payload(dir, 84_000));
    let record = dir.join(format!(".git/checkpoint/sessions/claude-{SESSION}.json"));
    let record: Value = serde_json::from_str(&fs::read_to_string(record).unwrap()).unwrap();
    let mut status = record["status_line"].clone();
    let at = status["at"].take();
    assert_eq!(
        status,
        json!({"used": 84_000, "window": 200_000, "percent": 42, "at": null})
    );
    assert!(at.as_str().is_some_and(|at| at.ends_with('Z')), "{at}");
    // The gate's own facts of the session are there too, untouched.
    assert_eq!(record["consecutive_blocks"], 0);
}

#[test]
fn outside_a_repository_only_the_context_is_shown_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        status_line(dir.path(), &payload(dir.path(), 50_000)),
        "ctx 25 %"
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn anything_wrong_prints_a_neutral_line_and_exits_0() {
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let good: Value = serde_json::from_str(&payload(dir, 84_000)).unwrap();
    let with = |key: &str, value: Value| {
        let mut v = good.clone();
        v[key] = value;
        v.to_string()
    };
    for (what, stdin, expected) in [
        ("empty", String::new(), "checkpoint"),
        (
            "garbage",
            "not json \u{7}\u{1b}[2J".to_owned(),
            "checkpoint",
        ),
        ("array", "[1, 2]".to_owned(), "checkpoint"),
        ("truncated", good.to_string()[..40].to_owned(), "checkpoint"),
        (
            "no context yet",
            with("context_window", Value::Null),
            "checkpoint",
        ),
        (
            "missing cwd",
            with("cwd", json!("/nonexistent/checkpoint")),
            "ctx 42 %",
        ),
        (
            "session id escapes",
            with("session_id", json!("../../etc")),
            "ctx 42 %",
        ),
    ] {
        assert_eq!(status_line(dir, &stdin), expected, "{what}");
    }
    assert!(!dir.join(".git/checkpoint/sessions").exists());

    let debug = cargo_bin_cmd!("checkpoint")
        .arg("statusline")
        .env("CHECKPOINT_DEBUG", "1")
        .write_stdin("[1]")
        .output()
        .unwrap();
    assert_eq!(code(&debug), 0);
    assert_eq!(String::from_utf8_lossy(&debug.stdout), "checkpoint\n");
    assert_snapshot!(String::from_utf8_lossy(&debug.stderr), @"checkpoint statusline: the payload is not a JSON object");
}

/// The binary under test as the settings name it.
fn checkpoint_exe() -> String {
    Path::new(env!("CARGO_BIN_EXE_checkpoint"))
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// A project, and a fake Claude adapter outside it.
struct Install {
    project: tempfile::TempDir,
    adapter: String,
    _bin: tempfile::TempDir,
}

impl Install {
    fn new() -> Install {
        let bin = tempfile::tempdir().unwrap();
        let adapter = bin.path().join("checkpoint-claude");
        fs::write(&adapter, "").unwrap();
        Install {
            project: tempfile::tempdir().unwrap(),
            adapter: adapter.canonicalize().unwrap().display().to_string(),
            _bin: bin,
        }
    }

    /// `checkpoint ARGS` in the project; stdout with the temporary paths replaced.
    fn run(&self, args: &[&str]) -> String {
        let out = checkpoint(self.project.path(), args, "");
        self.stable(ok(&out))
    }

    fn install(&self, extra: &[&str]) -> String {
        let mut args = vec!["install", "claude", "--adapter", &self.adapter];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    fn settings_path(&self) -> std::path::PathBuf {
        self.project.path().join(".claude/settings.json")
    }

    fn settings(&self) -> String {
        self.stable(fs::read_to_string(self.settings_path()).unwrap())
    }

    fn stable(&self, text: String) -> String {
        let project = self.project.path().canonicalize().unwrap();
        text.replace(&checkpoint_exe(), "[checkpoint]")
            .replace(&self.adapter, "[adapter]")
            .replace(&project.display().to_string(), "[project]")
            .replace(&self.project.path().display().to_string(), "[project]")
    }
}

#[test]
fn install_sets_the_status_line_and_uninstall_removes_it() {
    const ORIGINAL: &str = "{\n  \"theme\": \"dark\"\n}\n";
    let fx = Install::new();
    fs::create_dir_all(fx.settings_path().parent().unwrap()).unwrap();
    fs::write(fx.settings_path(), ORIGINAL).unwrap();
    let out = fx.install(&["--statusline"]);
    assert!(
        out.contains(
            "Set Claude Code's status line in [project]/.claude/settings.json: [checkpoint] \
             statusline."
        ),
        "{out}"
    );
    let settings = fx.settings();
    // The backup holds the user's file, not the one with the hooks only.
    let backup = fx
        .settings_path()
        .with_file_name("settings.json.checkpoint.bak");
    assert_eq!(fs::read_to_string(backup).unwrap(), ORIGINAL);
    assert_snapshot!(settings, @r#"
    {
      "theme": "dark",
      "hooks": {
        "Stop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "UserPromptSubmit": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PostToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreCompact": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionEnd": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[adapter] --hook",
                "timeout": 5
              }
            ]
          }
        ]
      },
      "statusLine": {
        "type": "command",
        "command": "[checkpoint] statusline"
      }
    }
    "#);

    // Again: nothing changes.
    let again = fx.install(&["--statusline"]);
    assert!(
        again.contains("is already checkpoint's: nothing to change."),
        "{again}"
    );
    assert_eq!(fx.settings(), settings);

    let out = fx.run(&["uninstall", "claude"]);
    assert!(
        out.contains(
            "Removed checkpoint's status line for Claude Code from [project]/.claude/settings.json."
        ),
        "{out}"
    );
    assert_eq!(fx.settings(), ORIGINAL);
}

#[test]
fn a_foreign_status_line_is_kept_with_a_note() {
    let fx = Install::new();
    let original = "{\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \
                    \"~/.claude/statusline.sh\"\n  },\n  \"theme\": \"dark\"\n}\n";
    fs::create_dir_all(fx.settings_path().parent().unwrap()).unwrap();
    fs::write(fx.settings_path(), original).unwrap();

    let out = fx.install(&["--statusline"]);
    let note = out
        .lines()
        .find(|line| line.contains("status line"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_snapshot!(note, @r#"Claude Code's status line in [project]/.claude/settings.json runs `~/.claude/statusline.sh`: left as it is. To chain checkpoint's, make it print both on one line from the same stdin, e.g. `in=$(cat); printf '%s · %s\n' "$(printf %s "$in" | ~/.claude/statusline.sh)" "$(printf %s "$in" | [checkpoint] statusline)"`."#);
    let settings: Value = serde_json::from_str(&fx.settings()).unwrap();
    assert_eq!(
        settings["statusLine"],
        json!({"type": "command", "command": "~/.claude/statusline.sh"})
    );

    fx.run(&["uninstall", "claude"]);
    assert_eq!(fx.settings(), original);
}

#[test]
fn statusline_is_for_claude_only() {
    let fx = Install::new();
    for agent in ["gemini", "codex", "git"] {
        let out = checkpoint(
            fx.project.path(),
            &["install", agent, "--statusline", "--dry-run"],
            "",
        );
        assert_eq!(code(&out), 2, "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--statusline is for Claude Code only"),
            "{out:?}"
        );
    }
    assert!(!fx.settings_path().exists());
}
