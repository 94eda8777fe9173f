//! One project, opened once per call from a [`Host`]: its repository, state directory, effective
//! settings and keys. The journal, the continuity log, the session store and the test cache are
//! all reached through it; nothing else discovers a repository or loads configuration.
//!
//! [`saving`] holds what a project does with its session continuity (save a checkpoint, log
//! progress, build the restart context): the gate, the CLI and the MCP server all call it.

pub mod cleanup;
pub mod integrity;
mod old_tests;
mod proof;
pub mod restoring;
pub mod saving;
mod scratch;
mod test_inputs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jiff::Timestamp;

use crate::cache::{self, DigestMemo, TestCache};
use crate::config::{self, ConfigSources};
use crate::continuity::restore::RestoreError;
use crate::continuity::{Continuity, KeySource};
use crate::git::{self, GitError, Repo};
use crate::host::{Host, StateDirError};
use crate::journal::{FileKeyManager, Journal, JournalError, KeyManager};
use crate::own_files::OwnFiles;
use crate::select::{self, Narrowing, Whole};
use crate::session::SessionStore;
use crate::store::StoreError;
use crate::travel::TravelError;
use crate::travel::fetch::{self, FetchOutcome};
use crate::travel::push::{self, PushReport};
use crate::trust::definition::{self, Definition};
use crate::trust::{Approval, ApprovedConfig, InForce, Trust, TrustStore, identity};
use checkpoint_core::changes::{ChangeSet, RepoFacts};
use checkpoint_core::decide::PlannedTest;
use checkpoint_core::policy::config::{ConfigError, LowerValue, ProjectCommand, Setting};
use checkpoint_core::policy::{ChangedDefinition, GitBackend, Policy, TestSelect};
use checkpoint_core::render::{self, ConfigChange};

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
    /// The repository's identity could not be written (see [`identity`]).
    #[error("recording the repository's identity: {0}")]
    Identity(std::io::Error),
    /// A scratch worktree at a commit could not be made.
    #[error("a worktree at the base commit: {0}")]
    Scratch(String),
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
    /// The guarded keys the user's own `CHECKPOINT_*` variables set over the project (see
    /// [`Trust::check`]).
    pub user_slots: Vec<String>,
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

