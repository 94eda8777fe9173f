//! The exit statuses `checkpoint_cli::exit_codes` documents: the numbers, and a command that
//! exits with each (but [`BUG`], which no command reaches on purpose).

use std::fs;

use checkpoint_cli::exit_codes::{BUG, DEGRADED, NO, OK, SETUP, USAGE};
use checkpoint_testkit::repo;

use crate::{checkpoint, code};

/// A repository of `fixture` with `config` as its checkpoint.toml.
fn configured(fixture: &str, config: &str) -> tempfile::TempDir {
    let dir = repo(fixture);
    fs::write(dir.path().join("checkpoint.toml"), config).unwrap();
    dir
}

#[test]
fn the_codes_are_the_documented_numbers() {
    assert_eq!([OK, NO, USAGE, DEGRADED, SETUP, BUG], [0, 1, 2, 2, 3, 4]);
}

#[test]
fn each_answer_exits_with_its_code_and_prints_it() {
    let unrunnable = "[tests]\ncommand = \"no-such-test-runner --all\"\n";
    let answers = [
        ("an allowed stop", repo("python-passing"), OK),
        ("a blocked stop", repo("failing-test"), NO),
        (
            "a test command that cannot run",
            configured("failing-test", unrunnable),
            NO,
        ),
    ];
    for (what, dir, expected) in answers {
        let out = checkpoint(dir.path(), &["check"], "");
        assert_eq!(code(&out), i32::from(expected), "{what}: {out:?}");
        // The decision is on stdout: how a script tells a degraded check from a usage error.
        assert!(!out.stdout.is_empty(), "{what}: {out:?}");
    }
}

#[test]
fn each_error_kind_exits_with_its_code_and_prints_only_the_error() {
    let broken = "[stop]\nmax_blocks = \"three\"\n";
    let errors = [
        (
            "a value clap refuses",
            repo("python-passing"),
            &["check", "--agent", "nobody"][..],
            USAGE,
        ),
        (
            "a value checkpoint refuses",
            repo("python-passing"),
            &["save", " "],
            USAGE,
        ),
        ("no repository", repo("no-repo"), &["diff"], SETUP),
        (
            "a broken setting",
            configured("failing-test", broken),
            &["check"],
            SETUP,
        ),
    ];
    for (what, dir, args, expected) in errors {
        let out = checkpoint(dir.path(), args, "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), i32::from(expected), "{what}: {stderr}");
        assert!(stderr.starts_with("error: "), "{what}: {stderr}");
        assert!(out.stdout.is_empty(), "{what}: {out:?}");
    }
}
