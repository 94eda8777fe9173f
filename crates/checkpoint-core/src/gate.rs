//! The stop gate's I/O half: gathers the facts for a hook event, calls [`decide()`], renders the
//! message and remembers what the session needs for the next stop.
//!
//! Adapters and `checkpoint check` call [`Gate::run`]; an `Err` means the gate could not judge
//! (bad cwd, broken config, unusable state) and the caller fails open.

mod continuity;

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::cache::{self, TestCache};
use crate::changes::RepoFacts;
use crate::decide::{self, Decision, Facts, PlannedTest, decide};
use crate::event::{Agent, EventKind, HookEvent};
use crate::git::{self, Repo};
use crate::journal::{self, Journal, JournalError, Trigger, is_pr_creation};
use crate::outcome::{TestOutcome, TestRun, TestStatus};
use crate::policy::Policy;
use crate::policy::config::{self, ConfigError, ConfigSources};
use crate::render;
use crate::runner;
use crate::session::SessionStore;
use crate::store::StoreError;

pub use continuity::{
    CONTEXT_CHECKPOINT_GAP, GEMINI_COMPRESSION_PERCENT, PROGRESS_SKILL, SaveRequest,
};

/// Environment variable that moves all state out of the repository's git directory.
pub const STATE_DIR_VAR: &str = "CHECKPOINT_STATE_DIR";

/// Why the gate could not judge an event. Hooks fail open on these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// The event's working directory does not exist.
    #[error("working directory {} does not exist", .0.display())]
    MissingCwd(PathBuf),
    /// The configuration is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The task journal could not be updated.
    #[error("journal: {0}")]
    Journal(#[from] JournalError),
    /// The session state could not be read or written.
    #[error("state: {0}")]
    State(#[from] StoreError),
    /// The command needs a git repository and there is none.
    #[error("{} is not inside a git repository", .0.display())]
    NoRepository(PathBuf),
    /// A progress entry without text.
    #[error("a progress entry needs some text")]
    EmptyProgress,
    /// The worktree could not be compared with the last checkpoint.
    #[error("comparing with the last checkpoint: {0}")]
    Diff(String),
}

/// A judged event: the decision and its rendered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateOutcome {
    /// The typed verdict.
    pub decision: Decision,
    /// The text for the agent (block) or the user (allow); empty for non-stop events.
    pub message: String,
    /// Problems that did not change the verdict (e.g. the journal could not be written), one
    /// line each, for stderr.
    pub warnings: Vec<String>,
    /// Text to add to the agent's context (a resumed checkpoint, a context notice); only on
    /// events that are not stops.
    pub context: Option<String>,
    /// Text for the user (not the agent) on an allowed stop: work not yet in a checkpoint, with
    /// `[clear] auto_checkpoint = "prompt"`.
    pub notice: Option<String>,
}

/// Where the gate reads configuration and what time it is.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The user-level config file, if any.
    pub user_config: Option<PathBuf>,
    /// `CHECKPOINT_*` variables (name, value).
    pub env: Vec<(String, String)>,
    /// The time of the event.
    pub now: Timestamp,
}

impl Gate {
    /// A gate configured from this process's environment and home directory.
    pub fn from_process() -> Gate {
        let sources = ConfigSources::from_process(Path::new("."));
        Gate {
            user_config: sources.user_file,
            env: sources.env,
            now: Timestamp::now(),
        }
    }

    /// Whether [`Gate::run`] does anything for this kind of event; adapters answer the others
    /// with their no-op without building a gate.
    pub fn handles(kind: &EventKind) -> bool {
        kind.is_stop()
            || matches!(
                kind,
                EventKind::UserPrompt
                    | EventKind::PreTool
                    | EventKind::PostTool
                    | EventKind::SessionStart
                    | EventKind::SessionEnd
                    | EventKind::PreCompact
            )
    }

