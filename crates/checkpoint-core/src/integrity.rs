//! Test integrity: whether a change set weakens the tests, so that a green run means something.
//!
//! Pure and line-based: the caller gives the change set, the [`TestFiles`] matcher and, for the
//! changed files [`wanted`] names, their `HEAD` and worktree text ([`Sides`]); [`analyze`]
//! returns typed [`Finding`]s. Matching is cheap and deliberately simple (no parsers):
//!
//! | Finding | When |
//! |---|---|
//! | [`TestFileDeleted`](FindingKind::TestFileDeleted) | a test file is gone and its tests did not reappear in another test file (a rename within discovery is fine) |
//! | [`RenamedOutOfDiscovery`](FindingKind::RenamedOutOfDiscovery) | its content (or all its tests) went to an added file that is not a test file |
//! | [`MarkerAdded`](FindingKind::MarkerAdded) | the new text has more occurrences of a skip/ignore/focus marker than the old |
//! | [`TestRemoved`](FindingKind::TestRemoved) | a test is found in no test file of the worktree by name, nor among the new names by body |
//! | [`AssertionRemoved`](FindingKind::AssertionRemoved) | the new text has fewer assertion lines than the old |
//! | [`ExpectedValueChanged`](FindingKind::ExpectedValueChanged) | a check line's one literal operand changed, or the literal value of a name a check compares, while code the test exercises changed (see `expected`) |
//! | [`RunnerConfigNarrowed`](FindingKind::RunnerConfigNarrowed) | runner configuration leaves more tests out (see `config`), or a Go test file gained a build constraint |
//! | [`ProtectedFileChanged`](FindingKind::ProtectedFileChanged) | a file matching `[integrity] protected` changed at all |
//! | [`TestCountDropped`](FindingKind::TestCountDropped) | a passing command ran fewer tests than in the last green stop (see [`GreenCounts`]; from the runs, not the texts) |
//! | [`PassesWithoutTheChange`](FindingKind::PassesWithoutTheChange) | with `[integrity] prove_failing`: the changed tests pass on `HEAD`'s code too (run by the caller) |
//! | [`OldTestsFail`](FindingKind::OldTestsFail) | the tests as they were at the base fail on the new code, where the new tests pass (run by the caller) |
//!
//! Rust `#[cfg(test)]` modules in source files are analysed from the attribute on; assertions in
//! the code above them do not count.
//!
//! | Module | What it holds |
//! |---|---|
//! | `finding` | [`Finding`], [`FindingKind`], the sanitising of quoted text |
//! | `files` | [`TestFiles`] (which files are tests or protected), [`Sides`] |
//! | `lang` | per-language markers, assertions, test functions, Rust test modules |
//! | `compare` | the findings of one modified test file |
//! | `expected` | changed expected values and which tests exercise which sources |
//! | `renames` | deleted test files: renamed, renamed out of discovery, or deleted |
//! | `config` | runner configuration that runs fewer tests |
//! | `counts` | [`GreenCounts`]: the test counts a green run is held to |
//! | `accept` | [`Acceptance`]: findings a person accepted |

mod compare;
mod config;
mod expected;
mod files;
mod finding;
mod lang;
mod renames;

use std::collections::BTreeMap;

use crate::changes::{Change, ChangeKind, ChangeSet, file_name};

mod accept;
mod counts;

pub use accept::{ABSENT, Acceptance};
pub use counts::GreenCounts;
pub use files::{Sides, TestFiles};
pub use finding::{Finding, FindingKind};

/// Whether `path` names a runner configuration file: one whose content chooses which tests run
/// (pytest, jest, vitest and Cargo settings, the files the `config` module compares). The engine
/// pins these in the approval of a test command.
pub fn is_runner_config(path: &str) -> bool {
    config::Runner::of(path).is_some()
}

use compare::{Subject, TestsNow};
use config::Runner;
use expected::Sources;
use files::{dir_of, subject_stem};
use lang::{Lang, Source, rust_test_region, test_fns};
use renames::Added;

