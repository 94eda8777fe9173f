//! `checkpoint-core`: the pure decision logic of the `checkpoint` stop gate for AI coding agents,
//! for Rust tools that bring their own facts.
//!
//! A stop is decided in two calls. [`decide::plan`] turns an end of turn (a [`HookEvent`]), the
//! changed files ([`ChangeSet`]), what the session has seen ([`decide::SessionFacts`]) and the
//! user's [`Policy`] into the test commands the stop needs; the caller runs them its own way and
//! brings their [`TestOutcome`]s back to [`decide()`], which returns a typed [`Decision`] (allow,
//! block, and why) that [`render`] turns into the short message an agent reads:
//!
//! ```text
//! HookEvent + ChangeSet + Policy ─▶ decide::plan ─▶ (you run the tests) ─▶ Facts
//!                          Facts ─▶ decide::decide ─▶ Decision ─▶ render::message
//! ```
//!
//! Nothing in this crate reads a file, the environment, the clock or a random source, starts a
//! process or opens a socket: the time, keys and random bytes are passed in. `checkpoint-engine`
//! (internal to the checkpoint binaries) gathers the facts from git, runs the tests, stores the
//! journal and answers the agents' hooks with this crate's decisions.
//!
//! | Module | What it holds |
//! |---|---|
//! | [`event`] | the agent-neutral [`HookEvent`], parsed from an agent's payload |
//! | [`agent`], [`home`], [`answer`], [`doctor`], [`project_env`] | what an agent is as data (identity, capabilities, transcript format, install table, the project files that set its hooks' environment), the [`AgentHome`](home::AgentHome) trait each agent's adapter implements, a hook's typed answer, and the pure checks of `checkpoint doctor` |
//! | [`changes`], [`outcome`] | the facts: what changed in the repository, what a test run gave |
//! | [`checks`], [`check_kind`], [`claims`] | typecheck, lint and build checks beside the tests, completion claims, and what a stop runs under each profile |
//! | [`policy`] | settings and glob rules, parsed and merged from given texts |
//! | [`decide`](mod@decide), [`render`] | the verdict on a stop, and its message |
//! | [`integrity`] | findings of changes that weaken the tests, from the diff's lines |
//! | [`pytest_config`] | pytest's own settings (`addopts`, `testpaths`, `python_files`), read from its configuration files |
//! | [`journal`] | the task journal's model: task states, checkpoints, receipts and their signatures, the recovery file |
//! | [`claim_history`], [`turn_event`], [`stop_verdict`] | past turns read from transcripts: which claimed completion after an edit, whether a passing test backed the claim, and what the gate said |
//! | [`shared`] | two sessions in one working tree: the other live sessions' work, and whose a failure is |
//! | [`tail`], [`sanitize`], [`hex`] | a test run's output summarised, any text made safe to show, lowercase hex |

pub mod agent;
pub mod answer;
pub mod changes;
pub mod check_kind;
pub mod checks;
pub mod claim_history;
pub mod claims;
pub mod decide;
pub mod doctor;
pub mod event;
pub mod hex;
pub mod home;
pub mod integrity;
pub mod journal;
pub mod outcome;
pub mod policy;
pub mod project_env;
pub mod pytest_config;
pub mod render;
pub mod sanitize;
pub mod shared;
pub mod stop_verdict;
pub mod tail;
pub mod turn_event;

pub use changes::{Change, ChangeKind, ChangeSet, Head, RepoFacts};
pub use decide::{Decision, Facts, Stop, Verdict, decide};
pub use event::{Agent, EventKind, HookEvent};
pub use outcome::{TestOutcome, TestRun, TestStatus};
pub use policy::Policy;
