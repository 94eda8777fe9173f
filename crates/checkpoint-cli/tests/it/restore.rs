//! `checkpoint restore`: files changed by shell commands come back from a session checkpoint,
//! `--undo` reverses it, and a restore that cannot be whole changes nothing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use checkpoint_testkit::repo;
use insta::assert_snapshot;
use serde_json::Value;

use crate::{checkpoint, code, stable};

/// `checkpoint ARGS` in `dir`, asserting the exit status; returns stdout (or, failing, stderr),
/// made stable.
fn run(dir: &Path, args: &[&str], expected: i32) -> String {
    let out = checkpoint(dir, args, "");
    assert_eq!(
        code(&out),
        expected,
        "checkpoint {args:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = if expected == 2 {
        &out.stderr
    } else {
        &out.stdout
    };
    stable(shown, dir)
}

/// A shell command, as an agent's shell tool runs it: no edit tool sees what it changes.
fn shell(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

fn read(dir: &Path, path: &str) -> Option<String> {
    fs::read_to_string(dir.join(path)).ok()
}

#[test]
fn files_changed_by_a_shell_command_come_back_and_undo_reverses_it() {
    let repo = repo("python-passing");
    let dir = repo.path();
    shell(
        dir,
        "sed -i 's/a + b/a + b  # checked/' calc.py && printf 'plan\\n' > notes.txt \
         && printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh",
    );
    let saved = fs::read_to_string(dir.join("calc.py")).unwrap();
    assert_snapshot!(run(dir, &["save", "good state"], 0), @"Saved checkpoint #1 (3 changed files)");

    shell(
        dir,
        "printf 'broken\\n' >> calc.py && rm notes.txt run.sh README.md \
         && printf 'junk\\n' > scratch.txt",
    );
    let broken = fs::read_to_string(dir.join("calc.py")).unwrap();

    assert_snapshot!(run(dir, &["restore", "--dry-run"], 0), @r"
    Restoring checkpoint #1 (saved just now) would change 5 files (--dry-run: nothing was changed):
      recreate README.md  +3 −0
    --- a/README.md
    +++ b/README.md
    @@ -0,0 +1,3 @@
    +# calc
    +
    +Tiny arithmetic helpers. Run the tests with `python3 -m unittest`.
      restore calc.py  +0 −1
    --- a/calc.py
    +++ b/calc.py
    @@ -7,4 +7,3 @@
     
     def sub(a, b):
         return a - b
    -broken
      recreate notes.txt  +1 −0
    --- a/notes.txt
    +++ b/notes.txt
    @@ -0,0 +1 @@
    +plan
      recreate run.sh  +2 −0
    --- a/run.sh
    +++ b/run.sh
    @@ -0,0 +1,2 @@
    +#!/bin/sh
    +echo hi
      delete scratch.txt  +0 −1
    --- a/scratch.txt
    +++ b/scratch.txt
    @@ -1 +0,0 @@
    -junk
    ");
    assert_eq!(read(dir, "calc.py").as_deref(), Some(broken.as_str()));
    assert!(read(dir, "scratch.txt").is_some());

    assert_snapshot!(run(dir, &["restore"], 0), @r"
    Restored 5 files to checkpoint #1 (saved just now). The state before is checkpoint #2: `checkpoint restore --undo` returns to it.
      recreate README.md  +3 −0
      restore calc.py  +0 −1
      recreate notes.txt  +1 −0
      recreate run.sh  +2 −0
      delete scratch.txt  +0 −1
    ");
    assert_eq!(read(dir, "calc.py").as_deref(), Some(saved.as_str()));
    assert_eq!(read(dir, "notes.txt").as_deref(), Some("plan\n"));
    assert!(read(dir, "README.md").is_some_and(|r| r.starts_with("# calc")));
    assert_eq!(read(dir, "scratch.txt"), None);
    let mode = fs::metadata(dir.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "run.sh is executable again: {mode:o}");
    assert_snapshot!(run(dir, &["restore"], 0), @"Nothing to restore: the files already match checkpoint #1 (saved just now).");

    assert_snapshot!(run(dir, &["restore", "--undo"], 0), @r"
    Restored 5 files to checkpoint #2 (saved just now). The state before is checkpoint #3: `checkpoint restore --undo` returns to it.
      delete README.md  +0 −3
      restore calc.py  +1 −0
      delete notes.txt  +0 −1
      delete run.sh  +0 −2
      recreate scratch.txt  +1 −0
    ");
    assert_eq!(read(dir, "calc.py").as_deref(), Some(broken.as_str()));
    assert_eq!(read(dir, "notes.txt"), None);
    assert_eq!(read(dir, "scratch.txt").as_deref(), Some("junk\n"));
    // The safety checkpoints carry their own label, not the last manual message.
    let log = run(dir, &["log"], 0);
    let labels: Vec<&str> = log.lines().filter(|l| l.contains("restore")).collect();
    assert_snapshot!(labels.join("\n"), @r"
    #3 restore just now (cli manual) 3 files — before restoring checkpoint #2
    #2 restore just now (cli manual) 3 files — before restoring checkpoint #1
    ");

    // One file alone, named from a subdirectory; the others stay as they are.
    fs::create_dir(dir.join("sub")).unwrap();
    let sub = dir.join("sub");
    let json: Value = serde_json::from_str(&run(
        &sub,
        &["restore", "1", "--files", "../calc.py", "--json"],
        0,
    ))
    .unwrap();
    assert_eq!(json["checkpoint"], 1);
    assert_eq!(json["files"][0]["path"], "calc.py");
    assert_eq!(json["files"][0]["action"], "restore");
    assert_eq!(json["files"].as_array().unwrap().len(), 1);
    assert_eq!(read(dir, "calc.py").as_deref(), Some(saved.as_str()));
    assert_eq!(read(dir, "scratch.txt").as_deref(), Some("junk\n"));
}

#[test]
fn a_file_too_large_to_keep_refuses_the_whole_restore() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let big = vec![b'x'; 2 * 1024 * 1024];
    fs::write(dir.join("big.txt"), &big).unwrap();
    shell(dir, "printf 'plan\\n' > notes.txt");
    run(dir, &["save", "with a big file"], 0);
    shell(
        dir,
        "printf 'y\\n' >> big.txt && printf 'other\\n' > notes.txt",
    );

    assert_snapshot!(run(dir, &["restore"], 2), @r"
    error: cannot restore `big.txt`: its content at the checkpoint was not kept (a file over 1 MiB is only hashed; pruned checkpoints lose theirs); nothing was changed
    hint: `checkpoint restore --dry-run` shows the plan; `--files PATH…` restores the others alone
    ");
    assert_eq!(read(dir, "notes.txt").as_deref(), Some("other\n"));
    assert_eq!(
        fs::metadata(dir.join("big.txt")).unwrap().len(),
        big.len() as u64 + 2
    );
    // The other files alone can be restored.
    run(dir, &["restore", "--files", "notes.txt"], 0);
    assert_eq!(read(dir, "notes.txt").as_deref(), Some("plan\n"));
}

#[test]
fn hostile_paths_are_refused() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/a.txt"), "mine\n").unwrap();
    run(dir, &["save", "sub"], 0);
    // The directory becomes a link out of the repository: writing through it is refused.
    fs::remove_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("sub")).unwrap();
    assert_snapshot!(run(dir, &["restore"], 2), @r"
    error: cannot restore `sub/a.txt`: a directory above it is a symbolic link; nothing was changed
    hint: `checkpoint restore --dry-run` shows the plan; `--files PATH…` restores the others alone
    ");
    assert!(!outside.path().join("a.txt").exists());
    assert!(dir.join("sub").is_symlink());

    // A log that names a path inside .git (or out of the repository) is refused as well.
    fs::remove_file(dir.join("sub")).unwrap();
    let log = dir.join(".git/checkpoint/continuity/log.json");
    let text = fs::read_to_string(&log).unwrap();
    for hostile in [".git/config", "../escape.txt", "/tmp/abs.txt"] {
        fs::write(&log, text.replace("sub/a.txt", hostile)).unwrap();
        let err = run(dir, &["restore", "1"], 2);
        assert!(err.contains("; nothing was changed"), "{hostile}: {err}");
    }
    assert!(!dir.join("../escape.txt").exists());

    let err = run(dir, &["restore", "--files", "../../elsewhere"], 2);
    assert!(err.contains("is not inside the repository"), "{err}");
}
