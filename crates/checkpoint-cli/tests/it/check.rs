//! `checkpoint check`: the whole gate on real repositories.

use std::fs;

use checkpoint_testkit::repo;
use insta::assert_snapshot;

use crate::{checkpoint, checkpoint_as, code, git, stable};

fn stop_payload(dir: &std::path::Path, session: &str, active: bool) -> String {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "Done.",
    })
    .to_string()
}

#[test]
fn failing_test_blocks_with_its_name_then_is_cached() {
    let repo = repo("failing-test");
    let first = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&first), 1);
    assert_snapshot!(stable(&first.stdout, repo.path()), @r#"
    Checkpoint — Tests: FAILED
    $ python3 -m unittest -q  (exit 1, [time])
    Failing tests:
    - test_calc.CalcTest.test_add
    Output (last 12 lines):
    ======================================================================
    FAIL: test_add (test_calc.CalcTest.test_add)
    ----------------------------------------------------------------------
    Traceback (most recent call last):
      File "[repo]/test_calc.py", line 8, in test_add
        self.assertEqual(add(2, 3), 5)
    AssertionError: -1 != 5

    ----------------------------------------------------------------------
    Ran 2 tests in [time]

    FAILED (failures=1)
    Fix the failing tests before stopping.
    "#);

    let second = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&second), 1);
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(
        text.contains("cached: nothing changed since this run"),
        "{text}"
    );

    // Fixing the code changes the fingerprint: the tests run again and pass; the commit gate
    // then asks for a commit; after the commit the stop is allowed.
    let fixed = fs::read_to_string(repo.path().join("calc.py"))
        .unwrap()
        .replacen("return a - b", "return b + a", 1);
    fs::write(repo.path().join("calc.py"), fixed).unwrap();
    let third = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&third), 1);
    assert_snapshot!(stable(&third.stdout, repo.path()), @r"
    Checkpoint — Tests: 2 passed ([time])
    You have uncommitted code changes. Commit your work before stopping.
      M calc.py
    ");
    git(repo.path(), &["commit", "-qam", "fix add"]);
    let fourth = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&fourth), 0);
    assert_snapshot!(stable(&fourth.stdout, repo.path()), @"Checkpoint — No changes since the last commit.");
}

/// The test cache is a file in the repository's state directory, which the agent can write: a
/// failed run rewritten as a pass is not taken for one. A cached pass stands only with a signed
/// receipt of it (kept in the session log when no task is active); without one, the tests run.
#[test]
fn a_pass_written_into_the_test_cache_by_hand_is_not_trusted() {
    let repo = repo("failing-test");
    let home = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(home.path(), repo.path(), &[]);
    let stop = || checkpoint_as(home.path(), repo.path(), &["check"], "");
    assert_eq!(code(&stop()), 1);
    let cache = repo.path().join(".git/checkpoint/cache");
    let mut forged = 0;
    for entry in fs::read_dir(&cache).unwrap() {
        let path = entry.unwrap().path();
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let Ok(mut json) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if json["outcome"]["status"] == "failed" {
            json["outcome"]["status"] = "passed".into();
            json["outcome"]["exit_code"] = 0.into();
            fs::write(&path, json.to_string()).unwrap();
            forged += 1;
        }
    }
    assert_eq!(forged, 1, "the failed run is cached in {}", cache.display());
    let again = stop();
    assert_eq!(code(&again), 1);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("Tests: FAILED") && !text.contains("cached"),
        "{text}"
    );

    // An honest pass is cached, with its receipt: the next stop does not run the tests again.
    let fixed = fs::read_to_string(repo.path().join("calc.py"))
        .unwrap()
        .replacen("return a - b", "return b + a", 1);
    fs::write(repo.path().join("calc.py"), fixed).unwrap();
    assert!(String::from_utf8_lossy(&stop().stdout).contains("Tests: 2 passed"));
    let cached = String::from_utf8_lossy(&stop().stdout).into_owned();
    assert!(
        cached.contains("Tests: 2 passed") && cached.contains(", cached)"),
        "{cached}"
    );
}

