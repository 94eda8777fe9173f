//! What the gate holds a green run to beyond the diff (the test count of the last green stop, the
//! changed tests on `HEAD`'s code, the old tests on the new code), how a person accepts an intended weakening, and what a stop
//! let through leaves on record.

use std::fs;
use std::path::Path;

use checkpoint_testkit::repo;
use insta::assert_snapshot;

use crate::{checkpoint_as, code, git, stable};

/// Appends a comment to `calc.py`: a code change that makes the next stop run the tests.
fn touch_code(dir: &Path) {
    let path = dir.join("calc.py");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text + "# touched\n").unwrap();
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_committed_test_removal_is_caught_by_the_count_until_a_person_accepts_it() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let check = || checkpoint_as(user.path(), dir, &["check"], "");

    // A green stop sets the baseline: 2 tests.
    touch_code(dir);
    assert_eq!(code(&check()), 1, "the commit gate asks for a commit");
    git(dir, &["commit", "-qam", "touch"]);

    // The agent deletes a test and commits it: the diff shows nothing, the count does.
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let start = tests.find("    def test_sub").unwrap();
    let end = tests.find("\n\nif __name__").unwrap();
    fs::write(
        dir.join("test_calc.py"),
        format!("{}{}", &tests[..start].trim_end(), &tests[end..]),
    )
    .unwrap();
    git(dir, &["commit", "-qam", "drop a test"]);
    touch_code(dir);
    let blocked = check();
    assert_eq!(code(&blocked), 1);
    assert_snapshot!(stable(&blocked.stdout, dir), @r"
    Checkpoint — The tests were weakened:
      `python3 -m unittest -q`: 1 test passed; 2 in the last green run
    Fix the code, not the tests: restore what was weakened. If a test itself was wrong, say so to the user in your final answer.
    ");

    // Accepting is a person's step: without a terminal it asks for --yes.
    let refused = checkpoint_as(user.path(), dir, &["integrity", "accept"], "y\n");
    assert_eq!(code(&refused), 2);
    assert!(
        stderr(&refused).contains("checkpoint integrity accept --yes"),
        "{}",
        stderr(&refused)
    );
    let accepted = checkpoint_as(user.path(), dir, &["integrity", "accept", "--yes"], "");
    assert_eq!(code(&accepted), 0, "{}", stderr(&accepted));
    assert_snapshot!(stable(&accepted.stdout, dir), @r"
    These changes weaken the tests:
      `python3 -m unittest -q`: 1 test passed; 2 in the last green run
    Accepted, the gate lets them pass until one of these files changes again, and shows them to you at every stop.
    Accepted 1 finding(s) in [repo].
    ");

    // The accepted drop passes, and the user is told it stands; that green stop makes 1 the
    // new baseline, after which nothing is left to say.
    let after = check();
    assert_eq!(code(&after), 1, "only the commit gate is left");
    assert!(!String::from_utf8_lossy(&after.stdout).contains("weakened"));
    assert!(
        stderr(&after).contains("test changes you accepted on"),
        "{}",
        stderr(&after)
    );
    git(dir, &["commit", "-qam", "touch again"]);
    touch_code(dir);
    let later = check();
    assert_eq!(code(&later), 1);
    assert!(!stderr(&later).contains("accepted"), "{}", stderr(&later));
    let nothing = checkpoint_as(user.path(), dir, &["integrity", "accept"], "");
    assert_eq!(code(&nothing), 0);
    assert_snapshot!(stable(&nothing.stdout, dir), @"Nothing to accept: the changes weaken no test.");
}

#[test]
fn an_accepted_file_finding_ends_when_the_file_changes_again() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let skipped = tests.replace(
        "    def test_sub",
        "    @unittest.skip(\"flaky\")\n    def test_sub",
    );
    fs::write(dir.join("test_calc.py"), &skipped).unwrap();
    let check = || checkpoint_as(user.path(), dir, &["check"], "");
    assert!(String::from_utf8_lossy(&check().stdout).contains("new skip/focus marker"));
    let accepted = checkpoint_as(user.path(), dir, &["integrity", "accept", "--yes"], "");
    assert_eq!(code(&accepted), 0, "{}", stderr(&accepted));
    let passing = check();
    assert!(!String::from_utf8_lossy(&passing.stdout).contains("weakened"));
    assert!(
        stderr(&passing).contains("test_calc.py"),
        "{}",
        stderr(&passing)
    );

    // Another edit of the accepted file is judged afresh.
    fs::write(dir.join("test_calc.py"), skipped + "\n").unwrap();
    let judged = check();
    assert_eq!(code(&judged), 1);
    assert!(String::from_utf8_lossy(&judged.stdout).contains("new skip/focus marker"));
}

/// A Claude Code `Stop` payload for `dir`.
fn stop(dir: &Path, active: bool) -> String {
    serde_json::json!({
        "session_id": "6f1c2a4e-0000-4000-8000-000000000001",
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "I could not make the test pass.",
    })
    .to_string()
}

#[test]
fn a_stop_let_through_by_the_cap_is_on_record_for_log_and_the_next_session() {
    let repo = repo("failing-test");
    let dir = repo.path();
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    for active in [false, true, true] {
        let out = checkpoint_as(user.path(), dir, &["check"], &stop(dir, active));
        assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stdout));
    }
    let through = checkpoint_as(user.path(), dir, &["check"], &stop(dir, true));
    assert_eq!(code(&through), 0);

    let log = checkpoint_as(user.path(), dir, &["log"], "");
    let log = stable(&log.stdout, dir);
    assert!(
        log.contains(
            "⚠ allowed after 3 blocks in a row: the tests fail (test_calc.CalcTest.test_add)"
        ),
        "{log}"
    );
    let resume = checkpoint_as(user.path(), dir, &["resume"], "");
    let resume = String::from_utf8_lossy(&resume.stdout);
    assert!(
        resume.contains(
            "⚠️ The last stop was allowed after 3 blocks in a row: the tests fail \
             (test_calc.CalcTest.test_add). Resolve that first, or tell the user why not."
        ),
        "{resume}"
    );
}

