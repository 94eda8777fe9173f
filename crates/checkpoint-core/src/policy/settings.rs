//! The settings table: every scalar key, declared once.
//!
//! A row of [`KEYS`] gives a key's name (`section.field`, which is also its [`Policy`] field),
//! its `CHECKPOINT_<SECTION>_<FIELD>` variable and any older alias, its value type (a [`Kind`]),
//! and one line of documentation. The row drives everything else: parsing the key in a file
//! (unknown keys are errors), parsing its variable, the merge with per-key provenance, `explain`,
//! `checkpoint config`, and the settings reference in the book ([`reference()`]). Defaults are
//! the policy's own ([`Policy::builtin`]), read through the row.
//!
//! Adding a setting is a row here plus its field (and default) in the policy's section struct.

use std::fmt;
use std::marker::PhantomData;

use toml::Spanned;
use toml::de::{DeValue, ValueDeserializer};

use super::Policy;
use super::value::{Command, Count, Globs, Interval, Kind, Phrases};
use super::{
    CheckClass, GitBackend, IntegrityMode, KeyDerivation, StopProfile, Switch, TestSelect,
};

/// A row of [`KEYS`]: `section.field: Kind, "CHECKPOINT_SECTION_FIELD", "doc"`. The key's name
/// and the [`Policy`] field it reads and writes are both `section.field`.
macro_rules! key {
    ($section:ident . $field:ident : $kind:ty, $env:literal, $doc:literal) => {
        Key {
            name: concat!(stringify!($section), ".", stringify!($field)),
            env: $env,
            aliases: &[],
            doc: $doc,
            slot: &Field::<$kind> {
                get: |policy| &policy.$section.$field,
                set: |policy| &mut policy.$section.$field,
                kind: PhantomData,
            },
            below: None,
            detected: false,
            unset: None,
            guarded: false,
            runs: false,
        }
    };
}

