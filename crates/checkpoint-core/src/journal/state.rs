//! The task state machine: nine states, the events that move between them, and nothing else.
//!
//! ```text
//! initializing ─Ready─▶ step_pending ─StartStep─▶ step_running ─StartValidation─▶ step_validating
//!                           ▲  ▲                     │  ▲  ▲                          │
//!                           │  └──StepDone/StepFailed┘  │  └─ValidationPassed/Failed──┘
//!                           │                           └──StartStep── recovering, awaiting_human
//!                           └─Complete──▶ completed ◀─Complete── recovering
//! any unfinished state ─Crash─▶ recovering · ─AskHuman─▶ awaiting_human · ─Fail─▶ failed ·
//! ─Abandon─▶ abandoned
//! ```
//!
//! [`transition`] is total over `(state, event)` pairs: every pair is either the one next state
//! or an [`InvalidTransition`]. Guards that need more than the state (all steps done, attempts
//! left) live with the task operations in [`super::task`].

use serde::{Deserialize, Serialize};

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Created; its steps are being set up.
    Initializing,
    /// Waiting for the next step to start.
    StepPending,
    /// A step is being worked on.
    StepRunning,
    /// A step's validation command is running.
    StepValidating,
    /// Work is stopped until a human decides.
    AwaitingHuman,
    /// A crash was detected; the next step start resumes the work.
    Recovering,
    /// Every step is done and the task was completed.
    Completed,
    /// The task failed.
    Failed,
    /// The task was given up.
    Abandoned,
}

/// Something that happens to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskEvent {
    /// The steps are set up.
    Ready,
    /// A step starts (or resumes after a crash or a human's decision).
    StartStep,
    /// The current step's validation command starts.
    StartValidation,
    /// The validation command passed.
    ValidationPassed,
    /// The validation command failed.
    ValidationFailed,
    /// The current step is done.
    StepDone,
    /// The current step failed; it may be retried.
    StepFailed,
    /// A human has to decide how to go on.
    AskHuman,
    /// The task was found stale: its agent crashed or was killed.
    Crash,
    /// Every step is done; the task is finished.
    Complete,
    /// The task failed.
    Fail,
    /// The task is given up.
    Abandon,
}

/// An event that is not allowed in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot {} while the task is {}", .event.name(), .from.name())]
pub struct InvalidTransition {
    /// The state the task is in.
    pub from: TaskState,
    /// The refused event.
    pub event: TaskEvent,
}

impl TaskState {
    /// Every state, in lifecycle order.
    pub const ALL: [TaskState; 9] = [
        TaskState::Initializing,
        TaskState::StepPending,
        TaskState::StepRunning,
        TaskState::StepValidating,
        TaskState::AwaitingHuman,
        TaskState::Recovering,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Abandoned,
    ];

    /// The state's wire name, as in `hook.json`.
    pub fn name(self) -> &'static str {
        match self {
            TaskState::Initializing => "initializing",
            TaskState::StepPending => "step_pending",
            TaskState::StepRunning => "step_running",
            TaskState::StepValidating => "step_validating",
            TaskState::AwaitingHuman => "awaiting_human",
            TaskState::Recovering => "recovering",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Abandoned => "abandoned",
        }
    }

    /// Completed, failed or abandoned: nothing can happen to the task any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Abandoned
        )
    }
}

impl TaskEvent {
    /// Every event.
    pub const ALL: [TaskEvent; 12] = [
        TaskEvent::Ready,
        TaskEvent::StartStep,
        TaskEvent::StartValidation,
        TaskEvent::ValidationPassed,
        TaskEvent::ValidationFailed,
        TaskEvent::StepDone,
        TaskEvent::StepFailed,
        TaskEvent::AskHuman,
        TaskEvent::Crash,
        TaskEvent::Complete,
        TaskEvent::Fail,
        TaskEvent::Abandon,
    ];

    /// What the event does, as a verb phrase for messages.
    pub fn name(self) -> &'static str {
        match self {
            TaskEvent::Ready => "finish setting up",
            TaskEvent::StartStep => "start a step",
            TaskEvent::StartValidation => "start a validation",
            TaskEvent::ValidationPassed => "pass a validation",
            TaskEvent::ValidationFailed => "fail a validation",
            TaskEvent::StepDone => "finish a step",
            TaskEvent::StepFailed => "fail a step",
            TaskEvent::AskHuman => "ask a human",
            TaskEvent::Crash => "record a crash",
            TaskEvent::Complete => "complete the task",
            TaskEvent::Fail => "fail the task",
            TaskEvent::Abandon => "abandon the task",
        }
    }
}

