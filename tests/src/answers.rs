//! One answer of each kind, and what an agent's home prints for it: the adapters' tests pin each
//! agent's wire format with these.

use checkpoint_core::answer::{HookAnswer, StopAnswer};
use checkpoint_core::decide::{AllowReason, BlockReason, Decision};
use checkpoint_core::event::HookEvent;
use checkpoint_core::home::AgentHome;

/// One answer of each kind an agent's home renders, named: nothing, context, a block, a block
/// the user hears about too, an allowed stop the user hears about, a plain allowed stop, and a
/// notice. Each text ends in a bell, which `sanitize::message` drops: an answer that skips it
/// shows. The adapters' tests pin their wire format with [`on_the_wire`].
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
pub fn on_the_wire(home: &dyn AgentHome, payload: &[u8]) -> String {
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
