//! The pure stop-gate decision, in two calls:
//!
//! 1. [`plan`]: from the stop, the change set and the session, which test commands to run and
//!    whether running them can still change the verdict;
//! 2. [`decide`]: from the stop, the gathered [`Facts`] and the policy, the [`Decision`] together
//!    with what the session remembers next (a [`Verdict`]).
//!
//! Nothing here reads the disk, the clock, the environment or git: the caller gathers the facts
//! (the engine's `gate` module is the I/O side) and gets back typed values that [`crate::render`] turns
//! into text. The same inputs always give the same verdict. Only ends of turn are judged: a
//! [`Stop`] is made from an event that is one ([`Stop::of`]).

use std::borrow::Cow;
use std::collections::BTreeSet;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::changes::{Change, ChangeSet, RepoFacts};
use crate::event::{EventKind, HookEvent};
use crate::integrity::Finding;
use crate::outcome::{TestRun, TestStatus};
use crate::policy::{ChangedDefinition, Classes, IntegrityMode, Policy};
use crate::shared::{Attribution, OtherSession, SharedTree};

/// An end of turn, as the decision sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// The stop follows a blocked one in the same turn (the agent's `stop_hook_active`).
    pub repeated: bool,
    /// A subagent's stop: judged only on failing tests of what it changed, never on the commit
    /// gate, actions, capture or integrity (those are the parent's to settle).
    pub subagent: bool,
}

impl Stop {
    /// The stop `event` stands for; `None` for events that are not an end of turn.
    pub fn of(event: &HookEvent) -> Option<Stop> {
        event.kind.is_stop().then_some(Stop {
            repeated: event.stop_hook_active,
            subagent: event.kind == EventKind::SubagentStop,
        })
    }
}

/// What the gate remembers about one agent session between stops.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFacts {
    /// Blocks in a row in the current turn.
    pub consecutive_blocks: u32,
    /// The change fingerprint whose required actions were already shown to the agent.
    pub actions_shown_for: Option<String>,
    /// When the agent was last asked to capture notes.
    pub last_capture: Option<Timestamp>,
    /// The turn (the agent's turn id) the blocks were counted in, when the agent names turns.
    #[serde(default)]
    pub turn: Option<String>,
    /// The last stop was blocked and its message is not known to have reached the model yet
    /// (see [`Counting::WhenDelivered`]): that block counts once it has, or at the next stop
    /// of its turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undelivered_block: bool,
}

/// When a block counts toward the `stop.max_blocks` cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// At the stop: the agent itself delivers the block's message to the model.
    AtTheStop,
    /// Once its message was delivered: the agent's plugin sends it back to the session as the
    /// next prompt (OpenCode), which a run that ends first never gets. The message coming back
    /// as a prompt ([`session_after_delivery`]), or the next stop of its turn, shows it was; a
    /// block never delivered is never counted.
    WhenDelivered,
}

impl Counting {
    /// When a block of an agent that `can` this counts toward the cap (see
    /// [`Capabilities::block_counted_when_delivered`](crate::agent::Capabilities::block_counted_when_delivered)).
    pub const fn of(can: &crate::agent::Capabilities) -> Counting {
        if can.block_counted_when_delivered {
            Counting::WhenDelivered
        } else {
            Counting::AtTheStop
        }
    }
}

/// Everything gathered for one stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// The repository and its changes.
    pub repo: RepoFacts,
    /// A fingerprint of `HEAD` and the changed files' contents, when the change set was read.
    pub fingerprint: Option<String>,
    /// The test commands the plan asked for, with their outcomes.
    pub tests: Vec<TestRun>,
    /// Session memory.
    pub session: SessionFacts,
    /// How the change set weakens the tests (see [`crate::integrity`]); empty when the analysis
    /// is off or found nothing.
    #[serde(default)]
    pub integrity: Vec<Finding>,
    /// The time of the stop.
    pub now: Timestamp,
    /// Set when history moved under the turn: the change set is then against the merge base,
    /// and the decision says so ([`Note::HistoryMoved`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_moved: Option<HistoryMoved>,
    /// Other live sessions working in the same tree, and whose the failure is (see
    /// [`crate::shared`]); `None` for a session alone, which is judged as if this were unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedTree>,
}

