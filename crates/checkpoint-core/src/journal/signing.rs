//! Per-task signing keys, the master key's certificates of them, and the keys a verifier trusts.
//!
//! Each task's receipts are signed by a key of its own, derived from the master key along the
//! `[journal] key_derivation` path by SLIP-0010 hardened derivation for Ed25519: the master node
//! is HMAC-SHA512 keyed `"ed25519 seed"` over the master key's 32-byte secret, each child is
//! HMAC-SHA512 keyed with the parent's chain code over `0x00 ‖ parent key ‖ index` (big-endian,
//! hardened). The derivation is deterministic, so the task's secret key is never stored: it is
//! derived again whenever a receipt is signed.
//!
//! The master key certifies the task key with a [`KeyCertificate`] — an Ed25519 signature over a
//! domain-separated message naming the task id and the task's public key — kept in the task's
//! `hook.json`. A verifier therefore needs only master *public* keys ([`TrustedKeys`]): this
//! user's own, and those a project lists in `.checkpoint/allowed_signers`.
//!
//! The master key also signs the entries of the session continuity log directly
//! ([`EntrySignature`]), each kind under a domain of its own, so that a log fetched from a remote
//! is never taken for this user's own.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha512;
use zeroize::Zeroizing;

use crate::hex::{hex, unhex};
use crate::policy::{HARDENED, KeyDerivation};

/// Signs receipt payloads.
pub trait ReceiptSigner {
    /// The raw 32-byte Ed25519 public key that verifies this signer's signatures.
    fn public_key(&self) -> [u8; 32];
    /// The 64-byte Ed25519 signature of `payload`.
    fn sign(&self, payload: &[u8]) -> [u8; 64];
}

/// An Ed25519 key in memory.
pub struct Ed25519Signer(SigningKey);

impl Ed25519Signer {
    /// A signer from a 32-byte secret seed.
    pub fn from_seed(seed: &[u8; 32]) -> Ed25519Signer {
        Ed25519Signer(SigningKey::from_bytes(seed))
    }
}

impl ReceiptSigner for Ed25519Signer {
    fn public_key(&self) -> [u8; 32] {
        self.0.verifying_key().to_bytes()
    }

    fn sign(&self, payload: &[u8]) -> [u8; 64] {
        self.0.sign(payload).to_bytes()
    }
}

/// The first bytes of every message a certificate signs: no receipt payload (a JSON text)
/// starts with them, so a certificate can never be passed off as a receipt or the reverse.
const CERTIFICATE_DOMAIN: &[u8] = b"checkpoint task key certificate v1\0";

/// The master key: it derives and certifies the task keys.
pub struct MasterKey(SigningKey);

impl MasterKey {
    /// The master key with this 32-byte secret.
    pub fn from_seed(seed: &[u8; 32]) -> MasterKey {
        MasterKey(SigningKey::from_bytes(seed))
    }

    /// The master key that is `key` (e.g. one read from a PKCS#8 file).
    pub fn from_signing_key(key: SigningKey) -> MasterKey {
        MasterKey(key)
    }

    /// The raw public key: what `.checkpoint/allowed_signers` lists.
    pub fn public_key(&self) -> [u8; 32] {
        self.0.verifying_key().to_bytes()
    }

    /// This key's signature of a continuity entry of `kind` whose canonical bytes are `entry`
    /// (see [`EntrySignature`]).
    pub fn sign_entry(&self, kind: EntryKind, entry: &[u8]) -> EntrySignature {
        EntrySignature {
            key: hex(&self.public_key()),
            signature: hex(&self.0.sign(&entry_message(kind, entry)).to_bytes()),
        }
    }

    /// Task `task_id`'s key, derived along `derivation`, with this key's certificate of it.
    pub fn task_key(&self, task_id: &str, derivation: &KeyDerivation) -> TaskKey {
        let seed = slip10_ed25519(self.0.as_bytes(), &derivation.indices(task_id));
        let signer = Ed25519Signer::from_seed(&seed);
        let task_key = signer.public_key();
        let signature = self.0.sign(&certificate_message(task_id, &task_key));
        TaskKey {
            signer,
            certificate: KeyCertificate {
                task_id: task_id.to_owned(),
                task_key: hex(&task_key),
                master_key: hex(&self.public_key()),
                signature: hex(&signature.to_bytes()),
            },
        }
    }
}

/// Shows the public key only.
impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("MasterKey")
            .field(&hex(&self.public_key()))
            .finish()
    }
}

/// A task's signing key and the master key's certificate of it.
pub struct TaskKey {
    /// Signs the task's receipts.
    pub signer: Ed25519Signer,
    /// What the task must hold for its receipts to verify.
    pub certificate: KeyCertificate,
}

/// The master key's statement that `task_key` signs the receipts of task `task_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyCertificate {
    /// The task the key belongs to.
    pub task_id: String,
    /// The task's raw public key, lowercase hex.
    pub task_key: String,
    /// The certifying master public key, lowercase hex.
    pub master_key: String,
    /// The master key's Ed25519 signature of the task id and the task key, lowercase hex.
    pub signature: String,
}

