//! `[integrity] prove_failing`: when tests and the code they test changed together, the changed
//! tests are run against `HEAD`'s code too, in a temporary git worktree. A command that passes
//! there is a finding: tests that cannot fail on the old code are no evidence of the change.
//!
//! Off by default: it runs each passing test command a second time (once per change set; the
//! outcome is cached like any run), in a scratch worktree ([`ScratchRuns`]).

use crate::git::Repo;
use checkpoint_core::changes::Change;
use checkpoint_core::integrity::{Finding, FindingKind, TestFiles};
use checkpoint_core::outcome::TestStatus;

use super::Project;
use super::integrity::Stopped;
use super::scratch::ScratchRuns;

/// How a proof run is named in the test cache: the command with this prefix, so that its
/// outcome never stands for the command's own.
const CACHE_PREFIX: &str = "prove-failing: ";

/// Most changed test files named in a finding.
const NAMED_FILES: usize = 3;

impl Project {
    /// The [`FindingKind::PassesWithoutTheChange`] findings of a green stop; when it may run
    /// nothing, only cached proofs count. Nothing when `[integrity] prove_failing` is off, when
    /// not every command passed, or unless both test files and files whose rules ask for tests
    /// changed.
    pub(super) fn unproven(
        &self,
        repo: &Repo,
        stopped: &Stopped<'_>,
        files: &TestFiles,
        warnings: &mut Vec<String>,
    ) -> Vec<Finding> {
        let Stopped {
            changes,
            fingerprint,
            tests,
            may_run,
            base,
        } = *stopped;
        let policy = &self.policy;
        // Off by default: nothing of the change set is looked at then.
        if !policy.integrity.prove_failing {
            return Vec::new();
        }
        let changed_tests: Vec<&Change> = (changes.changes.iter())
            .filter(|c| files.is_test(&c.path))
            .collect();
        let code_changed = || {
            (changes.changes.iter())
                .filter(|c| !files.is_test(&c.path))
                .flat_map(|c| policy.rules.classify(&c.path))
                .any(|rule| policy.test_command_for(rule).is_some())
        };
        let green = stopped.green();
        // The old code is the turn's base: what the turn committed is part of the change.
        let Some(head) = base else {
            return Vec::new();
        };
        if changed_tests.is_empty() || !green || !code_changed() {
            return Vec::new();
        }
        let mut runs = ScratchRuns::new(
            self,
            repo,
            head,
            changed_tests.clone(),
            fingerprint,
            may_run,
        );
        let mut findings = Vec::new();
        for run in tests {
            let name = format!("{CACHE_PREFIX}{}", run.command);
            let outcome = match runs.outcome(&name, &run.command) {
                Ok(Some(outcome)) => outcome,
                Ok(None) => continue,
                Err(e) => {
                    warnings.push(format!("prove_failing: {e}"));
                    return findings;
                }
            };
            if outcome.status == TestStatus::Passed {
                findings.push(Finding::new(
                    FindingKind::PassesWithoutTheChange,
                    &run.command,
                    None,
                    format!(
                        "passes on HEAD's code too, with the changed tests ({}): they do not \
                         show the change",
                        named(&changed_tests)
                    ),
                ));
            }
        }
        findings
    }
}

/// "tests/test_a.py, tests/test_b.py and 2 more".
fn named(files: &[&Change]) -> String {
    let mut text = (files.iter().take(NAMED_FILES))
        .map(|c| c.path.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > NAMED_FILES {
        text.push_str(&format!(" and {} more", files.len() - NAMED_FILES));
    }
    text
}
