//! What the continuity log holds: session checkpoints, progress entries and restart counts.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use checkpoint_core::changes::ChangeKind;
use checkpoint_core::event::Agent;
use checkpoint_core::journal::{EntrySignature, KeyCertificate, Receipt, Trigger};

/// The log's schema version.
pub const SCHEMA: u32 = 1;
/// Session checkpoints kept; older ones are pruned.
pub const MAX_CHECKPOINTS: usize = 50;
/// Progress entries kept; older ones are pruned.
pub const MAX_PROGRESS: usize = 200;
/// Receipts of gate runs without a task kept; older ones are pruned.
pub const MAX_RECEIPTS: usize = 100;
/// Changed files whose state a checkpoint records; the rest are only counted.
pub const MAX_FILES: usize = 200;

/// Everything the continuity log remembers for one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuityLog {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The id the next checkpoint gets; ids are never reused.
    pub next_id: u64,
    /// Session checkpoints, oldest first.
    pub checkpoints: Vec<SessionCheckpoint>,
    /// Progress entries, oldest first.
    pub progress: Vec<ProgressEntry>,
    /// Restarts per thread of work (see [`ThreadKey`]).
    pub restarts: BTreeMap<String, RestartCount>,
    /// Signed receipts of the stop gate's passing test runs while no task was active (their
    /// task id is [`checkpoint_core::journal::receipt::NO_TASK`]), oldest first; at most
    /// [`MAX_RECEIPTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipts: Vec<Receipt>,
    /// The master key's certificates of the keys that signed [`ContinuityLog::receipts`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<KeyCertificate>,
}

impl Default for ContinuityLog {
    fn default() -> Self {
        ContinuityLog {
            schema: SCHEMA,
            next_id: 1,
            checkpoints: Vec::new(),
            progress: Vec::new(),
            restarts: BTreeMap::new(),
            receipts: Vec::new(),
            certificates: Vec::new(),
        }
    }
}

/// A line of work that restarts and progress belong to: a task, or the project when no task is
/// active.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ThreadKey(pub Option<String>);

impl ThreadKey {
    /// The key as stored in [`ContinuityLog::restarts`]: the task id, or `-` for no task.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("-")
    }
}

/// The agent session a checkpoint or entry came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRef {
    /// Which agent.
    pub agent: Agent,
    /// The agent's session id.
    pub id: String,
}

/// How full the context window was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextMark {
    /// Tokens in the context.
    pub used: u64,
    /// The window they are measured against.
    pub window: u64,
    /// `used` as a percentage of `window`, 0–100.
    pub percent: u8,
}

/// The task being worked on at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMark {
    /// The task's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The current step, as "2/4 name", if any.
    pub step: Option<String>,
    /// Where `hook.md` is, for the agent to read.
    pub hook_md: Option<String>,
}

/// One changed file as it was at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// How it differed from `HEAD`.
    pub kind: ChangeKind,
    /// SHA-256 of the content; `None` when the file is gone or unreadable. The content itself is
    /// kept in the log's blob store when it is small enough, for `checkpoint diff` and
    /// `checkpoint restore`.
    pub sha256: Option<String>,
    /// What kind of file held that content (`None` in checkpoints saved before it was recorded,
    /// and when the file is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FileMode>,
}

/// What kind of file a checkpoint saw at a path, for `checkpoint restore` to recreate it alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileMode {
    /// A regular file no execute bit is set on.
    Regular,
    /// A regular file with an execute bit.
    Executable,
    /// A symbolic link; the kept content is its target.
    Link,
}

/// A saved moment of an agent session, independent of tasks: what a fresh session needs to go
/// on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCheckpoint {
    /// Sequence number, from 1.
    pub id: u64,
    /// What caused it.
    pub trigger: Trigger,
    /// When it was taken.
    pub at: Timestamp,
    /// The session it belongs to.
    pub session: SessionRef,
    /// A detail of the trigger: the session end reason, the compaction trigger, a message.
    pub detail: Option<String>,
    /// Context usage at the time, when known.
    pub context: Option<ContextMark>,
    /// The agent's last message, trimmed.
    pub summary: Option<String>,
    /// The commit `HEAD` pointed at.
    pub head: Option<String>,
    /// Files changed since `HEAD` (at most [`MAX_FILES`]).
    pub files: Vec<FileState>,
    /// Changed files beyond [`MAX_FILES`].
    pub more_files: usize,
    /// The active task, if any.
    pub task: Option<TaskMark>,
    /// The progress entries of the thread of work at the time (the key points).
    pub progress: Vec<ProgressEntry>,
    /// What the session's last stop left unresolved when the gate let it through (the block
    /// cap, `[integrity] mode = "warn"`; see [`checkpoint_core::render::let_through`]). Later checkpoints
    /// of the session carry it until a stop is allowed clean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
    /// The signature of the user whose machine saved it, over everything above (see
    /// [`super::signed`]); `None` when no key was usable, and in logs written before entries
    /// were signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<EntrySignature>,
}

impl SessionCheckpoint {
    /// A digest of the worktree state (HEAD and file contents): equal digests mean no work
    /// happened in between.
    pub fn state_digest(&self) -> String {
        let mut text = self.head.clone().unwrap_or_default();
        for file in &self.files {
            text.push('\n');
            text.push_str(&file.path);
            text.push(' ');
            text.push_str(file.sha256.as_deref().unwrap_or("-"));
        }
        text.push_str(&format!("\n+{}", self.more_files));
        checkpoint_core::hex::sha256_hex(text.as_bytes())
    }
}

/// Where a progress entry was logged from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressSource {
    /// `checkpoint progress "…"`.
    Cli,
    /// The agent invoked the `checkpoint-progress` skill or slash command.
    Skill,
    /// The MCP tool `checkpoint_progress`.
    Mcp,
}

/// One milestone the agent or user logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressEntry {
    /// When.
    pub at: Timestamp,
    /// What was achieved.
    pub text: String,
    /// The task it belongs to; `None` when no task was active.
    pub task: Option<String>,
    /// The session it was logged in, when known.
    pub session: Option<SessionRef>,
    /// How it was logged.
    pub source: ProgressSource,
    /// The signature of the user whose machine logged it, over everything above (see
    /// [`super::signed`]); `None` when no key was usable, and in logs written before entries
    /// were signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<EntrySignature>,
}

/// How often a thread of work was resumed without progress in between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartCount {
    /// Resumes in a row without progress, from 1.
    pub count: u32,
    /// The last resume.
    pub at: Timestamp,
    /// [`SessionCheckpoint::state_digest`] of the checkpoint that resume started from.
    pub state: String,
}
