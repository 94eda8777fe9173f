//! Our own binaries under test: `checkpoint` and the seven adapters, built from this workspace,
//! and their hooks installed into a repository the way a user installs them.
//!
//! A dev-dependency on an adapter crate gives this crate its library, not its binary
//! (`CARGO_BIN_EXE_*` exists only for the package's own binaries), and guessing `target/debug`
//! breaks with `CARGO_TARGET_DIR`, `build.target-dir` or another profile. So the harness asks
//! Cargo: it runs `cargo build --bins -p adapter-claude -p adapter-gemini -p adapter-codex
//! -p adapter-copilot -p adapter-opencode -p adapter-qwen -p adapter-droid -p checkpoint-gate --message-format=json-render-diagnostics` against the
//! workspace manifest, once per test process, and takes each binary's path from the
//! `compiler-artifact` messages. Cargo's own lock on the target directory serialises parallel test processes; when the
//! binaries are up to date the build is a no-op.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::{Agent, Session};

/// The subject of the commit [`install_checkpoint`] makes.
pub const HOOKS_COMMIT: &str = "checkpoint: install hooks";

/// The packages whose binaries the harness builds.
const PACKAGES: [&str; 8] = [
    "adapter-claude",
    "adapter-gemini",
    "adapter-codex",
    "adapter-copilot",
    "adapter-opencode",
    "adapter-qwen",
    "adapter-droid",
    "checkpoint-gate",
];

/// Paths of our binaries, built from this workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// The `checkpoint` command (`checkpoint-gate`, in crates/checkpoint-cli).
    pub checkpoint: PathBuf,
    /// `checkpoint-claude`.
    pub claude: PathBuf,
    /// `checkpoint-gemini`.
    pub gemini: PathBuf,
    /// `checkpoint-codex`.
    pub codex: PathBuf,
    /// `checkpoint-copilot`.
    pub copilot: PathBuf,
    /// `checkpoint-opencode`.
    pub opencode: PathBuf,
    /// `checkpoint-qwen`.
    pub qwen: PathBuf,
    /// `checkpoint-droid`.
    pub droid: PathBuf,
}

impl Binaries {
    /// The hook adapter for `agent`.
    pub fn adapter(&self, agent: Agent) -> &Path {
        match agent {
            Agent::Claude => &self.claude,
            Agent::Gemini => &self.gemini,
            Agent::Codex => &self.codex,
            Agent::Copilot => &self.copilot,
            Agent::OpenCode => &self.opencode,
            Agent::Qwen => &self.qwen,
            Agent::Droid => &self.droid,
        }
    }
}

/// Builds our binaries (at most once per process) and returns their paths. Panics with Cargo's
/// output when the build fails.
pub fn workspace_binaries() -> &'static Binaries {
    static BINARIES: OnceLock<Result<Binaries, String>> = OnceLock::new();
    match BINARIES.get_or_init(build) {
        Ok(binaries) => binaries,
        Err(e) => panic!("checkpoint-e2e: building the checkpoint binaries failed: {e}"),
    }
}

