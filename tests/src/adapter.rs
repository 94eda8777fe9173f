//! The contract every adapter binary keeps, as reusable checks: each adapter's own tests call
//! these and add snapshots of its wire format.

use std::path::Path;

use crate::{HookRun, payload, repo, run_hook};

/// One adapter binary and the names of its captured payloads.
#[derive(Debug, Clone, Copy)]
pub struct Adapter {
    /// Path of the built binary (`env!("CARGO_BIN_EXE_…")`).
    pub bin: &'static str,
    /// Fixture folder under `tests/payloads/`.
    pub agent: &'static str,
    /// The first end-of-turn payload of a turn.
    pub stop: &'static str,
    /// A repeated end-of-turn payload (`stop_hook_active: true`).
    pub stop_again: &'static str,
    /// The agent's no-op answer on stdout.
    pub no_op: &'static str,
}

impl Adapter {
    /// Runs the adapter in `dir` with a captured payload whose `cwd` is `dir`.
    pub fn fire(&self, dir: &Path, fixture: &str) -> HookRun {
        let stdin = payload(self.agent, fixture, dir);
        run_hook(Path::new(self.bin), dir, stdin.as_bytes(), &[])
    }

    /// Asserts the no-op answer: exit 0, stdout is the no-op, stderr has at most `stderr_lines`.
    pub fn assert_no_op(&self, run: &HookRun, stderr_lines: usize, what: &str) {
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert_eq!(run.stdout.trim_end(), self.no_op, "{what}: {run:?}");
        assert!(
            run.stderr.lines().count() <= stderr_lines,
            "{what}: {run:?}"
        );
    }

    /// Every broken payload gets the no-op answer and exactly one `checkpoint: …` stderr line.
    pub fn assert_bad_input_fails_open(&self) {
        let repo = repo("failing-test");
        for (what, bytes) in bad_payloads(self.agent, self.stop, repo.path()) {
            let run = run_hook(Path::new(self.bin), repo.path(), &bytes, &[]);
            self.assert_no_op(&run, 1, what);
            assert!(run.stderr.starts_with("checkpoint: "), "{what}: {run:?}");
        }
    }

    /// Events the gate does not judge get the no-op answer and a silent stderr, even in a
    /// repository whose tests fail.
    pub fn assert_other_events_are_no_ops(&self, fixtures: &[&str]) {
        let repo = repo("failing-test");
        for fixture in fixtures {
            let run = self.fire(repo.path(), fixture);
            self.assert_no_op(&run, 0, fixture);
        }
    }

    /// Three blocked stops in a row, then the fourth: the answer once the cap is reached.
    pub fn fourth_stop(&self, dir: &Path) -> HookRun {
        let first = self.fire(dir, self.stop);
        assert!(first.stdout.contains("\"decision\""), "{first:?}");
        for _ in 0..2 {
            let again = self.fire(dir, self.stop_again);
            assert!(again.stdout.contains("\"decision\""), "{again:?}");
        }
        self.fire(dir, self.stop_again)
    }
}

/// A clean repository plus one uncommitted file that needs no tests: a deterministic block.
pub fn uncommitted() -> tempfile::TempDir {
    let repo = repo("python-passing");
    std::fs::write(repo.path().join("deploy.yml"), "replicas: 2\n").expect("write deploy.yml");
    repo
}

/// Payloads every adapter must answer with its no-op (exit 0, one stderr line): the agent's own
/// end-of-turn fixture broken in every way a pipe can break it.
pub fn bad_payloads(agent: &str, stop_fixture: &str, dir: &Path) -> Vec<(&'static str, Vec<u8>)> {
    let good: serde_json::Value =
        serde_json::from_str(&payload(agent, stop_fixture, dir)).expect("fixture is JSON");
    let with = |key: &str, value: serde_json::Value| {
        let mut v = good.clone();
        v[key] = value;
        v.to_string().into_bytes()
    };
    let mut huge = b"{\"pad\":\"".to_vec();
    huge.resize(33 * 1024 * 1024, b'x');
    vec![
        ("empty", Vec::new()),
        ("not json", b"Stop please".to_vec()),
        ("truncated", good.to_string().as_bytes()[..20].to_vec()),
        ("array", b"[1,2,3]".to_vec()),
        ("cwd is a number", with("cwd", serde_json::json!(7))),
        (
            "event is null",
            with("hook_event_name", serde_json::Value::Null),
        ),
        (
            "stop_hook_active is a string",
            with("stop_hook_active", serde_json::json!("yes")),
        ),
        (
            "missing cwd directory",
            with("cwd", serde_json::json!("/nonexistent/checkpoint")),
        ),
        (
            "session id escapes",
            with("session_id", serde_json::json!("../../etc")),
        ),
        ("huge", huge),
    ]
}
