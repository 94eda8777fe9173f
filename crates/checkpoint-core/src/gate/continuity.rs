//! The gate's continuity half: the context watch before tool calls, session checkpoints before
//! context is lost, progress entries, and the restart context a new session starts with.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::changes::ChangeSet;
use crate::context;
use crate::continuity::diff;
use crate::continuity::text::{self, Level, Resume};
use crate::continuity::{
    ContextMark, Continuity, ProgressEntry, ProgressSource, SessionCheckpoint, SessionRef,
    TaskMark, ThreadKey,
};
use crate::event::{Agent, HookEvent};
use crate::git::{self, Repo};
use crate::journal::{Journal, Trigger};
use crate::policy::config;
use crate::policy::{Policy, Switch};
use crate::session::{STATUS_LINE_FRESH, SessionStore, StatusLineUsage};

use super::{Gate, GateError, check_cwd, session_id};

/// No second checkpoint with the same context trigger in one session within this time.
pub const CONTEXT_CHECKPOINT_GAP: Duration = Duration::from_secs(5 * 60);
/// Gemini fires `PreCompress` on every turn; it compresses only from this share of its window
/// (its default `model.compressionThreshold`), so an automatic `PreCompress` below it saves
/// nothing.
pub const GEMINI_COMPRESSION_PERCENT: u8 = 50;
/// The name of the skill and slash command that logs progress.
pub const PROGRESS_SKILL: &str = "checkpoint-progress";

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
}

/// A repository with its state directory and policy.
struct Project {
    repo: Repo,
    state_dir: PathBuf,
    policy: Policy,
}

impl Project {
    fn continuity(&self) -> Continuity {
        Continuity::new(&self.state_dir)
    }
}

impl Gate {
    /// The project at `cwd`, or `None` outside a git repository.
    fn project(&self, cwd: &Path) -> Result<Option<Project>, GateError> {
        let Ok(Some(repo)) = git::discover(cwd) else {
            return Ok(None);
        };
        let policy = config::load(&self.sources(&repo.workdir), &repo.workdir)?;
        Ok(Some(Project {
            state_dir: self.state_dir(&repo),
            repo,
            policy,
        }))
    }

    fn require_project(&self, cwd: &Path) -> Result<Project, GateError> {
        self.project(cwd)?
            .ok_or_else(|| GateError::NoRepository(cwd.to_owned()))
    }

    /// Saves a session checkpoint of the project at `cwd` (and a checkpoint of the active task,
    /// if any). Errors outside a git repository.
    pub fn save_session(
        &self,
        cwd: &Path,
        request: SaveRequest,
    ) -> Result<SessionCheckpoint, GateError> {
        let project = self.require_project(cwd)?;
        self.save_in(&project, request, None)
    }

