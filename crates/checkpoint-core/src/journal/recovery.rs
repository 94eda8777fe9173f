//! Crash detection: a task that is not finished and was not updated for the stale threshold has
//! lost its agent. [`classify`] says where it was caught, [`recommend`] what to do about it.

use std::time::Duration;

use jiff::Timestamp;

use super::state::TaskState;
use super::task::Task;

pub use super::crash::{CrashKind, Recovery, RecoveryAction};

/// Whether the task has been idle for at least `threshold` at `now` while not finished.
pub fn is_stale(task: &Task, now: Timestamp, threshold: Duration) -> bool {
    let idle = now.duration_since(task.updated_at);
    !task.state.is_terminal() && idle.unsigned_abs() >= threshold && !idle.is_negative()
}

/// Where a stale task was caught; `None` when it is not stale, finished or already recovering.
pub fn classify(task: &Task, now: Timestamp, threshold: Duration) -> Option<CrashKind> {
    if !is_stale(task, now, threshold) {
        return None;
    }
    let started_any = task.steps.iter().any(|s| s.attempt > 0);
    match task.state {
        TaskState::Initializing => Some(CrashKind::BeforeFirstStep),
        TaskState::StepPending if started_any => Some(CrashKind::BetweenSteps),
        TaskState::StepPending => Some(CrashKind::BeforeFirstStep),
        TaskState::StepRunning => Some(CrashKind::InStep),
        TaskState::StepValidating => Some(CrashKind::InValidation),
        TaskState::AwaitingHuman => Some(CrashKind::AwaitingHuman),
        TaskState::Recovering | TaskState::Completed | TaskState::Failed | TaskState::Abandoned => {
            None
        }
    }
}

/// The recommended action for a crash of `kind`.
pub fn recommend(task: &Task, kind: CrashKind) -> RecoveryAction {
    let current = task.current().map(|s| s.name.clone());
    match (kind, current) {
        (CrashKind::AwaitingHuman, _) => RecoveryAction::Manual,
        (CrashKind::InStep, Some(step)) => match task.last_step_checkpoint() {
            Some(checkpoint) => RecoveryAction::ResumeFromCheckpoint {
                step,
                checkpoint: checkpoint.id,
            },
            None => RecoveryAction::RetryStep { step },
        },
        (CrashKind::InValidation, Some(step)) => RecoveryAction::RetryStep { step },
        _ => match task.next_step() {
            Some((_, step)) if step.failures > 0 => RecoveryAction::RetryStep {
                step: step.name.clone(),
            },
            Some((_, step)) => RecoveryAction::StartStep {
                step: step.name.clone(),
            },
            None => RecoveryAction::CompleteTask,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::checkpoint::{Checkpoint, Trigger};
    use crate::journal::task::StepSpec;

    const MIN: Duration = Duration::from_secs(60);

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    fn task() -> Task {
        let specs = ["a", "b"]
            .map(|name| StepSpec {
                name: name.into(),
                validate: None,
            })
            .to_vec();
        Task::new("t".into(), "n".into(), specs, at(0)).unwrap()
    }

    #[test]
    fn staleness_needs_the_full_threshold() {
        let t = task();
        assert!(!is_stale(&t, at(59), MIN));
        assert!(is_stale(&t, at(60), MIN));
        assert!(!is_stale(&t, at(-100), MIN));
        assert_eq!(classify(&t, at(59), MIN), None);
        assert_eq!(classify(&t, at(60), MIN), Some(CrashKind::BeforeFirstStep));
    }

    #[test]
    fn classification_and_action_follow_the_state() {
        let mut t = task();
        assert_eq!(
            recommend(&t, CrashKind::BeforeFirstStep),
            RecoveryAction::StartStep { step: "a".into() }
        );
        t.start_step(None, at(1)).unwrap();
        assert_eq!(classify(&t, at(100), MIN), Some(CrashKind::InStep));
        assert_eq!(
            recommend(&t, CrashKind::InStep),
            RecoveryAction::RetryStep { step: "a".into() }
        );
        let checkpoint = Checkpoint {
            id: 0,
            trigger: Trigger::Manual,
            at: at(2),
            step: t.current_ref(),
            vcs: None,
            files: Vec::new(),
            more_files: 0,
            message: None,
        };
        t.add_checkpoint(checkpoint, 50);
        assert_eq!(
            recommend(&t, CrashKind::InStep),
            RecoveryAction::ResumeFromCheckpoint {
                step: "a".into(),
                checkpoint: 1
            }
        );
        t.start_validation("true", at(3)).unwrap();
        assert_eq!(classify(&t, at(100), MIN), Some(CrashKind::InValidation));
        assert_eq!(
            recommend(&t, CrashKind::InValidation),
            RecoveryAction::RetryStep { step: "a".into() }
        );
        t.fail(None, at(4)).unwrap();
        assert_eq!(classify(&t, at(1000), MIN), None);
    }

    #[test]
    fn between_steps_and_after_the_last() {
        let mut t = task();
        t.start_step(None, at(1)).unwrap();
        t.finish_step(None, at(2)).unwrap();
        assert_eq!(classify(&t, at(100), MIN), Some(CrashKind::BetweenSteps));
        assert_eq!(
            recommend(&t, CrashKind::BetweenSteps),
            RecoveryAction::StartStep { step: "b".into() }
        );
        t.start_step(None, at(3)).unwrap();
        t.fail_step(None, at(4)).unwrap();
        assert_eq!(
            recommend(&t, CrashKind::BetweenSteps),
            RecoveryAction::RetryStep { step: "b".into() }
        );
        t.start_step(None, at(5)).unwrap();
        t.finish_step(None, at(6)).unwrap();
        assert_eq!(
            recommend(&t, CrashKind::BetweenSteps),
            RecoveryAction::CompleteTask
        );
        assert_eq!(
            recommend(&t, CrashKind::AwaitingHuman),
            RecoveryAction::Manual
        );
    }
}
