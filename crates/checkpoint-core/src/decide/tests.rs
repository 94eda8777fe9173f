//! Properties and scenarios of the pure decision.

use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::changes::{ChangeKind, Head};
use crate::event::{Agent, EventKind};
use crate::integrity::FindingKind;
use crate::outcome::TestOutcome;
use crate::policy::{Rule, RuleSet, RuleTests};

const NOW: i64 = 1_800_000_000;

fn stop(active: bool) -> Stop {
    Stop {
        repeated: active,
        subagent: false,
    }
}

/// The decision alone.
fn decided(stop: Stop, facts: &Facts, policy: &Policy) -> Decision {
    decide(stop, facts, policy).decision
}

fn policy(commit_gate: bool, max_blocks: u32, capture: bool) -> Policy {
    let mut p = Policy::builtin();
    p.tests.command = Some("make test".into());
    p.stop.commit_gate = commit_gate;
    p.stop.max_blocks = max_blocks;
    p.stop.capture = capture;
    p.stop.capture_interval = Duration::from_secs(600);
    p.rules = RuleSet::compile(vec![Rule {
        name: "daemon".into(),
        include: vec!["daemon/**".into()],
        exclude: Vec::new(),
        tests: RuleTests::Project,
        action: Some("Run `make restart`".into()),
        gate: true,
    }])
    .unwrap();
    p
}

fn changeset(paths: &[(&str, ChangeKind)]) -> ChangeSet {
    ChangeSet {
        head: Head::Branch {
            name: "main".into(),
            commit: "c0ffee".into(),
        },
        changes: paths
            .iter()
            .map(|(p, k)| Change {
                path: (*p).into(),
                kind: *k,
                staged: false,
                committed: false,
            })
            .collect(),
        non_utf8_paths: 0,
    }
}

fn facts(changes: ChangeSet, statuses: &[TestStatus], session: SessionFacts) -> Facts {
    Facts {
        repo: RepoFacts::Changes(changes),
        fingerprint: Some("fp".into()),
        tests: statuses
            .iter()
            .map(|s| TestRun {
                command: "make test".into(),
                rules: vec!["code".into()],
                outcome: TestOutcome {
                    status: *s,
                    ..TestOutcome::not_run()
                },
                selection: None,
                whole_because: None,
                check: None,
            })
            .collect(),
        session,
        integrity: Vec::new(),
        now: Timestamp::from_second(NOW).unwrap(),
        history_moved: None,
        shared: None,
    }
}

const PATHS: &[&str] = &[
    "README.md",
    "docs/a.md",
    "src/lib.rs",
    "daemon/run.py",
    "ci.yml",
    "logo.png",
];

fn arb_changes() -> impl Strategy<Value = ChangeSet> {
    proptest::sample::subsequence(PATHS, 0..=PATHS.len()).prop_flat_map(|paths| {
        proptest::collection::vec(
            prop_oneof![
                Just(ChangeKind::Added),
                Just(ChangeKind::Modified),
                Just(ChangeKind::Deleted),
                Just(ChangeKind::Untracked)
            ],
            paths.len(),
        )
        .prop_map(move |kinds| {
            let pairs: Vec<(&str, ChangeKind)> = paths.iter().copied().zip(kinds).collect();
            changeset(&pairs)
        })
    })
}

fn arb_status() -> impl Strategy<Value = TestStatus> {
    prop_oneof![
        Just(TestStatus::Passed),
        Just(TestStatus::Failed),
        Just(TestStatus::TimedOut),
        Just(TestStatus::Error),
        Just(TestStatus::Internal),
        Just(TestStatus::NotRun),
    ]
}

fn arb_session() -> impl Strategy<Value = SessionFacts> {
    (
        0u32..6,
        any::<bool>(),
        proptest::option::of(0i64..2000),
        any::<bool>(),
    )
        .prop_map(|(blocks, shown, capture_ago, undelivered)| SessionFacts {
            consecutive_blocks: blocks,
            actions_shown_for: shown.then(|| "fp".to_owned()),
            last_capture: capture_ago.map(|s| Timestamp::from_second(NOW - s).unwrap()),
            turn: None,
            undelivered_block: undelivered,
        })
}

