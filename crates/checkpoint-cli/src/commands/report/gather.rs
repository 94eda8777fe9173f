//! Reads what the report shows: the sessions' records (their stops, context samples and
//! starts), the continuity log (checkpoints, progress), the task and what `verify` says of the
//! commits since the shown history began. Every list is bounded, so that the work done is too,
//! whatever the history's size.

use std::collections::{BTreeMap, HashSet};

use checkpoint_core::event::Agent;
use checkpoint_core::journal::Task;
use checkpoint_core::sanitize;
use checkpoint_engine::continuity::{ContinuityLog, SessionCheckpoint};
use checkpoint_engine::journal::verify;
use checkpoint_engine::project::Project;
use checkpoint_engine::session::StoredSession;
use jiff::Timestamp;

use super::model::{
    CheckpointMark, Commits, ProgressMark, Report, Session, StepView, Summary, TaskView, Thresholds,
};
use crate::agents;
use crate::commands::history;
use crate::commands::receipts::{ReceiptView, trusted_keys};
use crate::commands::verify::Signers;
use crate::error::CliError;
use crate::output;
use crate::schema::SCHEMA_VERSION;

/// Sessions shown at most (the latest).
const MAX_SESSIONS: usize = 20;
/// Receipts of the task shown at most (the latest).
const MAX_RECEIPTS: usize = 100;
/// History entries of the task shown at most (the latest).
const MAX_HISTORY: u64 = 200;
/// Commits `verify` is asked about at most (the newest).
const MAX_COMMITS: usize = 50;
/// Changed files named per checkpoint at most.
const MAX_FILES: usize = 10;
/// Characters of a text shown (a progress entry, a detail).
const TEXT_CHARS: usize = 300;

/// What to show.
#[derive(Debug, Default)]
pub(crate) struct Scope<'a> {
    /// Only this session.
    pub(crate) session: Option<&'a str>,
    /// This task rather than the active one; nothing from before it began.
    pub(crate) task: Option<&'a str>,
    /// Nothing before this.
    pub(crate) since: Option<Timestamp>,
}

/// The report on `project` within `scope`.
pub(crate) fn report(project: &Project, scope: &Scope) -> Result<Report, CliError> {
    let journal = project.journal();
    let task = match scope.task {
        Some(id) => Some(journal.resolve(Some(id))?),
        None => journal.active()?,
    };
    let since = match (&scope.task, &task) {
        (Some(_), Some(task)) => Some(
            scope
                .since
                .map_or(task.created_at, |s| s.max(task.created_at)),
        ),
        _ => scope.since,
    };
    let shown = |at: Timestamp| since.is_none_or(|since| at >= since);
    let records = project.sessions().latest(MAX_SESSIONS)?;
    let log = project.continuity().load()?;
    let mut sessions = sessions(records, &log, scope.session, &shown);
    if let Some(id) = scope.session
        && sessions.is_empty()
    {
        return Err(CliError::usage(
            format!(
                "no session {} in this worktree's records",
                sanitize::name(id)
            ),
            "run `checkpoint report` without --session to see the sessions there are",
        ));
    }
    sessions.sort_by_key(|s| s.span().map(|(first, _)| first));
    let commits = commits(project, &sessions, &log, task.as_ref());
    let shown: HashSet<(Agent, String)> =
        (sessions.iter()).map(|s| (s.agent, s.id.clone())).collect();
    let claims = history::gather(Some(project), &agents::HOMES, since, Some(&shown));
    let task = task.map(|task| task_view(project, task)).transpose()?;
    let context = &project.policy.context;
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        generated_at: project.host.now,
        worktree: project.git().map_or_else(
            |_| project.state_dir.display().to_string(),
            |repo| repo.workdir.display().to_string(),
        ),
        since,
        thresholds: Thresholds {
            warn: context.warn,
            critical: context.critical,
        },
        summary: Summary::of(&sessions),
        sessions,
        task,
        commits,
        claims,
    })
}

/// The sessions of `records` (and those only the log's checkpoints name), each with its
/// checkpoints and progress from `log`, what happened before `since` left out; only `only` when
/// given. Sessions with nothing left to show are dropped.
fn sessions(
    records: Vec<StoredSession>,
    log: &ContinuityLog,
    only: Option<&str>,
    shown: &impl Fn(Timestamp) -> bool,
) -> Vec<Session> {
    let mut by_key: BTreeMap<(String, String), Session> = BTreeMap::new();
    for stored in records {
        let record = stored.record;
        let session = entry(&mut by_key, stored.agent, &stored.id);
        session.stops = (record.stops.into_iter()).filter(|s| shown(s.at)).collect();
        session.context = (record.context.into_iter())
            .filter(|s| shown(s.at))
            .collect();
        session.starts = (record.starts.into_iter())
            .filter(|s| shown(s.at))
            .collect();
    }
    for checkpoint in log.checkpoints.iter().filter(|c| shown(c.at)) {
        let session = entry(
            &mut by_key,
            checkpoint.session.agent,
            &checkpoint.session.id,
        );
        session.checkpoints.push(mark(checkpoint));
    }
    for progress in log.progress.iter().filter(|p| shown(p.at)) {
        if let Some(of) = &progress.session {
            entry(&mut by_key, of.agent, &of.id)
                .progress
                .push(ProgressMark {
                    at: progress.at,
                    text: sanitize::line(&progress.text, TEXT_CHARS),
                });
        }
    }
    let mut sessions: Vec<Session> = (by_key.into_iter())
        .filter(|((_, id), _)| only.is_none_or(|only| only == id))
        .map(|(_, mut session)| {
            let mut turns: Vec<Option<Timestamp>> =
                session.stops.iter().map(|s| s.turn_began).collect();
            turns.dedup();
            session.turns = turns.len();
            session
        })
        .filter(|s| s.span().is_some())
        .collect();
    // The latest sessions, when the log names more than the records kept.
    sessions.sort_by_key(|s| std::cmp::Reverse(s.span().map(|(_, last)| last)));
    sessions.truncate(MAX_SESSIONS);
    sessions
}