    /// Saves a checkpoint of `project`; `changes` when the caller already read them, else they
    /// are read here, within [`diff::GIT_TIMEOUT`] (a hanging git leaves the files out, not the
    /// checkpoint).
    fn save_in(
        &self,
        project: &Project,
        request: SaveRequest,
        changes: Option<&ChangeSet>,
    ) -> Result<SessionCheckpoint, GateError> {
        let continuity = project.continuity();
        let journal = Journal::for_repo(self, project.repo.clone(), project.policy.clone());
        let task = journal.checkpoint_active(request.trigger, request.detail.clone(), self.now)?;
        let task = task.and_then(|_| journal.active().ok().flatten());
        let read;
        let changes = match changes {
            Some(changes) => Some(changes),
            None => {
                let backend = project.policy.git.backend;
                read = diff::changes_within(&project.repo, backend, diff::GIT_TIMEOUT).ok();
                read.as_ref()
            }
        };
        let (files, more_files) = match changes {
            Some(changes) => continuity.capture(&project.repo.workdir, changes)?,
            None => (Vec::new(), 0),
        };
        // A manual checkpoint's message says best where things stand.
        let given = match request.trigger {
            Trigger::Manual => request.summary.or_else(|| request.detail.clone()),
            _ => request.summary,
        };
        let summary = match given.filter(|s| !s.trim().is_empty()) {
            Some(summary) => Some(summary),
            None => continuity
                .latest(Some(&request.session))?
                .filter(|c| c.session == request.session)
                .and_then(|c| c.summary),
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
            at: self.now,
            session: request.session,
            detail: request.detail,
            context: request.context,
            summary,
            head: changes.and_then(|c| c.head.commit().map(str::to_owned)),
            files,
            more_files,
            task,
            progress: Vec::new(),
        })?)
    }

    /// Logs a progress entry for the project at `cwd`, in the active task's thread if there is
    /// one.
    pub fn log_progress(
        &self,
        cwd: &Path,
        text: &str,
        session: Option<SessionRef>,
        source: ProgressSource,
    ) -> Result<ProgressEntry, GateError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(GateError::EmptyProgress);
        }
        let project = self.require_project(cwd)?;
        let journal = Journal::for_repo(self, project.repo.clone(), project.policy.clone());
        let entry = ProgressEntry {
            at: self.now,
            text: text.to_owned(),
            task: journal.active_id()?,
            session,
            source,
        };
        project.continuity().log_progress(entry.clone())?;
        Ok(entry)
    }

    /// The restart context for the project at `cwd`: the latest checkpoint (of `session` when
    /// it has one) with the thread's progress. `None` when nothing was saved yet. With `count`,
    /// this is a real restart and the thread's restart attempts go up.
    pub fn resume_context(
        &self,
        cwd: &Path,
        source: Option<&str>,
        session: Option<&SessionRef>,
        count: bool,
    ) -> Result<Option<String>, GateError> {
        let project = self.require_project(cwd)?;
        self.resume_in(&project, source, session, count)
    }

    fn resume_in(
        &self,
        project: &Project,
        source: Option<&str>,
        session: Option<&SessionRef>,
        count: bool,
    ) -> Result<Option<String>, GateError> {
        let continuity = project.continuity();
        let Some(checkpoint) = continuity.latest(session)? else {
            return Ok(None);
        };
        let thread = ThreadKey(checkpoint.task.as_ref().map(|t| t.id.clone()));
        let attempt = if count {
            continuity.count_restart(&thread, &checkpoint, self.now)?
        } else {
            continuity
                .load()?
                .restarts
                .get(thread.as_str())
                .map_or(1, |r| r.count)
        };
        let progress = continuity.progress(&thread)?;
        let why = text::reset_reason(source);
        Ok(Some(text::resume_context(&Resume {
            checkpoint: &checkpoint,
            why: &why,
            attempt,
            max_restarts: project.policy.resume.max_restarts,
            progress: &progress,
            now: self.now,
        })))
    }

    /// `SessionStart`: the latest checkpoint, injected as `[resume] auto` says.
    pub(super) fn session_start(&self, event: &HookEvent) -> Result<Option<String>, GateError> {
        check_cwd(event)?;
        let Some(project) = self.project(&event.cwd)? else {
            return Ok(None);
        };
        let session = session_ref(event);
        // Only a resumed session has checkpoints of its own worth preferring.
        let prefer = (event.detail.as_deref() == Some("resume")).then_some(&session);
        let context = match project.policy.resume.auto {
            Switch::Off => None,
            Switch::Prompt => project
                .continuity()
                .latest(prefer)?
                .map(|c| text::resume_offer(&c, self.now)),
            Switch::On => self.resume_in(&project, event.detail.as_deref(), prefer, true)?,
        };
        // Gemini 0.61 shows a `SessionStart(clear)` answer to the user only: the context goes
        // with the next prompt instead.
        if event.agent == Agent::Gemini && event.detail.as_deref() == Some("clear") {
            SessionStore::new(&project.state_dir).update(
                event.agent,
                session_id(event),
                |record| record.pending_context = context,
            )?;
            return Ok(None);
        }
        Ok(context)
    }

    /// At a tool call: measures the context (Claude's fresh status line, else the transcript's
    /// tail); past `[context] warn` or `critical`, saves a checkpoint (at most one per trigger and
    /// session within [`CONTEXT_CHECKPOINT_GAP`]) and returns the notice for the agent. Gemini
    /// cannot take context before a tool runs, so its notice waits for the tool's result.
    pub(super) fn context_watch(&self, event: &HookEvent) -> Result<Option<String>, GateError> {
        check_cwd(event)?;
        let Some(project) = self.project(&event.cwd)? else {
            return Ok(None);
        };
        let Some((usage, shown)) = self.usage_at_tool(event, &project) else {
            return Ok(None);
        };
        let settings = &project.policy.context;
        let mut mark = measure(event, &usage, settings.window);
        if let Some(percent) = shown.filter(|_| settings.window.is_none()) {
            mark.percent = percent;
        }
        let (trigger, level) = if mark.percent >= settings.critical {
            (Trigger::Auto90, Level::Critical)
        } else if mark.percent >= settings.warn {
            (Trigger::Auto80, Level::Warn)
        } else {
            return Ok(None);
        };
        let session = session_ref(event);
        if project.continuity().saved_recently(
            &session,
            trigger,
            self.now,
            CONTEXT_CHECKPOINT_GAP,
        )? {
            return Ok(None);
        }
        self.save_in(
            &project,
            SaveRequest {
                session,
                trigger,
                detail: None,
                summary: reply_of(event),
                context: Some(mark),
            },
            None,
        )?;
        let notice = text::context_notice(&mark, level);
        if event.agent == Agent::Gemini {
            SessionStore::new(&project.state_dir).update(
                event.agent,
                session_id(event),
                |record| record.pending_context = Some(notice),
            )?;
            return Ok(None);
        }
        Ok(Some(notice))
    }

    /// The context usage at a tool call, and the percentage Claude showed for it: from Claude's
    /// status line when `checkpoint statusline` recorded it less than [`STATUS_LINE_FRESH`] ago,
    /// else from the transcript's tail.
    fn usage_at_tool(
        &self,
        event: &HookEvent,
        project: &Project,
    ) -> Option<(context::ContextUsage, Option<u8>)> {
        if let Some(status) = fresh_status_line(event, project, self.now) {
            let usage = context::ContextUsage {
                used: status.used,
                window: Some(status.window),
                model: None,
            };
            return Some((usage, Some(status.percent)));
        }
        let transcript = event.transcript_path.as_deref()?;
        let usage = context::read_usage(event.agent, transcript)
            .ok()
            .flatten()?;
        Some((usage, None))
    }

    /// After a tool call, the continuity part: a `checkpoint-progress` skill or slash command
    /// logs its text, and a Gemini notice held back from `BeforeTool` is delivered.
    pub(super) fn post_tool_continuity(
        &self,
        event: &HookEvent,
        repo: &Repo,
    ) -> Result<Option<String>, GateError> {
        if let Some(text) = progress_from_tool(event) {
            self.log_progress(
                &event.cwd,
                &text,
                Some(session_ref(event)),
                ProgressSource::Skill,
            )?;
        }
        if event.agent != Agent::Gemini {
            return Ok(None);
        }
        let sessions = SessionStore::new(&self.state_dir(repo));
        if sessions
            .load(event.agent, session_id(event))?
            .pending_context
            .is_none()
        {
            return Ok(None);
        }
        Ok(sessions.update(event.agent, session_id(event), |record| {
            record.pending_context.take()
        })?)
    }

    /// `PreCompact` (Claude, Codex) and `PreCompress` (Gemini): a checkpoint before the context
    /// is summarised. Gemini's automatic `PreCompress` fires every turn; it only counts when the
    /// context is past Gemini's compression threshold. Never blocks.
    pub(super) fn pre_compact(&self, event: &HookEvent) -> Result<(), GateError> {
        check_cwd(event)?;
        let Some(project) = self.project(&event.cwd)? else {
            return Ok(());
        };
        let usage = event
            .transcript_path
            .as_deref()
            .and_then(|t| context::read_usage(event.agent, t).ok().flatten());
        let mark = usage.map(|u| measure(event, &u, project.policy.context.window));
        let automatic = event.detail.as_deref() != Some("manual");
        if event.agent == Agent::Gemini
            && automatic
            && mark.is_none_or(|m| m.percent < GEMINI_COMPRESSION_PERCENT)
        {
            return Ok(());
        }
        self.save_in(
            &project,
            SaveRequest {
                session: session_ref(event),
                trigger: Trigger::PreCompact,
                detail: event.detail.clone(),
                summary: reply_of(event),
                context: mark,
            },
            None,
        )?;
        Ok(())
    }

    /// `SessionEnd`: a checkpoint when `[clear] auto_checkpoint` is on. With `prompt` nothing
    /// can be asked any more; the returned warning says what to do.
    pub(super) fn session_end(&self, event: &HookEvent) -> Result<Option<String>, GateError> {
        check_cwd(event)?;
        let Some(project) = self.project(&event.cwd)? else {
            return Ok(None);
        };
        match project.policy.clear.auto_checkpoint {
            Switch::Off => Ok(None),
            Switch::Prompt => Ok(Some(
                "session ended without a checkpoint ([clear] auto_checkpoint = \"prompt\"); \
                 run `checkpoint save \"…\"` to keep the current state"
                    .to_owned(),
            )),
            Switch::On => {
                self.save_in(
                    &project,
                    SaveRequest {
                        session: session_ref(event),
                        trigger: Trigger::SessionEnd,
                        detail: event.detail.clone(),
                        summary: reply_of(event),
                        context: None,
                    },
                    None,
                )?;
                Ok(None)
            }
        }
    }

    /// An allowed stop: the session checkpoint a later `/clear` resumes from (Claude runs no hook
    /// before `/clear`). `[clear] auto_checkpoint = false` leaves it to the task journal;
    /// `"prompt"` saves nothing but returns, for the user, what changed since the last
    /// checkpoint when anything did.
    pub(super) fn stop_checkpoint(
        &self,
        event: &HookEvent,
        journal: &Journal,
        repo: &Repo,
        changes: Option<&ChangeSet>,
    ) -> Result<Option<String>, GateError> {
        let policy = journal.policy();
        let project = Project {
            repo: repo.clone(),
            state_dir: self.state_dir(repo),
            policy: policy.clone(),
        };
        match policy.clear.auto_checkpoint {
            Switch::Off => {
                journal.checkpoint_active(Trigger::Stop, None, self.now)?;
                Ok(None)
            }
            Switch::Prompt => {
                journal.checkpoint_active(Trigger::Stop, None, self.now)?;
                self.unsaved_work(&project)
            }
            Switch::On => {
                self.save_in(
                    &project,
                    SaveRequest {
                        session: session_ref(event),
                        trigger: Trigger::Stop,
                        detail: None,
                        summary: event.last_assistant_message.clone(),
                        context: None,
                    },
                    changes,
                )?;
                Ok(None)
            }
        }
    }

    /// "Work changed since last checkpoint: …" and what to do, when work changed since the
    /// project's latest checkpoint (or none was ever saved).
    fn unsaved_work(&self, project: &Project) -> Result<Option<String>, GateError> {
        const ASK: &str = "run `checkpoint save \"…\"` before /clear to keep it";
        let continuity = project.continuity();
        let Some(last) = continuity.latest(None)? else {
            return Ok(Some(format!("No checkpoint saved yet: {ASK}.")));
        };
        let work = diff::diff(
            &continuity,
            &project.repo,
            project.policy.git.backend,
            &last,
        )
        .map_err(|e| GateError::Diff(e.to_string()))?;
        Ok(work
            .changed()
            .then(|| format!("{} — {ASK}.", text::diff_line(&work, self.now))))
    }
}

