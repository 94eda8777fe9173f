//! `checkpoint config`: the effective settings with their origins, `get` and `set` on real
//! repositories, with the user config in a temporary home.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use insta::assert_snapshot;
use serde_json::Value;

use super::code;

/// A fixture repository and a config home of its own.
struct Project {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Project {
    /// The passing Python project, with `checkpoint.toml` holding `config`.
    fn new(config: &str) -> Project {
        let repo = checkpoint_testkit::repo("python-passing");
        fs::write(repo.path().join("checkpoint.toml"), config).unwrap();
        Project {
            repo,
            home: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    fn env(mut self, key: &str, value: &str) -> Project {
        self.env.push((key.into(), value.into()));
        self
    }

    fn project_file(&self) -> PathBuf {
        self.repo.path().join("checkpoint.toml")
    }

    fn user_file(&self) -> PathBuf {
        self.home.path().join("checkpoint").join("config.toml")
    }

    /// `checkpoint ARGS` in a subdirectory of the repository, with `XDG_CONFIG_HOME` in the
    /// temporary home and no `CHECKPOINT_*` variables but ours.
    fn run(&self, args: &[&str]) -> Output {
        let cwd = self.repo.path().join("sub");
        fs::create_dir_all(&cwd).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkpoint"));
        cmd.args(args)
            .current_dir(cwd)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .envs(checkpoint_testkit::git_env())
            .stdin(Stdio::null());
        for (key, _) in std::env::vars() {
            if key.starts_with("CHECKPOINT_") {
                cmd.env_remove(key);
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.output().expect("run checkpoint")
    }

    /// Runs, asserts success and returns stdout with the temporary paths redacted.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            code(&out),
            0,
            "checkpoint {args:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.redact(&out.stdout)
    }

    /// Runs, asserts failure and returns stderr with the temporary paths redacted.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_ne!(code(&out), 0, "checkpoint {args:?} should fail");
        assert!(out.stdout.is_empty(), "nothing on stdout");
        self.redact(&out.stderr)
    }

    fn redact(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        redact_path(
            &redact_path(&text, self.repo.path(), "[repo]"),
            self.home.path(),
            "[home]",
        )
    }
}

fn redact_path(text: &str, path: &Path, with: &str) -> String {
    text.replace(path.to_str().unwrap(), with)
}

const CONFIG: &str = r#"# Project settings.
[context]
warn = 70  # save early

[[rule]]
name = "docs"
include = ["docs/**"]
tests = false
"#;

#[test]
fn config_lists_every_key_with_its_value_and_origin() {
    let project = Project::new(CONFIG).env("CHECKPOINT_CONTEXT_CRITICAL", "95");
    fs::create_dir_all(project.user_file().parent().unwrap()).unwrap();
    fs::write(project.user_file(), "[stop]\n\nmax_blocks = 5\n").unwrap();
    assert_snapshot!(project.ok(&["config"]), @r#"
    tests.command = "python3 -m unittest -q"         # detected
    tests.timeout = "2m"                             # default
    tests.select = "affected"                        # default
    tests.full_before_commit = false                 # default
    tests.prewarm = false                            # default
    tests.class = "full"                             # default
    checks.typecheck = (none)                        # default
    checks.lint = (none)                             # default
    checks.build = (none)                            # default
    checks.custom = (none)                           # default
    checks.timeout = "2m"                            # default
    checks.typecheck_class = "fast"                  # default
    checks.lint_class = "fast"                       # default
    checks.build_class = "full"                      # default
    checks.custom_class = "full"                     # default
    stop.commit_gate = true                          # default
    stop.max_blocks = 5                              # [home]/checkpoint/config.toml:3
    stop.capture = false                             # default
    stop.capture_interval = "30m"                    # default
    stop.profile = "every"                           # default
    stop.claims = ["done", "finished", "complete", "completed", "implemented", "fixed", "resolved", "tests pass", "tests passed", "tests are passing", "ready for review"]  # default
    git.backend = "auto"                             # default
    journal.retention_completed = "30d"              # default
    journal.retention_failed = "7d"                  # default
    journal.retention_abandoned = "7d"               # default
    journal.retention_sessions = "30d"               # default
    journal.max_sessions = 1000                      # default
    journal.max_checkpoints = 50                     # default
    journal.stale_threshold = "5m"                   # default
    journal.checkpoint_interval = "5m"               # default
    journal.key_derivation = "m/7466'/{task}'"       # default
    context.warn = 70                                # checkpoint.toml:3
    context.critical = 95                            # env CHECKPOINT_CONTEXT_CRITICAL
    context.window = (from the transcript or model)  # default
    resume.auto = true                               # default
    resume.max_restarts = 3                          # default
    clear.auto_checkpoint = true                     # default
    integrity.mode = "block"                         # default
    integrity.tests = []                             # default
    integrity.protected = []                         # default
    integrity.prove_failing = false                  # default
    travel.push_budget = "3s"                        # default
    travel.fetch_budget = "10s"                      # default
    rule.docs = { gate = false, include = ["docs/**"], tests = false }  # checkpoint.toml:6
    "#);
}

#[test]
fn config_json_lists_key_value_and_origin() {
    let project = Project::new(CONFIG).env("CHECKPOINT_AUTO_RESUME", "prompt");
    let list: Vec<Value> = serde_json::from_str(&project.ok(&["config", "--json"])).unwrap();
    let entry = |key: &str| {
        list.iter()
            .find(|e| e["key"] == key)
            .unwrap_or_else(|| panic!("{key} missing"))
            .clone()
    };
    assert_eq!(
        entry("context.warn"),
        serde_json::json!({
            "key": "context.warn",
            "value": 70,
            "origin": { "kind": "file", "path": "[repo]/checkpoint.toml", "line": 3 },
        })
    );
    assert_eq!(
        entry("resume.auto"),
        serde_json::json!({
            "key": "resume.auto",
            "value": "prompt",
            "origin": { "kind": "env", "var": "CHECKPOINT_AUTO_RESUME" },
        })
    );
    assert_eq!(entry("context.window")["value"], Value::Null);
    assert_eq!(entry("tests.command")["origin"]["kind"], "detected");
    assert_eq!(entry("stop.max_blocks")["origin"]["kind"], "default");
    assert_eq!(entry("rule.docs")["value"]["include"][0], "docs/**");
}

#[test]
fn get_prints_one_value_and_refuses_unknown_keys() {
    let project = Project::new(CONFIG);
    assert_eq!(project.ok(&["config", "get", "context.warn"]), "70\n");
    assert_eq!(project.ok(&["config", "get", "git.backend"]), "\"auto\"\n");
    // A duration as a user writes it, not re-cut into units.
    project.ok(&["config", "set", "tests.timeout", "90s"]);
    assert_eq!(project.ok(&["config", "get", "tests.timeout"]), "\"90s\"\n");
    let stderr = project.fails(&["config", "get", "context.warning"]);
    insta::assert_snapshot!(stderr, @r#"
    error: unknown key "context.warning"
    hint: did you mean `context.warn`?
    "#);
    // A key like none of them lists them all.
    let stderr = project.fails(&["config", "get", "zzz"]);
    assert!(
        stderr.starts_with("error: unknown key \"zzz\"\nhint: valid keys: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("context.warn, context.critical"),
        "{stderr}"
    );
}

#[test]
fn set_keeps_comments_and_config_shows_the_new_origin() {
    let project = Project::new(CONFIG);
    assert_eq!(
        project.ok(&["config", "set", "context.warn", "85"]),
        "Set context.warn = 85 in checkpoint.toml.\n"
    );
    assert_eq!(
        project.ok(&["config", "set", "resume.auto", "prompt"]),
        "Set resume.auto = \"prompt\" in checkpoint.toml.\n"
    );
    assert_snapshot!(fs::read_to_string(project.project_file()).unwrap(), @r#"
    # Project settings.
    [context]
    warn = 85  # save early

    [[rule]]
    name = "docs"
    include = ["docs/**"]
    tests = false

    [resume]
    auto = "prompt"
    "#);
    let listed = project.ok(&["config"]);
    assert_eq!(
        line(&listed, "context.warn"),
        "context.warn = 85 # checkpoint.toml:3"
    );
    assert_eq!(
        line(&listed, "resume.auto"),
        "resume.auto = \"prompt\" # checkpoint.toml:11"
    );
}

/// The line of `checkpoint config` output for `key`, with runs of spaces squeezed.
fn line(listed: &str, key: &str) -> String {
    listed
        .lines()
        .find(|l| l.starts_with(&format!("{key} =")))
        .unwrap_or_else(|| panic!("{key} missing from\n{listed}"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn set_rejects_an_invalid_value_without_touching_the_file() {
    let project = Project::new(CONFIG);
    let before = fs::read(project.project_file()).unwrap();
    let stderr = project.fails(&["config", "set", "context.warn", "120"]);
    assert_snapshot!(stderr, @r"
    error: context.warn = 120: must be at most 99, got 120
    hint: [repo]/checkpoint.toml was not changed
    ");
    // A new key goes below the others of its section: the error cites no line of that text (the
    // rejected one), but the key it conflicts with where the file sets it.
    let stderr = project.fails(&["config", "set", "context.critical", "50"]);
    assert_snapshot!(stderr, @r"
    error: context.critical = 50: context.warn ([repo]/checkpoint.toml:3): must be below context.critical (50), got 70
    hint: [repo]/checkpoint.toml was not changed
    ");
    let stderr = project.fails(&["config", "set", "stop.max_blocks", "500"]);
    assert_snapshot!(stderr, @r"
    error: stop.max_blocks = 500: must be at most 100, got 500
    hint: [repo]/checkpoint.toml was not changed
    ");
    let stderr = project.fails(&["config", "set", "resume.auto", "sometimes"]);
    assert_snapshot!(stderr, @r#"
    error: resume.auto = "sometimes": expected true, false or "prompt", got "sometimes"
    hint: [repo]/checkpoint.toml was not changed
    "#);
    let stderr = project.fails(&["config", "set", "context.warning", "85"]);
    assert!(
        stderr.starts_with(
            "error: unknown key \"context.warning\"\nhint: did you mean `context.warn`?"
        ),
        "{stderr}"
    );
    assert_eq!(fs::read(project.project_file()).unwrap(), before);
}

#[test]
fn set_user_writes_the_user_file() {
    let project = Project::new(CONFIG).env("CHECKPOINT_STOP_MAX_BLOCKS", "2");
    assert!(!project.user_file().exists());
    let out = project.run(&["config", "set", "--user", "stop.max_blocks", "6"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        project.redact(&out.stdout),
        "Set stop.max_blocks = 6 in [home]/checkpoint/config.toml.\n"
    );
    // The environment still decides; the command says so.
    assert_eq!(
        project.redact(&out.stderr),
        "warning: stop.max_blocks still comes from env CHECKPOINT_STOP_MAX_BLOCKS\n"
    );
    assert_eq!(
        fs::read_to_string(project.user_file()).unwrap(),
        "[stop]\nmax_blocks = 6\n"
    );
    assert_eq!(
        project.ok(&["config", "set", "--user", "tests.timeout", "5m"]),
        "Set tests.timeout = \"5m\" in [home]/checkpoint/config.toml.\n"
    );
    assert_eq!(
        line(&project.ok(&["config"]), "tests.timeout"),
        "tests.timeout = \"5m\" # [home]/checkpoint/config.toml:5"
    );
    assert_eq!(
        fs::read_to_string(project.user_file()).unwrap(),
        "[stop]\nmax_blocks = 6\n\n[tests]\ntimeout = \"5m\"\n"
    );
}
