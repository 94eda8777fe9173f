//! `[checks]` and `stop.profile = "claims"` on a real JavaScript project: `typecheck`, `lint`
//! and `test` scripts (plain node scripts, no install), detected from `package.json`, approved,
//! run by `npm run` at real stops.

use std::fs;
use std::path::Path;

use checkpoint_testkit::Tool;
use insta::assert_snapshot;

use crate::{checkpoint_as, code, git, stable};

/// A JS project: `add` in `src/app.js`, a test of it, a "typechecker" that rejects a string
/// assigned where the file's `@type {number}` comment says a number goes, and a linter that
/// passes. `profile`: the project's `stop.profile`. Committed, and approved by the test user.
fn project(profile: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    committed(&[
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "node test.js", "typecheck": "node typecheck.js", "lint": "node lint.js"}}"#,
        ),
        (
            "src/app.js",
            "/** @type {number} */\nconst answer = 42;\nexports.add = (a, b) => a + b;\nexports.answer = answer;\n",
        ),
        (
            "test.js",
            "const assert = require('assert');\nconst { add } = require('./src/app.js');\nassert.strictEqual(add(2, 3), 5, 'add(2, 3)');\nconsole.log('1 passed');\n",
        ),
        (
            "typecheck.js",
            "const text = require('fs').readFileSync('src/app.js', 'utf8');\n\
             const bad = /@type \\{number\\} \\*\\/\\nconst (\\w+) = '/.exec(text);\n\
             if (bad) { console.error(`src/app.js:2: error: Type 'string' is not assignable to type 'number' (${bad[1]}).`); process.exit(2); }\n",
        ),
        ("lint.js", "process.exit(0);\n"),
        (
            "checkpoint.toml",
            &format!("[stop]\nprofile = \"{profile}\"\ncommit_gate = false\n"),
        ),
    ])
}

/// A git repository holding `files`, committed, and approved by a new test user (whose config
/// home is the second directory).
fn committed(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (path, text) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "calc"]);
    let config_home = tempfile::tempdir().unwrap();
    checkpoint_testkit::as_test_user(config_home.path());
    checkpoint_testkit::trust(config_home.path(), root, &[]);
    (dir, config_home)
}

/// A stop whose final message is `message`, judged by `checkpoint check`: its exit code (1: a
/// block) and its message.
fn stop(repo: &Path, config_home: &Path, message: &str) -> (i32, String) {
    let payload = crate::claude_payload(
        repo,
        "Stop",
        serde_json::json!({"stop_hook_active": false, "last_assistant_message": message}),
    );
    let out = checkpoint_as(config_home, repo, &["check"], &payload);
    (code(&out), stable(&out.stdout, repo))
}

fn edit(repo: &Path, from: &str, to: &str) {
    edit_file(repo, "src/app.js", from, to);
}

fn edit_file(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap().replacen(from, to, 1);
    fs::write(path, text).unwrap();
}

const WORKING: &str = "I changed add; next I will look at the parser.";

#[test]
fn a_type_error_blocks_at_any_stop() {
    if !checkpoint_testkit::has(Tool::Npm) {
        return;
    }
    let (repo, config_home) = project("claims");
    edit(repo.path(), "const answer = 42;", "const answer = '42';");
    let (exit, claims) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 1, "{claims}");
    assert_snapshot!(claims, @r"
    Checkpoint — Checks (typecheck): FAILED
    typecheck: $ npm run typecheck  (exit 2, [time])
    Output (last 5 lines):

    > typecheck
    > node typecheck.js

    src/app.js:2: error: Type 'string' is not assignable to type 'number' (answer).
    Fix what the failing checks report before stopping.
    Note: not run at this stop: tests. They run when your final message says the work is complete.
    ");
    // The default profile blocks the same, the tests having run and passed.
    let (repo, config_home) = project("every");
    edit(repo.path(), "const answer = 42;", "const answer = '42';");
    let (exit, every) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 1, "{every}");
    let note = claims.rfind("\nNote: ").unwrap();
    assert_eq!(every.trim_end(), &claims[..note]);
}

