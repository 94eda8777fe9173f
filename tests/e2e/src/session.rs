//! Running one agent CLI, isolated, against the mock model.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::{Map, Value, json};

use crate::mock::MockServer;
use crate::scenario::Scenario;
use crate::server::Server;
use crate::{Agent, clis, last_user_texts};

/// Default limit for one CLI run; `CHECKPOINT_E2E_TIMEOUT_SECS` overrides it.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a timed-out CLI gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(3);
/// [`Session::run_in_tmux`]: how many times Enter is sent for the prompt at most.
const PROMPT_ENTERS: usize = 3;
/// [`Session::run_in_tmux`]: how long the prompt may take to reach the model after an Enter.
const PROMPT_WAIT: Duration = Duration::from_secs(10);
/// A proxy URL nothing listens on (the discard port).
const DEAD_PROXY: &str = "http://127.0.0.1:9";
/// The API key every CLI is given; the mock accepts anything.
const API_KEY: &str = "sk-e2e-mock-key";
/// The provider and model OpenCode's config names for the mock.
const OPENCODE_MODEL: &str = "e2e-mock";
/// The model Qwen Code asks the mock for (an OpenAI-compatible provider).
const QWEN_MODEL: &str = "e2e-mock";
/// The custom model Factory Droid's settings name for the mock (an Anthropic provider), and how
/// `droid exec -m` selects it.
const DROID_MODEL: &str = "e2e-mock";
const DROID_MODEL_ID: &str = "custom:e2e-mock";
/// The model Copilot CLI asks the mock for: one its catalog does not know, so that the prompt
/// limit is `COPILOT_PROVIDER_MAX_PROMPT_TOKENS` (a known model's catalog limit caps it).
const COPILOT_MODEL: &str = "e2e-mock";

/// What one CLI run did.
#[derive(Debug)]
pub struct RunResult {
    /// The agent that ran.
    pub agent: Agent,
    /// The CLI's exit status.
    pub status: ExitStatus,
    /// The CLI's stdout.
    pub stdout: String,
    /// The CLI's stderr.
    pub stderr: String,
    /// Every request the mock saw during the run, as logged (see [`crate::mock`]): `seq`,
    /// `method`, `path`, `query`, `api`, `kind`, `step`, `exhausted`, `actions`, `reply`,
    /// `status`, `headers` (credentials redacted) and the JSON `body`.
    pub requests: Vec<Value>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl RunResult {
    /// The logged requests that were real agent turns (`kind == "turn"`), in order.
    pub fn turns(&self) -> Vec<&Value> {
        self.requests
            .iter()
            .filter(|r| r["kind"] == "turn")
            .collect()
    }

    /// Writes `<label>: <agent>: <secs>s wall time, <n> request(s)` straight to the process's
    /// stderr, past the test runner's output capture, so that every run's time shows up in the
    /// test output.
    pub fn report_timing(&self, label: &str) {
        let line = format!(
            "{label}: {}: {:.1}s wall time, {} request(s)\n",
            self.agent,
            self.elapsed.as_secs_f64(),
            self.requests.len()
        );
        // Only a report: a closed stderr changes nothing about the run.
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    /// A readable account of the run for assertion messages: status, every request with its
    /// last user texts, and the ends of stdout and stderr.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} exited with {} after {:.1}s; {} request(s):\n",
            self.agent,
            self.status,
            self.elapsed.as_secs_f64(),
            self.requests.len()
        );
        for r in &self.requests {
            let texts: Vec<String> = last_user_texts(self.agent, r)
                .iter()
                .map(|t| tail(t, 300))
                .collect();
            let _ = writeln!(
                out,
                "  #{} {} {} kind={} step={} reply={} last user texts={:?}",
                r["seq"], r["method"], r["path"], r["kind"], r["step"], r["reply"], texts
            );
        }
        let _ = write!(
            out,
            "--- stdout (end)\n{}\n--- stderr (end)\n{}",
            tail(&self.stdout, 3000),
            tail(&self.stderr, 3000)
        );
        out
    }
}

/// The last `max` bytes of `text` (on a char boundary), marked when cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

