//! The gate on a pull request (`checkpoint ci`): the change set from the merge base of the base
//! branch and `HEAD` to `HEAD`, judged on a clean checkout as a stop is, under the configuration
//! the base carries.
//!
//! On a CI machine there is no user to approve the project's commands, and the branch under
//! judgement may rewrite them. So what runs is what the base approves: the approval
//! `checkpoint trust` would give the project as the merge base holds it
//! ([`Project::approval_at`](crate::project::Project::approval_at)) is recorded in a trust store
//! of the caller's (a scratch directory, never the machine user's), and the stop is judged under
//! it. A branch that changes the test command, the config file, or the script, recipe or runner
//! configuration behind a test command gets the base's command, values and rules, or a block
//! saying what changed — exactly as an agent's turn that did so. Nothing local is trusted: no
//! receipt, no cache of another checkout (the state directory is the checkout's own).

use std::path::{Path, PathBuf};

use super::{GateOutcome, check};
use crate::git::call::GitCallError;
use crate::git::{self, Repo, base};
use crate::host::Host;
use crate::project::ProjectError;
use crate::runner::RunWatch;
use crate::trust::TrustStore;
use checkpoint_core::event::HookEvent;
use checkpoint_core::home::Manual;
use checkpoint_core::policy::GitBackend;
use checkpoint_core::sanitize;

/// Why a pull request could not be judged. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CiError {
    /// Not inside a git repository.
    #[error("{} is not inside a git repository", .0.display())]
    NoRepository(PathBuf),
    /// The checkout has changes of its own: CI judges commits.
    #[error("the checkout has uncommitted changes ({0})")]
    Dirty(String),
    /// The base revision is not a commit git knows here.
    #[error("the base {rev:?} is not a commit here: {error}")]
    UnknownBase {
        /// The revision given.
        rev: String,
        /// What git said.
        error: String,
    },
    /// `HEAD` is unborn.
    #[error("HEAD has no commit")]
    NoHead,
    /// The base and `HEAD` share no history.
    #[error("the base {0} and HEAD share no history")]
    Unrelated(String),
    /// The repository could not be read.
    #[error(transparent)]
    Git(#[from] git::GitError),
    /// A git command failed.
    #[error(transparent)]
    GitCall(#[from] GitCallError),
    /// The project could not be opened, approved or judged.
    #[error(transparent)]
    Project(#[from] ProjectError),
}

/// A pull request's verdict.
#[derive(Debug)]
pub struct CiJudgement {
    /// The merge base of the base revision and `HEAD`: what the change set is judged from, and
    /// whose configuration is approved.
    pub base: String,
    /// The commit judged.
    pub head: String,
    /// The gate's answer, as to a manual stop.
    pub outcome: GateOutcome,
}

/// Judges the checkout around `dir`, from the merge base of `base_rev` and `HEAD`, under the
/// approval of the merge base's configuration, recorded in `host`'s trust store (beside
/// [`Host::user_config`]: give it a scratch directory).
pub fn judge(
    host: &Host,
    dir: &Path,
    base_rev: &str,
    watch: &dyn RunWatch,
) -> Result<CiJudgement, CiError> {
    let repo = git::discover(dir)?.ok_or_else(|| CiError::NoRepository(dir.to_owned()))?;
    let head = base::head_commit(&repo).ok_or(CiError::NoHead)?;
    refuse_dirty(&repo)?;
    let base_commit = base::resolve(&repo, base_rev).map_err(|e| CiError::UnknownBase {
        rev: base_rev.to_owned(),
        error: e.to_string(),
    })?;
    let merge_base = base::merge_base(&repo, &base_commit, &head)?
        .ok_or_else(|| CiError::Unrelated(base_commit.clone()))?;
    let project = host.open(&repo.workdir)?;
    let approval = project.approval_at(&merge_base)?;
    let store = TrustStore::beside_user_config(host.user_config.as_deref())
        .ok_or(ProjectError::NoConfigDir)?;
    store
        .approve(&project.workdir, approval)
        .map_err(ProjectError::from)?;
    let event = HookEvent::manual_stop(repo.workdir.clone());
    let outcome = check(&Manual, host, &event, watch, Some(&merge_base))?;
    Ok(CiJudgement {
        base: merge_base,
        head,
        outcome,
    })
}

/// Refuses a checkout with uncommitted changes (untracked files included): what CI judges is
/// `HEAD`, and a test run on other content would judge something no commit holds.
fn refuse_dirty(repo: &Repo) -> Result<(), CiError> {
    let changes = git::changes(repo, GitBackend::default())?;
    match changes.changes.as_slice() {
        [] => Ok(()),
        [one] => Err(CiError::Dirty(sanitize::name(&one.path))),
        [first, rest @ ..] => Err(CiError::Dirty(format!(
            "{} and {} more",
            sanitize::name(&first.path),
            rest.len()
        ))),
    }
}