/// The state `event` leads to from `from`, or why it cannot happen.
pub fn transition(from: TaskState, event: TaskEvent) -> Result<TaskState, InvalidTransition> {
    use TaskEvent as E;
    use TaskState as S;
    let next = match (from, event) {
        (S::Initializing, E::Ready) => S::StepPending,
        (S::StepPending | S::AwaitingHuman | S::Recovering, E::StartStep) => S::StepRunning,
        (S::StepRunning, E::StartValidation) => S::StepValidating,
        (S::StepValidating, E::ValidationPassed | E::ValidationFailed) => S::StepRunning,
        (S::StepRunning, E::StepDone | E::StepFailed) => S::StepPending,
        (S::StepPending | S::Recovering, E::Complete) => S::Completed,
        (s, E::AskHuman) if !s.is_terminal() && s != S::AwaitingHuman => S::AwaitingHuman,
        (s, E::Crash) if !s.is_terminal() && s != S::Recovering => S::Recovering,
        (s, E::Fail) if !s.is_terminal() => S::Failed,
        (s, E::Abandon) if !s.is_terminal() => S::Abandoned,
        _ => return Err(InvalidTransition { from, event }),
    };
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskEvent as E;
    use TaskState as S;

    /// Every allowed pair; all other pairs must be refused.
    const ALLOWED: &[(TaskState, TaskEvent, TaskState)] = &[
        (S::Initializing, E::Ready, S::StepPending),
        (S::Initializing, E::AskHuman, S::AwaitingHuman),
        (S::Initializing, E::Crash, S::Recovering),
        (S::Initializing, E::Fail, S::Failed),
        (S::Initializing, E::Abandon, S::Abandoned),
        (S::StepPending, E::StartStep, S::StepRunning),
        (S::StepPending, E::AskHuman, S::AwaitingHuman),
        (S::StepPending, E::Crash, S::Recovering),
        (S::StepPending, E::Complete, S::Completed),
        (S::StepPending, E::Fail, S::Failed),
        (S::StepPending, E::Abandon, S::Abandoned),
        (S::StepRunning, E::StartValidation, S::StepValidating),
        (S::StepRunning, E::StepDone, S::StepPending),
        (S::StepRunning, E::StepFailed, S::StepPending),
        (S::StepRunning, E::AskHuman, S::AwaitingHuman),
        (S::StepRunning, E::Crash, S::Recovering),
        (S::StepRunning, E::Fail, S::Failed),
        (S::StepRunning, E::Abandon, S::Abandoned),
        (S::StepValidating, E::ValidationPassed, S::StepRunning),
        (S::StepValidating, E::ValidationFailed, S::StepRunning),
        (S::StepValidating, E::AskHuman, S::AwaitingHuman),
        (S::StepValidating, E::Crash, S::Recovering),
        (S::StepValidating, E::Fail, S::Failed),
        (S::StepValidating, E::Abandon, S::Abandoned),
        (S::AwaitingHuman, E::StartStep, S::StepRunning),
        (S::AwaitingHuman, E::Crash, S::Recovering),
        (S::AwaitingHuman, E::Fail, S::Failed),
        (S::AwaitingHuman, E::Abandon, S::Abandoned),
        (S::Recovering, E::StartStep, S::StepRunning),
        (S::Recovering, E::AskHuman, S::AwaitingHuman),
        (S::Recovering, E::Complete, S::Completed),
        (S::Recovering, E::Fail, S::Failed),
        (S::Recovering, E::Abandon, S::Abandoned),
    ];

    #[test]
    fn every_state_event_pair_is_as_tabled() {
        let mut allowed = 0;
        for from in S::ALL {
            for event in E::ALL {
                let expected = ALLOWED
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|(_, _, to)| *to);
                match (transition(from, event), expected) {
                    (Ok(to), Some(want)) => {
                        assert_eq!(to, want, "{from:?} + {event:?}");
                        allowed += 1;
                    }
                    (Err(err), None) => assert_eq!(err, InvalidTransition { from, event }),
                    (got, want) => panic!("{from:?} + {event:?}: got {got:?}, want {want:?}"),
                }
            }
        }
        assert_eq!(allowed, ALLOWED.len());
        assert_eq!(S::ALL.len() * E::ALL.len(), 108);
    }

    #[test]
    fn terminal_states_accept_nothing() {
        for from in S::ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(E::ALL.into_iter().all(|e| transition(from, e).is_err()));
        }
    }

    #[test]
    fn names_match_the_wire_format() {
        for state in S::ALL {
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, format!("\"{}\"", state.name()));
        }
        let err = transition(S::Completed, E::StartStep).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot start a step while the task is completed"
        );
    }
}