/// One agent CLI with a throwaway `HOME`, its config pointing at its own [`MockServer`].
///
/// The home holds the CLI's user config (Claude: `$CLAUDE_CONFIG_DIR` = `<home>/.claude`;
/// Gemini: `<home>/.gemini/settings.json`; Codex: `$CODEX_HOME` = `<home>/.codex` with the mock
/// provider in `config.toml`; Qwen: `<home>/.qwen/settings.json`), the mock's request logs and each run's stdout/stderr. Set
/// `CHECKPOINT_E2E_KEEP=1` to keep it after the session for inspection.
pub struct Session {
    agent: Agent,
    program: PathBuf,
    home: tempfile::TempDir,
    mock: MockServer,
    runs: u32,
    /// `PATH` for the CLI and its hooks, when not the test process's ([`Session::set_path`]).
    path: Option<OsString>,
    /// OpenCode: whether a run is a lone `opencode run`, without a server of its own
    /// ([`Session::lone_runs`]).
    lone: bool,
}

impl Session {
    /// Installs the CLIs if needed ([`clis`]), creates the home, starts the mock and writes the
    /// CLI's user config. `None` when the CLIs cannot be installed: the test is not run, and
    /// says so (see [`clis`]). Panics when anything else fails.
    pub fn new(agent: Agent) -> Option<Self> {
        let program = clis()?.path(agent).to_path_buf();
        let mut home = tempfile::Builder::new()
            .prefix(&format!("ckpt-e2e-{agent}-home-"))
            .tempdir()
            .expect("create the isolated HOME");
        if std::env::var_os("CHECKPOINT_E2E_KEEP").is_some_and(|v| v == "1") {
            home.disable_cleanup(true);
        }
        let mock = MockServer::start(0).expect("start the mock model server");
        let session = Self {
            agent,
            program,
            home,
            mock,
            runs: 0,
            path: None,
            lone: false,
        };
        session.write_user_config();
        Some(session)
    }

    /// The agent this session runs.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The agent's CLI.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The isolated `HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// OpenCode: each run from now on is a lone `opencode run` (as a user types it), not a run
    /// attached to an `opencode serve` of its own: it is over when the CLI exits.
    pub fn lone_runs(&mut self) {
        self.lone = true;
    }

    /// Sets the `PATH` the CLI, its hooks and its MCP servers run with (by default the test
    /// process's): for a plugin that runs our binaries from `PATH`.
    pub fn set_path(&mut self, path: OsString) {
        self.path = Some(path);
    }

