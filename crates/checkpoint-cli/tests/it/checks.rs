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
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write(
        "package.json",
        r#"{"name": "calc", "private": true, "scripts": {"test": "node test.js", "typecheck": "node typecheck.js", "lint": "node lint.js"}}"#,
    );
    write(
        "src/app.js",
        "/** @type {number} */\nconst answer = 42;\nexports.add = (a, b) => a + b;\nexports.answer = answer;\n",
    );
    write(
        "test.js",
        "const assert = require('assert');\nconst { add } = require('./src/app.js');\nassert.strictEqual(add(2, 3), 5, 'add(2, 3)');\nconsole.log('1 passed');\n",
    );
    write(
        "typecheck.js",
        "const text = require('fs').readFileSync('src/app.js', 'utf8');\n\
         const bad = /@type \\{number\\} \\*\\/\\nconst (\\w+) = '/.exec(text);\n\
         if (bad) { console.error(`src/app.js:2: error: Type 'string' is not assignable to type 'number' (${bad[1]}).`); process.exit(2); }\n",
    );
    write("lint.js", "process.exit(0);\n");
    write(
        "checkpoint.toml",
        &format!("[stop]\nprofile = \"{profile}\"\ncommit_gate = false\n"),
    );
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
    let path = repo.join("src/app.js");
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
