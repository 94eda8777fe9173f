//! The policy: settings and rules that say what a stop requires.
//!
//! | Module | What it holds |
//! |---|---|
//! | `settings` | the table of settings: every key, its variable, value type and doc, declared once |
//! | `derivation` | [`KeyDerivation`], the template of a task key's derivation path |
//! | `value` | the value types: durations, bounded counts, glob lists, [`Switch`], [`GitBackend`], [`IntegrityMode`], [`TestSelect`] |
//! | `layer` | one configuration text parsed into a layer, with `file:line` errors |
//! | `env` | the `CHECKPOINT_*` variables parsed into a layer |
//! | `explain` | the merge with per-key provenance, and what `explain` lists |
//! | [`config`] | the configuration API, all of the above in one place |
//! | [`rules`] | glob rules that classify changed paths |

pub mod config;
mod derivation;
mod env;
mod error;
mod explain;
mod layer;
pub mod rules;
mod settings;
#[cfg(test)]
pub(crate) mod test_support;
mod value;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use derivation::{HARDENED, KeyDerivation};
pub use rules::{Classes, Rule, RuleSet, RuleTests};
pub use value::{CheckClass, GitBackend, IntegrityMode, Interval, StopProfile, Switch, TestSelect};

/// Everything `decide` needs to know about the user's wishes.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `[tests]`.
    pub tests: TestSettings,
    /// `[checks]`: typecheck, lint and build commands beside the tests.
    pub checks: CheckSettings,
    /// `[stop]`.
    pub stop: StopSettings,
    /// `[git]`.
    pub git: GitSettings,
    /// `[journal]`.
    pub journal: JournalSettings,
    /// `[context]`: when the context watch saves checkpoints.
    pub context: ContextSettings,
    /// `[resume]`: what a new session gets.
    pub resume: ResumeSettings,
    /// `[clear]`: saving before context is cleared.
    pub clear: ClearSettings,
    /// `[integrity]`: what a change that weakens the tests does.
    pub integrity: IntegritySettings,
    /// `[travel]`: how checkpoints go to and come from a remote.
    pub travel: TravelSettings,
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
    /// Whether a recognised command runs only the tests the changes can affect.
    #[serde(default)]
    pub select: TestSelect,
    /// Whether a narrowed run that passes is followed by the whole command before a stop is
    /// allowed.
    #[serde(default)]
    pub full_before_commit: bool,
    /// Whether the planned tests start in the background after a tool call.
    #[serde(default)]
    pub prewarm: bool,
    /// The project has a test command the user has not approved yet, so `command` is `None` for
    /// that reason (set by the trust check, never by a config file).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub awaiting_approval: bool,
    /// Approved test commands whose definition (what they resolve to: a script, a recipe, the
    /// runner configuration) changed since the user approved them: they do not run, and a stop
    /// that needs one is blocked until the user approves the change (set by the trust check,
    /// never by a config file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_definitions: Vec<ChangedDefinition>,
    /// When the tests run under `stop.profile = "claims"`.
    #[serde(default = "full")]
    pub class: CheckClass,
}

fn full() -> CheckClass {
    CheckClass::Full
}

/// `[checks]`: the project's typecheck, lint and build commands. Each runs whole (no selection),
/// under the same approval as the test command, cached by the change set like the tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSettings {
    /// The typecheck command; `None` when none is configured or detected.
    pub typecheck: Option<String>,
    /// The lint command.
    pub lint: Option<String>,
    /// The build command.
    pub build: Option<String>,
    /// The project's own check command (never detected).
    #[serde(default)]
    pub custom: Option<String>,
    /// How long one check may run before its process group is killed.
    #[serde(with = "duration_secs")]
    pub timeout: Duration,
    /// When the typecheck runs under `stop.profile = "claims"`.
    pub typecheck_class: CheckClass,
    /// When the lint runs under `stop.profile = "claims"`.
    pub lint_class: CheckClass,
    /// When the build runs under `stop.profile = "claims"`.
    pub build_class: CheckClass,
    /// When the custom check runs under `stop.profile = "claims"`.
    #[serde(default = "full")]
    pub custom_class: CheckClass,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings {
            typecheck: None,
            lint: None,
            build: None,
            custom: None,
            timeout: Duration::from_secs(120),
            typecheck_class: CheckClass::Fast,
            lint_class: CheckClass::Fast,
            build_class: CheckClass::Full,
            custom_class: CheckClass::Full,
        }
    }
}

