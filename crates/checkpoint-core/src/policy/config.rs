//! Loads the [`Policy`] from its layers, lowest to highest:
//!
//! 1. built-in defaults;
//! 2. the user file, `$XDG_CONFIG_HOME/checkpoint/config.toml` (else
//!    `$HOME/.config/checkpoint/config.toml`);
//! 3. the project file, `<root>/checkpoint.toml`;
//! 4. `CHECKPOINT_*` environment variables.
//!
//! A later layer wins per key; `[[rule]]`s are concatenated (the user file's, then the project
//! file's). A missing file is simply absent.
//!
//! ```toml
//! [tests]
//! command = "python3 -m unittest -q"  # default: detected (see `detect`); "" = no tests
//! timeout = "120s"                     # durations: "120s", "2m", "1m30s", "500ms"; positive
//!
//! [stop]
//! commit_gate = true        # uncommitted gated changes block the stop
//! max_blocks = 3            # consecutive blocks per turn, then allow with a warning (0..=100)
//! capture = false           # ask for a capture of notes when a stop has no code changes
//! capture_interval = "30m"
//!
//! [git]
//! backend = "auto"          # auto | cli | gix
//!
//! [journal]
//! retention_completed = "30d"   # `checkpoint cleanup` removes a completed task after this
//! retention_failed = "7d"
//! retention_abandoned = "7d"
//! max_checkpoints = 50          # per task, oldest pruned (1..=10000)
//! stale_threshold = "5m"        # an unfinished task not updated for this long has crashed
//! checkpoint_interval = "5m"    # during a long step, at most one interval checkpoint per this
//!
//! [context]
//! warn = 80                 # percent of the context window at which a checkpoint is saved (50..=99)
//! critical = 90             # percent at which saving is urgent (50..=99, above `warn`)
//! window = 200000           # tokens (1000..=100000000); default: unset, from the transcript or model
//!
//! [resume]
//! auto = true               # a new session gets the active task's state: true | false | "prompt"
//! max_restarts = 3          # automatic resumes of a task in a row (0..=100)
//!
//! [clear]
//! auto_checkpoint = true    # save a checkpoint before the context is cleared: true | false | "prompt"
//!
//! [[rule]]
//! name = "daemon"                      # required, unique across both files
//! include = ["src/**/*.py"]            # required, non-empty
//! exclude = ["src/hooks/**"]           # default: none
//! tests = true                         # default true = the project command; false = none;
//!                                      # a string = the rule's own command
//! action = "Run `make restart`"        # optional instruction for the agent
//! gate = true                          # default: true unless `tests = false`
//! ```
//!
//! Unknown keys and sections are errors.
//!
//! # Environment
//!
//! | Variable                           | Key                      | Values                      |
//! |------------------------------------|--------------------------|-----------------------------|
//! | `CHECKPOINT_TESTS_COMMAND`         | `tests.command`          | a command; empty = no tests |
//! | `CHECKPOINT_TESTS_TIMEOUT`         | `tests.timeout`          | a duration                  |
//! | `CHECKPOINT_STOP_COMMIT_GATE`      | `stop.commit_gate`       | true/false, 1/0, yes/no     |
//! | `CHECKPOINT_STOP_MAX_BLOCKS`       | `stop.max_blocks`        | 0..=100                     |
//! | `CHECKPOINT_STOP_CAPTURE`          | `stop.capture`           | true/false, 1/0, yes/no     |
//! | `CHECKPOINT_STOP_CAPTURE_INTERVAL` | `stop.capture_interval`  | a duration                  |
//! | `CHECKPOINT_GIT_BACKEND`           | `git.backend`            | auto, cli or gix            |
//! | `CHECKPOINT_JOURNAL_RETENTION_COMPLETED` | `journal.retention_completed` | a duration        |
//! | `CHECKPOINT_JOURNAL_RETENTION_FAILED`    | `journal.retention_failed`    | a duration        |
//! | `CHECKPOINT_JOURNAL_RETENTION_ABANDONED` | `journal.retention_abandoned` | a duration        |
//! | `CHECKPOINT_JOURNAL_MAX_CHECKPOINTS`     | `journal.max_checkpoints`     | 1..=10000         |
//! | `CHECKPOINT_JOURNAL_STALE_THRESHOLD`     | `journal.stale_threshold`     | a duration        |
//! | `CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL` | `journal.checkpoint_interval` | a duration        |
//! | `CHECKPOINT_CONTEXT_WARN`          | `context.warn`           | 50..=99                     |
//! | `CHECKPOINT_CONTEXT_CRITICAL`      | `context.critical`       | 50..=99                     |
//! | `CHECKPOINT_CONTEXT_WINDOW`        | `context.window`         | 1000..=100000000            |
//! | `CHECKPOINT_AUTO_RESUME`           | `resume.auto`            | true/false, 1/0, yes/no, prompt |
//! | `CHECKPOINT_RESUME_MAX_RESTARTS`   | `resume.max_restarts`    | 0..=100                     |
//! | `CHECKPOINT_CLEAR_AUTO_CHECKPOINT` | `clear.auto_checkpoint`  | true/false, 1/0, yes/no, prompt |
//!
//! Other `CHECKPOINT_*` variables are ignored here.
//!
//! # Errors
//!
//! Every [`ConfigError`] is one line that says where the problem is:
//!
//! ```text
//! /repo/checkpoint.toml: Permission denied (os error 13)
//! /repo/checkpoint.toml:3: syntax error: unclosed table, expected `]`
//! /repo/checkpoint.toml:7: stop.max_blocks: invalid type: string "x", expected u32
//! /repo/checkpoint.toml:12: rule[1].include: bad glob "src/[a": unclosed character class; missing ']'
//! CHECKPOINT_STOP_MAX_BLOCKS: expected a whole number, got "abc"
//! ```
//!
//! Rules are numbered from 0 within their file. `context.warn` must stay below `context.critical`
//! after merging; the error names whichever of the two the higher layer set.
//!
//! # Provenance
//!
//! [`explain`] lists every key with its effective value and the layer it came from ([`Origin`]);
//! [`check_text`] validates a file's new text before a writer replaces the file.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, IntoDeserializer};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::detect::detect_test_command;
use super::rules::{GlobError, Rule, RuleSet, RuleTests};
use super::{
    ClearSettings, ContextSettings, GitBackend, GitSettings, JournalSettings, Policy,
    ResumeSettings, StopSettings, Switch, TestSettings,
};

/// The project file's name, at the project root.
pub const PROJECT_FILE: &str = "checkpoint.toml";

/// `stop.max_blocks`: 0..=100.
type MaxBlocks = Count<0, 100>;

/// `journal.max_checkpoints`: 1..=10000.
type MaxCheckpoints = Count<1, 10_000>;

/// `context.warn` and `context.critical`: 50..=99 percent.
type Percent = Count<50, 99>;

/// `context.window`: 1000..=100000000 tokens.
type Window = Count<1_000, 100_000_000>;

/// `resume.max_restarts`: 0..=100.
type MaxRestarts = Count<0, 100>;

/// A scalar configuration key and the environment variable that overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// `section.key`, as [`explain`] lists it.
    pub name: &'static str,
    /// The `CHECKPOINT_*` variable that overrides it.
    pub env: &'static str,
}

/// Every scalar key, in the order [`explain`] lists them.
pub const KEYS: &[Key] = &[
    key("tests.command", "CHECKPOINT_TESTS_COMMAND"),
    key("tests.timeout", "CHECKPOINT_TESTS_TIMEOUT"),
    key("stop.commit_gate", "CHECKPOINT_STOP_COMMIT_GATE"),
    key("stop.max_blocks", "CHECKPOINT_STOP_MAX_BLOCKS"),
    key("stop.capture", "CHECKPOINT_STOP_CAPTURE"),
    key("stop.capture_interval", "CHECKPOINT_STOP_CAPTURE_INTERVAL"),
    key("git.backend", "CHECKPOINT_GIT_BACKEND"),
    key(
        "journal.retention_completed",
        "CHECKPOINT_JOURNAL_RETENTION_COMPLETED",
    ),
    key(
        "journal.retention_failed",
        "CHECKPOINT_JOURNAL_RETENTION_FAILED",
    ),
    key(
        "journal.retention_abandoned",
        "CHECKPOINT_JOURNAL_RETENTION_ABANDONED",
    ),
    key(
        "journal.max_checkpoints",
        "CHECKPOINT_JOURNAL_MAX_CHECKPOINTS",
    ),
    key(
        "journal.stale_threshold",
        "CHECKPOINT_JOURNAL_STALE_THRESHOLD",
    ),
    key(
        "journal.checkpoint_interval",
        "CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL",
    ),
    key("context.warn", "CHECKPOINT_CONTEXT_WARN"),
    key("context.critical", "CHECKPOINT_CONTEXT_CRITICAL"),
    key("context.window", "CHECKPOINT_CONTEXT_WINDOW"),
    key("resume.auto", "CHECKPOINT_AUTO_RESUME"),
    key("resume.max_restarts", "CHECKPOINT_RESUME_MAX_RESTARTS"),
    key("clear.auto_checkpoint", "CHECKPOINT_CLEAR_AUTO_CHECKPOINT"),
];

