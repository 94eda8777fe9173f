//! Affected-test selection under a project's pytest configuration (issue 39): `addopts` that
//! filter the collected tests (`-k`, `-m`, `--deselect`) apply to the narrowed run as to the
//! whole run, those that leave files out or are unknown run everything, `testpaths` and
//! `python_files` decide which test modules are candidates; an agent filtering a failing test
//! out through `addopts` is blocked by the integrity check. Real pytest (`python3 -m pytest`) on real git repositories built by
//! `tests/fixtures/select-pytest.sh`.

use std::fs;
use std::path::Path;

use checkpoint_testkit::repo_with_args;

use crate::{checkpoint, code, git};

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

/// The fixture with pytest configured by `file` holding `config`, after `mul` was broken: the
/// stop's exit code and stdout.
fn broken_mul(file: &str, config: &str) -> (i32, String) {
    let repo = repo_with_args("select-pytest", &[file, config]);
    edit(repo.path(), "pkg/calc.py", "return a * b", "return a + b");
    check(repo.path())
}

#[test]
fn python_files_name_the_test_modules_a_change_selects() {
    // `tests/check_mul.py` alone checks `mul`: a selector blind to `python_files` would run
    // `test_calc.py` alone and pass the broken `mul`.
    let (exit, text) = broken_mul(
        "setup.cfg",
        "[metadata]\nname = pkg\n\n[tool:pytest]\npython_files =\n    test_*.py\n    check_*.py\ntestpaths = tests\n",
    );
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("test_mul"), "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 2 of 3 test modules, for 1 changed file (`python3 -m \
             pytest -x -q -p no:cacheprovider tests/check_mul.py tests/test_calc.py`)"
        ),
        "{text}"
    );
}

#[test]
fn a_narrowed_run_keeps_to_testpaths() {
    // pytest ignores `testpaths` when given paths: `bench/test_speed.py` imports the changed
    // module but is no test of the configured run, and must not be run by the narrowed one.
    let repo = repo_with_args(
        "select-pytest",
        &[
            "pyproject.toml",
            "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\naddopts = [\n  \"--strict-config\",\n  \"--strict-markers\",\n  \"-ra\",\n]\n",
        ],
    );
    let dir = repo.path();
    edit(dir, "pkg/strings.py", "s.upper()", "s.upper() ");
    let (exit, text) = check(dir);
    assert!(text.contains("Tests: 1 passed"), "{text}");
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 2 test modules, for 1 changed file (`python3 -m \
             pytest -x -q -p no:cacheprovider tests/test_strings.py`)"
        ),
        "{text}"
    );
    assert!(!text.contains("FAILED"), "{text}");
    // A broken `shout` is still caught by the test within `testpaths`.
    edit(dir, "pkg/strings.py", "s.upper() ", "s.lower()");
    let (exit_broken, text) = check(dir);
    assert_eq!((exit, exit_broken), (1, 1), "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("test_shout"), "{text}");
}

/// `tests/test_calc.py` of the fixture, with a test marked `slow` and one deselected by node id
/// in `pytest.ini`'s `addopts`, both failing: neither runs in the configured run.
const FILTERED_TESTS: &str = "\
import pytest

from pkg.calc import add


def test_add():
    assert add(2, 3) == 5


@pytest.mark.slow
def test_add_slowly():
    assert add(2, 3) == 'needs a network here'


def test_add_flaky():
    assert add(2, 3) == 'fails here'
";

