//! What a crash record says: where the agent was caught and the recommended way on. Kept apart
//! from the detection in [`super::recovery`] because the task record stores it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::checkpoint::StepRef;
use super::state::TaskState;

/// Where the agent was when it stopped updating the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashKind {
    /// No step had started yet.
    BeforeFirstStep,
    /// Between two steps.
    BetweenSteps,
    /// Working on a step.
    InStep,
    /// A validation command was running.
    InValidation,
    /// Waiting for a human.
    AwaitingHuman,
}

impl CrashKind {
    /// One phrase for hook.md and the history.
    pub fn describe(self) -> &'static str {
        match self {
            CrashKind::BeforeFirstStep => "interrupted before the first step",
            CrashKind::BetweenSteps => "interrupted between steps",
            CrashKind::InStep => "interrupted in a step",
            CrashKind::InValidation => "interrupted during a validation",
            CrashKind::AwaitingHuman => "stopped while waiting for a human",
        }
    }
}

/// What the agent should do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum RecoveryAction {
    /// Start the step again from its beginning (its earlier work may be incomplete).
    RetryStep {
        /// The step.
        step: String,
    },
    /// Continue the step from the checkpoint.
    ResumeFromCheckpoint {
        /// The step.
        step: String,
        /// The checkpoint's id.
        checkpoint: u64,
    },
    /// Start the next step.
    StartStep {
        /// The step.
        step: String,
    },
    /// Every step is done: complete the task.
    CompleteTask,
    /// A human has to decide.
    Manual,
}

impl RecoveryAction {
    /// One phrase for hook.md and the history.
    pub fn describe(&self) -> String {
        match self {
            RecoveryAction::RetryStep { step } => format!("retry step {step:?}"),
            RecoveryAction::ResumeFromCheckpoint { step, checkpoint } => {
                format!("resume step {step:?} from checkpoint #{checkpoint}")
            }
            RecoveryAction::StartStep { step } => format!("start step {step:?}"),
            RecoveryAction::CompleteTask => "complete the task".to_owned(),
            RecoveryAction::Manual => "ask a human".to_owned(),
        }
    }
}

/// A recorded crash and the recommended way on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    /// When the crash was detected.
    pub detected_at: Timestamp,
    /// The task's last update before it.
    pub last_update: Timestamp,
    /// The state the task was in.
    pub state_before: TaskState,
    /// Where the agent was.
    pub kind: CrashKind,
    /// What to do.
    pub action: RecoveryAction,
    /// The step it was in, if any.
    pub step: Option<StepRef>,
    /// Files of the step whose content changed since the last checkpoint.
    pub changed_since_checkpoint: Vec<String>,
}
