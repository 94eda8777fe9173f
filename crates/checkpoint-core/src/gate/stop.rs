//! Ends of turn and new prompts: the stop gate proper. A stop gathers the change set, runs (or
//! reuses) the planned tests, asks [`decide`] and stores the session memory it returns; a new
//! prompt starts a new turn.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use jiff::Timestamp;

use crate::answer::StopAnswer;
use crate::cache::{self, TestCache};
use crate::changes::{ChangeSet, RepoFacts};
use crate::decide::{self, Facts, PlannedTest, SessionFacts, Stop, decide};
use crate::digest;
use crate::git::{self, Repo};
use crate::integrity::{self, Finding, Sides, TestFiles};
use crate::journal::Journal;
use crate::outcome::{TestOutcome, TestRun, TestStatus};
use crate::policy::{IntegrityMode, IntegritySettings, Policy};
use crate::project::ProjectError;
use crate::render;
use crate::runner;

use super::call::Call;
use super::continuity;

/// Files bigger than this (on either side) get only the integrity checks that need no text.
const MAX_INTEGRITY_BYTES: usize = 1024 * 1024;

/// Judges an end of turn. Outside git, or when git cannot be read, the stop is allowed as it is.
pub(super) fn stop(call: &Call, warnings: &mut Vec<String>) -> Result<StopAnswer, ProjectError> {
    let event = call.event;
    let now = call.host.now;
    let repo = match call.host.locate(&event.cwd) {
        Ok(Some(repo)) => repo,
        Ok(None) => return Ok(without_repo(call, RepoFacts::NoRepository)),
        Err(e) => return Ok(without_repo(call, git::unreadable(&e))),
    };
    let mut project = call.host.project(repo)?;
    // Only the commands and guarded values the user approved for this project apply, here and
    // in everything the stop does with the project (its test runs' timeout, its checkpoints).
    let approval = project.approval().unwrap_or_else(|e| {
        warnings.push(format!("trust: {e}"));
        None
    });
    let (policy, trust_notice) = project.approved_policy(approval.as_ref());
    project.policy = policy;
    let policy = &project.policy;
    let repo = project.git()?;
    let journal = project.journal();
    let sessions = project.sessions();
    let record = sessions.load(event.agent, call.session_id())?;
    // The turn answers our last block (Codex `notify` carries no stop_hook_active).
    let stop = Stop {
        repeated: event.stop_hook_active
            || is_retry(event.prompt.as_deref(), &record.last_block_digest),
    };

    let repo_facts = git::facts(repo, policy.git.backend);
    let (fingerprint, tests) = match &repo_facts {
        RepoFacts::Changes(changes) => {
            let fingerprint = cache::change_fingerprint(&repo.workdir, changes);
            let plan = decide::plan(stop, changes, &record.facts, policy);
            // A stop that may no longer be blocked still reports cached outcomes, but pays for
            // no fresh run.
            let runs = TestRuns {
                journal: &journal,
                cache: project.test_cache(),
                fingerprint: &fingerprint,
                may_run: plan.may_run,
            };
            let tests = runs.run(plan.tests, warnings);
            (Some(fingerprint), tests)
        }
        _ => (None, Vec::new()),
    };
    let integrity = match &repo_facts {
        RepoFacts::Changes(changes) if policy.integrity.mode != IntegrityMode::Off => {
            integrity_findings(repo, changes, &policy.integrity, warnings)
        }
        _ => Vec::new(),
    };
    let facts = Facts {
        repo: repo_facts,
        fingerprint,
        tests,
        session: record.facts,
        integrity,
        now,
    };
    let verdict = decide(stop, &facts, policy);
    let mut answer = StopAnswer {
        message: render::message(&verdict.decision),
        decision: verdict.decision,
        notice: None,
    };
    let trust_notice = sessions.update(event.agent, call.session_id(), |record| {
        record.facts = verdict.session;
        record.last_block_digest = answer
            .decision
            .is_block()
            .then(|| retry_digest(&answer.message));
        once_per_session(&mut record.trust_notice, trust_notice)
    })?;
    // Every allowed stop leaves a session checkpoint (and one in the active task); a blocked one
    // still gets the interval checkpoint of a long step.
    let recorded = if answer.decision.is_block() {
        journal
            .maybe_interval_checkpoint(now)
            .map(|_| None)
            .map_err(ProjectError::from)
    } else {
        let changes = match &facts.repo {
            RepoFacts::Changes(changes) => Some(changes),
            _ => None,
        };
        continuity::stop_checkpoint(call, &project, changes)
    };
    let saved_notice = recorded.unwrap_or_else(|e| {
        warnings.push(format!("saving the checkpoint: {e}"));
        None
    });
    let notices: Vec<String> = trust_notice.into_iter().chain(saved_notice).collect();
    answer.notice = (!notices.is_empty()).then(|| notices.join("\n"));
    Ok(answer)
}

