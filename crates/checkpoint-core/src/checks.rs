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
use serde::{Deserialize, Serialize};

/// A check other than the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A type checker (`tsc --noEmit`, `mypy`).
    Typecheck,
    /// A linter (`eslint`, `ruff check`).
    Lint,
    /// A build.
    Build,
}

impl CheckKind {
    /// Every kind, in the order a stop runs them.
    pub const ALL: [CheckKind; 3] = [CheckKind::Typecheck, CheckKind::Lint, CheckKind::Build];

    /// Its name: `typecheck`, `lint`, `build`.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Typecheck => "typecheck",
            CheckKind::Lint => "lint",
            CheckKind::Build => "build",
        }
    }

    /// The setting holding its command: `checks.typecheck`.
    pub fn key(self) -> &'static str {
        match self {
            CheckKind::Typecheck => "checks.typecheck",
            CheckKind::Lint => "checks.lint",
            CheckKind::Build => "checks.build",
        }
    }

    /// Its kind by the setting holding its command.
    pub fn of_key(key: &str) -> Option<CheckKind> {
        CheckKind::ALL.into_iter().find(|kind| kind.key() == key)
    }
}

/// Each check `policy` has a command for, in [`CheckKind::ALL`] order: its kind, command and
/// class.
pub fn configured(policy: &Policy) -> impl Iterator<Item = (CheckKind, &str, CheckClass)> {
    let checks = &policy.checks;
    [
        (
            CheckKind::Typecheck,
            &checks.typecheck,
            checks.typecheck_class,
        ),
        (CheckKind::Lint, &checks.lint, checks.lint_class),
        (CheckKind::Build, &checks.build, checks.build_class),
    ]
    .into_iter()
    .filter_map(|(kind, command, class)| Some((kind, command.as_deref()?, class)))
}

/// The phrases that make a final message a completion claim by default (`stop.claims`).
pub fn default_claims() -> Vec<String> {
    [
        "done",
        "finished",
        "complete",
        "completed",
        "implemented",
        "fixed",
        "resolved",
        "tests pass",
        "tests passed",
        "tests are passing",
        "ready for review",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The words of `text`, lowercase: its runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `message` claims completion: one of `phrases` appears in it as whole words in a row,
/// ignoring case ("All tests pass." has "tests pass"; "undone" has no "done"). A claim that is
/// not one ("not done yet") only makes the stop check more.
pub fn claims(message: &str, phrases: &[String]) -> bool {
    let said = words(message);
    phrases.iter().any(|phrase| {
        let phrase = words(phrase);
        !phrase.is_empty() && said.windows(phrase.len()).any(|w| w == phrase.as_slice())
    })
}

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
