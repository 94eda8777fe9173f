//! What a hook call answers, before any agent's wire format: a verdict on a stop, context for the
//! model, a notice for the user, or nothing. Each agent's home renders it in its own format (see
//! [`crate::home::AgentHome::render`]); every text it puts there is a [`sanitize::message`] —
//! nothing a terminal acts on, at most [`sanitize::MESSAGE_BYTES`] — which
//! [`StopAnswer::block_message`] and [`StopAnswer::user_message`] give for a stop.

use crate::decide::{AllowReason, Decision, Note};
use crate::sanitize;

/// The answer to one hook event. Not `non_exhaustive`: each agent's home matches on it, so a new
/// kind of answer does not build until every home renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// Nothing to say: the agent's no-op answer.
    Nothing,
    /// Text to add to the model's context (a resumed checkpoint, a context notice).
    Context(String),
    /// The verdict on an end of turn.
    Stop(StopAnswer),
    /// Text for the user, not the model, on any event (e.g. that the gate is off until its
    /// config is fixed).
    Notice(String),
}

/// The verdict on an end of turn, with its rendered text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopAnswer {
    /// The typed verdict.
    pub decision: Decision,
    /// The text for the agent (block) or the user (allow).
    pub message: String,
    /// Text for the user (not the agent), on any stop: the project's commands are not approved
    /// or changed (see `trust`), or, on an allowed stop, work not yet in a checkpoint with
    /// `[clear] auto_checkpoint = "prompt"`.
    pub notice: Option<String>,
}

impl StopAnswer {
    /// The text a user should see although the stop was allowed: the block cap was reached, the
    /// tests fail only from another session's files, the gate could not check everything, the tests were weakened (`[integrity] mode = "warn"`),
    /// or work is not in a checkpoint yet; on a block, only the
    /// [`notice`](StopAnswer::notice). `None` for ordinary allows and blocks.
    pub fn user_notice(&self) -> Option<String> {
        let notable = match &self.decision {
            Decision::Allow {
                reason: AllowReason::CapReached { .. } | AllowReason::TheirFailure { .. },
                ..
            } => true,
            decision => {
                decision.is_degraded()
                    || decision
                        .notes()
                        .iter()
                        .any(|n| matches!(n, Note::IntegrityWarning { .. }))
            }
        };
        let message = (notable && !self.message.is_empty()).then_some(self.message.as_str());
        let parts: Vec<&str> = message.into_iter().chain(self.notice.as_deref()).collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// On a block, the [`message`](StopAnswer::message) that keeps the agent working, as a
    /// [`sanitize::message`]; `None` when the stop is allowed.
    pub fn block_message(&self) -> Option<String> {
        self.decision
            .is_block()
            .then(|| sanitize::message(&self.message))
    }

    /// The [`user_notice`](StopAnswer::user_notice) as a [`sanitize::message`], what an agent's
    /// answer shows the user.
    pub fn user_message(&self) -> Option<String> {
        self.user_notice().map(|notice| sanitize::message(&notice))
    }
}
