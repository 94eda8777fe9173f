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
//! Rules are numbered from 0 within their file.

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
use super::{GitBackend, GitSettings, JournalSettings, Policy, StopSettings, TestSettings};

/// The project file's name, at the project root.
pub const PROJECT_FILE: &str = "checkpoint.toml";

/// `stop.max_blocks`: 0..=100.
type MaxBlocks = Count<0, 100>;

/// `journal.max_checkpoints`: 1..=10000.
type MaxCheckpoints = Count<1, 10_000>;

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
    let mut files = Vec::new();
    if let Some(user) = &sources.user_file {
        files.extend(ConfigFile::read(user)?);
    }
    files.extend(ConfigFile::read(&sources.project_file)?);
    let env = env_layer(&sources.env)?;

    let mut settings = Settings::default();
    for layer in files.iter().map(|f| &f.layer).chain([&env]) {
        settings.apply(layer);
    }
    let command = match settings.command {
        Some(explicit) => Some(explicit).filter(|c| !c.trim().is_empty()),
        None => detect_test_command(project_root),
    };
    Ok(Policy {
        tests: TestSettings {
            command,
            ..settings.tests
        },
        stop: settings.stop,
        git: settings.git,
        journal: settings.journal,
        rules: compile_rules(&files)?,
    })
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

/// The settings merged so far; `command` is the explicit test command, if any layer set one.
#[derive(Default)]
struct Settings {
    command: Option<String>,
    tests: TestSettings,
    stop: StopSettings,
    git: GitSettings,
    journal: JournalSettings,
}

impl Settings {
    /// Overrides every setting that `layer` sets.
    fn apply(&mut self, layer: &Layer) {
        let Layer {
            tests,
            stop,
            git,
            journal,
            rule: _,
        } = layer;
        if let Some(command) = &tests.command {
            self.command = Some(command.clone());
        }
        if let Some(Interval(timeout)) = tests.timeout {
            self.tests.timeout = timeout;
        }
        if let Some(commit_gate) = stop.commit_gate {
            self.stop.commit_gate = commit_gate;
        }
        if let Some(Count(max_blocks)) = stop.max_blocks {
            self.stop.max_blocks = max_blocks;
        }
        if let Some(capture) = stop.capture {
            self.stop.capture = capture;
        }
        if let Some(Interval(interval)) = stop.capture_interval {
            self.stop.capture_interval = interval;
        }
        if let Some(backend) = git.backend {
            self.git.backend = backend;
        }
        let durations = [
            (
                journal.retention_completed,
                &mut self.journal.retention_completed,
            ),
            (journal.retention_failed, &mut self.journal.retention_failed),
            (
                journal.retention_abandoned,
                &mut self.journal.retention_abandoned,
            ),
            (journal.stale_threshold, &mut self.journal.stale_threshold),
            (
                journal.checkpoint_interval,
                &mut self.journal.checkpoint_interval,
            ),
        ];
        for (value, setting) in durations {
            if let Some(Interval(duration)) = value {
                *setting = duration;
            }
        }
        if let Some(Count(max)) = journal.max_checkpoints {
            self.journal.max_checkpoints = max;
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
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    error,
                });
            }
        };
        let mut file = ConfigFile {
            path: path.to_owned(),
            text,
            layer: Layer::default(),
        };
        file.layer = file.parse()?;
        Ok(Some(file))
    }

    /// Parses the text into a layer; errors point at the offending line and key.
    fn parse(&self) -> Result<Layer, ConfigError> {
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
        let n: u32 =
            (s.trim().parse()).map_err(|_| format!("expected a whole number, got {s:?}"))?;
        n.try_into()
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
        let f = Fixture::project("[tests]\ncommand = 'x'\n\n[context]\nenabled = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: context: unknown field `context`, expected one of `tests`, `stop`, `git`, `journal`, `rule`");
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
