//! The I/O half of the configuration: where the files are, reading them and this process's
//! `CHECKPOINT_*` variables, and detecting the test command in the project.

use std::io;
use std::path::{Path, PathBuf};

use checkpoint_core::policy::Policy;
use checkpoint_core::policy::config::{ConfigError, ConfigFile, Effective, Setting};

use super::detect::detect_test_command;

/// The project file's name, at the project root.
pub const PROJECT_FILE: &str = "checkpoint.toml";

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

/// Reads the files of `sources` that exist and merges them with its variables, detecting the
/// test command in `project_root` when no layer sets one.
pub fn effective(sources: &ConfigSources, project_root: &Path) -> Result<Effective, ConfigError> {
    let mut files = Vec::new();
    if let Some(user) = &sources.user_file {
        files.extend(read(user)?);
    }
    files.extend(read(&sources.project_file)?);
    Effective::merge(files, &sources.env, || detect_test_command(project_root))
}

/// Loads the policy from `sources`, detecting the test command in `project_root` when no layer
/// sets one.
pub fn load(sources: &ConfigSources, project_root: &Path) -> Result<Policy, ConfigError> {
    effective(sources, project_root).map(Effective::into_policy)
}

/// Every scalar key of every section (in the order of [`KEYS`](checkpoint_core::policy::config::KEYS)) with its
/// effective value and origin, then every configured `[[rule]]` (`rule.<name>`, user file
/// first). The values are those [`load`] returns, and the errors are its errors.
pub fn explain(sources: &ConfigSources, project_root: &Path) -> Result<Vec<Setting>, ConfigError> {
    effective(sources, project_root).map(|effective| effective.settings())
}

