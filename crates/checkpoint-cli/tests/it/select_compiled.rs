//! Affected-test selection backed by evidence, compiled languages (issue 33): Rust and Go.
//!
//! Data files that a test reads from outside its package's directory, or that the directory rule
//! gave to the wrong package: Rust by what the last build recorded it read (cargo's dep-info),
//! Go by what `go list` says each package embeds and holds in `testdata/`. Each broken change is
//! blocked; an honest change elsewhere still narrows. The data files' extensions (`.golden`,
//! `.expected`, `.json`, `.in`, `.dat`) are none of the docs rule's: under a test data directory
//! (`tests/`, `fixtures/`, `testdata/`) the built-in rules ask for the tests, elsewhere the Go
//! fixture's `checkpoint.toml` does.

use std::fs;
use std::path::Path;
use std::process::Command;

use checkpoint_testkit::{Tool, repo};

use crate::{checkpoint, code};

/// Writes `text` over the file at `path` under `dir`, then stops: `checkpoint check`'s exit code
/// and stdout.
fn stop_after_writing(dir: &Path, path: &str, text: &str) -> (i32, String) {
    fs::write(dir.join(path), text).unwrap();
    let out = checkpoint(dir, &["check"], "");
    (
        code(&out),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Puts the worktree back to `HEAD`.
fn restore(dir: &Path) {
    crate::git(dir, &["checkout", "--", "."]);
}

/// Asserts that `text` is a blocked stop whose run was narrowed to `selection` (`N of M
/// packages, for 1 changed file (`command`)`).
fn blocked_narrowed(exit: i32, text: &str, selection: &str) {
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(
        text.contains(&format!("Only the affected tests ran: {selection}")),
        "{text}"
    );
}

/// The suffix the fixture gives its Rust packages' names in `dir`.
fn suffix(dir: &Path) -> String {
    let name = dir.file_name().unwrap().to_string_lossy();
    name.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The last build: `cargo test` in `dir`, as a stop before would have run it; it passes.
fn build(dir: &Path) {
    let out = Command::new("cargo")
        .args(["test", "-q", "--offline"])
        .current_dir(dir)
        .output()
        .expect("run cargo test");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_rust_golden_file_outside_every_package_runs_the_package_that_includes_it() {
    let repo = repo("select-rust-data");
    let dir = repo.path();
    let golden = "fixtures/expected.golden";

    // Never built: nothing says who reads it, so everything runs, and says why.
    let (exit, text) = stop_after_writing(dir, golden, "total: 3 2 1\n");
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("reports_as_the_golden_file_says"), "{text}");
    assert!(
        text.contains(&format!(
            "All the tests ran: `{golden}` is no package's Rust source, and no build has \
             recorded which files the packages read."
        )),
        "{text}"
    );
    restore(dir);

    // Built: the record names `app`, which alone runs, and is blocked.
    build(dir);
    let app = format!("app-{}", suffix(dir));
    let (exit, text) = stop_after_writing(dir, golden, "total: 3 2 1\n");
    blocked_narrowed(
        exit,
        &text,
        &format!("1 of 3 packages, for 1 changed file (`cargo test -p {app}`)"),
    );
    assert!(text.contains("reports_as_the_golden_file_says"), "{text}");
    restore(dir);

    // The honest counterpart: an edit of `tool`'s source runs only `tool`.
    let tool = format!("tool-{}", suffix(dir));
    let lib = fs::read_to_string(dir.join("tools/tool/src/lib.rs")).unwrap();
    let (_, text) = stop_after_writing(dir, "tools/tool/src/lib.rs", &format!("{lib}// x\n"));
    assert!(text.starts_with("Checkpoint — Tests: 1 passed"), "{text}");
    assert!(
        text.contains(&format!(
            "Only the affected tests ran: 1 of 3 packages, for 1 changed file (`cargo test -p \
             {tool}`)"
        )),
        "{text}"
    );
}

#[test]
fn rust_data_in_one_package_read_by_another_runs_the_reader() {
    let repo = repo("select-rust-data");
    let dir = repo.path();
    build(dir);
    let suffix = suffix(dir);

    // `core`'s directory, `app`'s read: `app` runs (the directory alone said `core`).
    let (exit, text) = stop_after_writing(dir, "crates/core/tests/data/table.expected", "3 2 1\n");
    blocked_narrowed(
        exit,
        &text,
        &format!("1 of 3 packages, for 1 changed file (`cargo test -p app-{suffix}`)"),
    );
    assert!(text.contains("reports_the_core_table"), "{text}");
    restore(dir);

    // A build script's input: its package runs.
    let (exit, text) = stop_after_writing(dir, "fixtures/greeting.in", "bye\n");
    blocked_narrowed(
        exit,
        &text,
        &format!("1 of 3 packages, for 1 changed file (`cargo test -p tool-{suffix}`)"),
    );
    assert!(text.contains("greets"), "{text}");
    restore(dir);

    // A file no build read (at most at run time): everything, and why.
    let notes = "crates/core/tests/data/notes.json";
    let (_, text) = stop_after_writing(dir, notes, "{}\n");
    assert!(
        text.contains(&format!(
            "All the tests ran: `{notes}` is read by no package the last build recorded."
        )),
        "{text}"
    );
    assert!(text.contains("Tests: 4 passed"), "{text}");
}

#[test]
fn go_test_data_and_embedded_files_run_their_package() {
    if !checkpoint_testkit::has(Tool::Go) {
        return;
    }
    let repo = repo("select-go-data");
    let dir = repo.path();

    // `calc`'s testdata: only `calc`'s tests read it.
    let (exit, text) = stop_after_writing(dir, "calc/testdata/double.golden", "41\n");
    blocked_narrowed(
        exit,
        &text,
        "1 of 4 packages, for 1 changed file (`go test ./calc`)",
    );
    assert!(text.contains("TestDoubleGolden"), "{text}");
    restore(dir);

    // An embedded file: its package and its importer.
    let (exit, text) = stop_after_writing(dir, "greet/greeting.dat", "goodbye\n");
    blocked_narrowed(
        exit,
        &text,
        "2 of 4 packages, for 1 changed file (`go test ./greet ./report`)",
    );
    assert!(text.contains("TestGreeting"), "{text}");
    restore(dir);

    // A file no package embeds or holds in testdata: everything, and why.
    let (_, text) = stop_after_writing(dir, "notes/unused.dat", "used?\n");
    assert!(
        text.contains(
            "All the tests ran: `notes/unused.dat` is embedded by no package and lies in no \
             package's `testdata`."
        ),
        "{text}"
    );
    assert!(text.starts_with("Checkpoint — Tests: passed"), "{text}");
    restore(dir);

    // The honest counterpart: an edit of `text` runs only `text`.
    let (_, text) = stop_after_writing(
        dir,
        "text/text.go",
        "package text\n\nimport \"strings\"\n\n// Shout upper-cases s.\nfunc Shout(s string) string \
         { return strings.ToUpper(s) }\n\n// x\n",
    );
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 4 packages, for 1 changed file (`go test ./text`)"
        ),
        "{text}"
    );
}
