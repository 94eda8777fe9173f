//! The turn's base: the commit `HEAD` was at when a turn began, recorded per session (one ref
//! read, [`head_commit`]), and what was committed since ([`committed_since`]), so that a stop
//! judges the whole turn — base → worktree — and not only what is left uncommitted.
//!
//! When the base is `HEAD` (no commit during the turn, the common case) nothing here runs a
//! process. Otherwise two bounded git calls: `git merge-base` (is the base still an ancestor of
//! `HEAD`?) and `git diff --name-status` from the base — or from the merge base when history
//! moved under the turn (rebase, reset, checkout, pull). When the two share no history at all,
//! every file tracked at `HEAD` counts as added: the safe side, nothing the turn may have
//! brought in goes unjudged.

use std::time::Duration;

use super::Repo;
use super::call::{self, GitCallError};
use checkpoint_core::changes::{Change, ChangeKind};

/// How long each git call of a stop's base may take.
pub const BASE_TIMEOUT: Duration = Duration::from_secs(20);

/// The commit `HEAD` resolves to now, read in-process (no git process); `None` for an unborn
/// `HEAD` or a repository that cannot be read.
pub fn head_commit(repo: &Repo) -> Option<String> {
    let git = repo.isolated().ok()?;
    let id = git.head_id().ok()?;
    Some(id.detach().to_string())
}

/// What the turn since `base` committed, as [`committed_since`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// The commit the change set is judged against: the base, or the merge base of the base
    /// and `HEAD` when history moved, or the base again when they share no history; `None`
    /// when git no longer has the base (every tracked file counts as added).
    pub against: Option<String>,
    /// Whether history moved under the turn: the base is no longer an ancestor of `HEAD`.
    pub moved: bool,
    /// How each path differs between `against` and `HEAD` (added, modified or deleted),
    /// sorted by path.
    pub changes: Vec<Change>,
}

/// The full commit id `rev` names in `repo` (`checkpoint check --base REV`).
pub fn resolve(repo: &Repo, rev: &str) -> Result<String, GitCallError> {
    let spec = format!("{rev}^{{commit}}");
    let args = [
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        &spec,
    ];
    let out = call::output(call::git(repo, &args, None), "rev-parse", BASE_TIMEOUT)?;
    call::object_id(&out, "rev-parse")
}

/// What was committed between `base` and `head` (both full commit ids, `base != head`). A base
/// git no longer knows (e.g. pruned) shares no history with `HEAD`, as far as the gate can tell.
pub fn committed_since(repo: &Repo, base: &str, head: &str) -> Result<Committed, GitCallError> {
    let merge_base = merge_base(repo, base, head)?;
    let moved = merge_base.as_deref() != Some(base);
    // History that shares nothing with the base (the only commit amended, an orphan branch):
    // the base itself, while git still has it, is what the turn began from.
    let against = match merge_base {
        Some(merge_base) => Some(merge_base),
        None => match resolve(repo, base) {
            Ok(_) => Some(base.to_owned()),
            Err(GitCallError::Failed { .. }) => None,
            Err(e) => return Err(e),
        },
    };
    let changes = match &against {
        Some(from) => diff(repo, from, head)?,
        None => tracked(repo, head)?,
    };
    Ok(Committed {
        against,
        moved,
        changes,
    })
}

/// The merge base of `a` and `b`; `None` when they share no history or `a` is not a commit
/// git knows.
pub fn merge_base(repo: &Repo, a: &str, b: &str) -> Result<Option<String>, GitCallError> {
    let args = ["merge-base", "--end-of-options", a, b];
    let out = call::run(call::git(repo, &args, None), "merge-base", BASE_TIMEOUT)?;
    match out.status.code() {
        Some(0) => {
            let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            Ok((!id.is_empty()).then_some(id))
        }
        // 1: no common ancestor; 128: `a` (the recorded base) is not a commit git knows.
        Some(1 | 128) => Ok(None),
        _ => call::succeeded(out, "merge-base").map(|_| None),
    }
}

/// `git diff --name-status` from `from` to `to`: names only, no renames.
fn diff(repo: &Repo, from: &str, to: &str) -> Result<Vec<Change>, GitCallError> {
    let args = [
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--ignore-submodules=none",
        "--name-status",
        "-z",
        from,
        to,
        "--",
    ];
    let out = call::output(call::git(repo, &args, None), "diff", BASE_TIMEOUT)?;
    Ok(parse_name_status(&out.stdout))
}