    /// Judges one hook event.
    pub fn run(&self, event: &HookEvent) -> Result<GateOutcome, GateError> {
        if event.kind.is_stop() {
            return self.stop(event);
        }
        let mut warnings = Vec::new();
        let context = match event.kind {
            EventKind::UserPrompt => self.user_prompt(event)?,
            EventKind::PreTool => self.context_watch(event)?,
            EventKind::PostTool => self.post_tool(event)?,
            EventKind::SessionStart => self.session_start(event)?,
            EventKind::SessionEnd => {
                warnings.extend(self.session_end(event)?);
                None
            }
            EventKind::PreCompact => self.pre_compact(event).map(|()| None)?,
            _ => None,
        };
        let mut outcome = self.without_repo(event, RepoFacts::NoRepository);
        outcome.context = context;
        outcome.warnings = warnings;
        Ok(outcome)
    }

    /// The directory holding this repository's checkpoint state.
    pub fn state_dir(&self, repo: &Repo) -> PathBuf {
        self.env
            .iter()
            .find(|(k, _)| k == STATE_DIR_VAR)
            .map(|(_, v)| PathBuf::from(v))
            .unwrap_or_else(|| repo.git_dir.join("checkpoint"))
    }

    /// Judges an event for which no repository facts are gathered.
    fn without_repo(&self, event: &HookEvent, repo: RepoFacts) -> GateOutcome {
        judged(event, &Facts::for_repo(repo, self.now), &Policy::builtin())
    }

    fn sources(&self, root: &Path) -> ConfigSources {
        ConfigSources {
            user_file: self.user_config.clone(),
            project_file: root.join(config::PROJECT_FILE),
            env: self.env.clone(),
        }
    }

    /// A new user prompt starts a new turn: the block count starts over. Gemini re-sends a block
    /// reason as a prompt; that retry is recognised by its digest and changes nothing. Context
    /// held back for the session (Gemini after `/clear`) goes with the prompt.
    fn user_prompt(&self, event: &HookEvent) -> Result<Option<String>, GateError> {
        check_cwd(event)?;
        let Ok(Some(repo)) = git::discover(&event.cwd) else {
            return Ok(None);
        };
        let digest = event.prompt.as_deref().map(retry_digest);
        let pending = SessionStore::new(&self.state_dir(&repo)).update(
            event.agent,
            session_id(event),
            |record| {
                if digest.is_none() || record.last_block_digest != digest {
                    record.facts = decide::session_after_prompt(&record.facts);
                }
                record.pending_context.take()
            },
        )?;
        Ok(pending)
    }

    /// After a tool call: progress logged by the skill, a held-back context notice; then a
    /// pull request being created checkpoints the active task, otherwise a long step gets its
    /// interval checkpoint when one is due.
    fn post_tool(&self, event: &HookEvent) -> Result<Option<String>, GateError> {
        check_cwd(event)?;
        let Ok(Some(repo)) = git::discover(&event.cwd) else {
            return Ok(None);
        };
        let mut context = self.post_tool_continuity(event, &repo)?;
        // Claude may write the reply that asked for the tool only after `PreToolUse` ran: by now
        // it is in the transcript, so a threshold crossed by that reply is caught here.
        if context.is_none() && event.agent == Agent::Claude {
            context = self.context_watch(event)?;
        }
        // Most tool calls happen with no task: answer them before loading any configuration.
        if !journal::names_active_task(&self.state_dir(&repo)) {
            return Ok(context);
        }
        let policy = config::load(&self.sources(&repo.workdir), &repo.workdir)?;
        let journal = Journal::for_repo(self, repo, policy);
        let pr_command = match (&event.tool_name, &event.tool_input) {
            (Some(name), Some(input)) if is_pr_creation(name, input) => {
                Some(input["command"].to_string())
            }
            _ => None,
        };
        match pr_command {
            Some(command) => journal.checkpoint_active(Trigger::Pr, Some(command), self.now),
            None => journal.maybe_interval_checkpoint(self.now),
        }?;
        Ok(context)
    }

