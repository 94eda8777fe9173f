//! The task journal's model: a task record ([`Task`]) and its state machine ([`state`]), its
//! checkpoints and file snapshots ([`checkpoint`]), signed validation receipts ([`receipt`],
//! [`signing`]), what a fresh agent is told after a crash ([`recovery`]), the recovery file an
//! agent reads ([`markdown`]), which finished tasks may go ([`retention`]) and what every hook
//! reads to decide on an interval checkpoint ([`current`]).
//!
//! Everything here takes values and returns values: the time, keys and random bytes are passed
//! in. Storing tasks (`hook.json`, its history, locks and atomic writes) and the workflows
//! around them are `checkpoint-engine`'s journal.

pub mod checkpoint;
mod crash;
pub mod current;
pub mod markdown;
pub mod receipt;
pub mod recovery;
pub mod retention;
pub mod signing;
pub mod state;
pub mod task;

pub use checkpoint::{Checkpoint, FileSnapshot, StepRef, Trigger, VcsState, is_pr_creation};
pub use current::Current;
pub use receipt::{Receipt, ReceiptCheck, ReceiptPayload, ReceiptSource};
pub use recovery::{CrashKind, Recovery, RecoveryAction};
pub use retention::Removal;
pub use signing::ReceiptSigner;
pub use signing::{
    EntryKind, EntrySignature, KeyCertificate, MasterKey, TaskKey, TrustedKey, TrustedKeys,
};
pub use state::{InvalidTransition, TaskEvent, TaskState};
pub use task::{HistoryEntry, HistoryKind, Step, StepSpec, StepStatus, Task, TaskError};
