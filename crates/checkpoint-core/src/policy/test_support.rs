//! What the policy's tests share: the texts of a user file and a project file and some
//! `CHECKPOINT_*` variables, merged the way the engine merges what it reads (the user file, then
//! the project file, then the variables), with nothing detected.

use std::path::Path;

use super::Policy;
use super::config::{ConfigError, ConfigFile, Effective, Setting};

/// Where the user file is said to be, in errors and origins.
pub(crate) const USER_FILE: &str = "/repo/user.toml";

/// Where the project file is said to be, in errors and origins.
pub(crate) const PROJECT_FILE: &str = "/repo/checkpoint.toml";

/// The texts of a user file and a project file (each when given), plus variables.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    user: Option<String>,
    project: Option<String>,
    env: Vec<(String, String)>,
}

impl Sources {
    /// A user file at [`USER_FILE`] holding `user` and a project file at [`PROJECT_FILE`]
    /// holding `project`, each when given.
    pub(crate) fn new(user: Option<&str>, project: Option<&str>) -> Sources {
        Sources {
            user: user.map(str::to_owned),
            project: project.map(str::to_owned),
            env: Vec::new(),
        }
    }

    /// Only a project file, holding `text`.
    pub(crate) fn project(text: &str) -> Sources {
        Sources::new(None, Some(text))
    }

    /// Adds the variables `vars`, in order (a later duplicate wins).
    pub(crate) fn env(mut self, vars: &[(&str, &str)]) -> Sources {
        self.env
            .extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Parses the files (the user file first) and merges them with the variables.
    pub(crate) fn effective(&self) -> Result<Effective, ConfigError> {
        let mut files = Vec::new();
        for (path, text) in [(USER_FILE, &self.user), (PROJECT_FILE, &self.project)] {
            if let Some(text) = text {
                files.push(ConfigFile::parse(Path::new(path), text.clone())?);
            }
        }
        Effective::merge(files, &self.env, |_| None)
    }

    /// The policy, or why there is none.
    pub(crate) fn load(&self) -> Result<Policy, ConfigError> {
        self.effective().map(Effective::into_policy)
    }

    /// The policy; panics on an error.
    pub(crate) fn policy(&self) -> Policy {
        self.load().unwrap()
    }

    /// The error message; panics when the sources are fine.
    pub(crate) fn error(&self) -> String {
        self.load().unwrap_err().to_string()
    }

    /// What `explain` lists; panics on an error.
    pub(crate) fn settings(&self) -> Vec<Setting> {
        self.effective().unwrap().settings()
    }
}