impl KeyCertificate {
    /// The master public key, when the signature is good; `None` when anything is malformed or
    /// the signature does not match.
    pub fn verify(&self) -> Option<[u8; 32]> {
        let task_key = unhex::<32>(&self.task_key)?;
        let master = unhex::<32>(&self.master_key)?;
        let signature = Signature::from_bytes(&unhex::<64>(&self.signature)?);
        VerifyingKey::from_bytes(&master)
            .ok()?
            .verify_strict(&certificate_message(&self.task_id, &task_key), &signature)
            .ok()?;
        Some(master)
    }
}

/// `CERTIFICATE_DOMAIN ‖ len(task id) as u64 BE ‖ task id ‖ task key`: unambiguous for any id.
fn certificate_message(task_id: &str, task_key: &[u8; 32]) -> Vec<u8> {
    let id = task_id.as_bytes();
    let mut message = Vec::with_capacity(CERTIFICATE_DOMAIN.len() + 8 + id.len() + 32);
    message.extend_from_slice(CERTIFICATE_DOMAIN);
    message.extend_from_slice(&(id.len() as u64).to_be_bytes());
    message.extend_from_slice(id);
    message.extend_from_slice(task_key);
    message
}

/// What a continuity entry's signature is over: each kind signs under a domain of its own, which
/// no other kind, no [`KeyCertificate`] message and no receipt payload (a JSON text) starts
/// with — one can never be passed off as another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A session checkpoint of the continuity log.
    SessionCheckpoint,
    /// A progress entry of the continuity log.
    Progress,
    /// What one session's tool calls changed in its working tree (the engine's session store).
    SessionWork,
}

impl EntryKind {
    fn domain(self) -> &'static [u8] {
        match self {
            EntryKind::SessionCheckpoint => b"checkpoint continuity session checkpoint v1\0",
            EntryKind::Progress => b"checkpoint continuity progress entry v1\0",
            EntryKind::SessionWork => b"checkpoint session work v1\0",
        }
    }
}

/// A master key's signature of one continuity entry: which key signed it and how. What it signs
/// is the entry's kind's domain followed by the entry's canonical bytes (the caller's
/// serialization of the entry without its signature).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySignature {
    /// The signing master public key, lowercase hex.
    pub key: String,
    /// The Ed25519 signature, lowercase hex.
    pub signature: String,
}

impl EntrySignature {
    /// The master public key that signed `entry` as a `kind`, when this signature is good;
    /// `None` when anything is malformed or the signature does not match.
    pub fn verify(&self, kind: EntryKind, entry: &[u8]) -> Option<[u8; 32]> {
        let key = unhex::<32>(&self.key)?;
        let signature = Signature::from_bytes(&unhex::<64>(&self.signature)?);
        VerifyingKey::from_bytes(&key)
            .ok()?
            .verify_strict(&entry_message(kind, entry), &signature)
            .ok()?;
        Some(key)
    }
}

/// `kind`'s domain ‖ `entry`.
fn entry_message(kind: EntryKind, entry: &[u8]) -> Vec<u8> {
    [kind.domain(), entry].concat()
}

/// SLIP-0010 derivation for Ed25519: the 32-byte secret at `indices` (each hardened, with
/// [`HARDENED`] set) below the master node of `seed`.
pub(crate) fn slip10_ed25519(seed: &[u8], indices: &[u32]) -> Zeroizing<[u8; 32]> {
    let hmac = |key: &[u8], parts: &[&[u8]]| {
        // HMAC accepts keys of any length.
        let mut mac = Hmac::<Sha512>::new_from_slice(key).expect("HMAC takes any key length");
        for part in parts {
            mac.update(part);
        }
        let out = Zeroizing::new(<[u8; 64]>::from(mac.finalize().into_bytes()));
        let mut key = Zeroizing::new([0u8; 32]);
        let mut chain = Zeroizing::new([0u8; 32]);
        key.copy_from_slice(&out[..32]);
        chain.copy_from_slice(&out[32..]);
        (key, chain)
    };
    let (mut key, mut chain) = hmac(b"ed25519 seed", &[seed]);
    for &index in indices {
        debug_assert!(
            index & HARDENED != 0,
            "Ed25519 derives hardened children only"
        );
        (key, chain) = hmac(
            chain.as_slice(),
            &[&[0], key.as_slice(), &(index | HARDENED).to_be_bytes()],
        );
    }
    key
}

/// A master public key a verifier trusts, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    /// Who holds it: `you` for this user's own key, else the name `allowed_signers` gives.
    pub name: String,
    /// The raw Ed25519 public key.
    pub key: [u8; 32],
}

/// The master public keys receipts are checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedKeys(Vec<TrustedKey>);

impl TrustedKeys {
    /// Trusts `key` as `name` too (the first name given to a key is kept).
    pub fn add(&mut self, name: impl Into<String>, key: [u8; 32]) {
        if self.name_of(&key).is_none() {
            self.0.push(TrustedKey {
                name: name.into(),
                key,
            });
        }
    }

    /// The name of `key` when it is trusted.
    pub fn name_of(&self, key: &[u8; 32]) -> Option<&str> {
        self.0
            .iter()
            .find(|t| t.key == *key)
            .map(|t| t.name.as_str())
    }

