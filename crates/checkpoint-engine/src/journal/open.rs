//! Opening a journal: its parts, the settings in force, and where its files are.

use std::path::{Path, PathBuf};

use super::{Journal, JournalError, KeyManager, active_path};
use crate::git::Repo;
use crate::store;
use checkpoint_core::policy::{JournalSettings, Policy};

impl Journal {
    /// A journal from its parts.
    pub fn new(
        state_dir: PathBuf,
        workdir: PathBuf,
        repo: Option<Repo>,
        policy: Policy,
        keys: Option<Box<dyn KeyManager>>,
    ) -> Journal {
        Journal {
            state_dir,
            workdir,
            repo,
            policy,
            keys,
        }
    }

    /// The `[journal]` settings in force.
    pub fn settings(&self) -> &JournalSettings {
        &self.policy.journal
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The working tree the journal's checkpoints and validations look at.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub(super) fn tasks_dir(&self) -> PathBuf {
        self.state_dir.join("tasks")
    }

    /// The directory of task `id` (the id is validated).
    pub fn task_dir(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.tasks_dir().join(store::validate_id(id)?))
    }

    /// `hook.json` of task `id`.
    pub fn hook_json(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.task_dir(id)?.join("hook.json"))
    }

    /// `hook.md` of task `id`.
    pub fn hook_md(&self, id: &str) -> Result<PathBuf, JournalError> {
        Ok(self.task_dir(id)?.join("hook.md"))
    }

    pub(super) fn active_path(&self) -> PathBuf {
        active_path(&self.state_dir)
    }
}