/// What the policy requires for these facts, computed independently of `decide`.
fn something_required(facts: &Facts, policy: &Policy) -> bool {
    let RepoFacts::Changes(changes) = &facts.repo else {
        return false;
    };
    let failed = facts.tests.iter().any(|t| {
        matches!(
            t.outcome.status,
            TestStatus::Failed | TestStatus::TimedOut | TestStatus::Error
        )
    });
    let rules: Vec<&Rule> = changes
        .changes
        .iter()
        .flat_map(|c| policy.rules.classify(&c.path))
        .collect();
    let actions = rules.iter().any(|r| r.action.is_some())
        && facts.session.actions_shown_for != facts.fingerprint;
    let gated = policy.stop.commit_gate && rules.iter().any(|r| r.gate);
    let capture = policy.stop.capture && !rules.iter().any(|r| r.gate);
    failed || actions || gated || capture
}

proptest! {
    /// A stop classifies its change set once and hands the classes to the plan and the
    /// decision: they decide what they would alone, and classes of another change set (a
    /// caller's mix-up) are not used.
    #[test]
    fn classified_plans_and_decisions_are_the_plain_ones(
        changes in arb_changes(),
        other in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        session in arb_session(),
        commit_gate in any::<bool>(),
        active in any::<bool>(),
    ) {
        let policy = policy(commit_gate, 3, false);
        let stop = stop(active);
        let mut given = vec![classes(&changes, &policy)];
        if other.changes.len() != changes.changes.len() {
            given.push(classes(&other, &policy));
        }
        let plain_plan = plan(stop, &changes, &session, &policy);
        let facts = facts(changes, &statuses, session);
        let RepoFacts::Changes(changes) = &facts.repo else { unreachable!() };
        for classes in &given {
            let classified = plan_classified(stop, changes, classes, &facts.session, &policy);
            prop_assert_eq!(&classified, &plain_plan);
            prop_assert_eq!(
                decide_classified(stop, &facts, classes, &policy),
                decide(stop, &facts, &policy)
            );
        }
    }

    #[test]
    fn never_blocks_when_nothing_is_required(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        session in arb_session(),
        commit_gate in any::<bool>(),
        capture in any::<bool>(),
        max_blocks in 0u32..5,
        active in any::<bool>(),
    ) {
        let policy = policy(commit_gate, max_blocks, capture);
        let facts = facts(changes, &statuses, session);
        let decision = decided(stop(active), &facts, &policy);
        if decision.is_block() {
            prop_assert!(something_required(&facts, &policy), "{decision:?}");
        }
    }

    #[test]
    fn never_blocks_more_than_the_cap(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        commit_gate in any::<bool>(),
        capture in any::<bool>(),
        max_blocks in 0u32..6,
        stops in 1usize..12,
    ) {
        let policy = policy(commit_gate, max_blocks, capture);
        let mut session = SessionFacts::default();
        let mut consecutive = 0;
        for i in 0..stops {
            // The agent changes nothing between stops: the worst case for a loop.
            let f = facts(changes.clone(), &statuses, session.clone());
            let decision = decided(stop(i > 0), &f, &policy);
            if decision.is_block() {
                consecutive += 1;
            } else {
                consecutive = 0;
            }
            prop_assert!(consecutive <= max_blocks);
            if let Decision::Block { block, max_blocks: cap, .. } = &decision {
                prop_assert_eq!(*block, consecutive);
                prop_assert_eq!(*cap, max_blocks);
            }
            session = next_session(&session, &decision, &f);
        }
    }

    #[test]
    fn a_subagent_is_blocked_only_by_failing_tests(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        session in arb_session(),
        commit_gate in any::<bool>(),
        capture in any::<bool>(),
        active in any::<bool>(),
    ) {
        let policy = policy(commit_gate, 3, capture);
        let mut facts = facts(changes, &statuses, session);
        facts.integrity = vec![skipped_test()];
        let subagent = Stop { repeated: active, subagent: true };
        let decision = decided(subagent, &facts, &policy);
        if let Decision::Block { reason, .. } = &decision {
            prop_assert!(matches!(reason, BlockReason::TestsFailed { .. }), "{decision:?}");
        }
    }

    #[test]
    fn blocks_count_on_from_the_stored_session(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        gathered in arb_session(),
        stored in arb_session(),
        active in any::<bool>(),
        when_delivered in any::<bool>(),
    ) {
        // Facts gathered from a copy that other stops have since moved past.
        let policy = policy(true, 100, true);
        let f = facts(changes, &statuses, gathered);
        let verdict = decide(stop(active), &f, &policy);
        let counting = if when_delivered { Counting::WhenDelivered } else { Counting::AtTheStop };
        let next = verdict.session_over(stop(active), &stored, counting);
        // A stop of the same turn shows that a block still undelivered reached the model.
        let so_far = match active {
            true => stored.consecutive_blocks + u32::from(stored.undelivered_block),
            false => 0,
        };
        let expected = match (&verdict.decision, when_delivered) {
            (Decision::Allow { .. }, _) => (0, false),
            (Decision::Block { .. }, false) => (so_far + 1, false),
            (Decision::Block { .. }, true) => (so_far, true),
        };
        prop_assert_eq!((next.consecutive_blocks, next.undelivered_block), expected);
    }

    /// Counted when delivered, the blocks of a turn are those whose message came back as a
    /// prompt or was followed by another stop of the turn: a last block that never reached the
    /// model counts for nothing, and none counts twice.
    #[test]
    fn only_delivered_blocks_count(delivered in proptest::collection::vec(any::<bool>(), 1..6)) {
        let policy = policy(true, 100, true);
        let mut session = SessionFacts::default();
        for (i, came_back) in delivered.iter().enumerate() {
            let repeated = stop(i > 0);
            let f = facts(changeset(&[("src/lib.rs", ChangeKind::Modified)]), &[TestStatus::Failed], session.clone());
            let verdict = decide(repeated, &f, &policy);
            let Decision::Block { block, .. } = verdict.decision else {
                panic!("a failing test blocks: {:?}", verdict.decision);
            };
            prop_assert_eq!(block as usize, i + 1, "the message numbers every block");
            session = verdict.session_over(repeated, &session, Counting::WhenDelivered);
            if *came_back {
                session = session_after_delivery(&session);
                session = session_after_delivery(&session);
            }
        }
        let last = usize::from(*delivered.last().unwrap());
        prop_assert_eq!(session.consecutive_blocks as usize, delivered.len() - 1 + last);
    }

    #[test]
    fn deterministic(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        session in arb_session(),
        commit_gate in any::<bool>(),
        active in any::<bool>(),
    ) {
        let policy = policy(commit_gate, 3, true);
        let facts = facts(changes, &statuses, session);
        prop_assert_eq!(decided(stop(active), &facts, &policy), decided(stop(active), &facts, &policy));
    }

    #[test]
    fn only_ends_of_turn_are_judged(name in "[A-Za-z]{1,16}", active in any::<bool>()) {
        let mut event = HookEvent::manual_stop("/repo".into());
        event.stop_hook_active = active;
        prop_assert_eq!(Stop::of(&event), Some(stop(active)));
        event.kind = EventKind::Other(name);
        prop_assert_eq!(Stop::of(&event), None);
    }
}