/// Every scalar key, in the order [`Effective::settings`](super::config::Effective::settings)
/// lists them; the keys of one section are adjacent.
pub const KEYS: &[Key] = &[
    key!(tests.command: Command, "CHECKPOINT_TESTS_COMMAND",
        "The command rules with `tests = true` run (the `test` check).")
    .detected()
    .unset("no test command")
    .runs(),
    key!(tests.timeout: Interval, "CHECKPOINT_TESTS_TIMEOUT",
        "How long one test command may run before its process group is killed.")
    .guarded(),
    key!(tests.select: TestSelect, "CHECKPOINT_TESTS_SELECT",
        "`affected`: a recognised `cargo test`, `python3 -m unittest`, `pytest`, `go test`, jest or vitest (also as `npm test`) runs only the packages, test modules or test files the changed files can affect (the whole command when in doubt); `all`: always the whole command."),
    key!(tests.full_before_commit: bool, "CHECKPOINT_TESTS_FULL_BEFORE_COMMIT",
        "When the affected tests pass, also run the whole command (once per change set) before the stop is allowed."),
    key!(tests.prewarm: bool, "CHECKPOINT_TESTS_PREWARM",
        "After a tool call that may change files, start the stop's tests in the background (one run per worktree, restarted when the files change again), so the stop finds their outcome."),
    key!(tests.class: CheckClass, "CHECKPOINT_TESTS_CLASS",
        "When the tests run under `stop.profile = \"claims\"`.")
    .guarded(),
    key!(checks.typecheck: Command, "CHECKPOINT_CHECKS_TYPECHECK",
        "The typecheck command, run whole at a stop with code changes (detected: a `typecheck` script in `package.json`, `mypy .` where mypy is configured).")
    .detected()
    .unset("none")
    .runs(),
    key!(checks.lint: Command, "CHECKPOINT_CHECKS_LINT",
        "The lint command (detected: a `lint` script in `package.json`, `ruff check .` where ruff is configured).")
    .detected()
    .unset("none")
    .runs(),
    key!(checks.build: Command, "CHECKPOINT_CHECKS_BUILD",
        "The build command (detected: a `build` script in `package.json`).")
    .detected()
    .unset("none")
    .runs(),
    key!(checks.custom: Command, "CHECKPOINT_CHECKS_CUSTOM",
        "A check of the project's own (a schema check, `make verify`), run whole at a stop with code changes; never detected.")
    .unset("none")
    .runs(),
    key!(checks.timeout: Interval, "CHECKPOINT_CHECKS_TIMEOUT",
        "How long one check may run before its process group is killed.")
    .guarded(),
    key!(checks.typecheck_class: CheckClass, "CHECKPOINT_CHECKS_TYPECHECK_CLASS",
        "When the typecheck runs under `stop.profile = \"claims\"`.")
    .guarded(),
    key!(checks.lint_class: CheckClass, "CHECKPOINT_CHECKS_LINT_CLASS",
        "When the lint runs under `stop.profile = \"claims\"`.")
    .guarded(),
    key!(checks.build_class: CheckClass, "CHECKPOINT_CHECKS_BUILD_CLASS",
        "When the build runs under `stop.profile = \"claims\"`.")
    .guarded(),
    key!(checks.custom_class: CheckClass, "CHECKPOINT_CHECKS_CUSTOM_CLASS",
        "When the custom check runs under `stop.profile = \"claims\"`.")
    .guarded(),
    key!(stop.commit_gate: bool, "CHECKPOINT_STOP_COMMIT_GATE",
        "Uncommitted changes to gated files block the stop.")
    .guarded(),
    key!(stop.max_blocks: Count<u32, 0, 100>, "CHECKPOINT_STOP_MAX_BLOCKS",
        "Consecutive blocks per turn; after that the stop is allowed with a warning. \
         `0` never blocks: every stop is allowed with a report of what is unresolved.")
    .guarded(),
    key!(stop.capture: bool, "CHECKPOINT_STOP_CAPTURE",
        "Ask the agent to capture notes when a stop has no code changes."),
    key!(stop.capture_interval: Interval, "CHECKPOINT_STOP_CAPTURE_INTERVAL",
        "At most one capture request per this interval (per session)."),
    key!(stop.profile: StopProfile, "CHECKPOINT_STOP_PROFILE",
        "`every`: the tests and every check at every stop with code changes; `claims`: `fast` checks at every such stop, `full` ones only when the agent's final message claims completion (or is unknown, or the turn committed gated files).")
    .guarded(),
    key!(stop.claims: Phrases, "CHECKPOINT_STOP_CLAIMS",
        "The phrases that make the agent's final message a completion claim, matched as whole words in any case.")
    .guarded(),
    key!(git.backend: GitBackend, "CHECKPOINT_GIT_BACKEND",
        "Which implementation reads the change set."),
    key!(journal.retention_completed: Interval, "CHECKPOINT_JOURNAL_RETENTION_COMPLETED",
        "`checkpoint cleanup` removes a completed task after this long."),
    key!(journal.retention_failed: Interval, "CHECKPOINT_JOURNAL_RETENTION_FAILED",
        "`checkpoint cleanup` removes a failed task after this long."),
    key!(journal.retention_abandoned: Interval, "CHECKPOINT_JOURNAL_RETENTION_ABANDONED",
        "`checkpoint cleanup` removes an abandoned task after this long."),
    key!(journal.retention_sessions: Interval, "CHECKPOINT_JOURNAL_RETENTION_SESSIONS",
        "A session file (the gate's memory of one agent session) not written for this long is removed: at a session start (at most once a day) and by `checkpoint cleanup`; never one written in the last day or whose session the continuity log keeps a checkpoint of."),
    key!(journal.max_sessions: Count<u32, 1, 1_000_000>, "CHECKPOINT_JOURNAL_MAX_SESSIONS",
        "The most session files kept; beyond it the least recently written are removed first, with the same exceptions and at the same times as `retention_sessions`."),
    key!(journal.max_checkpoints: Count<u32, 1, 10_000>, "CHECKPOINT_JOURNAL_MAX_CHECKPOINTS",
        "The most checkpoints kept per task; the oldest are pruned."),
    key!(journal.stale_threshold: Interval, "CHECKPOINT_JOURNAL_STALE_THRESHOLD",
        "An unfinished task not updated for this long has crashed."),
    key!(journal.checkpoint_interval: Interval, "CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL",
        "During a long step, a checkpoint is taken on a hook event at most this often."),
    key!(journal.key_derivation: KeyDerivation, "CHECKPOINT_JOURNAL_KEY_DERIVATION",
        "The SLIP-0010 path of a task's receipt key under the master key; `{task}` is the first 31 bits of SHA-256(task id)."),
    key!(context.warn: Count<u8, 50, 99>, "CHECKPOINT_CONTEXT_WARN",
        "Percent of the context window at which a checkpoint is saved and the agent warned.")
    .below("context.critical"),
    key!(context.critical: Count<u8, 50, 99>, "CHECKPOINT_CONTEXT_CRITICAL",
        "Percent of the context window at which saving is urgent."),
    key!(context.window: Count<Option<u64>, 1_000, 100_000_000>, "CHECKPOINT_CONTEXT_WINDOW",
        "The context window's size in tokens.")
    .unset("from the transcript or model"),
    key!(resume.auto: Switch, "CHECKPOINT_RESUME_AUTO",
        "Whether a new session gets the active task's state automatically.")
    .aliases(&["CHECKPOINT_AUTO_RESUME"]),
    key!(resume.max_restarts: Count<u32, 0, 100>, "CHECKPOINT_RESUME_MAX_RESTARTS",
        "How often in a row a task is resumed before it is left to the user."),
    key!(clear.auto_checkpoint: Switch, "CHECKPOINT_CLEAR_AUTO_CHECKPOINT",
        "Whether a checkpoint is saved before the agent's context is cleared."),
    key!(integrity.mode: IntegrityMode, "CHECKPOINT_INTEGRITY_MODE",
        "What a change that weakens the tests (deleted test file, new skip marker, removed test or assertions, changed expected value, narrower runner configuration) does to the stop.")
    .guarded(),
    key!(integrity.tests: Globs, "CHECKPOINT_INTEGRITY_TESTS",
        "Globs of test files, added to the defaults (`tests/**`, `test_*.py`, `*_test.go`, `*.test.*`, `*Test.java`…).")
    .guarded(),
    key!(integrity.protected: Globs, "CHECKPOINT_INTEGRITY_PROTECTED",
        "Globs of files (golden files, acceptance suites) any change to which blocks like a weakened test.")
    .guarded(),
    key!(integrity.prove_failing: bool, "CHECKPOINT_INTEGRITY_PROVE_FAILING",
        "When tests and code changed together, also run the tests on HEAD's code with the changed tests (in a temporary worktree): a pass there is a finding.")
    .guarded(),
    key!(travel.push_budget: Interval, "CHECKPOINT_TRAVEL_PUSH_BUDGET",
        "How long the `pre-push` step of `checkpoint install git` may push the checkpoint refs before it gives up (they are queued for the next push); the user's push never waits longer."),
    key!(travel.fetch_budget: Interval, "CHECKPOINT_TRAVEL_FETCH_BUDGET",
        "How long `resume`, `log`, `status`, `receipts` and `verify` may fetch missing checkpoint refs from the remote before going on with what is local."),
];

