//! Deleted test files: renamed within the runner's discovery (not a finding), renamed out of it,
//! or deleted.
//!
//! The change set has no renames (a rename is a deletion plus an addition), so a deleted test
//! file is matched against the files the change set adds: one with the same content, or one
//! holding all its tests (by name or body), is where it went. A rename to another test file is
//! then compared like a modification (new markers, removed assertions… are still found); tests
//! spread over several test files are accepted as moved.

use super::compare::{Subject, TestsNow, removed_tests};
use super::expected::Sources;
use super::finding::{Finding, FindingKind, MAX_PATH, shown};
use super::lang::{Lang, Source, test_fns};

/// A file the change set adds, with its worktree text.
pub(super) struct Added<'a> {
    pub(super) path: &'a str,
    pub(super) text: &'a str,
    /// Whether it is a test file.
    pub(super) discovered: bool,
}

/// What became of the deleted test file `file`, whose `HEAD` text is `old` (`None` when it was
/// not read): `added` are the files the change set adds, `tests_now` the tests of the
/// worktree's test files, `sources` the changed sources.
pub(super) fn deleted(
    file: &str,
    old: Option<&str>,
    added: &[Added<'_>],
    tests_now: &TestsNow<'_>,
    sources: &Sources<'_>,
) -> Vec<Finding> {
    let deleted = || {
        vec![Finding::new(
            FindingKind::TestFileDeleted,
            file,
            None,
            "test file deleted".to_owned(),
        )]
    };
    let out_of_discovery = |to: &str| {
        vec![Finding::new(
            FindingKind::RenamedOutOfDiscovery,
            file,
            None,
            format!("renamed out of test discovery to `{}`", shown(to, MAX_PATH)),
        )]
    };
    let Some(old) = old else {
        return deleted();
    };
    if let Some(same) = added.iter().find(|a| a.text.trim() == old.trim()) {
        return if same.discovered {
            Vec::new()
        } else {
            out_of_discovery(same.path)
        };
    }
    let Some(lang) = Lang::of(file) else {
        return deleted();
    };
    let tests = test_fns(lang, Source::whole(old));
    if tests.is_empty() {
        return deleted();
    }
    let holds_all =
        |a: &&Added<'_>| removed_tests(&tests, &test_fns(lang, Source::whole(a.text))).is_empty();
    if let Some(to) = added.iter().filter(|a| a.discovered).find(holds_all) {
        let renamed = Subject {
            lang,
            file: to.path,
            old: Source::whole(old),
            new: Source::whole(to.text),
            tests_now,
            sources,
            code_changed: false,
        };
        return renamed.findings();
    }
    if tests.iter().all(|test| tests_now.holds(lang, test)) {
        return Vec::new();
    }
    match added.iter().filter(|a| !a.discovered).find(holds_all) {
        Some(to) => out_of_discovery(to.path),
        None => deleted(),
    }
}