/// The changes of the worktree of `repo` as the gate judges them (see
/// [`Project::read_changes`]), read with `backend`, the digest memo kept in `state_dir`: what a
/// hook reads without loading the project's settings.
pub fn read_changes(
    repo: &Repo,
    state_dir: &Path,
    backend: GitBackend,
    now: Timestamp,
) -> (RepoFacts, Fingerprints) {
    let load = || DigestMemo::load(state_dir, now);
    let (facts, memo) = if DigestMemo::is_large(state_dir) {
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
            let memo = (stating.ok().and_then(|thread| thread.join().ok())).unwrap_or_else(load);
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
            RepoFacts::Changes(OwnFiles::in_dir(state_dir).without_ours(&repo.workdir, changes))
        }
        other => other,
    };
    let fingerprints = Fingerprints {
        workdir: repo.workdir.clone(),
        memo,
    };
    (facts, fingerprints)
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

    /// The session continuity log, its entries signed with this user's key (see
    /// [`crate::continuity::signed`]).
    pub fn continuity(&self) -> Continuity {
        Continuity::new(&self.state_dir)
            .in_repo(self.repo.clone())
            .signed_with(self.keys().map(|k| Arc::new(k) as Arc<dyn KeySource>))
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
        Ok(read_changes(repo, &self.state_dir, backend, self.host.now))
    }

    /// What the planned test command runs for `changes`: narrowed to the tests the files that
    /// asked for it can affect, where `[tests] select` allows it and the command is recognised
    /// (see [`crate::select`]); else the whole command, and why where that is worth telling.
    pub fn selection(&self, planned: &PlannedTest, changes: &ChangeSet) -> Narrowing {
        if self.policy.tests.select == TestSelect::All || changes.non_utf8_paths > 0 {
            return Err(Whole::unsaid());
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
        match self.trust_store() {
            Some(store) => Ok(approval_of(
                &store,
                &self.workdir,
                self.repo.as_ref(),
                self.host.turn_began,
            )?
            .approval),
            None => Ok(None),
        }
    }

    /// What differs between `approval` and the project as it is now, one line each (empty when
    /// the approval covers it exactly): its commands, its config file, what its test commands
    /// resolve to, its repository. An approval of an earlier version (see
    /// [`Approval::is_legacy`]) always differs.
    pub fn changes_since(&self, approval: &Approval) -> Result<Vec<String>, ProjectError> {
        let current = self.approval_now(approval.approved_at, None)?;
        let mut changes = Vec::new();
        if approval.is_legacy() {
            changes.push("the approval predates pinning the configuration and content".into());
        }
        if Trust::check(&self.commands, Some(approval), &self.user_slots) != Trust::Trusted {
            changes.push("the commands".to_owned());
        }
        if approval.config.is_some() && approval.config != current.config {
            changes.push(config::PROJECT_FILE.to_owned());
        }
        let recorded = approval.definitions.clone().unwrap_or_default();
        for (command, now) in current.definitions.iter().flatten() {
            let changed = match recorded.get(command) {
                Some(then) => definition::changed(then, now),
                None => continue,
            };
            if !changed.is_empty() {
                changes.push(format!("what `{command}` runs: {}", changed.join(", ")));
            }
        }
        if self.repo.is_some()
            && approval.identity.is_some()
            && approval.identity != current.identity
        {
            changes.push("the repository at this path".to_owned());
        }
        Ok(changes)
    }

    /// The approval of the project as it is now; `identity` when it is known, else read.
    fn approval_now(
        &self,
        now: Timestamp,
        identity: Option<String>,
    ) -> Result<Approval, ProjectError> {
        let text = config::read_project(&self.config_file()).map_err(|error| {
            ProjectError::Config(ConfigError::Read {
                path: self.config_file(),
                error,
            })
        })?;
        let definitions = (self.policy.test_commands().into_iter())
            .map(|command| {
                let resolved = definition::resolve(&command, &self.workdir);
                (command, resolved)
            })
            .collect();
        Ok(Approval {
            approved_at: now,
            commands: self.commands.clone(),
            config: Some(ApprovedConfig { text }),
            definitions: Some(definitions),
            identity: identity.or_else(|| self.repo.as_ref().and_then(identity::read)),
            previous: Vec::new(),
        })
    }

    /// The policy the gate acts on under `approval`, which runs only approved commands and
    /// applies only approved values of the guarded settings, and what the user is told about it
    /// (`None` when everything is approved).
    pub fn approved_policy(&self, approval: Option<&Approval>) -> (Policy, Option<String>) {
        let trust = Trust::check(&self.commands, approval, &self.user_slots);
        let mut policy = self.policy.clone();
        let held = trust.restrict(&mut policy, approval, &self.lower);
        (policy, trust.notice(&self.workdir, &held))
    }

    /// The approval `checkpoint trust` would give the project as `commit` holds it — its
    /// commands, its config file, what its test commands resolve to there — read in a scratch
    /// worktree at that commit, and the repository's identity (written first when it has none).
    /// `checkpoint ci` judges a pull request under the approval of its base, which a person
    /// merged, so that the change under judgement cannot choose what judges it.
    pub fn approval_at(&self, commit: &str) -> Result<Approval, ProjectError> {
        let repo = self.git()?;
        let identity = identity::ensure(repo).map_err(ProjectError::Identity)?;
        let tree = scratch::ScratchTree::new(repo, commit, &[]).map_err(ProjectError::Scratch)?;
        let at = self.host.open(tree.path())?;
        at.approval_now(self.host.now, Some(identity))
    }

    /// Approves the project as it is now (`checkpoint trust`, `checkpoint install`): its
    /// commands, its config file, what its test commands resolve to, and its repository (whose
    /// identity is written first when it has none). Errors without a config directory.
    pub fn approve(&self) -> Result<(), ProjectError> {
        let store = self.trust_store().ok_or(ProjectError::NoConfigDir)?;
        // A broken file is never approved: the project was opened under the approved one.
        config::effective(&self.host.sources(&self.workdir), &self.workdir)?;
        let identity = (self.repo.as_ref())
            .map(identity::ensure)
            .transpose()
            .map_err(ProjectError::Identity)?;
        let approval = self.approval_now(self.host.now, identity)?;
        Ok(store.approve(&self.workdir, approval)?)
    }
}

/// The approval of the project at `workdir` in `store`, or its main worktree's (see
/// [`Project::approval`]).
fn approval_of(
    store: &TrustStore,
    workdir: &Path,
    repo: Option<&Repo>,
    turn_began: Option<Timestamp>,
) -> Result<InForce, ProjectError> {
    let approval = match store.approval(workdir)? {
        Some(approval) => Some(approval),
        None => match repo.and_then(Repo::main_workdir) {
            Some(main) => store.approval(&main)?,
            None => None,
        },
    };
    Ok(match approval {
        Some(approval) => approval.in_force(turn_began),
        None => InForce {
            approval: None,
            deferred: None,
        },
    })
}

