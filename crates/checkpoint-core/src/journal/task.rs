//! The task record kept in `hook.json`, and the pure operations that change it.
//!
//! Every operation takes the time as an argument and either changes the task (moving it through
//! [`transition`], appending to the history, bumping `updated_at`) or returns an error and leaves
//! it untouched.

use std::collections::HashSet;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::checkpoint::{Checkpoint, StepRef};
use super::crash::Recovery;
use ed25519_dalek::{Signature, VerifyingKey};

use super::receipt::{RECEIPT_VERSION, Receipt, ReceiptCheck};
use super::signing::{KeyCertificate, TrustedKeys};
use super::state::{InvalidTransition, TaskEvent, TaskState, transition};
use crate::hex::{hex, unhex};

/// The `hook.json` schema version this build writes and reads. Version 1 kept the whole history
/// in `hook.json`; version 2 keeps the latest [`RECENT_HISTORY`] entries there and every entry in
/// the append-only `history/` store (the engine's `journal::history`). A version 1 file is read as it is and
/// moved to version 2 by its next update.
pub const SCHEMA_VERSION: u32 = 2;

/// How many of the latest history entries `hook.json` keeps.
pub const RECENT_HISTORY: usize = 20;

/// Failed attempts at one step after which a human is asked.
pub const MAX_ATTEMPTS: u32 = 3;

/// Why a task operation was refused. Every message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The state machine does not allow it.
    #[error(transparent)]
    Transition(#[from] InvalidTransition),
    /// A task needs at least one step.
    #[error("a task needs at least one step")]
    NoSteps,
    /// A step name is empty, repeated or has characters that would confuse the CLI.
    #[error("bad step name {0:?}: names must be unique, non-empty and free of `,` and `=`")]
    BadStepName(String),
    /// No step has this name.
    #[error("no step named {0:?}")]
    UnknownStep(String),
    /// The step is already done.
    #[error("step {0:?} is already done; do not repeat it")]
    AlreadyDone(String),
    /// Steps run in order.
    #[error("step {step:?} cannot start before {first:?} is done")]
    OutOfOrder {
        /// The step asked for.
        step: String,
        /// The first step not done yet.
        first: String,
    },
    /// The operation names a step that is not the current one.
    #[error("step {step:?} is not the current step ({current})")]
    NotCurrent {
        /// The step asked for.
        step: String,
        /// The current step, or `none`.
        current: String,
    },
    /// The step's validation has not passed in this attempt.
    #[error("step {step:?} must pass its validation `{command}` first")]
    NotValidated {
        /// The step.
        step: String,
        /// Its validation command.
        command: String,
    },
    /// Completing needs every step done.
    #[error("{0} step(s) not done yet")]
    StepsLeft(usize),
    /// There is no step left to start.
    #[error("every step is done; complete the task")]
    AllDone,
}

/// How far a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started, or failed and waiting for a retry.
    Pending,
    /// Being worked on.
    Running,
    /// Finished.
    Done,
}

/// A file the current step changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TouchedFile {
    /// Relative to the repository root.
    pub path: String,
    /// Its content differs from the last checkpoint's snapshot (as of the last look).
    pub changed_since_checkpoint: bool,
}

/// One step of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Unique within the task.
    pub name: String,
    /// The command that must pass before the step is done, if any.
    pub validate: Option<String>,
    /// How far it is.
    pub status: StepStatus,
    /// Attempts started so far.
    pub attempt: u32,
    /// Failed attempts so far.
    pub failures: u32,
    /// When the current (or last) attempt started.
    pub started_at: Option<Timestamp>,
    /// When it was done.
    pub finished_at: Option<Timestamp>,
    /// What is being worked on (the last note).
    pub doing: Option<String>,
    /// Files changed while the step ran.
    pub files: Vec<TouchedFile>,
    /// The passing receipt of the step's validation in the current attempt: of its declared
    /// command, or, for a step that declares none, of the latest `checkpoint validate` that passed.
    pub validated_by: Option<String>,
    /// Receipt ids recorded while the step ran.
    pub receipts: Vec<String>,
}

/// A step as declared by a template or the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// The step's name.
    pub name: String,
    /// Its validation command, if any.
    #[serde(default)]
    pub validate: Option<String>,
}