/// A row of [`KEYS`].
const fn key(name: &'static str, env: &'static str) -> Key {
    Key { name, env }
}

/// Where configuration comes from. Tests build one by hand; binaries use `from_process`.
#[derive(Debug, Clone)]
pub struct ConfigSources {
    /// The user's config file, if a config directory is known.
    pub user_file: Option<PathBuf>,
    /// The project's `checkpoint.toml`.
    pub project_file: PathBuf,
    /// `CHECKPOINT_*` variables, in order; a later duplicate wins.
    pub env: Vec<(String, String)>,
}

impl ConfigSources {
    /// The user file at `$XDG_CONFIG_HOME/checkpoint/config.toml` (else
    /// `$HOME/.config/checkpoint/config.toml`), `<project_root>/checkpoint.toml`, and every
    /// `CHECKPOINT_*` variable of this process (values that are not UTF-8 are converted lossily).
    pub fn from_process(project_root: &Path) -> ConfigSources {
        let absolute = |var: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let config_home =
            absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|h| h.join(".config")));
        ConfigSources {
            user_file: config_home.map(|dir| dir.join("checkpoint").join("config.toml")),
            project_file: project_root.join(PROJECT_FILE),
            env: std::env::vars_os()
                .filter_map(|(var, value)| {
                    let var = var.into_string().ok()?;
                    var.starts_with("CHECKPOINT_")
                        .then(|| (var, value.to_string_lossy().into_owned()))
                })
                .collect(),
        }
    }
}

/// Why the configuration could not be loaded. Every message is a single line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A configuration file exists but could not be read.
    #[error("{}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        error: io::Error,
    },
    /// A configuration file is not valid TOML.
    #[error("{}:{line}: syntax error: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A key in a configuration file is unknown, missing or has a bad value.
    #[error("{}:{line}: {key}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending key or value.
        line: usize,
        /// Path of the key, like `stop.max_blocks` or `rule[1].include`.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `CHECKPOINT_*` variable has a bad value.
    #[error("{var}: {message}")]
    Env {
        /// The variable's name.
        var: String,
        /// What is wrong with its value.
        message: String,
    },
    /// The rules' globs could not be compiled together (no single pattern is at fault).
    #[error(transparent)]
    Rules(GlobError),
}

/// Loads the policy from `sources`, detecting the test command in `project_root` when no layer
/// sets one.
pub fn load(sources: &ConfigSources, project_root: &Path) -> Result<Policy, ConfigError> {
    Merged::load(sources, project_root).map(|merged| merged.policy)
}

/// Where a setting's effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// No layer sets it: the built-in default.
    Default,
    /// No layer sets it and it was detected in the project (the test command).
    Detected,
    /// A configuration file sets it, at this line.
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line of the key.
        line: usize,
    },
    /// This `CHECKPOINT_*` variable sets it.
    Env(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Detected => f.write_str("detected"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Env(var) => write!(f, "env {var}"),
        }
    }
}

/// One key of the effective configuration, as [`explain`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// `section.key` (one of [`KEYS`]), or `rule.<name>` for a configured rule.
    pub key: String,
    /// The effective value as TOML; `None` when the key is unset (no test command, or a context
    /// window taken from the transcript or model). A rule's value is an inline table.
    pub value: Option<toml::Value>,
    /// Where the value came from.
    pub origin: Origin,
}

impl Setting {
    /// The value as it would be written in a config file (`"2m"`, `3`, `true`, `"prompt"`), or a
    /// parenthesized note saying what an unset key means.
    pub fn value_text(&self) -> String {
        match (&self.value, self.key.as_str()) {
            (Some(value), _) => value.to_string(),
            (None, "context.window") => "(from the transcript or model)".to_owned(),
            (None, "tests.command") => "(no test command)".to_owned(),
            (None, _) => "(unset)".to_owned(),
        }
    }
}

/// Every scalar key of every section (in the order of [`KEYS`]) with its effective value and
/// origin, then every configured `[[rule]]` (`rule.<name>`, user file first). The values are those
/// [`load`] returns, and the errors are its errors.
pub fn explain(sources: &ConfigSources, project_root: &Path) -> Result<Vec<Setting>, ConfigError> {
    let merged = Merged::load(sources, project_root)?;
    let mut settings: Vec<Setting> = KEYS
        .iter()
        .map(|key| Setting {
            key: key.name.to_owned(),
            value: value_of(&merged.policy, key.name),
            origin: merged.origin(key.name),
        })
        .collect();
    let placed = merged
        .files
        .iter()
        .flat_map(|file| file.layer.rule.iter().map(move |raw| (file, raw)));
    for ((file, raw), rule) in placed.zip(merged.policy.rules.configured()) {
        settings.push(Setting {
            key: format!("rule.{}", rule.name),
            value: Some(rule_value(rule)),
            origin: Origin::File {
                path: file.path.clone(),
                line: file.line(raw.name.span().start),
            },
        });
    }
    Ok(settings)
}

/// Checks the text of a configuration file at `path` exactly as [`load`] checks a file (syntax,
/// unknown keys, types, ranges, rule names and globs, and `context.warn` below
/// `context.critical` over the built-in defaults), without reading or writing anything. A writer
/// calls it before replacing the file.
pub fn check_text(path: &Path, text: &str) -> Result<(), ConfigError> {
    let files = [ConfigFile::parse(path, text.to_owned())?];
    let mut settings = Settings::default();
    settings.apply(&files[0].layer, 0);
    check_context_order(&settings, &files)?;
    compile_rules(&files).map(drop)
}

/// Everything `load` reads, merged.
struct Merged {
    /// The configuration files that exist, lowest layer first; layer `i` is `files[i]`, and the
    /// environment's layer is `files.len()`.
    files: Vec<ConfigFile>,
    /// The settings, with the layer that set each key.
    settings: Settings,
    /// The result.
    policy: Policy,
}

impl Merged {
    fn load(sources: &ConfigSources, project_root: &Path) -> Result<Merged, ConfigError> {
        let mut files = Vec::new();
        if let Some(user) = &sources.user_file {
            files.extend(ConfigFile::read(user)?);
        }
        files.extend(ConfigFile::read(&sources.project_file)?);
        let env = env_layer(&sources.env)?;

        let mut settings = Settings::default();
        for (source, layer) in files.iter().map(|f| &f.layer).chain([&env]).enumerate() {
            settings.apply(layer, source);
        }
        check_context_order(&settings, &files)?;
        let command = match &settings.command {
            Some(explicit) => Some(explicit.clone()).filter(|c| !c.trim().is_empty()),
            None => detect_test_command(project_root),
        };
        let policy = Policy {
            tests: TestSettings {
                command,
                ..settings.tests.clone()
            },
            stop: settings.stop.clone(),
            git: settings.git.clone(),
            journal: settings.journal.clone(),
            context: settings.context.clone(),
            resume: settings.resume.clone(),
            clear: settings.clear.clone(),
            rules: compile_rules(&files)?,
        };
        Ok(Merged {
            files,
            settings,
            policy,
        })
    }

    /// Where the effective value of `key` (one of [`KEYS`]) came from.
    fn origin(&self, key: &str) -> Origin {
        match self.settings.origins.get(key) {
            Some(&source) => layer_origin(&self.files, source, key),
            None if key == "tests.command" && self.policy.tests.command.is_some() => {
                Origin::Detected
            }
            None => Origin::Default,
        }
    }
}

/// The origin of `key` as set by layer `source` (a file of `files`, or the environment after
/// them).
fn layer_origin(files: &[ConfigFile], source: usize, key: &str) -> Origin {
    match files.get(source) {
        Some(file) => Origin::File {
            path: file.path.clone(),
            line: file.key_line(key),
        },
        None => Origin::Env(env_var(key).to_owned()),
    }
}

/// The variable that overrides `key`.
fn env_var(key: &str) -> &'static str {
    KEYS.iter().find(|k| k.name == key).map_or("", |k| k.env)
}

/// `context.warn` must be below `context.critical`. The error names the one of the two that
/// the higher layer set (`warn` when one layer set both), where that layer set it.
fn check_context_order(settings: &Settings, files: &[ConfigFile]) -> Result<(), ConfigError> {
    let ContextSettings { warn, critical, .. } = settings.context;
    if warn < critical {
        return Ok(());
    }
    let set_by = |key| settings.origins.get(key).copied();
    let (warn_set_by, critical_set_by) = (set_by("context.warn"), set_by("context.critical"));
    // `None` (a default) sorts below every layer.
    let (key, source, message) =
        match (warn_set_by >= critical_set_by, warn_set_by, critical_set_by) {
            (true, Some(w), _) => (
                "context.warn",
                w,
                format!("must be below context.critical ({critical}), got {warn}"),
            ),
            (false, _, Some(c)) => (
                "context.critical",
                c,
                format!("must be above context.warn ({warn}), got {critical}"),
            ),
            // Both are defaults, which are in order.
            _ => return Ok(()),
        };
    Err(match layer_origin(files, source, key) {
        Origin::File { path, line } => ConfigError::Invalid {
            path,
            line,
            key: key.to_owned(),
            message,
        },
        _ => ConfigError::Env {
            var: env_var(key).to_owned(),
            message,
        },
    })
}

