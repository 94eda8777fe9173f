//! Two sessions in one working tree through the real adapter: two session ids interleave their
//! tool calls and stops on a real repository (the `python-package` fixture: `tests.test_calc`
//! reaches `pkg/calc.py` and `pkg/util.py`, `tests.test_strings` reaches `pkg/strings.py`).
//! Another live session's failure blocks once, named, then lets the stop through with the user
//! told; every way for a session to blame its own failure on another is gated as if it were
//! alone.

use std::path::{Path, PathBuf};

use checkpoint_testkit::{HookRun, as_test_user, git, payload, repo, run_hook_in, trust};
use serde_json::{Value, json};

use super::CLAUDE;

/// The session that stops.
const MINE: &str = "a11ce000-0000-4000-8000-000000000001";
/// The other session working in the same tree.
const OTHER: &str = "b0b00000-0000-4000-8000-000000000002";

/// A python-package repository with the commit gate off (the sessions do not commit), its
/// commands approved in a config directory of its own, as the test user.
struct Tree {
    _repo: tempfile::TempDir,
    _config: tempfile::TempDir,
    dir: PathBuf,
    config: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let repo = repo("python-package");
        let dir = repo.path().to_owned();
        std::fs::write(dir.join("checkpoint.toml"), "[stop]\ncommit_gate = false\n").unwrap();
        git(&dir, &["add", "checkpoint.toml"]);
        git(&dir, &["commit", "-qm", "no commit gate"]);
        let config = tempfile::tempdir().unwrap();
        as_test_user(config.path());
        trust(config.path(), &dir, &[]);
        Tree {
            dir,
            config: config.path().to_owned(),
            _repo: repo,
            _config: config,
        }
    }

    /// Sends the captured Claude Code payload `fixture` as `session`'s, with `fields` set.
    fn fire(&self, session: &str, fixture: &str, fields: Value) -> HookRun {
        let mut value: Value =
            serde_json::from_str(&payload("claude", fixture, &self.dir)).unwrap();
        value["session_id"] = json!(session);
        value["prompt_id"] = json!(format!("prompt-of-{session}"));
        for (key, field) in fields.as_object().unwrap() {
            value[key] = field.clone();
        }
        let stdin = value.to_string();
        let bin = Path::new(CLAUDE.bin);
        let run = run_hook_in(&self.config, bin, &self.dir, stdin.as_bytes(), &[]);
        assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
        run
    }

    /// `session` starts.
    fn start(&self, session: &str) {
        self.fire(session, "SessionStart", json!({}));
    }

    /// `session` replaces `from` with `to` in `file` with Claude Code's Edit tool.
    fn edit(&self, session: &str, file: &str, from: &str, to: &str) {
        let path = self.dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}: {text}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
        let input = json!({"file_path": path, "old_string": from, "new_string": to});
        self.fire(
            session,
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": input}),
        );
    }

    /// `session` runs a shell command with Claude Code's Bash tool.
    fn shell(&self, session: &str, command: &str) {
        let out = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(&self.dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {out:?}");
        let input = json!({"command": command});
        self.fire(
            session,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": input}),
        );
    }

    /// `session`'s stop (`again`: a stop of the same turn after a block), as the block reason
    /// and the message for the user.
    fn stop(&self, session: &str, again: bool) -> (Option<String>, Option<String>) {
        let fixture = if again { "Stop-2" } else { "Stop" };
        let run = self.fire(session, fixture, json!({}));
        if run.stdout.trim().is_empty() {
            return (None, None);
        }
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        let text = |key: &str| answer[key].as_str().map(str::to_owned);
        (text("reason"), text("systemMessage"))
    }

    /// The session record file of `session`.
    fn record(&self, session: &str) -> PathBuf {
        let state = self.dir.join(".git/checkpoint/sessions");
        state.join(format!("claude-{session}.json"))
    }
}

/// The other session breaks `tests.test_strings` (its `pkg/strings.py`); this session changes
/// `pkg/calc.py` without breaking anything.
fn their_failure(tree: &Tree) {
    tree.start(OTHER);
    tree.edit(OTHER, "pkg/strings.py", "s.upper()", "s.lower()");
    tree.start(MINE);
    tree.edit(MINE, "pkg/calc.py", "-1000, 1000", "-2000, 2000");
}

/// Asserts that `session`'s stops are blocked as if it were alone: twice in a row, each naming
/// `test`.
fn blocked_as_alone(tree: &Tree, session: &str, test: &str) {
    for again in [false, true] {
        let (reason, _) = tree.stop(session, again);
        let reason = reason.unwrap_or_else(|| panic!("stop (again: {again}) was allowed"));
        assert!(reason.contains(test), "{reason}");
        assert!(!reason.contains("reached only from"), "{reason}");
    }
}

#[test]
fn another_sessions_failure_blocks_once_then_lets_the_stop_through_with_the_user_told() {
    let tree = Tree::new();
    their_failure(&tree);
    let (reason, _) = tree.stop(MINE, false);
    let reason = reason.expect("the first stop is blocked");
    assert!(
        reason.contains("tests.test_strings.StringsTest.test_shout"),
        "{reason}"
    );
    assert!(
        reason.contains(
            "another live session has uncommitted work in this tree: claude b0b00000 \
             (`pkg/strings.py`). It is that session's work in progress: do not discard, revert, \
             reformat or \"fix\" those files"
        ),
        "{reason}"
    );
    assert!(
        reason.contains("reached only from that session's files"),
        "{reason}"
    );
    let (reason, notice) = tree.stop(MINE, true);
    assert_eq!(reason, None, "the second stop is allowed");
    let notice = notice.expect("the user is told");
    assert!(
        notice.starts_with(
            "Checkpoint — Stop allowed after 1 block: the tests fail \
             (tests.test_strings.StringsTest.test_shout), reached only from another live \
             session's uncommitted files (claude b0b00000 (`pkg/strings.py`))"
        ),
        "{notice}"
    );
    // The other session's own stop is gated on its failure as usual.
    blocked_as_alone(&tree, OTHER, "test_shout");
}

