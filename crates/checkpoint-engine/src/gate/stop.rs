//! Ends of turn and new prompts: the stop gate proper. A stop gathers the change set, runs (or
//! reuses) the planned tests, asks [`decide`] and stores the session memory it returns; a new
//! prompt starts a new turn.

use std::collections::BTreeMap;

use crate::git::{self, Repo};
use crate::host::Host;
use crate::project::integrity::{Integrity, Stopped};
use crate::project::{Project, ProjectError};
use crate::session::activity::StopEntry;
use crate::session::{SessionRecord, SessionStore, once_per_session};
use checkpoint_core::answer::StopAnswer;
use checkpoint_core::changes::{ChangeSet, Head, RepoFacts};
use checkpoint_core::checks::{self, Scope};
use checkpoint_core::decide::{self, Facts, HistoryMoved, SessionFacts, Stop, decide};
use checkpoint_core::event::{EventKind, HookEvent};
use checkpoint_core::policy::{Classes, IntegrityMode, Policy};
use checkpoint_core::render;
use checkpoint_core::sanitize;

use super::call::Call;
use super::continuity;
use super::runs::{TestRuns, approved_project};

/// Judges an end of turn. Outside git, or when git cannot be read, the stop is allowed as it is.
/// Also says which commit the change set was judged against (see [`Turn`]).
pub(super) fn stop(
    call: &Call,
    warnings: &mut Vec<String>,
) -> Result<(StopAnswer, Option<String>), ProjectError> {
    let event = call.event;
    let now = call.host.now;
    let repo = match call.host.locate(&event.cwd) {
        Ok(Some(repo)) => repo,
        Ok(None) => return Ok((without_repo(call, RepoFacts::NoRepository), None)),
        Err(e) => return Ok((without_repo(call, git::unreadable(&e)), None)),
    };
    let sessions = SessionStore::new(&call.host.state_dir(&repo)?);
    let record = sessions.load(event.agent, &call.gate_session())?;
    // What the user approved applies as it was when the turn began (see `crate::trust`).
    let host = Host {
        turn_began: record.turn_began.filter(|_| !event.is_manual()),
        ..call.host.clone()
    };
    let (project, trust_notice) = approved_project(&host, repo, warnings)?;
    let policy = &project.policy;
    super::prewarm::remember(&project.state_dir, policy.tests.prewarm);
    let repo = project.git()?;
    let journal = project.journal();
    let subagent = event.kind == EventKind::SubagentStop;
    let stop = Stop {
        repeated: repeated(event, &record),
        subagent,
    };

    // Files checkpoint wrote (its hooks, their backups) are not the agent's work.
    let (repo_facts, mut fingerprints) = project.read_changes()?;
    // The whole turn is judged: what it committed too, from the base it began at.
    let base = match &call.base {
        Some(rev) => Some(
            git::base::resolve(repo, rev)
                .map_err(|e| ProjectError::RepoUnreadable(format!("the base `{rev}`: {e}")))?,
        ),
        None => record.turn_base.clone(),
    };
    let (mut repo_facts, turn) = since_base(&project, repo, repo_facts, base.as_deref());
    // The cache key names the whole worktree the tests run on: the change set over the commit
    // it starts from. With what the turn committed joined in, that commit is the one the turn
    // is judged against, not `HEAD`, so a turn that commits work its last stop tested finds
    // those results instead of running the tests again.
    let fingerprint = match &mut repo_facts {
        RepoFacts::Changes(changes) => Some(match &turn.against {
            Some(against) if turn.head.as_ref() != Some(against) => {
                let commit = against.clone();
                let head = std::mem::replace(&mut changes.head, Head::Detached { commit });
                let fingerprint = fingerprints.fingerprint(changes);
                changes.head = head;
                fingerprint
            }
            _ => fingerprints.fingerprint(changes),
        }),
        _ => None,
    };
    // A subagent answers only for what it changed since it started.
    let repo_facts = match repo_facts {
        RepoFacts::Changes(changes) if subagent => {
            let now = fingerprints.digests(&changes);
            RepoFacts::Changes(changed_since(
                changes,
                &now,
                record.subagent_baseline.as_ref(),
            ))
        }
        other => other,
    };
    // Other live sessions in the tree: this stop's look at it is taken before the memo is kept.
    // When they cannot be read, the session is judged alone.
    let shared = match &repo_facts {
        RepoFacts::Changes(changes) => {
            super::sharing::SharedStop::find(call, &project, || fingerprints.digests(changes))
                .unwrap_or_else(|e| {
                    warnings.push(format!("other sessions: {e}"));
                    None
                })
        }
        _ => None,
    };
    fingerprints.keep();
    // Each changed path's rules, worked out once for the plan and the decision; again only
    // when a file they run no tests for is one a test names (see `project::test_inputs`).
    let classes = match &repo_facts {
        RepoFacts::Changes(changes) => {
            let classes = decide::classes(changes, policy);
            let read_by_tests = project.read_by_tests(repo, changes, &classes);
            match read_by_tests.is_empty() {
                true => classes,
                false => decide::classes_reading(changes, policy, &read_by_tests),
            }
        }
        _ => Classes::default(),
    };
    // Under `stop.profile = "claims"`, the `full` checks wait for a claimed completion (an
    // unknown final message counts as one).
    let claimed = record.claimed
        || (event.last_assistant_message.as_deref())
            .is_none_or(|message| checks::claims(message, &policy.stop.claims));
    let mut scope = Scope::default();
    // For each planned test command, the changed paths that asked for it.
    let mut asked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (tests, integrity) = match (&repo_facts, &fingerprint) {
        (RepoFacts::Changes(changes), Some(fingerprint)) => {
            let mut plan = decide::plan_classified(stop, changes, &classes, &record.facts, policy);
            scope = checks::scope(stop, changes, &classes, claimed, policy);
            if !scope.tests {
                plan.tests.clear();
            }
            // A stop that may no longer be blocked still reports cached outcomes, but pays for
            // no fresh run.
            let runs = TestRuns {
                journal: &journal,
                watch: call.watch,
                cache: project.test_cache(),
                fingerprint,
                may_run: plan.may_run,
                base: turn.against.as_deref(),
            };
            asked = (plan.tests.iter())
                .map(|p| {
                    let files = (p.files.iter())
                        .filter_map(|&at| changes.changes.get(at))
                        .map(|change| change.path.clone());
                    (p.command.clone(), files.collect())
                })
                .collect();
            let planned = (plan.tests.into_iter())
                .map(|p| (project.selection(&p, changes), p))
                .collect();
            let tests = runs.run(planned, warnings);
            // A subagent is judged on its failing tests only (see `decide`).
            let integrity = match policy.integrity.mode {
                IntegrityMode::Off => Integrity::default(),
                _ if subagent => Integrity::default(),
                _ => {
                    let stopped = Stopped {
                        changes,
                        fingerprint,
                        tests: &tests,
                        may_run: plan.may_run,
                        base: turn.against.as_deref(),
                    };
                    project.integrity(repo, &stopped, warnings)
                }
            };
            let mut tests = tests;
            tests.extend(runs.run_checks(&scope.checks, warnings));
            (tests, integrity)
        }
        _ => (Vec::new(), Integrity::default()),
    };
    let shared = match (&shared, &repo_facts) {
        (Some(shared), RepoFacts::Changes(changes)) => {
            Some(shared.judge(&project, changes, &tests, &asked))
        }
        _ => None,
    };
    let facts = Facts {
        repo: repo_facts,
        fingerprint,
        tests,
        session: record.facts,
        integrity: integrity.findings,
        now,
        history_moved: turn.moved,
        shared,
    };
    let mut verdict = decide::decide_classified(stop, &facts, &classes, policy);
    verdict.decision = checks::with_deferred(verdict.decision.clone(), &scope);
    // A stop with nothing to say about integrity sets the test counts later green runs are held
    // to (with the analysis off, no baseline is kept; a subagent's stop is not checked).
    let checked = policy.integrity.mode != IntegrityMode::Off && !subagent;
    let test_runs: Vec<_> = (facts.tests.iter())
        .filter(|run| run.check.is_none())
        .cloned()
        .collect();
    if checked
        && facts.integrity.is_empty()
        && let Err(e) = project.advance_green_counts(&test_runs)
    {
        warnings.push(format!("integrity: {e}"));
    }
    let message = render::message(&verdict.decision);
    // What `checkpoint report` shows of the stop; a person's `checkpoint check` is a read.
    let entry = (!event.is_manual()).then(|| StopEntry {
        base: turn.against.clone(),
        ..StopEntry::new(
            &verdict.decision,
            &message,
            &facts.tests,
            &facts.integrity,
            now,
        )
    });
    let trust_notice = sessions.update(event.agent, &call.gate_session(), |record| {
        if let Some(entry) = entry {
            record.record_stop(entry);
        }
        // Counted on the stored record, inside the lock: concurrent stops lose no block.
        let counted = Stop {
            repeated: repeated(event, record),
            ..stop
        };
        record.facts = verdict.session_over(
            counted,
            &record.facts,
            checkpoint_core::decide::Counting::of(&call.can()),
        );
        record.facts.turn.clone_from(&event.turn_id);
        record.last_block_digest = (verdict.decision.is_block()).then(|| retry_digest(&message));
        if !event.is_manual() {
            record.claimed = claimed && verdict.decision.is_block();
        }
        // An allowed stop ends the turn: the next begins at `HEAD` (for an agent without a
        // prompt event, this is the only start of a turn the gate sees).
        if !verdict.decision.is_block() && !event.is_manual() {
            record.begin_turn(turn.head.clone(), now);
        }
        let notices = [trust_notice, integrity.notice];
        let notice = notices.into_iter().flatten().collect::<Vec<_>>();
        once_per_session(
            &mut record.trust_notice,
            (!notice.is_empty()).then(|| notice.join("\n")),
        )
    })?;
    let decision = verdict.decision;
    // Every allowed stop leaves a session checkpoint (and one in the active task); a blocked one
    // still gets the interval checkpoint of a long step. A person's `checkpoint check` is a read:
    // it records neither.
    let recorded = if call.event.is_manual() {
        Ok(None)
    } else if decision.is_block() {
        let changes = match &facts.repo {
            RepoFacts::Changes(changes) => Some(changes),
            _ => None,
        };
        journal
            .maybe_interval_checkpoint(now, changes)
            .map(|_| None)
            .map_err(ProjectError::from)
    } else {
        let changes = match &facts.repo {
            RepoFacts::Changes(changes) => Some(changes),
            _ => None,
        };
        let unresolved = render::let_through(&decision);
        let fingerprint = facts.fingerprint.as_deref();
        continuity::stop_checkpoint(call, &project, changes, fingerprint, unresolved)
    };
    let saved_notice = recorded.unwrap_or_else(|e| {
        warnings.push(format!("saving the checkpoint: {e}"));
        None
    });
    let notices: Vec<String> = trust_notice.into_iter().chain(saved_notice).collect();
    let answer = StopAnswer {
        message,
        decision,
        notice: (!notices.is_empty()).then(|| notices.join("\n")),
    };
    Ok((answer, turn.against))
}

