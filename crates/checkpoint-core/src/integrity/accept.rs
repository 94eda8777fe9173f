//! Findings the user accepted (`checkpoint integrity accept`): an intended change to the tests,
//! approved by a person. An accepted finding about a file stands while that file's content is
//! what it was when accepted; an accepted count drop stands while the count is the same. Either
//! way the acceptance is shown to the user, like a trust change, never hidden.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::Finding;

/// The digest [`Acceptance::files`] records for a file that does not exist.
pub const ABSENT: &str = "absent";

/// What the user accepted for one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acceptance {
    /// When.
    pub accepted_at: Timestamp,
    /// The findings accepted, as shown to the user.
    pub findings: Vec<Finding>,
    /// The content digest (SHA-256 hex, or [`ABSENT`]) of each file a finding concerned, when
    /// accepted.
    pub files: BTreeMap<String, String>,
}

impl Acceptance {
    /// Whether `finding` is covered: an accepted finding about a command (a count drop, a proof
    /// run) that is the same again, or a finding about a file whose content digest (`digest`,
    /// given by the caller for the file of a file finding) is still the accepted one.
    pub fn covers(&self, finding: &Finding, digest: Option<&str>) -> bool {
        if finding.kind.is_about_a_command() {
            return self.findings.iter().any(|f| f == finding);
        }
        digest.is_some() && self.files.get(&finding.file).map(String::as_str) == digest
    }
}

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;

    use super::*;
    use crate::integrity::FindingKind;

    fn finding(kind: FindingKind, file: &str, description: &str) -> Finding {
        Finding {
            kind,
            file: file.to_owned(),
            line: None,
            description: description.to_owned(),
        }
    }

    fn acceptance() -> Acceptance {
        Acceptance {
            accepted_at: "2026-11-23T14:41:00Z".parse().unwrap(),
            findings: vec![
                finding(
                    FindingKind::TestFileDeleted,
                    "tests/test_a.py",
                    "test file deleted",
                ),
                finding(
                    FindingKind::TestCountDropped,
                    "pytest",
                    "1 test passed; 2 in the last green run",
                ),
            ],
            files: BTreeMap::from([("tests/test_a.py".to_owned(), ABSENT.to_owned())]),
        }
    }

    #[test]
    fn a_file_finding_stands_while_the_file_is_as_accepted() {
        let a = acceptance();
        let deleted = &a.findings[0];
        assert!(a.covers(deleted, Some(ABSENT)));
        assert!(
            !a.covers(deleted, Some("0123abcd")),
            "the file came back changed"
        );
        assert!(!a.covers(deleted, None), "unreadable now");
        let other = finding(FindingKind::MarkerAdded, "tests/test_b.py", "new skip");
        assert!(!a.covers(&other, Some(ABSENT)));
    }

    #[test]
    fn a_count_drop_stands_while_it_is_the_same() {
        let a = acceptance();
        assert!(a.covers(&a.findings[1], None));
        let lower = finding(
            FindingKind::TestCountDropped,
            "pytest",
            "0 tests passed; 2 in the last green run",
        );
        assert!(!a.covers(&lower, None));
    }

    #[test]
    fn a_proof_run_finding_stands_while_it_is_the_same_not_while_a_file_is_absent() {
        let proof = finding(
            FindingKind::PassesWithoutTheChange,
            "pytest",
            "passes on HEAD's code too",
        );
        let mut a = acceptance();
        assert!(
            !a.covers(&proof, Some(ABSENT)),
            "a command is not a missing file"
        );
        a.findings.push(proof.clone());
        assert!(a.covers(&proof, None));
    }

    #[test]
    fn notice() {
        let a = acceptance();
        assert_snapshot!(crate::render::acceptance_notice(&a, &a.findings), @r"
        Checkpoint: test changes you accepted on 2026-11-23 14:41 UTC (`checkpoint integrity accept`) stand:
          tests/test_a.py: test file deleted
          `pytest`: 1 test passed; 2 in the last green run
        ");
    }
}
