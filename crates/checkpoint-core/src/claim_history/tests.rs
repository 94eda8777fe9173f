//! Turns built from events, classified, joined to the gate's verdicts and counted.

use proptest::prelude::*;

use super::*;
use crate::claims::default_claims;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

fn turn(steps: &[Step]) -> Turn {
    Turn {
        steps: steps.to_vec(),
        reply: Some("Done.".into()),
        ..Turn::default()
    }
}

const PASS: Step = Step::Test(Some(true));
const FAIL: Step = Step::Test(Some(false));
const UNKNOWN: Step = Step::Test(None);

#[test]
fn each_class_from_where_the_tests_ran() {
    use Step::Edit;
    use Verification::*;
    let cases: &[(&[Step], Option<Verification>)] = &[
        (&[], None),
        (&[PASS], None),
        (&[Edit], Some(NeverRan)),
        (&[Edit, PASS], Some(Verified)),
        (&[PASS, Edit], Some(Stale)),
        (&[Edit, PASS, Edit], Some(Stale)),
        (&[Edit, FAIL], Some(Failed)),
        (&[Edit, PASS, FAIL], Some(Failed)),
        (&[Edit, FAIL, PASS], Some(Verified)),
        (&[Edit, UNKNOWN], Some(Failed)),
        // A run that failed before the last edit backs nothing.
        (&[FAIL, Edit], Some(NeverRan)),
        (&[Edit, FAIL, Edit], Some(NeverRan)),
    ];
    for (steps, class) in cases {
        assert_eq!(turn(steps).verification(), *class, "{steps:?}");
    }
}

#[test]
fn a_claim_is_in_the_turns_last_reply() {
    let phrases = default_claims();
    let mut t = turn(&[Step::Edit]);
    assert!(t.claimed(&phrases));
    // "undone" is not "done".
    t.reply = Some("Some work remains undone.".into());
    assert!(!t.claimed(&phrases));
    t.reply = Some("I looked around.".into());
    assert!(!t.claimed(&phrases));
    t.reply = None;
    assert!(!t.claimed(&phrases));
}

#[test]
fn test_commands_begin_a_segment_of_the_command_line() {
    for yes in [
        "cargo test -p core",
        "cd web && npm test",
        "uv run pytest -q tests/",
        "python -m pytest",
        "./gradlew test",
        "go test ./...",
        "npx vitest run",
    ] {
        assert!(is_test_command(yes), "{yes}");
    }
    for yes in [
        "FOO=1 uv run pytest",
        "timeout 60 cargo test",
        "cargo build && cargo test",
        "ls\nmake test",
    ] {
        assert!(is_test_command(yes), "{yes}");
    }
    // The cheapest way to look tested: name a runner without running it.
    for no in [
        "cargo build",
        "ls tests",
        "cat pytest.ini",
        "echo pytest",
        "echo 'cargo test passed'",
        "grep -r jest .",
    ] {
        assert!(!is_test_command(no), "{no}");
    }
}

fn shell(id: &str, command: &str) -> TurnEvent {
    TurnEvent::Shell {
        id: id.into(),
        command: command.into(),
    }
}

fn result(id: &str, ok: bool) -> TurnEvent {
    TurnEvent::Result {
        id: id.into(),
        ok: Some(ok),
    }
}

#[test]
fn turns_begin_at_prompts_but_not_at_the_gates_block() {
    let mut b = TurnBuilder::default();
    for event in [
        TurnEvent::Session("s1".into()),
        TurnEvent::At(at(0)),
        TurnEvent::Prompt("fix the bug".into()),
        TurnEvent::Edit,
        shell("c1", "cargo test"),
        TurnEvent::At(at(5)),
        result("c1", false),
        TurnEvent::Reply("Done.".into()),
        TurnEvent::At(at(6)),
        // The gate's block, as Claude Code sends it back: the same turn goes on.
        TurnEvent::Prompt(format!(
            "Stop hook feedback:\n{HEADLINE_PREFIX}tests failed"
        )),
        shell("c2", "cargo test"),
        result("c2", true),
        TurnEvent::Reply("Fixed, tests pass.".into()),
        TurnEvent::At(at(10)),
        TurnEvent::Prompt("thanks".into()),
        TurnEvent::Reply("You're welcome.".into()),
        TurnEvent::Session("other".into()),
    ] {
        b.push(event);
    }
    let session = b.finish();
    assert_eq!(session.session.as_deref(), Some("s1"));
    assert_eq!(
        session.turns,
        vec![
            Turn {
                began: Some(at(0)),
                ended: Some(at(6)),
                steps: vec![Step::Edit, FAIL, PASS],
                reply: Some("Fixed, tests pass.".into()),
            },
            Turn {
                began: Some(at(10)),
                ended: Some(at(10)),
                steps: vec![],
                reply: Some("You're welcome.".into()),
            },
        ]
    );
}

