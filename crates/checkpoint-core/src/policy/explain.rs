//! The merge and its provenance: the layers over the built-in defaults, where each key's
//! effective value came from ([`Origin`]), and what `explain` lists ([`Setting`]). Everything
//! here works on texts already read; the I/O half reads them.

use std::fmt;
use std::mem;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Policy;
use super::env::env_layer;
use super::error::ConfigError;
use super::layer::{Assignment, ConfigFile, compile_rules};
use super::rules::{Rule, RuleTests};
use super::settings::{KEYS, Key, Write, unset_text};

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

/// One key of the effective configuration, as `explain` lists it.
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
        match &self.value {
            Some(value) => value.to_string(),
            None => unset_text(&self.key),
        }
    }
}

/// One thing a project supplies that the user approves before the gate acts on it
/// (`checkpoint trust`): a command the gate would run — the project's or detected test command, a
/// rule's own test command — a rule's action, or the project file's value of a
/// guarded setting (see [`Key`](super::config::Key)'s `guarded`). What the user's own file or `CHECKPOINT_*`
/// variables set is the user's and never listed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProjectCommand {
    /// Where it goes: `tests.command`, `rule.<name>.tests`, `rule.<name>.action` or a guarded
    /// key such as `stop.commit_gate`.
    pub slot: String,
    /// The command, action or value (as TOML), exactly.
    pub text: String,
}

impl ProjectCommand {
    /// Whether the gate runs it (the test command or a rule's test command); the others run
    /// nothing and are approved only so that a change to them is shown to the user.
    pub fn runs(&self) -> bool {
        Key::named(&self.slot).is_some_and(|key| key.runs) || self.slot.ends_with(".tests")
    }
}

/// What the layers under the project file (the user's file, the built-in default) give for a
/// guarded key (see [`Key`](super::config::Key)'s `guarded`) that the project file sets: the
/// value the gate falls back to while the project's value is not approved and none was before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerValue {
    /// The key, as a [`ProjectCommand`]'s slot.
    pub slot: String,
    /// Its value written as a [`ProjectCommand`]'s text; `None` when unset (no test command).
    pub text: Option<String>,
}

/// `value`, the value of `key`, written as a [`ProjectCommand`]'s text: the test command as it
/// is, any other value as TOML.
fn slot_text(key: &Key, value: Option<toml::Value>) -> Option<String> {
    match value {
        Some(toml::Value::String(command)) if key.runs => Some(command),
        value => value.map(|v| v.to_string()),
    }
}

/// Sets `key` in `policy` to `text`, written as a [`ProjectCommand`]'s text (the
/// test command as it is, any other value as TOML); `None` unsets the test command. Errors when the text is not a value of the
/// key (e.g. an approval written by another version).
pub fn set_slot(policy: &mut Policy, key: &Key, text: Option<&str>) -> Result<(), String> {
    let write = match text {
        _ if key.runs => key.slot.parse_text(text.unwrap_or_default())?,
        None => return Err(format!("{} cannot be unset", key.name)),
        Some(text) => {
            let value = toml::de::DeValue::parse(text).map_err(|e| e.message().to_owned())?;
            key.slot
                .parse_toml(value)
                .map_err(|e| e.message().to_owned())?
        }
    };
    write(policy);
    Ok(())
}

/// The effective configuration: the policy the layers give, with where each key came from.
#[derive(Debug)]
pub struct Effective {
    /// The configuration files that exist, lowest layer first; their rules are the policy's.
    files: Vec<ConfigFile>,
    /// Per key of [`KEYS`], in order.
    provenance: Vec<Provenance>,
    /// The result.
    policy: Policy,
    /// The `CHECKPOINT_*` variables whose values the project supplies (see
    /// [`Effective::with_project_env`]).
    project_env: Vec<String>,
}

/// Where one key's effective value came from, and the layer that set it (`None`, below every
/// layer, for a default or a detected value).
#[derive(Debug, Clone)]
struct Provenance {
    layer: Option<usize>,
    origin: Origin,
    /// The value the layers under that one give (what the key had before it was set); `None`
    /// for a default, or when unset.
    below: Option<toml::Value>,
    /// Where `below` came from.
    below_origin: Origin,
}