/// History moved under a turn: the commit it began at is no longer an ancestor of `HEAD`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryMoved {
    /// The commit `HEAD` was at when the turn began.
    pub base: String,
    /// The merge base of `base` and `HEAD` the turn was judged against; `None` when they have
    /// none (every tracked file was judged as changed).
    pub merge_base: Option<String>,
}

/// A test command the changed files ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTest {
    /// The shell command.
    pub command: String,
    /// The rules that asked for it, in order.
    pub rules: Vec<String>,
    /// The changed files that asked for it (through those rules): their positions in the change
    /// set it was planned for ([`ChangeSet::changes`]), in order. A change set of thousands of
    /// files is not copied once per command.
    #[serde(default)]
    pub files: Vec<usize>,
}

/// Which tests a stop calls for, and whether running them can still change the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// The test commands the changed files ask for, deduplicated, in first-seen order.
    pub tests: Vec<PlannedTest>,
    /// False once the block cap is reached: the stop will be allowed whatever the tests say, so
    /// only cached outcomes are worth reporting. Always true with `stop.max_blocks = 0`: the gate
    /// never blocks then, and reports what the tests say.
    pub may_run: bool,
}

/// The decision on one stop and what the session remembers after it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// The session memory to store for the next stop.
    pub session: SessionFacts,
}

impl Verdict {
    /// The session memory to store, over the session as it is stored now (`current`, read inside
    /// the locked update): other stops of the session may have counted blocks since the facts
    /// were gathered, so a block counts on from the stored count, never from a stale copy.
    /// A block counts at once or once delivered, as `counting` says.
    pub fn session_over(
        &self,
        stop: Stop,
        current: &SessionFacts,
        counting: Counting,
    ) -> SessionFacts {
        let mut next = self.session.clone();
        if self.decision.is_block() {
            let so_far = blocks_so_far(stop, current);
            let pending = counting == Counting::WhenDelivered;
            next.consecutive_blocks = so_far.saturating_add(u32::from(!pending));
            next.undelivered_block = pending;
        }
        next
    }
}

/// The gate's verdict on a stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Let the agent stop.
    Allow {
        /// Why.
        reason: AllowReason,
        /// Things worth saying that do not change the verdict.
        notes: Vec<Note>,
    },
    /// Keep the agent working, with instructions.
    Block {
        /// What is still required.
        reason: BlockReason,
        /// Things worth saying that do not change the verdict.
        notes: Vec<Note>,
        /// This block's number in the current run of consecutive blocks (1-based).
        block: u32,
        /// The configured cap.
        max_blocks: u32,
    },
}

/// Why a stop was allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AllowReason {
    /// No git repository around the working directory.
    NoRepository,
    /// The repository could not be read; the gate cannot judge.
    RepoUnreadable {
        /// What failed.
        reason: String,
    },
    /// The configuration is broken: nothing was checked, and the user is told, since every stop
    /// goes through until it is fixed.
    ConfigBroken {
        /// The configuration error, with its file and line.
        error: String,
    },
    /// Nothing differs from `HEAD`.
    NoChanges,
    /// Everything the changes require is done.
    Satisfied {
        /// Test runs behind the verdict.
        tests: Vec<TestRun>,
        /// The changed files.
        files: Vec<Change>,
    },
    /// The gate itself failed to run a test command ([`TestStatus::Internal`]): its own failure
    /// lets the stop through and says why (fail open; `checkpoint check` exits 2). A command that
    /// cannot run ([`TestStatus::Error`]) blocks instead ([`BlockReason::TestsFailed`]).
    TestsUnavailable {
        /// The runs the gate failed, each with its [`TestOutcome::error`](crate::outcome::TestOutcome::error).
        unavailable: Vec<TestRun>,
    },
    /// The consecutive-block cap was reached; the stop is let through with a warning. With
    /// `stop.max_blocks = 0` every stop that would block ends here, with `blocks` 0: the gate
    /// reports but never blocks.
    CapReached {
        /// Blocks so far in this turn (0 when blocking is off).
        blocks: u32,
        /// What would have blocked.
        pending: Box<BlockReason>,
    },
    /// The tests fail, but only tests reached from another live session's files fail, none
    /// reached from a file this session changed ([`Attribution::Theirs`]): after one block that
    /// told the agent so, the stop is let through and the user is told.
    TheirFailure {
        /// The failed runs.
        failed: Vec<TestRun>,
        /// The sessions whose files reach the failing tests (and others working in the tree).
        others: Vec<OtherSession>,
    },
}