/// What a stop's change set is judged against.
#[derive(Debug, Default)]
struct Turn {
    /// The commit the change set starts from, whose files are the old side of the integrity
    /// analysis: the turn's base, or the merge base when history moved, or `HEAD` when no base
    /// was recorded (or it is `HEAD`); `None` with no commit to start from.
    against: Option<String>,
    /// `HEAD` now.
    head: Option<String>,
    /// Set when history moved under the turn.
    moved: Option<HistoryMoved>,
}

/// The change set from `base` (the turn's base, if recorded) to the worktree: `facts` (`HEAD`
/// against the worktree) with what was committed since `base`. When `base` is `HEAD` nothing
/// more is read. When git cannot say what was committed, the repository counts as unreadable
/// (the stop says so) rather than judged against `HEAD` as if nothing were.
fn since_base(
    project: &Project,
    repo: &Repo,
    facts: RepoFacts,
    base: Option<&str>,
) -> (RepoFacts, Turn) {
    let RepoFacts::Changes(changes) = facts else {
        return (facts, Turn::default());
    };
    let head = changes.head.commit().map(str::to_owned);
    let base = match (base, &head) {
        (Some(base), Some(head)) if base != head => base,
        _ => {
            let turn = Turn {
                against: head.clone(),
                head,
                moved: None,
            };
            return (RepoFacts::Changes(changes), turn);
        }
    };
    let head = head.unwrap_or_default();
    match git::base::committed_since(repo, base, &head) {
        Ok(committed) => {
            let moved = committed.moved.then(|| HistoryMoved {
                base: base.to_owned(),
                merge_base: committed.against.clone(),
            });
            let changes = changes.with_committed(committed.changes);
            // Files checkpoint wrote are not the agent's work, committed or not.
            let changes = project.own_files().without_ours(&repo.workdir, changes);
            let turn = Turn {
                against: committed.against,
                head: Some(head),
                moved,
            };
            (RepoFacts::Changes(changes), turn)
        }
        Err(e) => {
            let reason = format!("what the turn committed since {base}: {e}");
            let facts = RepoFacts::Unreadable {
                reason: sanitize::line(&reason, sanitize::ERROR_CHARS),
            };
            (facts, Turn::default())
        }
    }
}

