//! A project's session continuity: saving a session checkpoint (and one of the active task),
//! logging progress, and the restart context a new session starts with. The gate calls these on
//! hook events; `checkpoint save|progress|resume` and the MCP tools call them by hand. What a
//! restart context says comes only from entries signed by this user's own key (see
//! [`crate::continuity::signed`]).

use crate::continuity::diff;
use crate::continuity::text::{self, Resume};
use crate::continuity::{
    ContextMark, ProgressEntry, ProgressSource, ResumePoint, SessionCheckpoint, SessionRef,
    TaskMark, ThreadKey,
};
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::journal::Trigger;
use checkpoint_core::sanitize;

use crate::journal::JournalError;

use super::{Project, ProjectError};

/// What a session checkpoint is saved for.
#[derive(Debug, Clone)]
pub struct SaveRequest {
    /// The session it belongs to.
    pub session: SessionRef,
    /// What caused it.
    pub trigger: Trigger,
    /// A detail: the session end reason, the compaction trigger, a message.
    pub detail: Option<String>,
    /// The agent's last message; `None` keeps the session's previous summary.
    pub summary: Option<String>,
    /// Context usage, when measured.
    pub context: Option<ContextMark>,
    /// For a stop the gate let through, what it left unresolved (see
    /// [`SessionCheckpoint::unresolved`]); ignored for other triggers, which carry the session's
    /// last value.
    pub unresolved: Option<String>,
}

/// What a restart goes on from (see [`Project::resume_context`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    /// The restart context; `None` when no checkpoint signed by this user's key was saved.
    pub context: Option<String>,
    /// The id of the checkpoint it goes on from; `None` with no context.
    pub from: Option<u64>,
    /// The checkpoints saved after the one resumed from (all, without one) that this user's key
    /// did not sign, newest first: never resumed from, only listed.
    pub unverified: Vec<SessionCheckpoint>,
}

impl Project {
    /// Saves a session checkpoint (and a checkpoint of the active task, if any). Errors outside
    /// a git repository.
    pub fn save_session(&self, request: SaveRequest) -> Result<SessionCheckpoint, ProjectError> {
        self.save_with(request, None)
    }

    /// Saves a session checkpoint; `changes` when the caller already read them, else they are
    /// read here, within [`diff::GIT_TIMEOUT`] (a hanging git leaves the files out, not the
    /// checkpoint).
    pub fn save_with(
        &self,
        request: SaveRequest,
        changes: Option<&ChangeSet>,
    ) -> Result<SessionCheckpoint, ProjectError> {
        let repo = self.git()?;
        let now = self.host.now;
        let continuity = self.continuity();
        let journal = self.journal();
        // The task's checkpoint of a stop let through says what was left unresolved.
        let detail = match request.trigger {
            Trigger::Stop => request.detail.clone().or(request.unresolved.clone()),
            _ => request.detail.clone(),
        };
        let read;
        let changes = match changes {
            Some(changes) => Some(changes),
            None => {
                let backend = self.policy.git.backend;
                // The files checkpoint wrote are not the session's work, as at a stop.
                read = (diff::changes_within(repo, backend, diff::GIT_TIMEOUT).ok())
                    .map(|changes| self.own_files().without_ours(&repo.workdir, changes));
                read.as_ref()
            }
        };
        let task = (journal.checkpoint_active_task(request.trigger, detail, now, changes)?)
            .map(|(_, task)| task);
        let (files, more_files) = match changes {
            Some(changes) => continuity.capture(&repo.workdir, changes)?,
            None => (Vec::new(), 0),
        };
        // A manual checkpoint's message says best where things stand.
        let given = match request.trigger {
            Trigger::Manual => request.summary.or_else(|| request.detail.clone()),
            _ => request.summary,
        };
        let given = given.filter(|s| !s.trim().is_empty());
        let stop = request.trigger == Trigger::Stop;
        // The session's previous checkpoint, read only for what this one carries over: one this
        // user signed, so that no fetched text is carried into a checkpoint signed now.
        let previous = match (&given, stop) {
            (Some(_), true) => None,
            _ => (continuity.resume_point(Some(&request.session))?.checkpoint)
                .filter(|c| c.session == request.session),
        };
        let (summary, unresolved) = match previous {
            Some(previous) => (
                given.or(previous.summary),
                if stop {
                    request.unresolved
                } else {
                    previous.unresolved
                },
            ),
            None => (given, request.unresolved.filter(|_| stop)),
        };
        let task = task.map(|task| TaskMark {
            step: task
                .current_step
                .map(|i| format!("{}/{} {}", i + 1, task.steps.len(), task.steps[i].name)),
            hook_md: journal
                .hook_md(&task.id)
                .ok()
                .map(|p| p.display().to_string()),
            id: task.id,
            name: task.name,
        });
        Ok(continuity.save(SessionCheckpoint {
            id: 0,
            trigger: request.trigger,
            at: now,
            session: request.session,
            detail: request.detail,
            context: request.context,
            summary,
            head: changes.and_then(|c| c.head.commit().map(str::to_owned)),
            files,
            more_files,
            task,
            progress: Vec::new(),
            unresolved,
            signature: None,
        })?)
    }

