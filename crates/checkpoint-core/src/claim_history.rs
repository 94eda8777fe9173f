//! `checkpoint history`'s model: the turns of a past session, built from its transcript's
//! [`TurnEvent`]s; which of them edited files and ended with a completion claim; whether a
//! passing test backed that claim ([`Verification`]); what the gate said at the turn's stops
//! ([`GateOutcome`]); and the counts over many sessions ([`History`]). Counts only: no text of a
//! transcript is kept.
//!
//! A turn begins at a user's prompt (not at the gate's own block, which the agent receives as
//! one) and holds, in order, its edits and its test commands with their results. A test command
//! is a shell command that names a test runner ([`TEST_COMMANDS`]); one whose result is not
//! known (interrupted, or the result never written) did not pass.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::agent::Agent;
use crate::claims;
use crate::render::HEADLINE_PREFIX;
use crate::stop_verdict::StopVerdict;
use crate::turn_event::TurnEvent;

/// The commands that run tests, as the words a shell command's segment begins with (after
/// variable assignments and the wrappers of [`WRAPPERS`]): `cd app && npm test`,
/// `FOO=1 uv run pytest -q`, `./gradlew test`.
pub const TEST_COMMANDS: &[&str] = &[
    "cargo test",
    "cargo nextest",
    "pytest",
    "py test",
    "unittest",
    "tox",
    "nox",
    "go test",
    "npm test",
    "npm run test",
    "pnpm test",
    "pnpm run test",
    "yarn test",
    "yarn run test",
    "bun test",
    "bun run test",
    "deno test",
    "jest",
    "vitest",
    "mocha",
    "make test",
    "make check",
    "ctest",
    "mvn test",
    "mvn verify",
    "gradle test",
    "gradlew test",
    "dotnet test",
    "rspec",
    "rake test",
    "mix test",
    "phpunit",
    "swift test",
    "zig build test",
];

/// What may stand before a test command in a segment and run it: `uv run pytest`,
/// `python -m pytest`, `npx vitest`, `timeout 60 cargo test`.
pub const WRAPPERS: &[&str] = &[
    "uv run",
    "poetry run",
    "pipenv run",
    "hatch run",
    "pdm run",
    "python -m",
    "python3 -m",
    "npx",
    "bunx",
    "pnpm exec",
    "yarn exec",
    "bundle exec",
    "env",
    "time",
    "nice",
    "timeout",
];

/// Whether the shell command `command` runs tests: one of its segments (split at `&&`, `||`,
/// `;`, `|` and newlines) begins with one of [`TEST_COMMANDS`]. A test runner's name elsewhere
/// (`echo pytest`, `cat pytest.ini`) is no test run.
pub fn is_test_command(command: &str) -> bool {
    let phrases =
        |list: &[&str]| -> Vec<Vec<String>> { list.iter().map(|p| claims::words(p)).collect() };
    let (tests, wrappers) = (phrases(TEST_COMMANDS), phrases(WRAPPERS));
    command.split(['&', '|', ';', '\n']).any(|segment| {
        let tokens: Vec<&str> = (segment.split_whitespace())
            .skip_while(|token| token.contains('='))
            .collect();
        let mut said = claims::words(&tokens.join(" "));
        // Wrappers and their arguments (`timeout 60`), as often as they come.
        while let Some(wrapper) = wrappers.iter().find(|w| said.starts_with(w)) {
            said.drain(..wrapper.len());
            let numbers = said
                .iter()
                .take_while(|w| w.chars().all(|c| c.is_ascii_digit()));
            let skip = numbers.count();
            said.drain(..skip);
        }
        tests.iter().any(|test| said.starts_with(test))
    })
}

/// What a turn did, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A tool call that edits files.
    Edit,
    /// A test command: `Some(true)` when it exited 0, `None` when its result is not known.
    Test(Option<bool>),
}

/// One turn of a session: from a user's prompt to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turn {
    /// When its first line was written.
    pub began: Option<Timestamp>,
    /// When its last line was written.
    pub ended: Option<Timestamp>,
    /// Its edits and test commands, in order.
    pub steps: Vec<Step>,
    /// The assistant's last reply text in it.
    pub reply: Option<String>,
}

/// Whether a passing test backed a completion claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// A test command ran after the last edit, and the last one that did passed.
    Verified,
    /// No test command ran after the last edit; one passed before it.
    Stale,
    /// The last test command after the last edit failed (or its result is not known).
    Failed,
    /// No test command passed in the turn, and none ran after the last edit.
    NeverRan,
}

impl Turn {
    /// Whether it edited a file.
    pub fn edited(&self) -> bool {
        self.steps.contains(&Step::Edit)
    }

    /// Whether its last reply claims completion (one of `phrases`, see [`claims::claims`]).
    pub fn claimed(&self, phrases: &[String]) -> bool {
        (self.reply.as_deref()).is_some_and(|reply| claims::claims(reply, phrases))
    }

