//! The tests as they were, on the new code: when a green stop's change set touches test files,
//! runner configuration or a `conftest.py`, each passing test command runs again in a
//! [`ScratchTree`](super::scratch::ScratchTree) holding the new code with those files exactly as they were at the turn's base
//! (modified ones reverted, deleted ones restored, added ones left out). What fails there, while
//! the new tests pass in the same place, is a [`FindingKind::OldTestsFail`]: the tests were
//! changed to fit the code. This one check sees every way of weakening a test, whatever its
//! form (a `return` before the assertion, a mock of the code under test, a skip reached through
//! a helper, a test moved where discovery does not find it), since it judges by running.
//!
//! It runs what the stop ran: the tests the affected-test selection picked, unless a test file
//! was added or deleted (the selection names the new set of files), then the whole command.
//! `Cargo.toml` and `Cargo.lock` stay new: they also name the dependencies the new code needs
//! (what they say about tests is left to the line analysis). The run costs one more run of each
//! command (cached per change set like any run), only on a green stop that changed test files;
//! when the old tests fail it costs up to two more: the old tests on the base's own code (a
//! test that fails there too was red before the turn, or too slow for its timeout, and is left
//! out), and the new tests in the scratch tree, to tell a weakening from a place where the tests
//! cannot run: when the new tests fail there too, that is a finding as well (a changed test can
//! be made to fail outside the worktree on purpose); what git ignores is linked in from the
//! worktree (see [`ScratchTree`](super::scratch::ScratchTree)), so a place that differs is rare.

use std::collections::BTreeSet;

use checkpoint_core::changes::{Change, ChangeKind, file_name};
use checkpoint_core::integrity::{Finding, FindingKind, TestFiles, is_runner_config};
use checkpoint_core::outcome::{TestOutcome, TestStatus};
use checkpoint_core::policy::rules::in_test_data_dir;
use checkpoint_core::sanitize;

use super::Project;
use super::integrity::Stopped;
use super::scratch::ScratchRuns;
use crate::git::Repo;

/// How a run of the old tests is named in the test cache.
const CACHE_PREFIX: &str = "old-tests: ";

/// How a run of the old tests on the base's own code is named in the test cache.
const CACHE_PREFIX_BASE: &str = "old-tests, at the base: ";

/// How a run of the new tests in the scratch tree is named in the test cache.
const CACHE_PREFIX_NEW: &str = "old-tests, new side: ";

/// Most failing tests named in a finding.
const NAMED_TESTS: usize = 3;

/// Longest line of a failure quoted in a finding.
const QUOTED: usize = 160;

/// Whether `path` is put back as it was for the old tests: a test file, a file under a test
/// data directory (a golden file under `testdata/`), a runner configuration (but not Cargo's
/// manifest and lock file, which the new code's dependencies need) or a `conftest.py`.
fn is_restored(files: &TestFiles, path: &str) -> bool {
    let name = file_name(path);
    if matches!(name, "Cargo.toml" | "Cargo.lock") {
        return false;
    }
    files.is_test(path) || in_test_data_dir(path) || is_runner_config(path) || name == "conftest.py"
}

impl Project {
    /// The [`FindingKind::OldTestsFail`] findings of a stop (see the module doc); when it may
    /// run nothing, only cached runs count. Nothing unless every planned command passed and the
    /// change set touches a file [`is_restored`] puts back.
    pub(super) fn old_tests_fail(
        &self,
        repo: &Repo,
        stopped: &Stopped<'_>,
        files: &TestFiles,
    ) -> Vec<Finding> {
        let Stopped {
            changes,
            fingerprint,
            tests,
            may_run,
            base,
        } = *stopped;
        let Some(base) = base else {
            return Vec::new();
        };
        let green = stopped.green();
        let (restored, kept): (Vec<&Change>, Vec<&Change>) =
            (changes.changes.iter()).partition(|c| is_restored(files, &c.path));
        if !green || restored.is_empty() {
            return Vec::new();
        }
        // The tests the stop selected, as they were; all of them when a test file was added or
        // deleted (the selection names the new set of files, not the old).
        let same_files = (restored.iter()).all(|c| c.kind == ChangeKind::Modified);
        let mut commands: Vec<(&str, &str)> = (tests.iter())
            .map(|r| match same_files {
                true => (r.command.as_str(), r.command_run()),
                false => (r.command.as_str(), r.command.as_str()),
            })
            .collect();
        commands.dedup();
        let mut runs = ScratchRuns::new(self, repo, base, kept, fingerprint, may_run);
        // Each command's outcome in the scratch tree: the old tests first.
        let mut old = Vec::new();
        for (command, run) in commands {
            // What the change set holds decides what is copied: a tree that cannot be made
            // may be the agent's doing, so it is never a silent pass.
            match runs.outcome(&format!("{CACHE_PREFIX}{run}"), run) {
                Ok(Some(outcome)) if outcome.status != TestStatus::Passed => {
                    old.push((command, run, outcome));
                }
                Ok(_) => {}
                Err(e) => return vec![unset(command, &e)],
            }
        }
        // What was red before the turn is not the turn's doing.
        let old = match self.red_at_the_base(repo, base, fingerprint, may_run, old) {
            Ok(old) => old,
            Err(finding) => return vec![finding],
        };
        // The new tests in the same place: where they fail too, the place is at fault.
        if let Err(e) = runs.lay_over(&restored) {
            return old.iter().map(|(command, ..)| unset(command, &e)).collect();
        }
        let mut findings = Vec::new();
        for (command, run, outcome) in old {
            let new = match runs.outcome(&format!("{CACHE_PREFIX_NEW}{run}"), run) {
                Ok(Some(new)) => new,
                Ok(None) => continue,
                Err(e) => {
                    findings.push(unset(command, &e));
                    continue;
                }
            };
            // The new tests fail beside the old code's place too: nothing tells a weakening
            // from a place the tests cannot run in, and a changed test can be made to fail
            // there on purpose. Said, never a silent pass.
            let description = match new.status {
                TestStatus::Passed => described(&outcome),
                _ => format!(
                    "the tests as they were fail on your code, and so do the changed tests \
                     outside this worktree, so they cannot be told apart: {}",
                    described(&outcome)
                ),
            };
            findings.push(Finding::new(
                FindingKind::OldTestsFail,
                command,
                None,
                description,
            ));
        }
        findings
    }

