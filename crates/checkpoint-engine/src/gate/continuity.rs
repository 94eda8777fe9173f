//! The gate's continuity half: the context watch before tool calls, progress and interval
//! checkpoints after them, session checkpoints before context is lost, and the restart context
//! a new session starts with.

use std::time::Duration;

use crate::context;
use crate::continuity::ContextMark;
use crate::continuity::ProgressSource;
use crate::continuity::text::{self, Level};
use crate::journal::{self};
use crate::project::saving::SaveRequest;
use crate::project::{Project, ProjectError};
use crate::session::activity::{ContextSample, StartEntry};
use crate::session::{STATUS_LINE_FRESH, StatusLineUsage};
use checkpoint_core::agent::TranscriptFormat;
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::event::{EventKind, HookEvent};
use checkpoint_core::journal::{Trigger, is_pr_creation};
use checkpoint_core::policy::Switch;

use super::call::Call;

/// No second checkpoint with the same context trigger in one session within this time.
pub const CONTEXT_CHECKPOINT_GAP: Duration = Duration::from_secs(5 * 60);
/// The name of the skill and slash command that logs progress.
pub const PROGRESS_SKILL: &str = "checkpoint-progress";

/// `SessionStart`: the latest checkpoint signed by this user's key, injected as `[resume] auto`
/// says (see [`Project::resume_context`]); and, once, that a continuity log that did not parse
/// was set aside — for the user, or after the context when there is one. Housekeeps the state
/// directory first ([`Project::housekeep`]: at most daily; a failure is a warning).
pub(super) fn session_start(
    call: &Call,
    warnings: &mut Vec<String>,
) -> Result<HookAnswer, ProjectError> {
    let event = call.event;
    let Some(project) = call.project()? else {
        return Ok(HookAnswer::Nothing);
    };
    if let Err(e) = project.housekeep() {
        warnings.push(format!("housekeeping: {e}"));
    }
    super::turn::base_at_session_start(call, &project)?;
    // Best effort: without a first look, the session's next look claims every change.
    let _ = super::sharing::first_look(call, project.git()?, &project.state_dir);
    let session = call.session();
    // Only a resumed session has checkpoints of its own worth preferring.
    let prefer = (event.detail.as_deref() == Some("resume")).then_some(&session);
    let continuity = project.continuity();
    let (context, from) = match project.policy.resume.auto {
        Switch::Off => (None, None),
        Switch::Prompt => match continuity.resume_point(prefer)?.checkpoint {
            Some(c) => (Some(text::resume_offer(&c, call.host.now)), Some(c.id)),
            None => (None, None),
        },
        Switch::On => {
            let restart = project.resume_context(event.detail.as_deref(), prefer, true)?;
            (restart.context, restart.from)
        }
    };
    let start = StartEntry {
        at: call.host.now,
        source: event.detail.clone(),
        resumed_from: from,
    };
    (project.sessions()).update(event.agent, call.session_id(), |record| {
        record.record_start(start)
    })?;
    let set_aside = continuity.untold_corrupt_log();
    let set_aside = set_aside.map(|path| text::corrupt_log_notice(&path));
    let context = match (context, set_aside) {
        (None, Some(notice)) => return Ok(HookAnswer::Notice(notice)),
        (Some(context), Some(notice)) => Some(format!("{context}\n\n{notice}")),
        (context, None) => context,
    };
    // An agent that shows a `SessionStart(clear)` answer to the user only gets the context with
    // the next prompt instead.
    if !call.can().context_after_clear && event.detail.as_deref() == Some("clear") {
        project
            .sessions()
            .update(event.agent, call.session_id(), |record| {
                record.pending_context = context
            })?;
        return Ok(HookAnswer::Nothing);
    }
    Ok(context.map_or(HookAnswer::Nothing, HookAnswer::Context))
}