/// Reads and parses the configuration file `path`; `None` when there is no such file.
fn read(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    match crate::bounded::read_regular_text(path, crate::bounded::MAX_CONFIG_BYTES) {
        Ok(text) => ConfigFile::parse(path, text).map(Some),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ConfigError::Read {
            path: path.to_owned(),
            error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::fs;

    use tempfile::TempDir;

    use super::*;
    use checkpoint_core::policy::config::{KEYS, Origin, check_text, line_of};
    use checkpoint_core::policy::rules::{Rule, RuleTests};
    use checkpoint_core::policy::{
        ClearSettings, ContextSettings, GitBackend, GitSettings, JournalSettings, ResumeSettings,
        StopSettings, Switch, TestSettings,
    };

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
    fn resume_auto_has_a_canonical_variable_and_an_alias() {
        let explained_auto = |vars: &[(&str, &str)]| {
            let f = Fixture::new(None, None).env(vars);
            let auto = explained(&f).into_iter().find(|s| s.key == "resume.auto");
            auto.map(|s| (s.value_text(), s.origin)).unwrap()
        };
        let env = |var: &str| Origin::Env(var.to_owned());
        assert_eq!(
            explained_auto(&[("CHECKPOINT_RESUME_AUTO", "prompt")]),
            ("\"prompt\"".to_owned(), env("CHECKPOINT_RESUME_AUTO"))
        );
        assert_eq!(
            explained_auto(&[("CHECKPOINT_AUTO_RESUME", "no")]),
            ("false".to_owned(), env("CHECKPOINT_AUTO_RESUME"))
        );
        // When both are set, the canonical name wins, whatever their order.
        for vars in [
            [
                ("CHECKPOINT_RESUME_AUTO", "no"),
                ("CHECKPOINT_AUTO_RESUME", "prompt"),
            ],
            [
                ("CHECKPOINT_AUTO_RESUME", "prompt"),
                ("CHECKPOINT_RESUME_AUTO", "no"),
            ],
        ] {
            assert_eq!(
                explained_auto(&vars),
                ("false".to_owned(), env("CHECKPOINT_RESUME_AUTO"))
            );
        }
        let f = Fixture::new(None, None).env(&[("CHECKPOINT_RESUME_AUTO", "sometimes")]);
        insta::assert_snapshot!(f.error(), @r#"CHECKPOINT_RESUME_AUTO: expected true/false, 1/0, yes/no or prompt, got "sometimes""#);
    }

    #[test]
    fn files_and_variables_share_the_switch_words() {
        let auto = |value: &str| {
            Fixture::project(&format!("[resume]\nauto = {value:?}\n"))
                .policy()
                .resume
                .auto
        };
        assert_eq!(auto("yes"), Switch::On);
        assert_eq!(auto("0"), Switch::Off);
        assert_eq!(auto(" Prompt "), Switch::Prompt);
    }

    #[test]
    fn a_section_must_be_a_table() {
        let f = Fixture::project("stop = 3\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: stop: invalid type: integer `3`, expected a table");
        let f = Fixture::project("[[context]]\nwarn = 60\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: context: invalid type: sequence, expected a table");
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
        tests.select = "affected"  # default
        tests.full_before_commit = false  # default
        tests.prewarm = false  # default
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
        journal.key_derivation = "m/7466'/{task}'"  # default
        context.warn = 70  # /repo/user.toml:5
        context.critical = 90  # default
        context.window = 200000  # env CHECKPOINT_CONTEXT_WINDOW
        resume.auto = "prompt"  # /repo/checkpoint.toml:10
        resume.max_restarts = 3  # default
        clear.auto_checkpoint = false  # env CHECKPOINT_CLEAR_AUTO_CHECKPOINT
        integrity.mode = "block"  # default
        integrity.tests = []  # default
        integrity.protected = []  # default
        integrity.prove_failing = false  # default
        travel.push_budget = "3s"  # default
        travel.fetch_budget = "10s"  # default
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
            "make",
            "3s",
            "all",
            "yes",
            "yes",
            "no",
            "4",
            "yes",
            "4m",
            "gix",
            "1d",
            "2d",
            "3d",
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
                ..TestSettings::default()
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
                       stale_threshold = \"2s\"\ncheckpoint_interval = \"1m\"\n\
                       key_derivation = \"m/1'/{task}'/2'\"\n";
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
                key_derivation: "m/1'/{task}'/2'".parse().unwrap(),
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
        let f = Fixture::project("[journal]\nkey_derivation = \"m/7466/{task}'\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: journal.key_derivation: bad key derivation "m/7466/{task}'": segment "7466" is not hardened (end it with `'`)"#);
        insta::assert_snapshot!(error("CHECKPOINT_JOURNAL_KEY_DERIVATION", "m/1'"), @r#"CHECKPOINT_JOURNAL_KEY_DERIVATION: bad key derivation "m/1'": it needs exactly one `{task}'` segment"#);
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
        let f = Fixture::project("[tests]\ncomand = 'pytest -q'\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: tests.comand: unknown field `comand`, did you mean `tests.command`?");
        let f = Fixture::project("[stop]\ncapture = true\nmax_block = 3\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: stop.max_block: unknown field `max_block`, did you mean `stop.max_blocks`?");
        let f = Fixture::project("[tests]\ncommand = 'x'\n\n[contexts]\nwarn = 80\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: contexts: unknown field `contexts`, did you mean `context`?");
        let f = Fixture::project("[context]\nenabled = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: context.enabled: unknown field `enabled`, expected one of `warn`, `critical`, `window`");
        let f = Fixture::project("[resume]\nauto_resume = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: resume.auto_resume: unknown field `auto_resume`, did you mean `resume.auto`?");
        let f = Fixture::project("[clear]\nauto = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: clear.auto: unknown field `auto`, did you mean `clear.auto_checkpoint`?");
        let f = Fixture::project("[journal]\nstale = \"2s\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: journal.stale: unknown field `stale`, did you mean `journal.stale_threshold`?");
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
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: rule[0].test: unknown field `test`, did you mean `rule[0].tests`?");
        let f = Fixture::project(
            "[[rule]]\nname = \"a\"\ninclude = [\"a\"]\n\n[[rule]]\nname = \"b\"\nincludes = [\"b\"]\n",
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:7: rule[1].includes: unknown field `includes`, did you mean `rule[1].include`?");
        let f = Fixture::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\nwhen = 1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].when: unknown field `when`, expected one of `name`, `include`, `exclude`, `tests`, `action`, `gate`");
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
        let project = "[integrity]\nprotected = [\"golden/**\", \"a[\"]\n";
        insta::assert_snapshot!(Fixture::project(project).error(), @r#"/repo/checkpoint.toml:2: integrity.protected: bad glob "a[": unclosed character class; missing ']'"#);
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
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml: not a regular file");
    }

    /// A committed `checkpoint.toml` that is a link to `/dev/zero`, or far too big, is an error
    /// at once, never a read that does not end.
    #[test]
    fn endless_or_huge_file() {
        let f = Fixture::new(None, None);
        std::os::unix::fs::symlink("/dev/zero", f.dir.path().join(PROJECT_FILE)).unwrap();
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml: not a regular file");
        let f = Fixture::new(None, None);
        let file = fs::File::create(f.dir.path().join(PROJECT_FILE)).unwrap();
        file.set_len(crate::bounded::MAX_CONFIG_BYTES + 1).unwrap();
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml: larger than 1048576 bytes");
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