/// An approved test command whose definition changed since the approval (see
/// [`TestSettings::changed_definitions`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedDefinition {
    /// The command, as the policy runs it.
    pub command: String,
    /// What changed, one item each: `Makefile`, `package.json scripts.test`, `the repository`.
    pub changed: Vec<String>,
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
    /// Consecutive blocks per turn; after that the stop is allowed with a warning. `0` never
    /// blocks: every stop is allowed with a report of what is unresolved.
    pub max_blocks: u32,
    /// Ask the agent to capture notes when a stop has no code changes.
    pub capture: bool,
    /// At most one capture request per this interval (per session).
    #[serde(with = "duration_secs")]
    pub capture_interval: Duration,
    /// Which checks a stop runs: all of them, or the `full` ones only at a claimed completion.
    #[serde(default)]
    pub profile: StopProfile,
    /// The phrases that make an agent's final message a completion claim.
    #[serde(default = "crate::claims::default_claims")]
    pub claims: Vec<String>,
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
    /// A session file (the gate's memory of one agent session) not written for this long is
    /// removed, at a session start at most daily and by `checkpoint cleanup`.
    #[serde(with = "duration_secs")]
    pub retention_sessions: Duration,
    /// The most session files kept; beyond it the least recently written are removed first.
    pub max_sessions: u32,
    /// The most checkpoints kept per task; the oldest are pruned.
    pub max_checkpoints: u32,
    /// A task that is not finished and was not updated for this long has crashed.
    #[serde(with = "duration_secs")]
    pub stale_threshold: Duration,
    /// During a long step, a checkpoint is taken on a hook event at most this often.
    #[serde(with = "duration_secs")]
    pub checkpoint_interval: Duration,
    /// The path along which each task's receipt-signing key is derived from the master key.
    pub key_derivation: KeyDerivation,
}

impl Default for JournalSettings {
    fn default() -> Self {
        const DAY: u64 = 24 * 60 * 60;
        JournalSettings {
            retention_completed: Duration::from_secs(30 * DAY),
            retention_failed: Duration::from_secs(7 * DAY),
            retention_abandoned: Duration::from_secs(7 * DAY),
            retention_sessions: Duration::from_secs(30 * DAY),
            max_sessions: 1000,
            max_checkpoints: 50,
            stale_threshold: Duration::from_secs(5 * 60),
            checkpoint_interval: Duration::from_secs(5 * 60),
            key_derivation: KeyDerivation::default(),
        }
    }
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            command: None,
            timeout: Duration::from_secs(120),
            select: TestSelect::Affected,
            full_before_commit: false,
            prewarm: false,
            awaiting_approval: false,
            changed_definitions: Vec::new(),
            class: CheckClass::Full,
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
            profile: StopProfile::Every,
            claims: crate::claims::default_claims(),
        }
    }
}

/// `[context]`: at which fill levels of the agent's context window the context watch saves a
/// checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSettings {
    /// Percent of the window at which a checkpoint is saved and the agent warned (50..=99).
    pub warn: u8,
    /// Percent of the window at which saving is urgent (50..=99, above `warn`).
    pub critical: u8,
    /// The window size in tokens; `None` takes it from the transcript or the model.
    pub window: Option<u64>,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            warn: 80,
            critical: 90,
            window: None,
        }
    }
}