/// Why a stop was blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BlockReason {
    /// The change set weakens the tests (with `[integrity] mode = "block"`). Decided before the
    /// test results, which a weakened test suite makes meaningless.
    Integrity {
        /// What was weakened, and where.
        findings: Vec<Finding>,
    },
    /// At least one test command failed, timed out or could not run ([`TestStatus::Error`]:
    /// not found, not executable, killed before it reported): nothing the tests did not check
    /// is let through, and the block cap bounds the blocks.
    TestsFailed {
        /// The failed, timed-out or unrunnable runs.
        failed: Vec<TestRun>,
    },
    /// Tests pass (or none were needed), but actions or a commit are still required.
    Required {
        /// The passing test runs.
        tests: Vec<TestRun>,
        /// The changed files behind the requirements.
        files: Vec<Change>,
        /// Deduplicated rule actions not yet shown for this change set.
        actions: Vec<String>,
        /// Uncommitted gated files, when the commit gate is on.
        uncommitted: Vec<Change>,
    },
    /// A test command the changes call for was approved, but what it resolves to (its script,
    /// recipe, runner configuration, or the repository at the approved path) changed since:
    /// it does not run until the user approves the change.
    TestsUnapproved {
        /// Each such command and what changed.
        changed: Vec<ChangedDefinition>,
    },
    /// No code changes; the agent is asked once per interval to capture what is worth keeping.
    Capture {
        /// The configured interval, in seconds.
        interval_secs: u64,
    },
}

/// A remark attached to a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Note {
    /// The gate itself failed to run a test command ([`TestStatus::Internal`]).
    TestsUnavailable {
        /// The command.
        command: String,
        /// What went wrong.
        error: String,
    },
    /// Code changed, but there is no test command.
    NoTestCommand,
    /// Code changed, and the project's test command did not run: the user has not approved it.
    TestsAwaitApproval,
    /// The repository has no commits yet; changes are against the empty tree.
    UnbornHead,
    /// `HEAD` is detached.
    DetachedHead {
        /// The commit.
        commit: String,
    },
    /// Some paths are not valid UTF-8.
    NonUtf8Paths {
        /// How many.
        count: usize,
    },
    /// History moved under the turn (a rebase, reset, checkout of another branch or pull): the
    /// commit the turn began at is no longer an ancestor of `HEAD`, so the turn is judged
    /// against the merge base of the two, or against no commit at all (every tracked file
    /// counts as changed) when they have none.
    HistoryMoved {
        /// The commit `HEAD` was at when the turn began.
        base: String,
        /// The merge base of `base` and `HEAD` the turn is judged against; `None` when they
        /// have none.
        merge_base: Option<String>,
    },
    /// Under `stop.profile = "claims"`, what this stop did not run because the agent's final
    /// message claims no completion: `tests` and the names of `full` checks (see
    /// [`crate::checks`]).
    Deferred {
        /// What was left for a claimed completion.
        checks: Vec<String>,
    },
    /// The change set weakens the tests, and `[integrity] mode = "warn"` lets the stop through:
    /// the user is told.
    IntegrityWarning {
        /// What was weakened, and where.
        findings: Vec<Finding>,
    },
    /// On a block: other live sessions have uncommitted work in the same tree, which the agent
    /// must leave alone.
    OtherSessions {
        /// The sessions and their files.
        others: Vec<OtherSession>,
        /// The failing tests are reached only from their files ([`Attribution::Theirs`]).
        theirs: bool,
    },
}