#[test]
fn a_failing_test_blocks_at_every_stop_by_default_and_at_a_claim_under_the_claims_profile() {
    if !checkpoint_testkit::has(Tool::Npm) {
        return;
    }
    // The default profile: the test fails at a stop that claims nothing.
    let (repo, config_home) = project("every");
    edit(repo.path(), "a + b", "a - b");
    let (exit, text) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Tests: FAILED\n$ npm test"),
        "{text}"
    );

    // The claims profile: the typecheck and lint run, the tests wait for a claim.
    let (repo, config_home) = project("claims");
    edit(repo.path(), "a + b", "a - b");
    let (exit, text) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 0, "{text}");
    assert_snapshot!(text, @r"
    Checkpoint — No tests to run; checks passed: typecheck, lint. Nothing else required.
    Note: not run at this stop: tests. They run when your final message says the work is complete.
    ");
    let (exit, text) = stop(repo.path(), config_home.path(), "Done: add is implemented.");
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Tests: FAILED\n$ npm test"),
        "{text}"
    );
    // Blocked at its claim, the turn stays claimed: a next stop that claims nothing still runs
    // the tests.
    let payload = crate::claude_payload(
        repo.path(),
        "Stop",
        serde_json::json!({"stop_hook_active": true, "last_assistant_message": WORKING}),
    );
    let out = checkpoint_as(config_home.path(), repo.path(), &["check"], &payload);
    assert_eq!(code(&out), 1);

    // Fixed: the claim is allowed with every check behind it.
    edit(repo.path(), "a - b", "b + a");
    let (exit, text) = stop(repo.path(), config_home.path(), "All tests pass.");
    assert_eq!(exit, 0, "{text}");
    assert_snapshot!(text, @"Checkpoint — Tests: passed ([time]); checks passed: typecheck, lint. Nothing else required.");
}

/// Attack: the agent adds a check of its own to `package.json` (detected, so a project command)
/// in an approved project: it does not run until the user approves it.
#[test]
fn a_check_script_the_agent_adds_does_not_run_unapproved() {
    if !checkpoint_testkit::has(Tool::Npm) {
        return;
    }
    let (repo, config_home) = project("every");
    let manifest = fs::read_to_string(repo.path().join("package.json")).unwrap();
    let manifest = manifest.replace(
        r#""lint": "node lint.js""#,
        r#""lint": "node lint.js", "build": "touch pwned""#,
    );
    fs::write(repo.path().join("package.json"), manifest).unwrap();
    let (exit, text) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 0, "{text}");
    assert!(!repo.path().join("pwned").exists(), "{text}");
    assert!(text.contains("checks passed: typecheck, lint."), "{text}");
}

/// A Python project with mypy and ruff configured in `pyproject.toml` (so `mypy .` and `ruff
/// check .` are detected) and a pytest test, under `profile`.
fn python_project(profile: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    committed(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = true\n\n[tool.ruff.lint]\nselect = [\"F\"]\n",
        ),
        (
            "calc.py",
            "ANSWER: int = 42\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n",
        ),
        (
            "test_calc.py",
            "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n",
        ),
        (
            "checkpoint.toml",
            &format!(
                "[tests]\ncommand = \"python3 -m pytest -q -p no:cacheprovider\"\n[stop]\nprofile = \"{profile}\"\ncommit_gate = false\n"
            ),
        ),
    ])
}

#[test]
fn python_a_type_error_or_a_lint_error_blocks_at_any_stop_a_failing_test_at_a_claim() {
    if !(checkpoint_testkit::has(Tool::Pytest)
        && checkpoint_testkit::has(Tool::Mypy)
        && checkpoint_testkit::has(Tool::Ruff))
    {
        return;
    }
    let (repo, config_home) = python_project("claims");
    let (repo, home) = (repo.path(), config_home.path());
    edit_file(repo, "calc.py", "ANSWER: int = 42", "ANSWER: int = \"42\"");
    let (exit, text) = stop(repo, home, WORKING);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Checks (typecheck): FAILED\ntypecheck: $ mypy ."),
        "{text}"
    );
    assert!(
        text.contains("calc.py:1: error: Incompatible types in assignment"),
        "{text}"
    );

    edit_file(
        repo,
        "calc.py",
        "ANSWER: int = \"42\"",
        "import os\nANSWER: int = 42",
    );
    let (exit, text) = stop(repo, home, WORKING);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Checks (lint): FAILED\nlint: $ ruff check ."),
        "{text}"
    );
    assert!(text.contains("F401"), "{text}");

    edit_file(repo, "calc.py", "import os\n", "");
    edit_file(repo, "calc.py", "a + b", "a - b");
    let (exit, text) = stop(repo, home, WORKING);
    assert_eq!(exit, 0, "the test waits for a claim: {text}");
    assert!(text.contains("checks passed: typecheck, lint."), "{text}");
    let (exit, text) = stop(repo, home, "Done: add works.");
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Tests: FAILED\n$ python3 -m pytest"),
        "{text}"
    );
    assert!(text.contains("test_add"), "{text}");
}