#[test]
fn addopts_that_filter_tests_apply_to_the_narrowed_run() {
    let repo = repo_with_args(
        "select-pytest",
        &[
            "pytest.ini",
            "[pytest]\ntestpaths = tests\nmarkers = slow\naddopts = -ra --strict-markers -m 'not slow'\n    --deselect tests/test_calc.py::test_add_flaky\n",
        ],
    );
    let dir = repo.path();
    fs::write(dir.join("tests/test_calc.py"), FILTERED_TESTS).unwrap();
    git(
        dir,
        &[
            "commit",
            "-qam",
            "slow and flaky tests, filtered out by addopts",
        ],
    );
    // A comment in `pkg/calc.py`. The whole configured run leaves both failing tests out; the
    // narrowed run is `tests/test_calc.py` under the same filter, so it leaves them out too.
    edit(
        dir,
        "pkg/calc.py",
        "return a * b",
        "return a * b  # product",
    );
    let out = checkpoint(dir, &["check", "--all"], "");
    let whole = String::from_utf8_lossy(&out.stdout);
    assert!(whole.contains("Tests: 2 passed"), "{whole}");
    assert!(!whole.contains("Only the affected"), "{whole}");
    let (exit, text) = check(dir);
    assert!(
        text.contains(
            "Only the affected tests ran: 1 of 2 test modules, for 1 changed file (`python3 -m \
             pytest -x -q -p no:cacheprovider tests/test_calc.py`)"
        ),
        "{text}"
    );
    assert!(text.contains("Tests: 1 passed"), "{text}");
    assert!(!text.contains("FAILED"), "{text}");

    // A broken `add` is caught by the test the filter keeps.
    edit(dir, "pkg/calc.py", "return a + b", "return a - b");
    let (exit_broken, text) = check(dir);
    assert_eq!((exit, exit_broken), (1, 1), "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(text.contains("test_add"), "{text}");
    assert!(!text.contains("test_add_slowly"), "{text}");
    assert!(
        text.contains("Only the affected tests ran: 1 of 2"),
        "{text}"
    );
}

#[test]
fn addopts_that_leave_files_out_run_everything_and_say_so() {
    // pytest collects a file named on its command line even when `--ignore` names it: a
    // narrowed run would run tests the whole run leaves out.
    let (exit, text) = broken_mul(
        "pytest.ini",
        "[pytest]\ntestpaths = tests\npython_files = test_*.py check_*.py\naddopts = -ra -m 'not slow' --ignore tests/test_strings.py\n",
    );
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(
        text.contains(
            "All the tests ran: `addopts` in `pytest.ini` has `--ignore tests/test_strings.py`, \
             which may change which tests run."
        ),
        "{text}"
    );
}

#[test]
fn an_agent_filtering_a_failing_test_out_through_addopts_is_blocked() {
    for (config, marked, finding) in [
        // `-k` naming the failing test.
        (
            "[pytest]\ntestpaths = tests\naddopts = -ra -k 'not test_add'\n",
            false,
            ("pytest.ini:3", "`-k not test_add`"),
        ),
        // The failing test marked, and the mark filtered out.
        (
            "[pytest]\ntestpaths = tests\nmarkers = slow\naddopts = -ra -m 'not slow'\n",
            true,
            ("pytest.ini:4", "`-m not slow`"),
        ),
    ] {
        let repo = repo_with_args(
            "select-pytest",
            &[
                "pytest.ini",
                "[pytest]\ntestpaths = tests\nmarkers = slow\naddopts = -ra\n",
            ],
        );
        let dir = repo.path();
        edit(dir, "pkg/calc.py", "return a + b", "return a - b");
        let (exit, text) = check(dir);
        assert_eq!(exit, 1, "{text}");
        assert!(text.contains("test_add"), "{text}");
        fs::write(dir.join("pytest.ini"), config).unwrap();
        if marked {
            edit(
                dir,
                "tests/test_calc.py",
                "\n\ndef test_add",
                "import pytest\n\n\n@pytest.mark.slow\ndef test_add",
            );
        }
        let (exit, text) = check(dir);
        assert_eq!(exit, 1, "{text}");
        assert!(
            text.starts_with("Checkpoint — The tests were weakened:"),
            "{text}"
        );
        let (at, filter) = finding;
        assert!(
            text.lines()
                .any(|line| line.contains(at) && line.contains(filter)),
            "{text}"
        );
    }
}

#[test]
fn a_changed_conftest_runs_everything_under_any_configuration() {
    let repo = repo_with_args(
        "select-pytest",
        &["pytest.ini", "[pytest]\ntestpaths = tests\naddopts = -ra\n"],
    );
    let dir = repo.path();
    // A fixture every test uses, made to fail them all: only the whole run shows it.
    fs::write(
        dir.join("tests/conftest.py"),
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef broken():\n    raise RuntimeError(\"broken\")\n",
    )
    .unwrap();
    let (exit, text) = check(dir);
    assert_eq!(exit, 1, "{text}");
    assert!(text.starts_with("Checkpoint — Tests: FAILED"), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
}

#[test]
fn a_narrowed_run_whose_tests_the_filter_all_leaves_out_runs_everything() {
    // pytest exits 5 when no test was collected: every test of the selected module is `slow`.
    // That is no failure of the change; the whole command says how the suite stands.
    let repo = repo_with_args(
        "select-pytest",
        &[
            "pytest.ini",
            "[pytest]\ntestpaths = tests\nmarkers = slow\naddopts = -m 'not slow'\n",
        ],
    );
    let dir = repo.path();
    edit(
        dir,
        "tests/test_strings.py",
        "\n\ndef test_shout",
        "import pytest\n\n\n@pytest.mark.slow\ndef test_shout",
    );
    git(dir, &["commit", "-qam", "the strings test is slow"]);
    edit(dir, "pkg/strings.py", "s.upper()", "s.upper()  # louder");
    let (exit, text) = check(dir);
    assert!(!text.contains("FAILED"), "{text}");
    assert!(text.contains("Tests: 1 passed"), "{text}");
    assert!(!text.contains("Only the affected"), "{text}");
    assert!(
        text.contains(
            "All the tests ran: `python3 -m pytest -x -q -p no:cacheprovider tests/test_strings.py` \
             ran no test."
        ),
        "{text}"
    );
    // A broken `shout` fails no test the configuration runs: the whole command passes too.
    edit(dir, "pkg/strings.py", "s.upper()  # louder", "s.lower()");
    let (exit_broken, text) = check(dir);
    assert_eq!(exit, exit_broken, "{text}");
    assert!(text.contains("Tests: 1 passed"), "{text}");
}
