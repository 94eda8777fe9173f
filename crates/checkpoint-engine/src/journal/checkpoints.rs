//! Checkpoints: what the worktree looks like, and the snapshots of a step's files taken at a
//! commit, a push, a stop, a validation or an interval.

use jiff::Timestamp;

use super::snapshot::{self, Observation};
use super::{Journal, JournalError};
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::journal::{Checkpoint, Current, StepStatus, Task, Trigger, checkpoint};

impl Journal {
    /// What git says now about the worktree.
    pub(super) fn observe(&self) -> Observation {
        snapshot::observe(self.repo.as_ref(), self.policy.git.backend)
    }

    /// What `changes` says about the worktree when the caller read them, else what git says now.
    fn observe_or(&self, changes: Option<&ChangeSet>) -> Observation {
        changes.map_or_else(|| self.observe(), snapshot::observed)
    }

    /// Records the changed files in the task's current step, snapshots them and adds a
    /// checkpoint; returns it.
    pub(super) fn take_checkpoint(
        &self,
        task: &mut Task,
        seen: &Observation,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
    ) -> Checkpoint {
        task.touch_files(&seen.changed);
        let step_files = task
            .current()
            .filter(|s| s.status == StepStatus::Running)
            .map_or(&[][..], |s| &s.files[..]);
        let files = (step_files.iter().take(checkpoint::MAX_FILES))
            .map(|f| snapshot::snapshot(&self.workdir, &f.path))
            .collect();
        let checkpoint = Checkpoint {
            id: 0,
            trigger,
            at: now,
            step: task.current_ref(),
            vcs: seen.vcs.clone(),
            files,
            more_files: step_files.len().saturating_sub(checkpoint::MAX_FILES),
            message,
        };
        let max = usize::try_from(self.settings().max_checkpoints).unwrap_or(usize::MAX);
        let id = task.add_checkpoint(checkpoint.clone(), max);
        Checkpoint { id, ..checkpoint }
    }

    /// Takes a checkpoint of task `id`. Refused on a finished task.
    pub fn checkpoint(
        &self,
        id: &str,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
    ) -> Result<Checkpoint, JournalError> {
        let (checkpoint, _) = self.checkpoint_seen(id, trigger, message, now, self.observe())?;
        Ok(checkpoint)
    }

    /// [`Journal::checkpoint`] of what `seen` says about the worktree; returns the task too.
    fn checkpoint_seen(
        &self,
        id: &str,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        mut seen: Observation,
    ) -> Result<(Checkpoint, Task), JournalError> {
        if let (Trigger::Commit, Some(repo)) = (trigger, &self.repo) {
            seen.changed.extend(snapshot::head_commit_paths(repo));
        }
        self.update(id, |task| {
            refuse_finished(task)?;
            Ok(self.take_checkpoint(task, &seen, trigger, message, now))
        })
    }

    /// Takes a checkpoint of the active task, if there is an unfinished one, of `changes` when
    /// the caller has read them (a stop: one `git status` per stop), else of what git says now.
    /// The git hooks (commit, push), the adapters (PR creation) and the gate (every allowed
    /// stop, with [`Trigger::Stop`]) call this.
    pub fn checkpoint_active(
        &self,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<Checkpoint>, JournalError> {
        let taken = self.checkpoint_active_task(trigger, message, now, changes)?;
        Ok(taken.map(|(checkpoint, _)| checkpoint))
    }

    /// [`Journal::checkpoint_active`], with the task as the checkpoint left it: the task is
    /// read once, in the transaction.
    pub fn checkpoint_active_task(
        &self,
        trigger: Trigger,
        message: Option<String>,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<(Checkpoint, Task)>, JournalError> {
        let Some(id) = self.active_unfinished()? else {
            return Ok(None);
        };
        let seen = self.observe_or(changes);
        match self.checkpoint_seen(&id, trigger, message, now, seen) {
            Ok(taken) => Ok(Some(taken)),
            // Finished or removed since `current.json` was written.
            Err(JournalError::Finished { .. } | JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// On any hook event: when the active task's running step has had no checkpoint for the
    /// checkpoint interval, takes an [`Trigger::Interval`] checkpoint (of `changes` when the
    /// caller has read them). Cheap when none is due: two small files read (`active.json`,
    /// the task's [`Current`] record), whatever the task's size; no git.
    pub fn maybe_interval_checkpoint(
        &self,
        now: Timestamp,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<Checkpoint>, JournalError> {
        let interval = self.settings().checkpoint_interval;
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.current(&id) {
            Ok(current) if current.interval_due(now, interval) => {}
            Ok(_) | Err(JournalError::NoSuchTask(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let seen = self.observe_or(changes);
        let (checkpoint, _) = self.update(&id, |task| {
            // Checked again on the task itself: another process may have taken it meanwhile.
            Ok(Current::of(task)
                .interval_due(now, interval)
                .then(|| self.take_checkpoint(task, &seen, Trigger::Interval, None, now)))
        })?;
        Ok(checkpoint)
    }
}

fn refuse_finished(task: &Task) -> Result<(), JournalError> {
    if task.state.is_terminal() {
        return Err(JournalError::Finished {
            id: task.id.clone(),
            state: task.state,
        });
    }
    Ok(())
}