impl Decision {
    /// True for [`Decision::Block`].
    pub fn is_block(&self) -> bool {
        matches!(self, Decision::Block { .. })
    }

    /// True when the gate could not do its job and allowed by default (fail open): no repository,
    /// unreadable git data, or its own failure to run a test command. `checkpoint check` exits 2.
    pub fn is_degraded(&self) -> bool {
        match self {
            Decision::Allow { reason, notes } => {
                matches!(
                    reason,
                    AllowReason::NoRepository
                        | AllowReason::RepoUnreadable { .. }
                        | AllowReason::ConfigBroken { .. }
                        | AllowReason::TestsUnavailable { .. }
                ) || notes
                    .iter()
                    .any(|n| matches!(n, Note::TestsUnavailable { .. }))
            }
            Decision::Block { .. } => false,
        }
    }

    /// The notes attached to the decision.
    pub fn notes(&self) -> &[Note] {
        match self {
            Decision::Allow { notes, .. } | Decision::Block { notes, .. } => notes,
        }
    }
}

/// The tests `changes` call for under `policy`, and whether this stop may still run them.
pub fn plan(stop: Stop, changes: &ChangeSet, session: &SessionFacts, policy: &Policy) -> Plan {
    plan_classified(stop, changes, &classes(changes, policy), session, policy)
}

/// [`plan`] with the rules of each change already worked out ([`classes`]): a stop classifies
/// its change set once for the plan and the decision.
pub fn plan_classified(
    stop: Stop,
    changes: &ChangeSet,
    classes: &Classes<'_>,
    session: &SessionFacts,
    policy: &Policy,
) -> Plan {
    Plan {
        tests: planned_tests(&of_changes(classes, changes, policy), policy),
        may_run: policy.stop.max_blocks == 0
            || blocks_so_far(stop, session) < policy.stop.max_blocks,
    }
}

/// The rules that apply to each of `changes` under `policy`, in order.
pub fn classes<'p>(changes: &ChangeSet, policy: &'p Policy) -> Classes<'p> {
    (policy.rules).classes(changes.changes.iter().map(|change| change.path.as_str()))
}

/// [`classes`], with each path of `read_by_tests` (a file a test names: test input, whatever
/// its name) under the built-in test-data rule where no configured rule matches it.
pub fn classes_reading<'p>(
    changes: &ChangeSet,
    policy: &'p Policy,
    read_by_tests: &BTreeSet<String>,
) -> Classes<'p> {
    (policy.rules).classes_marked(
        (changes.changes.iter())
            .map(|change| (change.path.as_str(), read_by_tests.contains(&change.path))),
    )
}

/// `given` when it classifies `changes` (one entry per change), else their classes worked out
/// here: a caller's mix-up must not leave a change unjudged.
fn of_changes<'c, 'p>(
    given: &'c Classes<'p>,
    changes: &ChangeSet,
    policy: &'p Policy,
) -> Cow<'c, Classes<'p>> {
    if given.len() == changes.changes.len() {
        Cow::Borrowed(given)
    } else {
        Cow::Owned(classes(changes, policy))
    }
}

/// The test commands a change set whose rules are `classes` (one entry per change, see
/// [`of_changes`]) calls for under `policy`, deduplicated, in first-seen order.
fn planned_tests(classes: &Classes<'_>, policy: &Policy) -> Vec<PlannedTest> {
    let mut planned: Vec<PlannedTest> = Vec::new();
    for (at, rules) in classes.iter().enumerate() {
        for &rule in rules {
            let Some(command) = policy.test_command_for(rule) else {
                continue;
            };
            let p = match planned.iter_mut().position(|p| p.command == command) {
                Some(i) => &mut planned[i],
                None => {
                    planned.push(PlannedTest {
                        command: command.to_owned(),
                        rules: Vec::new(),
                        files: Vec::new(),
                    });
                    planned.last_mut().expect("just pushed")
                }
            };
            if !p.rules.contains(&rule.name) {
                p.rules.push(rule.name.clone());
            }
            if p.files.last() != Some(&at) {
                p.files.push(at);
            }
        }
    }
    planned
}

