//! The object store of our refs: packed as saves accumulate, freed by retention, and a stale
//! index refreshed once, never under someone else's `index.lock`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use checkpoint_testkit::repo;

use super::{code, git};

/// A fixture repository with its own state and config directories.
struct World {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl World {
    fn new(fixture: &str) -> World {
        World {
            repo: repo(fixture),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    fn state(&self) -> PathBuf {
        self.home.path().join("state")
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let config = self.home.path().join("config");
        checkpoint_testkit::as_test_user(&config);
        checkpoint_testkit::trust(&config, self.dir(), &[]);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkpoint"));
        cmd.args(args)
            .current_dir(self.dir())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", &config)
            .envs(checkpoint_testkit::git_env())
            .stdin(Stdio::null());
        for (key, _) in std::env::vars() {
            if key.starts_with("CHECKPOINT_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("CHECKPOINT_STATE_DIR", self.state())
            .envs(env.iter().copied());
        cmd.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, &[]);
        assert_eq!(code(&out), 0, "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn git(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&git(self.dir(), args).stdout).into_owned()
    }

    /// `git count-objects -v` as numbers: `count` (loose) and `in-pack`.
    fn objects(&self) -> (u64, u64) {
        let text = self.git(&["count-objects", "-v"]);
        let field = |key: &str| {
            (text.lines())
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().parse().unwrap())
                .unwrap()
        };
        (field("count:"), field("in-pack:"))
    }

    /// `n` saves of the active task, each after an edit.
    fn saves(&self, n: usize) {
        for i in 0..n {
            fs::write(self.dir().join("work.py"), format!("X = {i}\n")).unwrap();
            self.ok(&["save", &format!("save {i}")]);
        }
    }

    fn fsck_clean(&self) {
        let out = git(self.dir(), &["fsck", "--full", "--strict", "--no-dangling"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("error") && !stderr.contains("missing"),
            "{stderr}"
        );
    }
}

/// Objects a save writes, about (a task commit and a session commit with their trees).
const PER_SAVE: u64 = 14;

#[test]
fn many_saves_are_packed_the_loose_count_stays_bounded_and_a_packed_checkpoint_restores() {
    let w = World::new("python-passing");
    w.ok(&["task", "start", "work", "--steps", "a"]);
    w.ok(&["step", "start"]);
    let before = w.objects();
    w.saves(80);
    let (loose, packed) = w.objects();
    // 80 saves wrote about 1,100 objects: without packing they would all be loose.
    assert!(packed > before.1 + 500, "in-pack {packed}");
    assert!(loose < before.0 + 500 + 2 * PER_SAVE, "loose {loose}");
    w.fsck_clean();

    // The continuity cache goes: restoring reads the checkpoint back from the packed ref.
    let saved = fs::read_to_string(w.dir().join("work.py")).unwrap();
    assert_eq!(saved, "X = 79\n");
    fs::remove_dir_all(w.state().join("continuity")).unwrap_or(());
    fs::write(w.dir().join("work.py"), "broken\n").unwrap();
    let out = w.run(&["restore"], &[]);
    assert_eq!(code(&out), 0, "{out:?}");
    assert_eq!(fs::read_to_string(w.dir().join("work.py")).unwrap(), saved);
}

#[test]
fn cleanup_frees_the_objects_of_removed_tasks_and_keeps_what_the_user_references() {
    let w = World::new("python-passing");
    w.ok(&["task", "start", "work", "--steps", "a"]);
    w.ok(&["step", "start"]);
    w.saves(40);
    let task_ref = w
        .git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/checkpoint/tasks/",
        ])
        .trim()
        .to_owned();
    let first = w
        .git(&["rev-list", "--max-parents=0", &task_ref])
        .trim()
        .to_owned();
    let md = w
        .git(&["rev-parse", &format!("{first}:hook.md")])
        .trim()
        .to_owned();
    // The user stages a file whose content a packed object of the task holds: git writes no
    // loose copy (the pack has it), so only our pack holds what the index references.
    let content = w.git(&["cat-file", "blob", &md]);
    fs::write(w.dir().join("copy.md"), &content).unwrap();
    w.git(&["add", "copy.md"]);
    w.ok(&["step", "done"]);
    w.ok(&["task", "complete"]);
    let out = w.run(
        &["cleanup"],
        &[("CHECKPOINT_JOURNAL_RETENTION_COMPLETED", "1ms")],
    );
    assert_eq!(code(&out), 0, "{out:?}");
    assert_eq!(w.git(&["for-each-ref", &task_ref]), "");
    let exists = |id: &str| {
        Command::new("git")
            .args(["cat-file", "-e", id])
            .current_dir(w.dir())
            .status()
            .unwrap()
            .success()
    };
    assert!(
        !exists(&first),
        "the removed task's first commit is still stored"
    );
    assert!(
        exists(&md),
        "the blob the user's index references was dropped"
    );
    w.fsck_clean();
}

/// `n` tracked files in `t/`, committed, then touched: their stat data changed a minute ago,
/// their content not.
fn touched_files(w: &World, n: usize) {
    fs::create_dir(w.dir().join("t")).unwrap();
    for i in 0..n {
        fs::write(w.dir().join(format!("t/f{i:04}.txt")), format!("{i}\n")).unwrap();
    }
    w.git(&["add", "t"]);
    w.git(&["commit", "-qm", "t"]);
    let status = Command::new("sh")
        .args(["-c", "touch -d '1 minute ago' t/*"])
        .current_dir(w.dir())
        .status()
        .unwrap();
    assert!(status.success());
}

/// How many entries `git status` re-read because their stat data changed (git's own count).
fn rehashed(dir: &Path) -> u64 {
    let out = Command::new("git")
        .args(["--no-optional-locks", "status", "--porcelain"])
        .current_dir(dir)
        .envs(checkpoint_testkit::git_env())
        .env("GIT_TRACE2_EVENT", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let key = r#""key":"refresh/sum_scan","value":""#;
    (stderr.lines())
        .find_map(|l| l.split_once(key))
        .map(|(_, rest)| rest.split('"').next().unwrap().parse().unwrap())
        .unwrap()
}

#[test]
fn a_stale_index_is_refreshed_once_and_never_under_another_lock() {
    let w = World::new("failing-test");
    touched_files(&w, 150);
    let stale = rehashed(w.dir());
    assert!(stale >= 150, "{stale}");

    // Someone else holds index.lock: the gate blocks on the failing test as always, leaves the
    // lock and the index as they were.
    let lock = w.dir().join(".git/index.lock");
    fs::write(&lock, "theirs").unwrap();
    let index = fs::read(w.dir().join(".git/index")).unwrap();
    let blocked = w.run(&["check"], &[]);
    assert_eq!(code(&blocked), 1, "{blocked:?}");
    assert!(String::from_utf8_lossy(&blocked.stdout).contains("test_calc.CalcTest.test_add"));
    assert_eq!(fs::read_to_string(&lock).unwrap(), "theirs");
    assert_eq!(fs::read(w.dir().join(".git/index")).unwrap(), index);
    assert_eq!(rehashed(w.dir()), stale);

    // The lock free, the first stop refreshes the index: the next reads re-hash nothing.
    fs::remove_file(&lock).unwrap();
    let blocked = w.run(&["check"], &[]);
    assert_eq!(code(&blocked), 1, "{blocked:?}");
    assert!(!lock.exists());
    // At most a file written in the same second as the index: racily clean for git itself.
    assert!(rehashed(w.dir()) <= 1);
    let debug = w.git(&["ls-files", "--debug", "t/f0000.txt"]);
    let mtime = fs::metadata(w.dir().join("t/f0000.txt")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert!(
        debug.contains(&format!("mtime: {}:", mtime.mtime())),
        "{debug}"
    );
}
