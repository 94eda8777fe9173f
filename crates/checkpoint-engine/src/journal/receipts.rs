//! Receipts: signed records of validations and of the gate's own test runs, and whether the
//! gate may trust a cached pass.

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use serde::Deserialize;

use super::{Journal, JournalError, Validated, corrupt, known_schema, random_hex};
use crate::git;
use crate::runner::{self, Recorded};
use checkpoint_core::journal::{
    KeyCertificate, Receipt, ReceiptPayload, ReceiptSigner, ReceiptSource, Task, TaskKey,
    TaskState, Trigger, receipt,
};

impl Journal {
    /// Signs `payload` with task `task_id`'s key, or leaves it unsigned without one (`key` is
    /// what [`Journal::task_key`] gave).
    fn signed(payload: &ReceiptPayload, key: Option<&TaskKey>) -> Signed {
        let receipt = Receipt::new(payload, key.map(|k| &k.signer as &dyn ReceiptSigner));
        (receipt, key.map(|k| k.certificate.clone()))
    }

    /// Runs `command` as a validation of the current step of task `id` (or of `step`, which must
    /// be the current one), records a signed receipt and, when it passed, a checkpoint.
    pub fn validate(
        &self,
        id: &str,
        step: Option<&str>,
        command: &str,
        timeout: Duration,
    ) -> Result<Validated, JournalError> {
        let (key, unsigned_because) = self.task_key(id)?;
        let started = Timestamp::now();
        let (_, task) = self.update(id, |task| {
            task.check_current(step)?;
            task.start_validation(command, started)?;
            Ok(())
        })?;
        // Named before the run: what the command tested, not what it left behind.
        let tree = self.worktree_tree();
        let run = runner::run_recorded(command, &self.workdir, timeout);
        let ended = Timestamp::now();
        let payload = run_payload(
            &task,
            ReceiptSource::Validate,
            command,
            &run,
            (started, ended),
            None,
            tree,
        )?;
        let (receipt, certificate) = Journal::signed(&payload, key.as_ref());
        let passed = payload.passed();
        let seen = passed.then(|| self.observe());
        self.update(id, |task| {
            task.finish_validation(receipt.clone(), passed, command, ended)?;
            task.certify(certificate.as_ref());
            if let Some(seen) = &seen {
                self.take_checkpoint(task, seen, Trigger::Validation, Some(command.into()), ended);
            }
            Ok(())
        })?;
        Ok(Validated {
            run,
            receipt,
            passed,
            unsigned_because,
        })
    }

    /// The git tree id of the worktree now, as a receipt records it (see [`crate::git::tree`]);
    /// `None` outside git or when git cannot say.
    pub fn worktree_tree(&self) -> Option<String> {
        git::tree::worktree_tree(self.repo.as_ref()?).ok()
    }

    /// The tree a receipt of the gate's next run would record: [`Journal::worktree_tree`] while
    /// a task is active, `None` (nothing computed) otherwise, since only then is a receipt
    /// written. The gate asks before the run, so that files the tests create are not in it.
    pub fn tree_for_gate_receipt(&self) -> Option<String> {
        self.active_unfinished().ok().flatten()?;
        self.worktree_tree()
    }

