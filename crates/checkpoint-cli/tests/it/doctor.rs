//! `checkpoint doctor`: real hooks files written by `checkpoint install` into a temporary home and
//! a real git repository, the workspace's real adapters, and the agents' trust records.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use insta::assert_snapshot;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::{code, git};

/// A home, a committed git repository, and the workspace's adapters.
struct Fixture {
    home: TempDir,
    repo: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let repo = checkpoint_testkit::repo("fresh-repo");
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-qm", "init"]);
        Fixture {
            home: tempfile::tempdir().unwrap(),
            repo,
        }
    }

    fn root(&self) -> PathBuf {
        self.repo.path().canonicalize().unwrap()
    }

    /// `checkpoint ARGS` in the repository, with HOME (and the config home beside it) in the
    /// fixture and none of the agents' or checkpoint's variables of the developer.
    fn command(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = cargo_bin_cmd!("checkpoint");
        cmd.current_dir(self.repo.path())
            .args(args)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .envs(checkpoint_testkit::git_env());
        for (key, _) in std::env::vars() {
            let agents = ["CLAUDE_", "GEMINI_", "CODEX_", "CHECKPOINT_"];
            if agents.iter().any(|prefix| key.starts_with(prefix)) {
                cmd.env_remove(key);
            }
        }
        cmd
    }

    /// [`Fixture::command`], run.
    fn checkpoint(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run checkpoint")
    }

    /// [`Fixture::checkpoint`] with the real Codex CLI (installed for the e2e suite) first on
    /// `PATH`; `None` when it cannot be installed (the test is not run, see
    /// [`checkpoint_e2e::clis`]).
    fn checkpoint_with_codex(&self, args: &[&str]) -> Option<Output> {
        let codex = &checkpoint_e2e::clis()?.codex;
        let mut path = vec![codex.parent().unwrap().to_owned()];
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
        let out = (self.command(args))
            .env("PATH", std::env::join_paths(path).unwrap())
            .output()
            .expect("run checkpoint");
        Some(out)
    }

    /// `checkpoint install <agent> --adapter <the workspace's adapter>`.
    fn install(&self, agent: &str) {
        let adapter = adapter(agent);
        let out = self.checkpoint(&["install", agent, "--adapter", &adapter]);
        assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    }

    fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Claude Code's record that the workspace trust dialog was accepted for the repository.
    fn trust_claude(&self) {
        let root = self.root().display().to_string();
        let config = json!({"projects": {root: {"hasTrustDialogAccepted": true}}});
        self.write(&self.home.path().join(".claude.json"), &config.to_string());
    }

    /// Stdout with the temporary paths and the version made stable.
    fn stable(&self, out: &Output) -> String {
        let text = String::from_utf8_lossy(&out.stdout);
        let bin = PathBuf::from(adapter("claude"));
        text.replace(&self.root().display().to_string(), "[repo]")
            .replace(&self.home.path().display().to_string(), "[home]")
            .replace(&bin.parent().unwrap().display().to_string(), "[bin]")
            .replace(env!("CARGO_PKG_VERSION"), "[version]")
    }
}

/// The workspace's adapter for `agent`, built by Cargo.
fn adapter(agent: &str) -> String {
    let binaries = checkpoint_e2e::workspace_binaries();
    let path = match agent {
        "claude" => &binaries.claude,
        "gemini" => &binaries.gemini,
        "droid" => &binaries.droid,
        _ => &binaries.codex,
    };
    path.display().to_string()
}