#[test]
fn prove_failing_blocks_changed_tests_that_pass_on_the_old_code_too() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let config = dir.join("checkpoint.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        text + "\n[integrity]\nprove_failing = true\n\n[stop]\ncommit_gate = false\n",
    )
    .unwrap();
    git(dir, &["commit", "-qam", "prove failing"]);
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let check = || checkpoint_as(user.path(), dir, &["check"], "");
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let with = |test: &str| tests.replace("    def test_sub", &format!("{test}\n    def test_sub"));

    // `mul` is new, and the new test does not touch it: it passes on the old code too.
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(
        dir.join("calc.py"),
        calc + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();
    let unrelated = "    def test_add_again(self):\n        self.assertEqual(add(1, 1), 2)\n";
    fs::write(dir.join("test_calc.py"), with(unrelated)).unwrap();
    let blocked = check();
    assert_eq!(code(&blocked), 1, "{}", stderr(&blocked));
    assert_snapshot!(stable(&blocked.stdout, dir), @r"
    Checkpoint — The changed tests do not show the change:
      `python3 -m unittest -q`: passes on HEAD's code too, with the changed tests (test_calc.py): they do not show the change
    Make a changed test fail on the old code: test what the change fixes or adds. If no test can, say why in your final answer.
    ");
    // The temporary worktree is gone, from the disk and from git's list.
    let worktrees = git(dir, &["worktree", "list", "--porcelain"]);
    let listed = String::from_utf8_lossy(&worktrees.stdout);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");

    // A test of `mul` fails on the old code (there is no `mul`): the change is shown.
    let proving = "    def test_mul(self):\n        from calc import mul\n\n        self.assertEqual(mul(2, 3), 6)\n";
    fs::write(dir.join("test_calc.py"), with(proving)).unwrap();
    let allowed = check();
    assert_eq!(
        code(&allowed),
        0,
        "{}",
        String::from_utf8_lossy(&allowed.stdout)
    );
}

/// An intended behaviour change: `add` now counts one more, and its test says so. The tests as
/// they were fail on the new code, so the stop is blocked until a person accepts the change;
/// then only the commit gate is left.
#[test]
fn an_intended_behaviour_change_is_blocked_until_a_person_accepts_it() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let check = || checkpoint_as(user.path(), dir, &["check"], "");
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(dir.join("calc.py"), calc.replace("a + b", "a + b + 1")).unwrap();
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    fs::write(
        dir.join("test_calc.py"),
        tests.replace("add(2, 3), 5)", "add(2, 3), 6)"),
    )
    .unwrap();

    let blocked = check();
    assert_eq!(code(&blocked), 1, "{blocked:?}");
    assert_snapshot!(stable(&blocked.stdout, dir), @r"
    Checkpoint — The tests were weakened:
      test_calc.py:8: expected value changed from `5` to `6`
    Fix the code, not the tests: restore what was weakened. If a test itself was wrong, say so to the user in your final answer.
    Checkpoint — The tests were changed to fit the code:
      `python3 -m unittest -q`: the tests as they were fail on your code: `test_calc.CalcTest.test_add` (AssertionError: 6 != 5)
    Fix the code so that the tests as they were pass, and keep what their assertions meant. If the behaviour change is intended, say so to the user in your final answer: the user can accept it.
    ");
    let accepted = checkpoint_as(user.path(), dir, &["integrity", "accept", "--yes"], "");
    assert_eq!(code(&accepted), 0, "{accepted:?}");
    let after = check();
    assert_eq!(code(&after), 1, "{after:?}");
    assert_snapshot!(stable(&after.stdout, dir), @r"
    Checkpoint — Tests: 2 passed ([time], cached)
    You have uncommitted code changes. Commit your work before stopping.
      M calc.py
      M test_calc.py
    ");
}

/// A test that was already red at the base and that the turn repairs (the old test fails on the
/// new code and on the base's own code alike) is not the turn's doing: allowed — what the replay
/// of real history found as the one source of false blocks.
#[test]
fn a_test_red_before_the_turn_and_repaired_in_it_is_not_a_finding() {
    let repo = repo("python-passing");
    let dir = repo.path();
    let calc = fs::read_to_string(dir.join("calc.py")).unwrap();
    fs::write(
        dir.join("calc.py"),
        calc + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();
    let tests = fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let red = tests.replace(
        "    def test_sub(self):",
        "    def test_mul(self):\n        from calc import mul\n        self.assertEqual(mul(2, 3), 7)\n\n    def test_sub(self):",
    );
    fs::write(dir.join("test_calc.py"), &red).unwrap();
    git(dir, &["commit", "-qam", "mul, with a wrong test"]);
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);

    fs::write(
        dir.join("test_calc.py"),
        red.replace("mul(2, 3), 7)", "mul(2, 3), 6)"),
    )
    .unwrap();
    let out = checkpoint_as(user.path(), dir, &["check"], "");
    let text = stable(&out.stdout, dir);
    assert!(!text.contains("changed to fit"), "{text}");
    assert_snapshot!(text, @r"
    Checkpoint — Tests: 3 passed ([time])
    You have uncommitted code changes. Commit your work before stopping.
      M test_calc.py
    ");
}