    /// How its tests stand against its last edit; `None` when it edited nothing.
    pub fn verification(&self) -> Option<Verification> {
        let last_edit = self.steps.iter().rposition(|s| *s == Step::Edit)?;
        let passed = |step: &Step| *step == Step::Test(Some(true));
        let mut after = self.steps[last_edit..].iter().rev();
        Some(match after.find(|s| matches!(s, Step::Test(_))) {
            Some(step) if passed(step) => Verification::Verified,
            Some(_) => Verification::Failed,
            None if self.steps[..last_edit].iter().any(passed) => Verification::Stale,
            None => Verification::NeverRan,
        })
    }
}

/// What the gate said at a turn's stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// No stop of the turn is on record: the gate was not installed, or not in this worktree.
    NotGated,
    /// Every stop was allowed.
    Allowed,
    /// The last stop was blocked (the user stopped the agent, or it gave up).
    Blocked,
    /// Blocked, then allowed: the agent fixed what the block named.
    Fixed,
    /// Let through by the block cap with something unresolved.
    Capped,
}

impl GateOutcome {
    /// The outcome of a turn whose stops had these verdicts, in order.
    pub fn of(verdicts: &[StopVerdict]) -> GateOutcome {
        match verdicts.last() {
            None => GateOutcome::NotGated,
            Some(StopVerdict::AllowedByCap) => GateOutcome::Capped,
            Some(StopVerdict::Blocked) => GateOutcome::Blocked,
            Some(StopVerdict::Allowed) if verdicts.contains(&StopVerdict::Blocked) => {
                GateOutcome::Fixed
            }
            Some(StopVerdict::Allowed) => GateOutcome::Allowed,
        }
    }
}

/// The turns of one session's transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionTurns {
    /// The session's id, when the transcript names it.
    pub session: Option<String>,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
}

impl SessionTurns {
    /// Each turn's [`GateOutcome`], from the session's recorded `stops` (when, and the verdict):
    /// a stop belongs to the last turn that began before it (the first turn takes the earlier
    /// ones). Turns without a time are [`GateOutcome::NotGated`].
    pub fn gate_outcomes(&self, stops: &[(Timestamp, StopVerdict)]) -> Vec<GateOutcome> {
        let began: Vec<Option<Timestamp>> = self.turns.iter().map(|t| t.began).collect();
        (0..self.turns.len())
            .map(|i| {
                let Some(from) = began[i] else {
                    return GateOutcome::NotGated;
                };
                let until = began[i + 1..].iter().flatten().next();
                let verdicts: Vec<StopVerdict> = (stops.iter())
                    .filter(|(at, _)| i == 0 || *at >= from)
                    .filter(|(at, _)| until.is_none_or(|until| at < until))
                    .map(|(_, verdict)| *verdict)
                    .collect();
                GateOutcome::of(&verdicts)
            })
            .collect()
    }
}

/// Builds a session's turns from its transcript's events, line after line.
#[derive(Debug, Default)]
pub struct TurnBuilder {
    done: SessionTurns,
    current: Option<Turn>,
    now: Option<Timestamp>,
    /// The test commands waiting for a result: the call's id → (turn, step).
    tests: HashMap<String, (usize, usize)>,
    /// Every shell call's id seen (an agent may write a call twice).
    calls: std::collections::HashSet<String>,
}

impl TurnBuilder {
    /// Takes in one event.
    pub fn push(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Session(id) => {
                self.done.session.get_or_insert(id);
            }
            TurnEvent::At(at) => self.now = Some(at),
            TurnEvent::Prompt(text) if text.contains(HEADLINE_PREFIX) => {
                self.turn();
            }
            TurnEvent::Prompt(_) => {
                self.done.turns.extend(self.current.take());
                self.turn();
            }
            TurnEvent::Edit => self.turn().steps.push(Step::Edit),
            TurnEvent::Shell { id, command } => {
                self.turn();
                if is_test_command(&command) && self.calls.insert(id.clone()) {
                    let turn_no = self.done.turns.len();
                    let steps = &mut self.turn().steps;
                    steps.push(Step::Test(None));
                    let step = steps.len() - 1;
                    self.tests.insert(id, (turn_no, step));
                }
            }
            TurnEvent::Result { id, ok } => {
                self.turn();
                if let Some(&(turn_no, step)) = self.tests.get(&id) {
                    let turn = match self.done.turns.get_mut(turn_no) {
                        Some(turn) => Some(turn),
                        None => self.current.as_mut(),
                    };
                    if let Some(turn) = turn {
                        turn.steps[step] = Step::Test(ok);
                    }
                }
            }
            TurnEvent::Reply(text) => {
                if !text.trim().is_empty() {
                    self.turn().reply = Some(text);
                }
            }
        }
    }

    /// The current turn (a new one when there is none), its times brought up to now.
    fn turn(&mut self) -> &mut Turn {
        let now = self.now;
        let turn = self.current.get_or_insert_with(Turn::default);
        if now.is_some() {
            turn.began = turn.began.or(now);
            turn.ended = now;
        }
        turn
    }

    /// The session's turns.
    pub fn finish(mut self) -> SessionTurns {
        self.done.turns.extend(self.current.take());
        self.done
    }
}