/// One setting: a row of [`KEYS`].
#[derive(Clone, Copy)]
pub struct Key {
    /// `section.field`, as files, `explain` and `checkpoint config` name it.
    pub name: &'static str,
    /// The `CHECKPOINT_<SECTION>_<FIELD>` variable that overrides it.
    pub env: &'static str,
    /// Older names of the variable, still read; when both are set, [`Key::env`] wins.
    pub aliases: &'static [&'static str],
    /// What it does, in one sentence.
    pub doc: &'static str,
    /// How it is parsed, read and written.
    pub(crate) slot: &'static dyn Slot,
    /// The key whose merged value this one's must stay below.
    pub(crate) below: Option<&'static str>,
    /// Whether the project is asked for a value when no layer sets one (the test command).
    pub(crate) detected: bool,
    /// What an unset value means, for a key that may be unset.
    pub(crate) unset: Option<&'static str>,
    /// Whether the key changes what the gate runs or can switch a gate off: only a person sets
    /// it (`checkpoint config set`, an editor), never an agent's tool, and a project's value of
    /// it is part of what the user approves with `checkpoint trust`.
    pub guarded: bool,
    /// Whether its value is a command the gate runs (the test command, a check's): guarded, and
    /// held back as a command (see [`ProjectCommand::runs`](super::config::ProjectCommand::runs)).
    pub runs: bool,
}