/// What happened, in a history entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryKind {
    /// The task was created.
    TaskCreated,
    /// Its steps were set up.
    TaskReady,
    /// A step started or resumed.
    StepStarted,
    /// A validation command started.
    ValidationStarted,
    /// A validation command passed.
    ValidationPassed,
    /// A validation command failed.
    ValidationFailed,
    /// A step was done.
    StepDone,
    /// A step failed.
    StepFailed,
    /// A human was asked to decide.
    AskedHuman,
    /// A crash was detected.
    CrashDetected,
    /// A checkpoint was taken.
    Checkpoint,
    /// The gate's test run left a receipt.
    GateRun,
    /// The task was completed.
    TaskCompleted,
    /// The task failed.
    TaskFailed,
    /// The task was abandoned.
    TaskAbandoned,
}

/// One entry of the append-only history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// When.
    pub at: Timestamp,
    /// What.
    pub kind: HistoryKind,
    /// The task's state afterwards.
    pub state: TaskState,
    /// The step concerned, if any.
    pub step: Option<String>,
    /// Details: a note, a command, a checkpoint's trigger and message.
    pub detail: Option<String>,
}

/// Everything `hook.json` holds about one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The task's id (its directory name).
    pub id: String,
    /// A human name.
    pub name: String,
    /// Where it is.
    pub state: TaskState,
    /// Bumped by every committed update.
    pub revision: u64,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The index of the step being worked on (or last worked on).
    pub current_step: Option<usize>,
    /// The latest history entries, oldest first: `hook.json` keeps the last [`RECENT_HISTORY`]
    /// (a version 1 file: all of them); a change appends what it records here, and the journal
    /// moves it to the whole history, `history/` (the engine's `Journal::history`).
    #[serde(rename = "recent_history", alias = "history")]
    pub history: Vec<HistoryEntry>,
    /// How many history entries were ever recorded (those in `history/` and those recorded
    /// since the task was read).
    #[serde(default)]
    pub history_len: u64,
    /// The most recent checkpoints, oldest first.
    pub checkpoints: Vec<Checkpoint>,
    /// The id the next checkpoint gets.
    pub next_checkpoint: u64,
    /// Every receipt, oldest first.
    pub receipts: Vec<Receipt>,
    /// The master key's certificates of the keys that signed the receipts (one per task key;
    /// absent from tasks written before per-task keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<KeyCertificate>,
    /// The last crash recovery, while it is relevant.
    pub recovery: Option<Recovery>,
    /// The command of the validation running now (while the task is `step_validating`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validating: Option<String>,
}

impl Task {
    /// A new task with `steps`, already past `initializing` (both transitions are in the history).
    pub fn new(
        id: String,
        name: String,
        specs: Vec<StepSpec>,
        now: Timestamp,
    ) -> Result<Task, TaskError> {
        if specs.is_empty() {
            return Err(TaskError::NoSteps);
        }
        for (i, spec) in specs.iter().enumerate() {
            let bad = spec.name.trim().is_empty()
                || spec.name.contains([',', '=', '\n'])
                || specs[..i].iter().any(|s| s.name == spec.name);
            if bad {
                return Err(TaskError::BadStepName(spec.name.clone()));
            }
        }
        let steps = specs
            .into_iter()
            .map(|spec| Step {
                name: spec.name,
                validate: spec.validate.filter(|c| !c.trim().is_empty()),
                status: StepStatus::Pending,
                attempt: 0,
                failures: 0,
                started_at: None,
                finished_at: None,
                doing: None,
                files: Vec::new(),
                validated_by: None,
                receipts: Vec::new(),
            })
            .collect();
        let mut task = Task {
            schema: SCHEMA_VERSION,
            id,
            name,
            state: TaskState::Initializing,
            revision: 0,
            created_at: now,
            updated_at: now,
            steps,
            current_step: None,
            history: Vec::new(),
            history_len: 0,
            checkpoints: Vec::new(),
            next_checkpoint: 1,
            receipts: Vec::new(),
            certificates: Vec::new(),
            recovery: None,
            validating: None,
        };
        task.record(HistoryKind::TaskCreated, None, None, now);
        task.apply(TaskEvent::Ready, HistoryKind::TaskReady, None, now)?;
        Ok(task)
    }

