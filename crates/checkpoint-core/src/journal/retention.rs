//! Retention: finished tasks are removed by end state and age; unfinished tasks never are.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::state::TaskState;
use super::task::Task;
use crate::policy::JournalSettings;

/// A task that `checkpoint cleanup` removes (or would remove, with `--dry-run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// The task's id.
    pub task_id: String,
    /// Its name.
    pub name: String,
    /// How it ended.
    pub state: TaskState,
    /// When it ended (its last update).
    pub ended_at: Timestamp,
}

/// How long a task that ended in `state` is kept; `None` for unfinished states.
pub fn retention(state: TaskState, settings: &JournalSettings) -> Option<Duration> {
    match state {
        TaskState::Completed => Some(settings.retention_completed),
        TaskState::Failed => Some(settings.retention_failed),
        TaskState::Abandoned => Some(settings.retention_abandoned),
        _ => None,
    }
}

/// The removal of `task` if it is finished and older than its state's retention at `now`.
pub fn expired(task: &Task, now: Timestamp, settings: &JournalSettings) -> Option<Removal> {
    let keep = retention(task.state, settings)?;
    let age = now.duration_since(task.updated_at);
    (!age.is_negative() && age.unsigned_abs() >= keep).then(|| Removal {
        task_id: task.id.clone(),
        name: task.name.clone(),
        state: task.state,
        ended_at: task.updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::task::StepSpec;

    const DAY: i64 = 86_400;

    fn task_in(state: TaskState) -> Task {
        let spec = StepSpec {
            name: "a".into(),
            validate: None,
        };
        let mut task =
            Task::new("t".into(), "n".into(), vec![spec], Timestamp::UNIX_EPOCH).unwrap();
        task.state = state;
        task
    }

    #[test]
    fn only_finished_tasks_past_their_retention_expire() {
        let settings = JournalSettings::default();
        let at = |days: i64| Timestamp::from_second(days * DAY).unwrap();
        for (state, keep_days) in [
            (TaskState::Completed, 30),
            (TaskState::Failed, 7),
            (TaskState::Abandoned, 7),
        ] {
            let task = task_in(state);
            assert_eq!(
                expired(
                    &task,
                    at(keep_days) - jiff::SignedDuration::from_secs(1),
                    &settings
                ),
                None
            );
            assert_eq!(
                expired(&task, at(keep_days), &settings).unwrap().state,
                state
            );
        }
        for state in TaskState::ALL.into_iter().filter(|s| !s.is_terminal()) {
            assert_eq!(
                expired(&task_in(state), at(10_000), &settings),
                None,
                "{state:?}"
            );
        }
    }
}
