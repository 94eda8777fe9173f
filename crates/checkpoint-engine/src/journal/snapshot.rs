//! Looking at the worktree for a checkpoint: the repository's state and the files a step changed.

use std::fs;
use std::path::Path;
use std::process::Command;

use jiff::Timestamp;

use crate::file_content::FileContent;
use crate::git::{self, Repo};
use checkpoint_core::changes::{ChangeSet, Head};
use checkpoint_core::journal::checkpoint::{FileSnapshot, VcsState};
use checkpoint_core::policy::GitBackend;

/// What git says about the worktree now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Observation {
    /// Branch, commit and dirtiness; `None` outside git or when git could not be read.
    pub(crate) vcs: Option<VcsState>,
    /// Every path that differs from `HEAD`.
    pub(crate) changed: Vec<String>,
}

/// Reads the repository's state; outside a repository, or when git fails, nothing is known.
pub(crate) fn observe(repo: Option<&Repo>, backend: GitBackend) -> Observation {
    match repo.and_then(|repo| git::changes(repo, backend).ok()) {
        Some(changes) => observed(&changes),
        None => Observation::default(),
    }
}

/// What a change set the caller already read says about the worktree.
pub(crate) fn observed(changes: &ChangeSet) -> Observation {
    let (branch, commit) = match &changes.head {
        Head::Branch { name, commit } => (Some(name.clone()), Some(commit.clone())),
        Head::Detached { commit } => (None, Some(commit.clone())),
        Head::Unborn { name } => (Some(name.clone()), None),
    };
    Observation {
        vcs: Some(VcsState {
            branch,
            commit,
            dirty: !changes.is_empty(),
        }),
        changed: changes.changes.iter().map(|c| c.path.clone()).collect(),
    }
}

/// The paths the `HEAD` commit changed. A commit checkpoint adds them to the step's files: once
/// committed they are no longer in the change set. Empty when git cannot say.
pub(crate) fn head_commit_paths(repo: &Repo) -> Vec<String> {
    let out = Command::new("git")
        .args(crate::git::SAFE_CONFIG)
        .args([
            "--no-optional-locks",
            "diff-tree",
            "--root",
            "--no-commit-id",
        ])
        .args(["--name-only", "-r", "-z", "HEAD"])
        .current_dir(&repo.workdir)
        .output();
    match out {
        Ok(out) if out.status.success() => out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// `path` (relative to `workdir`) as it is now. Missing files and anything that is not a regular
/// file have no size; unreadable ones no hash.
pub(crate) fn snapshot(workdir: &Path, path: &str) -> FileSnapshot {
    let full = workdir.join(path);
    let meta = fs::symlink_metadata(&full).ok().filter(|m| m.is_file());
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| Timestamp::try_from(t).ok());
    FileSnapshot {
        path: path.to_owned(),
        size: meta.as_ref().map(fs::Metadata::len),
        mtime,
        sha256: meta.and_then(|_| FileContent::read(&full, 0).id()),
    }
}

/// Whether the file's content now differs from `snapshot` (size or hash; the mtime alone does not
/// count).
pub(crate) fn changed_since(workdir: &Path, snapshot: &FileSnapshot) -> bool {
    let now = self::snapshot(workdir, &snapshot.path);
    now.size != snapshot.size || now.sha256 != snapshot.sha256
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_record_size_hash_and_absence() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "abc").unwrap();
        let snap = snapshot(dir.path(), "a.txt");
        assert_eq!(snap.size, Some(3));
        assert_eq!(
            snap.sha256.as_deref(),
            Some(checkpoint_core::hex::sha256_hex(b"abc").as_str())
        );
        assert!(snap.mtime.is_some());
        assert!(!changed_since(dir.path(), &snap));

        fs::write(dir.path().join("a.txt"), "abd").unwrap();
        assert!(changed_since(dir.path(), &snap));

        let gone = snapshot(dir.path(), "gone.txt");
        assert_eq!((gone.size, gone.sha256, gone.mtime), (None, None, None));
        fs::create_dir(dir.path().join("d")).unwrap();
        assert_eq!(snapshot(dir.path(), "d").size, None);
    }

    #[test]
    fn observation_of_a_real_repository() {
        let repo_dir = checkpoint_testkit::repo("python-passing");
        let repo = git::discover(repo_dir.path()).unwrap().unwrap();
        let clean = observe(Some(&repo), GitBackend::Auto);
        let vcs = clean.vcs.unwrap();
        assert!(!vcs.dirty);
        assert!(vcs.commit.is_some());
        assert!(vcs.branch.is_some());
        fs::write(repo_dir.path().join("new.py"), "x = 1\n").unwrap();
        let dirty = observe(Some(&repo), GitBackend::Auto);
        assert!(dirty.vcs.unwrap().dirty);
        assert_eq!(dirty.changed, ["new.py"]);
        assert_eq!(observe(None, GitBackend::Auto), Observation::default());
        let mut committed = head_commit_paths(&repo);
        committed.sort();
        assert!(committed.contains(&"calc.py".to_owned()), "{committed:?}");
        let unborn = tempfile::tempdir().unwrap();
        Command::new("git")
            .arg("init")
            .arg("-q")
            .current_dir(unborn.path())
            .status()
            .unwrap();
        let fresh = git::discover(unborn.path()).unwrap().unwrap();
        assert!(head_commit_paths(&fresh).is_empty());
    }
}
