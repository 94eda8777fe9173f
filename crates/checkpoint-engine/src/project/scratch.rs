//! A scratch worktree: a temporary git worktree at a commit, with some of the worktree's
//! changes laid over it, where the integrity checks run a test command on a mix of old and new
//! files (`prove_failing`: new tests on the old code; the old tests on the new code).
//!
//! What git ignores in the worktree (`node_modules`, a virtualenv, Cargo's `target`, generated
//! code, a `.env`) is linked in, so that a run there reuses what the project already installed
//! and built, and differs from a run in the worktree only by what the change set holds; nothing
//! is ever written through a link by the laying-over. The worktree is registered with git only
//! while it exists.

use std::path::Path;
use std::time::Duration;

use super::Project;
use crate::cache::{self, TestCache};
use crate::git::Repo;
use crate::git::call;
use crate::runner;
use checkpoint_core::changes::{Change, ChangeKind};
use checkpoint_core::outcome::TestOutcome;

/// How long setting up or removing the worktree may take.
const WORKTREE_TIMEOUT: Duration = Duration::from_secs(60);

/// How a scratch worktree's directory name begins.
const PREFIX: &str = "checkpoint-scratch-";

/// How old a scratch worktree must be to count as left behind by a killed stop (no stop runs
/// that long).
const STALE: Duration = Duration::from_secs(6 * 60 * 60);

/// Most ignored entries linked into a scratch tree.
const MAX_LINKED: usize = 10_000;

/// A temporary worktree; removed (and unregistered from git) when dropped.
pub(super) struct ScratchTree<'a> {
    repo: &'a Repo,
    dir: tempfile::TempDir,
    /// `dir`'s path, as git was given it.
    path: String,
}

impl<'a> ScratchTree<'a> {
    /// A worktree of `repo` at `commit`, with the worktree's version of each of `changes` laid
    /// over it and what git ignores in the worktree linked in.
    pub(super) fn new(
        repo: &'a Repo,
        commit: &str,
        changes: &[&Change],
    ) -> Result<ScratchTree<'a>, String> {
        let dir = tempfile::Builder::new()
            .prefix(PREFIX)
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let path = (dir.path().to_str())
            .ok_or("the temporary directory's path is not UTF-8")?
            .to_owned();
        remove_stale(repo);
        worktree(repo, &["add", "--detach", "--quiet", &path, commit])?;
        let tree = ScratchTree { repo, dir, path };
        tree.lay_over(changes)?;
        tree.link_ignored()?;
        Ok(tree)
    }

    /// Lays the worktree's version of each of `changes` over the scratch tree: deleted files
    /// are removed, others copied (a symbolic link as a link, never followed).
    pub(super) fn lay_over(&self, changes: &[&Change]) -> Result<(), String> {
        for change in changes {
            let from = self.repo.workdir.join(&change.path);
            let to = self.dir.path().join(&change.path);
            self.inside(&change.path)?;
            let _ = std::fs::remove_file(&to);
            if change.kind == ChangeKind::Deleted {
                continue;
            }
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            let copied = match std::fs::read_link(&from) {
                Ok(target) => std::os::unix::fs::symlink(target, &to),
                Err(_) => std::fs::copy(&from, &to).map(drop),
            };
            copied.map_err(|e| format!("{}: {e}", change.path))?;
        }
        Ok(())
    }

    /// Links each file and directory git ignores in the worktree (`node_modules`, a virtualenv,
    /// `target/`, generated code, a `.env`) into the scratch tree at the same place: the tests
    /// run there with what they had in the worktree, so that only what the change set holds
    /// differs. Directories are linked whole, never entered.
    fn link_ignored(&self) -> Result<(), String> {
        let args = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ];
        let out = call::output(
            call::git(self.repo, &args, None),
            "ls-files",
            WORKTREE_TIMEOUT,
        )
        .map_err(|e| e.to_string())?;
        let entries = out.stdout.split(|&b| b == 0).filter(|e| !e.is_empty());
        for entry in entries.take(MAX_LINKED) {
            let Ok(entry) = std::str::from_utf8(entry) else {
                continue;
            };
            let entry = entry.trim_end_matches('/');
            let to = self.dir.path().join(entry);
            if self.inside(entry).is_err() || std::fs::symlink_metadata(&to).is_ok() {
                continue;
            }
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::os::unix::fs::symlink(self.repo.workdir.join(entry), &to)
                .map_err(|e| format!("{entry}: {e}"))?;
        }
        Ok(())
    }

    /// Refuses `path` (repository-relative) when a directory on its way in the scratch tree is
    /// a symbolic link or it climbs out: writing there could reach files outside the tree.
    fn inside(&self, path: &str) -> Result<(), String> {
        let mut at = self.dir.path().to_path_buf();
        let dirs = path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
        for part in dirs.split('/').filter(|p| !p.is_empty()) {
            at.push(part);
            let linked = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
            if part == ".." || linked {
                return Err(format!("{path}: a directory on its way is a link"));
            }
        }
        Ok(())
    }

    /// Where it is.
    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for ScratchTree<'_> {
    fn drop(&mut self) {
        // A failure leaves a registration of a missing directory, which `git worktree prune`
        // (run by `git gc`) drops.
        let _ = worktree(self.repo, &["remove", "--force", &self.path]);
    }
}