/// The event's context usage against its window.
fn measure(
    event: &HookEvent,
    usage: &context::ContextUsage,
    configured: Option<u64>,
) -> ContextMark {
    let model = usage.model.as_deref().or(event.model.as_deref());
    let window = context::window(event.agent, model, usage, configured);
    ContextMark {
        used: usage.used,
        window,
        percent: usage.percent_of(window),
    }
}

/// The usage Claude's status line recorded for the event's session, when it is fresh.
fn fresh_status_line(
    event: &HookEvent,
    project: &Project,
    now: jiff::Timestamp,
) -> Option<StatusLineUsage> {
    if event.agent != Agent::Claude {
        return None;
    }
    let record = SessionStore::new(&project.state_dir)
        .load(event.agent, session_id(event))
        .ok()?;
    record
        .status_line
        .filter(|status| status.is_fresh(now, STATUS_LINE_FRESH))
}

/// The agent's last reply: from the payload when it has one (stops), else from the transcript's
/// tail.
fn reply_of(event: &HookEvent) -> Option<String> {
    event.last_assistant_message.clone().or_else(|| {
        let transcript = event.transcript_path.as_deref()?;
        context::last_reply(event.agent, transcript).ok().flatten()
    })
}

fn session_ref(event: &HookEvent) -> SessionRef {
    SessionRef {
        agent: event.agent,
        id: session_id(event).to_owned(),
    }
}