/// The session of `agent` and `id` in `by_key`, added empty when it is not there yet.
fn entry<'m>(
    by_key: &'m mut BTreeMap<(String, String), Session>,
    agent: Agent,
    id: &str,
) -> &'m mut Session {
    (by_key.entry((agent.name().to_owned(), id.to_owned()))).or_insert_with(|| Session {
        agent,
        id: sanitize::name(id),
        turns: 0,
        stops: Vec::new(),
        context: Vec::new(),
        starts: Vec::new(),
        checkpoints: Vec::new(),
        progress: Vec::new(),
    })
}

/// A session checkpoint as the timeline marks it.
fn mark(checkpoint: &SessionCheckpoint) -> CheckpointMark {
    let text = |t: &Option<String>| t.as_deref().map(|t| sanitize::line(t, TEXT_CHARS));
    CheckpointMark {
        id: checkpoint.id,
        trigger: checkpoint.trigger,
        at: checkpoint.at,
        percent: checkpoint.context.map(|c| c.percent),
        detail: text(&checkpoint.detail),
        unresolved: text(&checkpoint.unresolved),
        files: (checkpoint.files.iter())
            .take(MAX_FILES)
            .map(|f| sanitize::name(&f.path))
            .collect(),
        more_files: checkpoint.more_files + checkpoint.files.len().saturating_sub(MAX_FILES),
    }
}

/// The task's steps, latest receipts (checked) and latest history.
fn task_view(project: &Project, task: Task) -> Result<TaskView, CliError> {
    let journal = project.journal();
    let trusted = trusted_keys(&journal)?;
    let from = task.history_len.saturating_sub(MAX_HISTORY);
    let history = journal.history(&task, from)?;
    let skip = task.receipts.len().saturating_sub(MAX_RECEIPTS);
    let receipts = (task.receipts[skip..].iter())
        .map(|r| ReceiptView::of(r, &task, &trusted))
        .collect();
    Ok(TaskView {
        id: sanitize::name(&task.id),
        name: sanitize::name(&task.name),
        state: task.state.name().to_owned(),
        created_at: task.created_at,
        steps: (task.steps.iter())
            .map(|s| StepView {
                name: sanitize::name(&s.name),
                status: s.status,
                attempt: s.attempt,
                failures: s.failures,
                validate: s.validate.as_deref().map(sanitize::name),
            })
            .collect(),
        receipts,
        receipts_total: task.receipts.len(),
        history,
        history_total: task.history_len,
    })
}

/// What `verify` says of the commits since the earliest one the shown history started from (a
/// stop's base, a checkpoint's `HEAD`) up to `HEAD`: the newest [`MAX_COMMITS`]. `None` outside
/// git or with nothing to start from; a failure is a warning, the report goes on without.
fn commits(
    project: &Project,
    sessions: &[Session],
    log: &ContinuityLog,
    task: Option<&Task>,
) -> Option<Commits> {
    let repo = project.git().ok()?;
    let stops =
        (sessions.iter().flat_map(|s| &s.stops)).filter_map(|s| Some((s.at, s.base.clone()?)));
    let shown: Vec<(&str, &str)> = sessions.iter().map(|s| (s.agent.name(), &*s.id)).collect();
    let checkpoints = (log.checkpoints.iter())
        .filter(|c| shown.contains(&(c.session.agent.name(), c.session.id.as_str())))
        .filter_map(|c| Some((c.at, c.head.clone()?)));
    let of_task = (task.into_iter().flat_map(|t| &t.checkpoints))
        .filter_map(|c| Some((c.at, c.vcs.as_ref()?.commit.clone()?)));
    let (_, start) = stops.chain(checkpoints).chain(of_task).min()?;
    let head = checkpoint_engine::git::base::head_commit(repo);
    let range = match head {
        Some(head) if head == start => "HEAD".to_owned(),
        _ => format!("{start}..HEAD"),
    };
    let checked = (|| -> Result<Commits, CliError> {
        let mut commits = verify::commits(repo, &range)?;
        commits.truncate(MAX_COMMITS);
        let signers = Signers::chosen(project, &range, None, None)?;
        let checks = project
            .journal()
            .verify_commits(commits, &signers.trusted)?;
        Ok(Commits {
            range: range.clone(),
            signers: signers.line(),
            checks,
        })
    })();
    checked
        .map_err(|e| output::warning(&format!("verify {range}: {}", e.message)))
        .ok()
}
