//! Affected-test selection through `checkpoint check`, on a real Cargo workspace (built and tested
//! by the real `cargo`) and a real Python package (run by the real `python3 -m unittest`).

use std::fs;
use std::path::Path;

use checkpoint_testkit::{Tool, repo};

use crate::{checkpoint, checkpoint_as, code};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Appends `line` to the file at `path` under `dir`.
fn append(dir: &Path, path: &str, line: &str) {
    let path = dir.join(path);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("{text}{line}\n")).unwrap();
}

/// Replaces `from` with `to` in the file at `path` under `dir`.
fn edit(dir: &Path, path: &str, from: &str, to: &str) {
    let path = dir.join(path);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{text}");
    fs::write(&path, text.replace(from, to)).unwrap();
}

/// `checkpoint check` (with `extra` arguments) in `dir`; its stdout.
fn check(dir: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["check"];
    args.extend_from_slice(extra);
    let out = checkpoint(dir, &args, "");
    (code(&out), stdout(&out))
}

#[test]
fn a_cargo_workspace_tests_the_changed_package_and_its_dependents() {
    let repo = repo("cargo-workspace");
    let dir = repo.path();

    // An independent crate: only its own tests.
    append(dir, "tools/tool/src/lib.rs", "// touched");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 3 packages, for 1 changed file (`cargo test -p \
             tool`)"
        ),
        "{text}"
    );
    git_checkout(dir);

    // A dependency: it and its dependent, not the unrelated crate.
    append(dir, "crates/core/src/lib.rs", "// touched");
    let (_, text) = check(dir, &[]);
    assert!(
        text.contains("2 of 3 packages, for 1 changed file (`cargo test -p core -p app`)")
            || text.contains("2 of 3 packages, for 1 changed file (`cargo test -p app -p core`)"),
        "{text}"
    );

    // A failing affected test still blocks.
    edit(dir, "crates/core/src/lib.rs", "a + b", "a - b");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    // Cargo stops at the first failing test binary: `app`'s or `core`'s.
    assert!(
        text.contains("- tests::adds") || text.contains("- tests::totals"),
        "{text}"
    );
    assert!(
        text.contains("Only the affected tests ran: 2 of 3"),
        "{text}"
    );

    // `--all` runs the whole command.
    let (_, text) = check(dir, &["--all"]);
    assert!(text.contains("$ cargo test  ("), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
    git_checkout(dir);

    // A changed manifest runs everything.
    append(dir, "crates/app/Cargo.toml", "# touched");
    let (_, text) = check(dir, &[]);
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(text.contains("Tests: 3 passed"), "{text}");
}

#[test]
fn a_python_package_tests_the_modules_that_import_the_change() {
    let repo = repo("python-package");
    let dir = repo.path();

    append(dir, "pkg/strings.py", "# touched");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 2 test modules, for 1 changed file (`python3 -m \
             unittest -q tests.test_strings`)"
        ),
        "{text}"
    );
    assert!(text.contains("Tests: 1 passed"), "{text}");
    git_checkout(dir);

    // Reached through another module (`pkg.calc` imports `pkg.util`), and still blocking.
    edit(dir, "pkg/util.py", "max(low, min(high, x))", "low");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("test_add"), "{text}");
    assert!(
        text.contains("(`python3 -m unittest -q tests.test_calc`)"),
        "{text}"
    );
    git_checkout(dir);

    // A package's `__init__.py` runs everything.
    append(dir, "pkg/__init__.py", "# touched");
    let (_, text) = check(dir, &[]);
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(text.contains("Tests: 2 passed"), "{text}");
}

/// Puts the worktree back to `HEAD`.
fn git_checkout(dir: &Path) {
    crate::git(dir, &["checkout", "--", "."]);
}