#[test]
fn forking_test_that_hangs_is_killed_with_its_group() {
    let repo = repo("forking-hang");
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 1);
    let text = stable(&out.stdout, repo.path());
    assert!(
        text.starts_with("Checkpoint — Tests: TIMED OUT\n$ sh hang_test.sh  (killed after [time])"),
        "{text}"
    );
    let pid = fs::read_to_string(repo.path().join("grandchild.pid")).unwrap();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    // Reaped or a zombie on its way out: either way it no longer runs.
    let alive = fs::read_to_string(proc_dir.join("stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false);
    assert!(!alive, "grandchild {pid} survived");
}

#[test]
fn docs_only_change_is_allowed() {
    let repo = repo("docs-only");
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 0);
    assert_snapshot!(stable(&out.stdout, repo.path()), @"Checkpoint — 2 changed files need no tests and no commit.");
}

#[test]
fn fresh_repository_without_commits_asks_for_a_commit() {
    let repo = repo("fresh-repo");
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let text = stable(&out.stdout, repo.path());
    assert!(text.contains("Commit your work before stopping."), "{text}");
    assert!(text.contains("Note: no commits yet"), "{text}");
}

#[test]
fn long_file_lists_are_cut() {
    let repo = repo("many-changes");
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 1);
    let text = stable(&out.stdout, repo.path());
    assert_eq!(
        text.lines().filter(|l| l.starts_with("  ")).count(),
        21,
        "{text}"
    );
    assert!(text.contains("  … and "), "{text}");
}

#[test]
fn outside_git_is_an_error_with_a_hint() {
    let dir = repo("no-repo");
    for args in [&["check"][..], &["check", "--json"]] {
        let out = checkpoint(dir.path(), args, "");
        assert_eq!(code(&out), 3, "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        insta::allow_duplicates! {
                assert_snapshot!(stable(&out.stderr, dir.path()), @r"
                error: not inside a git repository: [repo]
                hint: run `checkpoint check` inside a git repository (`git init` makes one)
            ");
        }
    }
}

#[test]
fn consecutive_blocks_are_capped_per_turn() {
    let repo = repo("failing-test");
    let mut codes = Vec::new();
    for i in 0..5 {
        let out = checkpoint(
            repo.path(),
            &["check"],
            &stop_payload(repo.path(), "s1", i > 0),
        );
        codes.push(code(&out));
        if i == 3 {
            assert_snapshot!(stable(&out.stdout, repo.path()), @"Checkpoint — Stop allowed after 3 blocks in a row (the max_blocks cap). Still unresolved: the tests fail (test_calc.CalcTest.test_add).");
        }
    }
    // Three blocks, then the cap lets it stop; the allowed stop resets the count, so the next
    // retry may block again.
    assert_eq!(codes, [1, 1, 1, 0, 1]);

    // A new user prompt resets the count too.
    let prompt = serde_json::json!({
        "session_id": "s2", "cwd": repo.path(), "hook_event_name": "UserPromptSubmit", "prompt": "go on"
    });
    for active in [false, true, true] {
        assert_eq!(
            code(&checkpoint(
                repo.path(),
                &["check"],
                &stop_payload(repo.path(), "s2", active)
            )),
            1
        );
    }
    assert_eq!(
        code(&checkpoint(repo.path(), &["check"], &prompt.to_string())),
        0
    );
    assert_eq!(
        code(&checkpoint(
            repo.path(),
            &["check"],
            &stop_payload(repo.path(), "s2", true)
        )),
        1
    );
}

#[test]
fn json_prints_the_typed_decision() {
    let repo = repo("docs-only");
    let out = checkpoint(repo.path(), &["check", "--json"], "");
    assert_eq!(code(&out), 0);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["verdict"], "allow");
    assert_eq!(value["reason"]["kind"], "satisfied");
    assert_eq!(value["reason"]["files"].as_array().unwrap().len(), 2);
}

#[test]
fn json_carries_integrity_findings() {
    let repo = repo("python-passing");
    fs::remove_file(repo.path().join("test_calc.py")).unwrap();
    let out = checkpoint(repo.path(), &["check", "--json"], "");
    assert_eq!(code(&out), 1);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["verdict"], "block");
    assert_eq!(
        value["reason"],
        serde_json::json!({
            "kind": "integrity",
            "findings": [{
                "kind": "test_file_deleted",
                "file": "test_calc.py",
                "line": null,
                "description": "test file deleted",
            }],
        })
    );
}

