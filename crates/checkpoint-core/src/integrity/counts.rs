//! The count check: a green run of a test command must not run fewer tests than the last green
//! stop that had nothing to say about integrity. A weakening the text checks cannot see (a test
//! deleted and committed, a runner flag in a file we do not read) still shows in the count.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::{TestRun, TestStatus};

use super::{Finding, FindingKind};

/// Most commands (and selections) whose baseline is kept.
const MAX_COMMANDS: usize = 512;

/// Each test command's passed count in the last stop whose tests passed with no integrity
/// finding (a narrowed run's under the command it ran): the baseline a later green run of the
/// same command is held to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GreenCounts {
    /// Passed tests, by command.
    pub commands: BTreeMap<String, u32>,
}

impl GreenCounts {
    /// A [`FindingKind::TestCountDropped`] finding for each passing run of `runs` that reports
    /// fewer passed tests than the baseline of what it ran (its selection's command, for a
    /// narrowed run), or no count where the baseline has one (a process that exited 0 before
    /// its runner reported). Runs that did not pass are not compared, nor commands without a
    /// baseline.
    pub fn drops(&self, runs: &[TestRun]) -> Vec<Finding> {
        (runs.iter())
            .filter(|run| run.outcome.status == TestStatus::Passed)
            .filter_map(|run| {
                let command = run.command_run();
                let before = *self.commands.get(command)?;
                let description = match run.outcome.passed {
                    Some(passed) if passed >= before => return None,
                    Some(passed) => format!(
                        "{passed} {} passed; {before} in the last green run",
                        if passed == 1 { "test" } else { "tests" }
                    ),
                    None => format!(
                        "the output reports no test count; {before} passed in the last green run"
                    ),
                };
                Some(Finding {
                    kind: FindingKind::TestCountDropped,
                    file: command.to_owned(),
                    line: None,
                    description,
                })
            })
            .collect()
    }

    /// Makes the counts of `runs`' passing runs that report one the new baseline of what they
    /// ran; whether anything changed.
    pub fn advance(&mut self, runs: &[TestRun]) -> bool {
        let mut changed = false;
        let counted = (runs.iter())
            .filter(|run| run.outcome.status == TestStatus::Passed)
            .filter_map(|run| Some((run.command_run(), run.outcome.passed?)));
        for (command, passed) in counted {
            // Selections vary with the change set: their baselines stop growing at a bound.
            if self.commands.len() >= MAX_COMMANDS && !self.commands.contains_key(command) {
                continue;
            }
            let old = self.commands.insert(command.to_owned(), passed);
            changed |= old != Some(passed);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::outcome::{Selection, SelectionUnit, TestOutcome};

    fn run(command: &str, status: TestStatus, passed: Option<u32>) -> TestRun {
        TestRun {
            command: command.to_owned(),
            rules: Vec::new(),
            outcome: TestOutcome {
                status,
                passed,
                ..TestOutcome::not_run()
            },
            selection: None,
            whole_because: None,
            check: None,
        }
    }

    fn baseline(counts: &[(&str, u32)]) -> GreenCounts {
        GreenCounts {
            commands: counts.iter().map(|(c, n)| ((*c).to_owned(), *n)).collect(),
        }
    }

    #[test]
    fn fewer_passed_than_the_baseline_is_a_finding_down_to_zero() {
        let green = baseline(&[("pytest", 12), ("cargo test", 3)]);
        let runs = [
            run("pytest", TestStatus::Passed, Some(0)),
            run("cargo test", TestStatus::Passed, Some(2)),
        ];
        let found: Vec<(String, String)> = (green.drops(&runs).into_iter())
            .map(|f| (f.file, f.description))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "pytest".into(),
                    "0 tests passed; 12 in the last green run".into()
                ),
                (
                    "cargo test".into(),
                    "2 tests passed; 3 in the last green run".into()
                ),
            ]
        );
    }

    #[test]
    fn failing_and_unknown_commands_are_not_compared() {
        let green = baseline(&[("pytest", 12)]);
        let runs = [
            run("pytest", TestStatus::Failed, Some(1)),
            run("npm test", TestStatus::Passed, Some(0)),
            run("go test ./...", TestStatus::Passed, None),
        ];
        assert!(green.drops(&runs).is_empty());
    }

    /// A process that exits 0 before its runner reports (`os._exit(0)` at import, jest with
    /// every suite skipped) prints no count where the last green run printed one.
    #[test]
    fn a_count_that_vanished_is_a_finding() {
        let green = baseline(&[("pytest", 12)]);
        let found = green.drops(&[run("pytest", TestStatus::Passed, None)]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].description,
            "the output reports no test count; 12 passed in the last green run"
        );
    }

    /// A narrowed run is held to the last green run of the same selection.
    #[test]
    fn a_narrowed_run_is_compared_with_the_same_selection() {
        let narrowed = |passed| TestRun {
            selection: Some(Selection {
                command: "pytest tests/test_a.py".into(),
                unit: SelectionUnit::TestModules,
                selected: 1,
                total: 4,
                changed_files: 1,
            }),
            ..run("pytest", TestStatus::Passed, Some(passed))
        };
        let mut green = GreenCounts::default();
        assert!(green.advance(&[narrowed(5)]));
        assert_eq!(green, baseline(&[("pytest tests/test_a.py", 5)]));
        let found = green.drops(&[narrowed(3)]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].file, "pytest tests/test_a.py");
        // The whole command's baseline is not the selection's.
        assert!(baseline(&[("pytest", 40)]).drops(&[narrowed(5)]).is_empty());
    }

    #[test]
    fn advance_takes_the_passing_counts_and_says_whether_anything_changed() {
        let mut green = baseline(&[("pytest", 12)]);
        assert!(!green.advance(&[run("pytest", TestStatus::Passed, Some(12))]));
        assert!(!green.advance(&[run("pytest", TestStatus::Failed, Some(3))]));
        assert!(green.advance(&[run("pytest", TestStatus::Passed, Some(10))]));
        assert_eq!(green, baseline(&[("pytest", 10)]));
    }

    proptest! {
        /// Running as many tests as before, or more, never yields a finding; and after a
        /// baseline advances to a run, the same run yields none.
        #[test]
        fn more_tests_never_yield_a_finding(before in 0u32..10_000, more in 0u32..10_000) {
            let green = baseline(&[("pytest", before)]);
            let runs = [run("pytest", TestStatus::Passed, Some(before + more))];
            prop_assert!(green.drops(&runs).is_empty());
            let mut advanced = baseline(&[("pytest", before + more + 1)]);
            advanced.advance(&runs);
            prop_assert!(advanced.drops(&runs).is_empty());
        }
    }
}
