//! Receipts: signed records of validations and of the gate's own test runs, and whether the
//! gate may trust a cached pass.

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use serde::Deserialize;

use super::{Journal, JournalError, Validated, corrupt, known_schema, random_hex};
use crate::continuity::Continuity;
use crate::git;
use crate::runner::{self, Recorded};
use checkpoint_core::journal::receipt::NO_TASK;
use checkpoint_core::journal::{
    KeyCertificate, Receipt, ReceiptPayload, ReceiptSigner, ReceiptSource, StepRef, TaskKey,
    TaskState, Trigger, receipt,
};
use checkpoint_core::outcome::TestStatus;

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
            (&task.id, task.current_ref()),
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

    /// The session log of this worktree, where the receipts of gate runs without a task go.
    fn continuity(&self) -> Continuity {
        Continuity::new(&self.state_dir).in_repo(self.repo.clone())
    }

    /// The git tree id of the worktree now, as a receipt records it (see [`crate::git::tree`]);
    /// `None` outside git or when git cannot say.
    pub fn worktree_tree(&self) -> Option<String> {
        git::tree::worktree_tree(self.repo.as_ref()?).ok()
    }

    /// The receipt for one of the stop gate's own test runs, recorded in the active task (when
    /// there is an unfinished one) and returned; without one, a passing run's receipt is kept
    /// in the session log ([`Continuity::add_receipt`]), so that `verify` can answer for work
    /// done without a task too. The gate calls this after a fresh run, with the run's test
    /// fingerprint and the tree it tested ([`Journal::worktree_tree`], asked before the run),
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
        // The receipt of this run in task `task_id`'s step `step`, signed with `key`.
        let sign = |task_id: &str, step, key: Option<&TaskKey>| -> Result<Signed, JournalError> {
            let mut payload = run_payload(
                (task_id, step),
                ReceiptSource::Gate,
                command,
                run,
                (started, ended),
                Some(fingerprint.to_owned()),
                tree.clone(),
            )?;
            payload.base = base.map(str::to_owned);
            Ok(Journal::signed(&payload, key))
        };
        let Some(id) = self.active_unfinished()? else {
            if run.outcome.status != TestStatus::Passed {
                return Ok(None);
            }
            let (key, _) = self.task_key(NO_TASK)?;
            let (receipt, certificate) = sign(NO_TASK, None, key.as_ref())?;
            self.continuity()
                .add_receipt(receipt.clone(), certificate)?;
            return Ok(Some(receipt));
        };
        let (key, _) = self.task_key(&id)?;
        // The task is read once: the receipt names its current step as the transaction sees it.
        let updated = self.update(&id, |task| {
            if task.state.is_terminal() {
                return Ok(None);
            }
            let (receipt, certificate) = sign(&task.id, task.current_ref(), key.as_ref())?;
            let verdict = match run.outcome.status {
                TestStatus::Passed => "passed",
                _ => "did not pass",
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
    /// of running the command again: only when a passing receipt of it verifies — task key,
    /// certificate, trusted master key — held by the active unfinished task, or without one by
    /// the session log (a cache entry alone is a file anyone can write). Where no key can sign
    /// (no config directory, an unusable key file) there are no receipts, and the cache is
    /// trusted. The task's
    /// `current.json` is asked first (it holds the latest pass of each command); `hook.json` is
    /// read only when that has none. An error trusts nothing.
    pub fn trusts_cached_pass(&self, command: &str, fingerprint: &str) -> bool {
        let id = match self.active_id() {
            Ok(Some(id)) => id,
            Ok(None) => return self.trusts_pass_without_task(command, fingerprint),
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

    /// [`Journal::trusts_cached_pass`] while no task is active: the session log's receipts.
    fn trusts_pass_without_task(&self, command: &str, fingerprint: &str) -> bool {
        // No key can sign (no config directory, an unusable key file): there are no receipts.
        if !matches!(
            self.keys.as_ref().map(|k| k.master_public_key()),
            Some(Ok(_))
        ) {
            return true;
        }
        self.continuity().load().is_ok_and(|log| {
            self.trusted_pass(
                NO_TASK,
                &log.receipts,
                &log.certificates,
                command,
                fingerprint,
            )
        })
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

/// The receipt payload for one recorded run of `command` in task `task_id`'s step `step`.
fn run_payload(
    (task_id, step): (&str, Option<StepRef>),
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
        task_id: task_id.to_owned(),
        step,
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
