//! The git tree id of the worktree as it is: `HEAD` plus every change (staged, unstaged, and
//! untracked files that are not ignored) — the tree a `git add -A && git commit` would record.
//! A receipt names it, so that `checkpoint verify` can tell which commits its run tested.
//!
//! The user's index and worktree are never touched: a copy of the index (which keeps git's stat
//! cache, so unchanged files are not read again) is updated with `git add -A` under
//! `GIT_INDEX_FILE` in a temporary directory, and `git write-tree` names the tree. The blobs and
//! trees this writes into the object database are loose objects no ref points at; `git gc`
//! removes them in time.

use std::fs;
use std::io;
use std::time::Duration;

use super::Repo;
use super::call::{self, GitCallError};

/// How long each git call may take.
pub const TREE_TIMEOUT: Duration = Duration::from_secs(30);

/// The tree id of `repo`'s worktree now, lowercase hex (see the module documentation).
pub fn worktree_tree(repo: &Repo) -> Result<String, GitCallError> {
    let spawn = |source: io::Error| GitCallError::Spawn {
        what: "add",
        source,
    };
    let dir = tempfile::Builder::new()
        .prefix("checkpoint-index-")
        .tempdir()
        .map_err(spawn)?;
    let index = dir.path().join("index");
    match fs::copy(repo.git_dir.join("index"), &index) {
        Ok(_) => {}
        // No index yet (nothing staged ever): `add -A` starts from an empty one.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(spawn(e)),
    }
    let add = call::git_with_index(repo, &["add", "-A"], None, Some(&index));
    call::output(add, "add", TREE_TIMEOUT)?;
    let write = call::git_with_index(repo, &["write-tree"], None, Some(&index));
    let out = call::output(write, "write-tree", TREE_TIMEOUT)?;
    call::object_id(&out, "write-tree")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    #[test]
    fn the_tree_is_what_a_commit_of_everything_records_and_nothing_is_touched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        fs::write(dir.join(".gitignore"), "*.log\n").unwrap();
        fs::write(dir.join("a.txt"), "a\n").unwrap();
        fs::write(dir.join("gone.txt"), "gone\n").unwrap();
        git(dir, &["add", "-A"]);
        git(
            dir,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "i",
            ],
        );
        let repo = Repo::new(dir.to_owned(), dir.join(".git"));
        assert_eq!(
            worktree_tree(&repo).unwrap(),
            git(dir, &["rev-parse", "HEAD^{tree}"])
        );

        fs::write(dir.join("a.txt"), "changed\n").unwrap();
        fs::remove_file(dir.join("gone.txt")).unwrap();
        fs::create_dir(dir.join("new")).unwrap();
        fs::write(dir.join("new/b.txt"), "b\n").unwrap();
        fs::write(dir.join("noise.log"), "ignored\n").unwrap();
        let index_before = fs::read(dir.join(".git/index")).unwrap();
        let status_before = git(dir, &["status", "--porcelain"]);
        let tree = worktree_tree(&repo).unwrap();
        assert_eq!(fs::read(dir.join(".git/index")).unwrap(), index_before);
        assert_eq!(git(dir, &["status", "--porcelain"]), status_before);

        git(dir, &["add", "-A"]);
        assert_eq!(tree, git(dir, &["write-tree"]));
        assert_ne!(tree, git(dir, &["rev-parse", "HEAD^{tree}"]));
    }
}
