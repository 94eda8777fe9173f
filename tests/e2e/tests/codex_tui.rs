//! Codex's real TUI in tmux with the legacy `notify` program (`checkpoint install codex --user
//! --notify`), with the CPU kept busy beside it: each time, the block the gate answers at the end
//! of the turn is pasted into the pane and submitted as the next user turn, not left sitting in
//! the composer (issue 38: typed with `send-keys`, 5 of 11 such runs left it unsent).

use std::process::{Child, Command};
use std::time::Duration;

use checkpoint_e2e::scenario::{Scenario, Step};
use checkpoint_e2e::{Agent, Session, run_ok, trust_project, workspace_binaries};
use checkpoint_testkit::Tool;
use serde_json::Value;

/// Runs of the test, each a fresh repository (`CHECKPOINT_E2E_NOTIFY_RUNS` to change).
const RUNS: usize = 20;
/// What Codex's composer shows once it takes input.
const READY: &str = "Ask Codex to do anything";
/// The first line of the block.
const BLOCK: &str = "Checkpoint — Tests: FAILED";
/// How long one run may take, under load.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// `calc.py` with `add` broken.
const CALC_BROKEN: &str = "def add(a, b):\n    return 0\n\n\ndef sub(a, b):\n    return a - b\n";

/// Busy loops, one per CPU, killed when dropped.
struct Busy(Vec<Child>);

impl Busy {
    fn start() -> Busy {
        let cpus = std::thread::available_parallelism().map_or(2, usize::from);
        let loops = (0..cpus)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("start a busy loop")
            })
            .collect();
        Busy(loops)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether a model request of the turn kind carries the block as a user text.
fn block_submitted(requests: &[Value]) -> bool {
    requests.iter().any(|request| {
        request["kind"] == "turn"
            && checkpoint_e2e::last_user_texts(Agent::Codex, request)
                .iter()
                .any(|text| text.trim_start().starts_with(BLOCK))
    })
}

#[test]
#[allow(clippy::print_stderr)] // each run's outcome goes in the test output
fn notify_submits_every_block_under_cpu_contention() {
    if !checkpoint_testkit::has(Tool::Tmux) {
        return;
    }
    let Some(mut session) = Session::new(Agent::Codex) else {
        return;
    };
    let runs = std::env::var("CHECKPOINT_E2E_NOTIFY_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RUNS);
    let binaries = workspace_binaries();
    let adapter = binaries.adapter(Agent::Codex).display().to_string();
    let mut missed = Vec::new();
    let mut busy = None;
    // Run 0, on a quiet machine, is not counted: Codex's first start in a home installs its
    // app-server daemon there, which under load can take longer than a run.
    for run in 0..=runs {
        if run == 1 {
            busy = Some(Busy::start());
        }
        let repo = checkpoint_testkit::repo("python-passing");
        let dir = repo.path();
        let install = [
            "install",
            "codex",
            "--user",
            "--notify",
            "--adapter",
            &adapter,
        ];
        run_ok(&session, &binaries.checkpoint, &install, dir);
        trust_project(&session, dir);
        let mut scenario =
            Scenario::new([Step::reply("I changed add.").write("calc.py", CALC_BROKEN)]);
        scenario.root = Some(dir.to_owned());
        let args = ["--dangerously-bypass-approvals-and-sandbox".to_owned()];
        let prompt = (READY, "Work on the calculator.");
        let result =
            session.run_in_tmux(dir, &args, prompt, scenario, block_submitted, RUN_TIMEOUT);
        eprintln!(
            "codex notify under load: run {run}: {} in {:.1}s",
            if result.done {
                "submitted"
            } else {
                "NOT submitted"
            },
            result.elapsed.as_secs_f64()
        );
        if !result.done && run > 0 {
            missed.push(format!("run {run}:\n{}", result.screen));
        }
    }
    drop(busy);
    assert!(
        missed.is_empty(),
        "{} of {runs} blocks were not submitted:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
