//! The git module against real repositories built by `tests/fixtures/*.sh`.

use std::fs;
use std::path::Path;
use std::process::Command;

use checkpoint_testkit::{repo, repo_with_args};

use super::*;
use checkpoint_core::changes::ChangeKind::{Added, Deleted, Modified, Untracked};

/// Reads the change set of the repository around `dir` with every backend, checks that they
/// agree, and returns it.
fn changes_in(dir: &Path) -> ChangeSet {
    let repo = discover(dir)
        .expect("discover")
        .expect("inside a repository");
    let cli = changes(&repo, GitBackend::Cli).expect("cli backend");
    let gix = changes(&repo, GitBackend::Gix).expect("gix backend");
    assert_eq!(cli, gix, "backends disagree in {}", dir.display());
    assert_eq!(changes(&repo, GitBackend::Auto).expect("auto backend"), cli);
    cli
}

/// The changes as `(path, kind, staged)` for compact comparisons.
fn summary(set: &ChangeSet) -> Vec<(&str, ChangeKind, bool)> {
    set.changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind, c.staged))
        .collect()
}

fn git_output(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?} failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn branch(dir: &Path, name: &str) -> Head {
    Head::Branch {
        name: name.to_owned(),
        commit: git_output(dir, &["rev-parse", "HEAD"]),
    }
}

fn unreadable_reason(facts: RepoFacts) -> String {
    match facts {
        RepoFacts::Unreadable { reason } => {
            assert!(!reason.contains('\n'), "{reason:?} spans lines");
            reason
        }
        other => panic!("expected Unreadable, got {other:?}"),
    }
}

/// Discovery plus [`Started::facts`], as the gate does it.
fn gather(cwd: &Path, backend: GitBackend) -> (Option<Repo>, RepoFacts) {
    match discover(cwd) {
        Ok(None) => (None, RepoFacts::NoRepository),
        Err(err) => (None, unreadable(&err)),
        Ok(Some(repo)) => {
            let facts = start(&repo, backend).facts();
            (Some(repo), facts)
        }
    }
}

#[test]
fn clean_repository_has_no_changes() {
    let dir = repo("python-passing");
    let set = changes_in(dir.path());
    assert_eq!(set.head, branch(dir.path(), "main"));
    assert!(set.is_empty(), "{set:?}");
    assert_eq!(set.non_utf8_paths, 0);
}

#[test]
fn unstaged_edit() {
    let dir = repo("failing-test");
    let set = changes_in(dir.path());
    assert_eq!(set.head, branch(dir.path(), "main"));
    assert_eq!(summary(&set), [("calc.py", Modified, false)]);
}

#[test]
fn docs_edit_and_new_docs_file() {
    let dir = repo("docs-only");
    assert_eq!(
        summary(&changes_in(dir.path())),
        [
            ("README.md", Modified, false),
            ("docs/guide.md", Untracked, false)
        ]
    );
}

#[test]
fn every_untracked_file_is_listed() {
    let dir = repo("many-changes");
    let set = changes_in(dir.path());
    assert_eq!(set.changes.len(), 25);
    assert_eq!(summary(&set)[0], ("calc.py", Modified, false));
    for (i, change) in set.changes[1..].iter().enumerate() {
        assert_eq!(change.path, format!("pkg/mod_{:02}.py", i + 1));
        assert_eq!((change.kind, change.staged), (Untracked, false));
    }
}

