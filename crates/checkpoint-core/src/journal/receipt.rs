//! Signed validation receipts: proof that a command ran, how it ended and what it printed.
//!
//! A [`Receipt`] stores the payload exactly as it was signed — a JSON text, kept as a string — with
//! the Ed25519 signature and the public key, both lowercase hex. Verification works on those
//! stored bytes and never re-serializes anything, so any changed byte makes it fail. The payload
//! names the task and the step, so a receipt cannot be moved to another task or step unnoticed.
//!
//! The key is the task's own ([`super::signing`]); it counts as proof only through a certificate,
//! held by the task, of a trusted master key for that task and that key. (A receipt signed
//! directly by a trusted master key, as receipts were before per-task keys, verifies too.)

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::checkpoint::StepRef;
use super::signing::ReceiptSigner;
use crate::hex::hex;
use crate::outcome::TestStatus;

/// The payload format version.
pub const RECEIPT_VERSION: u32 = 1;

/// The task id of a receipt made while no task was active: a stop gate's run, kept in the
/// session log that travels with the repository, its key derived and certified for this id
/// like a task's.
pub const NO_TASK: &str = "";

/// Who ran the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptSource {
    /// `checkpoint validate` or a step's validation command.
    Validate,
    /// The stop gate's own test run.
    Gate,
}

/// What a receipt attests, as signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptPayload {
    /// [`RECEIPT_VERSION`].
    pub version: u32,
    /// The receipt's id, unique within its task.
    pub id: String,
    /// The task it belongs to.
    pub task_id: String,
    /// The step it validated, if a step was running.
    pub step: Option<StepRef>,
    /// Who ran the command.
    pub source: ReceiptSource,
    /// The command, as given to `sh -c`.
    pub command: String,
    /// How it ended.
    pub status: TestStatus,
    /// The exit code; `None` when killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    pub ended_at: Timestamp,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// SHA-256 (hex) of all of stdout; `None` when nothing ran or the output was not kept apart.
    pub stdout_sha256: Option<String>,
    /// SHA-256 (hex) of all of stderr; `None` as for stdout.
    pub stderr_sha256: Option<String>,
    /// The gate's test fingerprint (changes + command) for gate runs.
    pub fingerprint: Option<String>,
    /// The git tree id of the tested state: `HEAD` plus the worktree's changes, untracked files
    /// that are not ignored included (the engine's `git::tree`); `None` outside git, when git
    /// could not say, and in receipts made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// For a gate run: the commit the stop's change set was judged from (the turn's base,
    /// or the merge base when history moved under the turn), so that a receipt says which
    /// commits of the turn its run covered; `None` for validations, background runs ahead of a
    /// stop, and receipts made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

impl ReceiptPayload {
    /// Whether the command passed.
    pub fn passed(&self) -> bool {
        self.status == TestStatus::Passed
    }
}

/// A stored receipt: the exact payload text, its signature and the signing public key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The receipt's id (repeated inside the payload).
    pub id: String,
    /// The signed JSON text of a [`ReceiptPayload`].
    pub payload: String,
    /// Ed25519 signature over the payload's bytes, lowercase hex; `None` when no key was usable.
    pub signature: Option<String>,
    /// The signer's raw public key, lowercase hex; `None` when unsigned.
    pub public_key: Option<String>,
}

/// What checking a receipt found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ReceiptCheck {
    /// The signature is good and its key is certified by (or is) a trusted master key.
    Verified {
        /// The trusted key's name: `you`, or a name from `allowed_signers`.
        signer: String,
    },
    /// The signatures are good but the certifying master key is not trusted here.
    UnknownKey {
        /// That master key, lowercase hex.
        key: String,
    },
    /// No key was usable when the receipt was made.
    Unsigned,
    /// Something was changed or does not fit: the reason says what failed.
    Invalid {
        /// What failed.
        reason: String,
    },
}