    /// The receipt for one of the stop gate's own test runs, recorded in the active task (when
    /// there is an unfinished one) and returned. The gate calls this after a fresh run, with
    /// the run's test fingerprint and the tree it tested ([`Journal::tree_for_gate_receipt`]),
    /// and the commit the stop judged its change set from (`base`, see [`git::base`]).
    pub fn receipt_for_gate_run(
        &self,
        command: &str,
        run: &Recorded,
        tested: (&str, Option<String>),
        started: Timestamp,
        ended: Timestamp,
        base: Option<&str>,
    ) -> Result<Option<Receipt>, JournalError> {
        let (fingerprint, tree) = tested;
        let Some(id) = self.active_unfinished()? else {
            return Ok(None);
        };
        let (key, _) = self.task_key(&id)?;
        // The task is read once: the receipt names its current step as the transaction sees it.
        let updated = self.update(&id, |task| {
            if task.state.is_terminal() {
                return Ok(None);
            }
            let mut payload = run_payload(
                task,
                ReceiptSource::Gate,
                command,
                run,
                (started, ended),
                Some(fingerprint.to_owned()),
                tree,
            )?;
            payload.base = base.map(str::to_owned);
            let (receipt, certificate) = Journal::signed(&payload, key.as_ref());
            let verdict = if payload.passed() {
                "passed"
            } else {
                "did not pass"
            };
            let detail = format!("`{command}` {verdict} (receipt {})", receipt.id);
            task.add_receipt(receipt.clone(), detail, ended);
            task.certify(certificate.as_ref());
            Ok(Some(receipt))
        });
        match updated {
            Ok((receipt, _)) => Ok(receipt),
            Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the gate's cache may trust a cached pass of `command` on `fingerprint` instead
    /// of running the command again: always without an active unfinished task; with one, only
    /// when the task holds a passing receipt of it that verifies — task key, certificate,
    /// trusted master key. The task's `current.json` is asked first (it holds the latest pass of
    /// each command); `hook.json` is read only when that has none. An error trusts nothing.
    pub fn trusts_cached_pass(&self, command: &str, fingerprint: &str) -> bool {
        let id = match self.active_id() {
            Ok(Some(id)) => id,
            Ok(None) => return true,
            Err(_) => return false,
        };
        match self.sync_behind(&id).and_then(|()| self.current(&id)) {
            Err(JournalError::NoSuchTask(_)) => return true,
            Ok(c)
                if c.state.is_terminal()
                    || (self.trusted_pass(
                        &id,
                        &c.passes,
                        &c.certificates,
                        command,
                        fingerprint,
                    )) =>
            {
                return true;
            }
            // Unreadable, or not this pass (an older one may be): the task's receipts decide.
            Ok(_) | Err(_) => {}
        }
        let held = self
            .task_bytes(&id)
            .and_then(|(path, bytes)| parse_receipts(&path, &bytes));
        match held {
            Ok(held) if held.state.is_terminal() => true,
            Ok(held) => self.trusted_pass(
                &held.id,
                &held.receipts,
                &held.certificates,
                command,
                fingerprint,
            ),
            Err(JournalError::NoSuchTask(_)) => true,
            Err(_) => false,
        }
    }

    /// Whether `receipts` (of task `id`, which holds `certificates`) have a passing receipt of
    /// `command` on `fingerprint` that verifies.
    fn trusted_pass(
        &self,
        id: &str,
        receipts: &[Receipt],
        certificates: &[KeyCertificate],
        command: &str,
        fingerprint: &str,
    ) -> bool {
        let Ok((trusted, _)) = self.trusted_keys() else {
            return false;
        };
        receipts.iter().rev().any(|r| {
            r.parsed().is_ok_and(|p| {
                p.passed() && p.command == command && p.fingerprint.as_deref() == Some(fingerprint)
            }) && (r.check_in(id, certificates, &trusted)).is_verified()
        })
    }
}

/// What `signed` returns: a receipt, and the certificate of the key that signed it.
type Signed = (Receipt, Option<KeyCertificate>);

/// The receipt payload for one recorded run of `command` in `task`'s current step.
fn run_payload(
    task: &Task,
    source: ReceiptSource,
    command: &str,
    run: &Recorded,
    (started, ended): (Timestamp, Timestamp),
    fingerprint: Option<String>,
    tree: Option<String>,
) -> Result<ReceiptPayload, JournalError> {
    Ok(ReceiptPayload {
        version: receipt::RECEIPT_VERSION,
        id: new_receipt_id()?,
        task_id: task.id.clone(),
        step: task.current_ref(),
        source,
        command: command.to_owned(),
        status: run.outcome.status,
        exit_code: run.outcome.exit_code,
        started_at: started,
        ended_at: ended,
        duration_ms: run.outcome.duration_ms,
        stdout_sha256: run.stdout_sha256.clone(),
        stderr_sha256: run.stderr_sha256.clone(),
        fingerprint,
        tree,
        base: None,
    })
}

fn new_receipt_id() -> Result<String, JournalError> {
    Ok(format!("r-{}", random_hex(6)?))
}

/// What the gate's check of a cached pass reads of a task: its receipts and what they are checked
/// against. Its checkpoints and steps, most of `hook.json`, are skipped, not built.
#[derive(Deserialize)]
struct HeldReceipts {
    schema: u32,
    id: String,
    state: TaskState,
    receipts: Vec<Receipt>,
    #[serde(default)]
    certificates: Vec<KeyCertificate>,
}

/// The receipts `bytes` (read from `path`) hold.
fn parse_receipts(path: &Path, bytes: &[u8]) -> Result<HeldReceipts, JournalError> {
    let held: HeldReceipts = serde_json::from_slice(bytes).map_err(corrupt(path))?;
    known_schema(path, held.schema)?;
    Ok(held)
}