impl Effective {
    /// Merges, over the built-in defaults, the parsed configuration `files` (lowest layer first:
    /// the user file, then the project's) and then the `CHECKPOINT_*` variables of `env`; a later
    /// layer wins per key, and the files' rules are concatenated. `detect` is asked for a
    /// detected key's value (the test command, a check's command; by the key's name) only when
    /// no layer sets one.
    ///
    /// Errors: a bad variable, keys the table orders that are out of order after merging (the
    /// error names whichever of the two the higher layer set), and bad or duplicate rules.
    pub fn merge(
        mut files: Vec<ConfigFile>,
        env: &[(String, String)],
        mut detect: impl FnMut(&str) -> Option<String>,
    ) -> Result<Effective, ConfigError> {
        let env = env_layer(env)?;
        let mut policy = Policy::builtin();
        let default = Provenance {
            layer: None,
            origin: Origin::Default,
            below: None,
            below_origin: Origin::Default,
        };
        let mut provenance = vec![default; KEYS.len()];
        let mut apply = |layer, key: usize, write: Write, origin| {
            let below = KEYS[key].slot.read(&policy);
            write(&mut policy);
            let below_origin = mem::replace(&mut provenance[key].origin, Origin::Default);
            provenance[key] = Provenance {
                layer: Some(layer),
                origin,
                below,
                below_origin,
            };
        };
        for (layer, file) in files.iter_mut().enumerate() {
            for Assignment { key, place, write } in mem::take(&mut file.layer).0 {
                let path = file.path.clone();
                apply(layer, key, write, Origin::File { path, line: place });
            }
        }
        for Assignment { key, place, write } in env.0 {
            apply(files.len(), key, write, Origin::Env(place));
        }
        check_order(&policy, &provenance)?;
        policy.rules = compile_rules(&files)?;
        let undetected = (KEYS.iter().zip(&mut provenance))
            .filter(|(key, provenance)| key.detected && provenance.layer.is_none());
        for (key, provenance) in undetected {
            let Some(write) = detect(key.name).and_then(|found| key.slot.parse_text(&found).ok())
            else {
                continue;
            };
            provenance.below = key.slot.read(&policy);
            write(&mut policy);
            provenance.origin = Origin::Detected;
        }
        Ok(Effective {
            files,
            provenance,
            policy,
            project_env: Vec::new(),
        })
    }

    /// The same, with the `CHECKPOINT_*` variables `vars` taken for the project's: the agent's
    /// own project configuration (a file in the repository) put their values into the
    /// environment, so a guarded key one of them sets is supplied by the project, to approve like
    /// the project file's values ([`Effective::project_commands`]).
    pub fn with_project_env(mut self, vars: &[String]) -> Effective {
        self.project_env = vars.to_vec();
        self
    }

    /// The policy.
    pub fn into_policy(self) -> Policy {
        self.policy
    }

    /// What the project whose file is `project_file` supplies for the user to approve, in the
    /// order of [`KEYS`] and then of its rules: the detected test command or the file's, its
    /// values of the other guarded keys, and its rules' own test commands and actions. Values a
    /// higher layer (a `CHECKPOINT_*` variable) overrides are not the project's, unless the
    /// project set that variable ([`Effective::with_project_env`]).
    pub fn project_commands(&self, project_file: &Path) -> Vec<ProjectCommand> {
        let mut commands: Vec<ProjectCommand> = (self.project_keys(project_file))
            .filter_map(|(key, _)| {
                let text = slot_text(key, key.slot.read(&self.policy))?;
                let slot = key.name.to_owned();
                Some(ProjectCommand { slot, text })
            })
            .collect();
        let owners = (self.files.iter()).flat_map(|file| file.rule_lines().map(|_| &file.path));
        for (path, rule) in owners.zip(self.policy.rules.configured()) {
            if path != project_file {
                continue;
            }
            let slot = |what: &str| format!("rule.{}.{what}", rule.name);
            if let RuleTests::Command(command) = &rule.tests {
                commands.push(ProjectCommand {
                    slot: slot("tests"),
                    text: command.clone(),
                });
            }
            if let Some(action) = &rule.action {
                commands.push(ProjectCommand {
                    slot: slot("action"),
                    text: action.clone(),
                });
            }
        }
        commands
    }

    /// What the layers under the project file give for each guarded key whose effective value
    /// the project whose file is `project_file` supplies (see [`LowerValue`]).
    pub fn lower_values(&self, project_file: &Path) -> Vec<LowerValue> {
        // Under a variable the project set, the project file's own value is not a fallback: it is
        // the project's too (the built-in default stands in for it).
        let projects =
            |origin: &Origin| matches!(origin, Origin::File { path, .. } if path == project_file);
        (self.project_keys(project_file))
            .map(|(key, provenance)| LowerValue {
                slot: key.name.to_owned(),
                text: if projects(&provenance.below_origin) {
                    None
                } else {
                    slot_text(key, provenance.below.clone())
                },
            })
            .collect()
    }