    /// `failed` (each command, what it ran and how the old tests failed on the new code) less
    /// what fails at the base itself: the old tests run again on the base's own code, and a
    /// failing test that fails there too is left out (a test red before the turn, a suite too
    /// slow for its timeout). A command whose failures cannot be told apart (no test named)
    /// and that fails at the base too is left out whole. Only when something failed, so it
    /// costs nothing on a green stop. A tree at the base that cannot be set up is a finding.
    fn red_at_the_base<'c>(
        &self,
        repo: &Repo,
        base: &str,
        fingerprint: &str,
        may_run: bool,
        failed: Vec<(&'c str, &'c str, TestOutcome)>,
    ) -> Result<Vec<(&'c str, &'c str, TestOutcome)>, Finding> {
        let mut runs = ScratchRuns::new(self, repo, base, Vec::new(), fingerprint, may_run);
        let mut left = Vec::new();
        for (command, run, mut outcome) in failed {
            let at_base = match runs.outcome(&format!("{CACHE_PREFIX_BASE}{run}"), run) {
                Ok(Some(at_base)) => at_base,
                Ok(None) => {
                    left.push((command, run, outcome));
                    continue;
                }
                Err(e) => return Err(unset(command, &e)),
            };
            if at_base.status == TestStatus::Passed {
                left.push((command, run, outcome));
                continue;
            }
            let red_before: BTreeSet<&String> = at_base.failing.iter().collect();
            outcome.failing.retain(|test| !red_before.contains(test));
            if !outcome.failing.is_empty() {
                left.push((command, run, outcome));
            }
        }
        Ok(left)
    }
}

/// The finding for a scratch tree that could not be set up for `command`'s run.
fn unset(command: &str, error: &str) -> Finding {
    Finding::new(
        FindingKind::OldTestsFail,
        command,
        None,
        format!(
            "the tests as they were could not be set up beside your code: {}",
            sanitize::line(error, QUOTED)
        ),
    )
}

/// "the tests as they were fail on your code: `test_add`, `test_sub` (AssertionError: -1 != 5)",
/// or why they could not run.
fn described(outcome: &TestOutcome) -> String {
    let mut text = match outcome.status {
        TestStatus::TimedOut => "the tests as they were time out on your code".to_owned(),
        TestStatus::Error | TestStatus::Internal => format!(
            "the tests as they were could not run on your code: {}",
            outcome.error.as_deref().unwrap_or("unknown error")
        ),
        _ => "the tests as they were fail on your code".to_owned(),
    };
    let names: Vec<String> = (outcome.failing.iter().take(NAMED_TESTS))
        .map(|n| format!("`{}`", sanitize::line(&n.replace('`', "'"), QUOTED)))
        .collect();
    if !names.is_empty() {
        text.push_str(": ");
        text.push_str(&names.join(", "));
        if outcome.failing.len() > NAMED_TESTS {
            text.push_str(&format!(
                " and {} more",
                outcome.failing.len() - NAMED_TESTS
            ));
        }
    }
    if let Some(line) = first_failure_line(&outcome.tail) {
        text.push_str(&format!(" ({})", sanitize::line(line, QUOTED)));
    }
    text
}

/// The first line of `tail` that says why a test failed: an error or assertion message, by
/// the first of these words a line holds (`Error:` before a bare `assert` in a traceback); else
/// its last line, so that a finding always quotes something.
fn first_failure_line(tail: &str) -> Option<&str> {
    const SAYS: &[&str] = &[
        "Error:",
        "panicked",
        "expected",
        "mismatch",
        "Error",
        "!=",
        "assert",
        "undefined",
        "cannot",
        "FAIL",
        "error",
        "failed",
    ];
    let lines = || tail.lines().map(str::trim).filter(|line| !line.is_empty());
    (SAYS.iter())
        .find_map(|says| lines().find(|line| line.contains(says) && !line.starts_with("File ")))
        .or_else(|| lines().next_back())
}
