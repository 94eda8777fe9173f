//! What the gate's decision on a pull request means for its CI job.

use checkpoint_core::decide::{AllowReason, BlockReason, Decision, Note};
use checkpoint_core::integrity::Finding;
use checkpoint_core::outcome::TestRun;
use checkpoint_core::policy::ChangedDefinition;
use serde::Serialize;

/// A pull request's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// Every check the change calls for passed.
    Passed,
    /// A test failed or could not run, the tests were weakened, or what a test command resolves
    /// to changed since the base.
    Failed,
    /// The gate could not check everything (its own failure, a broken configuration).
    Unchecked,
}

impl Verdict {
    /// The verdict of `decision`. A rule's actions are reminders for the author, which no CI
    /// job can carry out: they are listed, and do not fail the job. Nothing is uncommitted in a
    /// clean checkout. What would have blocked past the block cap (or with blocking off,
    /// `stop.max_blocks = 0`) fails the job all the same.
    pub(crate) fn of(decision: &Decision) -> Verdict {
        match blocking(decision) {
            Some(BlockReason::Required { uncommitted, .. }) if uncommitted.is_empty() => {
                Verdict::Passed
            }
            Some(BlockReason::Capture { .. }) => Verdict::Passed,
            Some(_) => Verdict::Failed,
            None if decision.is_degraded() => Verdict::Unchecked,
            None => Verdict::Passed,
        }
    }

    /// How the summary's headline says it.
    pub(crate) fn headline(self) -> &'static str {
        match self {
            Verdict::Passed => "✅ passed",
            Verdict::Failed => "❌ failed",
            Verdict::Unchecked => "⚠️ not everything could be checked",
        }
    }
}

/// What blocks, or would have blocked past the cap.
fn blocking(decision: &Decision) -> Option<&BlockReason> {
    match decision {
        Decision::Block { reason, .. } => Some(reason),
        Decision::Allow {
            reason: AllowReason::CapReached { pending, .. },
            ..
        } => Some(pending),
        _ => None,
    }
}

/// The test runs behind `decision`.
pub(crate) fn test_runs(decision: &Decision) -> &[TestRun] {
    match (decision, blocking(decision)) {
        (_, Some(BlockReason::Required { tests, .. })) => tests,
        (_, Some(BlockReason::TestsFailed { failed })) => failed,
        (
            Decision::Allow {
                reason: AllowReason::Satisfied { tests, .. },
                ..
            },
            _,
        ) => tests,
        (
            Decision::Allow {
                reason: AllowReason::TestsUnavailable { unavailable },
                ..
            },
            _,
        ) => unavailable,
        _ => &[],
    }
}

/// The test-integrity findings of `decision`, blocking or not; whether they block.
pub(crate) fn findings(decision: &Decision) -> (&[Finding], bool) {
    if let Some(BlockReason::Integrity { findings }) = blocking(decision) {
        return (findings, true);
    }
    let warned = decision.notes().iter().find_map(|note| match note {
        Note::IntegrityWarning { findings } => Some(findings.as_slice()),
        _ => None,
    });
    (warned.unwrap_or_default(), false)
}

/// The rules' actions `decision` lists: reminders for the author.
pub(crate) fn actions(decision: &Decision) -> &[String] {
    match blocking(decision) {
        Some(BlockReason::Required { actions, .. }) => actions,
        _ => &[],
    }
}

/// The test commands whose definition changed since the base, each with what changed.
pub(crate) fn unapproved(decision: &Decision) -> &[ChangedDefinition] {
    match blocking(decision) {
        Some(BlockReason::TestsUnapproved { changed }) => changed,
        _ => &[],
    }
}
