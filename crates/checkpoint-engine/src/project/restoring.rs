//! `checkpoint restore` for a project: pick the checkpoint, plan the restore (see
//! [`crate::continuity::restore`]), save a safety checkpoint of the state it changes, make sure
//! that checkpoint can bring back every file the restore changes, and only then write.

use crate::continuity::restore::{self, RestoreError, RestorePlan};
use crate::continuity::signed::Signed;
use crate::continuity::{SessionCheckpoint, SessionRef};
use checkpoint_core::changes::ChangeKind;
use checkpoint_core::journal::Trigger;

use super::saving::SaveRequest;
use super::{Project, ProjectError};

/// Which checkpoint to restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreTo {
    /// The latest checkpoint this user's own key signed that is not a safety checkpoint of a
    /// restore.
    Latest,
    /// The checkpoint with this number.
    Id(u64),
    /// The latest safety checkpoint this user's own key signed: the state before the last
    /// restore (`--undo`).
    Undo,
}

/// A restore to ask for.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    /// Which checkpoint.
    pub to: RestoreTo,
    /// Only these repository-relative paths (files, or directories with everything under them);
    /// empty for every path.
    pub only: Vec<String>,
    /// Plan only: change nothing and save nothing.
    pub dry_run: bool,
    /// The session the safety checkpoint belongs to.
    pub session: SessionRef,
}

/// What a restore did (or, dry, would do).
#[derive(Debug, Clone)]
pub struct Restored {
    /// The checkpoint restored to.
    pub checkpoint: SessionCheckpoint,
    /// The changes, checked.
    pub plan: RestorePlan,
    /// The safety checkpoint saved before the files were changed; `None` for a dry run or when
    /// nothing needed changing.
    pub safety: Option<u64>,
}

impl Project {
    /// Restores the worktree's files to a session checkpoint (see [`RestoreRequest`]): all of
    /// them or, refused with nothing changed, none.
    pub fn restore(&self, request: RestoreRequest) -> Result<Restored, ProjectError> {
        let repo = self.git()?;
        let continuity = self.continuity();
        let log = continuity.load()?;
        // Without a number, only a checkpoint of this user's own: one fetched from a remote and
        // signed by no key of theirs may hold any content (`checkpoint log` marks it).
        let own = continuity.own_keys();
        let mine = |c: &&SessionCheckpoint| c.signed_by(&own);
        let found = match request.to {
            RestoreTo::Latest => (log.checkpoints.iter().rev())
                .filter(mine)
                .find(|c| c.trigger != Trigger::Restore),
            RestoreTo::Id(id) => log.checkpoints.iter().find(|c| c.id == id),
            RestoreTo::Undo => (log.checkpoints.iter().rev())
                .filter(mine)
                .find(|c| c.trigger == Trigger::Restore),
        };
        let checkpoint = found.cloned().ok_or_else(|| {
            ProjectError::NoCheckpoint(match request.to {
                RestoreTo::Latest => {
                    "no checkpoint of yours (signed by your key) saved yet".to_owned()
                }
                RestoreTo::Id(id) => format!("no checkpoint #{id} (`checkpoint log` lists them)"),
                RestoreTo::Undo => "no restore to undo".to_owned(),
            })
        })?;
        let backend = self.policy.git.backend;
        let plan = restore::plan(&continuity, repo, backend, &checkpoint, &request.only)?;
        if request.dry_run || plan.files.is_empty() {
            return Ok(Restored {
                checkpoint,
                plan,
                safety: None,
            });
        }
        // Its own label: not the session's last message, carried over from another checkpoint.
        let label = format!("before restoring checkpoint #{}", checkpoint.id);
        let safety = self.save_with(
            SaveRequest {
                session: request.session,
                trigger: Trigger::Restore,
                detail: Some(label.clone()),
                summary: Some(label),
                context: None,
                unresolved: None,
            },
            Some(&plan.changes),
        )?;
        self.can_bring_back(&safety, &plan)?;
        restore::apply(&repo.workdir, &plan)?;
        Ok(Restored {
            checkpoint,
            plan,
            safety: Some(safety.id),
        })
    }

    /// Whether `safety` can give back the current content of every file `plan` changes: kept
    /// in it, absent, or unchanged since `HEAD` (where git keeps it).
    fn can_bring_back(
        &self,
        safety: &SessionCheckpoint,
        plan: &RestorePlan,
    ) -> Result<(), RestoreError> {
        let continuity = self.continuity();
        for file in &plan.files {
            let path = &file.delta.path;
            let held = match safety.files.iter().find(|f| f.path == *path) {
                Some(state) => match &state.sha256 {
                    Some(sha) => continuity.blob(sha).is_some(),
                    None => state.kind == ChangeKind::Deleted,
                },
                None => safety.more_files == 0,
            };
            if !held {
                return Err(RestoreError::Refused {
                    path: checkpoint_core::sanitize::line(
                        path,
                        checkpoint_core::sanitize::NAME_CHARS,
                    ),
                    why: format!(
                        "its current content could not be kept for `--undo` (over {} MiB, or \
                         more than {} changed files)",
                        crate::continuity::MAX_BLOB_BYTES / (1024 * 1024),
                        crate::continuity::record::MAX_FILES
                    ),
                });
            }
        }
        Ok(())
    }
}
