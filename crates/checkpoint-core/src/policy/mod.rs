//! The policy: settings and rules that say what a stop requires. [`config`] loads it from
//! `checkpoint.toml`, the user config and `CHECKPOINT_*` variables; [`rules`] matches paths.

pub mod config;
pub mod detect;
pub mod rules;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use rules::{Rule, RuleSet, RuleTests};

/// Everything `decide` needs to know about the user's wishes.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `[tests]`.
    pub tests: TestSettings,
    /// `[stop]`.
    pub stop: StopSettings,
    /// `[git]`.
    pub git: GitSettings,
    /// `[journal]`.
    pub journal: JournalSettings,
    /// `[[rule]]`s, compiled, followed by the built-in fallbacks.
    pub rules: RuleSet,
}

/// `[tests]`: the project's test command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestSettings {
    /// The command rules with `tests = true` run; `None` when none is configured or detected.
    pub command: Option<String>,
    /// How long one test command may run before its process group is killed.
    #[serde(with = "duration_secs")]
    pub timeout: Duration,
}

/// How the change set is read from git.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GitBackend {
    /// The git CLI when `git` is on `PATH` (measured faster), else gitoxide.
    #[default]
    Auto,
    /// `git status --porcelain=v2` in a subprocess.
    Cli,
    /// gitoxide in-process; needs no `git` binary.
    Gix,
}

/// `[git]`: how the repository is read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitSettings {
    /// Which implementation reads the change set.
    pub backend: GitBackend,
}

/// `[stop]`: how the gate treats an end of turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopSettings {
    /// Uncommitted changes to gated files block the stop.
    pub commit_gate: bool,
    /// Consecutive blocks per turn; after that the stop is allowed with a warning.
    pub max_blocks: u32,
    /// Ask the agent to capture notes when a stop has no code changes.
    pub capture: bool,
    /// At most one capture request per this interval (per session).
    #[serde(with = "duration_secs")]
    pub capture_interval: Duration,
}

/// `[journal]`: when checkpoints are taken, when a task counts as crashed, how long finished tasks
/// are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalSettings {
    /// A completed task is removed by `checkpoint cleanup` after this long.
    #[serde(with = "duration_secs")]
    pub retention_completed: Duration,
    /// A failed task is removed by `checkpoint cleanup` after this long.
    #[serde(with = "duration_secs")]
    pub retention_failed: Duration,
    /// An abandoned task is removed by `checkpoint cleanup` after this long.
    #[serde(with = "duration_secs")]
    pub retention_abandoned: Duration,
    /// The most checkpoints kept per task; the oldest are pruned.
    pub max_checkpoints: u32,
    /// A task that is not finished and was not updated for this long has crashed.
    #[serde(with = "duration_secs")]
    pub stale_threshold: Duration,
    /// During a long step, a checkpoint is taken on a hook event at most this often.
    #[serde(with = "duration_secs")]
    pub checkpoint_interval: Duration,
}

impl Default for JournalSettings {
    fn default() -> Self {
        const DAY: u64 = 24 * 60 * 60;
        JournalSettings {
            retention_completed: Duration::from_secs(30 * DAY),
            retention_failed: Duration::from_secs(7 * DAY),
            retention_abandoned: Duration::from_secs(7 * DAY),
            max_checkpoints: 50,
            stale_threshold: Duration::from_secs(5 * 60),
            checkpoint_interval: Duration::from_secs(5 * 60),
        }
    }
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            command: None,
            timeout: Duration::from_secs(120),
        }
    }
}

impl Default for StopSettings {
    fn default() -> Self {
        StopSettings {
            commit_gate: true,
            max_blocks: 3,
            capture: false,
            capture_interval: Duration::from_secs(30 * 60),
        }
    }
}

impl Policy {
    /// The built-in policy: no test command, default settings, built-in rules only.
    pub fn builtin() -> Policy {
        Policy {
            tests: TestSettings::default(),
            stop: StopSettings::default(),
            git: GitSettings::default(),
            journal: JournalSettings::default(),
            rules: RuleSet::builtin(),
        }
    }

    /// The command a rule asks for, if any: its own, or the project's for `tests = true`.
    pub fn test_command_for<'a>(&'a self, rule: &'a Rule) -> Option<&'a str> {
        match &rule.tests {
            RuleTests::None => None,
            RuleTests::Project => self.tests.command.as_deref(),
            RuleTests::Command(c) => Some(c),
        }
    }
}

/// Serializes a [`Duration`] as whole seconds, for `--json` output.
mod duration_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}
