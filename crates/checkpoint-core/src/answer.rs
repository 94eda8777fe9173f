//! What a hook call answers, before any agent's wire format: a verdict on a stop, context for the
//! model, a notice for the user, or nothing. Each agent's home renders it in its own format (see
//! [`crate::home::AgentHome::render`]); every text it puts there is a [`sanitize::message`] —
//! nothing a terminal acts on, at most [`sanitize::MESSAGE_BYTES`] — which
//! [`StopAnswer::block_message`] and [`StopAnswer::user_message`] give for a stop.

use crate::decide::{AllowReason, BlockReason, Decision, Note};
use crate::event::HookEvent;
use crate::home::AgentHome;
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

    /// On a block, the [`message`](StopAnswer::message) that keeps the agent working, as a
    /// [`sanitize::message`]; `None` when the stop is allowed.
    pub fn block_message(&self) -> Option<String> {
        self.decision.is_block().then(|| sanitize::message(&self.message))
    }

    /// The [`user_notice`](StopAnswer::user_notice) as a [`sanitize::message`], what an agent's
    /// answer shows the user.
    pub fn user_message(&self) -> Option<String> {
        self.user_notice().map(|notice| sanitize::message(&notice))
    }
}

/// One answer of each kind an agent's home renders, named: nothing, context, a block, a block
/// the user hears about too, an allowed stop the user hears about, a plain allowed stop, and a
/// notice. Each text ends in a bell, which [`sanitize::message`] drops: an answer that skips it
/// shows. For the adapters' tests, which pin their wire format with [`examples_on_the_wire`].
#[doc(hidden)]
pub fn examples() -> Vec<(&'static str, HookAnswer)> {
    let capture = || BlockReason::Capture { interval_secs: 600 };
    let block = Decision::Block {
        reason: capture(),
        notes: Vec::new(),
        block: 1,
        max_blocks: 3,
    };
    let stop = |decision: &Decision, message: &str, notice: Option<&str>| {
        HookAnswer::Stop(StopAnswer {
            decision: decision.clone(),
            message: message.to_owned(),
            notice: notice.map(str::to_owned),
        })
    };
    let capped = Decision::Allow {
        reason: AllowReason::CapReached {
            blocks: 3,
            pending: Box::new(capture()),
        },
        notes: Vec::new(),
    };
    let plain = Decision::Allow {
        reason: AllowReason::NoChanges,
        notes: Vec::new(),
    };
    let not_approved = Some("The project's commands are not approved.\u{7}");
    vec![
        ("nothing", HookAnswer::Nothing),
        (
            "context",
            HookAnswer::Context("Resumed:\n\"task\"\u{7}".to_owned()),
        ),
        (
            "block",
            stop(&block, "Capture what is worth keeping.\u{7}", None),
        ),
        ("block, notice", stop(&block, "Commit.\u{7}", not_approved)),
        (
            "allow, notice",
            stop(&capped, "Allowed after 3 blocks.\u{7}", None),
        ),
        ("allow", stop(&plain, "No changes.\u{7}", None)),
        (
            "notice",
            HookAnswer::Notice("The gate is off.\u{7}".to_owned()),
        ),
    ]
}

/// What `home` prints for each of the [`examples`] answering the event of its `payload`, one
/// `kind: output` line each (its [no-op](AgentHome::no_op) where it renders `None`, `(empty)` for
/// empty output). Panics when `home` cannot parse the payload.
#[doc(hidden)]
pub fn examples_on_the_wire(home: &dyn AgentHome, payload: &[u8]) -> String {
    let event = HookEvent::parse(home, payload).expect("a payload the home reads");
    let line = |(kind, answer): (&str, HookAnswer)| {
        let output = home
            .render(&event, &answer)
            .map_or_else(|| home.no_op().to_owned(), |json| json.to_string());
        let output = if output.is_empty() {
            "(empty)"
        } else {
            &output
        };
        format!("{kind}: {output}")
    };
    examples()
        .into_iter()
        .map(line)
        .collect::<Vec<_>>()
        .join("\n")
}