/// At a tool call: measures the context (the usage the payload reports, for an agent that sends
/// it; else the agent's fresh status line, else the transcript's tail); past `[context] warn` or
/// `critical`, saves a checkpoint (at most one per trigger and session within
/// [`CONTEXT_CHECKPOINT_GAP`]) and returns the notice for the agent. An agent that cannot take
/// context before a tool runs gets its notice with the tool's result. An agent with neither a
/// transcript format nor usage in its payloads has no context watch; nor does a usage with no
/// window known.
pub(super) fn context_watch(call: &Call) -> Result<Option<String>, ProjectError> {
    let event = call.event;
    let format = call.home.transcript();
    // Nothing to measure: no configuration is loaded.
    let reported = call.can().usage_in_payload && event.context_usage.is_some();
    if format.is_none() && !reported {
        return Ok(None);
    }
    let Some(project) = call.project()? else {
        return Ok(None);
    };
    let Some((usage, shown)) = usage_at_tool(call, &project, format) else {
        return Ok(None);
    };
    let settings = &project.policy.context;
    let Some(mut mark) = measure(format, event, &usage, settings.window) else {
        return Ok(None);
    };
    if let Some(percent) = shown.filter(|_| settings.window.is_none()) {
        mark.percent = percent;
    }
    record_sample(call, &project, &mark)?;
    let (trigger, level) = if mark.percent >= settings.critical {
        (Trigger::Auto90, Level::Critical)
    } else if mark.percent >= settings.warn {
        (Trigger::Auto80, Level::Warn)
    } else {
        return Ok(None);
    };
    let session = call.session();
    if project.continuity().saved_recently(
        &session,
        trigger,
        call.host.now,
        CONTEXT_CHECKPOINT_GAP,
    )? {
        return Ok(None);
    }
    project.save_session(SaveRequest {
        session,
        trigger,
        detail: None,
        summary: call.reply(&project),
        context: Some(mark),
        unresolved: None,
    })?;
    let notice = text::context_notice(&mark, level);
    // After the tool (a watch that runs there) the notice goes with its result.
    if event.kind == EventKind::PreTool && !call.can().context_before_tool {
        project
            .sessions()
            .update(event.agent, call.session_id(), |record| {
                record.pending_context = Some(notice)
            })?;
        return Ok(None);
    }
    Ok(Some(notice))
}

/// The context usage at a tool call, and the percentage the agent showed for it: what the
/// payload reports, for an agent that sends it; else from its status line when `checkpoint
/// statusline` recorded it less than [`STATUS_LINE_FRESH`] ago; else from the transcript's tail.
fn usage_at_tool(
    call: &Call,
    project: &Project,
    format: Option<&dyn TranscriptFormat>,
) -> Option<(context::ContextUsage, Option<u8>)> {
    if call.can().usage_in_payload {
        let reported = call.event.context_usage?;
        let usage = context::ContextUsage {
            used: reported.used,
            window: reported.window,
            model: None,
        };
        return Some((usage, None));
    }
    if let Some(status) = fresh_status_line(call, project) {
        let usage = context::ContextUsage {
            used: status.used,
            window: Some(status.window),
            model: None,
        };
        return Some((usage, Some(status.percent)));
    }
    let transcript = call.event.transcript_path.as_deref()?;
    let memo = context::memo_path(&project.state_dir);
    let usage = context::read_tail(format?, transcript, Some(&memo))
        .ok()?
        .usage?;
    Some((usage, None))
}

/// After a tool call: progress logged by the skill and a held-back context notice; then a pull
/// request being created checkpoints the active task, otherwise a long step gets its interval
/// checkpoint when one is due.
pub(super) fn post_tool(call: &Call) -> Result<Option<String>, ProjectError> {
    let event = call.event;
    let Ok(Some(repo)) = call.host.locate(&event.cwd) else {
        return Ok(None);
    };
    let state_dir = call.host.state_dir(&repo)?;
    let tool = event.tool_name.as_deref();
    super::prewarm::after_tool(tool, &repo.workdir, &state_dir, &call.host.project_env);
    let read_only = super::prewarm::is_read_only(tool);
    // Best effort: a claim not recorded is taken by the session's next look, or its stop's.
    let _ = super::sharing::after_tool(call, &repo, &state_dir, read_only);
    let mut context = post_tool_continuity(call, &state_dir)?;
    // An agent may write the reply that asked for the tool only after the pre-tool hook ran: by
    // now it is in the transcript, so a threshold crossed by that reply is caught here. An
    // agent that reports the usage with the tool's result is watched here.
    let can = call.can();
    if context.is_none() && (can.reply_written_after_pre_tool || can.usage_in_payload) {
        context = context_watch(call)?;
    }
    // A note, never a verdict: what keeps it from being made (a broken setting) is the stop's
    // to report.
    if let Some(note) = super::nudge::after_tool(call, &repo).ok().flatten() {
        context = Some(match context {
            Some(before) => format!("{before}\n\n{note}"),
            None => note,
        });
    }
    // Most tool calls happen with no task: answer them before loading any configuration.
    if !journal::names_active_task(&state_dir) {
        return Ok(context);
    }
    let project = call.host.project(repo)?;
    let journal = project.journal();
    let now = call.host.now;
    let pr_command = match (&event.tool_name, &event.tool_input) {
        (Some(name), Some(input)) if is_pr_creation(name, input) => {
            Some(input["command"].to_string())
        }
        _ => None,
    };
    match pr_command {
        Some(command) => journal.checkpoint_active(Trigger::Pr, Some(command), now, None),
        None => journal.maybe_interval_checkpoint(now, None),
    }?;
    Ok(context)
}

