//! `current.json`: the few fields of a task that the hooks of every tool call need, so that
//! deciding on an interval checkpoint reads a few bytes instead of the task record.
//!
//! Written by the task's transactions after `hook.json`, only when it changes. A writer killed
//! between the two writes leaves it one transaction behind; the decision it feeds is checked again
//! against `hook.json` under the task's lock before anything is written, so a record behind at
//! worst delays one interval checkpoint until the next update rewrites it.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::state::TaskState;
use super::task::Task;

/// The file's name in the task's directory.
pub const FILE: &str = "current.json";

/// What the per-tool-call hooks need of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Current {
    /// Where the task is.
    pub state: TaskState,
    /// While a step runs: when its last checkpoint of this attempt was taken, else when the
    /// attempt started.
    pub since: Option<Timestamp>,
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
        Current {
            state: task.state,
            since,
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
