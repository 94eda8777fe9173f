//! Affected-test selection backed by evidence, interpreted languages (issue 33): Python and JS.
//! Integration tests of the `checkpoint` binary against real git repositories built by the
//! fixture scripts in `tests/fixtures/`.
//!
//! Python runs for real (`python3 -m unittest`); jest is not installed here, so the JS rule is
//! tested in `checkpoint-engine`'s `select::node`.

use std::fs;
use std::path::Path;

use checkpoint_testkit::repo_with_args;

use crate::{checkpoint, code};

/// `checkpoint check` in `dir`: its exit code and stdout.
fn check(dir: &Path) -> (i32, String) {
    let out = checkpoint(dir, &["check"], "");
    (
        code(&out),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Replaces `from` with `to` in the file at `path` under `dir`.
fn edit(dir: &Path, path: &str, from: &str, to: &str) {
    let path = dir.join(path);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{text}");
    fs::write(&path, text.replace(from, to)).unwrap();
}

/// The fixture whose `tests/test_mul.py` reaches `pkg.calc` the `pattern` way, with `mul` broken:
/// the stop's exit code and stdout.
fn broken_mul(pattern: &str) -> (i32, String) {
    let repo = repo_with_args("select-python-dynamic", &[pattern]);
    let dir = repo.path();
    edit(dir, "pkg/calc.py", "return a * b", "return a + b");
    check(dir)
}

/// A broken `mul` reached the `pattern` way is blocked, and the whole suite ran because of
/// `because`.
fn blocked_with_everything(pattern: &str, because: &str) {
    let (exit, text) = broken_mul(pattern);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("test_mul"), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(
        text.contains(&format!("All the tests ran: {because}.")),
        "{text}"
    );
}

#[test]
fn a_module_imported_by_a_computed_name_runs_everything() {
    blocked_with_everything(
        "importlib",
        "`tests/test_mul.py` imports modules by name (`importlib.import_module`)",
    );
}

#[test]
fn dunder_import_of_a_computed_name_runs_everything() {
    blocked_with_everything(
        "dunder",
        "`tests/test_mul.py` imports modules by name (`__import__`)",
    );
}

#[test]
fn a_registry_a_test_imports_that_loads_plugins_by_name_runs_everything() {
    blocked_with_everything(
        "registry",
        "`tests/test_mul.py` reaches `pkg/registry.py`, which imports modules by name \
         (`importlib.import_module`)",
    );
}

#[test]
fn a_test_helper_that_imports_by_name_runs_everything() {
    blocked_with_everything(
        "helper",
        "`tests/test_mul.py` reaches `tests/helpers.py`, which imports modules by name \
         (`import_module`)",
    );
}

#[test]
fn a_test_that_runs_a_project_script_runs_everything() {
    blocked_with_everything(
        "subprocess",
        "`tests/test_mul.py` runs a program that may be a project file (`subprocess.run`)",
    );
}

#[test]
fn a_test_that_edits_the_import_path_runs_everything() {
    blocked_with_everything(
        "syspath",
        "`tests/test_mul.py` edits the import path (`sys.path`)",
    );
}

#[test]
fn a_literal_module_name_is_an_import_like_any_other() {
    // `importlib.import_module("pkg.calc")` is read as `import pkg.calc`: both tests of calc run.
    let (exit, text) = broken_mul("literal");
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 2 of 3 test modules, for 1 changed file (`python3 -m \
             unittest -q tests.test_add tests.test_mul`)"
        ),
        "{text}"
    );
}

#[test]
fn dynamic_forms_no_test_reaches_still_narrow() {
    // `pkg/cli.py` loads by name and runs a script, but no test imports it; `test_strings` starts
    // `git` and uses `importlib.metadata`, which start and import no project file.
    let repo = repo_with_args("select-python-dynamic", &["cli"]);
    let dir = repo.path();
    edit(dir, "pkg/strings.py", "s.upper()", "s.lower()");
    let (exit, text) = check(dir);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 3 test modules, for 1 changed file (`python3 -m \
             unittest -q tests.test_strings`)"
        ),
        "{text}"
    );
}

#[test]
fn an_unrelated_edit_runs_everything_while_a_test_left_out_loads_by_name() {
    // The test that imports by name could load the edited module: it must run, so all run.
    let repo = repo_with_args("select-python-dynamic", &["importlib"]);
    let dir = repo.path();
    edit(dir, "pkg/strings.py", "s.upper()", "s.upper() ");
    let (_, text) = check(dir);
    assert!(text.contains("Tests: 3 passed"), "{text}");
    assert!(
        text.contains("All the tests ran: `tests/test_mul.py` imports modules by name"),
        "{text}"
    );
}

#[test]
fn an_edit_the_loading_test_reaches_plainly_still_narrows() {
    // `pkg/registry.py` is imported by `test_mul` alone, the test that loads by name: it runs.
    let repo = repo_with_args("select-python-dynamic", &["registry"]);
    let dir = repo.path();
    edit(
        dir,
        "pkg/registry.py",
        "f\"pkg.{name}\"",
        "f\"pkg.{name}x\"",
    );
    let (exit, text) = check(dir);
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 3 test modules, for 1 changed file (`python3 -m \
             unittest -q tests.test_mul`)"
        ),
        "{text}"
    );
}
