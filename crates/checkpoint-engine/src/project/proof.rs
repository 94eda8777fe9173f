//! `[integrity] prove_failing`: when tests and the code they test changed together, the changed
//! tests are run against `HEAD`'s code too, in a temporary git worktree. A command that passes
//! there is a finding: tests that cannot fail on the old code are no evidence of the change.
//!
//! Off by default: it runs each passing test command a second time (once per change set; the
//! outcome is cached like any run). The temporary worktree is registered with git only while it
//! exists and is removed afterwards.

use std::path::Path;
use std::time::Duration;

use crate::cache;
use crate::git::Repo;
use crate::git::call;
use crate::runner;
use checkpoint_core::changes::{Change, ChangeKind};
use checkpoint_core::integrity::{Finding, FindingKind, TestFiles};
use checkpoint_core::outcome::TestStatus;

use super::Project;
use super::integrity::Stopped;

/// How a proof run is named in the test cache: the command with this prefix, so that its
/// outcome never stands for the command's own.
const CACHE_PREFIX: &str = "prove-failing: ";

/// How long setting up or removing the temporary worktree may take.
const WORKTREE_TIMEOUT: Duration = Duration::from_secs(60);

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
        let green =
            !tests.is_empty() && tests.iter().all(|r| r.outcome.status == TestStatus::Passed);
        // The old code is the turn's base: what the turn committed is part of the change.
        let Some(head) = base else {
            return Vec::new();
        };
        if changed_tests.is_empty() || !green || !code_changed() {
            return Vec::new();
        }
        let cache = self.test_cache();
        let timeout = policy.tests.timeout;
        let mut tree: Option<HeadTree> = None;
        let mut findings = Vec::new();
        for run in tests {
            let name = format!("{CACHE_PREFIX}{}", run.command);
            let key = cache::test_fingerprint(fingerprint, &name, timeout);
            let outcome = match cache.lookup(&name, &key) {
                Some(outcome) => outcome,
                None if !may_run => continue,
                None => {
                    if tree.is_none() {
                        match HeadTree::new(repo, head, &changed_tests) {
                            Ok(made) => tree = Some(made),
                            Err(e) => {
                                warnings.push(format!("prove_failing: {e}"));
                                return findings;
                            }
                        }
                    }
                    let dir = tree.as_ref().map(HeadTree::path).unwrap_or(&repo.workdir);
                    let outcome = runner::run_recorded(&run.command, dir, timeout).outcome;
                    // The cache only saves time; failing to write it must not fail the stop.
                    let _ = cache.record(&name, &key, &outcome);
                    outcome
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

/// A temporary worktree at `HEAD` with the worktree's versions of the changed test files; removed
/// (and unregistered from git) when dropped.
struct HeadTree<'a> {
    repo: &'a Repo,
    dir: tempfile::TempDir,
    /// `dir`'s path, as git was given it.
    path: String,
}

impl<'a> HeadTree<'a> {
    fn new(repo: &'a Repo, head: &str, changed_tests: &[&Change]) -> Result<HeadTree<'a>, String> {
        let dir = tempfile::Builder::new()
            .prefix("checkpoint-prove-")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let path = (dir.path().to_str())
            .ok_or("the temporary directory's path is not UTF-8")?
            .to_owned();
        worktree(repo, &["add", "--detach", "--quiet", &path, head])?;
        let tree = HeadTree { repo, dir, path };
        for change in changed_tests {
            let from = repo.workdir.join(&change.path);
            let to = tree.dir.path().join(&change.path);
            match change.kind {
                ChangeKind::Deleted => {
                    let _ = std::fs::remove_file(&to);
                }
                ChangeKind::Added | ChangeKind::Modified | ChangeKind::Untracked => {
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent)
                            .map_err(|e| format!("{}: {e}", parent.display()))?;
                    }
                    std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", change.path))?;
                }
            }
        }
        Ok(tree)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for HeadTree<'_> {
    fn drop(&mut self) {
        // A failure leaves a registration of a missing directory, which `git worktree prune`
        // (run by `git gc`) drops.
        let _ = worktree(self.repo, &["remove", "--force", &self.path]);
    }
}

/// Runs `git worktree ARGS` on `repo` within [`WORKTREE_TIMEOUT`].
fn worktree(repo: &Repo, args: &[&str]) -> Result<(), String> {
    let argv: Vec<&str> = std::iter::once("worktree")
        .chain(args.iter().copied())
        .collect();
    call::output(call::git(repo, &argv, None), "worktree", WORKTREE_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}