/// The verdict on a stop for which no repository facts are gathered.
fn without_repo(call: &Call, repo: RepoFacts) -> StopAnswer {
    let facts = Facts {
        repo,
        fingerprint: None,
        tests: Vec::new(),
        session: SessionFacts::default(),
        integrity: Vec::new(),
        now: call.host.now,
        history_moved: None,
        shared: None,
    };
    let stop = Stop::of(call.event).unwrap_or(Stop {
        repeated: call.event.stop_hook_active,
        subagent: false,
    });
    let decision = decide(stop, &facts, &Policy::builtin()).decision;
    StopAnswer {
        message: render::message(&decision),
        decision,
        notice: None,
    }
}

/// Whether `stop` answers a block of the same turn: with a turn id on both sides, whether the
/// turn is the one the stored blocks were counted in; else the agent's `stop_hook_active`, or
/// our last block message sent back as the prompt (Codex `notify` carries no
/// `stop_hook_active`).
fn repeated(stop: &HookEvent, record: &SessionRecord) -> bool {
    match (&stop.turn_id, &record.facts.turn) {
        (Some(turn), Some(counted)) => turn == counted,
        _ => stop.stop_hook_active || is_retry(stop.prompt.as_deref(), &record.last_block_digest),
    }
}

/// The changes in `changes` whose digest `now` (see [`crate::cache::change_digests`]) differs from
/// `baseline` (what each path held when a subagent started): what the subagent changed. Without a
/// baseline nothing is known to be its own.
fn changed_since(
    mut changes: ChangeSet,
    now: &BTreeMap<String, String>,
    baseline: Option<&BTreeMap<String, String>>,
) -> ChangeSet {
    changes.changes.retain(|change| {
        baseline.is_some_and(|before| before.get(&change.path) != now.get(&change.path))
    });
    changes
}