/// The effective value of `key` (one of [`KEYS`]) in `policy`, as TOML; `None` when unset.
fn value_of(policy: &Policy, key: &str) -> Option<toml::Value> {
    use toml::Value as V;
    let duration = |d: Duration| Some(V::String(render_duration(d)));
    let count = |n: u32| Some(V::Integer(n.into()));
    let switch = |s: Switch| {
        Some(match s {
            Switch::On => V::Boolean(true),
            Switch::Off => V::Boolean(false),
            Switch::Prompt => V::String("prompt".into()),
        })
    };
    let Policy {
        tests,
        stop,
        git,
        journal,
        context,
        resume,
        clear,
        rules: _,
    } = policy;
    match key {
        "tests.command" => tests.command.clone().map(V::String),
        "tests.timeout" => duration(tests.timeout),
        "stop.commit_gate" => Some(V::Boolean(stop.commit_gate)),
        "stop.max_blocks" => count(stop.max_blocks),
        "stop.capture" => Some(V::Boolean(stop.capture)),
        "stop.capture_interval" => duration(stop.capture_interval),
        "git.backend" => Some(V::String(
            match git.backend {
                GitBackend::Auto => "auto",
                GitBackend::Cli => "cli",
                GitBackend::Gix => "gix",
            }
            .into(),
        )),
        "journal.retention_completed" => duration(journal.retention_completed),
        "journal.retention_failed" => duration(journal.retention_failed),
        "journal.retention_abandoned" => duration(journal.retention_abandoned),
        "journal.max_checkpoints" => count(journal.max_checkpoints),
        "journal.stale_threshold" => duration(journal.stale_threshold),
        "journal.checkpoint_interval" => duration(journal.checkpoint_interval),
        "context.warn" => count(context.warn.into()),
        "context.critical" => count(context.critical.into()),
        "context.window" => context
            .window
            .map(|w| V::Integer(i64::try_from(w).unwrap_or(i64::MAX))),
        "resume.auto" => switch(resume.auto),
        "resume.max_restarts" => count(resume.max_restarts),
        "clear.auto_checkpoint" => switch(clear.auto_checkpoint),
        _ => None,
    }
}

/// A configured rule as an inline table: its globs, tests, action and gate.
fn rule_value(rule: &Rule) -> toml::Value {
    use toml::Value as V;
    let globs = |globs: &[String]| V::Array(globs.iter().cloned().map(V::String).collect());
    let mut table = toml::Table::new();
    table.insert("include".into(), globs(&rule.include));
    if !rule.exclude.is_empty() {
        table.insert("exclude".into(), globs(&rule.exclude));
    }
    let tests = match &rule.tests {
        RuleTests::Project => V::Boolean(true),
        RuleTests::None => V::Boolean(false),
        RuleTests::Command(command) => V::String(command.clone()),
    };
    table.insert("tests".into(), tests);
    if let Some(action) = &rule.action {
        table.insert("action".into(), V::String(action.clone()));
    }
    table.insert("gate".into(), V::Boolean(rule.gate));
    V::Table(table)
}

/// A duration the way a config file writes it, largest unit first: `"2m"`, `"1m30s"`, `"30d"`,
/// `"500ms"`.
fn render_duration(d: Duration) -> String {
    const UNITS: [(&str, u128); 7] = [
        ("d", 86_400_000_000_000),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let mut rest = d.as_nanos();
    let mut text = String::new();
    for (unit, nanos) in UNITS {
        if rest >= nanos {
            text.push_str(&format!("{}{unit}", rest / nanos));
            rest %= nanos;
        }
    }
    if text.is_empty() {
        text.push_str("0s");
    }
    text
}

/// One layer as written: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    #[serde(default)]
    tests: TestsLayer,
    #[serde(default)]
    stop: StopLayer,
    #[serde(default)]
    git: GitLayer,
    #[serde(default)]
    journal: JournalLayer,
    #[serde(default)]
    context: ContextLayer,
    #[serde(default)]
    resume: ResumeLayer,
    #[serde(default)]
    clear: ClearLayer,
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestsLayer {
    command: Option<String>,
    timeout: Option<Interval>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopLayer {
    commit_gate: Option<bool>,
    max_blocks: Option<MaxBlocks>,
    capture: Option<bool>,
    capture_interval: Option<Interval>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GitLayer {
    backend: Option<GitBackend>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct JournalLayer {
    retention_completed: Option<Interval>,
    retention_failed: Option<Interval>,
    retention_abandoned: Option<Interval>,
    max_checkpoints: Option<MaxCheckpoints>,
    stale_threshold: Option<Interval>,
    checkpoint_interval: Option<Interval>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextLayer {
    warn: Option<Percent>,
    critical: Option<Percent>,
    window: Option<Window>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResumeLayer {
    auto: Option<Switch>,
    max_restarts: Option<MaxRestarts>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClearLayer {
    auto_checkpoint: Option<Switch>,
}

/// A `[[rule]]` as written, with the spans error messages point at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    name: Spanned<String>,
    include: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    tests: TestsField,
    action: Option<String>,
    gate: Option<bool>,
}

/// The settings merged so far; `command` is the explicit test command, if any layer set one, and
/// `origins` says which layer (by index) last set each key of [`KEYS`].
#[derive(Default)]
struct Settings {
    command: Option<String>,
    tests: TestSettings,
    stop: StopSettings,
    git: GitSettings,
    journal: JournalSettings,
    context: ContextSettings,
    resume: ResumeSettings,
    clear: ClearSettings,
    origins: HashMap<&'static str, usize>,
}

impl Settings {
    /// Overrides every setting that `layer` sets, remembering that layer `source` set it.
    fn apply(&mut self, layer: &Layer, source: usize) {
        let Layer {
            tests,
            stop,
            git,
            journal,
            context,
            resume,
            clear,
            rule: _,
        } = layer;
        let mut set = Setter {
            origins: &mut self.origins,
            source,
        };
        let duration = |interval: Option<Interval>| interval.map(|Interval(d)| d);
        // A percent is at most 99, so it fits a u8.
        let percent = |p: Option<Percent>| p.map(|Count(n)| n as u8);

        set.put(
            "tests.command",
            &mut self.command,
            tests.command.clone().map(Some),
        );
        set.put(
            "tests.timeout",
            &mut self.tests.timeout,
            duration(tests.timeout),
        );
        set.put(
            "stop.commit_gate",
            &mut self.stop.commit_gate,
            stop.commit_gate,
        );
        set.put(
            "stop.max_blocks",
            &mut self.stop.max_blocks,
            stop.max_blocks.map(Count::get),
        );
        set.put("stop.capture", &mut self.stop.capture, stop.capture);
        set.put(
            "stop.capture_interval",
            &mut self.stop.capture_interval,
            duration(stop.capture_interval),
        );
        set.put("git.backend", &mut self.git.backend, git.backend);
        let j = &mut self.journal;
        set.put(
            "journal.retention_completed",
            &mut j.retention_completed,
            duration(journal.retention_completed),
        );
        set.put(
            "journal.retention_failed",
            &mut j.retention_failed,
            duration(journal.retention_failed),
        );
        set.put(
            "journal.retention_abandoned",
            &mut j.retention_abandoned,
            duration(journal.retention_abandoned),
        );
        set.put(
            "journal.max_checkpoints",
            &mut j.max_checkpoints,
            journal.max_checkpoints.map(Count::get),
        );
        set.put(
            "journal.stale_threshold",
            &mut j.stale_threshold,
            duration(journal.stale_threshold),
        );
        set.put(
            "journal.checkpoint_interval",
            &mut j.checkpoint_interval,
            duration(journal.checkpoint_interval),
        );
        set.put(
            "context.warn",
            &mut self.context.warn,
            percent(context.warn),
        );
        set.put(
            "context.critical",
            &mut self.context.critical,
            percent(context.critical),
        );
        let window = context.window.map(|Count(n)| Some(u64::from(n)));
        set.put("context.window", &mut self.context.window, window);
        set.put("resume.auto", &mut self.resume.auto, resume.auto);
        set.put(
            "resume.max_restarts",
            &mut self.resume.max_restarts,
            resume.max_restarts.map(Count::get),
        );
        set.put(
            "clear.auto_checkpoint",
            &mut self.clear.auto_checkpoint,
            clear.auto_checkpoint,
        );
    }
}

/// Writes the values of one layer into [`Settings`], recording the layer per key.
struct Setter<'a> {
    origins: &'a mut HashMap<&'static str, usize>,
    source: usize,
}

impl Setter<'_> {
    /// Sets `slot` to `value` when the layer has one, and records that this layer set `key`.
    fn put<T>(&mut self, key: &'static str, slot: &mut T, value: Option<T>) {
        if let Some(value) = value {
            *slot = value;
            self.origins.insert(key, self.source);
        }
    }
}

/// A configuration file that exists, with its text for turning byte offsets into lines.
struct ConfigFile {
    path: PathBuf,
    text: String,
    layer: Layer,
}

impl ConfigFile {
    /// Reads and parses `path`; `None` when there is no such file.
    fn read(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        match fs::read_to_string(path) {
            Ok(text) => ConfigFile::parse(path, text).map(Some),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(ConfigError::Read {
                path: path.to_owned(),
                error,
            }),
        }
    }

    /// Parses `text`, the contents of `path`.
    fn parse(path: &Path, text: String) -> Result<ConfigFile, ConfigError> {
        let mut file = ConfigFile {
            path: path.to_owned(),
            text,
            layer: Layer::default(),
        };
        file.layer = file.parse_layer()?;
        Ok(file)
    }

    /// Parses the text into a layer; errors point at the offending line and key.
    fn parse_layer(&self) -> Result<Layer, ConfigError> {
        let doc = DeTable::parse(&self.text).map_err(|e| ConfigError::Syntax {
            path: self.path.clone(),
            line: self.line(e.span().map_or(0, |s| s.start)),
            message: e.message().lines().collect::<Vec<_>>().join("; "),
        })?;
        let root = doc.get_ref().clone();
        Layer::deserialize(toml::de::Deserializer::from(doc)).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let key = table_path(&root, offset);
            let key = key.as_deref().and_then(|k| k.strip_prefix('.'));
            self.invalid(offset, key.unwrap_or("(top level)"), e.message())
        })
    }

    /// The 1-based line where `key` (`section.key`) is set; the first line when it cannot be
    /// found (the file parsed before, so it always can).
    fn key_line(&self, key: &str) -> usize {
        let Ok(doc) = DeTable::parse(&self.text) else {
            return 1;
        };
        let mut table = doc.get_ref();
        let mut parts = key.split('.').peekable();
        while let Some(part) = parts.next() {
            let Some((name, value)) = table.iter().find(|(k, _)| *k.get_ref() == part) else {
                break;
            };
            match value.get_ref() {
                DeValue::Table(inner) if parts.peek().is_some() => table = inner,
                _ => return self.line(name.span().start),
            }
        }
        1
    }

    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        let before = &self.text.as_bytes()[..offset.min(self.text.len())];
        1 + before.iter().filter(|&&b| b == b'\n').count()
    }

    fn invalid(&self, offset: usize, key: &str, message: impl fmt::Display) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.clone(),
            line: self.line(offset),
            key: key.to_owned(),
            message: message.to_string(),
        }
    }
}