/// A Rust crate with `cargo check` configured as its typecheck (not detected: under the default
/// profile `cargo test` compiles everything it checks) and `cargo test` detected.
#[test]
fn rust_a_compile_error_blocks_at_any_stop_a_failing_test_at_a_claim() {
    let (repo, config_home) = committed(&[
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
        ),
        (".gitignore", "/target\n"),
        (
            "checkpoint.toml",
            "[checks]\ntypecheck = \"cargo check --quiet --all-targets --offline\"\n[stop]\nprofile = \"claims\"\ncommit_gate = false\n",
        ),
    ]);
    let (repo, home) = (repo.path(), config_home.path());
    edit_file(repo, "src/lib.rs", "    a + b\n", "    a + \"b\"\n");
    let (exit, text) = stop(repo, home, WORKING);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Checks (typecheck): FAILED\ntypecheck: $ cargo check"),
        "{text}"
    );
    assert!(text.contains("error[E0277]"), "{text}");

    edit_file(repo, "src/lib.rs", "    a + \"b\"\n", "    a - b\n");
    let (exit, text) = stop(repo, home, WORKING);
    assert_eq!(exit, 0, "the test waits for a claim: {text}");
    let (exit, text) = stop(repo, home, "Finished: add is done.");
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — Tests: FAILED\n$ cargo test"),
        "{text}"
    );
    assert!(text.contains("tests::adds"), "{text}");
}

/// `checks.custom`: a command of the project's own, approved like the others. It runs at every
/// stop with code changes by default, and waits for a claimed completion under the claims
/// profile (its default class is `full`). The agent writing one into an approved project's
/// `checkpoint.toml` gets nothing run.
#[test]
fn a_custom_check_runs_when_approved_and_waits_for_a_claim_under_the_claims_profile() {
    if !checkpoint_testkit::has(Tool::Node) {
        return;
    }
    let verify = (
        "verify.js",
        "const text = require('fs').readFileSync('src/app.js', 'utf8');\n\
         if (text.includes('TODO')) { console.error('src/app.js: a TODO is left'); process.exit(1); }\n",
    );
    let with_custom = |profile: &str| {
        let toml = format!(
            "[checks]\ncustom = \"node verify.js\"\n[stop]\nprofile = \"{profile}\"\ncommit_gate = false\n"
        );
        committed(&[
            ("src/app.js", "exports.add = (a, b) => a + b;\n"),
            verify,
            ("checkpoint.toml", &toml),
        ])
    };
    let (repo, config_home) = with_custom("every");
    edit_file(repo.path(), "src/app.js", "a + b", "a + b; // TODO");
    let (exit, text) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 1, "{text}");
    assert_snapshot!(text, @r"
    Checkpoint — Checks (custom): FAILED
    custom: $ node verify.js  (exit 1, [time])
    Output (last 1 line):
    src/app.js: a TODO is left
    Fix what the failing checks report before stopping.
    Note: code changed but no test command is configured or detected; set [tests] command in checkpoint.toml.
    ");

    let (repo, config_home) = with_custom("claims");
    edit_file(repo.path(), "src/app.js", "a + b", "a + b; // TODO");
    let (exit, text) = stop(repo.path(), config_home.path(), WORKING);
    assert_eq!(exit, 0, "{text}");
    assert!(text.contains("not run at this stop: custom."), "{text}");
    let (exit, text) = stop(repo.path(), config_home.path(), "Done.");
    assert_eq!(exit, 1, "{text}");

    // Attack: a custom check written into the approved project's settings by the agent. The
    // approved project's own `custom` npm script is no check either: `custom` is never detected.
    let (repo, config_home) = committed(&[
        ("src/app.js", "exports.add = (a, b) => a + b;\n"),
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"custom": "touch detected"}}"#,
        ),
        ("checkpoint.toml", "[stop]\ncommit_gate = false\n"),
    ]);
    fs::write(
        repo.path().join("checkpoint.toml"),
        "[checks]\ncustom = \"touch pwned\"\n[stop]\ncommit_gate = false\n",
    )
    .unwrap();
    edit_file(repo.path(), "src/app.js", "a + b", "b + a");
    let (_, text) = stop(repo.path(), config_home.path(), WORKING);
    assert!(!repo.path().join("pwned").exists(), "{text}");
    assert!(!repo.path().join("detected").exists(), "{text}");
}
