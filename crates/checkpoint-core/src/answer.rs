//! What a hook call answers, before any agent's wire format: a verdict on a stop, context for the
//! model, or nothing. Each agent's home renders it (see [`crate::home::AgentHome::render`]).

use serde_json::{Value, json};

use crate::decide::{AllowReason, Decision, Note};
use crate::sanitize;

/// The answer to one hook event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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

impl HookAnswer {
    /// The answer in the JSON shape Claude Code's hooks introduced and Gemini CLI and Codex read
    /// too, with the agent's own word for a block: `{"decision": <block_word>, "reason": …}` on a
    /// block (with a `systemMessage` when the user should hear something too, e.g. that the
    /// project's commands are not approved), `{"systemMessage": …}` when the user should hear
    /// about an allowed stop,
    /// `hookSpecificOutput.additionalContext` under the event's wire name for context,
    /// `{"systemMessage": …}` for a notice; `None`
    /// (the agent's no-op) otherwise. Every text in it is a [`sanitize::message`]: nothing a
    /// terminal acts on, at most [`sanitize::MESSAGE_BYTES`].
    pub fn hook_json(&self, event_name: &str, block_word: &str) -> Option<Value> {
        match self {
            HookAnswer::Context(context) => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": event_name,
                    "additionalContext": sanitize::message(context),
                }
            })),
            HookAnswer::Stop(stop) if stop.decision.is_block() => {
                let reason = sanitize::message(&stop.message);
                let mut answer = json!({"decision": block_word, "reason": reason});
                if let Some(notice) = stop.user_notice() {
                    answer["systemMessage"] = sanitize::message(&notice).into();
                }
                Some(answer)
            }
            HookAnswer::Stop(stop) => stop
                .user_notice()
                .map(|notice| json!({"systemMessage": sanitize::message(&notice)})),
            HookAnswer::Notice(notice) => Some(json!({"systemMessage": sanitize::message(notice)})),
            HookAnswer::Nothing => None,
        }
    }
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
    /// gate could not check everything, the tests were weakened (`[integrity] mode = "warn"`),
    /// or work is not in a checkpoint yet; on a block, only the
    /// [`notice`](StopAnswer::notice). `None` for ordinary allows and blocks.
    pub fn user_notice(&self) -> Option<String> {
        let notable = match &self.decision {
            Decision::Allow {
                reason: AllowReason::CapReached { .. },
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
}
