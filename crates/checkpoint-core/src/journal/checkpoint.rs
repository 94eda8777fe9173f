//! Checkpoints: what the worktree looked like at a moment worth coming back to.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// What caused a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A git commit (the `post-commit` hook).
    Commit,
    /// A git push (the `pre-push` hook: git has no post-push).
    Push,
    /// A pull request was created (`gh pr create` seen in a tool call).
    Pr,
    /// A validation command passed.
    Validation,
    /// A step was finished.
    StepDone,
    /// A long step reached the checkpoint interval.
    Interval,
    /// `checkpoint save "message"`.
    Manual,
    /// The stop gate allowed the agent to stop.
    Stop,
    /// The context window reached 80 % (reserved).
    #[serde(rename = "auto_80")]
    Auto80,
    /// The context window reached 90 % (reserved).
    #[serde(rename = "auto_90")]
    Auto90,
    /// The agent is about to compact its context (reserved).
    PreCompact,
    /// The agent's session ended (reserved).
    SessionEnd,
    /// `checkpoint restore` is about to change files: the state it changes them from, which
    /// `checkpoint restore --undo` returns to.
    Restore,
}

impl Trigger {
    /// The trigger's wire name, as in `hook.json`.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::Commit => "commit",
            Trigger::Push => "push",
            Trigger::Pr => "pr",
            Trigger::Validation => "validation",
            Trigger::StepDone => "step_done",
            Trigger::Interval => "interval",
            Trigger::Manual => "manual",
            Trigger::Stop => "stop",
            Trigger::Auto80 => "auto_80",
            Trigger::Auto90 => "auto_90",
            Trigger::PreCompact => "pre_compact",
            Trigger::SessionEnd => "session_end",
            Trigger::Restore => "restore",
        }
    }
}

/// The repository's state at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VcsState {
    /// The checked-out branch; `None` when `HEAD` is detached.
    pub branch: Option<String>,
    /// The commit `HEAD` points at; `None` before the first commit.
    pub commit: Option<String>,
    /// Whether anything differed from `HEAD` (staged, unstaged or untracked).
    pub dirty: bool,
}

/// One file as it was at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    /// Relative to the repository root, `/`-separated.
    pub path: String,
    /// Size in bytes; `None` when the file did not exist (or was not a regular file).
    pub size: Option<u64>,
    /// Last modification time, when known.
    pub mtime: Option<Timestamp>,
    /// Lowercase hex SHA-256 of the content; `None` when the file could not be read.
    pub sha256: Option<String>,
}

/// Which step a checkpoint or receipt belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    /// Position in the task's step list, from 0.
    pub index: usize,
    /// The step's name.
    pub name: String,
    /// Which attempt at the step, from 1.
    pub attempt: u32,
}

/// The most files a checkpoint snapshots (and `hook.md` lists for a step), as in the continuity
/// log; the rest are counted.
pub const MAX_FILES: usize = 200;

/// A saved moment of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Sequence number within the task, from 1; never reused, even after pruning.
    pub id: u64,
    /// What caused it.
    pub trigger: Trigger,
    /// When it was taken.
    pub at: Timestamp,
    /// The step being worked on, if any.
    pub step: Option<StepRef>,
    /// The repository's state; `None` outside a git repository or when git could not be read.
    pub vcs: Option<VcsState>,
    /// The files changed in the step, as they were: the first [`MAX_FILES`] by path.
    pub files: Vec<FileSnapshot>,
    /// The step's changed files beyond [`MAX_FILES`], not snapshotted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_files: usize,
    /// What the agent or user said about it.
    pub message: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Whether a `PostToolUse` call created a pull request: a Bash tool call whose command runs
/// `gh pr create`. The adapters call this on every `PostToolUse` and take a [`Trigger::Pr`]
/// checkpoint when it says yes.
pub fn is_pr_creation(tool_name: &str, tool_input: &serde_json::Value) -> bool {
    let is_shell = matches!(
        tool_name,
        "Bash" | "bash" | "shell" | "run_shell_command" | "exec_command" | "local_shell"
    );
    let command = match tool_input.get("command") {
        Some(serde_json::Value::String(command)) => command.clone(),
        Some(serde_json::Value::Array(argv)) => argv
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => return false,
    };
    is_shell
        && command.split(['\n', ';', '&', '|', '(', ')']).any(|part| {
            part.split_whitespace()
                .collect::<Vec<_>>()
                .starts_with(&["gh", "pr", "create"])
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trigger_names_match_the_wire_format() {
        for trigger in [
            Trigger::Commit,
            Trigger::Push,
            Trigger::Pr,
            Trigger::Validation,
            Trigger::StepDone,
            Trigger::Interval,
            Trigger::Manual,
            Trigger::Stop,
            Trigger::Auto80,
            Trigger::Auto90,
            Trigger::PreCompact,
            Trigger::SessionEnd,
        ] {
            let json = serde_json::to_string(&trigger).unwrap();
            assert_eq!(json, format!("\"{}\"", trigger.name()));
        }
    }

    #[test]
    fn pr_creation_is_recognised_in_shell_calls_only() {
        let yes = [
            ("Bash", json!({"command": "gh pr create --fill"})),
            (
                "Bash",
                json!({"command": "git push -u origin x && gh pr create -t T -b B"}),
            ),
            (
                "run_shell_command",
                json!({"command": "cd repo; gh  pr create"}),
            ),
            (
                "exec_command",
                json!({"command": ["gh", "pr", "create", "--draft"]}),
            ),
        ];
        for (tool, input) in &yes {
            assert!(is_pr_creation(tool, input), "{tool} {input}");
        }
        let no = [
            ("Bash", json!({"command": "gh pr list"})),
            ("Bash", json!({"command": "echo gh pr create"})),
            ("Bash", json!({"command": "gh pr view --json url"})),
            ("Write", json!({"command": "gh pr create"})),
            ("Bash", json!({"cmd": "gh pr create"})),
            ("Bash", json!({"command": 3})),
        ];
        for (tool, input) in &no {
            assert!(!is_pr_creation(tool, input), "{tool} {input}");
        }
    }
}