    /// The guarded keys the user's own `CHECKPOINT_*` variables set (those the project did not
    /// set, see [`Effective::with_project_env`]): over them the project supplies nothing, so a
    /// value approved for one of them that the project no longer shows is the user's choice, not
    /// a change to the project.
    pub fn user_slots(&self) -> Vec<String> {
        (KEYS.iter().zip(&self.provenance))
            .filter(|(key, provenance)| {
                key.guarded
                    && matches!(&provenance.origin, Origin::Env(var) if !self.project_env.contains(var))
            })
            .map(|(key, _)| key.name.to_owned())
            .collect()
    }

    /// The guarded keys whose effective value the project supplies (its file, detection, or a
    /// variable it set), with their provenance.
    fn project_keys(&self, project_file: &Path) -> impl Iterator<Item = (&Key, &Provenance)> {
        let from_project = move |origin: &Origin| match origin {
            Origin::Detected => true,
            Origin::File { path, .. } => path == project_file,
            Origin::Env(var) => self.project_env.contains(var),
            Origin::Default => false,
        };
        (KEYS.iter().zip(&self.provenance))
            .filter(move |(key, provenance)| key.guarded && from_project(&provenance.origin))
    }

    /// Every key of [`KEYS`], in order, with its effective value and origin, then every
    /// configured `[[rule]]` (`rule.<name>`, user file first).
    pub fn settings(&self) -> Vec<Setting> {
        let mut settings: Vec<Setting> = KEYS
            .iter()
            .zip(&self.provenance)
            .map(|(key, provenance)| Setting {
                key: key.name.to_owned(),
                value: key.slot.read(&self.policy),
                origin: provenance.origin.clone(),
            })
            .collect();
        let placed = (self.files.iter())
            .flat_map(|file| file.rule_lines().map(move |line| (&file.path, line)));
        for ((path, line), rule) in placed.zip(self.policy.rules.configured()) {
            settings.push(Setting {
                key: format!("rule.{}", rule.name),
                value: Some(rule_value(rule)),
                origin: Origin::File {
                    path: path.clone(),
                    line,
                },
            });
        }
        settings
    }
}

/// Checks the text of a configuration file at `path` exactly as loading checks a file (syntax,
/// unknown keys, types, ranges, rule names and globs, and the table's order of keys over the
/// built-in defaults), without reading or writing anything. A writer calls it before replacing
/// the file.
pub fn check_text(path: &Path, text: &str) -> Result<(), ConfigError> {
    let file = ConfigFile::parse(path, text.to_owned())?;
    Effective::merge(vec![file], &[], |_| None).map(drop)
}

/// The 1-based line where `text`, the configuration file at `path`, sets `key`; `None` when it
/// does not parse or does not set it. An error about a proposed change to the file points there,
/// not at a line of the rejected text.
pub fn line_of(path: &Path, text: &str, key: &str) -> Option<usize> {
    let file = ConfigFile::parse(path, text.to_owned()).ok()?;
    let set = file.layer.0.iter().find(|a| KEYS[a.key].name == key)?;
    Some(set.place)
}