/// After a tool call, the continuity part: a `checkpoint-progress` skill or slash command logs
/// its text, and a notice held back from before the tool (for an agent that cannot take context
/// there) is delivered.
fn post_tool_continuity(
    call: &Call,
    state_dir: &std::path::Path,
) -> Result<Option<String>, ProjectError> {
    let event = call.event;
    if let Some(text) = progress_from_tool(event) {
        call.host.require_git_project(&event.cwd)?.log_progress(
            &text,
            Some(call.session()),
            ProgressSource::Skill,
        )?;
    }
    if call.can().context_before_tool {
        return Ok(None);
    }
    let sessions = crate::session::SessionStore::new(state_dir);
    if sessions
        .load(event.agent, call.session_id())?
        .pending_context
        .is_none()
    {
        return Ok(None);
    }
    Ok(sessions.update(event.agent, call.session_id(), |record| {
        record.pending_context.take()
    })?)
}

/// Before compaction: a checkpoint before the context is summarised. An agent whose automatic
/// compaction event fires every turn has a
/// [`compaction_threshold`](checkpoint_core::agent::Capabilities::compaction_threshold): the event only
/// counts when the context is past it. Never blocks.
pub(super) fn pre_compact(call: &Call) -> Result<(), ProjectError> {
    let event = call.event;
    let Some(project) = call.project()? else {
        return Ok(());
    };
    let format = call.home.transcript();
    let mark = event
        .transcript_path
        .as_deref()
        .zip(format)
        .and_then(|(t, format)| {
            let memo = context::memo_path(&project.state_dir);
            let usage = context::read_tail(format, t, Some(&memo)).ok()?.usage?;
            measure(Some(format), event, &usage, project.policy.context.window)
        });
    if let Some(mark) = &mark {
        record_sample(call, &project, mark)?;
    }
    let automatic = event.detail.as_deref() != Some("manual");
    if let Some(threshold) = call.can().compaction_threshold
        && automatic
        && mark.is_none_or(|m| m.percent < threshold)
    {
        return Ok(());
    }
    project.save_session(SaveRequest {
        session: call.session(),
        trigger: Trigger::PreCompact,
        detail: event.detail.clone(),
        summary: call.reply(&project),
        context: mark,
        unresolved: None,
    })?;
    Ok(())
}

/// `SessionEnd`: a checkpoint when `[clear] auto_checkpoint` is on. With `prompt` nothing can be
/// asked any more; the returned warning says what to do.
pub(super) fn session_end(call: &Call) -> Result<Option<String>, ProjectError> {
    let Some(project) = call.project()? else {
        return Ok(None);
    };
    // Best effort: a session not marked ended stops being live 30 minutes on.
    let _ = super::sharing::ended(call, &project.state_dir);
    match project.policy.clear.auto_checkpoint {
        Switch::Off => Ok(None),
        Switch::Prompt => Ok(Some(
            "session ended without a checkpoint ([clear] auto_checkpoint = \"prompt\"); \
             run `checkpoint save \"…\"` to keep the current state"
                .to_owned(),
        )),
        Switch::On => {
            project.save_session(SaveRequest {
                session: call.session(),
                trigger: Trigger::SessionEnd,
                detail: call.event.detail.clone(),
                summary: call.reply(&project),
                context: None,
                unresolved: None,
            })?;
            Ok(None)
        }
    }
}