impl ReceiptCheck {
    /// Only [`ReceiptCheck::Verified`] counts as proof.
    pub fn is_verified(&self) -> bool {
        matches!(self, ReceiptCheck::Verified { .. })
    }

    pub(super) fn invalid(reason: &str) -> ReceiptCheck {
        ReceiptCheck::Invalid {
            reason: reason.to_owned(),
        }
    }
}

impl fmt::Display for ReceiptCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReceiptCheck::Verified { signer } => write!(f, "verified (signed by {signer})"),
            ReceiptCheck::UnknownKey { key } => write!(
                f,
                "UNTRUSTED: certified by unknown key {}… (not yours, not in allowed_signers)",
                &key[..key.len().min(16)]
            ),
            ReceiptCheck::Unsigned => f.write_str("UNSIGNED: no key signed it"),
            ReceiptCheck::Invalid { reason } => write!(f, "INVALID: {reason}"),
        }
    }
}

impl Receipt {
    /// Serializes `payload` once and signs those bytes; without a signer the receipt is unsigned.
    pub fn new(payload: &ReceiptPayload, signer: Option<&dyn ReceiptSigner>) -> Receipt {
        // Serializing a struct of strings, numbers and timestamps cannot fail.
        let text = serde_json::to_string(payload).unwrap_or_default();
        let (signature, public_key) = match signer {
            Some(signer) => (
                Some(hex(&signer.sign(text.as_bytes()))),
                Some(hex(&signer.public_key())),
            ),
            None => (None, None),
        };
        Receipt {
            id: payload.id.clone(),
            payload: text,
            signature,
            public_key,
        }
    }

