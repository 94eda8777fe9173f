//! Warm results (`[tests] prewarm = true`) through the real adapter: a tool call starts the
//! stop's tests in the background, the stop reuses their outcome, and a change while a run is
//! under way restarts it.

use std::path::Path;
use std::time::{Duration, Instant};

use checkpoint_testkit::{payload, repo, run_hook_in, trust};

use super::CLAUDE;

/// The lines of `path` (0 when it does not exist).
fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// Waits up to a minute for `path` to have `n` lines.
fn wait_for_lines(path: &Path, n: usize) {
    let end = Instant::now() + Duration::from_secs(60);
    while lines(path) < n {
        assert!(
            Instant::now() < end,
            "{} never got {n} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn prewarmed_tests_are_there_when_the_stop_comes() {
    let outside = tempfile::tempdir().unwrap();
    let config = outside.path().join("config");
    let runs = outside.path().join("runs");
    let repo = repo("python-passing");
    let dir = repo.path();
    std::fs::write(
        dir.join("checkpoint.toml"),
        format!(
            "[tests]\ncommand = \"echo started >> {runs} && sleep 2 && echo ended >> {runs}\"\n\
             prewarm = true\n",
            runs = runs.display()
        ),
    )
    .unwrap();
    checkpoint_testkit::git(dir, &["add", "checkpoint.toml"]);
    checkpoint_testkit::git(dir, &["commit", "-qm", "prewarm"]);
    trust(&config, dir, &[]);
    let fire = |event: &str| {
        let bin = Path::new(CLAUDE.bin);
        run_hook_in(
            &config,
            bin,
            dir,
            payload("claude", event, dir).as_bytes(),
            &[],
        )
    };

    // A stop with nothing changed learns that prewarm is on; it runs nothing.
    fire("Stop");
    assert_eq!(lines(&runs), 0);

    // A tool call that changed a file starts the tests and does not wait for them.
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return b + a\n").unwrap();
    let started = Instant::now();
    let tool = fire("PostToolUse");
    assert!(started.elapsed() < Duration::from_secs(2), "{tool:?}");
    assert_eq!(tool.stdout, "");
    wait_for_lines(&runs, 1);

    // The stop comes while they run: it waits for that run and reuses its outcome.
    let stop = fire("Stop");
    assert!(stop.stdout.contains("Commit your work"), "{stop:?}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "started\nended\n");

    // A change while a run is under way: that run is killed, a new one starts.
    std::fs::write(
        dir.join("calc.py"),
        "def add(a, b):\n    return a + b + 0\n",
    )
    .unwrap();
    fire("PostToolUse");
    wait_for_lines(&runs, 3);
    std::fs::write(
        dir.join("calc.py"),
        "def add(a, b):\n    return 0 + a + b\n",
    )
    .unwrap();
    fire("PostToolUse");
    wait_for_lines(&runs, 4);
    let stop = fire("Stop");
    assert!(stop.stdout.contains("Commit your work"), "{stop:?}");
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "started\nended\nstarted\nstarted\nended\n",
        "the first of the two runs was killed before it ended"
    );

    // A tool that only reads starts nothing.
    let read = CLAUDE.fire_with(dir, "PostToolUse", &[("tool_name", "Read".into())], &[]);
    assert_eq!(read.stdout, "");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lines(&runs), 5);
}