/// The integrity findings of `changes`: the sides of the files [`integrity::wanted`] names, read
/// at `HEAD` (sized, then read, by `git cat-file`) and in the worktree, analysed. A side bigger
/// than [`MAX_INTEGRITY_BYTES`], or not UTF-8, is left out; failing to read `HEAD` (or a bad
/// glob in the settings) is a warning and leaves the checks that need no text (or the default
/// test files).
fn integrity_findings(
    repo: &Repo,
    changes: &ChangeSet,
    settings: &IntegritySettings,
    warnings: &mut Vec<String>,
) -> Vec<Finding> {
    let files = TestFiles::new(settings).unwrap_or_else(|e| {
        warnings.push(format!("integrity: {e}"));
        TestFiles::default()
    });
    let wanted = integrity::wanted(changes, &files);
    let at_head: BTreeSet<String> = (wanted.iter())
        .filter(|(_, sides)| sides.old)
        .map(|(path, _)| (*path).to_owned())
        .collect();
    let mut old = match changes.head.commit() {
        Some(commit) if !at_head.is_empty() => {
            crate::continuity::diff::small_blobs(repo, commit, &at_head, MAX_INTEGRITY_BYTES)
                .unwrap_or_else(|e| {
                    warnings.push(format!("integrity: {e}"));
                    BTreeMap::new()
                })
        }
        _ => BTreeMap::new(),
    };
    let texts = wanted
        .into_iter()
        .map(|(path, sides)| {
            let read = Sides {
                old: old
                    .remove(path)
                    .and_then(|blob| String::from_utf8(blob).ok()),
                new: sides
                    .new
                    .then(|| read_bounded(&repo.workdir.join(path)))
                    .flatten(),
            };
            (path.to_owned(), read)
        })
        .collect();
    integrity::analyze(changes, &texts, &files)
}

/// The UTF-8 text of the file at `path` when it is at most [`MAX_INTEGRITY_BYTES`] long.
fn read_bounded(path: &Path) -> Option<String> {
    let mut text = String::new();
    let read = File::open(path)
        .ok()?
        .take(MAX_INTEGRITY_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .ok()?;
    (read <= MAX_INTEGRITY_BYTES).then_some(text)
}

/// `notice` unless the session was already shown it (`shown` holds the digest of the last one
/// shown, and is updated); no notice forgets it, so that the same one later is shown again.
fn once_per_session(shown: &mut Option<String>, notice: Option<String>) -> Option<String> {
    let digest = notice.as_deref().map(|n| digest::sha256_hex(n.as_bytes()));
    let new = digest.is_some() && digest != *shown;
    *shown = digest;
    notice.filter(|_| new)
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
    };
    let stop = Stop {
        repeated: call.event.stop_hook_active,
    };
    let decision = decide(stop, &facts, &Policy::builtin()).decision;
    StopAnswer {
        message: render::message(&decision),
        decision,
        notice: None,
    }
}

/// A new user prompt starts a new turn: the block count starts over. Gemini re-sends a block
/// reason as a prompt; that retry is recognised by its digest and changes nothing. Context held
/// back for the session (Gemini after `/clear`) goes with the prompt.
pub(super) fn user_prompt(call: &Call) -> Result<Option<String>, ProjectError> {
    let Ok(Some(repo)) = call.host.locate(&call.event.cwd) else {
        return Ok(None);
    };
    let prompt = call.event.prompt.as_deref();
    let sessions = crate::session::SessionStore::new(&call.host.state_dir(&repo));
    let pending = sessions.update(call.event.agent, call.session_id(), |record| {
        if prompt.is_none() || !is_retry(prompt, &record.last_block_digest) {
            record.facts = decide::session_after_prompt(&record.facts);
        }
        record.pending_context.take()
    })?;
    Ok(pending)
}

/// The digest that recognises our own block message when an agent sends it back as a prompt:
/// Gemini re-sends the reason verbatim, Codex under tmux receives the terminal-safe form.
fn retry_digest(text: &str) -> String {
    digest::sha256_hex(render::terminal_safe(text).trim().as_bytes())
}

/// Whether `prompt` is our last block message sent back.
fn is_retry(prompt: Option<&str>, last_block: &Option<String>) -> bool {
    last_block.is_some() && prompt.map(retry_digest) == *last_block
}

/// How one stop runs its planned test commands.
struct TestRuns<'a> {
    journal: &'a Journal,
    cache: TestCache,
    fingerprint: &'a str,
    /// False once the block cap is reached: only cached outcomes are used.
    may_run: bool,
}

impl TestRuns<'_> {
    /// Runs each planned command once, reusing the last outcome of a command whose fingerprint
    /// did not change. While a task is active, a cached pass is trusted only with a verified
    /// signed receipt for the same fingerprint; every fresh run leaves a receipt in that task.
    fn run(&self, planned: Vec<PlannedTest>, warnings: &mut Vec<String>) -> Vec<TestRun> {
        let timeout = self.journal.policy().tests.timeout;
        let workdir = self.journal.workdir();
        planned
            .into_iter()
            .map(|p| {
                let key = cache::test_fingerprint(self.fingerprint, &p.command, timeout);
                let cached = self
                    .cache
                    .lookup(&p.command, &key)
                    .filter(|o| o.status != TestStatus::Passed || self.trusts(&p.command, &key));
                let outcome = match cached {
                    Some(cached) => cached,
                    None if !self.may_run => TestOutcome::not_run(),
                    None => {
                        let started = Timestamp::now();
                        let recorded = runner::run_recorded(&p.command, workdir, timeout);
                        let ended = Timestamp::now();
                        // The cache only saves time; failing to write it must not fail the stop.
                        let _ = self.cache.record(&p.command, &key, &recorded.outcome);
                        let receipt = self
                            .journal
                            .receipt_for_gate_run(&p.command, &recorded, &key, started, ended);
                        if let Err(e) = receipt {
                            warnings.push(format!("journal: {e}"));
                        }
                        recorded.outcome
                    }
                };
                TestRun {
                    command: p.command,
                    rules: p.rules,
                    outcome,
                }
            })
            .collect()
    }

    /// Whether a cached pass may stand: always without an active task, else only with a verified
    /// passing receipt.
    fn trusts(&self, command: &str, key: &str) -> bool {
        match self.journal.active() {
            Ok(Some(_)) => self.journal.trusted_pass(command, key),
            Ok(None) => true,
            Err(_) => false,
        }
    }
}
