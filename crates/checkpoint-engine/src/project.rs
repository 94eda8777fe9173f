//! One project, opened once per call from a [`Host`]: its repository, state directory, effective
//! settings and keys. The journal, the continuity log, the session store and the test cache are
//! all reached through it; nothing else discovers a repository or loads configuration.
//!
//! [`saving`] holds what a project does with its session continuity (save a checkpoint, log
//! progress, build the restart context): the gate, the CLI and the MCP server all call it.

pub mod cleanup;
pub mod integrity;
mod proof;
pub mod restoring;
pub mod saving;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cache::{self, DigestMemo, TestCache};
use crate::config::{self, ConfigSources};
use crate::continuity::Continuity;
use crate::continuity::restore::RestoreError;
use crate::git::{self, GitError, Repo};
use crate::host::{Host, StateDirError};
use crate::journal::{FileKeyManager, Journal, JournalError, KeyManager};
use crate::own_files::OwnFiles;
use crate::select;
use crate::session::SessionStore;
use crate::store::StoreError;
use crate::travel::TravelError;
use crate::travel::fetch::{self, FetchOutcome};
use crate::travel::push::{self, PushReport};
use crate::trust::{Approval, Trust, TrustStore};
use checkpoint_core::changes::{ChangeSet, RepoFacts};
use checkpoint_core::decide::PlannedTest;
use checkpoint_core::outcome::Selection;
use checkpoint_core::policy::config::{ConfigError, LowerValue, ProjectCommand, Setting};
use checkpoint_core::policy::{Policy, TestSelect};

