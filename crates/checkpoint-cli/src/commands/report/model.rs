//! What `checkpoint report` shows, as data: the page is rendered from it ([`super::html`]) and
//! `--json` prints it. Every text in it comes sanitized (no control or bidirectional-text
//! character, cut to a length); the page escapes it again.

use std::collections::BTreeMap;

use checkpoint_core::claim_history::History;
use checkpoint_core::event::Agent;
use checkpoint_core::journal::{HistoryEntry, StepStatus, Trigger};
use checkpoint_engine::journal::verify::CommitCheck;
use checkpoint_engine::session::activity::{ContextSample, StartEntry, StopEntry, StopVerdict};
use jiff::Timestamp;
use serde::Serialize;

use crate::commands::receipts::ReceiptView;

/// The whole report.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// [`crate::schema::SCHEMA_VERSION`].
    pub(crate) schema_version: u32,
    /// When it was made.
    pub(crate) generated_at: Timestamp,
    /// The worktree it is about.
    pub(crate) worktree: String,
    /// Nothing older than this is shown (`--since`, `--task`).
    pub(crate) since: Option<Timestamp>,
    /// The context watch's thresholds, in percent.
    pub(crate) thresholds: Thresholds,
    /// The numbers at the top.
    pub(crate) summary: Summary,
    /// The sessions, the earliest first.
    pub(crate) sessions: Vec<Session>,
    /// The task shown: the one named, else the active one.
    pub(crate) task: Option<TaskView>,
    /// What `verify` says of each commit since the earliest one the shown history started from.
    pub(crate) commits: Option<Commits>,
    /// The completion claims of the sessions shown, from their transcripts: what
    /// `checkpoint history` counts, over these sessions only.
    pub(crate) claims: History,
}

/// `[context] warn` and `critical`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Thresholds {
    /// A checkpoint and a notice from here.
    pub(crate) warn: u8,
    /// A checkpoint and an urgent notice from here.
    pub(crate) critical: u8,
}

/// The numbers at the top of the page, over the sessions shown.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Summary {
    pub(crate) sessions: usize,
    pub(crate) turns: usize,
    pub(crate) stops: usize,
    pub(crate) allowed: usize,
    pub(crate) blocked: usize,
    pub(crate) allowed_by_cap: usize,
    /// Blocked stops by the kind of their reason.
    pub(crate) blocks_by_reason: BTreeMap<String, usize>,
    /// Test commands that ran (not reused from the cache).
    pub(crate) test_runs: usize,
    /// Their time together, in milliseconds.
    pub(crate) test_time_ms: u64,
    /// Outcomes reused from the cache.
    pub(crate) cache_hits: usize,
    pub(crate) checkpoints: usize,
    /// Session starts that went on from a checkpoint.
    pub(crate) restarts: usize,
}

impl Summary {
    /// The numbers of `sessions`.
    pub(crate) fn of(sessions: &[Session]) -> Summary {
        let mut summary = Summary {
            sessions: sessions.len(),
            ..Summary::default()
        };
        for session in sessions {
            summary.turns += session.turns;
            summary.checkpoints += session.checkpoints.len();
            summary.restarts += (session.starts.iter())
                .filter(|s| s.resumed_from.is_some())
                .count();
            for stop in &session.stops {
                summary.stops += 1;
                match stop.verdict {
                    StopVerdict::Allowed => summary.allowed += 1,
                    StopVerdict::AllowedByCap => summary.allowed_by_cap += 1,
                    StopVerdict::Blocked => {
                        summary.blocked += 1;
                        let reason = stop.reason.clone().unwrap_or_else(|| "other".into());
                        *summary.blocks_by_reason.entry(reason).or_default() += 1;
                    }
                }
                for test in &stop.tests {
                    if test.cached {
                        summary.cache_hits += 1;
                    } else if test.duration_ms > 0 {
                        summary.test_runs += 1;
                        summary.test_time_ms += test.duration_ms;
                    }
                }
            }
        }
        summary
    }
}

/// One agent session.
#[derive(Debug, Serialize)]
pub(crate) struct Session {
    pub(crate) agent: Agent,
    pub(crate) id: String,
    /// Turns with a judged stop.
    pub(crate) turns: usize,
    pub(crate) stops: Vec<StopEntry>,
    pub(crate) context: Vec<ContextSample>,
    pub(crate) starts: Vec<StartEntry>,
    pub(crate) checkpoints: Vec<CheckpointMark>,
    pub(crate) progress: Vec<ProgressMark>,
}

impl Session {
    /// When its first and last recorded moments were.
    pub(crate) fn span(&self) -> Option<(Timestamp, Timestamp)> {
        let times = (self.stops.iter().map(|s| s.at))
            .chain(self.context.iter().map(|s| s.at))
            .chain(self.starts.iter().map(|s| s.at))
            .chain(self.checkpoints.iter().map(|c| c.at))
            .chain(self.progress.iter().map(|p| p.at));
        times.fold(None, |span, at| match span {
            None => Some((at, at)),
            Some((first, last)) => Some((first.min(at), last.max(at))),
        })
    }
}

/// A session checkpoint.
#[derive(Debug, Serialize)]
pub(crate) struct CheckpointMark {
    pub(crate) id: u64,
    pub(crate) trigger: Trigger,
    pub(crate) at: Timestamp,
    /// The context usage then, in percent, when known.
    pub(crate) percent: Option<u8>,
    pub(crate) detail: Option<String>,
    /// What the stop let through unresolved.
    pub(crate) unresolved: Option<String>,
    /// The first changed files.
    pub(crate) files: Vec<String>,
    /// Changed files beyond those.
    pub(crate) more_files: usize,
}

/// A progress entry logged in the session.
#[derive(Debug, Serialize)]
pub(crate) struct ProgressMark {
    pub(crate) at: Timestamp,
    pub(crate) text: String,
}

/// A task: its steps, receipts and latest history.
#[derive(Debug, Serialize)]
pub(crate) struct TaskView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) state: String,
    pub(crate) created_at: Timestamp,
    pub(crate) steps: Vec<StepView>,
    /// The latest receipts, checked against the trusted keys.
    pub(crate) receipts: Vec<ReceiptView>,
    pub(crate) receipts_total: usize,
    /// The latest history entries, oldest first.
    pub(crate) history: Vec<HistoryEntry>,
    pub(crate) history_total: u64,
}

/// One step of a task.
#[derive(Debug, Serialize)]
pub(crate) struct StepView {
    pub(crate) name: String,
    pub(crate) status: StepStatus,
    pub(crate) attempt: u32,
    pub(crate) failures: u32,
    pub(crate) validate: Option<String>,
}

/// `verify` over a range of commits.
#[derive(Debug, Serialize)]
pub(crate) struct Commits {
    /// The range, as `verify` takes it.
    pub(crate) range: String,
    /// The keys trusted, and where the listed ones come from.
    pub(crate) signers: String,
    /// Each commit, newest first.
    pub(crate) checks: Vec<CommitCheck>,
}