/// Blocks already spent in this turn: the stored count on a repeated stop, zero on a fresh one.
fn blocks_so_far(stop: Stop, session: &SessionFacts) -> u32 {
    if stop.repeated {
        // A stop of the same turn after a block: the model was evidently told of it.
        (session.consecutive_blocks).saturating_add(u32::from(session.undelivered_block))
    } else {
        0
    }
}

/// Decides one stop: the decision, and the session memory after it. Classifies the change set
/// itself (see [`decide_classified`]).
pub fn decide(stop: Stop, facts: &Facts, policy: &Policy) -> Verdict {
    decide_classified(stop, facts, &Classes::default(), policy)
}

/// [`decide`] with the rules of each change of `facts` already worked out ([`classes`], as
/// for [`plan_classified`]).
pub fn decide_classified(
    stop: Stop,
    facts: &Facts,
    classes: &Classes<'_>,
    policy: &Policy,
) -> Verdict {
    let decision = decision(stop, facts, classes, policy);
    let session = next_session(&facts.session, &decision, facts);
    Verdict { decision, session }
}

fn decision(stop: Stop, facts: &Facts, classes: &Classes<'_>, policy: &Policy) -> Decision {
    let changes = match &facts.repo {
        RepoFacts::NoRepository => return allow(AllowReason::NoRepository, Vec::new()),
        RepoFacts::Unreadable { reason } => {
            return allow(
                AllowReason::RepoUnreadable {
                    reason: reason.clone(),
                },
                Vec::new(),
            );
        }
        RepoFacts::Changes(changes) => changes,
    };
    let mut notes = repo_notes(changes);
    // Never silently: whatever the verdict, it says what the turn was judged against.
    if let Some(moved) = &facts.history_moved {
        notes.push(Note::HistoryMoved {
            base: moved.base.clone(),
            merge_base: moved.merge_base.clone(),
        });
    }
    let classes = of_changes(classes, changes, policy);
    let judged = requirements(stop, changes, &classes, facts, policy, &mut notes);
    let findings = if stop.subagent {
        Vec::new()
    } else {
        facts.integrity.clone()
    };
    let judged = match policy.integrity.mode {
        _ if findings.is_empty() => judged,
        IntegrityMode::Block => Judged::Block(BlockReason::Integrity { findings }),
        IntegrityMode::Warn => {
            notes.push(Note::IntegrityWarning { findings });
            judged
        }
        IntegrityMode::Off => judged,
    };
    let reason = match judged {
        Judged::Allow(reason) => return allow(reason, notes),
        Judged::Block(reason) => reason,
    };
    let spent = blocks_so_far(stop, &facts.session);
    let shared = facts
        .shared
        .as_ref()
        .filter(|shared| !shared.others.is_empty());
    let theirs = shared.is_some_and(|shared| shared.failure == Attribution::Theirs)
        && matches!(reason, BlockReason::TestsFailed { .. });
    // A failure that is another session's blocks once, to tell the agent; then the stop is
    // judged without it: what else it requires still blocks.
    let reason = match (shared, reason) {
        (Some(shared), BlockReason::TestsFailed { failed }) if theirs && spent >= 1 => {
            let rest = Facts {
                tests: (facts.tests.iter())
                    .filter(|run| !failed.contains(run))
                    .cloned()
                    .collect(),
                ..facts.clone()
            };
            match requirements(stop, changes, &classes, &rest, policy, &mut Vec::new()) {
                Judged::Allow(_) => {
                    let others = shared.others.clone();
                    return allow(AllowReason::TheirFailure { failed, others }, notes);
                }
                Judged::Block(reason) => reason,
            }
        }
        (_, reason) => reason,
    };
    if spent >= policy.stop.max_blocks {
        return allow(
            AllowReason::CapReached {
                blocks: spent,
                pending: Box::new(reason),
            },
            notes,
        );
    }
    if let Some(shared) = shared {
        notes.push(Note::OtherSessions {
            others: shared.others.clone(),
            theirs: theirs && matches!(reason, BlockReason::TestsFailed { .. }),
        });
    }
    Decision::Block {
        reason,
        notes,
        block: spent + 1,
        max_blocks: policy.stop.max_blocks,
    }
}