#[test]
fn a_call_written_twice_counts_once_and_results_find_their_call() {
    let mut b = TurnBuilder::default();
    for event in [
        TurnEvent::Prompt("go".into()),
        TurnEvent::Edit,
        shell("c1", "pytest"),
        shell("c1", "pytest"),
        result("c1", true),
        shell("c2", "ls"),
        result("c2", false),
        result("unknown", false),
        TurnEvent::Reply("  ".into()),
    ] {
        b.push(event);
    }
    let session = b.finish();
    assert_eq!(session.turns[0].steps, vec![Step::Edit, PASS]);
    assert_eq!(session.turns[0].reply, None);
}

#[test]
fn gate_outcomes_from_the_verdicts_in_order() {
    use StopVerdict::*;
    assert_eq!(GateOutcome::of(&[]), GateOutcome::NotGated);
    assert_eq!(GateOutcome::of(&[Allowed]), GateOutcome::Allowed);
    assert_eq!(GateOutcome::of(&[Blocked]), GateOutcome::Blocked);
    assert_eq!(GateOutcome::of(&[Blocked, Allowed]), GateOutcome::Fixed);
    assert_eq!(
        GateOutcome::of(&[Blocked, AllowedByCap]),
        GateOutcome::Capped
    );
}

#[test]
fn stops_belong_to_the_turn_that_began_before_them() {
    let timed = |began: i64| Turn {
        began: Some(at(began)),
        ..Turn::default()
    };
    let session = SessionTurns {
        session: Some("s".into()),
        turns: vec![timed(10), timed(20), Turn::default(), timed(30), timed(40)],
    };
    let stops = [
        (at(5), StopVerdict::Blocked),
        (at(12), StopVerdict::Allowed),
        (at(21), StopVerdict::AllowedByCap),
        (at(35), StopVerdict::Blocked),
    ];
    assert_eq!(
        session.gate_outcomes(&stops),
        vec![
            GateOutcome::Fixed,
            GateOutcome::Capped,
            GateOutcome::NotGated,
            GateOutcome::Blocked,
            GateOutcome::NotGated,
        ]
    );
}

#[test]
fn history_counts_claims_per_agent_and_in_total() {
    let phrases = default_claims();
    let timed = |began: i64, steps: &[Step], reply: &str| Turn {
        began: Some(at(began)),
        ended: Some(at(began + 1)),
        steps: steps.to_vec(),
        reply: Some(reply.into()),
    };
    let session = SessionTurns {
        session: Some("s".into()),
        turns: vec![
            timed(0, &[Step::Edit], "Done."),
            timed(10, &[Step::Edit, PASS], "All tests pass."),
            timed(20, &[PASS, Step::Edit], "Implemented."),
            timed(30, &[Step::Edit], "What next?"),
            timed(40, &[], "Done."),
        ],
    };
    let stops = [
        (at(11), StopVerdict::Blocked),
        (at(12), StopVerdict::Allowed),
    ];
    let mut history = History::new(Some(at(5)));
    history.add(Agent::Claude, &session, &stops, &phrases);
    history.add(Agent::Codex, &session, &[], &phrases);
    history.add(Agent::Codex, &SessionTurns::default(), &[], &phrases);
    let claude = &history.agent(Agent::Claude).tally;
    assert_eq!((claude.sessions, claude.turns, claude.claims), (1, 4, 2));
    assert_eq!(
        claude.verification,
        ByVerification {
            verified: 1,
            stale: 1,
            ..ByVerification::default()
        }
    );
    assert_eq!(
        claude.gate,
        ByGate {
            fixed: 1,
            not_gated: 1,
            ..ByGate::default()
        }
    );
    assert_eq!(history.total.sessions, 2);
    assert_eq!(history.total.claims, 4);
    assert_eq!(history.total.gate.not_gated, 3);
    assert_eq!(history.agents.len(), 2);
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![Just(Step::Edit), Just(PASS), Just(FAIL), Just(UNKNOWN)]
}

proptest! {
    /// Only what follows the last edit decides verified or failed; a passing run appended after
    /// everything verifies any turn that edited; an edit appended unverifies it.
    #[test]
    fn the_last_edit_decides(steps in prop::collection::vec(step(), 0..12)) {
        let t = turn(&steps);
        let mut then_pass = steps.clone();
        then_pass.push(PASS);
        let mut then_edit = steps.clone();
        then_edit.push(Step::Edit);
        let edited = steps.contains(&Step::Edit);
        prop_assert_eq!(t.verification().is_some(), edited);
        prop_assert_eq!(
            turn(&then_pass).verification(),
            edited.then_some(Verification::Verified)
        );
        prop_assert!(matches!(
            turn(&then_edit).verification(),
            Some(Verification::Stale | Verification::NeverRan)
        ));
    }
}