/// `[resume]`: what a new session of the agent is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeSettings {
    /// Whether a new session gets the active task's state automatically.
    pub auto: Switch,
    /// How often in a row a task is resumed before it is left to the user (0..=100).
    pub max_restarts: u32,
}

impl Default for ResumeSettings {
    fn default() -> Self {
        ResumeSettings {
            auto: Switch::On,
            max_restarts: 3,
        }
    }
}

/// `[clear]`: what happens before the agent's context is cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearSettings {
    /// Whether a checkpoint is saved before the context is cleared.
    pub auto_checkpoint: Switch,
}

/// `[integrity]`: whether a change set may weaken the tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegritySettings {
    /// What findings do: block the stop, warn the user, or nothing (no analysis).
    pub mode: IntegrityMode,
    /// Globs of test files, added to the per-ecosystem defaults.
    pub tests: Vec<String>,
    /// Globs of files any change to which is a finding (golden files, acceptance suites).
    pub protected: Vec<String>,
    /// Whether the changed tests are also run against `HEAD`'s code when code changed with them:
    /// a pass there is a finding.
    pub prove_failing: bool,
}

/// `[travel]`: how long pushing and fetching our refs may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TravelSettings {
    /// How long the `pre-push` step may push our refs before its git is killed (what did not go
    /// is queued for the next push).
    #[serde(with = "duration_secs")]
    pub push_budget: Duration,
    /// How long a fetch of our refs on demand may take before the command goes on with what is
    /// local.
    #[serde(with = "duration_secs")]
    pub fetch_budget: Duration,
}

impl Default for TravelSettings {
    fn default() -> Self {
        TravelSettings {
            push_budget: Duration::from_secs(3),
            fetch_budget: Duration::from_secs(10),
        }
    }
}

impl Policy {
    /// The built-in policy: no test command, default settings, built-in rules only.
    pub fn builtin() -> Policy {
        Policy {
            tests: TestSettings::default(),
            checks: CheckSettings::default(),
            stop: StopSettings::default(),
            git: GitSettings::default(),
            journal: JournalSettings::default(),
            context: ContextSettings::default(),
            resume: ResumeSettings::default(),
            clear: ClearSettings::default(),
            integrity: IntegritySettings::default(),
            travel: TravelSettings::default(),
            rules: RuleSet::builtin(),
        }
    }

    /// Every test command this policy may run: its test command, its rules' own and its checks'
    /// commands, sorted, each once.
    pub fn test_commands(&self) -> Vec<String> {
        let rules = (self.rules.configured().iter()).filter_map(|rule| match &rule.tests {
            RuleTests::Command(command) => Some(command.clone()),
            _ => None,
        });
        let mut commands: Vec<String> = self
            .tests
            .command
            .clone()
            .into_iter()
            .chain(rules)
            .chain(configured_checks(self).map(|(_, command, _)| command.to_owned()))
            .collect();
        commands.sort();
        commands.dedup();
        commands
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

/// Each check `policy` has a command for, in [`CheckKind::ALL`](crate::check_kind::CheckKind::ALL) order: its kind, command and
/// class.
pub fn configured_checks(
    policy: &Policy,
) -> impl Iterator<Item = (crate::check_kind::CheckKind, &str, CheckClass)> {
    let checks = &policy.checks;
    [
        (
            crate::check_kind::CheckKind::Typecheck,
            &checks.typecheck,
            checks.typecheck_class,
        ),
        (
            crate::check_kind::CheckKind::Lint,
            &checks.lint,
            checks.lint_class,
        ),
        (
            crate::check_kind::CheckKind::Build,
            &checks.build,
            checks.build_class,
        ),
        (
            crate::check_kind::CheckKind::Custom,
            &checks.custom,
            checks.custom_class,
        ),
    ]
    .into_iter()
    .filter_map(|(kind, command, class)| Some((kind, command.as_deref()?, class)))
}