/// The path below `table` (`.stop.max_blocks`, `.rule[1].include[0]`) to the innermost key or
/// value whose span holds `offset`.
fn table_path(table: &DeTable<'_>, offset: usize) -> Option<String> {
    table.iter().find_map(|(key, value)| {
        let inner = value_path(value.get_ref(), offset);
        (inner.is_some() || key.span().contains(&offset) || value.span().contains(&offset))
            .then(|| format!(".{}{}", key.get_ref(), inner.unwrap_or_default()))
    })
}

fn value_path(value: &DeValue<'_>, offset: usize) -> Option<String> {
    match value {
        DeValue::Table(table) => table_path(table, offset),
        DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let inner = value_path(item.get_ref(), offset);
            (inner.is_some() || item.span().contains(&offset))
                .then(|| format!("[{i}]{}", inner.unwrap_or_default()))
        }),
        _ => None,
    }
}

/// Checks the rules of all files, then compiles them in order (user file first).
fn compile_rules(files: &[ConfigFile]) -> Result<RuleSet, ConfigError> {
    let placed: Vec<(&ConfigFile, usize, &RawRule)> = files
        .iter()
        .flat_map(|file| {
            file.layer
                .rule
                .iter()
                .enumerate()
                .map(move |(i, r)| (file, i, r))
        })
        .collect();
    let mut names: HashMap<&str, (&ConfigFile, usize)> = HashMap::new();
    for &(file, i, rule) in &placed {
        let name = rule.name.get_ref();
        let name_at = rule.name.span().start;
        if name.trim().is_empty() {
            return Err(file.invalid(name_at, &format!("rule[{i}].name"), "must not be empty"));
        }
        if rule.include.get_ref().is_empty() {
            return Err(file.invalid(
                rule.include.span().start,
                &format!("rule[{i}].include"),
                "must list at least one glob",
            ));
        }
        if let Some((first, first_at)) = names.insert(name, (file, name_at)) {
            let message = format!(
                "duplicate rule name {name:?} (first defined at {}:{})",
                first.path.display(),
                first.line(first_at),
            );
            return Err(file.invalid(name_at, &format!("rule[{i}].name"), message));
        }
    }
    let rules = placed.iter().map(|(_, _, raw)| raw.to_rule()).collect();
    RuleSet::compile(rules).map_err(|err| {
        placed
            .iter()
            .filter(|(_, _, raw)| *raw.name.get_ref() == err.rule)
            .find_map(|&(file, i, raw)| {
                let fields = [
                    ("include", raw.include.get_ref()),
                    ("exclude", &raw.exclude),
                ];
                fields.into_iter().find_map(|(field, globs)| {
                    let glob = globs.iter().find(|g| *g.get_ref() == err.glob)?;
                    let message = format!("bad glob {:?}: {}", err.glob, err.reason);
                    Some(file.invalid(glob.span().start, &format!("rule[{i}].{field}"), message))
                })
            })
            .unwrap_or(ConfigError::Rules(err))
    })
}

impl RawRule {
    fn to_rule(&self) -> Rule {
        let TestsField(tests) = self.tests.clone();
        let globs = |globs: &[Spanned<String>]| globs.iter().map(|g| g.get_ref().clone()).collect();
        Rule {
            name: self.name.get_ref().clone(),
            include: globs(self.include.get_ref()),
            exclude: globs(&self.exclude),
            gate: self.gate.unwrap_or(tests != RuleTests::None),
            tests,
            action: self.action.clone(),
        }
    }
}