/// The approved test commands of `policy` whose definition differs from what `approval`
/// recorded for them (all of them when `other_repository`); commands it recorded nothing for
/// (the user's own, added since) are not checked.
fn changed_definitions(
    policy: &Policy,
    approval: &Approval,
    root: &Path,
    other_repository: bool,
) -> Vec<ChangedDefinition> {
    let Some(recorded) = &approval.definitions else {
        return Vec::new();
    };
    (policy.test_commands().into_iter())
        .filter_map(|command| {
            let changed = if other_repository {
                vec!["the repository (another one is at the approved path)".to_owned()]
            } else {
                let approved: &Definition = recorded.get(&command)?;
                definition::changed(approved, &definition::resolve(&command, root))
            };
            (!changed.is_empty()).then_some(ChangedDefinition { command, changed })
        })
        .collect()
}

/// A project's settings as [`Host::settings`] loads them: the policy, and what of it the project
/// supplies (see the fields of [`Project`] of the same names).
struct Settings {
    policy: Policy,
    commands: Vec<ProjectCommand>,
    lower: Vec<LowerValue>,
    user_slots: Vec<String>,
}

/// Opening a project: the only place settings are loaded.
impl Host {
    /// The project of `repo`, with its settings loaded.
    ///
    /// A broken project file under an approval gives way to the approved configuration (or,
    /// under an approval of an earlier version, to no project file), so that no event of an
    /// approved project reads as "the gate is off"; the stop gate says what is held back (see
    /// [`Host::approved_project`]). Without an approval, the error.
    pub fn project(&self, repo: Repo) -> Result<Project, ProjectError> {
        let settings = match self.settings(&repo.workdir) {
            Err(ProjectError::Config(error)) => {
                (self.approved_settings(&repo)).ok_or(ProjectError::Config(error))?
            }
            settings => settings?,
        };
        Ok(Project {
            state_dir: self.state_dir(&repo)?,
            workdir: repo.workdir.clone(),
            repo: Some(repo),
            policy: settings.policy,
            commands: settings.commands,
            lower: settings.lower,
            user_slots: settings.user_slots,
            host: self.clone(),
        })
    }

    /// The settings of `repo`'s project under the configuration approved for it; `None` without
    /// an approval, or when even those cannot be loaded (the user's own file is broken).
    fn approved_settings(&self, repo: &Repo) -> Option<Settings> {
        let store = TrustStore::beside_user_config(self.user_config.as_deref())?;
        let approval =
            (approval_of(&store, &repo.workdir, Some(repo), self.turn_began).ok()?).approval?;
        let text = approval.config.and_then(|config| config.text);
        (self.settings_with(&repo.workdir, Some(text.as_deref())))
            .or_else(|_| self.settings_with(&repo.workdir, Some(None)))
            .ok()
    }

    /// The settings of the project at `root`, what of them the project supplies, and what the
    /// layers under its file give for the guarded settings it sets.
    fn settings(&self, root: &Path) -> Result<Settings, ProjectError> {
        self.settings_with(root, None)
    }

    /// [`Host::settings`], with `project` (when given) as the project file's text instead of
    /// what the file holds: `Some(None)` for no project file.
    fn settings_with(
        &self,
        root: &Path,
        project: Option<Option<&str>>,
    ) -> Result<Settings, ProjectError> {
        let sources: ConfigSources = self.sources(root);
        let effective = match project {
            None => config::effective(&sources, root)?,
            Some(text) => config::effective_with(&sources, root, text)?,
        };
        let set_by_project: Vec<String> =
            (self.project_env.iter()).map(|p| p.var.clone()).collect();
        let effective = effective.with_project_env(&set_by_project);
        Ok(Settings {
            commands: effective.project_commands(&sources.project_file),
            lower: effective.lower_values(&sources.project_file),
            user_slots: effective.user_slots(),
            policy: effective.into_policy(),
        })
    }