/// Why a project could not be opened or an operation on it failed. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectError {
    /// The event's working directory does not exist.
    #[error("working directory {} does not exist", .0.display())]
    MissingCwd(PathBuf),
    /// The configuration is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The repository could not be found or read.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The task journal could not be read or updated.
    #[error("journal: {0}")]
    Journal(#[from] JournalError),
    /// `CHECKPOINT_STATE_DIR` is not an absolute path.
    #[error(transparent)]
    StateDir(#[from] StateDirError),
    /// The session state could not be read or written.
    #[error("state: {0}")]
    State(#[from] StoreError),
    /// The operation needs a git repository and there is none.
    #[error("{} is not inside a git repository", .0.display())]
    NoRepository(PathBuf),
    /// A progress entry without text.
    #[error("a progress entry needs some text")]
    EmptyProgress,
    /// There is no user config directory to keep approvals in.
    #[error("no user config directory to keep the approval in")]
    NoConfigDir,
    /// Git could not read the repository's changes.
    #[error("the repository could not be read: {0}")]
    RepoUnreadable(String),
    /// The worktree could not be compared with the last checkpoint.
    #[error("comparing with the last checkpoint: {0}")]
    Diff(String),
    /// There is no checkpoint to restore; the message says which was asked for.
    #[error("{0}")]
    NoCheckpoint(String),
    /// A restore was refused (nothing changed) or failed.
    #[error(transparent)]
    Restore(#[from] RestoreError),
    /// Checkpoint refs could not be pushed or listed.
    #[error(transparent)]
    Travel(#[from] TravelError),
}

/// An opened project.
#[derive(Debug, Clone)]
pub struct Project {
    /// The git repository; `None` for a plain directory (the journal works without git).
    pub repo: Option<Repo>,
    /// The working tree (the repository's, or the directory itself).
    pub workdir: PathBuf,
    /// Where checkpoint keeps this project's state.
    pub state_dir: PathBuf,
    /// The effective settings, with the project's commands whether approved or not (the gate
    /// acts on [`Project::approved_policy`]).
    pub policy: Policy,
    /// What the project supplies that the user approves before the gate runs it (see
    /// [`crate::trust`]).
    pub commands: Vec<ProjectCommand>,
    /// What the layers under the project file give for the guarded settings it sets: the values
    /// the gate uses while the project's are not approved and none were before.
    pub lower: Vec<LowerValue>,
    /// The host the project was opened from (configuration sources, clock).
    pub host: Host,
}

/// What fingerprints a project's change set: its worktree and the digest memo (see
/// [`Project::read_changes`]).
#[derive(Debug)]
pub struct Fingerprints {
    workdir: PathBuf,
    memo: DigestMemo,
}

impl Fingerprints {
    /// The [`cache::change_fingerprint`] of `changes`.
    pub fn fingerprint(&mut self, changes: &ChangeSet) -> String {
        cache::change_fingerprint(&self.workdir, changes, &mut self.memo)
    }

    /// The [`cache::change_digests`] of `changes`.
    pub fn digests(&mut self, changes: &ChangeSet) -> BTreeMap<String, String> {
        cache::change_digests(&self.workdir, changes, &mut self.memo)
    }

    /// Keeps the memo for the next read. Only a speed-up: a memo that cannot be kept means the
    /// next stop reads the files.
    pub fn keep(self) {
        let _ = self.memo.save();
    }
}

impl Project {
    /// The repository, or [`ProjectError::NoRepository`].
    pub fn git(&self) -> Result<&Repo, ProjectError> {
        self.repo
            .as_ref()
            .ok_or_else(|| ProjectError::NoRepository(self.workdir.clone()))
    }

    /// The signing keys, next to the user config file.
    pub fn keys(&self) -> Option<FileKeyManager> {
        FileKeyManager::beside_user_config(self.host.user_config.as_deref())
    }

    /// The task journal.
    pub fn journal(&self) -> Journal {
        Journal::new(
            self.state_dir.clone(),
            self.workdir.clone(),
            self.repo.clone(),
            self.policy.clone(),
            self.keys().map(|k| Box::new(k) as Box<dyn KeyManager>),
        )
    }

    /// Fetches the checkpoint refs from the remote to use (the current branch's upstream
    /// remote, else `origin`, else the only one) within `[travel] fetch_budget`: what a command
    /// calls when what it needs is not here, before it reads again. Never fails (see
    /// [`fetch::fetch`]); [`FetchOutcome::NoRemote`] outside git or without a remote.
    pub fn fetch_checkpoints(&self) -> FetchOutcome {
        match &self.repo {
            Some(repo) => fetch::fetch_default(repo, self.policy.travel.fetch_budget),
            None => FetchOutcome::NoRemote,
        }
    }

    /// Pushes the checkpoint refs to `remote` within `[travel] push_budget`, queueing in the
    /// state directory what did not make it (see [`push::push`]).
    pub fn push_checkpoints(&self, remote: &str) -> Result<PushReport, ProjectError> {
        let repo = self.git()?;
        Ok(push::push(
            repo,
            &self.state_dir,
            remote,
            self.policy.travel.push_budget,
        )?)
    }

    /// The session continuity log.
    pub fn continuity(&self) -> Continuity {
        Continuity::new(&self.state_dir).in_repo(self.repo.clone())
    }

    /// The stop gate's per-session memory.
    pub fn sessions(&self) -> SessionStore {
        SessionStore::new(&self.state_dir)
    }

    /// The ledger of the files checkpoint wrote into this project (see [`OwnFiles`]).
    pub fn own_files(&self) -> OwnFiles {
        OwnFiles::in_dir(&self.state_dir)
    }

    /// The cache of test outcomes.
    pub fn test_cache(&self) -> TestCache {
        TestCache::new(&self.state_dir)
    }

    /// The worktree's changes as the gate judges them (the files checkpoint wrote left out, see
    /// [`OwnFiles`]), and what fingerprints them. While `git status` runs, the digest memo is
    /// loaded and the files it remembers are `lstat`ed (see [`DigestMemo::prestat`]): a small
    /// memo between looks at git's output, a large one on a thread of its own started before
    /// git (spawning git waits for git's exec, the stats need not). So a large change set costs
    /// little more than git does.
    pub fn read_changes(&self) -> Result<(RepoFacts, Fingerprints), ProjectError> {
        let repo = self.git()?;
        let backend = self.policy.git.backend;
        let load = || DigestMemo::load(&self.state_dir, self.host.now);
        let (facts, memo) = if DigestMemo::is_large(&self.state_dir) {
            let listed = AtomicBool::new(false);
            std::thread::scope(|scope| {
                let prestat = || {
                    let mut memo = load();
                    memo.prestat(&repo.workdir, || listed.load(Ordering::Relaxed));
                    memo
                };
                let stating = std::thread::Builder::new().spawn_scoped(scope, prestat);
                let facts = git::start(repo, backend).facts();
                listed.store(true, Ordering::Relaxed);
                // Without a thread, or when it failed, the lookups `lstat` every file themselves.
                let memo =
                    (stating.ok().and_then(|thread| thread.join().ok())).unwrap_or_else(load);
                (facts, memo)
            })
        } else {
            let mut status = git::start(repo, backend);
            let mut memo = load();
            memo.prestat(&repo.workdir, || status.done());
            (status.facts(), memo)
        };
        let facts = match facts {
            RepoFacts::Changes(changes) => {
                RepoFacts::Changes(self.own_files().without_ours(&repo.workdir, changes))
            }
            other => other,
        };
        let fingerprints = Fingerprints {
            workdir: repo.workdir.clone(),
            memo,
        };
        Ok((facts, fingerprints))
    }

    /// What the planned test command runs for `changes`: narrowed to the tests the files that
    /// asked for it can affect, where `[tests] select` allows it and the command is recognised
    /// (see [`crate::select`]); `None` runs it as configured.
    pub fn selection(&self, planned: &PlannedTest, changes: &ChangeSet) -> Option<Selection> {
        if self.policy.tests.select == TestSelect::All || changes.non_utf8_paths > 0 {
            return None;
        }
        let asked: Vec<&str> = (planned.files.iter())
            .filter_map(|&at| changes.changes.get(at))
            .map(|change| change.path.as_str())
            .collect();
        select::select(
            &planned.command,
            &asked,
            &self.workdir,
            Some(&self.state_dir),
        )
    }

    /// Every setting with its effective value and where it came from.
    pub fn explain(&self) -> Result<Vec<Setting>, ProjectError> {
        let sources = self.host.sources(&self.workdir);
        Ok(config::explain(&sources, &self.workdir)?)
    }

    /// The project's own config file, `<root>/checkpoint.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.workdir.join(config::PROJECT_FILE)
    }

    /// The user's approvals of projects' commands, beside the user config file.
    pub fn trust_store(&self) -> Option<TrustStore> {
        TrustStore::beside_user_config(self.host.user_config.as_deref())
    }

    /// What the user approved for this project (see [`crate::trust`]): one read of one small
    /// file. A linked worktree with no approval of its own has its main worktree's: the same
    /// repository, whose commands the approval names exactly (a worktree that changed them
    /// runs the approved ones). `None` when nothing was, or without a config directory.
    pub fn approval(&self) -> Result<Option<Approval>, ProjectError> {
        let Some(store) = self.trust_store() else {
            return Ok(None);
        };
        if let Some(approval) = store.approval(&self.workdir)? {
            return Ok(Some(approval));
        }
        let main = self.repo.as_ref().and_then(Repo::main_workdir);
        match main {
            Some(main) => Ok(store.approval(&main)?),
            None => Ok(None),
        }
    }

    /// The policy the gate acts on under `approval`, which runs only approved commands and
    /// applies only approved values of the guarded settings, and what the user is told about it
    /// (`None` when everything is approved).
    pub fn approved_policy(&self, approval: Option<&Approval>) -> (Policy, Option<String>) {
        let trust = Trust::check(&self.commands, approval);
        let mut policy = self.policy.clone();
        let held = trust.restrict(&mut policy, approval, &self.lower);
        (policy, trust.notice(&self.workdir, &held))
    }

    /// Approves the project's current commands (`checkpoint trust`, `checkpoint install`).
    /// Errors without a config directory.
    pub fn approve(&self) -> Result<(), ProjectError> {
        let store = self.trust_store().ok_or(ProjectError::NoConfigDir)?;
        Ok(store.approve(&self.workdir, &self.commands, self.host.now)?)
    }
}

/// A project's settings as [`Host::settings`] loads them.
type Settings = (Policy, Vec<ProjectCommand>, Vec<LowerValue>);

/// Opening a project: the only place settings are loaded.
impl Host {
    /// The project of `repo`, with its settings loaded.
    pub fn project(&self, repo: Repo) -> Result<Project, ProjectError> {
        let (policy, commands, lower) = self.settings(&repo.workdir)?;
        Ok(Project {
            state_dir: self.state_dir(&repo)?,
            workdir: repo.workdir.clone(),
            repo: Some(repo),
            policy,
            commands,
            lower,
            host: self.clone(),
        })
    }

    /// The settings of the project at `root`, what of them the project supplies, and what the
    /// layers under its file give for the guarded settings it sets.
    fn settings(&self, root: &Path) -> Result<Settings, ProjectError> {
        let sources: ConfigSources = self.sources(root);
        let effective = config::effective(&sources, root)?;
        let commands = effective.project_commands(&sources.project_file);
        let lower = effective.lower_values(&sources.project_file);
        Ok((effective.into_policy(), commands, lower))
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
        let (policy, commands, lower) = self.settings(cwd)?;
        Ok(Project {
            state_dir: self.state_dir_or(|| cwd.join(".checkpoint"))?,
            workdir: cwd.to_owned(),
            repo: None,
            policy,
            commands,
            lower,
            host: self.clone(),
        })
    }
}
