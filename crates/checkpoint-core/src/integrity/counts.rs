//! The count check: a green run of a test command must not run fewer tests than the last green
//! stop that had nothing to say about integrity. A weakening the text checks cannot see (a test
//! deleted and committed, a runner flag in a file we do not read) still shows in the count.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::{TestRun, TestStatus};

use super::{Finding, FindingKind};

/// Each test command's passed count in the last stop whose tests passed with no integrity
/// finding: the baseline a later green run is held to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GreenCounts {
    /// Passed tests, by command.
    pub commands: BTreeMap<String, u32>,
}

impl GreenCounts {
    /// A [`FindingKind::TestCountDropped`] finding for each passing run of `runs` that reports
    /// fewer passed tests than its command's baseline. Runs that did not pass, or whose output
    /// gave no count, are not compared.
    pub fn drops(&self, runs: &[TestRun]) -> Vec<Finding> {
        counted(runs)
            .filter_map(|(command, passed)| {
                let before = *self.commands.get(command)?;
                (passed < before).then(|| Finding {
                    kind: FindingKind::TestCountDropped,
                    file: command.to_owned(),
                    line: None,
                    description: format!(
                        "{passed} {} passed; {before} in the last green run",
                        if passed == 1 { "test" } else { "tests" }
                    ),
                })
            })
            .collect()
    }

    /// Makes the counts of `runs`' passing runs the new baseline of their commands; whether
    /// anything changed.
    pub fn advance(&mut self, runs: &[TestRun]) -> bool {
        let mut changed = false;
        for (command, passed) in counted(runs) {
            let old = self.commands.insert(command.to_owned(), passed);
            changed |= old != Some(passed);
        }
        changed
    }
}

/// The passing runs of `runs` that report a count, with it. A run narrowed to the affected
/// tests says nothing about the whole command's count.
fn counted(runs: &[TestRun]) -> impl Iterator<Item = (&str, u32)> {
    runs.iter()
        .filter(|run| run.outcome.status == TestStatus::Passed && run.selection.is_none())
        .filter_map(|run| Some((run.command.as_str(), run.outcome.passed?)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::outcome::TestOutcome;

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
    fn failing_uncounted_and_unknown_commands_are_not_compared() {
        let green = baseline(&[("pytest", 12)]);
        let runs = [
            run("pytest", TestStatus::Failed, Some(1)),
            run("pytest", TestStatus::Passed, None),
            run("npm test", TestStatus::Passed, Some(0)),
        ];
        assert!(green.drops(&runs).is_empty());
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