    /// Whether no key is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names of the trusted keys, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|t| t.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SLIP-0010 "Test vector 1 for ed25519" (seed 000102…0f), hardened paths.
    #[test]
    fn derivation_matches_the_published_slip10_vectors() {
        let seed: Vec<u8> = (0u8..16).collect();
        let at = |path: &[u32]| {
            let indices: Vec<u32> = path.iter().map(|i| i | HARDENED).collect();
            hex(slip10_ed25519(&seed, &indices).as_slice())
        };
        assert_eq!(
            at(&[]),
            "2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7"
        );
        assert_eq!(
            at(&[0]),
            "68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3"
        );
        assert_eq!(
            at(&[0, 1]),
            "b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2"
        );
        assert_eq!(
            at(&[0, 1, 2]),
            "92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9"
        );
        assert_eq!(
            at(&[0, 1, 2, 2]),
            "30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662"
        );
        // And the public key of m/0H.
        let signer = Ed25519Signer::from_seed(&slip10_ed25519(&seed, &[HARDENED]));
        assert_eq!(
            hex(&signer.public_key()),
            "8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c"
        );
    }

    #[test]
    fn task_keys_are_deterministic_distinct_and_certified() {
        let master = MasterKey::from_seed(&[7; 32]);
        let path = KeyDerivation::default();
        let a = master.task_key("task-a", &path);
        let again = MasterKey::from_seed(&[7; 32]).task_key("task-a", &path);
        let b = master.task_key("task-b", &path);
        assert_eq!(a.signer.public_key(), again.signer.public_key());
        assert_eq!(a.certificate, again.certificate);
        assert_ne!(a.signer.public_key(), b.signer.public_key());
        assert_ne!(a.signer.public_key(), master.public_key());
        let other_path: KeyDerivation = "m/1'/{task}'".parse().unwrap();
        assert_ne!(
            master.task_key("task-a", &other_path).signer.public_key(),
            a.signer.public_key()
        );

        assert_eq!(a.certificate.task_key, hex(&a.signer.public_key()));
        assert_eq!(a.certificate.verify(), Some(master.public_key()));
        // The certificate binds the task id and the key.
        let moved = KeyCertificate {
            task_id: "task-b".into(),
            ..a.certificate.clone()
        };
        assert_eq!(moved.verify(), None);
        let swapped = KeyCertificate {
            task_key: b.certificate.task_key.clone(),
            ..a.certificate.clone()
        };
        assert_eq!(swapped.verify(), None);
    }

    #[test]
    fn an_entry_signature_binds_the_entry_its_kind_and_the_key() {
        let master = MasterKey::from_seed(&[7; 32]);
        let entry = br#"{"at":"2027-01-15T08:00:00Z","text":"schema done"}"#;
        let signature = master.sign_entry(EntryKind::Progress, entry);
        assert_eq!(signature.key, hex(&master.public_key()));
        assert_eq!(
            signature.verify(EntryKind::Progress, entry),
            Some(master.public_key())
        );
        // Any changed byte fails.
        for at in 0..entry.len() {
            let mut changed = entry.to_vec();
            changed[at] ^= 1;
            assert_eq!(
                signature.verify(EntryKind::Progress, &changed),
                None,
                "{at}"
            );
        }
        // Not as another kind of entry: the domains differ.
        assert_eq!(signature.verify(EntryKind::SessionCheckpoint, entry), None);
        // Not as another key's, even when it names that key.
        let other = MasterKey::from_seed(&[8; 32]);
        let claimed = EntrySignature {
            key: hex(&other.public_key()),
            ..signature.clone()
        };
        assert_eq!(claimed.verify(EntryKind::Progress, entry), None);
        let theirs = other.sign_entry(EntryKind::Progress, entry);
        assert_eq!(
            theirs.verify(EntryKind::Progress, entry),
            Some(other.public_key())
        );
        // Malformed hex is no signature.
        let garbage = EntrySignature {
            signature: "zz".into(),
            ..signature.clone()
        };
        assert_eq!(garbage.verify(EntryKind::Progress, entry), None);
        // And no domain is a prefix of another's, nor of a certificate's.
        let domains = [
            EntryKind::SessionCheckpoint.domain(),
            EntryKind::Progress.domain(),
            CERTIFICATE_DOMAIN,
        ];
        for (i, a) in domains.iter().enumerate() {
            for (j, b) in domains.iter().enumerate() {
                assert!(i == j || !b.starts_with(a), "{i} {j}");
            }
        }
    }

    #[test]
    fn a_trusted_key_keeps_its_first_name() {
        let mut trusted = TrustedKeys::default();
        assert!(trusted.is_empty());
        trusted.add("you", [1; 32]);
        trusted.add("alice", [1; 32]);
        trusted.add("bob", [2; 32]);
        assert_eq!(trusted.name_of(&[1; 32]), Some("you"));
        assert_eq!(trusted.name_of(&[2; 32]), Some("bob"));
        assert_eq!(trusted.name_of(&[3; 32]), None);
    }
}