impl Key {
    /// The row of `name` (`section.field`), if it is a key.
    pub fn named(name: &str) -> Option<&'static Key> {
        KEYS.iter().find(|key| key.name == name)
    }

    /// The section: `stop` of `stop.capture`.
    pub fn section(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(section, _)| section)
    }

    /// The field within the section: `capture` of `stop.capture`.
    pub fn field(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(_, field)| field)
    }

    /// Its value in `policy`, as TOML; `None` when unset.
    pub fn value_in(&self, policy: &Policy) -> Option<toml::Value> {
        self.slot.read(policy)
    }

    /// Also reads the variables `aliases`.
    const fn aliases(self, aliases: &'static [&'static str]) -> Key {
        Key { aliases, ..self }
    }

    /// Requires the merged value to be below that of the key `name`.
    const fn below(self, name: &'static str) -> Key {
        Key {
            below: Some(name),
            ..self
        }
    }

    /// Takes the value found in the project when no layer sets one.
    const fn detected(self) -> Key {
        Key {
            detected: true,
            ..self
        }
    }

    /// Marks the key as one only a person may change (see [`Key::guarded`]).
    const fn guarded(self) -> Key {
        Key {
            guarded: true,
            ..self
        }
    }

    /// Marks the key as a command the gate runs (see [`Key::runs`]); such a key is guarded.
    const fn runs(self) -> Key {
        Key {
            runs: true,
            guarded: true,
            ..self
        }
    }

    /// Says what an unset value means.
    const fn unset(self, meaning: &'static str) -> Key {
        Key {
            unset: Some(meaning),
            ..self
        }
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("name", &self.name)
            .field("env", &self.env)
            .field("aliases", &self.aliases)
            .finish_non_exhaustive()
    }
}

/// Keys are equal when they have the same name; names are unique.
impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.name == other.name
    }
}

impl Eq for Key {}

/// What an unset value of the key `name` means, in parentheses, as
/// [`Setting::value_text`](super::config::Setting::value_text) shows it.
pub(crate) fn unset_text(name: &str) -> String {
    let meaning = Key::named(name).and_then(|key| key.unset);
    format!("({})", meaning.unwrap_or("unset"))
}

/// Sets one field of a policy to a parsed value.
pub(crate) type Write = Box<dyn FnOnce(&mut Policy)>;

/// How a row parses its values and reads and writes its [`Policy`] field.
pub(crate) trait Slot {
    /// Parses the key's value in a configuration file.
    fn parse_toml(&self, value: Spanned<DeValue<'_>>) -> Result<Write, toml::de::Error>;

    /// Parses a variable's value (or a detected one).
    fn parse_text(&self, text: &str) -> Result<Write, String>;

    /// The field's value in `policy` as TOML; `None` when unset.
    fn read(&self, policy: &Policy) -> Option<toml::Value>;

    /// What the values look like.
    fn values(&self) -> String;
}

/// The [`Slot`] of a field of kind `K`.
struct Field<K: Kind> {
    get: fn(&Policy) -> &K::Field,
    set: fn(&mut Policy) -> &mut K::Field,
    kind: PhantomData<K>,
}

impl<K: Kind> Field<K> {
    fn write(&self, value: K::Field) -> Write {
        let set = self.set;
        Box::new(move |policy| *set(policy) = value)
    }
}

impl<K: Kind> Slot for Field<K> {
    fn parse_toml(&self, value: Spanned<DeValue<'_>>) -> Result<Write, toml::de::Error> {
        K::deserialize(ValueDeserializer::from(value)).map(|v| self.write(v))
    }

    fn parse_text(&self, text: &str) -> Result<Write, String> {
        K::parse(text).map(|v| self.write(v))
    }

    fn read(&self, policy: &Policy) -> Option<toml::Value> {
        K::to_toml((self.get)(policy))
    }

    fn values(&self) -> String {
        K::values()
    }
}

/// The settings reference, a Markdown table of every key: its variable, default, values and
/// meaning. The book's *Settings* section (`docs/src/configuration.md`) is this text.
pub fn reference() -> String {
    let defaults = Policy::builtin();
    let mut text =
        String::from("| Key | Variable | Default | Values | Meaning |\n|---|---|---|---|---|\n");
    for key in KEYS {
        let mut variable = format!("`{}`", key.env);
        for alias in key.aliases {
            variable.push_str(&format!(" (or `{alias}`)"));
        }
        let default = match key.slot.read(&defaults) {
            _ if key.detected => "detected".to_owned(),
            Some(value) => format!("`{value}`"),
            None => unset_text(key.name),
        };
        let mut values = key.slot.values();
        if let Some(above) = key.below {
            values.push_str(&format!("; below `{above}`"));
        }
        text.push_str(&format!(
            "| `{}` | {variable} | {default} | {values} | {} |\n",
            key.name, key.doc
        ));
    }
    text
}

/// How alike (Jaro-Winkler, 0..=1) a misspelt name and a known one must be to suggest the known one.
const MIN_SIMILARITY: f64 = 0.8;

/// The one of `candidates` that `name` most likely misspells ("comand" → "command"), for a "did
/// you mean …?"; `None` when none is close.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    (candidates.into_iter())
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(similarity, _)| *similarity >= MIN_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::policy::config::Origin;
    use crate::policy::test_support::Sources;
    use crate::policy::{ContextSettings, JournalSettings, ResumeSettings};

