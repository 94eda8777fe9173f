//! Two sessions in one working tree: what a stop knows of the other live sessions working in its
//! tree, and whether a failure is theirs alone.
//!
//! The engine records which files each session's tool calls changed; at a stop it gathers the
//! other live sessions' uncommitted files ([`OtherSession`]) and, for the failing tests, which
//! tests this session's files and theirs can reach. A failure is [`Attribution::Theirs`] only on
//! evidence ([`attribute`]): every failed run is a test command whose failing tests are all
//! named, none is reached from a file this session changed, and each is reached from a file
//! another session changed. Anything less (a check, a timeout, an unnamed failure, a runner
//! whose reach is unknown) is this session's: it is gated as if it were alone.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::outcome::{TestRun, TestStatus};

/// Another live session with uncommitted work in the same working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherSession {
    /// Its agent's name (`claude`, `codex`, …).
    pub agent: String,
    /// Its session id.
    pub session: String,
    /// Its uncommitted files that this session did not change, repository-relative, sorted.
    pub files: Vec<String>,
}

/// Whose a stop's failure is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    /// This session's, or not known to be anyone else's: gated as usual.
    #[default]
    Ours,
    /// Reached only from the other sessions' files (see [`attribute`]).
    Theirs,
}

/// What a stop knows of the other sessions working in its tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedTree {
    /// The other live sessions with uncommitted work, each with at least one file.
    pub others: Vec<OtherSession>,
    /// Whose the stop's failure is.
    pub failure: Attribution,
}

/// The tests a set of changed files can reach for one test command, as test ids or their
/// containers (a pytest module path, a unittest dotted module); `None` when that cannot be told
/// (the selection would run everything, or does not know the runner).
pub type Reach = Option<BTreeSet<String>>;

/// Whether the test `test` (a failing test id as the output names it) is `unit` or inside it:
/// `tests/test_a.py::test_x` is inside `tests/test_a.py`, `test_calc.CalcTest.test_add` inside
/// `test_calc`.
pub fn within(test: &str, unit: &str) -> bool {
    test.strip_prefix(unit)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::") || rest.starts_with('.'))
}

/// Whose the failure of `failed` (the stop's failed, timed-out or unrunnable runs) is, given, for
/// each test command, what this session's changed files reach and what the other sessions'
/// reach (`reach(command)` gives `(ours, theirs)`). [`Attribution::Theirs`] only when every run
/// is a test command that failed (not a check, a timeout or a command that could not run), names
/// every failing test, none of them reached from this session's files, and each reached from the
/// other sessions'.
pub fn attribute(
    failed: &[&TestRun],
    mut reach: impl FnMut(&str) -> (Reach, Reach),
) -> Attribution {
    let theirs = !failed.is_empty()
        && failed.iter().all(|run| {
            let outcome = &run.outcome;
            let named = !outcome.failing.is_empty()
                && outcome
                    .failed
                    .is_none_or(|n| usize::try_from(n).is_ok_and(|n| n <= outcome.failing.len()));
            if run.check.is_some() || outcome.status != TestStatus::Failed || !named {
                return false;
            }
            let (Some(ours), Some(theirs)) = reach(&run.command) else {
                return false;
            };
            outcome.failing.iter().all(|test| {
                !ours.iter().any(|unit| within(test, unit))
                    && theirs.iter().any(|unit| within(test, unit))
            })
        });
    if theirs {
        Attribution::Theirs
    } else {
        Attribution::Ours
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::TestOutcome;

    fn failing(command: &str, tests: &[&str]) -> TestRun {
        let mut outcome = TestOutcome::not_run();
        outcome.status = TestStatus::Failed;
        outcome.failed = Some(tests.len() as u32);
        outcome.failing = tests.iter().map(|t| (*t).to_owned()).collect();
        TestRun::new(command.to_owned(), Vec::new(), outcome)
    }

    fn set(units: &[&str]) -> Reach {
        Some(units.iter().map(|u| (*u).to_owned()).collect())
    }

    #[test]
    fn a_test_is_within_its_module_only() {
        assert!(within("tests/test_a.py::test_x", "tests/test_a.py"));
        assert!(within("tests/test_a.py", "tests/test_a.py"));
        assert!(within("test_calc.CalcTest.test_add", "test_calc"));
        assert!(!within("test_calculator.T.test_x", "test_calc"));
        assert!(!within("tests/test_ab.py::t", "tests/test_a.py"));
        assert!(!within("x", ""));
    }

    #[test]
    fn only_evidence_makes_a_failure_theirs() {
        let run = failing("pytest", &["tests/test_b.py::test_b"]);
        let theirs = |_: &str| (set(&["tests/test_a.py"]), set(&["tests/test_b.py"]));
        assert_eq!(attribute(&[&run], theirs), Attribution::Theirs);
        // Reached from this session's files too, or not from theirs, or unknown: ours.
        let both = |_: &str| (set(&["tests/test_b.py"]), set(&["tests/test_b.py"]));
        assert_eq!(attribute(&[&run], both), Attribution::Ours);
        let nobody = |_: &str| (set(&[]), set(&["tests/test_a.py"]));
        assert_eq!(attribute(&[&run], nobody), Attribution::Ours);
        let unknown = |_: &str| (None, set(&["tests/test_b.py"]));
        assert_eq!(attribute(&[&run], unknown), Attribution::Ours);
        let unknown = |_: &str| (set(&[]), None);
        assert_eq!(attribute(&[&run], unknown), Attribution::Ours);
        // A failure that names no test, or fewer than failed, a timeout, a check: ours.
        let mut unnamed = run.clone();
        unnamed.outcome.failing.clear();
        assert_eq!(attribute(&[&unnamed], theirs), Attribution::Ours);
        let mut more = run.clone();
        more.outcome.failed = Some(2);
        assert_eq!(attribute(&[&more], theirs), Attribution::Ours);
        let mut timed_out = run.clone();
        timed_out.outcome.status = TestStatus::TimedOut;
        assert_eq!(attribute(&[&timed_out], theirs), Attribution::Ours);
        let mut check = run.clone();
        check.check = Some(crate::check_kind::CheckKind::Lint);
        assert_eq!(attribute(&[&check], theirs), Attribution::Ours);
        // Every run must be theirs; no run at all is no failure of anyone's.
        let ours = failing("pytest", &["tests/test_a.py::test_a"]);
        assert_eq!(attribute(&[&run, &ours], theirs), Attribution::Ours);
        assert_eq!(attribute(&[], theirs), Attribution::Ours);
    }
}