    fn stop(&self, event: &HookEvent) -> Result<GateOutcome, GateError> {
        check_cwd(event)?;
        let repo = match git::discover(&event.cwd) {
            Ok(Some(repo)) => repo,
            Ok(None) => return Ok(self.without_repo(event, RepoFacts::NoRepository)),
            Err(e) => return Ok(self.without_repo(event, git::unreadable(&e))),
        };
        let policy = config::load(&self.sources(&repo.workdir), &repo.workdir)?;
        let state_dir = self.state_dir(&repo);
        let journal = Journal::for_repo(self, repo.clone(), policy);
        let policy = journal.policy();
        let mut warnings = Vec::new();
        let sessions = SessionStore::new(&state_dir);
        let record = sessions.load(event.agent, session_id(event))?;
        let retry;
        let event = if !event.stop_hook_active && is_retry(event, &record.last_block_digest) {
            // The turn answers our last block (Codex `notify` carries no stop_hook_active).
            retry = HookEvent {
                stop_hook_active: true,
                ..event.clone()
            };
            &retry
        } else {
            event
        };

        let repo_facts = git::facts(&repo, policy.git.backend);
        let (fingerprint, tests) = match &repo_facts {
            RepoFacts::Changes(changes) => {
                let fingerprint = cache::change_fingerprint(&repo.workdir, changes);
                let planned = decide::planned_tests(changes, policy);
                // A stop that may no longer be blocked still reports cached outcomes, but pays
                // for no fresh run.
                let runs = TestRuns {
                    journal: &journal,
                    cache: TestCache::new(&state_dir),
                    fingerprint: &fingerprint,
                    may_run: !decide::cap_reached(event, &record.facts, policy),
                };
                let tests = runs.run(planned, &mut warnings);
                (Some(fingerprint), tests)
            }
            _ => (None, Vec::new()),
        };
        let facts = Facts {
            repo: repo_facts,
            fingerprint,
            tests,
            session: record.facts,
            now: self.now,
        };
        let mut outcome = judged(event, &facts, policy);
        sessions.update(event.agent, session_id(event), |record| {
            record.facts = decide::next_session(&record.facts, &outcome.decision, &facts);
            record.last_block_digest = outcome
                .decision
                .is_block()
                .then(|| retry_digest(&outcome.message));
        })?;
        // Every allowed stop leaves a session checkpoint (and one in the active task); a
        // blocked one still gets the interval checkpoint of a long step.
        let recorded = if outcome.decision.is_block() {
            journal
                .maybe_interval_checkpoint(self.now)
                .map(|_| None)
                .map_err(GateError::from)
        } else {
            let changes = match &facts.repo {
                RepoFacts::Changes(changes) => Some(changes),
                _ => None,
            };
            self.stop_checkpoint(event, &journal, &repo, changes)
        };
        match recorded {
            Ok(notice) => outcome.notice = notice,
            Err(e) => warnings.push(format!("saving the checkpoint: {e}")),
        }
        outcome.warnings = warnings;
        Ok(outcome)
    }
}

impl Facts {
    /// Facts with nothing but the repository state (no tests, fresh session).
    fn for_repo(repo: RepoFacts, now: Timestamp) -> Facts {
        Facts {
            repo,
            fingerprint: None,
            tests: Vec::new(),
            session: decide::SessionFacts::default(),
            now,
        }
    }
}

fn judged(event: &HookEvent, facts: &Facts, policy: &Policy) -> GateOutcome {
    let decision = decide(event, facts, policy);
    let message = render::message(&decision);
    GateOutcome {
        decision,
        message,
        warnings: Vec::new(),
        context: None,
        notice: None,
    }
}

/// The digest that recognises our own block message when an agent sends it back as a prompt:
/// Gemini re-sends the reason verbatim, Codex under tmux receives the terminal-safe form.
fn retry_digest(text: &str) -> String {
    cache::sha256_hex(render::terminal_safe(text).trim().as_bytes())
}

fn is_retry(event: &HookEvent, last_block: &Option<String>) -> bool {
    last_block.is_some() && event.prompt.as_deref().map(retry_digest) == *last_block
}

fn check_cwd(event: &HookEvent) -> Result<(), GateError> {
    if event.cwd.is_dir() {
        Ok(())
    } else {
        Err(GateError::MissingCwd(event.cwd.clone()))
    }
}

fn session_id(event: &HookEvent) -> &str {
    if event.session_id.is_empty() {
        "unknown"
    } else {
        &event.session_id
    }
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

    /// Whether a cached pass may stand: always without an active task, else only with a
    /// verified passing receipt.
    fn trusts(&self, command: &str, key: &str) -> bool {
        match self.journal.active() {
            Ok(Some(_)) => self.journal.trusted_pass(command, key),
            Ok(None) => true,
            Err(_) => false,
        }
    }
}
