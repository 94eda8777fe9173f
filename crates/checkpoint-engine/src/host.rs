//! What one process knows before it looks at any project: where the user's configuration lives,
//! the `CHECKPOINT_*` environment and the time. Built once per process ([`Host::from_process`];
//! tests build one by hand). A project is opened from it: [`Host::open`] and its siblings live
//! next to [`Project`](crate::project::Project) in `project.rs`, so that this module depends on
//! nothing above it.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::config::{self, ConfigSources};
use crate::git::{self, GitError, Repo};
use crate::project_env::{ProjectVar, project_vars};
use checkpoint_core::home::AgentHome;

/// Environment variable that moves all state out of the repository's git directory.
pub const STATE_DIR_VAR: &str = "CHECKPOINT_STATE_DIR";

/// `CHECKPOINT_STATE_DIR` is set to something other than an absolute path (empty, relative): state
/// would land in whatever directory the hook runs in, the worktree included.
#[derive(Debug, thiserror::Error)]
#[error("{STATE_DIR_VAR} must be an absolute path, not {0:?}")]
pub struct StateDirError(pub String);

/// The process's configuration sources and clock.
#[derive(Debug, Clone)]
pub struct Host {
    /// The user-level config file, if a config directory is known (the signing keys live
    /// beside it).
    pub user_config: Option<PathBuf>,
    /// `CHECKPOINT_*` variables (name, value), in order; a later duplicate wins.
    pub env: Vec<(String, String)>,
    /// Those of [`Host::env`] whose value the agent's own project configuration set: the
    /// project's values, not the user's (see [`Host::with_project_env`]).
    pub project_env: Vec<ProjectVar>,
    /// The time of the call.
    pub now: Timestamp,
    /// When the agent's turn being judged began (see [`crate::session::SessionRecord`]):
    /// approvals and acceptances recorded after it apply from the next turn (see
    /// [`crate::trust`]). `None` outside a turn (a person's command), and for a turn whose
    /// start was not recorded.
    pub turn_began: Option<Timestamp>,
}

impl Host {
    /// The host of this process: its environment, its user config directory, the current time.
    pub fn from_process() -> Host {
        let sources = ConfigSources::from_process(Path::new("."));
        Host {
            user_config: sources.user_file,
            env: sources.env,
            project_env: Vec::new(),
            now: Timestamp::now(),
            turn_began: None,
        }
    }

    /// The same host for a hook of the agent whose home is `home`, called in `cwd`: the variables
    /// of its environment that the agent's project configuration set there are the project's
    /// (see [`crate::project_env`]).
    pub fn with_project_env(mut self, home: &dyn AgentHome, cwd: &Path) -> Host {
        self.project_env = project_vars(home, &self.env, cwd);
        self
    }

    /// The value of a `CHECKPOINT_*` variable (the last one set wins); `None` for one the
    /// project set ([`Host::project_env`]), which is not the user's to move state with.
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        if self.project_env.iter().any(|p| p.var == name) {
            return None;
        }
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The repository around `cwd`: `Ok(None)` outside git. Loads no configuration.
    pub fn locate(&self, cwd: &Path) -> Result<Option<Repo>, GitError> {
        git::discover(cwd)
    }

    /// The directory holding `repo`'s checkpoint state: `CHECKPOINT_STATE_DIR`, else
    /// `<git dir>/checkpoint`. Cheap: hooks on the hot path read it before loading any settings.
    pub fn state_dir(&self, repo: &Repo) -> Result<PathBuf, StateDirError> {
        self.state_dir_or(|| repo.git_dir.join("checkpoint"))
    }

    /// `CHECKPOINT_STATE_DIR` when it is set (it must be absolute), else `default()`.
    pub(crate) fn state_dir_or(
        &self,
        default: impl FnOnce() -> PathBuf,
    ) -> Result<PathBuf, StateDirError> {
        match self.var(STATE_DIR_VAR) {
            None => Ok(default()),
            Some(dir) if Path::new(dir).is_absolute() => Ok(PathBuf::from(dir)),
            Some(dir) => Err(StateDirError(dir.to_owned())),
        }
    }

    /// Where configuration comes from for a project rooted at `root`.
    pub fn sources(&self, root: &Path) -> ConfigSources {
        ConfigSources {
            user_file: self.user_config.clone(),
            project_file: root.join(config::PROJECT_FILE),
            env: self.env.clone(),
        }
    }
}
