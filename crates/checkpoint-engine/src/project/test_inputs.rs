//! Files a test names: a changed file that the rules would have run no tests for (an
//! `expected.txt` at the root, a `README.md` a crate's doc tests include, a data file beside
//! the code) is test input when a test file names it, by its file name in the test's text — the
//! stop then runs the tests for it and gates it like code (see
//! [`checkpoint_core::decide::classes_reading`]). Files under a test data directory are test
//! input by their place already (the built-in `test-data` rule).
//!
//! One `git grep` of the project's test files (by the usual test file names and directories, and
//! every Rust file, whose tests live beside the code), only for stops that changed such files.
//! When git cannot answer, every such file counts as test input: a stop never lets a data file
//! through untested for want of an answer.

use std::collections::BTreeSet;
use std::time::Duration;

use checkpoint_core::changes::{ChangeSet, file_name};
use checkpoint_core::policy::Classes;

use super::Project;
use crate::git::{Repo, call};

/// How long the search may take.
const GREP_TIMEOUT: Duration = Duration::from_secs(10);

/// Most distinct file names searched for; with more, each of those files counts as test input.
const MAX_NAMES: usize = 100;

/// Where tests are, as git pathspecs.
const TEST_PATHSPECS: &[&str] = &[
    ":(glob)**/tests/**",
    ":(glob)**/test/**",
    ":(glob)**/__tests__/**",
    ":(glob)**/spec/**",
    ":(glob)**/test_*.py",
    ":(glob)**/*_test.py",
    ":(glob)**/conftest.py",
    ":(glob)**/*_test.go",
    ":(glob)**/*.test.*",
    ":(glob)**/*.spec.*",
    ":(glob)**/*.rs",
    ":(glob)**/src/test/**",
];

impl Project {
    /// The paths of `changes` that their rules (`classes`, one entry per change) run no tests
    /// for and that a test file names.
    pub fn read_by_tests(
        &self,
        repo: &Repo,
        changes: &ChangeSet,
        classes: &Classes<'_>,
    ) -> BTreeSet<String> {
        let untested: Vec<&str> = (changes.changes.iter().zip(classes.iter()))
            .filter(|(_, rules)| {
                (rules.iter()).all(|rule| self.policy.test_command_for(rule).is_none())
            })
            .map(|(change, _)| change.path.as_str())
            .collect();
        if untested.is_empty() {
            return BTreeSet::new();
        }
        let names: BTreeSet<&str> = untested.iter().map(|path| file_name(path)).collect();
        let named = match names.len() {
            n if n > MAX_NAMES => None,
            _ => named_by_tests(repo, &names),
        };
        (untested.into_iter())
            .filter(|path| {
                named
                    .as_ref()
                    .is_none_or(|named| named.contains(file_name(path)))
            })
            .map(str::to_owned)
            .collect()
    }
}

/// Which of `names` a test file's text holds; `None` when git cannot say.
fn named_by_tests(repo: &Repo, names: &BTreeSet<&str>) -> Option<BTreeSet<String>> {
    let mut args = vec!["grep", "--untracked", "-I", "-F", "-o", "-h", "--no-color"];
    for name in names {
        args.extend(["-e", name]);
    }
    args.push("--");
    args.extend(TEST_PATHSPECS);
    let out = call::run(call::git(repo, &args, None), "grep", GREP_TIMEOUT).ok()?;
    // 1: nothing found.
    match out.status.code() {
        Some(0 | 1) => {}
        _ => return None,
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().map(str::to_owned).collect())
}