#[test]
fn bad_input_exits_2_with_one_line_and_a_hint() {
    let repo = repo("python-passing");
    let cases: Vec<(&str, String)> = vec![
        ("malformed", "{not json".to_owned()),
        (
            "missing cwd",
            stop_payload(&repo.path().join("gone"), "s", false),
        ),
        ("bad id", stop_payload(repo.path(), "../escape", false)),
    ];
    for (what, stdin) in cases {
        let out = checkpoint(repo.path(), &["check"], &stdin);
        assert_eq!(code(&out), 2, "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{what}: {err}");
        assert!(
            lines[0].starts_with("error: ") && lines[1].starts_with("hint: "),
            "{what}: {err}"
        );
    }
}

#[test]
fn broken_config_names_file_line_and_key() {
    let repo = repo("failing-test");
    fs::write(
        repo.path().join("checkpoint.toml"),
        "[stop]\nmax_blocks = \"three\"\n",
    )
    .unwrap();
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 3);
    let err = stable(&out.stderr, repo.path());
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("error: [repo]/checkpoint.toml:2: stop.max_blocks"),
        "{err}"
    );

    fs::write(
        repo.path().join("checkpoint.toml"),
        "[[rule]]\nname = \"x\"\ninclude = [\"src/[a\"]\n",
    )
    .unwrap();
    let out = checkpoint(repo.path(), &["check"], "");
    assert_eq!(code(&out), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("src/[a"));
}

#[test]
fn a_test_command_that_cannot_run_blocks_and_exits_1() {
    let repo = repo("failing-test");
    // With the commit gate on (the default) too: untested code is not asked to be committed.
    for config in ["", "[stop]\ncommit_gate = false\n"] {
        fs::write(
            repo.path().join("checkpoint.toml"),
            format!("[tests]\ncommand = \"no-such-test-runner --all\"\n{config}"),
        )
        .unwrap();
        let out = checkpoint(repo.path(), &["check"], "");
        assert_eq!(code(&out), 1, "{config}");
        // The shell's own complaint, in parentheses, differs between shells.
        let stdout = stable(&out.stdout, repo.path());
        let text: Vec<&str> = stdout
            .lines()
            .map(|l| l.split(" (").next().unwrap().trim_end())
            .collect();
        insta::allow_duplicates! {
            assert_snapshot!(text.join("\n"), @r"
            Checkpoint — Tests: COULD NOT RUN
            $ no-such-test-runner --all
            test command not found: `no-such-test-runner --all`
            The tests could not run, so nothing was checked. Make the tests runnable
            ");
            assert_snapshot!(String::from_utf8_lossy(&out.stderr), @"");
        }
    }
}

#[test]
fn non_utf8_paths_are_reported_not_fatal() {
    use std::os::unix::ffi::OsStrExt;
    let repo = repo("python-passing");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    fs::write(repo.path().join(name), "x = 1\n").unwrap();
    let out = checkpoint(repo.path(), &["check"], "");
    let text = stable(&out.stdout, repo.path());
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("Note: 1 path is not valid UTF-8"), "{text}");
}

#[test]
fn detached_head_is_noted() {
    let repo = repo("detached-head");
    let out = checkpoint(repo.path(), &["check"], "");
    let text = stable(&out.stdout, repo.path());
    assert!(text.contains("Note: HEAD is detached at "), "{text}");
}

#[test]
fn a_check_by_hand_is_a_read_and_an_empty_save_is_refused() {
    let dir = repo("python-passing");
    let log =
        |dir: &std::path::Path| String::from_utf8(checkpoint(dir, &["log"], "").stdout).unwrap();
    let out = checkpoint(dir.path(), &["check"], "");
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stdout));
    assert_snapshot!(log(dir.path()), @"No session checkpoints yet.");

    let out = checkpoint(dir.path(), &["save", " "], "");
    assert_eq!(code(&out), 2);
    assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r#"
    error: the message is empty
    hint: say what was reached: `checkpoint save "halfway through the refactor"`
    "#);
    assert_eq!(code(&checkpoint(dir.path(), &["save", "halfway"], "")), 0);
    for _ in 0..3 {
        assert_eq!(code(&checkpoint(dir.path(), &["check"], "")), 0);
    }
    let listed = log(dir.path());
    assert_eq!(listed.matches("halfway").count(), 1, "{listed}");
    assert_eq!(listed.lines().count(), 1, "{listed}");
}