#[test]
fn failing_tests_block_before_anything_else() {
    let p = policy(true, 3, false);
    let f = facts(
        changeset(&[("daemon/run.py", ChangeKind::Modified)]),
        &[TestStatus::Failed],
        SessionFacts::default(),
    );
    let d = decided(stop(false), &f, &p);
    assert!(matches!(
        d,
        Decision::Block {
            reason: BlockReason::TestsFailed { .. },
            block: 1,
            ..
        }
    ));
}

#[test]
fn actions_are_shown_once_per_change_set() {
    let p = policy(false, 3, false);
    let f = facts(
        changeset(&[("daemon/run.py", ChangeKind::Modified)]),
        &[TestStatus::Passed],
        SessionFacts::default(),
    );
    let first = decided(stop(false), &f, &p);
    let Decision::Block {
        reason: BlockReason::Required { actions, .. },
        ..
    } = &first
    else {
        panic!("expected actions: {first:?}");
    };
    assert_eq!(actions, &["Run `make restart`"]);
    let session = next_session(&f.session, &first, &f);
    let again = facts(
        changeset(&[("daemon/run.py", ChangeKind::Modified)]),
        &[TestStatus::Passed],
        session,
    );
    assert!(!decided(stop(true), &again, &p).is_block());
}

#[test]
fn docs_only_changes_pass_and_capture_is_rate_limited() {
    let docs = changeset(&[("README.md", ChangeKind::Modified)]);
    let off = decided(
        stop(false),
        &facts(docs.clone(), &[], SessionFacts::default()),
        &policy(true, 3, false),
    );
    assert!(matches!(
        off,
        Decision::Allow {
            reason: AllowReason::Satisfied { .. },
            ..
        }
    ));

    let p = policy(true, 3, true);
    let f = facts(docs.clone(), &[], SessionFacts::default());
    let first = decided(stop(false), &f, &p);
    assert!(matches!(
        first,
        Decision::Block {
            reason: BlockReason::Capture { interval_secs: 600 },
            ..
        }
    ));
    let session = next_session(&f.session, &first, &f);
    let soon = facts(docs, &[], session);
    assert!(!decided(stop(false), &soon, &p).is_block());
}