/// A subagent starts: what the change set holds now is remembered in its own record, so that its
/// stop answers only for what it changed. An internal fork (no `agent_type`) is not judged, so
/// nothing is kept for it.
pub(super) fn subagent_start(call: &Call) -> Result<(), ProjectError> {
    if !call.event.is_real_subagent() {
        return Ok(());
    }
    let Some(project) = call.project()? else {
        return Ok(());
    };
    let (RepoFacts::Changes(changes), mut fingerprints) = project.read_changes()? else {
        return Ok(());
    };
    let baseline = fingerprints.digests(&changes);
    fingerprints.keep();
    // Its own turn begins at `HEAD` now.
    let turn_base = changes.head.commit().map(str::to_owned);
    project
        .sessions()
        .update(call.event.agent, &call.gate_session(), |record| {
            *record = SessionRecord {
                subagent_baseline: Some(baseline),
                ..SessionRecord::default()
            };
            record.begin_turn(turn_base, call.host.now);
        })?;
    Ok(())
}

/// A new user prompt starts a new turn: the block count starts over, and the turn's base is
/// `HEAD` now (one ref read). Gemini re-sends a block reason as a prompt; that retry is
/// recognised by its digest and starts nothing (the base stays where the turn began); it shows
/// that the block was delivered, which is when an OpenCode block counts
/// ([`decide::Counting::WhenDelivered`]). Context
/// held back for the session (Gemini after `/clear`) goes with the prompt.
pub(super) fn user_prompt(call: &Call) -> Result<Option<String>, ProjectError> {
    let Ok(Some(repo)) = call.host.locate(&call.event.cwd) else {
        return Ok(None);
    };
    let prompt = call.event.prompt.as_deref();
    let state_dir = call.host.state_dir(&repo)?;
    // Best effort: without a first look, the session's next look claims every change.
    let _ = super::sharing::first_look(call, &repo, &state_dir);
    let sessions = SessionStore::new(&state_dir);
    let head = git::base::head_commit(&repo);
    let pending = sessions.update(call.event.agent, &call.gate_session(), |record| {
        if prompt.is_none() || !is_retry(prompt, &record.last_block_digest) {
            record.facts = decide::session_after_prompt(&record.facts);
            record.begin_turn(head, call.host.now);
        } else {
            // Our block, sent back: delivered.
            record.facts = decide::session_after_delivery(&record.facts);
        }
        record.pending_context.take()
    })?;
    Ok(pending)
}

/// The digest that recognises our own block message when an agent sends it back as a prompt:
/// both get the [`sanitize::message`] form (Gemini re-sends the reason verbatim, Codex under
/// tmux receives what was typed).
fn retry_digest(text: &str) -> String {
    checkpoint_core::hex::sha256_hex(sanitize::message(text).trim().as_bytes())
}

/// Whether `prompt` is our last block message sent back.
fn is_retry(prompt: Option<&str>, last_block: &Option<String>) -> bool {
    last_block.is_some() && prompt.map(retry_digest) == *last_block
}