/// Runs of test commands in one scratch tree at a commit with some changes laid over it, the
/// tree made only when a run is not cached: a repeated stop of the same change set costs no
/// worktree. Each outcome is cached for the change set under a name of its own.
pub(super) struct ScratchRuns<'a> {
    repo: &'a Repo,
    commit: &'a str,
    /// What is laid over the tree when it is made.
    changes: Vec<&'a Change>,
    tree: Option<ScratchTree<'a>>,
    cache: TestCache,
    fingerprint: &'a str,
    timeout: Duration,
    may_run: bool,
}

impl<'a> ScratchRuns<'a> {
    /// Runs in `project` of `repo` at `commit` with `changes` laid over it, cached for the change
    /// set `fingerprint`; none when it `may_run` nothing (only cached outcomes count then).
    pub(super) fn new(
        project: &Project,
        repo: &'a Repo,
        commit: &'a str,
        changes: Vec<&'a Change>,
        fingerprint: &'a str,
        may_run: bool,
    ) -> ScratchRuns<'a> {
        ScratchRuns {
            repo,
            commit,
            changes,
            tree: None,
            cache: project.test_cache(),
            fingerprint,
            timeout: project.policy.tests.timeout,
            may_run,
        }
    }

    /// Lays `changes` over the tree too (see [`ScratchTree::lay_over`]), now or when it is made.
    pub(super) fn lay_over(&mut self, changes: &[&'a Change]) -> Result<(), String> {
        match &self.tree {
            Some(tree) => tree.lay_over(changes),
            None => {
                self.changes.extend_from_slice(changes);
                Ok(())
            }
        }
    }

    /// The outcome of `command` in the tree, cached under `name`: the cached one, else a fresh
    /// run (the tree made first if it is not yet); `Ok(None)` when it is not cached and nothing
    /// may run; the error when the tree cannot be made.
    pub(super) fn outcome(
        &mut self,
        name: &str,
        command: &str,
    ) -> Result<Option<TestOutcome>, String> {
        let key = cache::test_fingerprint(self.fingerprint, name, self.timeout);
        if let Some(outcome) = self.cache.lookup(name, &key) {
            return Ok(Some(outcome));
        }
        if !self.may_run {
            return Ok(None);
        }
        let tree = match self.tree.take() {
            Some(tree) => tree,
            None => ScratchTree::new(self.repo, self.commit, &self.changes)?,
        };
        let outcome = runner::run_recorded(command, tree.path(), self.timeout).outcome;
        self.tree = Some(tree);
        // The cache only saves time; failing to write it must not fail the stop.
        let _ = self.cache.record(name, &key, &outcome);
        Ok(Some(outcome))
    }
}

/// Removes the scratch worktrees of `repo` that a killed stop left behind (registered, on disk,
/// older than [`STALE`]); a failure leaves them for the next time.
fn remove_stale(repo: &Repo) {
    let Ok(out) = call::output(
        call::git(repo, &["worktree", "list", "--porcelain", "-z"], None),
        "worktree",
        WORKTREE_TIMEOUT,
    ) else {
        return;
    };
    let listed = out.stdout.split(|&b| b == 0).filter_map(|field| {
        let path = std::str::from_utf8(field.strip_prefix(b"worktree ")?).ok()?;
        let name = Path::new(path).file_name()?.to_str()?;
        name.starts_with(PREFIX).then_some(path)
    });
    for path in listed {
        let old = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > STALE));
        if old {
            let _ = worktree(repo, &["remove", "--force", path]);
        }
    }
}

/// Runs `git worktree ARGS` on `repo` within [`WORKTREE_TIMEOUT`], with no hook (a
/// `post-checkout` hook, husky's among them, would run at every such stop).
fn worktree(repo: &Repo, args: &[&str]) -> Result<(), String> {
    let argv: Vec<&str> = ["-c", "core.hooksPath=/dev/null", "worktree"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    call::output(call::git(repo, &argv, None), "worktree", WORKTREE_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}
