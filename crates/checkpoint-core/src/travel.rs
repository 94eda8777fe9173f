//! Checkpoints travel with the repository: task journals and session logs are kept in refs of
//! our own under [`NAMESPACE`] ([`stream`]), one chain of commits per task and per worktree's
//! session log.

pub mod stream;

/// Where every ref of ours lives.
pub const NAMESPACE: &str = "refs/checkpoint/";

/// The ref of the task `id`: `refs/checkpoint/tasks/<id>`.
pub fn task_ref(id: &str) -> String {
    format!("{NAMESPACE}tasks/{id}")
}
