//! What the analysis reports: typed findings, and the short, safe text they quote.

use serde::{Deserialize, Serialize};

use crate::sanitize;

/// What kind of weakening a [`Finding`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingKind {
    /// A test file was deleted (and its tests did not reappear in another test file).
    TestFileDeleted,
    /// A test file's content moved to a file the runner does not discover (`test_calc.py` →
    /// `calc_disabled.py`).
    RenamedOutOfDiscovery,
    /// A skip, ignore or focus marker was added.
    MarkerAdded,
    /// A test function or case was removed (not renamed, not moved to another test file).
    TestRemoved,
    /// The file has fewer assertion lines than at `HEAD`.
    AssertionRemoved,
    /// An assertion's expected value changed (same assertion, another literal) while code the
    /// test exercises changed too.
    ExpectedValueChanged,
    /// The runner's configuration now runs fewer tests (pytest `addopts -k`, jest ignore
    /// patterns, Cargo `test = false`, a Go build constraint on a test file…).
    RunnerConfigNarrowed,
    /// A file matching `[integrity] protected` changed.
    ProtectedFileChanged,
    /// A passing test command ran fewer tests than in the last green stop (see
    /// [`GreenCounts`](super::GreenCounts)); the finding's `file` is the command.
    TestCountDropped,
    /// With `[integrity] prove_failing`: a test command passes on `HEAD`'s code with the changed
    /// tests, so they do not show the change; the finding's `file` is the command.
    PassesWithoutTheChange,
    /// The tests as they were at the turn's base (test files and runner configuration put
    /// back) fail on the new code, while the new tests pass on it in the same place: the tests
    /// were changed to fit the code. The finding's `file` is the command.
    OldTestsFail,
}

impl FindingKind {
    /// Whether a finding of this kind is about a test command (its `file` is the command), not
    /// about a file: it comes from the runs, and there is no file content to compare.
    pub fn is_about_a_command(self) -> bool {
        matches!(
            self,
            FindingKind::TestCountDropped
                | FindingKind::PassesWithoutTheChange
                | FindingKind::OldTestsFail
        )
    }
}

/// One way a change weakens the tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Finding {
    /// What was weakened.
    pub kind: FindingKind,
    /// The file, repository-relative; for a finding about a command
    /// ([`FindingKind::is_about_a_command`]), the test command.
    pub file: String,
    /// The 1-based line it concerns: in the new text for something added or changed, in the
    /// `HEAD` text for something removed; `None` for a whole file.
    pub line: Option<u32>,
    /// One line saying what changed.
    pub description: String,
}

impl Finding {
    /// A finding of `kind` about `file` (at `line`), said in `description`.
    pub fn new(kind: FindingKind, file: &str, line: Option<u32>, description: String) -> Self {
        Finding {
            kind,
            file: file.to_owned(),
            line,
            description,
        }
    }
}

/// Longest quoted value (a literal, an option) in a description.
pub(super) const MAX_VALUE: usize = 40;
/// Longest quoted path in a description.
pub(super) const MAX_PATH: usize = 120;

/// `text` fit to be quoted in a one-line description: on one line ([`sanitize::line()`]), with
/// backticks as quotes, cut after `max` characters.
pub(super) fn shown(text: &str, max: usize) -> String {
    sanitize::line(&text.replace('`', "'"), max)
}