#[test]
fn max_blocks_zero_runs_the_tests_and_reports_but_never_blocks() {
    let p = policy(true, 0, false);
    let changes = changeset(&[("daemon/main.rs", ChangeKind::Modified)]);
    for repeated in [false, true] {
        let s = stop(repeated);
        assert!(plan(s, &changes, &SessionFacts::default(), &p).may_run);
        let f = facts(
            changes.clone(),
            &[TestStatus::Failed],
            SessionFacts::default(),
        );
        let d = decided(s, &f, &p);
        let Decision::Allow {
            reason: AllowReason::CapReached { blocks: 0, pending },
            ..
        } = &d
        else {
            panic!("{d:?}");
        };
        assert!(
            matches!(**pending, BlockReason::TestsFailed { .. }),
            "{d:?}"
        );
        let answer = crate::answer::StopAnswer {
            message: crate::render::message(&d),
            decision: d,
            notice: None,
        };
        assert!(
            answer
                .user_notice()
                .is_some_and(|n| n.contains("blocking off"))
        );
    }
}

#[test]
fn cap_turns_a_block_into_a_warning() {
    let p = policy(true, 2, false);
    let session = SessionFacts {
        consecutive_blocks: 2,
        ..SessionFacts::default()
    };
    let f = facts(
        changeset(&[("src/lib.rs", ChangeKind::Modified)]),
        &[TestStatus::NotRun],
        session,
    );
    let d = decided(stop(true), &f, &p);
    assert!(matches!(
        d,
        Decision::Allow {
            reason: AllowReason::CapReached { blocks: 2, .. },
            ..
        }
    ));
    assert_eq!(next_session(&f.session, &d, &f).consecutive_blocks, 0);
    // A fresh stop (not a retry) starts counting again.
    assert!(decided(stop(false), &f, &p).is_block());
}

/// A test command that cannot run (not found, not executable, killed before it reported) is
/// not a free pass: the stop is blocked, and the cap bounds the blocks (issue 31).
#[test]
fn a_test_command_that_cannot_run_blocks_up_to_the_cap() {
    for commit_gate in [false, true] {
        let p = policy(commit_gate, 3, false);
        let mut session = SessionFacts::default();
        let mut verdicts = Vec::new();
        for i in 0..5 {
            let f = facts(
                changeset(&[("daemon/main.rs", ChangeKind::Modified)]),
                &[TestStatus::Error],
                session.clone(),
            );
            let d = decided(stop(i > 0), &f, &p);
            assert!(!d.is_degraded(), "{d:?}");
            verdicts.push(match &d {
                Decision::Block {
                    reason: BlockReason::TestsFailed { failed },
                    ..
                } if failed[0].outcome.status == TestStatus::Error => "block",
                Decision::Allow {
                    reason: AllowReason::CapReached { pending, .. },
                    ..
                } if matches!(**pending, BlockReason::TestsFailed { .. }) => "cap",
                other => panic!("{other:?}"),
            });
            session = next_session(&session, &d, &f);
        }
        assert_eq!(verdicts, ["block", "block", "block", "cap", "block"]);
    }
}

