//! The gate's I/O half: for each hook event, gathers what it needs (git changes, cached test runs,
//! session memory, context usage), asks the pure core, records what the next call needs, and
//! returns an honest [`HookAnswer`]: a verdict on a stop, context for the model, or nothing.
//!
//! Adapters and `checkpoint check` call [`run`] with the agent's home; an `Err` means the gate
//! could not judge (bad cwd, broken config, unusable state) and the caller fails open. The gate
//! never asks which agent it serves: where agents differ, it asks the home's
//! [`Capabilities`](checkpoint_core::agent::Capabilities) and transcript format.
//!
//! | file | holds |
//! |---|---|
//! | [`call`](self) `call.rs` | one event being answered: its agent's home, host, cwd check, session |
//! | `stop.rs` | ends of turn, subagent starts and new prompts: test runs, the verdict, the block count |
//! | `continuity.rs` | the context watch, tool results, session start and end, compaction |
//! | `runs.rs` | the test runs of a change set: the approved project, each command cached or run once |
//! | `prewarm.rs` | warm results: the stop's tests started in the background after a tool call |
//! | `sharing.rs` | two sessions in one tree: what each session's tool calls changed, and whose a failure is |
//! | [`ci`] `ci.rs` | a pull request: base → `HEAD` on a clean checkout, under the base's approval |

mod call;
pub mod ci;
mod continuity;
mod nudge;
mod prewarm;
mod runs;
mod sharing;
mod stop;
mod turn;

use crate::host::Host;
use crate::project::ProjectError;
use crate::runner::{RunWatch, Unwatched};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::event::{EventKind, HookEvent};
use checkpoint_core::home::AgentHome;

use call::Call;

pub use continuity::{CONTEXT_CHECKPOINT_GAP, PROGRESS_SKILL};
pub use prewarm::{ARG as PREWARM_ARG, run as prewarm};

/// What the gate answers to one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateOutcome {
    /// The answer for the agent.
    pub answer: HookAnswer,
    /// Problems that did not change the answer (e.g. the journal could not be written), one line
    /// each, for stderr.
    pub warnings: Vec<String>,
    /// For a judged stop, the commit its change set was judged against: the turn's base (the
    /// merge base when history moved under the turn), `HEAD` when none was recorded; `None`
    /// for other events and when there is no such commit.
    pub base: Option<String>,
}

/// Whether [`run`] does anything for this kind of event; adapters answer the others with their
/// no-op without loading anything.
pub fn handles(kind: &EventKind) -> bool {
    kind.is_stop()
        || matches!(
            kind,
            EventKind::SubagentStart
                | EventKind::UserPrompt
                | EventKind::PreTool
                | EventKind::PostTool
                | EventKind::SessionStart
                | EventKind::SessionEnd
                | EventKind::PreCompact
        )
}

/// Answers one hook event of the agent whose home is `home`.
pub fn run(
    home: &dyn AgentHome,
    host: &Host,
    event: &HookEvent,
) -> Result<GateOutcome, ProjectError> {
    run_watched(home, host, event, &Unwatched)
}

/// [`run`], telling `watch` when a fresh test run starts and ends (`checkpoint check` on a
/// terminal shows it).
pub fn run_watched(
    home: &dyn AgentHome,
    host: &Host,
    event: &HookEvent,
    watch: &dyn RunWatch,
) -> Result<GateOutcome, ProjectError> {
    check(home, host, event, watch, None)
}

/// [`run_watched`], a stop judged from `base` (a revision, e.g. `HEAD~2`) rather than the
/// session's recorded turn base when one is given (`checkpoint check --base`).
pub fn check(
    home: &dyn AgentHome,
    host: &Host,
    event: &HookEvent,
    watch: &dyn RunWatch,
    base: Option<&str>,
) -> Result<GateOutcome, ProjectError> {
    let mut call = Call::new(home, host, event, watch)?;
    call.base = base;
    let mut warnings = Vec::new();
    let context = match &event.kind {
        _ if event.is_judged_stop() => {
            let (answer, base) = stop::stop(&call, &mut warnings)?;
            return Ok(GateOutcome {
                answer: HookAnswer::Stop(answer),
                warnings,
                base,
            });
        }
        // Background tasks still running, or an internal fork: allowed without judging.
        kind if kind.is_stop() => None,
        EventKind::SubagentStart => stop::subagent_start(&call).map(|()| None)?,
        EventKind::UserPrompt => stop::user_prompt(&call)?,
        EventKind::PreTool => continuity::context_watch(&call)?,
        EventKind::PostTool => continuity::post_tool(&call)?,
        EventKind::SessionStart => {
            return Ok(GateOutcome {
                answer: continuity::session_start(&call, &mut warnings)?,
                warnings,
                base: None,
            });
        }
        EventKind::SessionEnd => {
            warnings.extend(continuity::session_end(&call)?);
            None
        }
        EventKind::PreCompact => continuity::pre_compact(&call).map(|()| None)?,
        _ => None,
    };
    Ok(GateOutcome {
        answer: context.map_or(HookAnswer::Nothing, HookAnswer::Context),
        warnings,
        base: None,
    })
}