    /// The payload, parsed from the stored text.
    pub fn parsed(&self) -> Result<ReceiptPayload, serde_json::Error> {
        serde_json::from_str(&self.payload)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::journal::signing::Ed25519Signer;
    use crate::journal::signing::{MasterKey, TaskKey, TrustedKeys};
    use crate::journal::task::Task;
    use crate::policy::KeyDerivation;

    pub(crate) fn payload(task_id: &str, status: TestStatus) -> ReceiptPayload {
        let at: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        ReceiptPayload {
            version: RECEIPT_VERSION,
            id: "r1".into(),
            task_id: task_id.into(),
            step: Some(StepRef {
                index: 0,
                name: "test".into(),
                attempt: 1,
            }),
            source: ReceiptSource::Validate,
            command: "python3 -m unittest -q \"a b\"".into(),
            status,
            exit_code: Some(0),
            started_at: at,
            ended_at: at,
            duration_ms: 120,
            stdout_sha256: Some(crate::hex::sha256_hex(b"")),
            stderr_sha256: Some(crate::hex::sha256_hex(b"OK\n")),
            fingerprint: None,
            tree: None,
            base: None,
        }
    }

    /// The master key of these tests, and a task `id` whose key it certified; receipts of the
    /// task are signed with the returned task key.
    fn certified_task(id: &str) -> (MasterKey, Task, TaskKey) {
        let master = MasterKey::from_seed(&[7; 32]);
        let mut task = Task::new(
            id.into(),
            "t".into(),
            crate::journal::task::tests::specs(&[("test", None)]),
            "2026-01-01T00:00:00Z".parse().unwrap(),
        )
        .unwrap();
        let key = master.task_key(id, &KeyDerivation::default());
        task.certify(Some(&key.certificate));
        (master, task, key)
    }

    fn trusting(key: [u8; 32]) -> TrustedKeys {
        let mut trusted = TrustedKeys::default();
        trusted.add("you", key);
        trusted
    }

    fn you() -> ReceiptCheck {
        ReceiptCheck::Verified {
            signer: "you".into(),
        }
    }

    #[test]
    fn a_receipt_verifies_through_its_task_certificate() {
        let (master, t1, key) = certified_task("t1");
        let trusted = trusting(master.public_key());
        let receipt = Receipt::new(&payload("t1", TestStatus::Passed), Some(&key.signer));
        assert!(receipt.parsed().unwrap().passed());
        assert_eq!(receipt.check(&t1, &trusted), you());
        assert_eq!(
            receipt.check(&t1, &TrustedKeys::default()),
            ReceiptCheck::UnknownKey {
                key: hex(&master.public_key())
            }
        );
        // Moved into another task, with or without that task's own certificate.
        let (_, t2, _) = certified_task("t2");
        assert_eq!(
            receipt.check(&t2, &trusted),
            ReceiptCheck::invalid("signed for another task")
        );
        let unsigned = Receipt::new(&payload("t1", TestStatus::Failed), None);
        assert_eq!(unsigned.check(&t1, &trusted), ReceiptCheck::Unsigned);
        // Signed directly by a trusted master key (receipts made before per-task keys).
        let legacy = Receipt::new(
            &payload("t1", TestStatus::Passed),
            Some(&Ed25519Signer::from_seed(&[7; 32])),
        );
        assert_eq!(legacy.check(&t1, &trusted), you());
    }

    #[test]
    fn certificates_must_exist_verify_and_name_the_task() {
        let (master, t1, key) = certified_task("t1");
        let trusted = trusting(master.public_key());
        let receipt = Receipt::new(&payload("t1", TestStatus::Passed), Some(&key.signer));

        let mut uncertified = t1.clone();
        uncertified.certificates.clear();
        assert_eq!(
            receipt.check(&uncertified, &trusted),
            ReceiptCheck::invalid("missing certificate: the task holds none for its key")
        );

        let mut forged = t1.clone();
        forged.certificates[0].signature = forged.certificates[0].signature.replace('a', "b");
        assert_eq!(
            receipt.check(&forged, &trusted),
            ReceiptCheck::invalid("the certificate of its key does not verify")
        );

        // A leaked task key signing for another task, with its own task's certificate.
        let (_, mut t2, _) = certified_task("t2");
        t2.certificates = t1.certificates.clone();
        let moved = Receipt::new(&payload("t2", TestStatus::Passed), Some(&key.signer));
        assert_eq!(
            moved.check(&t2, &trusted),
            ReceiptCheck::invalid("the certificate of its key is for another task")
        );
    }

    #[test]
    fn a_re_signed_payload_by_a_stranger_is_not_trusted() {
        let (master, mut t1, _) = certified_task("t1");
        let stranger = MasterKey::from_seed(&[9; 32]).task_key("t1", &KeyDerivation::default());
        t1.certify(Some(&stranger.certificate));
        let forged = Receipt::new(&payload("t1", TestStatus::Passed), Some(&stranger.signer));
        let check = forged.check(&t1, &trusting(master.public_key()));
        assert!(matches!(check, ReceiptCheck::UnknownKey { .. }), "{check}");
        assert!(
            check
                .to_string()
                .starts_with("UNTRUSTED: certified by unknown key ")
        );
    }

    /// Every byte of the stored receipt, changed in three ways each, is detected: either the JSON
    /// no longer reads as a receipt or the check fails.
    #[test]
    fn every_flipped_byte_is_detected() {
        let (master, task, key) = certified_task("t1");
        let trusted = trusting(master.public_key());
        let receipt = Receipt::new(&payload("t1", TestStatus::Passed), Some(&key.signer));
        let bytes = serde_json::to_vec(&receipt).unwrap();
        let mut flips = 0;
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x20, 0xff] {
                let mut tampered = bytes.clone();
                tampered[i] ^= mask;
                flips += 1;
                let detected = match serde_json::from_slice::<Receipt>(&tampered) {
                    Err(_) => true,
                    Ok(r) => !r.check(&task, &trusted).is_verified(),
                };
                assert!(
                    detected,
                    "flip {mask:#x} at byte {i} ({:?}) went unnoticed",
                    char::from(bytes[i])
                );
            }
        }
        assert_eq!(flips, 3 * bytes.len());
    }
}
