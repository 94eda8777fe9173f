//! Signed validation receipts: proof that a command ran, how it ended and what it printed.
//!
//! A [`Receipt`] stores the payload exactly as it was signed — a JSON text, kept as a string — with
//! the Ed25519 signature and the public key, both lowercase hex. Verification works on those
//! stored bytes and never re-serializes anything, so any changed byte makes it fail. The payload
//! names the task and the step, so a receipt cannot be moved to another task or step unnoticed.

use std::fmt;

use ed25519_dalek::{Signature, VerifyingKey};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::checkpoint::StepRef;
use super::keys::ReceiptSigner;
use crate::digest;
use crate::outcome::TestStatus;

/// The payload format version.
pub const RECEIPT_VERSION: u32 = 1;

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
#[serde(tag = "result", content = "reason", rename_all = "snake_case")]
pub enum ReceiptCheck {
    /// The signature is good and made by this machine's key.
    Verified,
    /// The signature is good but the key is not this machine's (or there is no local key).
    UnknownKey,
    /// No key was usable when the receipt was made.
    Unsigned,
    /// Something was changed: the reason says what failed.
    Invalid(String),
}

impl ReceiptCheck {
    /// Only [`ReceiptCheck::Verified`] counts as proof.
    pub fn is_verified(&self) -> bool {
        *self == ReceiptCheck::Verified
    }
}

impl fmt::Display for ReceiptCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReceiptCheck::Verified => f.write_str("verified"),
            ReceiptCheck::UnknownKey => f.write_str("signature valid, key not trusted here"),
            ReceiptCheck::Unsigned => f.write_str("unsigned"),
            ReceiptCheck::Invalid(reason) => write!(f, "INVALID: {reason}"),
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
                Some(digest::hex(&signer.sign(text.as_bytes()))),
                Some(digest::hex(&signer.public_key())),
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

    /// Checks the receipt belongs to `task_id`, is consistent and correctly signed, and whether
    /// its key is `trusted` (this machine's).
    pub fn check(&self, task_id: &str, trusted: Option<[u8; 32]>) -> ReceiptCheck {
        let invalid = |reason: &str| ReceiptCheck::Invalid(reason.to_owned());
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
        if trusted == Some(public_key) {
            ReceiptCheck::Verified
        } else {
            ReceiptCheck::UnknownKey
        }
    }
}

/// Decodes exactly `N` bytes of strict lowercase hex.
fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::journal::keys::Ed25519Signer;

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
            stdout_sha256: Some(digest::sha256_hex(b"")),
            stderr_sha256: Some(digest::sha256_hex(b"OK\n")),
            fingerprint: None,
        }
    }

    fn signer() -> Ed25519Signer {
        Ed25519Signer::from_seed(&[7; 32])
    }

    #[test]
    fn signed_receipt_verifies_against_its_own_key_only() {
        let signer = signer();
        let receipt = Receipt::new(&payload("t1", TestStatus::Passed), Some(&signer));
        assert!(receipt.parsed().unwrap().passed());
        let trusted = Some(signer.public_key());
        assert_eq!(receipt.check("t1", trusted), ReceiptCheck::Verified);
        assert_eq!(receipt.check("t1", None), ReceiptCheck::UnknownKey);
        assert_eq!(receipt.check("t1", Some([1; 32])), ReceiptCheck::UnknownKey);
        assert_eq!(
            receipt.check("t2", trusted),
            ReceiptCheck::Invalid("signed for another task".into())
        );
        let unsigned = Receipt::new(&payload("t1", TestStatus::Failed), None);
        assert_eq!(unsigned.check("t1", trusted), ReceiptCheck::Unsigned);
    }

    #[test]
    fn a_re_signed_payload_by_another_key_is_not_trusted() {
        let forged = Receipt::new(
            &payload("t1", TestStatus::Passed),
            Some(&Ed25519Signer::from_seed(&[9; 32])),
        );
        assert_eq!(
            forged.check("t1", Some(signer().public_key())),
            ReceiptCheck::UnknownKey
        );
    }

    /// Every byte of the stored receipt, changed in three ways each, is detected: either the JSON
    /// no longer reads as a receipt or the check fails.
    #[test]
    fn every_flipped_byte_is_detected() {
        let signer = signer();
        let trusted = Some(signer.public_key());
        let receipt = Receipt::new(&payload("t1", TestStatus::Passed), Some(&signer));
        let bytes = serde_json::to_vec(&receipt).unwrap();
        let mut flips = 0;
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x20, 0xff] {
                let mut tampered = bytes.clone();
                tampered[i] ^= mask;
                flips += 1;
                let detected = match serde_json::from_slice::<Receipt>(&tampered) {
                    Err(_) => true,
                    Ok(r) => !r.check("t1", trusted).is_verified(),
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

    #[test]
    fn hex_decoding_is_strict() {
        assert_eq!(unhex::<2>("0aff"), Some([0x0a, 0xff]));
        assert_eq!(unhex::<2>("0AFF"), None);
        assert_eq!(unhex::<2>("0af"), None);
        assert_eq!(unhex::<2>("0afg"), None);
    }
}
