//! Our refs between real repositories and a real bare remote (file paths).

use std::path::Path;
use std::time::Duration;

use checkpoint_testkit::git;

use super::fetch::{FetchOutcome, fetch, fetch_default};
use super::push::push;
use super::*;
use crate::git::Repo;

const BUDGET: Duration = Duration::from_secs(20);

fn repo(dir: &Path) -> Repo {
    Repo::new(dir.to_owned(), dir.join(".git"))
}

/// A commit of ours on `name` in `dir`, made with plain git, whose parent is the ref's current
/// commit (a chain, as the store writes them).
fn commit_ref(dir: &Path, name: &str, message: &str) -> String {
    let parent = local_refs(&repo(dir)).unwrap().get(name).cloned();
    let mut args = vec![
        "commit-tree",
        "-m",
        message,
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    ];
    if let Some(parent) = &parent {
        args.extend(["-p", parent]);
    }
    let out = git(dir, &args);
    let oid = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    git(dir, &["update-ref", name, &oid]);
    oid
}

/// A bare remote, a repository pushing to it as `origin`, and a clone of it.
fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    let work = dir.path().join("work");
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    git(dir.path(), &["init", "-q", "-b", "main", "work"]);
    git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    git(
        &work,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    git(&work, &["push", "-q", "-u", "origin", "main"]);
    git(
        dir.path(),
        &["clone", "-q", remote.to_str().unwrap(), "clone"],
    );
    let clone = dir.path().join("clone");
    (dir, work, clone)
}

#[test]
fn pushed_refs_are_fetched_by_a_clone_and_divergence_is_never_forced() {
    let (dir, work, clone) = setup();
    let state = dir.path().join("state");
    // Nothing of ours: no push at all, nothing queued.
    let report = push(&repo(&work), &state, "origin", BUDGET).unwrap();
    assert!(report.complete() && report.pushed.is_empty());

    let task = commit_ref(&work, "refs/checkpoint/tasks/t1", "t1");
    commit_ref(&work, "refs/checkpoint/sessions/main", "s1");
    let report = push(&repo(&work), &state, "origin", BUDGET).unwrap();
    assert_eq!(
        report.pushed,
        ["refs/checkpoint/sessions/main", "refs/checkpoint/tasks/t1"]
    );
    assert_eq!(report.note(), None);

    assert_eq!(default_remote(&repo(&clone)).as_deref(), Some("origin"));
    let fetched = fetch_default(&repo(&clone), BUDGET);
    assert!(fetched.updated_any(), "{fetched:?}");
    assert_eq!(
        local_refs(&repo(&clone))
            .unwrap()
            .get("refs/checkpoint/tasks/t1"),
        Some(&task)
    );

    // Both sides move the session log on: the second push is rejected, not forced.
    let theirs = commit_ref(&clone, "refs/checkpoint/sessions/main", "s2 there");
    push(&repo(&clone), &state.join("clone"), "origin", BUDGET).unwrap();
    commit_ref(&work, "refs/checkpoint/sessions/main", "s2 here");
    let report = push(&repo(&work), &state, "origin", BUDGET).unwrap();
    assert_eq!(report.rejected, ["refs/checkpoint/sessions/main"]);
    assert_eq!(report.queued, ["refs/checkpoint/sessions/main"]);
    let remote = prune::remote_refs(&repo(&work), "origin", BUDGET).unwrap();
    assert_eq!(remote.get("refs/checkpoint/sessions/main"), Some(&theirs));
    // And fetching it back keeps ours.
    let fetched = fetch(&repo(&work), "origin", BUDGET);
    let FetchOutcome::Fetched { rejected, .. } = &fetched else {
        panic!("{fetched:?}")
    };
    assert_eq!(rejected, &["refs/checkpoint/sessions/main"]);
    assert_ne!(
        local_refs(&repo(&work)).unwrap()["refs/checkpoint/sessions/main"],
        theirs
    );
}

#[test]
fn an_unreachable_remote_queues_everything_and_the_next_push_sends_it() {
    let (dir, work, _clone) = setup();
    let state = dir.path().join("state");
    commit_ref(&work, "refs/checkpoint/tasks/t1", "t1");
    commit_ref(&work, "refs/checkpoint/tasks/t2", "t2");
    let missing = dir.path().join("gone.git");
    let report = push(&repo(&work), &state, missing.to_str().unwrap(), BUDGET).unwrap();
    assert_eq!(report.queued.len(), 2);
    assert!(report.failure.is_some());
    assert_eq!(push::waiting(&state).unwrap(), [missing.to_str().unwrap()]);
    // A remote name that looks like an option is a repository git cannot find, nothing more.
    let report = push(&repo(&work), &state, "--upload-pack=touch pwned", BUDGET).unwrap();
    assert_eq!(report.queued.len(), 2);
    assert!(!work.join("pwned").exists());

    git(dir.path(), &["init", "-q", "--bare", "gone.git"]);
    let report = push(&repo(&work), &state, missing.to_str().unwrap(), BUDGET).unwrap();
    assert!(report.complete(), "{report:?}");
    assert_eq!(report.pushed.len(), 2);
    assert_eq!(
        push::waiting(&state).unwrap(),
        ["--upload-pack=touch pwned"]
    );
}
