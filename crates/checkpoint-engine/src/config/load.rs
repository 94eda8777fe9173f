//! The I/O half of the configuration: where the files are, reading them and this process's
//! `CHECKPOINT_*` variables, and detecting the test command in the project.

use std::io;
use std::path::{Path, PathBuf};

use checkpoint_core::policy::Policy;
use checkpoint_core::policy::config::{ConfigError, ConfigFile, Effective, Setting};

use super::detect::detect_key;

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
    let project = read(&sources.project_file)?;
    merged(sources, project_root, project)
}

/// [`effective`] with `project` as the project file's text (`None`: no project file) instead of
/// what the file holds now: the configuration the user approved (see `crate::trust`).
pub fn effective_with(
    sources: &ConfigSources,
    project_root: &Path,
    project: Option<&str>,
) -> Result<Effective, ConfigError> {
    let path = &sources.project_file;
    let project = (project.map(|text| ConfigFile::parse(path, text.to_owned()))).transpose()?;
    merged(sources, project_root, project)
}

/// The text of the project file at `path` (read as [`effective`] reads it); `None` when there is
/// no such file.
pub fn read_project(path: &Path) -> io::Result<Option<String>> {
    match crate::bounded::read_regular_text(path, crate::bounded::MAX_CONFIG_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// The user file of `sources` (when it exists) and `project`, merged with its variables.
fn merged(
    sources: &ConfigSources,
    project_root: &Path,
    project: Option<ConfigFile>,
) -> Result<Effective, ConfigError> {
    let mut files = Vec::new();
    if let Some(user) = &sources.user_file {
        files.extend(read(user)?);
    }
    files.extend(project);
    Effective::merge(files, &sources.env, |key| detect_key(project_root, key))
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
    match read_project(path) {
        Ok(text) => text.map(|text| ConfigFile::parse(path, text)).transpose(),
        Err(error) => Err(ConfigError::Read {
            path: path.to_owned(),
            error,
        }),
    }
}

/// What this module does itself: finding and reading the files, this process's variables,
/// detecting the test command, and the user file, the project file and the variables together.
/// Parsing, checking and merging texts are tested beside their code in `checkpoint-core`'s
/// `policy` modules.
#[cfg(test)]
mod tests {
    use std::fs;

    use tempfile::TempDir;

    use super::*;

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

        fn sources(&self) -> ConfigSources {
            let root = self.dir.path();
            ConfigSources {
                user_file: Some(root.join("user.toml")),
                project_file: root.join(PROJECT_FILE),
                env: self.env.clone(),
            }
        }

        fn policy(&self) -> Policy {
            load(&self.sources(), self.dir.path()).unwrap()
        }

        /// The error message, with the temporary directory shown as [`ROOT`].
        fn error(&self) -> String {
            let err = load(&self.sources(), self.dir.path()).unwrap_err();
            err.to_string()
                .replace(self.dir.path().to_str().unwrap(), ROOT)
        }

        /// `key = value  # origin` per setting [`explain`] lists, with the temporary directory
        /// shown as [`ROOT`].
        fn explained_text(&self) -> String {
            explain(&self.sources(), self.dir.path())
                .unwrap()
                .iter()
                .map(|s| format!("{} = {}  # {}\n", s.key, s.value_text(), s.origin))
                .collect::<String>()
                .replace(self.dir.path().to_str().unwrap(), ROOT)
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

    /// End to end: both files, the variables and detection, each key named where it was set.
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
        insta::assert_snapshot!(f.explained_text(), @r#"
        tests.command = "cargo test"  # detected
        tests.timeout = "90s"  # /repo/checkpoint.toml:3
        tests.select = "affected"  # default
        tests.full_before_commit = false  # default
        tests.prewarm = false  # default
        tests.class = "full"  # default
        checks.typecheck = (none)  # default
        checks.lint = (none)  # default
        checks.build = (none)  # default
        checks.custom = (none)  # default
        checks.timeout = "2m"  # default
        checks.typecheck_class = "fast"  # default
        checks.lint_class = "fast"  # default
        checks.build_class = "full"  # default
        checks.custom_class = "full"  # default
        stop.commit_gate = true  # default
        stop.max_blocks = 7  # /repo/checkpoint.toml:6
        stop.capture = false  # default
        stop.capture_interval = "90m"  # /repo/checkpoint.toml:7
        stop.profile = "every"  # default
        stop.claims = ["done", "finished", "complete", "completed", "implemented", "fixed", "resolved", "tests pass", "tests passed", "tests are passing", "ready for review"]  # default
        git.backend = "auto"  # default
        journal.retention_completed = "30d"  # default
        journal.retention_failed = "7d"  # default
        journal.retention_abandoned = "7d"  # default
        journal.retention_sessions = "30d"  # default
        journal.max_sessions = 1000  # default
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