/// What the session remembers after `decision`.
fn next_session(session: &SessionFacts, decision: &Decision, facts: &Facts) -> SessionFacts {
    match decision {
        Decision::Allow { .. } => SessionFacts {
            consecutive_blocks: 0,
            undelivered_block: false,
            ..session.clone()
        },
        Decision::Block { reason, block, .. } => {
            let mut next = SessionFacts {
                consecutive_blocks: *block,
                undelivered_block: false,
                ..session.clone()
            };
            match reason {
                BlockReason::Required { actions, .. } if !actions.is_empty() => {
                    next.actions_shown_for = facts.fingerprint.clone();
                }
                BlockReason::Capture { .. } => next.last_capture = Some(facts.now),
                BlockReason::Required { .. }
                | BlockReason::TestsFailed { .. }
                | BlockReason::TestsUnapproved { .. }
                | BlockReason::Integrity { .. } => {}
            }
            next
        }
    }
}

/// The session after a new user prompt: a new turn starts with no blocks spent.
pub fn session_after_prompt(session: &SessionFacts) -> SessionFacts {
    SessionFacts {
        consecutive_blocks: 0,
        undelivered_block: false,
        ..session.clone()
    }
}

/// The session after the last block's message came back as the session's prompt: delivered, it
/// counts now (see [`Counting::WhenDelivered`]); nothing changes for one counted already.
pub fn session_after_delivery(session: &SessionFacts) -> SessionFacts {
    SessionFacts {
        consecutive_blocks: (session.consecutive_blocks)
            .saturating_add(u32::from(session.undelivered_block)),
        undelivered_block: false,
        ..session.clone()
    }
}

fn allow(reason: AllowReason, notes: Vec<Note>) -> Decision {
    Decision::Allow { reason, notes }
}

fn repo_notes(changes: &ChangeSet) -> Vec<Note> {
    let mut notes = Vec::new();
    match &changes.head {
        crate::changes::Head::Unborn { .. } => notes.push(Note::UnbornHead),
        crate::changes::Head::Detached { commit } => notes.push(Note::DetachedHead {
            commit: commit.clone(),
        }),
        crate::changes::Head::Branch { .. } => {}
    }
    if changes.non_utf8_paths > 0 {
        notes.push(Note::NonUtf8Paths {
            count: changes.non_utf8_paths,
        });
    }
    notes
}

/// What the changes and the tests alone call for, before the integrity analysis and the cap.
enum Judged {
    /// Nothing is required; the stop may end, for this reason.
    Allow(AllowReason),
    /// This is still required.
    Block(BlockReason),
}

