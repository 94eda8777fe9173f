//! `checkpoint-engine`: the engine behind the `checkpoint` hooks for AI coding agents.
//!
//! Every hook call walks one path, driven by [`hook`] for the agent's home:
//!
//! ```text
//! stdin ─▶ event::HookEvent::parse ─▶ gate: gather facts (git changes, cached test runs,
//!          session memory) ─▶ decide::decide (pure) ─▶ render::message ─▶ answer::HookAnswer
//!       ─▶ the home renders it in the agent's wire format
//! ```
//!
//! The core knows no particular agent. [`agent`] declares what it asks of one — an identity,
//! [`Capabilities`](agent::Capabilities), a [`TranscriptFormat`](agent::TranscriptFormat), an
//! install table — and [`home`] the [`AgentHome`](home::AgentHome) trait, which each adapter crate
//! (`adapter-claude`, `adapter-gemini`, `adapter-codex`, `adapter-copilot`) implements for its
//! agent.
//!
//! Every call of a process starts from one [`Host`](host::Host) (configuration sources, the
//! `CHECKPOINT_*` environment, the clock) and opens one [`Project`](project::Project) from it:
//! repository, state directory, settings, keys. The journal, the continuity log, the session
//! store and the test cache are reached through the project; nothing else finds a repository or
//! loads settings.
//!
//! The pure half — [`agent`], [`answer`], [`changes`], [`decide`](mod@decide), [`doctor`], [`event`],
//! [`home`], [`outcome`], [`policy`] (parsing and merging settings from given texts),
//! [`render`], [`sanitize`], [`tail`] — takes values and returns values. Only the `io` feature's modules touch
//! the disk, the environment, git or processes: [`host`] and [`project`] (opening),
//! [`policy`]'s loading, [`git`], [`runner`], [`cache`], [`store`], [`own_files`], [`session`], [`journal`],
//! [`continuity`], [`travel`], [`context`], [`trust`], [`gate`] and [`hook`]. A tool that gathers its own facts can
//! depend on this crate with `default-features = false` and call [`decide::plan`] and
//! [`decide::decide`] directly.

pub mod agent;
pub mod answer;
pub mod bounded;
pub mod changes;
pub mod decide;
pub mod doctor;
pub mod event;
pub mod home;
pub mod integrity;
pub mod outcome;
pub mod policy;
pub mod render;
pub mod sanitize;
pub mod tail;

#[cfg(feature = "io")]
pub mod cache;
#[cfg(feature = "io")]
pub mod context;
#[cfg(feature = "io")]
pub mod continuity;
#[cfg(feature = "io")]
pub(crate) mod digest;
#[cfg(feature = "io")]
pub(crate) mod file_content;
#[cfg(feature = "io")]
pub mod gate;
#[cfg(feature = "io")]
pub mod git;
#[cfg(feature = "io")]
pub mod hook;
#[cfg(feature = "io")]
pub mod host;
#[cfg(feature = "io")]
pub mod journal;
#[cfg(feature = "io")]
pub mod own_files;
#[cfg(feature = "io")]
pub mod project;
#[cfg(feature = "io")]
pub mod runner;
#[cfg(feature = "io")]
pub mod select;
#[cfg(feature = "io")]
pub mod session;
#[cfg(feature = "io")]
pub mod store;
#[cfg(feature = "io")]
pub mod travel;
#[cfg(feature = "io")]
pub mod trust;

pub use changes::{Change, ChangeKind, ChangeSet, Head, RepoFacts};
pub use decide::{Decision, Facts, Stop, Verdict, decide};
pub use event::{Agent, EventKind, HookEvent};
pub use outcome::{TestOutcome, TestRun, TestStatus};
pub use policy::Policy;