/// At most this many added files are read as places a deleted test file may have gone.
const MAX_ADDED: usize = 200;

/// Which sides of a changed file [`analyze`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// The text at `HEAD`.
    pub old: bool,
    /// The text in the worktree.
    pub new: bool,
}

/// The changed files whose texts [`analyze`] reads, and which sides: modified test files, Rust
/// sources (for their test modules) and runner configuration both; deleted test files the old;
/// added files the new, when they may hold a deleted or moved test (test files and Rust
/// sources, and other files next to or named like a deleted test file; at most 200).
pub fn wanted<'a>(changes: &'a ChangeSet, files: &TestFiles) -> Vec<(&'a str, Wanted)> {
    let deleted: Vec<&str> = (changes.changes.iter())
        .filter(|c| c.kind == ChangeKind::Deleted && files.is_test(&c.path))
        .map(|c| c.path.as_str())
        .collect();
    let may_move = changes.changes.iter().any(|c| {
        c.kind != ChangeKind::Added && c.kind != ChangeKind::Untracked && tests_inside(c, files)
    });
    let mut added = 0;
    let mut wanted = Vec::new();
    for change in &changes.changes {
        let path = change.path.as_str();
        let both = Wanted {
            old: true,
            new: true,
        };
        let sides = match change.kind {
            ChangeKind::Modified if tests_inside(change, files) || Runner::of(path).is_some() => {
                both
            }
            ChangeKind::Deleted if files.is_test(path) => Wanted {
                old: true,
                new: false,
            },
            ChangeKind::Added | ChangeKind::Untracked => {
                let candidate = (may_move && tests_inside(change, files))
                    || deleted.iter().any(|d| {
                        let stem = subject_stem(d);
                        dir_of(d) == dir_of(path)
                            || (!stem.is_empty() && file_name(path).contains(stem))
                    });
                let read = candidate && added < MAX_ADDED;
                added += usize::from(read);
                Wanted {
                    old: false,
                    new: read || Runner::of(path).is_some(),
                }
            }
            _ => Wanted::default(),
        };
        if sides != Wanted::default() {
            wanted.push((path, sides));
        }
    }
    wanted
}

/// The findings of one edit, judged alone: the file at `path` went from `old` to `new` (both
/// sides present; a file added or removed by the edit is left to the stop, which sees where its
/// tests went). Only what the file shows by itself can come out — skip or focus markers added,
/// tests or assertions removed (from this file: a test moved to another file reads as removed
/// here), runner configuration narrowed, a protected file changed; what needs the rest of the
/// change set is the stop's.
pub fn weakened_by_edit(path: &str, old: &str, new: &str, files: &TestFiles) -> Vec<Finding> {
    if old == new {
        return Vec::new();
    }
    let changes = ChangeSet {
        head: crate::changes::Head::Detached {
            commit: String::new(),
        },
        changes: vec![Change {
            path: path.to_owned(),
            kind: ChangeKind::Modified,
            staged: false,
            committed: false,
        }],
        non_utf8_paths: 0,
    };
    let sides = Sides {
        old: Some(old.to_owned()),
        new: Some(new.to_owned()),
    };
    analyze(&changes, &BTreeMap::from([(path.to_owned(), sides)]), files)
}

/// Whether `change` may hold tests: a test file, or a Rust source (a `#[cfg(test)]` module).
fn tests_inside(change: &Change, files: &TestFiles) -> bool {
    files.is_test(&change.path) || Lang::of(&change.path) == Some(Lang::Rust)
}