/// Reads the settings that `CHECKPOINT_*` variables override; other variables are ignored.
fn env_layer(env: &[(String, String)]) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for (var, value) in env {
        let bad = |message| ConfigError::Env {
            var: var.clone(),
            message,
        };
        match var.as_str() {
            "CHECKPOINT_TESTS_COMMAND" => layer.tests.command = Some(value.clone()),
            "CHECKPOINT_TESTS_TIMEOUT" => layer.tests.timeout = Some(value.parse().map_err(bad)?),
            "CHECKPOINT_STOP_COMMIT_GATE" => {
                layer.stop.commit_gate = Some(parse_flag(value).map_err(bad)?);
            }
            "CHECKPOINT_STOP_MAX_BLOCKS" => {
                layer.stop.max_blocks = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_STOP_CAPTURE" => layer.stop.capture = Some(parse_flag(value).map_err(bad)?),
            "CHECKPOINT_STOP_CAPTURE_INTERVAL" => {
                layer.stop.capture_interval = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_RETENTION_COMPLETED" => {
                layer.journal.retention_completed = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_RETENTION_FAILED" => {
                layer.journal.retention_failed = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_RETENTION_ABANDONED" => {
                layer.journal.retention_abandoned = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_MAX_CHECKPOINTS" => {
                layer.journal.max_checkpoints = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_STALE_THRESHOLD" => {
                layer.journal.stale_threshold = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL" => {
                layer.journal.checkpoint_interval = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_CONTEXT_WARN" => layer.context.warn = Some(value.parse().map_err(bad)?),
            "CHECKPOINT_CONTEXT_CRITICAL" => {
                layer.context.critical = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_CONTEXT_WINDOW" => {
                layer.context.window = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_AUTO_RESUME" => layer.resume.auto = Some(parse_switch(value).map_err(bad)?),
            "CHECKPOINT_RESUME_MAX_RESTARTS" => {
                layer.resume.max_restarts = Some(value.parse().map_err(bad)?);
            }
            "CHECKPOINT_CLEAR_AUTO_CHECKPOINT" => {
                layer.clear.auto_checkpoint = Some(parse_switch(value).map_err(bad)?);
            }
            "CHECKPOINT_GIT_BACKEND" => {
                let backend = GitBackend::deserialize(value.trim().into_deserializer())
                    .map_err(|e: de::value::Error| bad(e.to_string()))?;
                layer.git.backend = Some(backend);
            }
            _ => {}
        }
    }
    Ok(layer)
}

/// An environment flag: `true`/`false`, `1`/`0` or `yes`/`no`, in any case.
fn parse_flag(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(format!("expected true/false, 1/0 or yes/no, got {value:?}")),
    }
}

/// An environment switch: a flag (see [`parse_flag`]) or `prompt`, in any case.
fn parse_switch(value: &str) -> Result<Switch, String> {
    match parse_flag(value) {
        Ok(on) => Ok(Switch::from(on)),
        Err(_) if value.trim().eq_ignore_ascii_case("prompt") => Ok(Switch::Prompt),
        Err(_) => Err(format!(
            "expected true/false, 1/0, yes/no or prompt, got {value:?}"
        )),
    }
}

/// What a duration looks like, for error messages.
const DURATION_SHAPE: &str = r#"a duration like "120s", "2m" or "1m30s""#;

/// A positive duration written like `"120s"`, `"2m"`, `"1m30s"`, `"500ms"` or `"30d"` (jiff's
/// friendly or ISO 8601 format; a day is 24 hours).
#[derive(Debug, Clone, Copy)]
struct Interval(Duration);

impl FromStr for Interval {
    type Err = String;

    fn from_str(s: &str) -> Result<Interval, String> {
        let text = s.trim();
        let parsed = text
            .parse::<jiff::SignedDuration>()
            .ok()
            .or_else(|| {
                let span: jiff::Span = text.parse().ok()?;
                span.to_duration(jiff::SpanRelativeTo::days_are_24_hours())
                    .ok()
            })
            .ok_or_else(|| format!("expected {DURATION_SHAPE}, got {s:?}"))?;
        if parsed.is_positive() {
            Ok(Interval(parsed.unsigned_abs()))
        } else {
            Err(format!("must be a positive duration, got {s:?}"))
        }
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl de::Visitor<'_> for Visitor {
            type Value = Interval;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(DURATION_SHAPE)
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Interval, E> {
                v.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

/// A whole number in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "u32")]
struct Count<const MIN: u32, const MAX: u32>(u32);

impl<const MIN: u32, const MAX: u32> Count<MIN, MAX> {
    /// The number.
    fn get(self) -> u32 {
        self.0
    }
}

impl<const MIN: u32, const MAX: u32> TryFrom<u32> for Count<MIN, MAX> {
    type Error = String;

    fn try_from(n: u32) -> Result<Self, String> {
        if n > MAX {
            Err(format!("must be at most {MAX}, got {n}"))
        } else if n < MIN {
            Err(format!("must be at least {MIN}, got {n}"))
        } else {
            Ok(Count(n))
        }
    }
}

impl<const MIN: u32, const MAX: u32> FromStr for Count<MIN, MAX> {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let n: u64 =
            (s.trim().parse()).map_err(|_| format!("expected a whole number, got {s:?}"))?;
        u32::try_from(n)
            .map_err(|_| format!("must be at most {MAX}, got {n}"))?
            .try_into()
    }
}

/// A rule's `tests`: `true` (the project command), `false` (none) or a command of its own.
#[derive(Debug, Clone)]
struct TestsField(RuleTests);

impl Default for TestsField {
    fn default() -> Self {
        TestsField(RuleTests::Project)
    }
}

impl<'de> Deserialize<'de> for TestsField {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl de::Visitor<'_> for Visitor {
            type Value = RuleTests;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or a command")
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RuleTests, E> {
                Ok(if v {
                    RuleTests::Project
                } else {
                    RuleTests::None
                })
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<RuleTests, E> {
                if v.trim().is_empty() {
                    Err(E::custom(
                        "empty command; write `tests = false` for no tests",
                    ))
                } else {
                    Ok(RuleTests::Command(v.to_owned()))
                }
            }
        }

        deserializer.deserialize_any(Visitor).map(TestsField)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    /// Where the fixtures' temporary directory appears in error messages.
    const ROOT: &str = "/repo";

    /// A project root holding `checkpoint.toml` (when `project` is given) and a user file
    /// `user.toml` (when `user` is given), plus `env`.
    struct Fixture {
        dir: TempDir,
        env: Vec<(String, String)>,
    }

    impl Fixture {
        fn new(user: Option<&str>, project: Option<&str>) -> Fixture {
            let dir = TempDir::new().unwrap();
            for (name, text) in [("user.toml", user), (PROJECT_FILE, project)] {
                if let Some(text) = text {
                    fs::write(dir.path().join(name), text).unwrap();
                }
            }
            Fixture {
                dir,
                env: Vec::new(),
            }
        }

        fn project(text: &str) -> Fixture {
            Fixture::new(None, Some(text))
        }

        fn env(mut self, vars: &[(&str, &str)]) -> Fixture {
            self.env
                .extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            self
        }

        fn load(&self) -> Result<Policy, ConfigError> {
            let root = self.dir.path();
            let sources = ConfigSources {
                user_file: Some(root.join("user.toml")),
                project_file: root.join(PROJECT_FILE),
                env: self.env.clone(),
            };
            load(&sources, root)
        }

        fn policy(&self) -> Policy {
            self.load().unwrap()
        }

        /// The error message, with the temporary directory shown as [`ROOT`].
        fn error(&self) -> String {
            let err = self.load().unwrap_err().to_string();
            err.replace(self.dir.path().to_str().unwrap(), ROOT)
        }
    }

    fn rule(name: &str, include: &[&str], tests: RuleTests, gate: bool) -> Rule {
        Rule {
            name: name.into(),
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: Vec::new(),
            tests,
            action: None,
            gate,
        }
    }

    #[test]
    fn defaults_without_any_file() {
        let policy = Fixture::new(None, None).policy();
        assert_eq!(policy.tests, TestSettings::default());
        assert_eq!(policy.stop, StopSettings::default());
        assert_eq!(policy.git, GitSettings::default());
        assert!(policy.rules.configured().is_empty());
        assert_eq!(
            (policy.context, policy.resume, policy.clear),
            (
                ContextSettings {
                    warn: 80,
                    critical: 90,
                    window: None
                },
                ResumeSettings {
                    auto: Switch::On,
                    max_restarts: 3
                },
                ClearSettings {
                    auto_checkpoint: Switch::On
                },
            )
        );
    }

    #[test]
    fn context_resume_and_clear_from_files() {
        let user = "[context]\nwarn = 60\ncritical = 70\n\n[resume]\nmax_restarts = 9\n";
        let project = "[context]\ncritical = 95\nwindow = 200000\n\n\
                       [resume]\nauto = \"prompt\"\nmax_restarts = 0\n\n\
                       [clear]\nauto_checkpoint = false\n";
        let policy = Fixture::new(Some(user), Some(project)).policy();
        assert_eq!(
            policy.context,
            ContextSettings {
                warn: 60,
                critical: 95,
                window: Some(200_000),
            }
        );
        assert_eq!(
            policy.resume,
            ResumeSettings {
                auto: Switch::Prompt,
                max_restarts: 0,
            }
        );
        assert_eq!(policy.clear.auto_checkpoint, Switch::Off);
        // Dotted keys and inline tables are the same keys.
        let policy =
            Fixture::project("context.warn = 55\nclear = { auto_checkpoint = \"prompt\" }\n")
                .policy();
        assert_eq!(policy.context.warn, 55);
        assert_eq!(policy.clear.auto_checkpoint, Switch::Prompt);
    }

    #[test]
    fn context_resume_and_clear_from_env() {
        let project = "[context]\nwarn = 60\n[resume]\nauto = false\n";
        let policy = Fixture::project(project)
            .env(&[
                ("CHECKPOINT_CONTEXT_WARN", "85"),
                ("CHECKPOINT_CONTEXT_CRITICAL", " 99 "),
                ("CHECKPOINT_CONTEXT_WINDOW", "1000000"),
                ("CHECKPOINT_AUTO_RESUME", "Prompt"),
                ("CHECKPOINT_RESUME_MAX_RESTARTS", "100"),
                ("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "no"),
            ])
            .policy();
        assert_eq!(
            policy.context,
            ContextSettings {
                warn: 85,
                critical: 99,
                window: Some(1_000_000),
            }
        );
        assert_eq!(
            policy.resume,
            ResumeSettings {
                auto: Switch::Prompt,
                max_restarts: 100,
            }
        );
        assert_eq!(policy.clear.auto_checkpoint, Switch::Off);
    }

    #[test]
    fn switches_in_files_and_env() {
        let auto = |value: &str| {
            Fixture::project(&format!("[resume]\nauto = {value}\n"))
                .policy()
                .resume
                .auto
        };
        assert_eq!(auto("true"), Switch::On);
        assert_eq!(auto("false"), Switch::Off);
        assert_eq!(auto("\"prompt\""), Switch::Prompt);
        assert_eq!(auto("\"true\""), Switch::On);
        assert_eq!(auto("\"false\""), Switch::Off);

        let env = |value: &str| {
            Fixture::new(None, None)
                .env(&[("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", value)])
                .policy()
                .clear
                .auto_checkpoint
        };
        for (value, expected) in [
            ("true", Switch::On),
            ("1", Switch::On),
            ("YES", Switch::On),
            ("false", Switch::Off),
            ("0", Switch::Off),
            ("no", Switch::Off),
            ("prompt", Switch::Prompt),
            (" PROMPT ", Switch::Prompt),
        ] {
            assert_eq!(env(value), expected, "{value:?}");
        }

        assert_eq!(
            serde_json::to_string(&[Switch::On, Switch::Off, Switch::Prompt]).unwrap(),
            r#"[true,false,"prompt"]"#
        );
        assert_eq!(Switch::default(), Switch::On);
        assert_eq!("prompt".parse(), Ok(Switch::Prompt));
        assert_eq!(
            "ask".parse::<Switch>(),
            Err(r#"expected true, false or "prompt", got "ask""#.to_owned())
        );
    }

    #[test]
    fn switch_errors() {
        let f = Fixture::project("[resume]\nauto = 1\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: resume.auto: invalid type: integer `1`, expected true, false or "prompt""#);
        let f = Fixture::project("[clear]\nauto_checkpoint = \"ask\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: clear.auto_checkpoint: expected true, false or "prompt", got "ask""#);
        let f = Fixture::new(None, None).env(&[("CHECKPOINT_AUTO_RESUME", "sometimes")]);
        insta::assert_snapshot!(f.error(), @r#"CHECKPOINT_AUTO_RESUME: expected true/false, 1/0, yes/no or prompt, got "sometimes""#);
    }

    #[test]
    fn context_and_resume_ranges() {
        let error = |text: &str| Fixture::project(text).error();
        insta::assert_snapshot!(error("[context]\nwarn = 49\n"), @"/repo/checkpoint.toml:2: context.warn: must be at least 50, got 49");
        insta::assert_snapshot!(error("[context]\ncritical = 100\n"), @"/repo/checkpoint.toml:2: context.critical: must be at most 99, got 100");
        insta::assert_snapshot!(error("[context]\nwindow = 999\n"), @"/repo/checkpoint.toml:2: context.window: must be at least 1000, got 999");
        insta::assert_snapshot!(error("[context]\nwindow = 100000001\n"), @"/repo/checkpoint.toml:2: context.window: must be at most 100000000, got 100000001");
        insta::assert_snapshot!(error("[context]\nwarn = \"80%\"\n"), @r#"/repo/checkpoint.toml:2: context.warn: invalid type: string "80%", expected u32"#);
        insta::assert_snapshot!(error("[resume]\nmax_restarts = 101\n"), @"/repo/checkpoint.toml:2: resume.max_restarts: must be at most 100, got 101");
        let bounds = Fixture::project(
            "[context]\nwarn = 50\ncritical = 99\nwindow = 1000\n[resume]\nmax_restarts = 0\n",
        )
        .policy();
        assert_eq!(
            (
                bounds.context.warn,
                bounds.context.critical,
                bounds.context.window
            ),
            (50, 99, Some(1000))
        );
        let env = |var: &str, value: &str| Fixture::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_WARN", "high"), @r#"CHECKPOINT_CONTEXT_WARN: expected a whole number, got "high""#);
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_CRITICAL", "20"), @"CHECKPOINT_CONTEXT_CRITICAL: must be at least 50, got 20");
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_WINDOW", "5000000000"), @"CHECKPOINT_CONTEXT_WINDOW: must be at most 100000000, got 5000000000");
        insta::assert_snapshot!(env("CHECKPOINT_RESUME_MAX_RESTARTS", "-1"), @r#"CHECKPOINT_RESUME_MAX_RESTARTS: expected a whole number, got "-1""#);
    }

    #[test]
    fn warn_must_stay_below_critical_after_merging() {
        let f = Fixture::project("[context]\nwarn = 95\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: context.warn: must be below context.critical (90), got 95");
        let f = Fixture::project("[context]\n\ncritical = 70\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: context.critical: must be above context.warn (80), got 70");
        // One file sets both: the error names `warn`.
        let f = Fixture::project("[context]\ncritical = 85\nwarn = 85\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: context.warn: must be below context.critical (85), got 85");
        // The higher layer is blamed.
        let f = Fixture::new(
            Some("[context]\ncritical = 85\n"),
            Some("[tests]\ncommand = \"x\"\n[context]\nwarn = 88\n"),
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: context.warn: must be below context.critical (85), got 88");
        let f = Fixture::new(Some("[context]\nwarn = 60\n"), None)
            .env(&[("CHECKPOINT_CONTEXT_CRITICAL", "55")]);
        insta::assert_snapshot!(f.error(), @"CHECKPOINT_CONTEXT_CRITICAL: must be above context.warn (60), got 55");
        // Each layer alone may be out of order as long as the merged result is not.
        let f = Fixture::new(
            Some("[context]\ncritical = 97\n"),
            Some("[context]\nwarn = 95\n"),
        );
        assert_eq!(
            (f.policy().context.warn, f.policy().context.critical),
            (95, 97)
        );
    }

    /// The sources of a fixture, for [`explain`].
    fn explained(f: &Fixture) -> Vec<Setting> {
        let root = f.dir.path();
        let sources = ConfigSources {
            user_file: Some(root.join("user.toml")),
            project_file: root.join(PROJECT_FILE),
            env: f.env.clone(),
        };
        explain(&sources, root).unwrap()
    }

    /// `key = value  # origin` per setting, with the temporary directory shown as [`ROOT`].
    fn explained_text(f: &Fixture) -> String {
        explained(f)
            .iter()
            .map(|s| format!("{} = {}  # {}\n", s.key, s.value_text(), s.origin))
            .collect::<String>()
            .replace(f.dir.path().to_str().unwrap(), ROOT)
    }

    #[test]
    fn explain_names_every_key_and_its_origin() {
        let user = "[stop]\nmax_blocks = 5\n\n[context]\nwarn = 70\n\n\
                    [[rule]]\nname = \"notes\"\ninclude = [\"notes/**\"]\ntests = false\n";
        let project = "# project settings\n[tests]\ntimeout = \"90s\"\n\n\
                       [stop]\nmax_blocks = 7\ncapture_interval = \"1h30m\"\n\n\
                       [resume]\nauto = \"prompt\"\n\n\
                       [[rule]]\nname = \"daemon\"\ninclude = [\"src/**\"]\n\
                       exclude = [\"src/gen/**\"]\naction = \"Run `make restart`\"\n";
        let f = Fixture::new(Some(user), Some(project)).env(&[
            ("CHECKPOINT_CONTEXT_WINDOW", "200000"),
            ("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "0"),
            ("CHECKPOINT_UNRELATED", "x"),
        ]);
        fs::write(f.dir.path().join("Cargo.toml"), "").unwrap();
        insta::assert_snapshot!(explained_text(&f), @r#"
        tests.command = "cargo test"  # detected
        tests.timeout = "1m30s"  # /repo/checkpoint.toml:3
        stop.commit_gate = true  # default
        stop.max_blocks = 7  # /repo/checkpoint.toml:6
        stop.capture = false  # default
        stop.capture_interval = "1h30m"  # /repo/checkpoint.toml:7
        git.backend = "auto"  # default
        journal.retention_completed = "30d"  # default
        journal.retention_failed = "7d"  # default
        journal.retention_abandoned = "7d"  # default
        journal.max_checkpoints = 50  # default
        journal.stale_threshold = "5m"  # default
        journal.checkpoint_interval = "5m"  # default
        context.warn = 70  # /repo/user.toml:5
        context.critical = 90  # default
        context.window = 200000  # env CHECKPOINT_CONTEXT_WINDOW
        resume.auto = "prompt"  # /repo/checkpoint.toml:10
        resume.max_restarts = 3  # default
        clear.auto_checkpoint = false  # env CHECKPOINT_CLEAR_AUTO_CHECKPOINT
        rule.notes = { gate = false, include = ["notes/**"], tests = false }  # /repo/user.toml:8
        rule.daemon = { action = "Run `make restart`", exclude = ["src/gen/**"], gate = true, include = ["src/**"], tests = true }  # /repo/checkpoint.toml:13
        "#);
    }

    #[test]
    fn explain_marks_unset_values() {
        let f = Fixture::project("[tests]\ncommand = \"\"\n");
        let settings = explained(&f);
        let command = &settings[0];
        assert_eq!(command.key, "tests.command");
        assert_eq!(command.value, None);
        assert_eq!(command.value_text(), "(no test command)");
        assert_eq!(
            command.origin,
            Origin::File {
                path: f.dir.path().join(PROJECT_FILE),
                line: 2
            }
        );
        let window = settings.iter().find(|s| s.key == "context.window").unwrap();
        assert_eq!(
            (window.value_text(), &window.origin),
            (
                "(from the transcript or model)".to_owned(),
                &Origin::Default
            )
        );
        // Nothing configured and nothing detected.
        let none = explained(&Fixture::new(None, None));
        assert_eq!((&none[0].value, &none[0].origin), (&None, &Origin::Default));
    }

    #[test]
    fn explain_agrees_with_load() {
        let user = "[tests]\ncommand = \"make check\"\ntimeout = \"5m\"\n\
                    [stop]\ncapture = true\n[git]\nbackend = \"cli\"\n\
                    [journal]\nretention_completed = \"45d\"\nmax_checkpoints = 12\n\
                    [context]\ncritical = 97\nwindow = 128000\n";
        let project = "[tests]\ncommand = \"make test\"\n[stop]\nmax_blocks = 0\n\
                       capture_interval = \"1500ms\"\n[journal]\nstale_threshold = \"90s\"\n\
                       [context]\nwarn = 95\n[resume]\nauto = false\n";
        let f = Fixture::new(Some(user), Some(project)).env(&[
            ("CHECKPOINT_RESUME_MAX_RESTARTS", "8"),
            ("CHECKPOINT_AUTO_RESUME", "prompt"),
            ("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "prompt"),
            ("CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL", "2h"),
        ]);
        let loaded = f.policy();
        let settings = explained(&f);
        assert_eq!(
            settings.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(),
            KEYS.iter().map(|k| k.name).collect::<Vec<_>>()
        );
        // Writing every explained value into one file gives the policy `load` returned.
        let mut text = String::new();
        let mut current = "";
        for setting in &settings {
            let (section, key) = setting.key.split_once('.').unwrap();
            if section != current {
                text.push_str(&format!("[{section}]\n"));
                current = section;
            }
            let value = setting.value.as_ref().expect("every key is set here");
            text.push_str(&format!("{key} = {value}\n"));
        }
        let rewritten = Fixture::project(&text).policy();
        assert_eq!(rewritten.tests, loaded.tests);
        assert_eq!(rewritten.stop, loaded.stop);
        assert_eq!(rewritten.git, loaded.git);
        assert_eq!(rewritten.journal, loaded.journal);
        assert_eq!(rewritten.context, loaded.context);
        assert_eq!(rewritten.resume, loaded.resume);
        assert_eq!(rewritten.clear, loaded.clear);
        assert_eq!(loaded.context.warn, 95);
        assert_eq!(loaded.resume.auto, Switch::Prompt);
        assert_eq!(
            loaded.journal.checkpoint_interval,
            Duration::from_secs(7200)
        );
    }

    #[test]
    fn every_key_has_its_variable() {
        let values = [
            "make", "3s", "no", "4", "yes", "4m", "gix", "1d", "2d", "3d", "9", "1m", "2m", "51",
            "52", "4000", "prompt", "7", "prompt",
        ];
        assert_eq!(values.len(), KEYS.len());
        let env: Vec<(&str, &str)> = KEYS.iter().map(|k| k.env).zip(values).collect();
        let f = Fixture::new(None, None).env(&env);
        for (setting, key) in explained(&f).iter().zip(KEYS) {
            assert_eq!(setting.key, key.name);
            assert_eq!(
                setting.origin,
                Origin::Env(key.env.to_owned()),
                "{}",
                key.name
            );
        }
    }

    #[test]
    fn check_text_finds_what_load_finds() {
        let path = Path::new("/repo/checkpoint.toml");
        assert!(check_text(path, "").is_ok());
        assert!(
            check_text(
                path,
                "[context]\nwarn = 85 # comment\n[resume]\nauto = \"prompt\"\n"
            )
            .is_ok()
        );
        for text in [
            "[stop\n",
            "[context]\nwarm = 85\n",
            "[context]\nwarn = 101\n",
            "[context]\nwarn = 95\n",
            "[resume]\nauto = \"maybe\"\n",
            "[[rule]]\nname = \"x\"\ninclude = [\"src/[a\"]\n",
            "[[rule]]\nname = \"x\"\ninclude = [\"a\"]\n[[rule]]\nname = \"x\"\ninclude = [\"b\"]\n",
        ] {
            let checked = check_text(path, text).unwrap_err().to_string();
            let loaded = Fixture::project(text).error();
            assert_eq!(checked, loaded, "{text:?}");
        }
    }

    #[test]
    fn durations_render_as_they_are_written() {
        for (duration, text) in [
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(30 * 86_400), "30d"),
            (Duration::from_millis(1500), "1s500ms"),
            (Duration::from_secs(86_400 + 3600 + 1), "1d1h1s"),
            (Duration::from_nanos(2_001), "2us1ns"),
        ] {
            assert_eq!(render_duration(duration), text);
            let Interval(parsed) = text.parse().unwrap();
            assert_eq!(parsed, duration, "{text}");
        }
    }

    #[test]
    fn project_overrides_user_per_key() {
        let user = "[tests]\ncommand = \"make check\"\ntimeout = \"5m\"\n\
                    [stop]\nmax_blocks = 5\ncapture = true\n[git]\nbackend = \"cli\"\n";
        let project = "[tests]\ncommand = \"make test\"\n[stop]\nmax_blocks = 7\n";
        let policy = Fixture::new(Some(user), Some(project)).policy();
        assert_eq!(
            policy.tests,
            TestSettings {
                command: Some("make test".into()),
                timeout: Duration::from_secs(300),
            }
        );
        assert_eq!(
            policy.stop,
            StopSettings {
                max_blocks: 7,
                capture: true,
                ..StopSettings::default()
            }
        );
        assert_eq!(policy.git.backend, GitBackend::Cli);
    }

    #[test]
    fn env_overrides_project() {
        let project = "[tests]\ncommand = \"make test\"\ntimeout = \"10s\"\n\
                       [stop]\nmax_blocks = 7\ncommit_gate = true\n[git]\nbackend = \"cli\"\n";
        let policy = Fixture::project(project)
            .env(&[
                ("CHECKPOINT_TESTS_COMMAND", "just test"),
                ("CHECKPOINT_TESTS_TIMEOUT", "1m30s"),
                ("CHECKPOINT_STOP_COMMIT_GATE", "no"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "9"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "0"),
                ("CHECKPOINT_STOP_CAPTURE", "YES"),
                ("CHECKPOINT_STOP_CAPTURE_INTERVAL", "500ms"),
                ("CHECKPOINT_GIT_BACKEND", "gix"),
                ("CHECKPOINT_STATE_DIR", "not a setting of this module"),
            ])
            .policy();
        assert_eq!(
            policy.tests,
            TestSettings {
                command: Some("just test".into()),
                timeout: Duration::from_secs(90),
            }
        );
        assert_eq!(
            policy.stop,
            StopSettings {
                commit_gate: false,
                max_blocks: 0,
                capture: true,
                capture_interval: Duration::from_millis(500),
            }
        );
        assert_eq!(policy.git.backend, GitBackend::Gix);
    }

    #[test]
    fn journal_settings_from_files_and_env() {
        assert_eq!(
            Fixture::new(None, None).policy().journal,
            JournalSettings::default()
        );
        let user = "[journal]\nretention_completed = \"60d\"\nmax_checkpoints = 10\n";
        let project = "[journal]\nretention_failed = \"1d\"\nretention_abandoned = \"12h\"\n\
                       stale_threshold = \"2s\"\ncheckpoint_interval = \"1m\"\n";
        let policy = Fixture::new(Some(user), Some(project))
            .env(&[
                ("CHECKPOINT_JOURNAL_MAX_CHECKPOINTS", "20"),
                ("CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL", "90s"),
            ])
            .policy();
        assert_eq!(
            policy.journal,
            JournalSettings {
                retention_completed: Duration::from_secs(60 * 86_400),
                retention_failed: Duration::from_secs(86_400),
                retention_abandoned: Duration::from_secs(12 * 3600),
                max_checkpoints: 20,
                stale_threshold: Duration::from_secs(2),
                checkpoint_interval: Duration::from_secs(90),
            }
        );
        let env = Fixture::new(None, None)
            .env(&[
                ("CHECKPOINT_JOURNAL_RETENTION_COMPLETED", "2d"),
                ("CHECKPOINT_JOURNAL_RETENTION_FAILED", "3d"),
                ("CHECKPOINT_JOURNAL_RETENTION_ABANDONED", "4d"),
                ("CHECKPOINT_JOURNAL_STALE_THRESHOLD", "1s"),
            ])
            .policy()
            .journal;
        assert_eq!(
            (
                env.retention_completed,
                env.retention_failed,
                env.retention_abandoned,
                env.stale_threshold
            ),
            (
                Duration::from_secs(2 * 86_400),
                Duration::from_secs(3 * 86_400),
                Duration::from_secs(4 * 86_400),
                Duration::from_secs(1),
            )
        );
    }

    #[test]
    fn journal_errors_name_file_line_and_key() {
        let f = Fixture::project("[journal]\nmax_checkpoints = 0\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: journal.max_checkpoints: must be at least 1, got 0");
        let f = Fixture::project("[journal]\n\nstale_threshold = \"0s\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:3: journal.stale_threshold: must be a positive duration, got "0s""#);
        let error = |var: &str, value: &str| Fixture::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_MAX_CHECKPOINTS", "10001"), @"CHECKPOINT_JOURNAL_MAX_CHECKPOINTS: must be at most 10000, got 10001");
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_RETENTION_FAILED", "forever"), @r#"CHECKPOINT_JOURNAL_RETENTION_FAILED: expected a duration like "120s", "2m" or "1m30s", got "forever""#);
    }

    #[test]
    fn durations_in_every_documented_shape() {
        for (text, expected) in [
            ("120s", Duration::from_secs(120)),
            ("2m", Duration::from_secs(120)),
            ("1m30s", Duration::from_secs(90)),
            ("500ms", Duration::from_millis(500)),
            (" 1h ", Duration::from_secs(3600)),
            ("30d", Duration::from_secs(30 * 86_400)),
            ("2s", Duration::from_secs(2)),
        ] {
            let Interval(parsed) = text.parse().unwrap();
            assert_eq!(parsed, expected, "{text}");
        }
    }

    #[test]
    fn test_command_is_detected_unless_set() {
        let detected = Fixture::new(None, None);
        fs::write(detected.dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(
            detected.policy().tests.command.as_deref(),
            Some("cargo test")
        );

        let none = Fixture::project("[tests]\ncommand = \"\"\n");
        fs::write(none.dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(none.policy().tests.command, None);

        let env_none = Fixture::project("[tests]\ncommand = \"make test\"\n")
            .env(&[("CHECKPOINT_TESTS_COMMAND", " ")]);
        assert_eq!(env_none.policy().tests.command, None);
    }

    #[test]
    fn rules_are_concatenated_user_first() {
        let user = "[[rule]]\nname = \"mine\"\ninclude = [\"notes/**\"]\n";
        let project = "[[rule]]\nname = \"a\"\ninclude = [\"a/**\"]\n\n\
                       [[rule]]\nname = \"b\"\ninclude = [\"b/**\"]\n";
        let policy = Fixture::new(Some(user), Some(project)).policy();
        let names: Vec<_> = policy.rules.configured().iter().map(|r| &r.name).collect();
        assert_eq!(names, ["mine", "a", "b"]);
    }

    #[test]
    fn rule_tests_and_gate_defaults() {
        let project = r#"
            [[rule]]
            name = "default"
            include = ["a/**"]

            [[rule]]
            name = "project"
            include = ["b/**"]
            tests = true
            gate = false

            [[rule]]
            name = "none"
            include = ["c/**"]
            tests = false

            [[rule]]
            name = "gated docs"
            include = ["d/**"]
            tests = false
            gate = true

            [[rule]]
            name = "own"
            include = ["e/**", "f/**"]
            exclude = ["e/gen/**"]
            tests = "cargo test -p e"
            action = "Run `make restart`"
        "#;
        let policy = Fixture::project(project).policy();
        assert_eq!(
            policy.rules.configured(),
            [
                rule("default", &["a/**"], RuleTests::Project, true),
                rule("project", &["b/**"], RuleTests::Project, false),
                rule("none", &["c/**"], RuleTests::None, false),
                rule("gated docs", &["d/**"], RuleTests::None, true),
                Rule {
                    exclude: vec!["e/gen/**".into()],
                    action: Some("Run `make restart`".into()),
                    ..rule(
                        "own",
                        &["e/**", "f/**"],
                        RuleTests::Command("cargo test -p e".into()),
                        true,
                    )
                },
            ]
        );
    }

    #[test]
    fn syntax_error() {
        let f = Fixture::project("[tests]\ncommand = \"x\"\n[stop\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: syntax error: unclosed table, expected `]`");
        let f = Fixture::project("[stop]\ncapture = true\ncapture = false\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: syntax error: duplicate key");
    }

    #[test]
    fn type_error_names_line_and_key() {
        let f = Fixture::project(
            "[tests]\ncommand = 'x'\n\n[stop]\ncapture = true\nmax_blocks = \"x\"\n",
        );
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:6: stop.max_blocks: invalid type: string "x", expected u32"#);
        let f = Fixture::project("[tests]\ntimeout = 5\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: invalid type: integer `5`, expected a duration like "120s", "2m" or "1m30s""#);
    }

    #[test]
    fn unknown_keys_and_sections() {
        let f = Fixture::project("[stop]\ncapture = true\nmax_block = 3\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: stop.max_block: unknown field `max_block`, expected one of `commit_gate`, `max_blocks`, `capture`, `capture_interval`");
        let f = Fixture::project("[tests]\ncommand = 'x'\n\n[contexts]\nwarn = 80\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: contexts: unknown field `contexts`, expected one of `tests`, `stop`, `git`, `journal`, `context`, `resume`, `clear`, `rule`");
        let f = Fixture::project("[context]\nenabled = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: context.enabled: unknown field `enabled`, expected one of `warn`, `critical`, `window`");
        let f = Fixture::project("[resume]\nauto_resume = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: resume.auto_resume: unknown field `auto_resume`, expected `auto` or `max_restarts`");
        let f = Fixture::project("[clear]\nauto = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: clear.auto: unknown field `auto`, expected `auto_checkpoint`");
        let f = Fixture::project("[journal]\nstale = \"2s\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: journal.stale: unknown field `stale`, expected one of `retention_completed`, `retention_failed`, `retention_abandoned`, `max_checkpoints`, `stale_threshold`, `checkpoint_interval`");
    }

    #[test]
    fn out_of_range_values() {
        let f = Fixture::project("stop.max_blocks = 101\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: stop.max_blocks: must be at most 100, got 101");
        let f = Fixture::project("[stop]\nmax_blocks = -1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: stop.max_blocks: invalid value: integer `-1`, expected u32");
        let f = Fixture::project("[tests]\ntimeout = \"0s\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: must be a positive duration, got "0s""#);
        let f = Fixture::project("[stop]\ncapture_interval = \"-5m\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: stop.capture_interval: must be a positive duration, got "-5m""#);
        let f = Fixture::project("[tests]\ntimeout = \"5 parsecs\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: expected a duration like "120s", "2m" or "1m30s", got "5 parsecs""#);
        let f = Fixture::project("[git]\nbackend = \"svn\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: git.backend: unknown variant `svn`, expected one of `auto`, `cli`, `gix`");
    }

    #[test]
    fn rule_errors() {
        let f = Fixture::project("[[rule]]\ninclude = [\"a\"]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: rule[0]: missing field `name`");
        let f = Fixture::project(
            "[[rule]]\nname = \"a\"\ninclude = [\"a\"]\n\n[[rule]]\nname = \"b\"\n",
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:5: rule[1]: missing field `include`");
        let f = Fixture::project("[[rule]]\nname = \"a\"\ninclude = []\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: rule[0].include: must list at least one glob");
        let f = Fixture::project("[[rule]]\nname = \" \"\ninclude = [\"a\"]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: rule[0].name: must not be empty");
        let f = Fixture::project("[[rule]]\nname = \"a\"\ninclude = [\"a\", 1]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: rule[0].include[1]: invalid type: integer `1`, expected a string");
        let f = Fixture::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\ntests = 1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].tests: invalid type: integer `1`, expected true, false or a command");
        let f = Fixture::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\ntests = \"\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].tests: empty command; write `tests = false` for no tests");
        let f = Fixture::project("rule = [{ name = \"a\", include = [\"a\"], test = true }]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: rule[0].test: unknown field `test`, expected one of `name`, `include`, `exclude`, `tests`, `action`, `gate`");
    }

    #[test]
    fn duplicate_rule_names_across_files() {
        let user = "[[rule]]\nname = \"py\"\ninclude = [\"**/*.py\"]\n";
        let project =
            "[stop]\ncapture = true\n\n[[rule]]\nname = \"py\"\ninclude = [\"src/*.py\"]\n";
        let f = Fixture::new(Some(user), Some(project));
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:5: rule[0].name: duplicate rule name "py" (first defined at /repo/user.toml:2)"#);
    }

    #[test]
    fn bad_globs_point_at_the_pattern() {
        let project = r#"[[rule]]
name = "ok"
include = ["docs/**"]

[[rule]]
name = "broken"
include = [
    "src/**",
    "src/[a",
]
"#;
        insta::assert_snapshot!(Fixture::project(project).error(), @r#"/repo/checkpoint.toml:9: rule[1].include: bad glob "src/[a": unclosed character class; missing ']'"#);
        let project = "[[rule]]\nname = \"x\"\ninclude = [\"src/**\"]\nexclude = [\"a{b\"]\n";
        insta::assert_snapshot!(Fixture::project(project).error(), @r#"/repo/checkpoint.toml:4: rule[0].exclude: bad glob "a{b": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"#);
    }

    #[test]
    fn user_file_errors_name_the_user_file() {
        let f = Fixture::new(
            Some("[stop]\ncapture = 1\n"),
            Some("[stop]\ncapture = true\n"),
        );
        insta::assert_snapshot!(f.error(), @"/repo/user.toml:2: stop.capture: invalid type: integer `1`, expected a boolean");
    }

    #[test]
    fn unreadable_file() {
        let f = Fixture::new(None, None);
        fs::create_dir(f.dir.path().join(PROJECT_FILE)).unwrap();
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml: Is a directory (os error 21)");
    }

    #[test]
    fn env_errors() {
        let error = |var: &str, value: &str| Fixture::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(error("CHECKPOINT_STOP_MAX_BLOCKS", "abc"), @r#"CHECKPOINT_STOP_MAX_BLOCKS: expected a whole number, got "abc""#);
        insta::assert_snapshot!(error("CHECKPOINT_STOP_MAX_BLOCKS", "101"), @"CHECKPOINT_STOP_MAX_BLOCKS: must be at most 100, got 101");
        insta::assert_snapshot!(error("CHECKPOINT_STOP_COMMIT_GATE", "maybe"), @r#"CHECKPOINT_STOP_COMMIT_GATE: expected true/false, 1/0 or yes/no, got "maybe""#);
        insta::assert_snapshot!(error("CHECKPOINT_STOP_CAPTURE_INTERVAL", "0s"), @r#"CHECKPOINT_STOP_CAPTURE_INTERVAL: must be a positive duration, got "0s""#);
        insta::assert_snapshot!(error("CHECKPOINT_TESTS_TIMEOUT", "soon"), @r#"CHECKPOINT_TESTS_TIMEOUT: expected a duration like "120s", "2m" or "1m30s", got "soon""#);
        insta::assert_snapshot!(error("CHECKPOINT_GIT_BACKEND", "svn"), @"CHECKPOINT_GIT_BACKEND: unknown variant `svn`, expected one of `auto`, `cli`, `gix`");
    }

    #[test]
    fn from_process_reads_checkpoint_variables_only() {
        let root = Path::new("/some/project");
        let sources = ConfigSources::from_process(root);
        assert_eq!(sources.project_file, root.join(PROJECT_FILE));
        assert!(
            sources
                .env
                .iter()
                .all(|(var, _)| var.starts_with("CHECKPOINT_"))
        );
        if let Some(user) = sources.user_file {
            assert!(user.is_absolute() && user.ends_with("checkpoint/config.toml"));
        }
    }
}