#[test]
fn the_gates_own_failure_fails_open_even_with_the_commit_gate() {
    for commit_gate in [false, true] {
        let p = policy(commit_gate, 3, false);
        let f = facts(
            changeset(&[("daemon/main.rs", ChangeKind::Modified)]),
            &[TestStatus::Internal],
            SessionFacts::default(),
        );
        let d = decided(stop(false), &f, &p);
        assert!(
            matches!(
                d,
                Decision::Allow {
                    reason: AllowReason::TestsUnavailable { .. },
                    ..
                }
            ),
            "{d:?}"
        );
        assert!(d.is_degraded());
    }
}

#[test]
fn the_gates_own_failure_beside_a_failure_is_a_note_on_the_block() {
    let p = policy(false, 3, false);
    let f = facts(
        changeset(&[("daemon/main.rs", ChangeKind::Modified)]),
        &[TestStatus::Failed, TestStatus::Internal],
        SessionFacts::default(),
    );
    let d = decided(stop(false), &f, &p);
    assert!(d.is_block());
    assert!(
        matches!(d.notes(), [Note::TestsUnavailable { .. }]),
        "{d:?}"
    );
}

#[test]
fn planned_tests_are_deduplicated_per_command() {
    let mut p = policy(true, 3, false);
    p.rules = RuleSet::compile(vec![
        Rule {
            name: "core".into(),
            include: vec!["core/**".into()],
            exclude: Vec::new(),
            tests: RuleTests::Command("cargo test -p core".into()),
            action: None,
            gate: true,
        },
        Rule {
            name: "all".into(),
            include: vec!["**/*.rs".into()],
            exclude: Vec::new(),
            tests: RuleTests::Project,
            action: None,
            gate: true,
        },
    ])
    .unwrap();
    let changes = changeset(&[
        ("core/a.rs", ChangeKind::Modified),
        ("core/b.rs", ChangeKind::Modified),
        ("cli/c.rs", ChangeKind::Modified),
        ("README.md", ChangeKind::Modified),
    ]);
    let planned = planned_tests(&classes(&changes, &p), &p);
    assert_eq!(
        planned,
        vec![
            PlannedTest {
                command: "cargo test -p core".into(),
                rules: vec!["core".into()],
                files: vec![0, 1],
            },
            PlannedTest {
                command: "make test".into(),
                rules: vec!["all".into()],
                files: vec![0, 1, 2],
            },
        ]
    );
    let _ = Agent::Claude;
}

fn skipped_test() -> Finding {
    Finding {
        kind: FindingKind::MarkerAdded,
        file: "tests/test_calc.py".into(),
        line: Some(7),
        description: "new skip/focus marker `@unittest.skip`".into(),
    }
}

#[test]
fn integrity_findings_block_before_failing_tests_and_count_toward_the_cap() {
    let changes = changeset(&[("tests/test_calc.py", ChangeKind::Modified)]);
    let mut f = facts(changes, &[TestStatus::Failed], SessionFacts::default());
    f.integrity = vec![skipped_test()];
    let policy = policy(false, 2, false);
    let first = decide(stop(false), &f, &policy);
    assert_eq!(
        first.decision,
        Decision::Block {
            reason: BlockReason::Integrity {
                findings: vec![skipped_test()]
            },
            notes: Vec::new(),
            block: 1,
            max_blocks: 2,
        }
    );
    f.session = first.session;
    let second = decide(stop(true), &f, &policy);
    assert!(second.decision.is_block());
    f.session = second.session;
    let third = decided(stop(true), &f, &policy);
    assert!(matches!(
        third,
        Decision::Allow {
            reason: AllowReason::CapReached { blocks: 2, pending },
            ..
        } if matches!(*pending, BlockReason::Integrity { .. })
    ));
}

