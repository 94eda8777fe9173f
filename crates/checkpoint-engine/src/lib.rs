//! `checkpoint-engine`: the I/O half of the `checkpoint` hooks for AI coding agents — internal
//! to the checkpoint binaries, with no stable API. A Rust tool that wants the stop gate's
//! decisions embeds `checkpoint-core` instead, which this crate drives.
//!
//! Every hook call walks one path, driven by [`hook`] for the agent's home:
//!
//! ```text
//! stdin ─▶ event::HookEvent::parse ─▶ gate: gather facts (git changes, cached test runs,
//!          session memory) ─▶ decide::decide (pure) ─▶ render::message ─▶ answer::HookAnswer
//!       ─▶ the home renders it in the agent's wire format
//! ```
//!
//! Every call of a process starts from one [`Host`](host::Host) (configuration sources, the
//! `CHECKPOINT_*` environment, the clock) and opens one [`Project`](project::Project) from it:
//! repository, state directory, settings, keys. The journal, the continuity log, the session
//! store and the test cache are reached through the project; nothing else finds a repository or
//! loads settings.

pub mod bounded;
pub mod cache;
pub mod claim_history;
pub mod config;
pub mod context;
pub mod continuity;
pub(crate) mod digest;
pub(crate) mod file_content;
pub mod gate;
pub mod git;
pub mod hook;
pub mod host;
pub mod journal;
pub mod own_files;
pub mod project;
pub mod project_env;
pub mod runner;
pub mod select;
pub mod session;
pub mod stdin;
pub mod store;
pub mod travel;
pub mod trust;