    /// The full environment the CLI runs with (nothing else is inherited): `PATH`, `TMPDIR`,
    /// the isolated `HOME`, the test kit's git identity, and the agent's mock settings. Run other
    /// tools with it (for example `checkpoint install <agent>`) to act on the same isolated
    /// configuration.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let home = self.home();
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        let mut set = |k: &str, v: &std::ffi::OsStr| env.push((k.into(), v.to_owned()));
        let path = (self.path.clone())
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        set("PATH", &path);
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            set("TMPDIR", &tmp);
        }
        set("HOME", home.as_os_str());
        set("LANG", "C.UTF-8".as_ref());
        set("TERM", "dumb".as_ref());
        set("SHELL", "/bin/bash".as_ref());
        // Defence in depth: a client that honours proxy variables and tries to reach anything
        // but the mock hits a closed port on 127.0.0.1 instead of the network.
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            set(var, DEAD_PROXY.as_ref());
        }
        set("NO_PROXY", "127.0.0.1,localhost".as_ref());
        set("no_proxy", "127.0.0.1,localhost".as_ref());
        for (k, v) in checkpoint_testkit::git_env() {
            set(k, v.as_ref());
        }
        let base_url = self.mock.base_url();
        match self.agent {
            Agent::Claude => {
                set("ANTHROPIC_BASE_URL", base_url.as_ref());
                set("ANTHROPIC_API_KEY", API_KEY.as_ref());
                set("CLAUDE_CONFIG_DIR", home.join(".claude").as_os_str());
                set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".as_ref());
                set("DISABLE_TELEMETRY", "1".as_ref());
                set("DISABLE_AUTOUPDATER", "1".as_ref());
                set("DISABLE_ERROR_REPORTING", "1".as_ref());
            }
            Agent::Gemini => {
                set("GOOGLE_GEMINI_BASE_URL", base_url.as_ref());
                set("GEMINI_API_KEY", API_KEY.as_ref());
                set("GEMINI_CLI_HOME", home.as_os_str());
                set("GEMINI_CLI_TRUST_WORKSPACE", "true".as_ref());
            }
            Agent::Codex => {
                set("CODEX_HOME", home.join(".codex").as_os_str());
                set("MOCK_API_KEY", API_KEY.as_ref());
            }
            Agent::Copilot => {
                set("COPILOT_HOME", home.join(".copilot").as_os_str());
                set("COPILOT_OFFLINE", "true".as_ref());
                set(
                    "COPILOT_PROVIDER_BASE_URL",
                    format!("{base_url}/v1").as_ref(),
                );
                set("COPILOT_PROVIDER_API_KEY", API_KEY.as_ref());
                set("COPILOT_MODEL", COPILOT_MODEL.as_ref());
                // Copilot compacts near its prompt limit: the usage the scenarios report (up to
                // 170,000 tokens) must not make it compact.
                set("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "1000000".as_ref());
                // The launcher unpacks its package under $XDG_CACHE_HOME/copilot once;
                // install-clis.sh did that beside the binary (<prefix>/node_modules/.bin).
                if let Some(prefix) = self.program.ancestors().nth(3) {
                    set("XDG_CACHE_HOME", prefix.join("xdg-cache").as_os_str());
                }
            }
            Agent::OpenCode => {
                // Nothing but the mock: no update check, model catalog, LSP download, sharing,
                // Claude Code files; and no compaction of the scenarios' large usage.
                for var in [
                    "OPENCODE_DISABLE_AUTOUPDATE",
                    "OPENCODE_DISABLE_MODELS_FETCH",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD",
                    "OPENCODE_DISABLE_SHARE",
                    "OPENCODE_DISABLE_CLAUDE_CODE",
                    "OPENCODE_DISABLE_AUTOCOMPACT",
                ] {
                    set(var, "1".as_ref());
                }
                // OpenCode installs @opencode-ai/plugin into every config directory it reads
                // (`.opencode/`, the user's) with npm's own code, which reads npm's variables:
                // offline, that install fails at once instead of retrying for a minute.
                set("npm_config_offline", "true".as_ref());
            }
            // No login: `droid exec` with a custom model of the user's settings needs none.
            Agent::Droid => set("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false".as_ref()),
            Agent::Qwen => {
                set("OPENAI_BASE_URL", format!("{base_url}/v1").as_ref());
                set("OPENAI_API_KEY", API_KEY.as_ref());
                set("OPENAI_MODEL", QWEN_MODEL.as_ref());
                set("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1".as_ref());
            }
        }
        env
    }

    /// Writes the CLI's user-level config into the home.
    fn write_user_config(&self) {
        let home = self.home();
        match self.agent {
            Agent::Copilot => create_dir(&home.join(".copilot")),
            Agent::OpenCode => {
                write_file(
                &home.join(".config/opencode/opencode.json"),
                &serde_json::to_string_pretty(&json!({
                    "provider": {"mock": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "mock",
                        "options": {"baseURL": format!("{}/v1", self.mock.base_url()),
                                    "apiKey": API_KEY},
                        "models": {OPENCODE_MODEL: {"name": OPENCODE_MODEL,
                            "limit": {"context": 1_000_000, "output": 8_000}}},
                    }},
                    "model": format!("mock/{OPENCODE_MODEL}"),
                    "small_model": format!("mock/{OPENCODE_MODEL}"),
                    "autoupdate": false,
                    "share": "disabled",
                    "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
                }))
                .expect("JSON serializes"),
            );
            }
            Agent::Claude => create_dir(&home.join(".claude")),
            // The mock as a custom model on Anthropic's Messages API (BYOK): Droid then asks
            // nobody but the mock, and needs no Factory login.
            Agent::Droid => write_file(
                &home.join(".factory/settings.json"),
                &serde_json::to_string_pretty(&json!({
                    "customModels": [{"model": DROID_MODEL, "displayName": "e2e mock",
                        "baseUrl": self.mock.base_url(), "apiKey": API_KEY,
                        "provider": "anthropic", "maxOutputTokens": 4096}],
                }))
                .expect("JSON serializes"),
            ),
            // Folder trust is off unless the settings turn it on: no folder to trust.
            Agent::Qwen => write_file(
                &home.join(".qwen/settings.json"),
                &serde_json::to_string_pretty(&json!({
                    "security": {"auth": {"selectedType": "openai"}},
                    "model": {"name": QWEN_MODEL},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"enableAutoUpdate": false},
                    // Its background memory and skill agents ask the model with tools after a
                    // turn: requests the mock would take for turns.
                    "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false,
                               "enableAutoSkill": false},
                }))
                .expect("JSON serializes"),
            ),
            Agent::Gemini => write_file(
                &home.join(".gemini/settings.json"),
                &serde_json::to_string_pretty(&json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
                }))
                .expect("JSON serializes"),
            ),
            Agent::Codex => write_file(
                &home.join(".codex/config.toml"),
                &format!(
                    r#"model = "gpt-5.4"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# The plugin sync resolves api.github.com and chatgpt.com even with a custom provider.
[features]
plugins = false
"#,
                    self.mock.base_url()
                ),
            ),
        }
    }

    /// Marks `repo` trusted where the CLI needs it: Gemini refuses to start in an untrusted
    /// folder, and Codex ignores an untrusted project's `.codex/hooks.json` without a word.
    fn trust(&self, repo: &Path) {
        let repo_str = repo.to_str().expect("the repo path is UTF-8");
        match self.agent {
            // OpenCode asks about no folder; Qwen Code's folder trust is off by default.
            // Droid asks about no folder either.
            Agent::Claude | Agent::OpenCode | Agent::Qwen | Agent::Droid => {}
            // Copilot loads a project's hooks only from a folder in `trustedFolders`.
            Agent::Copilot => {
                let path = self.home().join(".copilot/config.json");
                let mut config: Map<String, Value> = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default();
                let folders = config.entry("trustedFolders").or_insert_with(|| json!([]));
                if let Value::Array(folders) = folders
                    && !folders.iter().any(|f| f == repo_str)
                {
                    folders.push(repo_str.into());
                }
                write_file(
                    &path,
                    &serde_json::to_string_pretty(&config).expect("JSON serializes"),
                );
            }
            Agent::Gemini => {
                let path = self.home().join(".gemini/trustedFolders.json");
                let mut folders: Map<String, Value> = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default();
                folders.insert(repo_str.to_owned(), "TRUST_FOLDER".into());
                write_file(
                    &path,
                    &serde_json::to_string_pretty(&folders).expect("JSON serializes"),
                );
            }
            Agent::Codex => {
                let path = self.home().join(".codex/config.toml");
                let config = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
                // A JSON string is a valid TOML basic string.
                let table = format!(
                    "[projects.{}]",
                    serde_json::to_string(repo_str).expect("JSON serializes")
                );
                if !config.contains(&table) {
                    write_file(
                        &path,
                        &format!("{config}\n{table}\ntrust_level = \"trusted\"\n"),
                    );
                }
            }
        }
    }

    /// The CLI's arguments for a headless run of `prompt` (what [`Session::run`] uses):
    ///
    /// - Claude: `-p PROMPT --output-format json --allowedTools Bash,Edit`
    /// - Gemini: `-p PROMPT --output-format json --approval-mode yolo`
    /// - Codex: `exec --skip-git-repo-check --dangerously-bypass-hook-trust
    ///   --dangerously-bypass-approvals-and-sandbox --color never PROMPT`
    /// - Copilot: `-p PROMPT --allow-all --no-color`
    /// - Qwen: `PROMPT --approval-mode yolo --output-format json`
    /// - Droid: `exec --auto high -m custom:e2e-mock PROMPT`
    /// - OpenCode: `run PROMPT`, to which [`Session::run_args`] adds `--attach <server> --dir
    ///   <repo>` after `run`: the run goes to an `opencode serve` of its own, and is over once
    ///   that server has settled
    ///
    /// Start from these to run the CLI with more flags ([`Session::run_args`]), for example
    /// Claude's `--resume ID`.
    pub fn headless_args(&self, prompt: &str) -> Vec<String> {
        let args: &[&str] = match self.agent {
            // `-p` denies every shell command that changes files unless `Bash` is allowed, and
            // every edit unless `Edit` is (`--dangerously-skip-permissions` refuses to run as
            // root).
            Agent::Claude => &[
                "-p",
                prompt,
                "--output-format",
                "json",
                "--allowedTools",
                "Bash,Edit",
            ],
            Agent::Gemini => &[
                "-p",
                prompt,
                "--output-format",
                "json",
                "--approval-mode",
                "yolo",
            ],
            Agent::Copilot => &["-p", prompt, "--allow-all", "--no-color"],
            // `-p` is deprecated: the prompt is positional.
            Agent::Qwen => &[prompt, "--approval-mode", "yolo", "--output-format", "json"],
            Agent::OpenCode => &["run", prompt],
            // Without `--auto`, `droid exec` runs read-only commands only.
            Agent::Droid => &["exec", "--auto", "high", "-m", DROID_MODEL_ID, prompt],
            Agent::Codex => &[
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
                "--dangerously-bypass-approvals-and-sandbox",
                "--color",
                "never",
                prompt,
            ],
        };
        args.iter().map(|&a| a.to_owned()).collect()
    }

    /// Runs the CLI headless in `repo` on `prompt` while the mock plays `scenario` (its `root`
    /// defaults to `repo`). The hooks are whatever `repo` and the home are configured with.
    ///
    /// Kills the CLI's whole process group when it exits and when it outlives the timeout
    /// (`CHECKPOINT_E2E_TIMEOUT_SECS`, default 300 s). Panics, with the run's account, on a
    /// timeout or when a scenario action failed; a non-zero exit is returned, not a panic.
    pub fn run(&mut self, repo: &Path, prompt: &str, scenario: Scenario) -> RunResult {
        let args = self.headless_args(prompt);
        self.run_args(repo, &args, None, scenario)
    }

    /// Claude Code only: one headless run that sends each of `messages` as a user message in
    /// turn (`claude -p --input-format stream-json --output-format stream-json --verbose
    /// --allowedTools Bash,Edit`). The first message is written to stdin at once, each next one when
    /// Claude reports the previous one's `result` on stdout, and stdin is closed after the last
    /// result, as a user typing into a session would. Slash commands work between them:
    /// `["Do it.", "/clear", "Go on."]` ends the first session (`SessionEnd` reason `clear`) and
    /// starts a new one (`SessionStart` source `clear`) before `Go on.` is sent. `stdout` is
    /// Claude's stream-json events.
    pub fn run_messages(
        &mut self,
        repo: &Path,
        messages: &[&str],
        scenario: Scenario,
    ) -> RunResult {
        assert_eq!(
            self.agent,
            Agent::Claude,
            "run_messages drives Claude Code's stream-json input"
        );
        let args = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash,Edit",
        ]
        .map(str::to_owned);
        let lines: Vec<String> = messages
            .iter()
            .map(|m| {
                json!({"type": "user", "message": {"role": "user", "content": m}}).to_string()
                    + "\n"
            })
            .collect();
        self.run_with(repo, &args, Input::Messages(lines), scenario)
    }

    /// [`Session::run`] with the CLI's whole argument list given (for example
    /// [`Session::headless_args`] plus a flag) and, optionally, its stdin (else `/dev/null`).
    pub fn run_args(
        &mut self,
        repo: &Path,
        args: &[String],
        stdin: Option<&str>,
        scenario: Scenario,
    ) -> RunResult {
        let input = stdin.map_or(Input::Null, |text| Input::Text(text.to_owned()));
        self.run_with(repo, args, input, scenario)
    }

    fn run_with(
        &mut self,
        repo: &Path,
        args: &[String],
        input: Input,
        scenario: Scenario,
    ) -> RunResult {
        let repo = repo
            .canonicalize()
            .unwrap_or_else(|e| panic!("repo {}: {e}", repo.display()));
        self.runs += 1;
        let run = self.runs;
        let home = self.home().to_path_buf();
        let log = home.join(format!("mock-requests-{run}.jsonl"));
        let stdout_path = home.join(format!("run-{run}.stdout"));
        let stderr_path = home.join(format!("run-{run}.stderr"));
        let (stdin, stdout) = match &input {
            Input::Null => (Stdio::null(), Stdio::from(create_file(&stdout_path))),
            Input::Text(text) => {
                let path = home.join(format!("run-{run}.stdin"));
                write_file(&path, text);
                let file =
                    File::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
                (Stdio::from(file), Stdio::from(create_file(&stdout_path)))
            }
            Input::Messages(_) => (Stdio::piped(), Stdio::piped()),
        };
        self.trust(&repo);
        let root = scenario.root.clone().unwrap_or_else(|| repo.clone());
        self.mock
            .begin(scenario, &root, &log)
            .unwrap_or_else(|e| panic!("start the mock log {}: {e}", log.display()));

        let timeout = std::env::var("CHECKPOINT_E2E_TIMEOUT_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        let started = Instant::now();
        let server = (self.agent == Agent::OpenCode && !self.lone).then(|| {
            let log = home.join(format!("run-{run}.server.log"));
            Server::start(&self.program, &repo, self.env(), &log, timeout)
        });
        let mut args = args.to_vec();
        if let Some(server) = &server {
            let at = usize::from(args.first().is_some_and(|a| a == "run"));
            let dir = repo.display().to_string();
            args.splice(
                at..at,
                ["--attach".to_owned(), server.url(), "--dir".to_owned(), dir],
            );
        }
        let mut child = Command::new(&self.program)
            .args(&args)
            .current_dir(&repo)
            .env_clear()
            .envs(self.env())
            .stdin(stdin)
            .stdout(stdout)
            .stderr(create_file(&stderr_path))
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", self.program.display()));
        let group = Pid::from_child(&child);
        let feeder = match input {
            Input::Messages(lines) => Some(feed_messages(&mut child, lines, &stdout_path)),
            Input::Null | Input::Text(_) => None,
        };
        let finished = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() >= timeout => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => panic!("wait for {}: {e}", self.agent),
            }
        };
        let status = match finished {
            Some(status) => status,
            None => {
                // The group may already be gone; a failed kill changes nothing then.
                let _ = kill_process_group(group, Signal::TERM);
                let grace = Instant::now();
                while grace.elapsed() < KILL_GRACE && matches!(child.try_wait(), Ok(None)) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = kill_process_group(group, Signal::KILL);
                child
                    .wait()
                    .unwrap_or_else(|e| panic!("reap {}: {e}", self.agent))
            }
        };
        // Leftover children (Gemini's relaunched node, MCP servers, hook grandchildren) die with
        // the group, also after a normal exit.
        let _ = kill_process_group(group, Signal::KILL);
        if let Some(feeder) = feeder {
            // The feeder ends when stdout closes, which the group's death guarantees.
            feeder
                .join()
                .unwrap_or_else(|_| panic!("the stdin feeder of {} panicked", self.agent));
        }
        // OpenCode's turn goes on in the server after `run --attach` returned (a block is sent
        // back at the session's idle): the run is over once the server has settled.
        let settled = server
            .as_ref()
            .is_none_or(|server| finished.is_none() || server.settle(&repo, started + timeout));
        let finished = finished.filter(|_| settled);
        drop(server);
        let elapsed = started.elapsed();

        let mut stderr = read_lossy(&stderr_path);
        let server_log = home.join(format!("run-{run}.server.log"));
        if server_log.exists() {
            stderr.push_str("\n--- opencode serve\n");
            stderr.push_str(&read_lossy(&server_log));
        }
        let result = RunResult {
            agent: self.agent,
            status,
            stdout: read_lossy(&stdout_path),
            stderr,
            requests: read_log(&log),
            elapsed,
        };
        assert!(
            finished.is_some(),
            "{} timed out after {}s and was killed (raise CHECKPOINT_E2E_TIMEOUT_SECS if the \
             machine is slow)\n{}",
            self.agent,
            timeout.as_secs(),
            result.summary()
        );
        let failed: Vec<&Value> = result
            .requests
            .iter()
            .flat_map(|r| r["actions"].as_array().into_iter().flatten())
            .filter(|a| a["ok"] == false)
            .collect();
        assert!(
            failed.is_empty(),
            "scenario action(s) failed: {failed:#?}\n{}",
            result.summary()
        );
        result
    }
}