#[test]
fn integrity_warn_allows_with_a_note_and_off_ignores() {
    let changes = changeset(&[("tests/test_calc.py", ChangeKind::Modified)]);
    let mut f = facts(changes, &[TestStatus::Passed], SessionFacts::default());
    f.integrity = vec![skipped_test()];
    let mut policy = policy(false, 3, false);
    policy.integrity.mode = IntegrityMode::Warn;
    let warned = decided(stop(false), &f, &policy);
    assert!(!warned.is_block());
    assert_eq!(
        warned.notes(),
        [Note::IntegrityWarning {
            findings: vec![skipped_test()]
        }]
    );
    policy.integrity.mode = IntegrityMode::Off;
    let off = decided(stop(false), &f, &policy);
    assert!(!off.is_block());
    assert_eq!(off.notes(), []);
}

/// An approved test command whose definition changed (its Makefile rewritten) did not run: the
/// stop is blocked with what changed, the block counts toward the cap, and the cap's allow says
/// what was left unresolved (the user sees it).
#[test]
fn a_changed_test_definition_blocks_and_counts_toward_the_cap() {
    let mut policy = policy(false, 1, false);
    policy.tests.changed_definitions = vec![ChangedDefinition {
        command: "make test".into(),
        changed: vec!["Makefile".into(), "package.json scripts.test".into()],
    }];
    let changes = changeset(&[("src/lib.rs", ChangeKind::Modified)]);
    let mut facts = facts(changes, &[TestStatus::NotRun], SessionFacts::default());
    let blocked = decided(stop(false), &facts, &policy);
    assert!(
        matches!(
            &blocked,
            Decision::Block {
                reason: BlockReason::TestsUnapproved { .. },
                block: 1,
                ..
            }
        ),
        "{blocked:?}"
    );
    insta::assert_snapshot!(crate::render::message(&blocked), @r"
    Checkpoint — The tests cannot run: what the approved test command runs changed since the user approved it:
    - `make test`: Makefile, package.json scripts.test
    The tests run again once the user approves the changed definition (`checkpoint trust`) or it is restored. Tell the user what you changed there and why.
    ");

    facts.session.consecutive_blocks = 1;
    let capped = decided(stop(true), &facts, &policy);
    insta::assert_snapshot!(crate::render::message(&capped), @"Checkpoint — Stop allowed after 1 block in a row (the max_blocks cap). Still unresolved: the tests cannot run until the user approves what the test command runs.");

    // A stop that ran no such command (its changes need no tests) is not blocked for it.
    let untested = Facts {
        tests: Vec::new(),
        ..facts
    };
    let allowed = decided(stop(false), &untested, &policy);
    assert!(!allowed.is_block(), "{allowed:?}");
}

/// A change committed during the turn (see [`ChangeSet::with_committed`]): the tests judge it,
/// the commit gate does not ask for it again.
#[test]
fn committed_work_is_tested_but_not_asked_to_be_committed() {
    let p = {
        let mut p = policy(true, 3, false);
        p.rules = RuleSet::compile(vec![Rule {
            name: "code".into(),
            include: vec!["src/**".into()],
            exclude: Vec::new(),
            tests: RuleTests::Project,
            action: None,
            gate: true,
        }])
        .unwrap();
        p
    };
    let committed = |committed: bool| {
        let mut changes = changeset(&[("src/lib.rs", ChangeKind::Modified)]);
        changes.changes[0].committed = committed;
        changes
    };
    let plan = plan(stop(false), &committed(true), &SessionFacts::default(), &p);
    assert_eq!(
        plan.tests.len(),
        1,
        "committed code still calls for its tests"
    );
    let f = facts(
        committed(true),
        &[TestStatus::Passed],
        SessionFacts::default(),
    );
    assert!(matches!(
        decided(stop(false), &f, &p),
        Decision::Allow {
            reason: AllowReason::Satisfied { .. },
            ..
        }
    ));
    let f = facts(
        committed(true),
        &[TestStatus::Failed],
        SessionFacts::default(),
    );
    assert!(matches!(
        decided(stop(false), &f, &p),
        Decision::Block {
            reason: BlockReason::TestsFailed { .. },
            ..
        }
    ));
    let f = facts(
        committed(false),
        &[TestStatus::Passed],
        SessionFacts::default(),
    );
    let Decision::Block {
        reason: BlockReason::Required { uncommitted, .. },
        ..
    } = decided(stop(false), &f, &p)
    else {
        panic!("uncommitted gated work is asked for");
    };
    assert_eq!(uncommitted.len(), 1);
}

#[test]
fn history_moved_under_the_turn_is_always_said() {
    let p = policy(false, 3, false);
    let moved = HistoryMoved {
        base: "a".repeat(40),
        merge_base: Some("b".repeat(40)),
    };
    let mut f = facts(changeset(&[]), &[], SessionFacts::default());
    f.history_moved = Some(moved.clone());
    let decision = decided(stop(false), &f, &p);
    assert!(!decision.is_block());
    assert_eq!(
        decision.notes(),
        [Note::HistoryMoved {
            base: moved.base,
            merge_base: moved.merge_base
        }]
    );
}

/// Another live session working in the tree, whose files are `files`.
fn other_session(files: &[&str]) -> crate::shared::OtherSession {
    crate::shared::OtherSession {
        agent: "claude".into(),
        session: "5e5510n2-other".into(),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
    }
}

/// A failing `make test` run naming `tests`.
fn failing_run(tests: &[&str]) -> TestRun {
    let mut outcome = TestOutcome::not_run();
    outcome.status = TestStatus::Failed;
    outcome.failed = Some(tests.len() as u32);
    outcome.failing = tests.iter().map(|t| (*t).to_owned()).collect();
    TestRun::new("make test".into(), vec!["code".into()], outcome)
}

fn shared_facts(failure: crate::shared::Attribution) -> Facts {
    let mut f = facts(
        changeset(&[("src/calc.py", ChangeKind::Modified)]),
        &[],
        SessionFacts::default(),
    );
    f.tests = vec![failing_run(&["tests/test_b.py::test_b"])];
    f.shared = Some(crate::shared::SharedTree {
        others: vec![other_session(&["src/b.py", "tests/test_b.py"])],
        failure,
    });
    f
}

/// Another session's work in the tree is named in the block with what not to do to it; a
/// failure that is this session's is gated as if it were alone (up to the cap), one that is
/// theirs blocks once and then lets the stop through with the user told.
#[test]
fn another_sessions_work_is_named_and_only_its_own_failure_lets_through_after_one_block() {
    use crate::shared::Attribution;
    let policy = policy(false, 3, false);
    let ours = shared_facts(Attribution::Ours);
    let first = decided(stop(false), &ours, &policy);
    insta::assert_snapshot!(crate::render::message(&first), @r#"
    Checkpoint — Tests: FAILED
    $ make test  (0ms)
    Failing tests:
    - tests/test_b.py::test_b
    Fix the failing tests before stopping.
    Note: another live session has uncommitted work in this tree: claude 5e5510n2 (`src/b.py`, `tests/test_b.py`). It is that session's work in progress: do not discard, revert, reformat or "fix" those files, and do not commit them as yours.
    "#);
    let mut session = decide(stop(false), &ours, &policy).session;
    for _ in 0..2 {
        let f = Facts {
            session: session.clone(),
            ..ours.clone()
        };
        let verdict = decide(stop(true), &f, &policy);
        assert!(verdict.decision.is_block(), "{:?}", verdict.decision);
        session = verdict.session;
    }

    let theirs = shared_facts(Attribution::Theirs);
    let first = decide(stop(false), &theirs, &policy);
    insta::assert_snapshot!(crate::render::message(&first.decision), @r#"
    Checkpoint — Tests: FAILED
    $ make test  (0ms)
    Failing tests:
    - tests/test_b.py::test_b
    Fix the failing tests before stopping.
    Note: another live session has uncommitted work in this tree: claude 5e5510n2 (`src/b.py`, `tests/test_b.py`). It is that session's work in progress: do not discard, revert, reformat or "fix" those files, and do not commit them as yours. The failing tests are reached only from that session's files, not from any file this session changed: if your own work is done, say so and stop again; the user will be told.
    "#);
    let again = Facts {
        session: first.session,
        ..theirs.clone()
    };
    let second = decided(stop(true), &again, &policy);
    let answer = crate::answer::StopAnswer {
        message: crate::render::message(&second),
        decision: second.clone(),
        notice: None,
    };
    insta::assert_snapshot!(answer.user_notice().unwrap(), @"Checkpoint — Stop allowed after 1 block: the tests fail (tests/test_b.py::test_b), reached only from another live session's uncommitted files (claude 5e5510n2 (`src/b.py`, `tests/test_b.py`)), not from any file this session changed.");
    insta::assert_snapshot!(crate::render::let_through(&second).unwrap(), @"allowed after 1 block: the tests fail (tests/test_b.py::test_b), reached only from another session's files (claude 5e5510n2 (`src/b.py`, `tests/test_b.py`))");
    // Nothing else is let through on their account: a commit still asked for blocks as usual.
    let gated = self::policy(true, 3, false);
    let mut passing = theirs.clone();
    passing.tests.clear();
    passing.repo = RepoFacts::Changes(changeset(&[("daemon/run.py", ChangeKind::Modified)]));
    passing.session.consecutive_blocks = 1;
    assert!(decided(stop(true), &passing, &gated).is_block());
    // With no other session listed, "theirs" means nothing: the stop is gated as if alone.
    let mut alone = again.clone();
    alone.shared.as_mut().unwrap().others.clear();
    let mut plain = again;
    plain.shared = None;
    assert_eq!(
        decide(stop(true), &alone, &policy),
        decide(stop(true), &plain, &policy)
    );
}

proptest! {
    /// Whatever the other sessions and whose the failure is, the blocks in a row stay within
    /// the cap; a failure that is theirs blocks at most once in a row (what else the stop
    /// requires blocks as usual).
    #[test]
    fn blocking_stays_bounded_beside_other_sessions(
        changes in arb_changes(),
        statuses in proptest::collection::vec(arb_status(), 0..3),
        commit_gate in any::<bool>(),
        max_blocks in 0u32..6,
        theirs in any::<bool>(),
        others in any::<bool>(),
        stops in 1usize..12,
    ) {
        use crate::shared::{Attribution, SharedTree};
        let policy = policy(commit_gate, max_blocks, false);
        let failure = if theirs { Attribution::Theirs } else { Attribution::Ours };
        let shared = SharedTree {
            others: if others { vec![other_session(&["src/b.py"])] } else { Vec::new() },
            failure,
        };
        let mut session = SessionFacts::default();
        let mut consecutive = 0;
        for i in 0..stops {
            let mut f = facts(changes.clone(), &statuses, session.clone());
            f.shared = Some(shared.clone());
            let alone = Facts { shared: None, ..f.clone() };
            let decision = decided(stop(i > 0), &f, &policy);
            consecutive = if decision.is_block() { consecutive + 1 } else { 0 };
            prop_assert!(consecutive <= max_blocks);
            let only_failures = !statuses.is_empty() && statuses.iter().all(|s| matches!(s, TestStatus::Failed));
            // Their failure blocks once; a second block in a row is for something else.
            if theirs && others && only_failures && consecutive > 1 {
                let failed = matches!(
                    &decision,
                    Decision::Block { reason: BlockReason::TestsFailed { .. }, .. }
                );
                prop_assert!(!failed, "{decision:?}");
            }
            // Their failure never blocks where being alone would not; and ours is judged alone.
            let judged_alone = decided(stop(i > 0), &alone, &policy);
            if decision.is_block() {
                prop_assert!(judged_alone.is_block());
            }
            if !theirs || !others {
                prop_assert_eq!(decision.is_block(), judged_alone.is_block());
            }
            session = next_session(&session, &decision, &f);
        }
    }
}