#[test]
fn a_healthy_install_is_all_well() {
    let fx = Fixture::new();
    fx.install("claude");
    fx.trust_claude();
    git(fx.repo.path(), &["add", "-A"]);
    git(fx.repo.path(), &["commit", "-qm", "hooks"]);
    let before = fs::read_to_string(fx.repo.path().join(".claude/settings.json")).unwrap();
    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stdout));
    assert_snapshot!(fx.stable(&out));
    // The live check left the repository's state alone.
    let git_dir = fx.repo.path().join(".git");
    assert!(!git_dir.join("checkpoint/continuity").exists());
    let status = git(fx.repo.path(), &["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
    let after = fs::read_to_string(fx.repo.path().join(".claude/settings.json")).unwrap();
    assert_eq!(before, after);
}

/// Factory Droid reads an event of a scope from the `hooks.json` beside its settings file when
/// that file names the event: our handler for it is still there, and never runs.
#[test]
fn a_droid_hooks_json_naming_our_events_is_a_problem() {
    let fx = Fixture::new();
    fx.install("droid");
    git(fx.repo.path(), &["add", "-A"]);
    git(fx.repo.path(), &["commit", "-qm", "hooks"]);
    let out = fx.checkpoint(&["doctor"]);
    let text = fx.stable(&out);
    assert_eq!(code(&out), 0, "{text}");
    assert!(
        text.contains("ok      live check: 5 events answered as Factory Droid expects"),
        "{text}"
    );
    fx.write(
        &fx.repo.path().join(".factory/hooks.json"),
        r#"{"Stop": []}"#,
    );
    let out = fx.checkpoint(&["doctor"]);
    let text = fx.stable(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(
        text.contains(
            "Factory Droid runs no handler of [repo]/.factory/settings.json for Stop: \
             [repo]/.factory/hooks.json names those events"
        ),
        "{text}"
    );
}

#[test]
fn a_switch_in_the_users_settings_turns_the_projects_hooks_off() {
    let fx = Fixture::new();
    fx.install("claude");
    fx.trust_claude();
    let user_settings = fx.home.path().join(".claude/settings.json");
    fx.write(&user_settings, r#"{"disableAllHooks": true}"#);
    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 1, "{}", fx.stable(&out));
    let text = fx.stable(&out);
    assert!(
        text.contains(
            "problem Claude Code runs no hooks: `disableAllHooks` is true in \
             [home]/.claude/settings.json"
        ),
        "{text}"
    );
    // The project's own settings win over the user's.
    let project_settings = fx.repo.path().join(".claude/settings.json");
    let mut project: Value =
        serde_json::from_str(&fs::read_to_string(&project_settings).unwrap()).unwrap();
    project["disableAllHooks"] = Value::Bool(false);
    fx.write(&project_settings, &project.to_string());
    let out = fx.checkpoint(&["doctor"]);
    let text = fx.stable(&out);
    assert!(!text.contains("disableAllHooks"), "{text}");
}

#[test]
fn a_missing_adapter_is_a_problem_with_a_fix() {
    let fx = Fixture::new();
    fx.install("claude");
    fx.trust_claude();
    let settings = fx.repo.path().join(".claude/settings.json");
    let text = fs::read_to_string(&settings).unwrap();
    fs::write(
        &settings,
        text.replace(&adapter("claude"), "/nonexistent/checkpoint-claude"),
    )
    .unwrap();
    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 1);
    let text = fx.stable(&out);
    assert!(
        text.contains("problem the hooks run /nonexistent/checkpoint-claude: no such file"),
        "{text}"
    );
    assert!(
        text.contains("fix: cd [repo] && checkpoint install claude"),
        "{text}"
    );
}

#[test]
fn a_command_answering_garbage_fails_the_live_check() {
    let fx = Fixture::new();
    let bin = tempfile::tempdir().unwrap();
    let script = bin.path().join("checkpoint-claude");
    let version = format!("checkpoint-claude {}", env!("CARGO_PKG_VERSION"));
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version}'; exit 0; fi\n\
             cat >/dev/null; echo 'all good!'\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let out = fx.checkpoint(&[
        "install",
        "claude",
        "--adapter",
        &script.display().to_string(),
    ]);
    assert_eq!(code(&out), 0);
    fx.trust_claude();
    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("problem live check: Stop: stdout is not JSON"),
        "{text}"
    );
}

#[test]
fn an_untrusted_codex_project_is_a_problem_and_json_parses() {
    let fx = Fixture::new();
    fx.install("codex");
    let out = fx.checkpoint(&["doctor", "--json"]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["ok"], false);
    let codex = &report["agents"][2];
    assert_eq!(
        (&codex["agent"], &codex["installed"]),
        (&json!("codex"), &json!(true))
    );
    let problems: Vec<&Value> = (codex["checks"].as_array().unwrap().iter())
        .filter(|check| check["status"] == "problem")
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| p["message"].as_str().unwrap().contains("is not trusted")),
        "{problems:?}"
    );
    assert!(
        problems.iter().all(|p| p["fix"].is_string()),
        "{problems:?}"
    );
    // Claude Code is not installed: reported, not a problem.
    assert_eq!(report["agents"][0]["installed"], false);
    assert_eq!(report["agents"][0]["checks"][0]["status"], "info");

    // Trusting the project as the fix says leaves only the hooks' review to do.
    let fix = problems[0]["fix"].as_str().unwrap();
    let ran = std::process::Command::new("sh")
        .args(["-c", fix])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{fix}");
    let out = fx.checkpoint(&["doctor"]);
    let text = fx.stable(&out);
    assert!(
        text.contains("ok      Codex trusts the project [repo]"),
        "{text}"
    );
    assert!(text.contains("ok      live check: 9 events"), "{text}");
}

