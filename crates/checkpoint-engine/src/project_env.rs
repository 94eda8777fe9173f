//! Which `CHECKPOINT_*` variables of a hook's environment the repository set: an agent's own
//! project configuration (a committed settings file, a `.env`) puts variables into every hook
//! process, so a variable whose value one of the agent's project env sources
//! ([`AgentHome::project_env`]) sets is the project's, held back like `checkpoint.toml`'s until
//! the user approves it, not the user's.
//!
//! The sources are looked for in the hook's directory and each one above it up to the
//! repository's root (the first holding `.git`), each read bounded; nothing is read when the
//! environment holds no `CHECKPOINT_*` variable, the usual case.

use std::path::{Path, PathBuf};

use checkpoint_core::home::AgentHome;
use checkpoint_core::project_env::{EVERY_AGENT, ProjectEnvSource};

/// The largest project env file read.
const MAX_ENV_FILE_BYTES: u64 = 256 * 1024;
/// The most directories looked in, from the hook's up to the repository's root.
const MAX_DEPTH: usize = 64;

/// A `CHECKPOINT_*` variable of the hook's environment whose value the repository set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectVar {
    /// The variable.
    pub var: String,
    /// The file that sets it, relative to the repository's root.
    pub file: PathBuf,
}

/// The variables of `env` whose value one of `home`'s project env sources, or one of every
/// agent's ([`EVERY_AGENT`]), sets, looking in `cwd` and each directory above it up to the
/// repository's root; none outside a repository.
pub fn project_vars(home: &dyn AgentHome, env: &[(String, String)], cwd: &Path) -> Vec<ProjectVar> {
    if env.is_empty() {
        return Vec::new();
    }
    let sources: Vec<&ProjectEnvSource> = home.project_env().iter().chain(EVERY_AGENT).collect();
    let Some(dirs) = dirs_up_to_root(cwd) else {
        return Vec::new();
    };
    let root = dirs.last().cloned().unwrap_or_default();
    let texts: Vec<(&ProjectEnvSource, PathBuf, String)> = (dirs.iter())
        .flat_map(|dir| (sources.iter()).map(move |source| (*source, dir.join(source.path))))
        .filter_map(|(source, path)| {
            let bytes = crate::bounded::read_regular(&path, MAX_ENV_FILE_BYTES).ok()?;
            Some((source, path, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect();
    let mut found: Vec<ProjectVar> = Vec::new();
    // The value that counts is the last one set, as for the settings.
    for (var, value) in env.iter().rev() {
        if found.iter().any(|f| &f.var == var) {
            continue;
        }
        let setter = (texts.iter()).find(|(source, _, text)| source.sets(text, var, value));
        if let Some((_, path, _)) = setter {
            found.push(ProjectVar {
                var: var.clone(),
                file: path.strip_prefix(&root).unwrap_or(path).to_owned(),
            });
        }
    }
    found.reverse();
    found
}

/// `cwd` and each directory above it, up to the first that holds `.git` (the repository's root,
/// last); `None` when none does within [`MAX_DEPTH`].
fn dirs_up_to_root(cwd: &Path) -> Option<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors().take(MAX_DEPTH) {
        dirs.push(dir.to_owned());
        if dir.join(".git").symlink_metadata().is_ok() {
            return Some(dirs);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fs;

    use checkpoint_core::home::Manual;
    use checkpoint_core::project_env::EnvFormat;

    use super::*;

    /// A home whose only difference from [`Manual`] is its project env sources.
    struct Sourced;

    static SOURCES: &[ProjectEnvSource] = &[
        ProjectEnvSource {
            path: ".agent/settings.json",
            format: EnvFormat::JsonMember("env"),
        },
        ProjectEnvSource {
            path: ".env",
            format: EnvFormat::DotEnv,
        },
    ];

    impl AgentHome for Sourced {
        fn agent(&self) -> checkpoint_core::Agent {
            Manual.agent()
        }
        fn capabilities(&self) -> checkpoint_core::agent::Capabilities {
            Manual.capabilities()
        }
        fn event_kind(&self, wire_name: &str) -> checkpoint_core::EventKind {
            Manual.event_kind(wire_name)
        }
        fn claims(&self, _payload: &serde_json::Value) -> bool {
            false
        }
        fn transcript(&self) -> Option<&dyn checkpoint_core::agent::TranscriptFormat> {
            None
        }
        fn no_op(&self) -> &'static str {
            ""
        }
        fn render(
            &self,
            _event: &checkpoint_core::HookEvent,
            _answer: &checkpoint_core::answer::HookAnswer,
        ) -> Option<serde_json::Value> {
            None
        }
        fn install(&self) -> Option<&checkpoint_core::agent::InstallSpec> {
            None
        }
        fn project_env(&self) -> &'static [ProjectEnvSource] {
            SOURCES
        }
    }

    fn env(vars: &[(&str, &str)]) -> Vec<(String, String)> {
        (vars.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_variable_is_the_projects_when_a_source_sets_its_value() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join(".agent")).unwrap();
        fs::create_dir_all(root.join("sub/deeper")).unwrap();
        fs::write(
            root.join(".agent/settings.json"),
            r#"{"env": {"CHECKPOINT_TESTS_COMMAND": "true"}}"#,
        )
        .unwrap();
        fs::write(root.join("sub/.env"), "CHECKPOINT_STOP_MAX_BLOCKS=0\n").unwrap();
        let vars = env(&[
            ("CHECKPOINT_TESTS_COMMAND", "true"),
            ("CHECKPOINT_STOP_MAX_BLOCKS", "0"),
            ("CHECKPOINT_STOP_COMMIT_GATE", "false"),
        ]);
        let found = project_vars(&Sourced, &vars, &root.join("sub/deeper"));
        assert_eq!(
            found,
            [
                ProjectVar {
                    var: "CHECKPOINT_TESTS_COMMAND".into(),
                    file: ".agent/settings.json".into(),
                },
                ProjectVar {
                    var: "CHECKPOINT_STOP_MAX_BLOCKS".into(),
                    file: "sub/.env".into(),
                },
            ]
        );
        // The user's own value (another one) is the user's; a directory outside the hook's path
        // is not looked in; no sources, no repository or no variable: nothing.
        let users = env(&[("CHECKPOINT_TESTS_COMMAND", "pytest -q")]);
        assert_eq!(project_vars(&Sourced, &users, root), []);
        assert_eq!(project_vars(&Sourced, &vars, root).len(), 1);
        assert_eq!(project_vars(&Manual, &vars, root), []);
        assert_eq!(project_vars(&Sourced, &[], root), []);
        // direnv's `.envrc` is every agent's source.
        fs::write(
            root.join(".envrc"),
            "export CHECKPOINT_STOP_COMMIT_GATE=false\n",
        )
        .unwrap();
        let envrc = ProjectVar {
            var: "CHECKPOINT_STOP_COMMIT_GATE".into(),
            file: ".envrc".into(),
        };
        assert_eq!(project_vars(&Manual, &vars, root), [envrc]);
        fs::remove_dir(root.join(".git")).unwrap();
        assert_eq!(project_vars(&Sourced, &vars, &root.join("sub")), []);
    }

    /// A state directory the project set is not used: state stays where the user keeps it.
    #[test]
    fn a_state_directory_the_project_set_is_not_the_users() {
        let host = |project_env: Vec<ProjectVar>| crate::host::Host {
            user_config: None,
            env: env(&[("CHECKPOINT_STATE_DIR", "/tmp/elsewhere")]),
            project_env,
            now: jiff::Timestamp::UNIX_EPOCH,
            turn_began: None,
        };
        let default = || PathBuf::from("/repo/.git/checkpoint");
        let users = host(Vec::new()).state_dir_or(default).unwrap();
        assert_eq!(users, Path::new("/tmp/elsewhere"));
        let set = ProjectVar {
            var: "CHECKPOINT_STATE_DIR".into(),
            file: ".env".into(),
        };
        let projects = host(vec![set]).state_dir_or(default).unwrap();
        assert_eq!(projects, default());
    }
}