/// Output larger than a pipe holds is gathered while the caller polls, and then parsed: the
/// same list as a plain read gives, with git never left waiting on a full pipe.
#[test]
fn a_status_polled_while_it_runs_lists_what_a_plain_read_does() {
    let dir = repo("python-passing");
    fs::create_dir(dir.path().join("many")).expect("mkdir");
    for i in 0..3000 {
        fs::write(dir.path().join(format!("many/file-{i:05}.py")), "x = 1\n").expect("write");
    }
    let found = discover(dir.path())
        .expect("discover")
        .expect("a repository");
    let plain = changes(&found, GitBackend::Cli).expect("plain status");
    assert_eq!(plain.changes.len(), 3000);
    // A test thread descheduled right after the start can first ask when git is done: each
    // listing must still match, and at least one of a few must have been polled while git ran.
    let mut polled_while_running = false;
    for _ in 0..5 {
        let mut started = start(&found, GitBackend::Cli);
        let mut polls = 0;
        while !started.done() {
            polls += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        assert_eq!(started.changes().expect("polled status"), plain);
        polled_while_running |= polls > 0;
    }
    assert!(
        polled_while_running,
        "git was never still running when first asked"
    );
}

#[test]
fn fresh_repository_compares_with_the_empty_tree() {
    let dir = repo("fresh-repo");
    let set = changes_in(dir.path());
    assert_eq!(
        set.head,
        Head::Unborn {
            name: "main".to_owned()
        }
    );
    assert_eq!(
        summary(&set),
        [
            (".gitignore", Untracked, false),
            ("README.md", Untracked, false),
            ("app.py", Added, true),
            ("notes/todo.txt", Untracked, false),
        ]
    );
}

#[test]
fn detached_head() {
    let dir = repo("detached-head");
    let set = changes_in(dir.path());
    assert_eq!(
        set.head,
        Head::Detached {
            commit: git_output(dir.path(), &["rev-parse", "main~1"])
        }
    );
    assert_eq!(summary(&set), [("README.md", Modified, false)]);
}

#[test]
fn ignored_pid_file_of_the_hanging_fixture() {
    let dir = repo("forking-hang");
    fs::write(dir.path().join("grandchild.pid"), "1\n").expect("write pid file");
    assert_eq!(
        summary(&changes_in(dir.path())),
        [("app.py", Modified, false)]
    );
}

#[test]
fn staged_unstaged_deleted_and_untracked_in_a_packed_repository() {
    let dir = repo_with_args("large-repo", &["200"]);
    assert_eq!(
        summary(&changes_in(dir.path())),
        [
            ("new-dir/deeper/new-in-new-dir.txt", Untracked, false),
            ("new-root.txt", Untracked, false),
            ("src/m00/new-in-old-dir.txt", Untracked, false),
            ("src/m00/s00/f00000.txt", Modified, false),
            ("src/m01/s00/f00001.txt", Modified, false),
            ("src/m02/s00/f00002.txt", Modified, true),
            ("src/m03/s00/f00003.txt", Deleted, false),
        ]
    );
}

#[test]
fn every_kind_of_difference() {
    let dir = repo("edge-cases");
    let set = changes_in(dir.path());
    assert_eq!(
        summary(&set),
        [
            ("added-then-deleted", Added, true),
            ("both", Modified, true),
            ("caf\u{fffd}.txt", Untracked, false),
            ("intent-to-add", Added, false),
            ("mode-change", Modified, false),
            ("nested", Untracked, false),
            ("staged-delete", Deleted, true),
            ("type-change", Modified, false),
            ("untracked-again", Deleted, true),
            ("with space.txt", Untracked, false),
        ]
    );
    assert_eq!(set.non_utf8_paths, 1);
}

#[test]
fn conflicts_count_as_staged_modifications() {
    let dir = repo("merge-conflict");
    assert_eq!(
        summary(&changes_in(dir.path())),
        [
            ("added-both", Modified, true),
            ("both", Modified, true),
            ("clean", Added, true),
            ("deleted-by-them", Modified, true),
        ]
    );
}

#[test]
fn a_new_submodule_is_one_changed_path() {
    let dir = repo("submodule");
    assert_eq!(
        summary(&changes_in(dir.path())),
        [
            (".gitmodules", Added, true),
            ("main.txt", Modified, false),
            ("sub", Added, true)
        ]
    );
}

#[test]
fn a_moved_gitlink_and_a_dirty_submodule_are_changes() {
    let dir = repo("submodule-changes");
    assert_eq!(
        summary(&changes_in(dir.path())),
        [("dirty", Modified, false), ("moved", Modified, false)]
    );
    // A submodule with nothing but a new untracked file of its own is dirty too.
    fs::write(dir.path().join("clean/new.txt"), "new\n").expect("write");
    let changed = changes_in(dir.path());
    assert_eq!(
        summary(&changed),
        [
            ("clean", Modified, false),
            ("dirty", Modified, false),
            ("moved", Modified, false)
        ]
    );
}

#[test]
fn discovery_from_a_subdirectory_finds_the_root() {
    let dir = repo("docs-only");
    let root = dir.path().canonicalize().expect("canonical root");
    let found = discover(&dir.path().join("docs"))
        .expect("discover")
        .expect("a repository");
    assert_eq!(found.workdir.canonicalize().expect("workdir"), root);
    assert_eq!(
        found.git_dir.canonicalize().expect("git dir"),
        root.join(".git")
    );
    assert_eq!(summary(&changes_in(&dir.path().join("docs"))).len(), 2);
}

#[test]
fn linked_worktree_has_its_own_git_dir_and_changes() {
    let dir = repo("python-passing");
    let worktree = dir.path().join("wt");
    git_output(
        dir.path(),
        &["worktree", "add", "-q", "-b", "feature", "wt"],
    );
    fs::write(worktree.join("calc.py"), "changed\n").expect("edit");

    let found = discover(&worktree)
        .expect("discover")
        .expect("a repository");
    assert_eq!(
        found.git_dir.canonicalize().expect("git dir"),
        dir.path()
            .canonicalize()
            .expect("root")
            .join(".git/worktrees/wt")
    );
    let set = changes_in(&worktree);
    assert_eq!(set.head, branch(&worktree, "feature"));
    assert_eq!(summary(&set), [("calc.py", Modified, false)]);
    // The main worktree lists the linked one as an untracked nested directory.
    assert_eq!(summary(&changes_in(dir.path())), [("wt", Untracked, false)]);
}

#[test]
fn outside_a_repository() {
    let dir = repo("no-repo");
    assert!(discover(dir.path()).expect("discover").is_none());
    for backend in [GitBackend::Cli, GitBackend::Gix] {
        assert_eq!(gather(dir.path(), backend), (None, RepoFacts::NoRepository));
    }
}

#[test]
fn gather_returns_the_repository_and_its_changes() {
    let dir = repo("failing-test");
    let (found, facts) = gather(dir.path(), GitBackend::Auto);
    assert!(found.is_some());
    let RepoFacts::Changes(set) = facts else {
        panic!("expected changes, got {facts:?}");
    };
    assert_eq!(summary(&set), [("calc.py", Modified, false)]);
}

#[test]
fn corrupt_head_is_unreadable() {
    let dir = repo("python-passing");
    fs::write(dir.path().join(".git/HEAD"), "garbage\n").expect("corrupt HEAD");
    for backend in [GitBackend::Cli, GitBackend::Gix] {
        let reason = unreadable_reason(gather(dir.path(), backend).1);
        assert!(
            reason.contains("HEAD") || reason.contains(".git"),
            "{reason}"
        );
    }
}

#[test]
fn corrupt_index_is_unreadable() {
    let dir = repo("failing-test");
    fs::write(dir.path().join(".git/index"), b"DIRC not really an index").expect("corrupt index");
    for backend in [GitBackend::Cli, GitBackend::Gix] {
        let (found, facts) = gather(dir.path(), backend);
        assert!(found.is_some(), "the repository itself was found");
        unreadable_reason(facts);
    }
}

#[test]
fn damaged_dot_git_does_not_fall_through_to_the_parent() {
    let dir = repo("python-passing");
    let inner = dir.path().join("inner");
    fs::create_dir(&inner).expect("mkdir");
    fs::write(inner.join(".git"), "not a gitdir pointer\n").expect("write .git file");
    assert!(matches!(discover(&inner), Err(GitError::Invalid { .. })));
    let reason = unreadable_reason(gather(&inner, GitBackend::Auto).1);
    assert!(reason.contains("not a valid git repository"), "{reason}");
}

#[test]
fn the_repositorys_configuration_cannot_move_or_remove_the_working_tree() {
    let dir = repo("python-passing");
    let clean = checkpoint_testkit::clean_copy(dir.path());
    fs::write(dir.path().join("calc.py"), "changed\n").expect("edit");
    let root = dir.path().canonicalize().expect("canonical root");
    let worktree = clean.path().to_str().expect("utf-8 path");
    for (key, value) in [("core.worktree", worktree), ("core.bare", "true")] {
        git_output(dir.path(), &["config", key, value]);
        let found = discover(dir.path())
            .expect("discover")
            .expect("a repository");
        assert_eq!(
            found.workdir.canonicalize().expect("workdir"),
            root,
            "{key}"
        );
        assert_eq!(
            summary(&changes_in(dir.path())),
            [("calc.py", Modified, false)],
            "{key}"
        );
        git_output(dir.path(), &["config", "--unset", key]);
    }
}

#[test]
fn bare_repository_is_unreadable() {
    let dir = repo("no-repo");
    git_output(dir.path(), &["init", "-q", "--bare", "bare.git"]);
    let bare = dir.path().join("bare.git");
    assert!(matches!(discover(&bare), Err(GitError::Bare { .. })));
    let reason = unreadable_reason(gather(&bare, GitBackend::Auto).1);
    assert!(reason.contains("bare repository"), "{reason}");
}

#[cfg(unix)]
#[test]
fn git_is_found_only_as_an_executable_file() {
    use std::os::unix::fs::PermissionsExt;

    let dirs = tempfile::tempdir().expect("temp dir");
    let (empty, plain, exec) = (
        dirs.path().join("empty"),
        dirs.path().join("plain"),
        dirs.path().join("exec"),
    );
    for dir in [&empty, &plain, &exec] {
        fs::create_dir(dir).expect("mkdir");
    }
    fs::write(plain.join("git"), "").expect("plain git");
    fs::write(exec.join("git"), "").expect("exec git");
    fs::set_permissions(exec.join("git"), fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::create_dir(empty.join("git")).expect("a directory named git");

    let path = |dirs: &[&PathBuf]| std::env::join_paths(dirs).expect("join PATH");
    assert_eq!(find_git(&path(&[])), None);
    assert_eq!(find_git(&path(&[&empty, &plain])), None);
    assert_eq!(
        find_git(&path(&[&empty, &plain, &exec])),
        Some(exec.join("git"))
    );
}

#[test]
fn a_linked_worktree_knows_its_main_worktree() {
    let repo = repo("python-passing");
    let (_worktrees, side) = checkpoint_testkit::linked_worktree(repo.path(), "side");
    let main = discover(repo.path()).unwrap().unwrap();
    assert_eq!(main.main_workdir(), None);
    let linked = discover(&side).unwrap().unwrap();
    assert_eq!(
        linked.main_workdir().map(|p| p.canonicalize().unwrap()),
        Some(repo.path().canonicalize().unwrap())
    );
}

#[test]
fn small_blobs_leaves_big_missing_and_non_blob_ones_out() {
    let repo = repo("python-passing");
    std::fs::write(repo.path().join("big.txt"), "x".repeat(2048)).unwrap();
    std::fs::create_dir(repo.path().join("dir")).unwrap();
    std::fs::write(repo.path().join("dir/a.txt"), "a").unwrap();
    checkpoint_testkit::git(repo.path(), &["add", "big.txt", "dir"]);
    checkpoint_testkit::git(repo.path(), &["commit", "-qm", "big"]);
    let found = discover(repo.path()).unwrap().unwrap();
    let head = changes(&found, GitBackend::Auto).unwrap().head;
    let paths = ["big.txt", "calc.py", "gone.py", "dir", "dir/a.txt"]
        .map(String::from)
        .into();
    let blobs = small_blobs(&found, head.commit().unwrap(), &paths, 1024).unwrap();
    assert_eq!(blobs.keys().collect::<Vec<_>>(), ["calc.py", "dir/a.txt"]);
    assert!(blobs["calc.py"].starts_with(b"\"\"\"Tiny arithmetic helpers."));
}