/// The text of a `checkpoint-progress` skill or slash command call: Claude's `Skill` tool
/// (`{"skill": name, "args": text}`) or `SlashCommand` (`{"command": "/name text"}`).
fn progress_from_tool(event: &HookEvent) -> Option<String> {
    let name = event.tool_name.as_deref()?;
    if !matches!(name, "Skill" | "SlashCommand") {
        return None;
    }
    let input = event.tool_input.as_ref()?;
    let invoked = ["skill", "command", "name"]
        .iter()
        .find_map(|key| input.get(*key).and_then(|v| v.as_str()))?
        .trim()
        .trim_start_matches('/');
    let (called, rest) = invoked
        .split_once(char::is_whitespace)
        .unwrap_or((invoked, ""));
    if called != PROGRESS_SKILL {
        return None;
    }
    let text = input
        .get("args")
        .and_then(|v| v.as_str())
        .unwrap_or(rest)
        .trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, input: serde_json::Value) -> HookEvent {
        HookEvent {
            tool_name: Some(name.into()),
            tool_input: Some(input),
            ..HookEvent::manual_stop("/repo".into())
        }
    }

    #[test]
    fn progress_skill_and_slash_command_calls_are_recognised() {
        let yes = [
            tool(
                "Skill",
                json!({"skill": "checkpoint-progress", "args": " schema done "}),
            ),
            tool(
                "SlashCommand",
                json!({"command": "/checkpoint-progress schema done"}),
            ),
            tool(
                "Skill",
                json!({"command": "checkpoint-progress", "args": "schema done"}),
            ),
        ];
        for event in &yes {
            assert_eq!(
                progress_from_tool(event).as_deref(),
                Some("schema done"),
                "{event:?}"
            );
        }
        let no = [
            tool("Skill", json!({"skill": "checkpoint-progress"})),
            tool("Skill", json!({"skill": "other", "args": "x"})),
            tool(
                "SlashCommand",
                json!({"command": "/checkpoint-progressive x"}),
            ),
            tool("Bash", json!({"command": "/checkpoint-progress x"})),
            tool("Skill", json!({"skill": 3})),
        ];
        for event in &no {
            assert_eq!(progress_from_tool(event), None, "{event:?}");
        }
    }
}