/// [`Verification`]s counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByVerification {
    /// [`Verification::Verified`].
    pub verified: u64,
    /// [`Verification::Stale`].
    pub stale: u64,
    /// [`Verification::Failed`].
    pub failed: u64,
    /// [`Verification::NeverRan`].
    pub never_ran: u64,
}

/// [`GateOutcome`]s counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByGate {
    /// [`GateOutcome::NotGated`].
    pub not_gated: u64,
    /// [`GateOutcome::Allowed`].
    pub allowed: u64,
    /// [`GateOutcome::Blocked`].
    pub blocked: u64,
    /// [`GateOutcome::Fixed`].
    pub fixed: u64,
    /// [`GateOutcome::Capped`].
    pub capped: u64,
}

/// The counts of one agent's sessions, or of all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Sessions with a turn in the period.
    pub sessions: u64,
    /// Their turns in the period.
    pub turns: u64,
    /// Turns that edited files and ended with a completion claim.
    pub claims: u64,
    /// Those claims by how a passing test backed them.
    pub verification: ByVerification,
    /// Those claims by what the gate said at their stops.
    pub gate: ByGate,
}

impl Tally {
    fn count(&mut self, class: Verification, gate: GateOutcome) {
        self.claims += 1;
        let v = &mut self.verification;
        *match class {
            Verification::Verified => &mut v.verified,
            Verification::Stale => &mut v.stale,
            Verification::Failed => &mut v.failed,
            Verification::NeverRan => &mut v.never_ran,
        } += 1;
        let g = &mut self.gate;
        *match gate {
            GateOutcome::NotGated => &mut g.not_gated,
            GateOutcome::Allowed => &mut g.allowed,
            GateOutcome::Blocked => &mut g.blocked,
            GateOutcome::Fixed => &mut g.fixed,
            GateOutcome::Capped => &mut g.capped,
        } += 1;
    }
}

/// One agent's counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentTally {
    /// The agent.
    pub agent: Agent,
    /// Its transcripts read.
    pub transcripts: u64,
    /// Its transcripts that could not be read (and why is not kept).
    pub unreadable: u64,
    /// Its counts.
    #[serde(flatten)]
    pub tally: Tally,
}

/// The counts over every transcript read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct History {
    /// Turns that ended before this were left out.
    pub since: Option<Timestamp>,
    /// Each agent's counts, in the order they were first added.
    pub agents: Vec<AgentTally>,
    /// All agents together.
    pub total: Tally,
}

impl History {
    /// An empty history of the turns that ended at or after `since`.
    pub fn new(since: Option<Timestamp>) -> History {
        History {
            since,
            ..History::default()
        }
    }

    /// `agent`'s counts (added empty when it has none yet).
    pub fn agent(&mut self, agent: Agent) -> &mut AgentTally {
        let at = match self.agents.iter().position(|a| a.agent == agent) {
            Some(at) => at,
            None => {
                self.agents.push(AgentTally {
                    agent,
                    transcripts: 0,
                    unreadable: 0,
                    tally: Tally::default(),
                });
                self.agents.len() - 1
            }
        };
        &mut self.agents[at]
    }

    /// Counts the turns of `session`, one of `agent`'s, whose stops the gate recorded as
    /// `stops`; completion claims are `phrases`. A turn without a time is counted whatever
    /// `since` says (the caller leaves out transcripts not written since).
    pub fn add(
        &mut self,
        agent: Agent,
        session: &SessionTurns,
        stops: &[(Timestamp, StopVerdict)],
        phrases: &[String],
    ) {
        let since = self.since;
        let gates = session.gate_outcomes(stops);
        let shown = (session.turns.iter().zip(gates))
            .filter(|(turn, _)| since.is_none_or(|since| turn.ended.is_none_or(|at| at >= since)));
        let mut counted = Tally::default();
        for (turn, gate) in shown {
            counted.turns += 1;
            if let Some(class) = turn.verification().filter(|_| turn.claimed(phrases)) {
                counted.count(class, gate);
            }
        }
        if counted.turns == 0 {
            return;
        }
        counted.sessions = 1;
        self.agent(agent).tally.merge(&counted);
        self.total.merge(&counted);
    }
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.sessions += other.sessions;
        self.turns += other.turns;
        self.claims += other.claims;
        let (v, o) = (&mut self.verification, &other.verification);
        v.verified += o.verified;
        v.stale += o.stale;
        v.failed += o.failed;
        v.never_ran += o.never_ran;
        let (g, o) = (&mut self.gate, &other.gate);
        g.not_gated += o.not_gated;
        g.allowed += o.allowed;
        g.blocked += o.blocked;
        g.fixed += o.fixed;
        g.capped += o.capped;
    }
}

#[cfg(test)]
mod tests;
