//! `checkpoint ci` on real repositories with a base branch: a pull request is judged from its
//! merge base under the base's configuration. Each attack a branch could make on its own
//! verdict — weaken a test, rewrite the test command, rewrite the script behind it — fails the
//! job; an honest change passes.

use std::path::Path;

use checkpoint_testkit::git;
use serde_json::Value;

use super::{checkpoint, code};

/// The python-passing project on `main`, and a branch `pr` checked out from it.
fn pull_request() -> tempfile::TempDir {
    let repo = checkpoint_testkit::repo("python-passing");
    git(repo.path(), &["checkout", "-qb", "pr"]);
    repo
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file}: {from:?} not in {text}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// `checkpoint ci --base main` with `--sarif` and `--json` into `out`: exit status, stdout.
fn ci(dir: &Path, out: &Path) -> (i32, String) {
    let sarif = out.join("ci.sarif");
    let json = out.join("ci.json");
    let run = checkpoint(
        dir,
        &[
            "ci",
            "--base",
            "main",
            "--sarif",
            sarif.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        "",
    );
    (
        code(&run),
        String::from_utf8_lossy(&run.stdout).into_owned(),
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_branch_that_skips_the_test_it_breaks_fails_with_the_line_in_sarif() {
    let repo = pull_request();
    let dir = repo.path();
    edit(dir, "calc.py", "return a + b", "return a - b");
    edit(
        dir,
        "test_calc.py",
        "    def test_add(self):",
        "    @unittest.skip(\"flaky\")\n    def test_add(self):",
    );
    commit(dir, "calc: faster add");
    let out = tempfile::tempdir().unwrap();
    let (status, summary) = ci(dir, out.path());
    assert_eq!(status, 1, "{summary}");
    assert!(
        summary.starts_with("<!-- checkpoint-ci -->\n## checkpoint: ❌ failed"),
        "{summary}"
    );
    assert!(
        summary.contains("| `test_calc.py` | 7 | new skip/focus marker"),
        "{summary}"
    );
    // The tests as they were, run on the branch's code, fail too.
    assert!(
        summary.contains("| `python3 -m unittest -q` |  | the tests as they were fail"),
        "{summary}"
    );
    let sarif = read_json(&out.path().join("ci.sarif"));
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    // The old tests' failure is about a command, not a place in a file: the summary has it.
    assert_eq!(results.len(), 1, "{sarif:#}");
    let result = &results[0];
    assert_eq!(result["ruleId"], "marker_added", "{sarif:#}");
    assert_eq!(result["level"], "error", "{sarif:#}");
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "test_calc.py");
    assert_eq!(location["region"]["startLine"], 7, "{sarif:#}");
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules[0]["id"], "marker_added");
    let json = read_json(&out.path().join("ci.json"));
    assert_eq!(json["result"], "failed");
    assert_eq!(json["verdict"], "block");
    assert_eq!(json["reason"]["kind"], "integrity");
}

#[test]
fn an_honest_branch_passes_and_the_summary_shows_its_tests() {
    let repo = pull_request();
    let dir = repo.path();
    std::fs::write(
        dir.join("calc.py"),
        std::fs::read_to_string(dir.join("calc.py")).unwrap()
            + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();
    edit(
        dir,
        "test_calc.py",
        "from calc import add, sub",
        "from calc import add, mul, sub",
    );
    edit(
        dir,
        "test_calc.py",
        "    def test_sub(self):",
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n    def test_sub(self):",
    );
    commit(dir, "calc: mul");
    let out = tempfile::tempdir().unwrap();
    let (status, summary) = ci(dir, out.path());
    assert_eq!(status, 0, "{summary}");
    assert!(summary.contains("## checkpoint: ✅ passed"), "{summary}");
    assert!(
        summary.contains("| `python3 -m unittest -q` | all | passed | 3 | 0 | 0 |"),
        "{summary}"
    );
    let sarif = read_json(&out.path().join("ci.sarif"));
    assert_eq!(sarif["runs"][0]["results"], Value::Array(Vec::new()));
    assert_eq!(read_json(&out.path().join("ci.json"))["result"], "passed");
}

/// A branch that points the test command at something that always passes is judged by the
/// base's command.
#[test]
fn a_branch_that_rewrites_the_test_command_is_judged_by_the_bases() {
    let repo = pull_request();
    let dir = repo.path();
    edit(dir, "calc.py", "return a + b", "return a - b");
    edit(
        dir,
        "checkpoint.toml",
        "command = \"python3 -m unittest -q\"",
        "command = \"true\"",
    );
    commit(dir, "calc: faster add; tests: quicker");
    let out = tempfile::tempdir().unwrap();
    let (status, summary) = ci(dir, out.path());
    assert_eq!(status, 1, "{summary}");
    assert!(
        summary.contains("| `python3 -m unittest -q` | all | **failed** |"),
        "{summary}"
    );
    assert!(!summary.contains("| `true` |"), "{summary}");
}

/// A branch that rewrites the script the base's test command runs does not get it run.
#[test]
fn a_branch_that_rewrites_the_script_behind_the_test_command_fails() {
    let repo = pull_request();
    let dir = repo.path();
    git(dir, &["checkout", "-q", "main"]);
    std::fs::write(dir.join("run_tests.sh"), "python3 -m unittest -q\n").unwrap();
    edit(
        dir,
        "checkpoint.toml",
        "command = \"python3 -m unittest -q\"",
        "command = \"sh run_tests.sh\"",
    );
    commit(dir, "tests: a script");
    git(dir, &["checkout", "-qB", "pr"]);
    edit(dir, "calc.py", "return a + b", "return a - b");
    std::fs::write(dir.join("run_tests.sh"), "exit 0\n").unwrap();
    commit(dir, "calc: faster add");
    let out = tempfile::tempdir().unwrap();
    let (status, summary) = ci(dir, out.path());
    assert_eq!(status, 1, "{summary}");
    assert!(
        summary.contains("### Changed behind a test command"),
        "{summary}"
    );
    assert!(
        summary.contains("- `sh run_tests.sh`: `run_tests.sh`"),
        "{summary}"
    );
}

#[test]
fn a_checkout_with_changes_of_its_own_or_no_base_is_refused() {
    let repo = pull_request();
    let dir = repo.path();
    std::fs::write(dir.join("scratch.txt"), "x\n").unwrap();
    let dirty = checkpoint(dir, &["ci", "--base", "main"], "");
    assert_eq!(code(&dirty), 2, "{dirty:?}");
    insta::assert_snapshot!(String::from_utf8_lossy(&dirty.stderr), @r"
    error: the checkout has uncommitted changes (scratch.txt)
    hint: run it on a clean checkout of the pull request: it judges commits
    ");
    std::fs::remove_file(dir.join("scratch.txt")).unwrap();
    let unknown = checkpoint(dir, &["ci", "--base", "nope"], "");
    assert_eq!(code(&unknown), 2, "{unknown:?}");
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("fetch-depth: 0"),
        "{unknown:?}"
    );
}