    /// The project of `repo` as the stop gate acts on it: with the configuration the user
    /// approved (the config file's approved text while the file differs from it, however), only
    /// the approved commands and guarded values, and its approved test commands whose
    /// definition changed (or that another repository at the approved path supplies) marked
    /// not to run (see [`crate::trust`]); with what the user is told about it. Problems reading
    /// the approvals go to `warnings` (the project is then unapproved).
    pub fn approved_project(
        &self,
        repo: Repo,
        warnings: &mut Vec<String>,
    ) -> Result<(Project, Option<String>), ProjectError> {
        let root = repo.workdir.clone();
        let store = TrustStore::beside_user_config(self.user_config.as_deref());
        let in_force = (store.as_ref())
            .map(|store| approval_of(store, &root, Some(&repo), self.turn_began))
            .transpose()
            .unwrap_or_else(|e| {
                warnings.push(format!("trust: {e}"));
                None
            });
        let (approval, deferred) = match in_force {
            Some(InForce { approval, deferred }) => (approval, deferred),
            None => (None, None),
        };
        let shown_root = root.display().to_string();
        let file = root.join(config::PROJECT_FILE);
        let shown_file = config::PROJECT_FILE;
        let mut notices = Vec::new();
        if deferred.is_some() {
            notices.push(render::given_during_the_turn_notice(&shown_root, false));
        }
        let settings = match approval.as_ref() {
            // Unapproved: as the file says (a broken file lets stops through, as it always did).
            None => self.settings(&root)?,
            Some(approval) => match &approval.config {
                Some(approved) => {
                    let current = config::read_project(&file);
                    // What the new file would change among the approved commands.
                    let waiting = |text: Option<&str>| match self.settings_with(&root, Some(text)) {
                        Ok(settings) => {
                            Trust::check(&settings.commands, Some(approval), &settings.user_slots)
                                .changes()
                        }
                        Err(_) => Vec::new(),
                    };
                    let change = match &current {
                        Ok(text) if *text == approved.text => None,
                        Ok(Some(text)) => {
                            let sources = self.sources(&root);
                            Some(match config::effective_with(&sources, &root, Some(text)) {
                                Err(error) => (
                                    ConfigChange::Invalid {
                                        error: error.to_string(),
                                    },
                                    Vec::new(),
                                ),
                                Ok(_) if approved.text.is_none() => {
                                    (ConfigChange::Added, waiting(Some(text)))
                                }
                                Ok(_) => (ConfigChange::Edited, waiting(Some(text))),
                            })
                        }
                        Ok(None) => Some((ConfigChange::Deleted, waiting(None))),
                        Err(error) => Some((
                            ConfigChange::Unreadable {
                                error: error.to_string(),
                            },
                            Vec::new(),
                        )),
                    };
                    if let Some((change, waiting)) = &change {
                        let notice =
                            render::config_held_notice(&shown_root, shown_file, change, waiting);
                        notices.push(notice);
                    }
                    let text = approved.text.as_deref();
                    // The approved text, which parsed when it was approved; should it no longer
                    // (the user's file changed under it), no project file: never an open gate.
                    (self.settings_with(&root, Some(text)))
                        .or_else(|_| self.settings_with(&root, Some(None)))?
                }
                None => match self.settings(&root) {
                    Ok(settings) => settings,
                    Err(ProjectError::Config(error)) => {
                        let change = ConfigChange::Invalid {
                            error: error.to_string(),
                        };
                        let notice =
                            render::config_held_notice(&shown_root, shown_file, &change, &[]);
                        notices.push(notice);
                        self.settings_with(&root, Some(None))?
                    }
                    Err(error) => return Err(error),
                },
            },
        };
        let mut project = Project {
            state_dir: self.state_dir(&repo)?,
            workdir: root.clone(),
            repo: Some(repo),
            policy: settings.policy,
            commands: settings.commands,
            lower: settings.lower,
            user_slots: settings.user_slots,
            host: self.clone(),
        };
        let (mut policy, trust_notice) = project.approved_policy(approval.as_ref());
        notices.extend(trust_notice);
        if let Some(approval) = &approval {
            let repo = project.repo.as_ref();
            let other_repository =
                approval.identity.is_some() && approval.identity != repo.and_then(identity::read);
            let changed = changed_definitions(&policy, approval, &root, other_repository);
            if !changed.is_empty() {
                notices.push(render::definitions_notice(&shown_root, &changed));
            }
            policy.tests.changed_definitions = changed;
            if approval.is_legacy() {
                notices.push(render::legacy_approval_notice(&shown_root));
            }
        }
        project.policy = policy;
        let notice = (!notices.is_empty()).then(|| notices.join("\n"));
        Ok((project, notice))
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
        let settings = self.settings(cwd)?;
        Ok(Project {
            state_dir: self.state_dir_or(|| cwd.join(".checkpoint"))?,
            workdir: cwd.to_owned(),
            repo: None,
            policy: settings.policy,
            commands: settings.commands,
            lower: settings.lower,
            user_slots: settings.user_slots,
            host: self.clone(),
        })
    }
}
