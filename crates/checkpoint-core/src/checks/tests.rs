//! Claims, and what a stop runs under each profile.

use proptest::prelude::*;

use super::*;
use crate::changes::{Change, ChangeKind, Head};
use crate::decide::{self, AllowReason};

fn changes(paths: &[(&str, bool)]) -> ChangeSet {
    ChangeSet {
        head: Head::Branch {
            name: "main".into(),
            commit: "c0ffee".into(),
        },
        changes: (paths.iter())
            .map(|(path, committed)| Change {
                path: (*path).into(),
                kind: ChangeKind::Modified,
                staged: false,
                committed: *committed,
            })
            .collect(),
        non_utf8_paths: 0,
    }
}

fn policy(profile: StopProfile) -> Policy {
    let mut policy = Policy::builtin();
    policy.tests.command = Some("npm test".into());
    policy.checks.typecheck = Some("npm run typecheck".into());
    policy.checks.lint = Some("npm run lint".into());
    policy.checks.build = Some("npm run build".into());
    policy.stop.profile = profile;
    policy
}

const STOP: Stop = Stop {
    repeated: false,
    subagent: false,
};

/// What `scope` gives for `paths`: whether the tests run, the checks' names, what is deferred.
fn scoped(
    policy: &Policy,
    paths: &[(&str, bool)],
    claimed: bool,
) -> (bool, Vec<&'static str>, Vec<String>) {
    let changes = changes(paths);
    let classes = decide::classes(&changes, policy);
    let scope = scope(STOP, &changes, &classes, claimed, policy);
    let names = scope.checks.iter().map(|c| c.kind.name()).collect();
    (scope.tests, names, scope.deferred)
}

#[test]
fn claims_are_whole_words_in_any_case() {
    let phrases = default_claims();
    for message in [
        "Done.",
        "I've implemented the parser; all TESTS PASS now.",
        "Fixed the off-by-one in `range()`.",
        "The refactor is complete!",
        "Ready for review",
    ] {
        assert!(claims(message, &phrases), "{message}");
    }
    for message in [
        "I started on the parser; next I will look at the lexer.",
        "undone: the lexer",
        "The tests still fail, so I need your input: which behaviour is intended?",
        "fixedly",
        "",
    ] {
        assert!(!claims(message, &phrases), "{message}");
    }
    // A configured list replaces the defaults.
    let own = vec!["shipped it".to_owned()];
    assert!(claims("Shipped   it.", &own));
    assert!(!claims("Done.", &own));
}

#[test]
fn the_default_profile_runs_everything_at_every_stop() {
    let policy = policy(StopProfile::Every);
    let everything = (
        true,
        vec!["typecheck", "lint", "build"],
        Vec::<String>::new(),
    );
    assert_eq!(scoped(&policy, &[("src/app.js", false)], false), everything);
    assert_eq!(scoped(&policy, &[("src/app.js", false)], true), everything);
}

#[test]
fn the_claims_profile_leaves_full_checks_for_a_claimed_completion() {
    let policy = policy(StopProfile::Claims);
    assert_eq!(
        scoped(&policy, &[("src/app.js", false)], false),
        (
            false,
            vec!["typecheck", "lint"],
            vec!["tests".to_owned(), "build".to_owned()]
        )
    );
    assert_eq!(
        scoped(&policy, &[("src/app.js", false)], true),
        (true, vec!["typecheck", "lint", "build"], vec![])
    );
    // A check made `full`, the tests made `fast`.
    let mut classes = policy.clone();
    classes.checks.lint_class = CheckClass::Full;
    classes.tests.class = CheckClass::Fast;
    assert_eq!(
        scoped(&classes, &[("src/app.js", false)], false),
        (
            true,
            vec!["typecheck"],
            vec!["lint".to_owned(), "build".to_owned()]
        )
    );
}

/// What the turn committed is checked in full: the commit gate's premise is that committed work
/// was tested.
#[test]
fn a_turn_that_committed_code_runs_everything() {
    let policy = policy(StopProfile::Claims);
    assert_eq!(
        scoped(&policy, &[("src/app.js", true)], false),
        (true, vec!["typecheck", "lint", "build"], vec![])
    );
}

#[test]
fn no_checks_without_code_changes_nor_at_a_subagents_stop() {
    let policy = policy(StopProfile::Every);
    assert_eq!(
        scoped(&policy, &[("README.md", false)], true),
        (true, vec![], vec![])
    );
    let changes = changes(&[("src/app.js", false)]);
    let classes = decide::classes(&changes, &policy);
    let subagent = Stop {
        subagent: true,
        ..STOP
    };
    assert!(
        scope(subagent, &changes, &classes, true, &policy)
            .checks
            .is_empty()
    );
}

#[test]
fn the_deferred_note_goes_with_a_checked_stop_only() {
    let policy = policy(StopProfile::Claims);
    let (_, _, deferred) = scoped(&policy, &[("src/app.js", false)], false);
    let scope = Scope {
        deferred,
        ..Scope::default()
    };
    let allowed = Decision::Allow {
        reason: AllowReason::Satisfied {
            tests: Vec::new(),
            files: changes(&[("src/app.js", false)]).changes,
        },
        notes: Vec::new(),
    };
    let noted = with_deferred(allowed, &scope);
    insta::assert_snapshot!(crate::render::message(&noted), @r"
    Checkpoint — 1 changed file needs no tests and no commit.
    Note: not run at this stop: tests, build. They run when your final message says the work is complete.
    ");
    let nothing = Decision::Allow {
        reason: AllowReason::NoChanges,
        notes: Vec::new(),
    };
    assert_eq!(with_deferred(nothing.clone(), &scope), nothing);
}

proptest! {
    /// A claim never runs less than no claim, under either profile, and the default profile runs
    /// the same whatever the message says.
    #[test]
    fn a_claim_never_runs_less(
        claims_profile in any::<bool>(),
        classes in proptest::collection::vec(any::<bool>(), 4),
        files in proptest::collection::vec((prop_oneof![Just("src/a.js"), Just("README.md"), Just("lib/b.py")], any::<bool>()), 0..4),
    ) {
        let mut policy = policy(if claims_profile { StopProfile::Claims } else { StopProfile::Every });
        let class = |full: bool| if full { CheckClass::Full } else { CheckClass::Fast };
        policy.tests.class = class(classes[0]);
        policy.checks.typecheck_class = class(classes[1]);
        policy.checks.lint_class = class(classes[2]);
        policy.checks.build_class = class(classes[3]);
        let (tests_silent, checks_silent, _) = scoped(&policy, &files, false);
        let (tests_claimed, checks_claimed, deferred_claimed) = scoped(&policy, &files, true);
        prop_assert!(tests_claimed >= tests_silent);
        prop_assert!(checks_silent.iter().all(|c| checks_claimed.contains(c)));
        prop_assert!(deferred_claimed.is_empty());
        if !claims_profile {
            prop_assert_eq!((tests_silent, checks_silent), (tests_claimed, checks_claimed));
        }
    }
}