    /// The step being worked on, if any.
    pub fn current(&self) -> Option<&Step> {
        self.current_step.and_then(|i| self.steps.get(i))
    }

    /// A reference to the current step, for checkpoints and receipts.
    pub fn current_ref(&self) -> Option<StepRef> {
        let index = self.current_step?;
        let step = self.steps.get(index)?;
        Some(StepRef {
            index,
            name: step.name.clone(),
            attempt: step.attempt,
        })
    }

    /// The first step that is not done.
    pub fn next_step(&self) -> Option<(usize, &Step)> {
        self.steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.status != StepStatus::Done)
    }

    /// Keeps `certificate` (of the key that signs a receipt being added), unless the task holds
    /// it already; `None` — an unsigned receipt — changes nothing.
    pub fn certify(&mut self, certificate: Option<&KeyCertificate>) {
        if let Some(certificate) = certificate
            && !self.certificates.contains(certificate)
        {
            self.certificates.push(certificate.clone());
        }
    }

    /// The receipt with this id.
    pub fn receipt(&self, id: &str) -> Option<&Receipt> {
        self.receipts.iter().find(|r| r.id == id)
    }

    /// Appends a history entry without changing the state.
    pub fn record(
        &mut self,
        kind: HistoryKind,
        step: Option<String>,
        detail: Option<String>,
        now: Timestamp,
    ) {
        self.history.push(HistoryEntry {
            at: now,
            kind,
            state: self.state,
            step,
            detail,
        });
        self.history_len += 1;
        self.updated_at = now;
    }

    /// A task read from a version 1 `hook.json` as version 2 holds it in memory: every entry of
    /// its history counted (all of them still in [`Task::history`], for the next update to
    /// store), and the command of a running validation taken from it.
    pub fn upgrade_from_v1(&mut self) {
        self.history_len = self.history.len() as u64;
        if self.state == TaskState::StepValidating {
            self.validating = (self.history.iter().rev())
                .find(|h| h.kind == HistoryKind::ValidationStarted)
                .and_then(|h| h.detail.clone());
        }
    }

    /// Moves through the state machine and records it.
    fn apply(
        &mut self,
        event: TaskEvent,
        kind: HistoryKind,
        detail: Option<String>,
        now: Timestamp,
    ) -> Result<(), TaskError> {
        self.state = transition(self.state, event)?;
        if self.state != TaskState::StepValidating {
            self.validating = None;
        }
        let step = self.current().map(|s| s.name.clone());
        self.record(kind, step, detail, now);
        Ok(())
    }

    /// Starts (or resumes) a step: `name`, or the first step not done. Steps run in order; a
    /// step that is done is refused.
    pub fn start_step(&mut self, name: Option<&str>, now: Timestamp) -> Result<(), TaskError> {
        transition(self.state, TaskEvent::StartStep)?;
        let Some((first, next)) = self.next_step() else {
            return Err(TaskError::AllDone);
        };
        let index = match name {
            None => first,
            Some(name) => {
                let index = self.index_of(name)?;
                if self.steps[index].status == StepStatus::Done {
                    return Err(TaskError::AlreadyDone(name.to_owned()));
                }
                if index != first {
                    return Err(TaskError::OutOfOrder {
                        step: name.to_owned(),
                        first: next.name.clone(),
                    });
                }
                index
            }
        };
        let resuming = self.steps[index].status == StepStatus::Running;
        let step = &mut self.steps[index];
        if !resuming {
            step.attempt += 1;
            step.started_at = Some(now);
            step.validated_by = None;
            step.files.clear();
        }
        step.status = StepStatus::Running;
        self.current_step = Some(index);
        self.recovery = None;
        let detail = resuming.then(|| "resumed".to_owned());
        self.apply(TaskEvent::StartStep, HistoryKind::StepStarted, detail, now)
    }

    fn index_of(&self, name: &str) -> Result<usize, TaskError> {
        self.steps
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| TaskError::UnknownStep(name.to_owned()))
    }

    /// Checks that `name` (when given) is the current step.
    pub fn check_current(&self, name: Option<&str>) -> Result<(), TaskError> {
        match (name, self.current()) {
            (Some(name), current) if current.is_none_or(|s| s.name != name) => {
                self.index_of(name)?;
                Err(TaskError::NotCurrent {
                    step: name.to_owned(),
                    current: current.map_or_else(|| "none".to_owned(), |s| s.name.clone()),
                })
            }
            _ => Ok(()),
        }
    }

    /// Sets what is being worked on in the current step.
    pub fn note(&mut self, note: Option<String>) {
        if let (Some(note), Some(i)) = (note, self.current_step) {
            self.steps[i].doing = Some(note);
        }
    }

    /// A validation command starts in the current step.
    pub fn start_validation(&mut self, command: &str, now: Timestamp) -> Result<(), TaskError> {
        self.apply(
            TaskEvent::StartValidation,
            HistoryKind::ValidationStarted,
            Some(command.to_owned()),
            now,
        )?;
        self.validating = Some(command.to_owned());
        Ok(())
    }

    /// The validation that started ended with `receipt`.
    pub fn finish_validation(
        &mut self,
        receipt: Receipt,
        passed: bool,
        command: &str,
        now: Timestamp,
    ) -> Result<(), TaskError> {
        let (event, kind) = if passed {
            (TaskEvent::ValidationPassed, HistoryKind::ValidationPassed)
        } else {
            (TaskEvent::ValidationFailed, HistoryKind::ValidationFailed)
        };
        let detail = format!("{command} (receipt {})", receipt.id);
        self.apply(event, kind, Some(detail), now)?;
        if let Some(i) = self.current_step {
            let step = &mut self.steps[i];
            step.receipts.push(receipt.id.clone());
            // The declared command validates a step that has one; any passing validation
            // validates a step that has none.
            if passed
                && step
                    .validate
                    .as_deref()
                    .is_none_or(|declared| declared == command)
            {
                step.validated_by = Some(receipt.id.clone());
            }
        }
        self.receipts.push(receipt);
        Ok(())
    }

    /// Adds a receipt that is not part of a validation (the gate's test runs).
    pub fn add_receipt(&mut self, receipt: Receipt, detail: String, now: Timestamp) {
        let step = self.current().map(|s| s.name.clone());
        if let (Some(i), true) = (self.current_step, self.state == TaskState::StepRunning) {
            self.steps[i].receipts.push(receipt.id.clone());
        }
        self.receipts.push(receipt);
        self.record(HistoryKind::GateRun, step, Some(detail), now);
    }

    /// The current step is done; a step with a validation needs a passing receipt first.
    pub fn finish_step(&mut self, note: Option<String>, now: Timestamp) -> Result<(), TaskError> {
        transition(self.state, TaskEvent::StepDone)?;
        if let Some(step) = self.current()
            && let Some(command) = &step.validate
            && step.validated_by.is_none()
        {
            return Err(TaskError::NotValidated {
                step: step.name.clone(),
                command: command.clone(),
            });
        }
        self.note(note.clone());
        if let Some(i) = self.current_step {
            self.steps[i].status = StepStatus::Done;
            self.steps[i].finished_at = Some(now);
        }
        self.apply(TaskEvent::StepDone, HistoryKind::StepDone, note, now)
    }

    /// The current step failed; after [`MAX_ATTEMPTS`] failures a human is asked.
    pub fn fail_step(&mut self, note: Option<String>, now: Timestamp) -> Result<(), TaskError> {
        self.apply(
            TaskEvent::StepFailed,
            HistoryKind::StepFailed,
            note.clone(),
            now,
        )?;
        let Some(i) = self.current_step else {
            return Ok(());
        };
        let step = &mut self.steps[i];
        step.status = StepStatus::Pending;
        step.failures += 1;
        if let Some(note) = note {
            step.doing = Some(note);
        }
        if step.failures >= MAX_ATTEMPTS {
            let detail = format!("{} failed {} times", step.name, step.failures);
            self.apply(
                TaskEvent::AskHuman,
                HistoryKind::AskedHuman,
                Some(detail),
                now,
            )?;
        }
        Ok(())
    }

    /// Every step is done: the task is completed.
    pub fn complete(&mut self, now: Timestamp) -> Result<(), TaskError> {
        transition(self.state, TaskEvent::Complete)?;
        let left = self
            .steps
            .iter()
            .filter(|s| s.status != StepStatus::Done)
            .count();
        if left > 0 {
            return Err(TaskError::StepsLeft(left));
        }
        self.apply(TaskEvent::Complete, HistoryKind::TaskCompleted, None, now)
    }

    /// The task failed.
    pub fn fail(&mut self, note: Option<String>, now: Timestamp) -> Result<(), TaskError> {
        self.apply(TaskEvent::Fail, HistoryKind::TaskFailed, note, now)
    }

    /// The task is given up.
    pub fn abandon(&mut self, note: Option<String>, now: Timestamp) -> Result<(), TaskError> {
        self.apply(TaskEvent::Abandon, HistoryKind::TaskAbandoned, note, now)
    }

    /// A crash was detected: `recovery` says what to do; the task is now `recovering`.
    pub fn crashed(&mut self, recovery: Recovery, now: Timestamp) -> Result<(), TaskError> {
        let detail = format!(
            "{}; {}",
            recovery.kind.describe(),
            recovery.action.describe()
        );
        self.apply(
            TaskEvent::Crash,
            HistoryKind::CrashDetected,
            Some(detail),
            now,
        )?;
        self.recovery = Some(recovery);
        Ok(())
    }

    /// Adds a checkpoint, keeping at most `max` (oldest pruned), and records it.
    pub fn add_checkpoint(&mut self, mut checkpoint: Checkpoint, max: usize) -> u64 {
        checkpoint.id = self.next_checkpoint;
        self.next_checkpoint += 1;
        let detail = match &checkpoint.message {
            Some(message) => format!(
                "#{} {}: {message}",
                checkpoint.id,
                checkpoint.trigger.name()
            ),
            None => format!("#{} {}", checkpoint.id, checkpoint.trigger.name()),
        };
        let step = checkpoint.step.as_ref().map(|s| s.name.clone());
        let at = checkpoint.at;
        let id = checkpoint.id;
        if let Some(i) = self.current_step {
            for file in &mut self.steps[i].files {
                file.changed_since_checkpoint = false;
            }
        }
        self.checkpoints.push(checkpoint);
        let excess = self.checkpoints.len().saturating_sub(max.max(1));
        self.checkpoints.drain(..excess);
        self.record(HistoryKind::Checkpoint, step, Some(detail), at);
        id
    }

    /// The last checkpoint taken during the current attempt at the current step.
    pub fn last_step_checkpoint(&self) -> Option<&Checkpoint> {
        let current = self.current_ref()?;
        self.checkpoints
            .iter()
            .rev()
            .find(|c| c.step.as_ref() == Some(&current))
    }

    /// Adds `paths` to the current step's files (kept sorted, without repeats).
    pub fn touch_files(&mut self, paths: &[String]) {
        let Some(i) = self.current_step else {
            return;
        };
        if self.steps[i].status != StepStatus::Running {
            return;
        }
        let files = &mut self.steps[i].files;
        let known: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let mut fresh: Vec<&String> = paths
            .iter()
            .filter(|p| !known.contains(p.as_str()))
            .collect();
        fresh.sort_unstable();
        fresh.dedup();
        files.extend(fresh.into_iter().map(|path| TouchedFile {
            path: path.clone(),
            changed_since_checkpoint: false,
        }));
        files.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// A receipt is checked against the task that holds it (its id and its key certificates), so
/// the check lives here, beside [`Task`].
impl Receipt {
    /// Checks the receipt belongs to `task`, is consistent and correctly signed, and that its key
    /// is certified in `task` for `task` by a `trusted` master key (or is one).
    pub fn check(&self, task: &Task, trusted: &TrustedKeys) -> ReceiptCheck {
        self.check_in(&task.id, &task.certificates, trusted)
    }

    /// [`Receipt::check`] against the task `task_id`, which holds `certificates`.
    pub fn check_in(
        &self,
        task_id: &str,
        certificates: &[KeyCertificate],
        trusted: &TrustedKeys,
    ) -> ReceiptCheck {
        let invalid = ReceiptCheck::invalid;
        let Ok(payload) = self.parsed() else {
            return invalid("payload is not a receipt");
        };
        if payload.id != self.id {
            return invalid("id differs from the signed id");
        }
        if payload.task_id != task_id {
            return invalid("signed for another task");
        }
        if payload.version != RECEIPT_VERSION {
            return invalid("unknown receipt version");
        }
        let (signature, public_key) = match (&self.signature, &self.public_key) {
            (None, None) => return ReceiptCheck::Unsigned,
            (Some(signature), Some(public_key)) => (signature, public_key),
            _ => return invalid("signature or public key missing"),
        };
        let (Some(signature), Some(public_key)) = (unhex::<64>(signature), unhex::<32>(public_key))
        else {
            return invalid("malformed signature or public key");
        };
        let Ok(key) = VerifyingKey::from_bytes(&public_key) else {
            return invalid("malformed public key");
        };
        let signature = Signature::from_bytes(&signature);
        if key
            .verify_strict(self.payload.as_bytes(), &signature)
            .is_err()
        {
            return invalid("signature does not match");
        }
        if let Some(name) = trusted.name_of(&public_key) {
            return ReceiptCheck::Verified {
                signer: name.to_owned(),
            };
        }
        let Some(certificate) =
            (certificates.iter()).find(|c| unhex::<32>(&c.task_key) == Some(public_key))
        else {
            return invalid("missing certificate: the task holds none for its key");
        };
        if certificate.task_id != task_id {
            return invalid("the certificate of its key is for another task");
        }
        let Some(master) = certificate.verify() else {
            return invalid("the certificate of its key does not verify");
        };
        match trusted.name_of(&master) {
            Some(name) => ReceiptCheck::Verified {
                signer: name.to_owned(),
            },
            None => ReceiptCheck::UnknownKey { key: hex(&master) },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::journal::checkpoint::Trigger;
    use crate::journal::receipt::tests::payload;
    use crate::outcome::TestStatus;
    use proptest::prelude::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    pub(crate) fn specs(names: &[(&str, Option<&str>)]) -> Vec<StepSpec> {
        names
            .iter()
            .map(|(name, validate)| StepSpec {
                name: (*name).to_owned(),
                validate: validate.map(str::to_owned),
            })
            .collect()
    }

    fn task() -> Task {
        Task::new(
            "t1".into(),
            "demo".into(),
            specs(&[("plan", None), ("test", Some("make test"))]),
            at(0),
        )
        .unwrap()
    }

    fn receipt(id: &str, status: TestStatus) -> Receipt {
        let mut p = payload("t1", status);
        p.id = id.into();
        Receipt::new(&p, None)
    }

    #[test]
    fn new_tasks_are_pending_and_step_names_are_checked() {
        let t = task();
        assert_eq!(t.state, TaskState::StepPending);
        let kinds: Vec<_> = t.history.iter().map(|h| h.kind).collect();
        assert_eq!(kinds, [HistoryKind::TaskCreated, HistoryKind::TaskReady]);
        let new = |names: &[(&str, Option<&str>)]| {
            Task::new("t".into(), "n".into(), specs(names), at(0)).unwrap_err()
        };
        assert_eq!(new(&[]), TaskError::NoSteps);
        assert_eq!(
            new(&[("a", None), ("a", None)]),
            TaskError::BadStepName("a".into())
        );
        assert_eq!(new(&[(" ", None)]), TaskError::BadStepName(" ".into()));
        assert_eq!(new(&[("a,b", None)]), TaskError::BadStepName("a,b".into()));
    }

    #[test]
    fn steps_run_in_order_and_validation_gates_done() {
        let mut t = task();
        assert_eq!(
            t.start_step(Some("test"), at(1)),
            Err(TaskError::OutOfOrder {
                step: "test".into(),
                first: "plan".into()
            })
        );
        t.start_step(None, at(1)).unwrap();
        t.finish_step(Some("planned".into()), at(2)).unwrap();
        assert_eq!(
            t.start_step(Some("plan"), at(3)),
            Err(TaskError::AlreadyDone("plan".into()))
        );
        t.start_step(Some("test"), at(3)).unwrap();
        assert_eq!(
            t.finish_step(None, at(4)),
            Err(TaskError::NotValidated {
                step: "test".into(),
                command: "make test".into()
            })
        );
        t.start_validation("make test", at(4)).unwrap();
        assert_eq!(t.state, TaskState::StepValidating);
        t.finish_validation(receipt("r1", TestStatus::Failed), false, "make test", at(5))
            .unwrap();
        assert!(t.finish_step(None, at(5)).is_err());
        t.start_validation("make test", at(6)).unwrap();
        t.finish_validation(receipt("r2", TestStatus::Passed), true, "make test", at(7))
            .unwrap();
        t.finish_step(None, at(8)).unwrap();
        assert_eq!(t.steps[1].validated_by.as_deref(), Some("r2"));
        assert_eq!(t.steps[1].receipts, ["r1", "r2"]);
        t.complete(at(9)).unwrap();
        assert_eq!(t.state, TaskState::Completed);
        assert_eq!(t.updated_at, at(9));
    }

    #[test]
    fn any_passing_validation_validates_a_step_that_declares_none() {
        let mut t = task();
        t.start_step(None, at(1)).unwrap();
        for (id, status, passed) in [
            ("r1", TestStatus::Passed, true),
            ("r2", TestStatus::Failed, false),
        ] {
            t.start_validation("pytest -q", at(2)).unwrap();
            t.finish_validation(receipt(id, status), passed, "pytest -q", at(3))
                .unwrap();
        }
        assert_eq!(t.steps[0].validated_by.as_deref(), Some("r1"));
        t.finish_step(None, at(4)).unwrap();
        t.start_step(None, at(5)).unwrap();
        t.start_validation("pytest -q", at(6)).unwrap();
        t.finish_validation(receipt("r3", TestStatus::Passed), true, "pytest -q", at(7))
            .unwrap();
        assert_eq!(
            t.steps[1].validated_by, None,
            "not the declared `make test`"
        );
    }

    #[test]
    fn completing_early_and_repeated_failures() {
        let mut t = task();
        assert_eq!(t.complete(at(1)), Err(TaskError::StepsLeft(2)));
        for n in 1..=MAX_ATTEMPTS {
            t.start_step(None, at(1)).unwrap();
            assert_eq!(t.steps[0].attempt, n);
            t.fail_step(Some(format!("try {n}")), at(2)).unwrap();
        }
        assert_eq!(t.state, TaskState::AwaitingHuman);
        assert_eq!(t.steps[0].doing.as_deref(), Some("try 3"));
        t.start_step(None, at(3)).unwrap();
        assert_eq!(t.steps[0].attempt, MAX_ATTEMPTS + 1);
    }

    #[test]
    fn checkpoints_are_pruned_to_the_maximum() {
        let mut t = task();
        t.start_step(None, at(1)).unwrap();
        for i in 0..7 {
            let c = Checkpoint {
                id: 0,
                trigger: Trigger::Manual,
                at: at(10 + i),
                step: t.current_ref(),
                vcs: None,
                files: Vec::new(),
                more_files: 0,
                message: Some(format!("m{i}")),
            };
            t.add_checkpoint(c, 5);
        }
        let ids: Vec<u64> = t.checkpoints.iter().map(|c| c.id).collect();
        assert_eq!(ids, [3, 4, 5, 6, 7]);
        assert_eq!(t.last_step_checkpoint().unwrap().id, 7);
        let logged = t
            .history
            .iter()
            .filter(|h| h.kind == HistoryKind::Checkpoint);
        assert_eq!(logged.count(), 7);
    }

    /// One operation a driver may attempt.
    #[derive(Debug, Clone)]
    enum Op {
        Start(Option<usize>),
        Validate(bool),
        Done,
        FailStep,
        Complete,
        Fail,
        Abandon,
        Checkpoint,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            prop::option::of(0..4usize).prop_map(Op::Start),
            any::<bool>().prop_map(Op::Validate),
            Just(Op::Done),
            Just(Op::FailStep),
            Just(Op::Complete),
            Just(Op::Fail),
            Just(Op::Abandon),
            Just(Op::Checkpoint),
        ]
    }

    const NAMES: [&str; 4] = ["plan", "build", "test", "nope"];

    fn run(t: &mut Task, op: &Op, now: Timestamp) -> Result<(), TaskError> {
        match op {
            Op::Start(i) => t.start_step(i.map(|i| NAMES[i]), now),
            Op::Validate(pass) => {
                let command = t
                    .current()
                    .and_then(|s| s.validate.clone())
                    .unwrap_or_default();
                t.start_validation(&command, now)?;
                let status = if *pass {
                    TestStatus::Passed
                } else {
                    TestStatus::Failed
                };
                let id = format!("r{}", t.receipts.len());
                t.finish_validation(receipt(&id, status), *pass, &command, now)
            }
            Op::Done => t.finish_step(None, now),
            Op::FailStep => t.fail_step(None, now),
            Op::Complete => t.complete(now),
            Op::Fail => t.fail(None, now),
            Op::Abandon => t.abandon(None, now),
            Op::Checkpoint => {
                let c = Checkpoint {
                    id: 0,
                    trigger: Trigger::Manual,
                    at: now,
                    step: t.current_ref(),
                    vcs: None,
                    files: Vec::new(),
                    more_files: 0,
                    message: None,
                };
                t.add_checkpoint(c, 3);
                Ok(())
            }
        }
    }

    proptest! {
        /// The step's files are the sorted union of every batch touched, each path once.
        #[test]
        fn touched_files_are_the_sorted_union(
            batches in prop::collection::vec(prop::collection::vec("[a-d]{1,2}", 0..12), 0..5)
        ) {
            let mut t = task();
            t.start_step(None, at(1)).unwrap();
            for batch in &batches {
                t.touch_files(batch);
            }
            let mut want: Vec<&String> = batches.iter().flatten().collect();
            want.sort();
            want.dedup();
            let got: Vec<&String> = t.steps[0].files.iter().map(|f| &f.path).collect();
            prop_assert_eq!(got, want);
        }
    }

    proptest! {
        /// Over any sequence of operations: a refused operation changes nothing; an accepted one
        /// appends history and moves only along the state machine; done steps stay done and are
        /// a prefix of the step list; terminal states are final; the record survives JSON.
        #[test]
        fn any_sequence_keeps_the_invariants(ops in prop::collection::vec(op(), 0..60)) {
            let mut t = Task::new(
                "t1".into(),
                "p".into(),
                specs(&[("plan", None), ("build", Some("make")), ("test", None)]),
                at(0),
            ).unwrap();
            for (i, op) in ops.iter().enumerate() {
                let before = t.clone();
                match run(&mut t, op, at(i as i64 + 1)) {
                    Err(_) => prop_assert_eq!(&t, &before),
                    Ok(()) => {
                        prop_assert!(t.history.len() > before.history.len());
                        prop_assert_eq!(&t.history[..before.history.len()], &before.history[..]);
                        if before.state.is_terminal() {
                            prop_assert_eq!(t.state, before.state);
                        }
                    }
                }
                let done: Vec<bool> = t.steps.iter().map(|s| s.status == StepStatus::Done).collect();
                let before_done = before.steps.iter().filter(|s| s.status == StepStatus::Done).count();
                prop_assert!(done.iter().filter(|d| **d).count() >= before_done);
                prop_assert!(done.windows(2).all(|w| w[0] || !w[1]), "done steps are a prefix");
                prop_assert!(t.steps.iter().filter(|s| s.status == StepStatus::Running).count() <= 1);
                if t.state == TaskState::Completed {
                    prop_assert!(done.iter().all(|d| *d));
                }
                prop_assert!(t.checkpoints.len() <= 3);
                for pair in t.history.windows(2) {
                    if pair[1].state != pair[0].state {
                        let moved = TaskEvent::ALL
                            .into_iter()
                            .any(|e| transition(pair[0].state, e) == Ok(pair[1].state));
                        prop_assert!(moved, "{:?} -> {:?}", pair[0].state, pair[1].state);
                    }
                }
            }
            let json = serde_json::to_string(&t).unwrap();
            prop_assert_eq!(serde_json::from_str::<Task>(&json).unwrap(), t);
        }
    }
}