/// Every file tracked at `commit`, each as added.
fn tracked(repo: &Repo, commit: &str) -> Result<Vec<Change>, GitCallError> {
    let args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit];
    let out = call::output(call::git(repo, &args, None), "ls-tree", BASE_TIMEOUT)?;
    Ok((out.stdout.split(|&b| b == 0))
        .filter(|p| !p.is_empty())
        .map(|p| change(p, ChangeKind::Added))
        .collect())
}

/// The records of `git diff --name-status -z`: a status, NUL, a path, NUL, … (no renames, so one
/// path each). A type change counts as modified; an unknown status is left out.
fn parse_name_status(out: &[u8]) -> Vec<Change> {
    let mut fields = out.split(|&b| b == 0);
    let mut changes = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let kind = match status.first() {
            Some(b'A') => ChangeKind::Added,
            Some(b'D') => ChangeKind::Deleted,
            Some(b'M' | b'T') => ChangeKind::Modified,
            _ => continue,
        };
        if !path.is_empty() {
            changes.push(change(path, kind));
        }
    }
    changes.sort();
    changes
}

fn change(path: &[u8], kind: ChangeKind) -> Change {
    Change {
        path: String::from_utf8_lossy(path).into_owned(),
        kind,
        staged: false,
        committed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    fn paths(changes: &[Change]) -> Vec<(&str, ChangeKind)> {
        changes.iter().map(|c| (c.path.as_str(), c.kind)).collect()
    }

    #[test]
    fn commits_since_the_base_history_moved_and_no_shared_history() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        fs::write(dir.join("a.txt"), "a\n").unwrap();
        fs::write(dir.join("gone.txt"), "gone\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "one"]);
        let repo = Repo::new(dir.to_owned(), dir.join(".git"));
        let base = head_commit(&repo).unwrap();
        assert_eq!(base, git(dir, &["rev-parse", "HEAD"]));
        assert_eq!(resolve(&repo, "HEAD").unwrap(), base);
        assert_eq!(resolve(&repo, "main").unwrap(), base);
        assert!(resolve(&repo, "no-such-rev").is_err());

        fs::write(dir.join("a.txt"), "changed\n").unwrap();
        fs::remove_file(dir.join("gone.txt")).unwrap();
        fs::write(dir.join("new file.txt"), "b\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "two"]);
        let two = head_commit(&repo).unwrap();
        let since = committed_since(&repo, &base, &two).unwrap();
        assert_eq!(since.against.as_deref(), Some(base.as_str()));
        assert!(!since.moved);
        assert_eq!(
            paths(&since.changes),
            [
                ("a.txt", ChangeKind::Modified),
                ("gone.txt", ChangeKind::Deleted),
                ("new file.txt", ChangeKind::Added),
            ]
        );
        assert!(since.changes.iter().all(|c| c.committed && !c.staged));

        // Reset under the turn: the base is no longer an ancestor of HEAD.
        git(dir, &["reset", "-q", "--hard", &base]);
        fs::write(dir.join("other.txt"), "o\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "other"]);
        let head = head_commit(&repo).unwrap();
        let moved = committed_since(&repo, &two, &head).unwrap();
        assert!(moved.moved);
        assert_eq!(moved.against.as_deref(), Some(base.as_str()));
        assert_eq!(paths(&moved.changes), [("other.txt", ChangeKind::Added)]);

        // No shared history (an orphan branch, the only commit amended): judged against the
        // base itself while git has it.
        git(dir, &["checkout", "-q", "--orphan", "lone"]);
        git(dir, &["commit", "-qm", "lone"]);
        let lone = head_commit(&repo).unwrap();
        let none = committed_since(&repo, &base, &lone).unwrap();
        assert!(none.moved);
        assert_eq!(none.against.as_deref(), Some(base.as_str()));
        assert_eq!(paths(&none.changes), [("other.txt", ChangeKind::Added)]);
        // A base git does not know: every tracked file counts.
        let unknown = committed_since(&repo, &"1".repeat(40), &lone).unwrap();
        assert_eq!(unknown.against, None);
        assert!(unknown.moved);
        assert_eq!(
            paths(&unknown.changes),
            [
                ("a.txt", ChangeKind::Added),
                ("gone.txt", ChangeKind::Added),
                ("other.txt", ChangeKind::Added),
            ]
        );
    }
}