#[test]
fn alone_the_same_failure_blocks_as_today() {
    let tree = Tree::new();
    their_failure(&tree);
    // The other session ended: this one is alone.
    tree.fire(OTHER, "SessionEnd", json!({}));
    blocked_as_alone(&tree, MINE, "test_shout");
}

/// Attack 1: the agent starts a second session itself (another hook call with a new session id)
/// so that a live other session exists, whose file reaches the broken test too, then blames its
/// own broken test on it.
#[test]
fn a_second_session_started_to_take_the_blame_changes_nothing() {
    let tree = Tree::new();
    // The second session changes a file that reaches the broken test too.
    tree.start(OTHER);
    tree.edit(
        OTHER,
        "pkg/util.py",
        "def clamp",
        "# Shared helpers.\ndef clamp",
    );
    tree.start(MINE);
    tree.edit(MINE, "pkg/calc.py", "a + b", "a - b");
    blocked_as_alone(&tree, MINE, "test_add");
}

/// Attack 2: the agent's own edit breaks a test whose file it never touched (it changed
/// `pkg/util.py`, which `tests.test_calc` reaches through `pkg.calc`), while the other session
/// did touch that test file.
#[test]
fn a_failure_reached_from_this_sessions_files_is_its_own_whoever_touched_the_test() {
    let tree = Tree::new();
    tree.start(OTHER);
    tree.edit(
        OTHER,
        "tests/test_calc.py",
        "import unittest",
        "import unittest  # tidy",
    );
    tree.start(MINE);
    tree.shell(MINE, "sed -i 's/max(low, min(high, x))/low/' pkg/util.py");
    blocked_as_alone(&tree, MINE, "test_add");
}

/// Reads the JSON file at `path`.
fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Attack 3a: session records forged or edited in the state directory to claim a broken file
/// that no live session changed (an ended session's, from before both started): a real other
/// session's signed work with the file added, a hand-written record, and the ended session's
/// signed work revived and copied under a new id. Each would make the failure another
/// session's.
#[test]
fn forged_or_edited_other_session_records_count_for_nothing() {
    let tree = Tree::new();
    // A third session breaks the file, and ends: its work is no live session's.
    let third = "7b1rd000-0000-4000-8000-000000000005";
    tree.start(third);
    tree.edit(third, "pkg/strings.py", "s.upper()", "s.lower()");
    tree.fire(third, "SessionEnd", json!({}));
    tree.start(MINE);
    tree.edit(MINE, "pkg/calc.py", "-1000, 1000", "-2000, 2000");
    tree.start(OTHER);
    tree.edit(
        OTHER,
        "pkg/util.py",
        "def clamp",
        "# Shared helpers.\ndef clamp",
    );
    let claiming = |mut record: Value| {
        let touched = record["work"]["touched"].as_array_mut().unwrap();
        touched.push(json!("pkg/strings.py"));
        record
    };
    let real = read_json(&tree.record(OTHER));
    std::fs::write(tree.record(OTHER), claiming(real.clone()).to_string()).unwrap();
    blocked_as_alone(&tree, MINE, "test_shout");

    std::fs::write(tree.record(OTHER), real.to_string()).unwrap();
    let forged = "f0f0f0f0-0000-4000-8000-000000000004";
    let active = real["work"]["active"].clone();
    let hand = json!({"work": {"active": active, "touched": ["pkg/strings.py"], "seen": {}}});
    std::fs::write(tree.record(forged), hand.to_string()).unwrap();
    tree.fire(MINE, "UserPromptSubmit", json!({}));
    blocked_as_alone(&tree, MINE, "test_shout");

    let ended = read_json(&tree.record(third));
    assert!(
        ended["work"]["touched"]
            .to_string()
            .contains("pkg/strings.py"),
        "{ended}"
    );
    let mut revived = ended.clone();
    revived["work"].as_object_mut().unwrap().remove("ended");
    std::fs::write(tree.record(third), revived.to_string()).unwrap();
    let copied = "c0b1ed00-0000-4000-8000-000000000003";
    std::fs::write(tree.record(copied), revived.to_string()).unwrap();
    tree.fire(MINE, "UserPromptSubmit", json!({}));
    blocked_as_alone(&tree, MINE, "test_shout");
}

/// Attack 3b: the session edits its own record to drop its claim on the file it broke, which
/// the other session's look also claims (it changed while that session worked), and to have
/// seen the tree as it is: its own work no longer verifies, so every change is its own.
#[test]
fn an_edited_own_record_makes_every_change_the_sessions_own() {
    let tree = Tree::new();
    tree.start(MINE);
    tree.start(OTHER);
    tree.edit(MINE, "pkg/strings.py", "s.upper()", "s.lower()");
    tree.shell(OTHER, "true");
    let theirs = read_json(&tree.record(OTHER));
    assert!(
        theirs["work"]["touched"]
            .to_string()
            .contains("pkg/strings.py"),
        "{theirs}"
    );
    let mut own = read_json(&tree.record(MINE));
    own["work"]["touched"] = json!([]);
    // What the tree holds now, as the other session's look saw it: the stop's look would find
    // nothing new.
    own["work"]["seen"] = theirs["work"]["seen"].clone();
    std::fs::write(tree.record(MINE), own.to_string()).unwrap();
    blocked_as_alone(&tree, MINE, "test_shout");
}