    /// Logs a progress entry, in the active task's thread if there is one: on one line, cut at
    /// [`text::KEPT_ENTRY_CHARS`] (see [`sanitize::line()`]).
    pub fn log_progress(
        &self,
        text: &str,
        session: Option<SessionRef>,
        source: ProgressSource,
    ) -> Result<ProgressEntry, ProjectError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ProjectError::EmptyProgress);
        }
        self.git()?;
        let entry = ProgressEntry {
            at: self.host.now,
            text: sanitize::line(text, text::KEPT_ENTRY_CHARS),
            task: self.journal().active_id()?,
            session,
            source,
            signature: None,
        };
        self.continuity().log_progress(entry.clone())?;
        Ok(entry)
    }

    /// The restart context: the latest checkpoint signed by this user's own key (of `session`
    /// when it has one, see [`crate::continuity::Continuity::resume_point`]) with the thread's
    /// progress entries so signed; `None` when there is no such checkpoint. Never the text of a
    /// checkpoint or entry another key signed, or none: a fetched log is written by whoever can
    /// push refs, and this is injected into a new session automatically. Also the unverified
    /// checkpoints saved after it, for `checkpoint resume` to list. `source` is the
    /// `SessionStart` source that says why the session restarts. With `count`, this is a real
    /// restart and the thread's restart attempts go up.
    pub fn resume_context(
        &self,
        source: Option<&str>,
        session: Option<&SessionRef>,
        count: bool,
    ) -> Result<Restart, ProjectError> {
        self.git()?;
        let now = self.host.now;
        let continuity = self.continuity();
        let ResumePoint {
            checkpoint,
            unverified,
        } = continuity.resume_point(session)?;
        let Some(mut checkpoint) = checkpoint else {
            return Ok(Restart {
                context: None,
                from: None,
                unverified,
            });
        };
        let elsewhere = match checkpoint.task.take() {
            Some(mark) => self.adopt(mark, &mut checkpoint.task)?,
            None => None,
        };
        let thread = ThreadKey(checkpoint.task.as_ref().map(|t| t.id.clone()));
        let attempt = if count {
            continuity.count_restart(&thread, &checkpoint, now)?
        } else {
            continuity
                .load()?
                .restarts
                .get(thread.as_str())
                .map_or(1, |r| r.count)
        };
        let progress = continuity.progress(&thread)?;
        let why = text::reset_reason(source);
        let progress_file = continuity.log_path().display().to_string();
        let context = text::resume_context(&Resume {
            checkpoint: &checkpoint,
            why: &why,
            attempt,
            max_restarts: self.policy.resume.max_restarts,
            progress: &progress,
            progress_file: &progress_file,
            now,
        });
        let context = match elsewhere {
            Some(id) => format!(
                "{}\n\nAnother task is active in this worktree: `checkpoint task adopt {}` \
                 makes this one the active task.",
                context.trim_end(),
                sanitize::name(&id)
            ),
            None => context,
        };
        Ok(Restart {
            context: Some(context),
            from: Some(checkpoint.id),
            unverified,
        })
    }

    /// The task a restart goes on with: `mark`'s, made this worktree's active task unless
    /// another is (then its id is returned) and put back in `task` with the path of its
    /// `hook.md` here (the checkpoint may come from another clone). A task finished since, or
    /// not here, is not offered.
    fn adopt(
        &self,
        mark: TaskMark,
        task: &mut Option<TaskMark>,
    ) -> Result<Option<String>, ProjectError> {
        let journal = self.journal();
        let elsewhere = match journal.adopt(&mark.id) {
            Ok(_) => None,
            Err(JournalError::Unfinished { .. }) => Some(mark.id.clone()),
            Err(JournalError::Finished { .. } | JournalError::NoSuchTask(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let hook_md = journal.hook_md(&mark.id)?;
        *task = Some(TaskMark {
            hook_md: hook_md.exists().then(|| hook_md.display().to_string()),
            ..mark
        });
        Ok(elsewhere)
    }

    /// "Work changed since last checkpoint: …" and what to do, when work changed since the
    /// project's latest checkpoint (or none was ever saved).
    pub fn unsaved_work(&self) -> Result<Option<String>, ProjectError> {
        const ASK: &str = "run `checkpoint save \"…\"` before /clear to keep it";
        let repo = self.git()?;
        let continuity = self.continuity();
        let Some(last) = continuity.latest(None)? else {
            return Ok(Some(format!("No checkpoint saved yet: {ASK}.")));
        };
        let work = diff::diff(&continuity, repo, self.policy.git.backend, &last)
            .map_err(|e| ProjectError::Diff(e.to_string()))?;
        Ok(work
            .changed()
            .then(|| format!("{} — {ASK}.", text::diff_line(&work, self.host.now))))
    }
}