/// An allowed stop: the session checkpoint a later `/clear` resumes from (agents run no hook
/// before `/clear`). `[clear] auto_checkpoint = false` leaves it to the task journal; `"prompt"`
/// saves nothing but returns, for the user, what changed since the last checkpoint when anything
/// did.
///
/// A stop that would save what the session's last allowed stop saved — the same change
/// `fingerprint`, reply, unresolved text and mode, with nothing saved to the checkpoint refs
/// since (the session record's [`stop_mark`](crate::session::SessionRecord::stop_mark)) — saves
/// nothing: an agent answering questions over unchanged work does not grow the journal by a
/// copy per turn.
pub(super) fn stop_checkpoint(
    call: &Call,
    project: &Project,
    changes: Option<&ChangeSet>,
    fingerprint: Option<&str>,
    unresolved: Option<String>,
) -> Result<Option<String>, ProjectError> {
    let now = call.host.now;
    // A stop let through with something unresolved is always recorded, for a person to see.
    let mode = match unresolved {
        Some(_) => Switch::On,
        None => project.policy.clear.auto_checkpoint,
    };
    let summary = call.reply(project);
    let sessions = project.sessions();
    let mark = || {
        let inputs = (fingerprint?, &summary, &unresolved, format!("{mode:?}"));
        stop_mark(project, inputs)
    };
    let before = mark();
    let last = sessions
        .load(call.event.agent, &call.gate_session())?
        .stop_mark;
    if before.is_none() || before != last {
        match mode {
            Switch::Off | Switch::Prompt => {
                (project.journal()).checkpoint_active(Trigger::Stop, None, now, changes)?;
            }
            Switch::On => {
                let request = SaveRequest {
                    session: call.session(),
                    trigger: Trigger::Stop,
                    detail: None,
                    summary: summary.clone(),
                    context: None,
                    unresolved: unresolved.clone(),
                };
                project.save_with(request, changes)?;
            }
        }
        let after = mark();
        sessions.update(call.event.agent, &call.gate_session(), |record| {
            record.stop_mark = after
        })?;
    }
    match mode {
        Switch::Prompt => project.unsaved_work(),
        Switch::Off | Switch::On => Ok(None),
    }
}

/// The [`stop_mark`](crate::session::SessionRecord::stop_mark) of a stop whose checkpoints are
/// made of `inputs`, with the checkpoint refs where they stand now; `None` when that cannot be
/// read (the stop then saves).
fn stop_mark(project: &Project, inputs: impl serde::Serialize) -> Option<String> {
    let sessions = project.continuity().head().ok()?;
    let task = project.journal().active_head().ok()?;
    let heads = (
        sessions.map(|h| h.to_string()),
        task.map(|(id, head)| (id, head.map(|h| h.to_string()))),
    );
    let bytes = serde_json::to_vec(&(inputs, heads)).ok()?;
    Some(checkpoint_core::hex::sha256_hex(&bytes))
}

/// The event's context usage against its window; `None` when no window is known (no setting,
/// none reported, and no transcript format to give a default).
fn measure(
    format: Option<&dyn TranscriptFormat>,
    event: &HookEvent,
    usage: &context::ContextUsage,
    configured: Option<u64>,
) -> Option<ContextMark> {
    let model = usage.model.as_deref().or(event.model.as_deref());
    let window = context::window(format, model, usage, configured)?;
    Some(ContextMark {
        used: usage.used,
        window,
        percent: usage.percent_of(window),
    })
}

/// Keeps `mark` among the session's context samples for `checkpoint report` when its
/// percentage moved since the last one kept (an appended line, see
/// [`crate::session::SessionStore::record_sample`]).
fn record_sample(call: &Call, project: &Project, mark: &ContextMark) -> Result<(), ProjectError> {
    let sample = ContextSample {
        at: call.host.now,
        percent: mark.percent,
        used: mark.used,
        window: mark.window,
    };
    let (agent, id) = (call.event.agent, call.session_id());
    Ok(project.sessions().record_sample(agent, id, sample)?)
}

/// The usage the agent's status line recorded for the event's session, when it is fresh.
fn fresh_status_line(call: &Call, project: &Project) -> Option<StatusLineUsage> {
    if !call.can().status_line {
        return None;
    }
    let record = project
        .sessions()
        .load(call.event.agent, call.session_id())
        .ok()?;
    record
        .status_line
        .filter(|status| status.is_fresh(call.host.now, STATUS_LINE_FRESH))
}

/// The text of a `checkpoint-progress` skill or slash command call: Claude's `Skill` tool
/// (`{"skill": name, "args": text}`) or `SlashCommand` (`{"command": "/name text"}`); the name is
/// `checkpoint:checkpoint-progress` when the skill comes with the `checkpoint` plugin.
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
    // From the Claude Code plugin, the skill is `checkpoint:checkpoint-progress`.
    let called = called.strip_prefix("checkpoint:").unwrap_or(called);
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
        let mut event = HookEvent::manual_stop("/repo".into());
        event.tool_name = Some(name.into());
        event.tool_input = Some(input);
        event
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
            // The skill of the Claude Code plugin.
            tool(
                "Skill",
                json!({"skill": "checkpoint:checkpoint-progress", "args": "schema done"}),
            ),
            tool(
                "SlashCommand",
                json!({"command": "/checkpoint:checkpoint-progress schema done"}),
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
            tool(
                "Skill",
                json!({"skill": "other:checkpoint-progress", "args": "x"}),
            ),
        ];
        for event in &no {
            assert_eq!(progress_from_tool(event), None, "{event:?}");
        }
    }
}
