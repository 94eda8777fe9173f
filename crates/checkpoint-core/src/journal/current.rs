//! `current.json`: the few fields of a task that the hooks of every tool call need, so that
//! deciding on an interval checkpoint reads a few bytes instead of the task record; and the
//! task's latest passing receipt of each command, so that a stop trusting a cached pass (see
//! the engine's `Journal::trusts_cached_pass`) reads a few kilobytes, not a `hook.json` of thousands
//! of file snapshots. A receipt proves itself (its signature, its key's certificate): one copied
//! here from elsewhere, or left here by an older transaction, proves no more than it says.
//!
//! Written by the task's transactions after `hook.json`, only when it changes. A writer killed
//! between the two writes leaves it one transaction behind; the decision it feeds is checked again
//! against `hook.json` under the task's lock before anything is written, so a record behind at
//! worst delays one interval checkpoint until the next update rewrites it.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::receipt::Receipt;
use super::signing::KeyCertificate;
use super::state::TaskState;
use super::task::Task;

/// The file's name in the task's directory.
pub const FILE: &str = "current.json";

/// How many of a task's latest receipts [`Current::of`] looks through for passes: a command
/// whose last pass is older is not held here (its check reads `hook.json`).
const RECENT_RECEIPTS: usize = 32;

/// What the per-tool-call hooks need of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Current {
    /// Where the task is.
    pub state: TaskState,
    /// While a step runs: when its last checkpoint of this attempt was taken, else when the
    /// attempt started.
    pub since: Option<Timestamp>,
    /// The latest passing receipt of each command among the task's latest receipts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<Receipt>,
    /// The certificates of the keys that signed `passes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<KeyCertificate>,
}

impl Current {
    /// `task`'s record.
    pub fn of(task: &Task) -> Current {
        let since = (task.state == TaskState::StepRunning)
            .then(|| {
                (task.last_step_checkpoint().map(|c| c.at))
                    .or_else(|| task.current().and_then(|s| s.started_at))
            })
            .flatten();
        let mut passes: Vec<(String, &Receipt)> = Vec::new();
        for receipt in task.receipts.iter().rev().take(RECENT_RECEIPTS) {
            let Ok(payload) = receipt.parsed() else {
                continue;
            };
            if payload.passed()
                && passes
                    .iter()
                    .all(|(command, _)| *command != payload.command)
            {
                passes.push((payload.command, receipt));
            }
        }
        let certificates = (task.certificates.iter())
            .filter(|c| {
                passes
                    .iter()
                    .any(|(_, r)| r.public_key.as_ref() == Some(&c.task_key))
            })
            .cloned()
            .collect();
        Current {
            state: task.state,
            since,
            passes: passes.into_iter().map(|(_, r)| r.clone()).collect(),
            certificates,
        }
    }

    /// Whether the running step has gone `interval` without a checkpoint (counting from its
    /// start).
    pub fn interval_due(&self, now: Timestamp, interval: Duration) -> bool {
        self.since.is_some_and(|since| {
            let elapsed = now.duration_since(since);
            !elapsed.is_negative() && elapsed.unsigned_abs() >= interval
        })
    }
}