/// A key the table orders below another must be below it after merging. The error names the one
/// of the two that the higher layer set (the lower key when one layer set both), where that layer
/// set it.
fn check_order(policy: &Policy, provenance: &[Provenance]) -> Result<(), ConfigError> {
    let number = |key: usize| KEYS[key].slot.read(policy)?.as_integer();
    for (low, key) in KEYS.iter().enumerate() {
        let Some(high) = key
            .below
            .and_then(|name| KEYS.iter().position(|k| k.name == name))
        else {
            continue;
        };
        let (Some(low_value), Some(high_value)) = (number(low), number(high)) else {
            continue;
        };
        if low_value < high_value {
            continue;
        }
        // `None` (a default) sorts below every layer.
        let (blamed, message) = if provenance[low].layer >= provenance[high].layer {
            let above = KEYS[high].name;
            (
                low,
                format!("must be below {above} ({high_value}), got {low_value}"),
            )
        } else {
            let below = KEYS[low].name;
            (
                high,
                format!("must be above {below} ({low_value}), got {high_value}"),
            )
        };
        return Err(match &provenance[blamed].origin {
            Origin::File { path, line } => ConfigError::Invalid {
                path: path.clone(),
                line: *line,
                key: KEYS[blamed].name.to_owned(),
                message,
            },
            Origin::Env(var) => ConfigError::Env {
                var: var.clone(),
                message,
            },
            // Both are defaults, which are in order.
            Origin::Default | Origin::Detected => continue,
        });
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::Duration;

    use super::*;
    use crate::policy::test_support::{PROJECT_FILE, Sources};
    use crate::policy::{
        ClearSettings, ContextSettings, GitBackend, GitSettings, ResumeSettings, StopSettings,
        Switch, TestSettings,
    };

    fn file(text: &str) -> ConfigFile {
        ConfigFile::parse(Path::new(PROJECT_FILE), text.to_owned()).unwrap()
    }

    #[test]
    fn merging_given_texts_asks_for_the_test_command_only_when_no_layer_sets_it() {
        let asked = Cell::new(0);
        let detect = |key: &str| {
            let tests = key == "tests.command";
            asked.set(asked.get() + usize::from(tests));
            tests.then(|| "make test".to_owned())
        };
        let set = Effective::merge(vec![file("[tests]\ncommand = \"\"\n")], &[], detect).unwrap();
        assert_eq!((set.into_policy().tests.command, asked.get()), (None, 0));

        let env = [("CHECKPOINT_STOP_MAX_BLOCKS".to_owned(), "7".to_owned())];
        let unset = Effective::merge(vec![file("[stop]\ncapture = true\n")], &env, detect).unwrap();
        assert_eq!(asked.get(), 1);
        let origins: Vec<(String, Origin)> = (unset.settings().into_iter())
            .filter(|s| s.origin != Origin::Default)
            .map(|s| (s.key, s.origin))
            .collect();
        let path = PathBuf::from(PROJECT_FILE);
        assert_eq!(
            origins,
            [
                ("tests.command".to_owned(), Origin::Detected),
                (
                    "stop.max_blocks".to_owned(),
                    Origin::Env("CHECKPOINT_STOP_MAX_BLOCKS".into())
                ),
                ("stop.capture".to_owned(), Origin::File { path, line: 2 }),
            ]
        );
        let policy = unset.into_policy();
        assert_eq!(policy.tests.command.as_deref(), Some("make test"));
        assert_eq!((policy.stop.max_blocks, policy.stop.capture), (7, true));
    }

    #[test]
    fn defaults_without_any_file() {
        let policy = Sources::new(None, None).policy();
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
    fn project_overrides_user_per_key() {
        let user = "[tests]\ncommand = \"make check\"\ntimeout = \"5m\"\n\
                    [stop]\nmax_blocks = 5\ncapture = true\n[git]\nbackend = \"cli\"\n";
        let project = "[tests]\ncommand = \"make test\"\n[stop]\nmax_blocks = 7\n";
        let policy = Sources::new(Some(user), Some(project)).policy();
        assert_eq!(
            policy.tests,
            TestSettings {
                command: Some("make test".into()),
                timeout: Duration::from_secs(300),
                ..TestSettings::default()
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
    fn warn_must_stay_below_critical_after_merging() {
        let f = Sources::project("[context]\nwarn = 95\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: context.warn: must be below context.critical (90), got 95");
        let f = Sources::project("[context]\n\ncritical = 70\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: context.critical: must be above context.warn (80), got 70");
        // One file sets both: the error names `warn`.
        let f = Sources::project("[context]\ncritical = 85\nwarn = 85\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: context.warn: must be below context.critical (85), got 85");
        // The higher layer is blamed.
        let f = Sources::new(
            Some("[context]\ncritical = 85\n"),
            Some("[tests]\ncommand = \"x\"\n[context]\nwarn = 88\n"),
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: context.warn: must be below context.critical (85), got 88");
        let f = Sources::new(Some("[context]\nwarn = 60\n"), None)
            .env(&[("CHECKPOINT_CONTEXT_CRITICAL", "55")]);
        insta::assert_snapshot!(f.error(), @"CHECKPOINT_CONTEXT_CRITICAL: must be above context.warn (60), got 55");
        // Each layer alone may be out of order as long as the merged result is not.
        let f = Sources::new(
            Some("[context]\ncritical = 97\n"),
            Some("[context]\nwarn = 95\n"),
        );
        assert_eq!(
            (f.policy().context.warn, f.policy().context.critical),
            (95, 97)
        );
    }

    #[test]
    fn explain_marks_unset_values() {
        let f = Sources::project("[tests]\ncommand = \"\"\n");
        let settings = f.settings();
        let command = &settings[0];
        assert_eq!(command.key, "tests.command");
        assert_eq!(command.value, None);
        assert_eq!(command.value_text(), "(no test command)");
        assert_eq!(
            command.origin,
            Origin::File {
                path: PathBuf::from(PROJECT_FILE),
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
        let none = Sources::new(None, None).settings();
        assert_eq!((&none[0].value, &none[0].origin), (&None, &Origin::Default));
    }

    #[test]
    fn explain_agrees_with_load() {
        let user = "[tests]\ncommand = \"make check\"\ntimeout = \"5m\"\n\
                    [checks]\ntypecheck = \"tsc\"\nlint = \"eslint .\"\nbuild = \"vite build\"\n\
                    custom = \"make verify\"\n\
                    [stop]\ncapture = true\n[git]\nbackend = \"cli\"\n\
                    [journal]\nretention_completed = \"45d\"\nmax_checkpoints = 12\n\
                    [context]\ncritical = 97\nwindow = 128000\n";
        let project = "[tests]\ncommand = \"make test\"\n[stop]\nmax_blocks = 0\n\
                       capture_interval = \"1500ms\"\n[journal]\nstale_threshold = \"90s\"\n\
                       [context]\nwarn = 95\n[resume]\nauto = false\n";
        let f = Sources::new(Some(user), Some(project)).env(&[
            ("CHECKPOINT_RESUME_MAX_RESTARTS", "8"),
            ("CHECKPOINT_AUTO_RESUME", "prompt"),
            ("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "prompt"),
            ("CHECKPOINT_JOURNAL_CHECKPOINT_INTERVAL", "2h"),
        ]);
        let loaded = f.policy();
        let settings = f.settings();
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
        let rewritten = Sources::project(&text).policy();
        assert_eq!(rewritten.tests, loaded.tests);
        assert_eq!(rewritten.checks, loaded.checks);
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
            let loaded = Sources::project(text).error();
            assert_eq!(checked, loaded, "{text:?}");
        }
    }

    #[test]
    fn line_of_finds_where_a_file_sets_a_key() {
        let path = Path::new("/repo/checkpoint.toml");
        let text = "# settings\n[context]\n\nwarn = 85\n[stop]\nmax_blocks = 4\n";
        assert_eq!(line_of(path, text, "context.warn"), Some(4));
        assert_eq!(line_of(path, text, "stop.max_blocks"), Some(6));
        assert_eq!(line_of(path, text, "context.critical"), None, "not set");
        assert_eq!(
            line_of(path, "[stop\n", "stop.max_blocks"),
            None,
            "no parse"
        );
    }

    /// A `CHECKPOINT_*` variable the project set (through the agent's own project configuration)
    /// supplies a project value, to approve like the file's; the user's own variables do not.
    #[test]
    fn a_variable_the_project_set_is_the_projects() {
        let f =
            Sources::project("[tests]\ncommand = \"make test\"\n[stop]\nmax_blocks = 5\n").env(&[
                ("CHECKPOINT_TESTS_COMMAND", "true"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "9"),
            ]);
        let project = Path::new(PROJECT_FILE);
        let users = f.effective().unwrap();
        assert_eq!(users.project_commands(project), []);
        assert_eq!(
            users.user_slots(),
            ["tests.command".to_owned(), "stop.max_blocks".to_owned()]
        );
        let marked =
            (f.effective().unwrap()).with_project_env(&["CHECKPOINT_TESTS_COMMAND".to_owned()]);
        assert_eq!(marked.user_slots(), ["stop.max_blocks".to_owned()]);
        assert_eq!(
            marked.project_commands(project),
            [ProjectCommand {
                slot: "tests.command".into(),
                text: "true".into(),
            }]
        );
        // Held back, the key does not fall to the project file's value (the project's too), but
        // to the user's, else to none (the built-in default).
        assert_eq!(
            marked.lower_values(project),
            [LowerValue {
                slot: "tests.command".into(),
                text: None,
            }]
        );
        let user = Sources::new(Some("[stop]\nmax_blocks = 4\n"), None)
            .env(&[("CHECKPOINT_STOP_MAX_BLOCKS", "0")])
            .effective()
            .unwrap()
            .with_project_env(&["CHECKPOINT_STOP_MAX_BLOCKS".to_owned()]);
        assert_eq!(
            user.lower_values(project),
            [LowerValue {
                slot: "stop.max_blocks".into(),
                text: Some("4".into()),
            }]
        );
    }
}