    #[test]
    fn names_are_unique_and_variables_follow_the_pattern() {
        for (i, key) in KEYS.iter().enumerate() {
            let expected = format!("CHECKPOINT_{}", key.name.replace('.', "_").to_uppercase());
            assert_eq!(key.env, expected);
            assert_eq!(Key::named(key.name), Some(key));
            assert!(KEYS[..i].iter().all(|other| other.name != key.name));
            // A section's keys are adjacent.
            let section_before = KEYS[..i].iter().rposition(|k| k.section() == key.section());
            assert!(section_before.is_none_or(|j| j + 1 == i), "{}", key.name);
            if let Some(above) = key.below {
                assert!(Key::named(above).is_some(), "{}: below {above}", key.name);
            }
        }
        assert_eq!(
            Key::named("resume.auto").map(|k| (k.env, k.aliases)),
            Some(("CHECKPOINT_RESUME_AUTO", &["CHECKPOINT_AUTO_RESUME"][..]))
        );
    }

    /// The book's settings reference (`docs/src/configuration.md`) is [`reference()`];
    /// `UPDATE_BOOK=1` rewrites it.
    #[test]
    fn book_settings_are_the_table() {
        const BEGIN: &str = "<!-- settings: generated from KEYS in crates/checkpoint-core/src/policy/settings.rs -->\n";
        const END: &str = "<!-- end of settings -->";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/configuration.md");
        let readme = fs::read_to_string(&path).unwrap();
        let start = readme.find(BEGIN).expect("the chapter marks its settings") + BEGIN.len();
        let end = start
            + readme[start..]
                .find(END)
                .expect("the chapter ends its settings");
        let expected = reference();
        if std::env::var_os("UPDATE_BOOK").is_some() {
            fs::write(
                &path,
                format!("{}{expected}{}", &readme[..start], &readme[end..]),
            )
            .unwrap();
        } else {
            assert_eq!(
                readme[start..end],
                expected,
                "docs/src/configuration.md's settings differ from the table; run \
                 `UPDATE_BOOK=1 cargo test -p checkpoint-core book` to rewrite them"
            );
        }
    }

    #[test]
    fn context_resume_and_clear_from_files() {
        let user = "[context]\nwarn = 60\ncritical = 70\n\n[resume]\nmax_restarts = 9\n";
        let project = "[context]\ncritical = 95\nwindow = 200000\n\n\
                       [resume]\nauto = \"prompt\"\nmax_restarts = 0\n\n\
                       [clear]\nauto_checkpoint = false\n";
        let policy = Sources::new(Some(user), Some(project)).policy();
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
            Sources::project("context.warn = 55\nclear = { auto_checkpoint = \"prompt\" }\n")
                .policy();
        assert_eq!(policy.context.warn, 55);
        assert_eq!(policy.clear.auto_checkpoint, Switch::Prompt);
    }