fn build() -> Result<Binaries, String> {
    // Cargo sets `CARGO` for the tests it runs; the compile-time value covers a test binary
    // started by hand.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let mut command = Command::new(&cargo);
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--bins", "--message-format=json-render-diagnostics"]);
    for package in PACKAGES {
        command.args(["-p", package]);
    }
    let out = command
        .output()
        .map_err(|e| format!("run {}: {e}", Path::new(&cargo).display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "cargo build exited with {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    parse_executables(&stdout)
}

/// Finds each binary's path in Cargo's JSON messages.
fn parse_executables(messages: &str) -> Result<Binaries, String> {
    let artifacts: Vec<Value> = messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .collect();
    let find = |name: &str| {
        artifacts
            .iter()
            .find(|m| m["target"]["name"] == name)
            .and_then(|m| m["executable"].as_str())
            .map(PathBuf::from)
            .ok_or_else(|| format!("cargo build reported no executable `{name}`"))
    };
    Ok(Binaries {
        checkpoint: find("checkpoint")?,
        claude: find("checkpoint-claude")?,
        gemini: find("checkpoint-gemini")?,
        codex: find("checkpoint-codex")?,
        copilot: find("checkpoint-copilot")?,
        opencode: find("checkpoint-opencode")?,
        qwen: find("checkpoint-qwen")?,
        droid: find("checkpoint-droid")?,
    })
}

/// Installs our hooks for the session's agent into `repo` the way a user does, then commits them.
///
/// Runs `checkpoint install <agent> --adapter <workspace adapter>` in `repo` with the session's
/// environment ([`Session::env`]), which writes the project's hooks file: `.claude/settings.json`,
/// `.gemini/settings.json` or `.codex/hooks.json`. The file is then committed
/// (`git add -A`, `git commit`), as a project that adopts checkpoint would: an uncommitted
/// config file would be a gated change, and every stop would be blocked for it. The commit's
/// subject is [`HOOKS_COMMIT`]. Panics, with the output, when either step fails. `repo` should be
/// clean before: everything in its worktree goes into that commit.
pub fn install_checkpoint(session: &Session, repo: &Path) {
    run_install(session, repo, &[]);
    for args in [&["add", "-A"][..], &["commit", "-qm", HOOKS_COMMIT]] {
        let git = Command::new("git")
            .args(args)
            .current_dir(repo)
            .envs(checkpoint_testkit::git_env())
            .output()
            .unwrap_or_else(|e| panic!("run git in {}: {e}", repo.display()));
        assert!(
            git.status.success(),
            "committing the installed hooks failed: git {args:?}: {}{}",
            String::from_utf8_lossy(&git.stdout),
            String::from_utf8_lossy(&git.stderr)
        );
    }
}

/// Installs our hooks for the user, as `checkpoint install <agent> --user` run in `repo` does:
/// into the session's isolated home, where the agent reads them wherever it starts; the
/// install also trusts `repo`'s commands. Nothing is written into `repo`.
pub fn install_checkpoint_for_user(session: &Session, repo: &Path) {
    run_install(session, repo, &["--user"]);
}

/// Runs `checkpoint install <agent> <extra> --adapter <ours>` in `repo` with the session's
/// environment; panics, with the output, when it fails.
fn run_install(session: &Session, repo: &Path, extra: &[&str]) {
    let agent = session.agent();
    let binaries = workspace_binaries();
    let out = Command::new(&binaries.checkpoint)
        .args(["install", agent.name()])
        .args(extra)
        .arg("--adapter")
        .arg(binaries.adapter(agent))
        .current_dir(repo)
        .env_clear()
        .envs(session.env())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", binaries.checkpoint.display()));
    assert!(
        out.status.success(),
        "checkpoint install {agent} {extra:?} exited with {}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// This repository's root: the plugin marketplace of Claude Code (`.claude-plugin/`) and of
/// Copilot CLI (`.github/plugin/`), and the home of the plugins (`plugins/<agent>`).
pub fn repository_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

/// Adds checkpoint's plugin from this repository to the session's agent, for the user (into the
/// session's isolated home), the way a user adds it:
///
/// - Claude Code and GitHub Copilot CLI: `<cli> plugin marketplace add <repository>` and `<cli>
///   plugin install checkpoint@checkpoint` (Copilot reads `.github/plugin/marketplace.json`,
///   Claude Code `.claude-plugin/marketplace.json`);
/// - Gemini CLI: `gemini extensions link <repository>/plugins/gemini --consent`;
/// - OpenCode: `<repository>/plugins/opencode/checkpoint.js` in the `plugin` list of the user's
///   `opencode.json` (OpenCode has no command that adds a plugin).
///
/// The plugin's hooks run the adapters found on `PATH`: with `adapters`, the session's `PATH`
/// starts with the directory of our binaries ([`workspace_binaries`]); without, it is the test
/// process's `PATH` without any directory that holds a `checkpoint` or `checkpoint-<agent>`
/// program (an installed checkpoint), so the hooks find none. Panics, with the output, when a
/// command fails, and for the agents that have no plugin here.
pub fn add_plugin(session: &mut Session, adapters: bool) {
    let agent = session.agent();
    let root = repository_root();
    let commands: Vec<Vec<String>> = match agent {
        Agent::Claude | Agent::Copilot => vec![
            vec![
                "plugin".into(),
                "marketplace".into(),
                "add".into(),
                root.display().to_string(),
            ],
            vec![
                "plugin".into(),
                "install".into(),
                "checkpoint@checkpoint".into(),
            ],
        ],
        Agent::Gemini => vec![vec![
            "extensions".into(),
            "link".into(),
            root.join("plugins/gemini").display().to_string(),
            "--consent".into(),
        ]],
        Agent::OpenCode => {
            let plugin = root.join("plugins/opencode/checkpoint.js");
            let config = session.home().join(".config/opencode/opencode.json");
            let text = std::fs::read_to_string(&config).expect("the session wrote its config");
            let mut settings: Value = serde_json::from_str(&text).expect("JSON");
            settings["plugin"] = serde_json::json!([plugin]);
            let text = serde_json::to_string_pretty(&settings).expect("JSON serializes");
            std::fs::write(&config, text).expect("the config is writable");
            Vec::new()
        }
        other => panic!("{other}: this repository has no plugin for it"),
    };
    let binaries = workspace_binaries();
    let ours = binaries
        .checkpoint
        .parent()
        .expect("a binary has a directory");
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let programs = [binaries.checkpoint.as_path(), binaries.adapter(agent)];
    let others = std::env::split_paths(&inherited).filter(|dir| {
        !programs
            .iter()
            .any(|program| dir.join(program.file_name().expect("a file name")).exists())
    });
    let dirs: Vec<PathBuf> = adapters
        .then(|| ours.to_owned())
        .into_iter()
        .chain(others)
        .collect();
    session.set_path(std::env::join_paths(dirs).expect("PATH joins"));
    for args in commands {
        run_ok(session, session.program(), &args, session.home());
    }
}

/// Approves `repo`'s commands as its user does (`checkpoint trust --yes`, with the session's
/// environment): what `checkpoint install` does for the project it runs in, and a plugin cannot.
pub fn trust_project(session: &Session, repo: &Path) {
    run_ok(
        session,
        &workspace_binaries().checkpoint,
        &["trust", "--yes"],
        repo,
    );
}

/// Runs `program` with `args` in `dir` with the session's environment (and nothing else of
/// the test process's) and returns its stdout; panics, with both outputs, unless it succeeds.
pub fn run_ok(
    session: &Session,
    program: &Path,
    args: &[impl AsRef<std::ffi::OsStr>],
    dir: &Path,
) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(session.env())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let args: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    assert!(
        out.status.success(),
        "{} {args:?} exited with {}\n--- stdout\n{}--- stderr\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A fixture repository set up the way a project that adopts checkpoint is: the test kit's
/// `fixture` (`tests/fixtures/<fixture>.sh`), `config` appended to its `checkpoint.toml` (created
/// when the fixture has none), then our hooks installed and everything committed by
/// [`install_checkpoint`]. So a test's configuration is part of `HEAD`, not a gated change.
pub fn checkpoint_project(session: &Session, fixture: &str, config: &str) -> tempfile::TempDir {
    let repo = checkpoint_testkit::repo(fixture);
    let path = repo.path().join("checkpoint.toml");
    let mut text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => panic!("read {}: {e}", path.display()),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() && !config.is_empty() {
        text.push('\n');
    }
    text.push_str(config);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    install_checkpoint(session, repo.path());
    repo
}

/// `word` as one `sh` word, single-quoted, for a shell command line such as a
/// [`crate::scenario::ToolCall::Shell`].
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn reads_executables_from_cargo_messages() {
        let artifact = |name: &str, exe: Option<&str>| {
            serde_json::json!({"reason": "compiler-artifact", "target": {"name": name},
                               "executable": exe})
            .to_string()
        };
        let messages = [
            artifact("checkpoint_engine", None),
            artifact("checkpoint-claude", Some("/t/debug/checkpoint-claude")),
            r#"{"reason":"build-finished","success":true}"#.to_owned(),
            artifact("checkpoint-gemini", Some("/t/debug/checkpoint-gemini")),
            artifact("checkpoint-codex", Some("/t/debug/checkpoint-codex")),
            artifact("checkpoint-copilot", Some("/t/debug/checkpoint-copilot")),
            artifact("checkpoint-opencode", Some("/t/debug/checkpoint-opencode")),
            artifact("checkpoint-qwen", Some("/t/debug/checkpoint-qwen")),
            artifact("checkpoint-droid", Some("/t/debug/checkpoint-droid")),
            artifact("checkpoint", Some("/t/debug/checkpoint")),
        ]
        .join("\n");
        let binaries = parse_executables(&messages).unwrap();
        assert_eq!(binaries.checkpoint, Path::new("/t/debug/checkpoint"));
        assert_eq!(
            binaries.adapter(Agent::Gemini),
            Path::new("/t/debug/checkpoint-gemini")
        );
        assert_eq!(
            binaries.adapter(Agent::Qwen),
            Path::new("/t/debug/checkpoint-qwen")
        );
        let missing = parse_executables(&artifact("checkpoint", Some("/c"))).unwrap_err();
        assert!(missing.contains("checkpoint-claude"), "{missing}");
    }
}
