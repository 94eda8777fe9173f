//! `checkpoint check` and test integrity on real repositories in Python, Rust, JS and Go: each
//! way of weakening the tests blocks and names the file; honest changes to tests do not.

use std::fs;
use std::path::Path;

use checkpoint_testkit::{Tool, repo};
use tempfile::TempDir;

use crate::{checkpoint, code, git};

/// A committed repository holding `files`.
fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("ckpt-integrity-")
        .tempdir()
        .expect("temp dir");
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "init"]);
    dir
}

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    fs::create_dir_all(path.parent().expect("a file in the repo")).unwrap();
    fs::write(path, text).unwrap();
}

/// Replaces `from` by `to` in the file at `path`, which must hold it.
fn edit(dir: &Path, path: &str, from: &str, to: &str) {
    let text = fs::read_to_string(dir.join(path)).unwrap();
    assert!(text.contains(from), "{path} holds {from:?}");
    write(dir, path, &text.replacen(from, to, 1));
}

/// `checkpoint check` blocks for weakened tests, naming `file` and saying `what`.
fn blocked(dir: &Path, file: &str, what: &str) {
    let out = checkpoint(dir, &["check"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code(&out), 1, "{text}");
    assert!(
        text.starts_with("Checkpoint — The tests were weakened:"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|line| line.trim_start().starts_with(file))
        .unwrap_or_else(|| panic!("no finding names {file}:\n{text}"));
    assert!(line.contains(what), "{line}");
}

/// `checkpoint check` finds nothing weakened (it may still ask for a commit); the tests ran and
/// `passed` says how.
fn not_weakened(dir: &Path, passed: &str) {
    let out = checkpoint(dir, &["check"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("weakened"), "{text}");
    assert!(text.contains(passed), "{text}");
}

#[test]
fn python_weakenings_block() {
    // The code breaks and the expected value follows it.
    let r = repo("python-passing");
    edit(r.path(), "calc.py", "return a + b", "return a - b");
    edit(r.path(), "test_calc.py", "add(2, 3), 5)", "add(2, 3), -1)");
    blocked(
        r.path(),
        "test_calc.py:8",
        "expected value changed from `5` to `-1`",
    );

    // The expected value lives in a name, committed first; the code breaks and the name follows.
    let r = repo("python-passing");
    edit(
        r.path(),
        "test_calc.py",
        "add(2, 3), 5)",
        "add(2, 3), EXPECTED)",
    );
    edit(
        r.path(),
        "test_calc.py",
        "\n\nclass",
        "\nEXPECTED = 5\n\n\nclass",
    );
    git(r.path(), &["commit", "-qam", "expected value in a name"]);
    edit(r.path(), "calc.py", "return a + b", "return a - b");
    edit(r.path(), "test_calc.py", "EXPECTED = 5", "EXPECTED = -1");
    blocked(
        r.path(),
        "test_calc.py:",
        "expected value `EXPECTED` changed from `5` to `-1`",
    );

    // The test file moves where unittest does not look.
    let r = repo("python-passing");
    fs::rename(
        r.path().join("test_calc.py"),
        r.path().join("calc_disabled.py"),
    )
    .unwrap();
    blocked(
        r.path(),
        "test_calc.py",
        "renamed out of test discovery to `calc_disabled.py`",
    );

    // pytest is told to leave the failing test out.
    let r = repo("python-passing");
    write(
        r.path(),
        "pytest.ini",
        "[pytest]\naddopts = -q -k \"not add\"\n",
    );
    blocked(r.path(), "pytest.ini:2", "`-k not add`");

    // A protected golden file changes.
    let r = repo("python-passing");
    write(r.path(), "golden/add.txt", "5\n");
    edit(
        r.path(),
        "checkpoint.toml",
        "[tests]",
        "[integrity]\nprotected = [\"golden/**\"]\n\n[tests]",
    );
    git(r.path(), &["add", "-A"]);
    git(r.path(), &["commit", "-qm", "golden"]);
    write(r.path(), "golden/add.txt", "-1\n");
    blocked(r.path(), "golden/add.txt", "protected file modified");
}

#[test]
fn honest_python_changes_pass() {
    // The test file renamed within discovery.
    let r = repo("python-passing");
    fs::rename(
        r.path().join("test_calc.py"),
        r.path().join("test_arith.py"),
    )
    .unwrap();
    not_weakened(r.path(), "Tests: 2 passed");

    // A refactor that keeps every assertion, and a new test.
    let r = repo("python-passing");
    edit(
        r.path(),
        "test_calc.py",
        "class CalcTest",
        "class ArithmeticTest",
    );
    edit(
        r.path(),
        "test_calc.py",
        "\n\nif __name__",
        "\n    def test_add_zero(self):\n        self.assertEqual(add(0, 0), 0)\n\n\nif __name__",
    );
    not_weakened(r.path(), "Tests: 3 passed");

    // An expected value changed while the code it exercises did not.
    let r = repo("python-passing");
    edit(r.path(), "test_calc.py", "sub(5, 3), 2)", "sub(5, 3), 2.0)");
    not_weakened(r.path(), "Tests: 2 passed");
}

const CARGO_TOML: &str = "\
[package]
name = \"calc\"
version = \"0.1.0\"
edition = \"2021\"

[lib]
path = \"src/lib.rs\"
";

const LIB_RS: &str = "\
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }
}
";

const CALC_RS: &str = "\
#[test]
fn zero() {
    assert_eq!(calc::add(0, 0), 0);
}
";

fn rust_project() -> TempDir {
    project(&[
        ("Cargo.toml", CARGO_TOML),
        ("src/lib.rs", LIB_RS),
        ("tests/calc.rs", CALC_RS),
        (".gitignore", "target/\nCargo.lock\n"),
        (
            "checkpoint.toml",
            "[tests]\ncommand = \"CARGO_TARGET_DIR=target cargo test -q --offline\"\n",
        ),
    ])
}

#[test]
fn rust_weakenings_block() {
    // The code breaks and the test module's expected value follows it.
    let r = rust_project();
    edit(r.path(), "src/lib.rs", "a + b", "a - b");
    edit(r.path(), "src/lib.rs", "add(2, 3), 5)", "add(2, 3), -1)");
    blocked(
        r.path(),
        "src/lib.rs:11",
        "expected value changed from `5` to `-1`",
    );

    // The test module's test is ignored; the integration test loses its attribute.
    let r = rust_project();
    edit(
        r.path(),
        "src/lib.rs",
        "    #[test]\n",
        "    #[test]\n    #[ignore]\n",
    );
    blocked(r.path(), "src/lib.rs:10", "`#[ignore]`");
    edit(r.path(), "tests/calc.rs", "#[test]\n", "");
    blocked(r.path(), "tests/calc.rs:2", "test `zero` removed");

    // The library's tests are switched off.
    let r = rust_project();
    edit(
        r.path(),
        "Cargo.toml",
        "path = \"src/lib.rs\"",
        "path = \"src/lib.rs\"\ntest = false",
    );
    blocked(r.path(), "Cargo.toml:8", "`test = false` added");
}

#[test]
fn honest_rust_changes_pass() {
    // A new test, and one expecting a panic, in the module; a renamed integration test.
    let r = rust_project();
    edit(
        r.path(),
        "src/lib.rs",
        "        assert_eq!(add(2, 3), 5);\n    }\n",
        "        assert_eq!(add(2, 3), 5);\n    }\n\n    #[test]\n    #[should_panic]\n    fn overflows() {\n        add(i32::MAX, 1);\n    }\n",
    );
    edit(r.path(), "tests/calc.rs", "fn zero", "fn adds_zero");
    not_weakened(r.path(), "passed");
}

const CALC_JS: &str = "\
function add(a, b) {
  return a + b;
}

module.exports = { add };
";

const CALC_TEST_JS: &str = "\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('./calc');

test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('zero', () => {
  assert.strictEqual(add(0, 0), 0);
});
";

fn js_project() -> TempDir {
    project(&[
        (
            "package.json",
            "{\n  \"name\": \"calc\",\n  \"private\": true\n}\n",
        ),
        ("calc.js", CALC_JS),
        ("calc.test.js", CALC_TEST_JS),
        ("checkpoint.toml", "[tests]\ncommand = \"node --test\"\n"),
    ])
}

#[test]
fn js_weakenings_block() {
    let r = js_project();
    edit(r.path(), "calc.js", "a + b", "a - b");
    edit(r.path(), "calc.test.js", "add(2, 3), 5)", "add(2, 3), -1)");
    blocked(
        r.path(),
        "calc.test.js:6",
        "expected value changed from `5` to `-1`",
    );

    let r = js_project();
    edit(r.path(), "calc.test.js", "test('adds'", "test.skip('adds'");
    blocked(r.path(), "calc.test.js:5", "`test.skip`");

    let r = js_project();
    fs::rename(r.path().join("calc.test.js"), r.path().join("calc.js.bak")).unwrap();
    blocked(
        r.path(),
        "calc.test.js",
        "renamed out of test discovery to `calc.js.bak`",
    );

    let r = js_project();
    edit(
        r.path(),
        "package.json",
        "\"private\": true",
        "\"private\": true,\n  \"jest\": { \"testPathIgnorePatterns\": [\"calc\"] }",
    );
    blocked(r.path(), "package.json:4", "`testPathIgnorePatterns`");
}

#[test]
fn honest_js_changes_pass() {
    if !checkpoint_testkit::has(Tool::Node) {
        return;
    }
    let r = js_project();
    edit(r.path(), "calc.test.js", "test('zero'", "test('adds zero'");
    fs::rename(r.path().join("calc.test.js"), r.path().join("add.test.js")).unwrap();
    not_weakened(r.path(), "passed");
}

const CALC_GO: &str = "\
package calc

func Add(a, b int) int {
\treturn a + b
}
";

const CALC_TEST_GO: &str = "\
package calc

import \"testing\"

func TestAdd(t *testing.T) {
\tif got := Add(2, 3); got != 5 {
\t\tt.Errorf(\"Add(2, 3) = %d\", got)
\t}
}
";

/// A Go module; CI has no Go, so its test command is trivial and only the analysis is real.
fn go_project() -> TempDir {
    project(&[
        ("go.mod", "module example.com/calc\n\ngo 1.22\n"),
        ("calc.go", CALC_GO),
        ("calc_test.go", CALC_TEST_GO),
        ("checkpoint.toml", "[tests]\ncommand = \"echo 1 passed\"\n"),
    ])
}

#[test]
fn go_weakenings_block() {
    let r = go_project();
    edit(r.path(), "calc.go", "a + b", "a - b");
    edit(r.path(), "calc_test.go", "got != 5", "got != -1");
    blocked(
        r.path(),
        "calc_test.go:6",
        "expected value changed from `5` to `-1`",
    );

    let r = go_project();
    edit(
        r.path(),
        "calc_test.go",
        "package calc",
        "//go:build integration\n\npackage calc",
    );
    blocked(
        r.path(),
        "calc_test.go:1",
        "build constraint `//go:build integration` added",
    );

    let r = go_project();
    edit(
        r.path(),
        "calc_test.go",
        "\tif got",
        "\tt.Skip(\"later\")\n\tif got",
    );
    blocked(r.path(), "calc_test.go:6", "`t.Skip`");
}

#[test]
fn honest_go_changes_pass() {
    let r = go_project();
    write(
        r.path(),
        "calc_test.go",
        &format!(
            "{CALC_TEST_GO}\nfunc TestAddZero(t *testing.T) {{\n\tif Add(0, 0) != 0 {{\n\t\tt.Fatal(\"zero\")\n\t}}\n}}\n"
        ),
    );
    not_weakened(r.path(), "Checkpoint");
}