    #[test]
    fn context_and_resume_ranges() {
        let error = |text: &str| Sources::project(text).error();
        insta::assert_snapshot!(error("[context]\nwarn = 49\n"), @"/repo/checkpoint.toml:2: context.warn: must be at least 50, got 49");
        insta::assert_snapshot!(error("[context]\ncritical = 100\n"), @"/repo/checkpoint.toml:2: context.critical: must be at most 99, got 100");
        insta::assert_snapshot!(error("[context]\nwindow = 999\n"), @"/repo/checkpoint.toml:2: context.window: must be at least 1000, got 999");
        insta::assert_snapshot!(error("[context]\nwindow = 100000001\n"), @"/repo/checkpoint.toml:2: context.window: must be at most 100000000, got 100000001");
        insta::assert_snapshot!(error("[context]\nwarn = \"80%\"\n"), @r#"/repo/checkpoint.toml:2: context.warn: invalid type: string "80%", expected u32"#);
        insta::assert_snapshot!(error("[resume]\nmax_restarts = 101\n"), @"/repo/checkpoint.toml:2: resume.max_restarts: must be at most 100, got 101");
        let bounds = Sources::project(
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
        let env = |var: &str, value: &str| Sources::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_WARN", "high"), @r#"CHECKPOINT_CONTEXT_WARN: expected a whole number, got "high""#);
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_CRITICAL", "20"), @"CHECKPOINT_CONTEXT_CRITICAL: must be at least 50, got 20");
        insta::assert_snapshot!(env("CHECKPOINT_CONTEXT_WINDOW", "5000000000"), @"CHECKPOINT_CONTEXT_WINDOW: must be at most 100000000, got 5000000000");
        insta::assert_snapshot!(env("CHECKPOINT_RESUME_MAX_RESTARTS", "-1"), @r#"CHECKPOINT_RESUME_MAX_RESTARTS: expected a whole number, got "-1""#);
    }

    #[test]
    fn journal_settings_from_files_and_env() {
        assert_eq!(
            Sources::new(None, None).policy().journal,
            JournalSettings::default()
        );
        let user = "[journal]\nretention_completed = \"60d\"\nmax_checkpoints = 10\n\
                    retention_sessions = \"90d\"\nmax_sessions = 5\n";
        let project = "[journal]\nretention_failed = \"1d\"\nretention_abandoned = \"12h\"\n\
                       stale_threshold = \"2s\"\ncheckpoint_interval = \"1m\"\n\
                       key_derivation = \"m/1'/{task}'/2'\"\n";
        let policy = Sources::new(Some(user), Some(project))
            .env(&[
                ("CHECKPOINT_JOURNAL_MAX_CHECKPOINTS", "20"),
                ("CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL", "90s"),
                ("CHECKPOINT_JOURNAL_MAX_SESSIONS", "7"),
            ])
            .policy();
        assert_eq!(
            policy.journal,
            JournalSettings {
                retention_completed: Duration::from_secs(60 * 86_400),
                retention_failed: Duration::from_secs(86_400),
                retention_abandoned: Duration::from_secs(12 * 3600),
                retention_sessions: Duration::from_secs(90 * 86_400),
                max_sessions: 7,
                max_checkpoints: 20,
                stale_threshold: Duration::from_secs(2),
                checkpoint_interval: Duration::from_secs(90),
                key_derivation: "m/1'/{task}'/2'".parse().unwrap(),
            }
        );
        let env = Sources::new(None, None)
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
        let f = Sources::project("[journal]\nmax_checkpoints = 0\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: journal.max_checkpoints: must be at least 1, got 0");
        let f = Sources::project("[journal]\n\nstale_threshold = \"0s\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:3: journal.stale_threshold: must be a positive duration, got "0s""#);
        let error = |var: &str, value: &str| Sources::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_MAX_CHECKPOINTS", "10001"), @"CHECKPOINT_JOURNAL_MAX_CHECKPOINTS: must be at most 10000, got 10001");
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_RETENTION_FAILED", "forever"), @r#"CHECKPOINT_JOURNAL_RETENTION_FAILED: expected a duration like "120s", "2m" or "1m30s", got "forever""#);
        let f = Sources::project("[journal]\nkey_derivation = \"m/7466/{task}'\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: journal.key_derivation: bad key derivation "m/7466/{task}'": segment "7466" is not hardened (end it with `'`)"#);
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_KEY_DERIVATION", "m/1'"), @r#"CHECKPOINT_JOURNAL_KEY_DERIVATION: bad key derivation "m/1'": it needs exactly one `{task}'` segment"#);
    }

    #[test]
    fn every_key_has_its_variable() {
        let values = [
            "make",
            "3s",
            "all",
            "yes",
            "yes",
            "fast",
            "tsc",
            "eslint .",
            "vite build",
            "make verify",
            "9s",
            "full",
            "full",
            "fast",
            "fast",
            "no",
            "4",
            "yes",
            "4m",
            "claims",
            r#"["shipped", "all green"]"#,
            "gix",
            "1d",
            "2d",
            "3d",
            "40d",
            "500",
            "9",
            "1m",
            "2m",
            "m/9'/{task}'",
            "51",
            "52",
            "4000",
            "prompt",
            "7",
            "prompt",
            "warn",
            "spec/**",
            r#"["golden/**", "a/*.txt"]"#,
            "true",
            "5s",
            "20s",
        ];
        assert_eq!(values.len(), KEYS.len());
        let env: Vec<(&str, &str)> = KEYS.iter().map(|k| k.env).zip(values).collect();
        let f = Sources::new(None, None).env(&env);
        for (setting, key) in f.settings().iter().zip(KEYS) {
            assert_eq!(setting.key, key.name);
            assert_eq!(
                setting.origin,
                Origin::Env(key.env.to_owned()),
                "{}",
                key.name
            );
        }
    }
}
