//! Embedding `checkpoint-core`: bring your own facts, get a typed decision and the message an
//! agent would see. The crate is pure — no git, no disk, no processes — so this program links
//! none of them: the changed files and the test outcome are made up here.
//!
//! Run: `cargo run -p checkpoint-examples --example embed_decide`

use std::io::Write;
use std::process::ExitCode;

use checkpoint_core::changes::{Change, ChangeKind, ChangeSet, Head, RepoFacts};
use checkpoint_core::decide::{self, Facts, SessionFacts, Stop};
use checkpoint_core::outcome::{TestOutcome, TestRun, TestStatus};
use checkpoint_core::{HookEvent, Policy, render};

fn main() -> ExitCode {
    let mut policy = Policy::builtin();
    policy.tests.command = Some("cargo test".into());

    let changes = ChangeSet {
        head: Head::Branch {
            name: "main".into(),
            commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
        },
        changes: vec![Change {
            path: "src/lib.rs".into(),
            kind: ChangeKind::Modified,
            staged: false,
            committed: false,
        }],
        non_utf8_paths: 0,
    };
    // Ask the policy which commands these changes need, then "run" them your own way.
    let stop = Stop::of(&HookEvent::manual_stop(".".into())).expect("a manual stop is a stop");
    let plan = decide::plan(stop, &changes, &SessionFacts::default(), &policy);
    let tests = plan
        .tests
        .into_iter()
        .map(|planned| {
            let outcome = TestOutcome {
                status: TestStatus::Failed,
                exit_code: Some(101),
                failing: vec!["parser::tests::rejects_empty".into()],
                tail: "test parser::tests::rejects_empty ... FAILED".into(),
                ..TestOutcome::not_run()
            };
            TestRun::new(planned.command, planned.rules, outcome)
        })
        .collect();
    let facts = Facts {
        repo: RepoFacts::Changes(changes),
        fingerprint: None,
        tests,
        session: SessionFacts::default(),
        integrity: Vec::new(),
        now: jiff::Timestamp::UNIX_EPOCH,
        history_moved: None,
        shared: None,
    };
    let decision = decide::decide(stop, &facts, &policy).decision;

    let json = serde_json::to_string_pretty(&decision).expect("decisions serialize");
    let text = render::message(&decision);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{json}\n\n{text}");
    // A failing test blocks the stop: anything else means the decision logic changed.
    if decision.is_block() {
        ExitCode::SUCCESS
    } else {
        let _ = writeln!(std::io::stderr(), "expected a block for a failing test");
        ExitCode::FAILURE
    }
}
