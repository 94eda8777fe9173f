//! Checks beside the tests: the project's typecheck, lint and build commands (`[checks]`), and
//! which of them, with the tests, a stop runs.
//!
//! The tests are the `test` check: `[tests]` as before, narrowed to the affected tests where
//! the command is recognised. The other checks run whole. Each command is a project command like
//! the test command: detected or configured, approved by the user before it runs, cached by the
//! change set's fingerprint.
//!
//! Under the default profile (`stop.profile = "every"`) every stop with code changes runs them
//! all. Under `stop.profile = "claims"`, a check's class says when: `fast` at every such stop,
//! `full` (the tests and the build by default) only at a stop whose final message claims
//! completion ([`claims`]) — or whose final message is unknown, or whose turn already claimed it,
//! or whose turn committed gated files (what is committed is checked in full). The integrity
//! analysis and the commit gate do not depend on the profile.

use crate::changes::ChangeSet;
use crate::decide::{Decision, Note, Stop};
use crate::policy::{CheckClass, Classes, Policy, RuleTests, StopProfile};

pub use crate::check_kind::CheckKind;
pub use crate::claims::{claims, default_claims, words};
pub use crate::policy::configured_checks as configured;

/// A check a stop runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCheck {
    /// Which.
    pub kind: CheckKind,
    /// Its command.
    pub command: String,
}

/// What a stop runs beside the planned tests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Scope {
    /// Whether the planned tests run at this stop.
    pub tests: bool,
    /// The checks it runs, in [`CheckKind::ALL`] order.
    pub checks: Vec<PlannedCheck>,
    /// What it leaves for a claimed completion: `tests` and the names of `full` checks.
    pub deferred: Vec<String>,
}

/// What a stop of `changes` (whose rules are `classes`, one entry per change) runs under
/// `policy`. `claimed`: the stop's final message claims completion, or an earlier stop of the
/// turn's did, or the message is unknown. Checks run when a change is code (a rule of it runs
/// tests); a subagent's stop runs none (they judge the whole project: the parent's stop runs
/// them).
pub fn scope(
    stop: Stop,
    changes: &ChangeSet,
    classes: &Classes<'_>,
    claimed: bool,
    policy: &Policy,
) -> Scope {
    let rules = || changes.changes.iter().zip(classes.iter());
    let committed_gated =
        rules().any(|(change, rules)| change.committed && rules.iter().any(|r| r.gate));
    let full_due = policy.stop.profile == StopProfile::Every || claimed || committed_gated;
    let due = |class: CheckClass| class == CheckClass::Fast || full_due;
    let mut scope = Scope {
        tests: due(policy.tests.class),
        ..Scope::default()
    };
    let tested =
        rules().any(|(_, rules)| rules.iter().any(|r| policy.test_command_for(r).is_some()));
    if !scope.tests && tested {
        scope.deferred.push("tests".to_owned());
    }
    let code = rules().any(|(_, rules)| rules.iter().any(|r| r.tests != RuleTests::None));
    if !code || stop.subagent {
        return scope;
    }
    for (kind, command, class) in configured(policy) {
        if due(class) {
            let command = command.to_owned();
            scope.checks.push(PlannedCheck { kind, command });
        } else {
            scope.deferred.push(kind.name().to_owned());
        }
    }
    scope
}

/// `decision` with a note of what `scope` left for a claimed completion, when it left anything
/// and the stop had changes to check.
pub fn with_deferred(decision: Decision, scope: &Scope) -> Decision {
    let checked = match &decision {
        Decision::Allow { reason, .. } => !matches!(
            reason,
            crate::decide::AllowReason::NoRepository
                | crate::decide::AllowReason::RepoUnreadable { .. }
                | crate::decide::AllowReason::ConfigBroken { .. }
                | crate::decide::AllowReason::NoChanges
        ),
        Decision::Block { .. } => true,
    };
    if scope.deferred.is_empty() || !checked {
        return decision;
    }
    let note = Note::Deferred {
        checks: scope.deferred.clone(),
    };
    match decision {
        Decision::Allow { reason, mut notes } => {
            notes.push(note);
            Decision::Allow { reason, notes }
        }
        Decision::Block {
            reason,
            mut notes,
            block,
            max_blocks,
        } => {
            notes.push(note);
            Decision::Block {
                reason,
                notes,
                block,
                max_blocks,
            }
        }
    }
}

#[cfg(test)]
mod tests;