#[test]
fn codex_itself_says_that_a_recorded_review_no_longer_holds() {
    let fx = Fixture::new();
    fx.install("codex");
    // The project is trusted, and a review is on record for each hook, for other contents.
    let root = fx.root().display().to_string();
    let hooks = format!("{root}/.codex/hooks.json");
    let mut config = format!("[projects.{root:?}]\ntrust_level = \"trusted\"\n");
    for event in [
        "stop",
        "subagent_stop",
        "subagent_start",
        "user_prompt_submit",
        "pre_tool_use",
        "post_tool_use",
        "session_start",
        "pre_compact",
        "session_end",
    ] {
        config.push_str(&format!(
            "[hooks.state.\"{hooks}:{event}:0:0\"]\ntrusted_hash = \"sha256:{}\"\n",
            "0".repeat(64)
        ));
    }
    fx.write(&fx.home.path().join(".codex/config.toml"), &config);

    // Read from the config alone, the reviews look done.
    let text = fx.stable(&fx.checkpoint(&["doctor"]));
    assert!(
        text.contains("ok      Codex has the hooks reviewed"),
        "{text}"
    );
    // Codex, asked, says they do not hold for the hooks as they are.
    let Some(out) = fx.checkpoint_with_codex(&["doctor"]) else {
        return;
    };
    assert_eq!(code(&out), 1, "{}", fx.stable(&out));
    let text = fx.stable(&out);
    assert!(
        text.contains("problem Codex skips hooks it does not trust, without a word: Stop ("),
        "{text}"
    );
}

/// The lines of `out`'s report that say the adapter runs twice, and their fixes.
fn twice(fx: &Fixture, out: &Output) -> String {
    let text = fx.stable(out);
    let lines: Vec<&str> = text.lines().collect();
    (lines.iter().enumerate())
        .filter(|(_, line)| line.contains("runs the adapter twice"))
        .flat_map(|(i, line)| [line.trim(), lines.get(i + 1).map_or("", |l| l.trim())])
        .collect::<Vec<_>>()
        .join("\n")
}

/// Installed for the project and the user, or beside the packaged plugin, each event runs the
/// adapter twice: a problem with the command that ends it.
#[test]
fn hooks_wired_twice_are_a_problem() {
    let fx = Fixture::new();
    fx.install("claude");
    fx.trust_claude();
    let adapter = adapter("claude");
    let user = fx.checkpoint(&["install", "claude", "--user", "--adapter", &adapter]);
    assert_eq!(code(&user), 0, "{}", String::from_utf8_lossy(&user.stderr));
    let settings = fx.home.path().join(".claude/settings.json");
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    value["enabledPlugins"] = json!({"checkpoint@checkpoint": true});
    fs::write(&settings, value.to_string()).unwrap();

    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stdout));
    assert_snapshot!(twice(&fx, &out), @r"
    problem installed in both [repo]/.claude/settings.json and [home]/.claude/settings.json: every event runs the adapter twice
    fix: checkpoint uninstall claude --user  # or the other: cd [repo] && checkpoint uninstall claude
    problem checkpoint's plugin is wired too ([home]/.claude/settings.json): every event runs the adapter twice
    fix: keep the plugin, remove the installed hooks: cd [repo] && checkpoint uninstall claude; checkpoint uninstall claude --user
    ");
}

/// With no agent wired, the fix names every agent `checkpoint install` takes.
#[test]
fn no_agent_installed_names_every_agent_in_the_fix() {
    let fx = Fixture::new();
    let out = fx.checkpoint(&["doctor"]);
    assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stdout));
    let text = fx.stable(&out);
    let fix = text
        .lines()
        .skip_while(|l| !l.contains("installed for no agent"))
        .nth(1);
    assert_snapshot!(fix.unwrap_or_default().trim(), @"fix: checkpoint install claude --user  # or gemini, codex, copilot, opencode, qwen, droid");
}