/// The findings of `changes`, given the [`Sides`] of the files [`wanted`] names (keyed by path;
/// a file without them gets only the checks that need no text), file by file in the change
/// set's order.
pub fn analyze(
    changes: &ChangeSet,
    texts: &BTreeMap<String, Sides>,
    files: &TestFiles,
) -> Vec<Finding> {
    let old_text = |path: &str| texts.get(path).and_then(|s| s.old.as_deref());
    let new_text = |path: &str| texts.get(path).and_then(|s| s.new.as_deref());
    // A change set may hold tens of thousands of added files: each costs a few comparisons,
    // and only a deleted or modified file is asked whether it is a test.
    let compared = changes.changes.iter().any(|c| match c.kind {
        ChangeKind::Deleted => files.is_test(&c.path),
        ChangeKind::Modified => texts.contains_key(&c.path) && Lang::of(&c.path).is_some(),
        ChangeKind::Added | ChangeKind::Untracked => false,
    });
    // Only those read the sources; most change sets have none.
    let sources = Sources::new(if compared {
        (changes.changes.iter())
            .filter(|c| !files.is_test(&c.path) && Lang::of(&c.path).is_some())
            .map(|c| c.path.as_str())
            .collect()
    } else {
        Vec::new()
    });
    let mut tests_now = TestsNow::default();
    let mut added = Vec::new();
    for change in &changes.changes {
        let path = change.path.as_str();
        let Some(text) = new_text(path) else {
            continue;
        };
        let discovered = files.is_test(path);
        if matches!(change.kind, ChangeKind::Added | ChangeKind::Untracked) {
            added.push(Added {
                path,
                text,
                discovered,
            });
        }
        let source = match Lang::of(path) {
            Some(lang) if discovered => Some((lang, Source::whole(text))),
            Some(Lang::Rust) => rust_test_region(text).map(|(region, _)| (Lang::Rust, region)),
            _ => None,
        };
        if let Some((lang, source)) = source {
            tests_now.insert(path, lang, test_fns(lang, source));
        }
    }
    let mut findings = Vec::new();
    for change in &changes.changes {
        let path = change.path.as_str();
        if files.is_protected(path) {
            findings.push(protected(change));
        }
        match change.kind {
            ChangeKind::Deleted if files.is_test(path) => findings.extend(renames::deleted(
                path,
                old_text(path),
                &added,
                &tests_now,
                &sources,
            )),
            ChangeKind::Modified => {
                let sides = (Lang::of(path), old_text(path), new_text(path));
                match (files.is_test(path), sides) {
                    (true, (Some(lang), Some(old), Some(new))) => {
                        let subject = Subject {
                            lang,
                            file: path,
                            old: Source::whole(old),
                            new: Source::whole(new),
                            tests_now: &tests_now,
                            sources: &sources,
                            code_changed: false,
                        };
                        findings.extend(subject.findings());
                    }
                    (false, (Some(Lang::Rust), Some(old), Some(new))) => {
                        findings.extend(rust_test_module(path, old, new, &tests_now, &sources));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        if let Some(runner) = Runner::of(path) {
            let old = match change.kind {
                ChangeKind::Modified => old_text(path),
                ChangeKind::Added | ChangeKind::Untracked => Some(""),
                ChangeKind::Deleted => None,
            };
            if let (Some(old), Some(new)) = (old, new_text(path)) {
                findings.extend(runner.narrowed(path, old, new));
            }
        }
    }
    findings
}

/// The findings of a Rust source file's `#[cfg(test)]` module: the code above it exercises it.
fn rust_test_module(
    file: &str,
    old: &str,
    new: &str,
    tests_now: &TestsNow<'_>,
    sources: &Sources<'_>,
) -> Vec<Finding> {
    let (old_module, old_code) = rust_test_region(old).unwrap_or((Source::empty(), old));
    let (new_module, new_code) = rust_test_region(new).unwrap_or((Source::empty(), new));
    if old_module.text.is_empty() && new_module.text.is_empty() {
        return Vec::new();
    }
    Subject {
        lang: Lang::Rust,
        file,
        old: old_module,
        new: new_module,
        tests_now,
        sources,
        code_changed: old_code != new_code,
    }
    .findings()
}

/// The finding of a change to a protected file.
fn protected(change: &Change) -> Finding {
    let how = match change.kind {
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "deleted",
        ChangeKind::Added | ChangeKind::Untracked => "added",
    };
    Finding::new(
        FindingKind::ProtectedFileChanged,
        &change.path,
        None,
        format!("protected file {how}"),
    )
}

#[cfg(test)]
mod tests;
