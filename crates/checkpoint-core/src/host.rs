//! What one process knows before it looks at any project: where the user's configuration lives,
//! the `CHECKPOINT_*` environment and the time. Built once per process ([`Host::from_process`];
//! tests build one by hand) and the only way to open a [`Project`].

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::git::{self, GitError, Repo};
use crate::policy::config::{self, ConfigSources};
use crate::project::{Project, ProjectError};

/// Environment variable that moves all state out of the repository's git directory.
pub const STATE_DIR_VAR: &str = "CHECKPOINT_STATE_DIR";

/// The process's configuration sources and clock.
#[derive(Debug, Clone)]
pub struct Host {
    /// The user-level config file, if a config directory is known (the signing keys live
    /// beside it).
    pub user_config: Option<PathBuf>,
    /// `CHECKPOINT_*` variables (name, value), in order; a later duplicate wins.
    pub env: Vec<(String, String)>,
    /// The time of the call.
    pub now: Timestamp,
}

impl Host {
    /// The host of this process: its environment, its user config directory, the current time.
    pub fn from_process() -> Host {
        let sources = ConfigSources::from_process(Path::new("."));
        Host {
            user_config: sources.user_file,
            env: sources.env,
            now: Timestamp::now(),
        }
    }

    /// The value of a `CHECKPOINT_*` variable (the last one set wins).
    fn var(&self, name: &str) -> Option<&str> {
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
    pub fn state_dir(&self, repo: &Repo) -> PathBuf {
        self.var(STATE_DIR_VAR)
            .map_or_else(|| repo.git_dir.join("checkpoint"), PathBuf::from)
    }

    /// Where configuration comes from for a project rooted at `root`.
    pub fn sources(&self, root: &Path) -> ConfigSources {
        ConfigSources {
            user_file: self.user_config.clone(),
            project_file: root.join(config::PROJECT_FILE),
            env: self.env.clone(),
        }
    }

    /// The project of `repo`, with its settings loaded.
    pub fn project(&self, repo: Repo) -> Result<Project, ProjectError> {
        let policy = config::load(&self.sources(&repo.workdir), &repo.workdir)?;
        Ok(Project {
            state_dir: self.state_dir(&repo),
            workdir: repo.workdir.clone(),
            repo: Some(repo),
            policy,
            host: self.clone(),
        })
    }

    /// The git project around `cwd`; `Ok(None)` outside a git repository (or when git cannot
    /// read it).
    pub fn git_project(&self, cwd: &Path) -> Result<Option<Project>, ProjectError> {
        match self.locate(cwd) {
            Ok(Some(repo)) => self.project(repo).map(Some),
            Ok(None) | Err(_) => Ok(None),
        }
    }

    /// The git project around `cwd`, which must exist.
    pub fn require_git_project(&self, cwd: &Path) -> Result<Project, ProjectError> {
        match self.locate(cwd)? {
            Some(repo) => self.project(repo),
            None => Err(ProjectError::NoRepository(cwd.to_owned())),
        }
    }

    /// The project at `cwd`: its git repository, or outside git the directory itself, with
    /// state in `./.checkpoint/` (or `CHECKPOINT_STATE_DIR`) — the task journal works anywhere.
    pub fn open(&self, cwd: &Path) -> Result<Project, ProjectError> {
        if let Some(repo) = self.locate(cwd)? {
            return self.project(repo);
        }
        let policy = config::load(&self.sources(cwd), cwd)?;
        Ok(Project {
            state_dir: self
                .var(STATE_DIR_VAR)
                .map_or_else(|| cwd.join(".checkpoint"), PathBuf::from),
            workdir: cwd.to_owned(),
            repo: None,
            policy,
            host: self.clone(),
        })
    }
}