#[test]
fn full_before_commit_runs_everything_once_the_affected_tests_pass() {
    let repo = repo("python-package");
    let dir = repo.path();
    fs::write(
        dir.join("checkpoint.toml"),
        "[tests]\nfull_before_commit = true\n",
    )
    .unwrap();
    crate::git(dir, &["add", "checkpoint.toml"]);
    crate::git(dir, &["commit", "-qm", "full before commit"]);

    // Red: only the affected tests run, and the stop is blocked on them.
    edit(dir, "pkg/strings.py", "s.upper()", "s.lower()");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(
        text.contains("Only the affected tests ran: 1 of 2"),
        "{text}"
    );

    // Green: the whole suite runs before the stop may go on.
    edit(dir, "pkg/strings.py", "s.lower()", "s.upper() ");
    let (_, text) = check(dir, &[]);
    assert!(text.contains("Tests: 2 passed"), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
}

#[test]
fn the_cli_started_as_a_background_run_warms_the_stop() {
    let repo = repo("python-package");
    let dir = repo.path();
    fs::write(dir.join("checkpoint.toml"), "[tests]\nprewarm = true\n").unwrap();
    crate::git(dir, &["add", "checkpoint.toml"]);
    crate::git(dir, &["commit", "-qm", "prewarm"]);
    append(dir, "pkg/strings.py", "# touched");
    // What a tool event judged by `checkpoint check` starts: its own executable, `--prewarm`.
    // One user does both: the stop takes the background run's pass by its signed receipt.
    let user = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(user.path(), dir, &[]);
    let dir_arg = dir.to_str().unwrap();
    let warmed = checkpoint_as(user.path(), dir, &["--prewarm", dir_arg], "");
    assert_eq!(code(&warmed), 0, "{warmed:?}");
    assert_eq!(stdout(&warmed), "");
    let text = stdout(&checkpoint_as(user.path(), dir, &["check"], ""));
    assert!(
        text.contains("Tests: 1 passed (") && text.contains(", cached)"),
        "{text}"
    );
}

#[test]
fn a_go_module_tests_the_changed_package_and_its_importers() {
    if !checkpoint_testkit::has(Tool::Go) {
        return;
    }
    let repo = repo("go-module");
    let dir = repo.path();

    // An independent package: only its own tests.
    append(dir, "text/text.go", "// touched");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 4 packages, for 1 changed file (`go test ./text`)"
        ),
        "{text}"
    );
    git_checkout(dir);

    // A dependency: it, its importer and the importer's importer; failing, it blocks.
    edit(dir, "money/money.go", "a + b", "a - b");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(
        text.contains("3 of 4 packages, for 1 changed file (`go test ./cart ./money ./report`)"),
        "{text}"
    );
    assert!(text.contains("TestAdd"), "{text}");
    git_checkout(dir);

    // A test file: only its package, which its importers' tests do not see.
    append(dir, "money/money_test.go", "// touched");
    let (_, text) = check(dir, &[]);
    assert!(text.contains("(`go test ./money`)"), "{text}");
    git_checkout(dir);

    // A changed go.mod runs everything.
    append(dir, "go.mod", "// touched");
    let (_, text) = check(dir, &[]);
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(text.starts_with("Checkpoint — Tests: passed"), "{text}");
}

#[test]
fn an_npm_package_runs_the_jest_tests_related_to_the_change() {
    if !checkpoint_testkit::has(Tool::Npm) {
        return;
    }
    let repo = repo("npm-package");
    let dir = repo.path();

    // An independent file: only its test; the package script's runner starts directly.
    append(dir, "src/text.js", "// touched");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 2 test files, for 1 changed file \
             (`node_modules/.bin/jest --ci --findRelatedTests src/text.js`)"
        ),
        "{text}"
    );
    assert!(text.contains("Tests: 1 passed"), "{text}");
    git_checkout(dir);

    // Reached through another module (`cart` requires `money`), and still blocking.
    edit(dir, "src/money.js", "a + b", "a - b");
    let (exit, text) = check(dir, &[]);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("totals"), "{text}");
    assert!(!text.contains("shouts"), "{text}");
    assert!(
        text.contains("(`node_modules/.bin/jest --ci --findRelatedTests src/money.js`)"),
        "{text}"
    );
    git_checkout(dir);

    // A file no test imports (jest's setup file) runs everything, and so does package.json.
    append(dir, "jest.setup.js", "// touched");
    let (_, text) = check(dir, &[]);
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(text.contains("Tests: 2 passed"), "{text}");
    git_checkout(dir);
    edit(dir, "package.json", "\"1.0.0\"", "\"1.0.1\"");
    let (_, text) = check(dir, &[]);
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(text.contains("Tests: 2 passed"), "{text}");
}

/// A data file a test reads is test input, wherever it lies and whatever its extension: a change
/// that breaks what the test expects runs the tests and is blocked. Files under a test data
/// directory are test input by their place; one elsewhere because a test names it.
#[test]
fn a_data_file_a_test_reads_runs_the_tests() {
    let repo = repo("python-passing");
    let dir = repo.path();
    fs::create_dir(dir.join("fixtures")).unwrap();
    fs::write(dir.join("expected.txt"), "5\n").unwrap();
    fs::write(dir.join("fixtures/sub.txt"), "2\n").unwrap();
    edit(
        dir,
        "test_calc.py",
        "self.assertEqual(add(2, 3), 5)",
        "self.assertEqual(add(2, 3), int(open(\"expected.txt\").read()))",
    );
    edit(
        dir,
        "test_calc.py",
        "self.assertEqual(sub(5, 3), 2)",
        "self.assertEqual(sub(5, 3), int(open(\"fixtures/sub.txt\").read()))",
    );
    crate::git(dir, &["add", "-A"]);
    crate::git(dir, &["commit", "-qm", "tests read their data"]);

    for (path, text) in [("expected.txt", "6\n"), ("fixtures/sub.txt", "3\n")] {
        fs::write(dir.join(path), text).unwrap();
        let (exit, out) = check(dir, &[]);
        assert_eq!(exit, 1, "{out}");
        assert!(
            out.starts_with("Checkpoint — Tests: FAILED"),
            "{path}: {out}"
        );
        git_checkout(dir);
    }
    // A doc no test names is still docs: no tests, no gate.
    append(dir, "README.md", "More words.");
    let (exit, out) = check(dir, &[]);
    assert_eq!(exit, 0, "{out}");
}