/// Works out what the changes and the tests require: a block, or why the stop may end.
fn requirements(
    stop: Stop,
    changes: &ChangeSet,
    classes: &Classes<'_>,
    facts: &Facts,
    policy: &Policy,
    notes: &mut Vec<Note>,
) -> Judged {
    let mut failed = Vec::new();
    let mut passed = Vec::new();
    let mut unavailable = Vec::new();
    for run in &facts.tests {
        match run.outcome.status {
            TestStatus::Failed | TestStatus::TimedOut | TestStatus::Error => {
                failed.push(run.clone());
            }
            TestStatus::Passed => passed.push(run.clone()),
            TestStatus::Internal => unavailable.push(run.clone()),
            TestStatus::NotRun => {}
        }
    }

    let mut actions: Vec<String> = Vec::new();
    let mut action_files: Vec<&Change> = Vec::new();
    let mut gated: Vec<&Change> = Vec::new();
    let mut wants_project_tests = false;
    for (change, rules) in changes.changes.iter().zip(classes.iter()) {
        wants_project_tests |= rules
            .iter()
            .any(|r| r.tests == crate::policy::RuleTests::Project);
        if rules.iter().any(|r| r.gate) {
            gated.push(change);
        }
        let mut has_action = false;
        for action in rules.iter().filter_map(|r| r.action.as_ref()) {
            has_action = true;
            if !actions.contains(action) {
                actions.push(action.clone());
            }
        }
        if has_action {
            action_files.push(change);
        }
    }
    if wants_project_tests && policy.tests.command.is_none() {
        notes.push(if policy.tests.awaiting_approval {
            Note::TestsAwaitApproval
        } else {
            Note::NoTestCommand
        });
    }

    if !failed.is_empty() {
        notes.extend(unavailable.iter().map(|run| Note::TestsUnavailable {
            command: run.command.clone(),
            error: run.outcome.error.clone().unwrap_or_default(),
        }));
        return Judged::Block(BlockReason::TestsFailed { failed });
    }
    // An approved command whose definition changed did not run: the tests cannot judge the code
    // until the user approves the change (see `TestSettings::changed_definitions`).
    let unapproved: Vec<ChangedDefinition> = (policy.tests.changed_definitions.iter())
        .filter(|changed| (facts.tests.iter()).any(|run| run.command == changed.command))
        .cloned()
        .collect();
    if !unapproved.is_empty() {
        return Judged::Block(BlockReason::TestsUnapproved {
            changed: unapproved,
        });
    }
    // Code the tests could not look at because the gate failed is not judged on anything else
    // either: a commit or an action asked for untested code would hide that the gate is blind.
    if !unavailable.is_empty() {
        return Judged::Allow(AllowReason::TestsUnavailable { unavailable });
    }
    if stop.subagent {
        return satisfied(changes, passed);
    }
    if facts.fingerprint.is_some() && facts.session.actions_shown_for == facts.fingerprint {
        actions.clear();
    }
    let uncommitted: Vec<Change> = if policy.stop.commit_gate {
        // Committed during the turn: judged above, nothing left to commit.
        (gated.iter())
            .filter(|change| !change.committed)
            .map(|&change| change.clone())
            .collect()
    } else {
        Vec::new()
    };
    if !actions.is_empty() || !uncommitted.is_empty() {
        // Sorted, without repeats: linear-logarithmic in the change set, never quadratic.
        let mut files: Vec<Change> = action_files.into_iter().cloned().collect();
        files.extend(uncommitted.iter().cloned());
        files.sort();
        files.dedup();
        return Judged::Block(BlockReason::Required {
            tests: passed,
            files,
            actions,
            uncommitted,
        });
    }
    if gated.is_empty() && policy.stop.capture && capture_due(facts, policy) {
        return Judged::Block(BlockReason::Capture {
            interval_secs: policy.stop.capture_interval.as_secs(),
        });
    }
    satisfied(changes, passed)
}

/// The allow for a change set that requires nothing more: no changes at all, or these changes
/// with the tests that passed.
fn satisfied(changes: &ChangeSet, tests: Vec<TestRun>) -> Judged {
    Judged::Allow(if changes.is_empty() {
        AllowReason::NoChanges
    } else {
        AllowReason::Satisfied {
            tests,
            files: changes.changes.clone(),
        }
    })
}

fn capture_due(facts: &Facts, policy: &Policy) -> bool {
    let Some(last) = facts.session.last_capture else {
        return true;
    };
    let elapsed = facts.now.duration_since(last);
    elapsed.as_secs() < 0 || elapsed.unsigned_abs() >= policy.stop.capture_interval
}

#[cfg(test)]
mod tests;