/// The tmux server of one [`Session::run_in_tmux`] and the Codex app-server daemon its CLI may
/// start in `home`: both ended when dropped, by a run that panics too. Codex's TUI (0.169) runs
/// its turns in an app-server daemon of the `CODEX_HOME`, which outlives it (in a process group
/// of its own) and keeps the environment of the TUI that started it — the `notify` program runs
/// with that TUI's `TMUX_PANE` — so it is ended with its updater, and the next run starts one of
/// its own.
struct TmuxServer {
    socket: PathBuf,
    home: PathBuf,
}

impl TmuxServer {
    /// Runs `tmux -S <socket> ARGS`; its stdout.
    fn run(&self, args: &[&std::ffi::OsStr]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap_or_else(|e| panic!("run tmux: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .env_remove("TMUX")
            .output();
        let dir = self.home.join(".codex/app-server-daemon");
        for file in ["daemon.pid", "daemon-updater.pid"] {
            let pid = std::fs::read_to_string(dir.join(file))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .and_then(|record| record["pid"].as_i64())
                .and_then(|pid| i32::try_from(pid).ok())
                .and_then(Pid::from_raw);
            if let Some(pid) = pid {
                // Gone already, or not ours to end: nothing to do.
                let _ = kill_process_group(pid, Signal::KILL);
            }
        }
    }
}

/// A run of the CLI in a tmux pane ([`Session::run_in_tmux`]).
#[derive(Debug)]
pub struct TmuxRun {
    /// The mock's log lines, one per request.
    pub requests: Vec<Value>,
    /// The pane's screen when the run ended.
    pub screen: String,
    /// Whether `done` said so before the timeout.
    pub done: bool,
    /// Wall time.
    pub elapsed: Duration,
}

impl Session {
    /// Runs the CLI interactively (`args`) in the one pane of a tmux server of its own (its
    /// socket in the session's home) in `repo`, with the session's environment and the pane's
    /// `TMUX`/`TMUX_PANE`, while the mock plays `scenario`: waits for the CLI's screen to show
    /// `ready` (within `timeout`), types `prompt` and Enter, then waits until `done` holds for
    /// the mock's log or `timeout` passes again, and kills the server.
    pub fn run_in_tmux(
        &mut self,
        repo: &Path,
        args: &[String],
        (ready, prompt): (&str, &str),
        scenario: Scenario,
        done: impl Fn(&[Value]) -> bool,
        timeout: Duration,
    ) -> TmuxRun {
        let repo = repo
            .canonicalize()
            .unwrap_or_else(|e| panic!("repo {}: {e}", repo.display()));
        self.runs += 1;
        let home = self.home().to_path_buf();
        let log = home.join(format!("mock-requests-{}.jsonl", self.runs));
        self.trust(&repo);
        let root = scenario.root.clone().unwrap_or_else(|| repo.clone());
        self.mock
            .begin(scenario, &root, &log)
            .unwrap_or_else(|e| panic!("start the mock log {}: {e}", log.display()));
        let server = TmuxServer {
            socket: home.join(format!("tmux-{}.sock", self.runs)),
            home: home.clone(),
        };
        let tmux = |tmux_args: &[&std::ffi::OsStr]| server.run(tmux_args);
        let mut new: Vec<OsString> = ["new-session", "-d", "-x", "200", "-y", "50", "-c"]
            .map(OsString::from)
            .into();
        new.push(repo.clone().into());
        for (key, value) in self.env() {
            if key == "TERM" {
                continue;
            }
            let mut pair = key;
            pair.push("=");
            pair.push(value);
            new.extend([OsString::from("-e"), pair]);
        }
        new.push("--".into());
        new.push(self.program.clone().into());
        new.extend(args.iter().map(OsString::from));
        let started = Instant::now();
        let new: Vec<&std::ffi::OsStr> = new.iter().map(OsString::as_os_str).collect();
        tmux(&new);
        let screen = || tmux(&["capture-pane", "-p", "-t", "0"].map(std::ffi::OsStr::new));
        let until = |what: &dyn Fn() -> bool| {
            while !what() && started.elapsed() < timeout {
                std::thread::sleep(Duration::from_millis(200));
            }
            what()
        };
        let mut finished = false;
        if until(&|| screen().contains(ready)) {
            // The time left is the run's, from when the CLI took input.
            let started = Instant::now();
            let until = |what: &dyn Fn() -> bool| {
                while !what() && started.elapsed() < timeout {
                    std::thread::sleep(Duration::from_millis(200));
                }
                what()
            };
            // The prompt goes in as one bracketed paste and is submitted by a separate Enter.
            // Under load the composer can still take that Enter as part of the paste, so it is
            // sent again while no request carrying the prompt has reached the model: what the
            // run measures starts after the prompt, not with it.
            tmux(&["set-buffer", "-b", "prompt", "--", prompt].map(std::ffi::OsStr::new));
            tmux(
                &["paste-buffer", "-p", "-d", "-b", "prompt", "-t", "0"].map(std::ffi::OsStr::new),
            );
            let agent = self.agent;
            let prompted = || {
                read_log(&log).iter().any(|request| {
                    last_user_texts(agent, request)
                        .iter()
                        .any(|text| text.contains(prompt))
                })
            };
            for _ in 0..PROMPT_ENTERS {
                std::thread::sleep(Duration::from_millis(500));
                tmux(&["send-keys", "-t", "0", "Enter"].map(std::ffi::OsStr::new));
                let sent = Instant::now();
                while !prompted() && sent.elapsed() < PROMPT_WAIT && started.elapsed() < timeout {
                    std::thread::sleep(Duration::from_millis(200));
                }
                if prompted() {
                    break;
                }
            }
            finished = until(&|| done(&read_log(&log)));
        }
        let last = screen();
        drop(server);
        TmuxRun {
            requests: read_log(&log),
            screen: last,
            done: finished,
            elapsed: started.elapsed(),
        }
    }
}

/// What a run's stdin gets.
enum Input {
    /// `/dev/null`.
    Null,
    /// This text, then EOF.
    Text(String),
    /// These stream-json lines, one per `result` event on stdout (see [`Session::run_messages`]).
    Messages(Vec<String>),
}

/// Starts the thread that copies the child's stdout to `stdout_path` and writes `lines` to its
/// stdin: the first at once, each next one after a `{"type":"result",…}` line on stdout; stdin is
/// closed after the result that follows the last one. Ends when stdout closes.
fn feed_messages(
    child: &mut std::process::Child,
    lines: Vec<String>,
    stdout_path: &Path,
) -> std::thread::JoinHandle<()> {
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut copy = create_file(stdout_path);
    std::thread::spawn(move || {
        let mut pending = lines.into_iter();
        let mut send = |stdin: &mut Option<std::process::ChildStdin>| match pending.next() {
            Some(line) => {
                let written = stdin.as_mut().map(|s| s.write_all(line.as_bytes()));
                // A CLI that stopped reading has exited or will; its result shows that.
                if !matches!(written, Some(Ok(()))) {
                    *stdin = None;
                }
            }
            None => *stdin = None,
        };
        send(&mut stdin);
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let Ok(line) = line else { break };
            // A failed copy only shortens the run's recorded stdout.
            let _ = writeln!(copy, "{line}");
            let is_result =
                serde_json::from_str::<Value>(&line).is_ok_and(|event| event["type"] == "result");
            if is_result {
                send(&mut stdin);
            }
        }
    })
}

/// Runs `agent` once in `repo` on `prompt` while the mock plays `scenario`, in a fresh
/// [`Session`]; `None` when the test is not run (see [`Session::new`]). See [`Session::run`].
pub fn run_agent(agent: Agent, repo: &Path, prompt: &str, scenario: Scenario) -> Option<RunResult> {
    Some(Session::new(agent)?.run(repo, prompt, scenario))
}

fn create_dir(path: &Path) {
    std::fs::create_dir_all(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
}

fn write_file(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        create_dir(dir);
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn create_file(path: &Path) -> File {
    File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()))
}

fn read_lossy(path: &Path) -> String {
    String::from_utf8_lossy(
        &std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
    )
    .into_owned()
}

/// The mock's JSONL log, one value per line. Only whole lines count: a run polled while the
/// mock writes may find its last line half written.
fn read_log(path: &Path) -> Vec<Value> {
    let text = read_lossy(path);
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    whole
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("mock log {} has a bad line: {e}", path.display()))
        })
        .collect()
}
