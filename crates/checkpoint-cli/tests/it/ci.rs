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

/// A branch that breaks `add` and skips its test.
fn weakening_pull_request() -> tempfile::TempDir {
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
    repo
}

#[test]
fn a_branch_that_skips_the_test_it_breaks_fails_with_the_line_in_sarif() {
    let repo = weakening_pull_request();
    let dir = repo.path();
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
    // The run's state is its own: nothing is cached in the checkout for a later run to reuse.
    assert!(!dir.join(".git/checkpoint/cache").exists());
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

/// One request the stand-in API was sent: method, path and query, JSON body.
type Sent = (String, String, Value);

/// A stand-in for GitHub's REST API on 127.0.0.1 that keeps a pull request's comments.
struct Api {
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<Vec<Sent>>>,
}

impl Api {
    fn start() -> Api {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let serving = server.clone();
        let thread = std::thread::spawn(move || {
            let (mut sent, mut comments) = (Vec::new(), Vec::<Value>::new());
            for mut request in serving.incoming_requests() {
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let (method, url) = (request.method().to_string(), request.url().to_owned());
                assert!(
                    (request.headers().iter())
                        .any(|h| h.field.equiv("Authorization") && h.value == "Bearer secret"),
                    "{method} {url} without the token"
                );
                let answer = match (method.as_str(), url.as_str()) {
                    ("GET", "/repos/o/r/issues/7/comments?per_page=100&page=1") => {
                        Value::Array(comments.clone())
                    }
                    ("POST", "/repos/o/r/issues/7/comments") => {
                        let comment = serde_json::json!({"id": 42, "body": body["body"]});
                        comments.push(serde_json::json!({"id": 41, "body": "LGTM"}));
                        comments.push(comment.clone());
                        comment
                    }
                    ("PATCH", "/repos/o/r/issues/comments/42") => {
                        comments[1]["body"] = body["body"].clone();
                        comments[1].clone()
                    }
                    _ => panic!("unexpected {method} {url}"),
                };
                sent.push((method, url, body));
                request
                    .respond(tiny_http::Response::from_string(answer.to_string()))
                    .unwrap();
            }
            sent
        });
        Api {
            server,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.server.server_addr())
    }

    /// Stops serving; what was sent, in order.
    fn sent(mut self) -> Vec<Sent> {
        self.server.unblock();
        self.thread.take().unwrap().join().unwrap()
    }
}

/// The action's script (scripts/ci/github-action.sh) as the composite action runs it, with
/// GitHub's variables faked: twice on a pull request that weakens a test. It fails the step,
/// writes the summary and the outputs, and keeps one comment: created, then updated.
#[test]
fn the_action_script_judges_summarizes_and_keeps_one_comment() {
    let repo = weakening_pull_request();
    let dir = repo.path();
    let base = String::from_utf8(git(dir, &["rev-parse", "main"]).stdout).unwrap();
    let runner = tempfile::tempdir().unwrap();
    let event = runner.path().join("event.json");
    let pull_request =
        serde_json::json!({"pull_request": {"number": 7, "base": {"sha": base.trim()}}});
    std::fs::write(&event, pull_request.to_string()).unwrap();
    let summary = runner.path().join("summary.md");
    let outputs = runner.path().join("outputs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ci/github-action.sh");
    let bin = Path::new(env!("CARGO_BIN_EXE_checkpoint"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.to_owned())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let api = Api::start();
    for _ in 0..2 {
        let config = tempfile::tempdir().unwrap();
        let run = std::process::Command::new(&script)
            .current_dir(dir)
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", config.path())
            .envs(checkpoint_testkit::git_env())
            .env("GITHUB_EVENT_PATH", &event)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &outputs)
            .env("RUNNER_TEMP", runner.path())
            .env("GITHUB_API_URL", api.url())
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_TOKEN", "secret")
            .env_remove("CHECKPOINT_CI_BASE")
            .env_remove("CHECKPOINT_CI_COMMENT")
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1), "{run:?}");
        assert!(
            String::from_utf8_lossy(&run.stdout).contains("## checkpoint: ❌ failed"),
            "{run:?}"
        );
    }
    let sent = api.sent();
    let calls: Vec<(&str, &str)> = sent
        .iter()
        .map(|(m, u, _)| (m.as_str(), u.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("GET", "/repos/o/r/issues/7/comments?per_page=100&page=1"),
            ("POST", "/repos/o/r/issues/7/comments"),
            ("GET", "/repos/o/r/issues/7/comments?per_page=100&page=1"),
            ("PATCH", "/repos/o/r/issues/comments/42"),
        ]
    );
    let comment = sent[3].2["body"].as_str().unwrap();
    assert!(
        comment.starts_with("<!-- checkpoint-ci -->\n## checkpoint: ❌ failed"),
        "{comment}"
    );
    assert!(comment.contains("| `test_calc.py` | 7 |"), "{comment}");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        summary.matches("## checkpoint: ❌ failed").count(),
        2,
        "{summary}"
    );
    let outputs = std::fs::read_to_string(&outputs).unwrap();
    assert!(outputs.contains("result=failed\n"), "{outputs}");
    let sarif = outputs
        .lines()
        .find_map(|l| l.strip_prefix("sarif="))
        .unwrap_or_else(|| panic!("{outputs}"));
    assert_eq!(
        read_json(Path::new(sarif))["runs"][0]["results"][0]["ruleId"],
        "marker_added"
    );
}
