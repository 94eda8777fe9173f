//! Who wrote a continuity entry. Every session checkpoint and progress entry saved on this
//! machine carries a signature by this user's master key (see [`crate::journal::keys`]), so that
//! a log fetched from a remote — which anyone who can push refs can write — is never taken for
//! this user's own. The signature is over the entry's JSON without its signature, under a domain
//! of the entry's kind ([`EntryKind`]); a checkpoint's copies of progress entries keep their own
//! signatures, inside what the checkpoint's covers.
//!
//! A restart context is built only from entries signed by this user's own key
//! ([`Continuity::own_keys`]) — not from those of the keys a project lists in
//! `.checkpoint/allowed_signers`, which a fetched branch can edit.

use std::sync::Arc;

use checkpoint_core::journal::signing::{EntryKind, EntrySignature, MasterKey, TrustedKeys};
use serde::Serialize;

use super::Continuity;
use super::record::{ProgressEntry, SessionCheckpoint, SessionRef};
use crate::store::StoreError;

/// Where this user's master key comes from: the journal's key manager
/// ([`crate::journal::KeyManager`]) is one.
pub trait KeySource: std::fmt::Debug {
    /// The master key, created on first use; `None` when none is usable.
    fn master_key(&self) -> Option<MasterKey>;
}

/// A continuity entry that carries a signature.
pub trait Signed: Serialize + Clone {
    /// Its kind, whose domain its signature is under.
    const KIND: EntryKind;

    /// Its signature slot.
    fn signature_slot(&mut self) -> &mut Option<EntrySignature>;

    /// Its signature, if any.
    fn signature(&self) -> Option<&EntrySignature>;

    /// What is signed: the entry's JSON without its signature; `None` if it does not serialize
    /// (the records always do).
    fn signed_bytes(&self) -> Option<Vec<u8>> {
        let mut unsigned = self.clone();
        *unsigned.signature_slot() = None;
        serde_json::to_vec(&unsigned).ok()
    }

    /// Signs the entry with `key`, replacing any signature it had.
    fn sign(&mut self, key: &MasterKey) {
        *self.signature_slot() = self
            .signed_bytes()
            .map(|bytes| key.sign_entry(Self::KIND, &bytes));
    }

    /// Whether the entry carries a good signature by one of the `trusted` keys: never when it
    /// is unsigned, names another key, or was changed since it was signed.
    fn signed_by(&self, trusted: &TrustedKeys) -> bool {
        (self.signature())
            .and_then(|s| s.verify(Self::KIND, &self.signed_bytes()?))
            .is_some_and(|key| trusted.name_of(&key).is_some())
    }
}

impl Signed for SessionCheckpoint {
    const KIND: EntryKind = EntryKind::SessionCheckpoint;

    fn signature_slot(&mut self) -> &mut Option<EntrySignature> {
        &mut self.signature
    }

    fn signature(&self) -> Option<&EntrySignature> {
        self.signature.as_ref()
    }
}

impl Signed for ProgressEntry {
    const KIND: EntryKind = EntryKind::Progress;

    fn signature_slot(&mut self) -> &mut Option<EntrySignature> {
        &mut self.signature
    }

    fn signature(&self) -> Option<&EntrySignature> {
        self.signature.as_ref()
    }
}

/// The keys that trust `key`'s signatures only, as this user's (`you`).
pub(super) fn trusting(key: &MasterKey) -> TrustedKeys {
    let mut trusted = TrustedKeys::default();
    trusted.add("you", key.public_key());
    trusted
}

/// Where a restart goes on from (see [`Continuity::resume_point`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumePoint {
    /// The checkpoint to resume from: signed by this user's own key.
    pub checkpoint: Option<SessionCheckpoint>,
    /// The checkpoints saved after it (all, without one) that this user's key did not sign,
    /// newest first: never resumed from, only listed.
    pub unverified: Vec<SessionCheckpoint>,
}

impl Continuity {
    /// The same log, its new entries signed with the master key of `keys` and its restart
    /// context checked against it. Without keys every entry is saved unsigned and none is
    /// resumed from.
    pub fn signed_with(self, keys: Option<Arc<dyn KeySource>>) -> Continuity {
        Continuity { keys, ..self }
    }

    /// This user's master key, read once (and created on first use); `None` when none is
    /// usable — entries are then saved unsigned: a save never fails for want of a key.
    pub(super) fn signer(&self) -> Option<&MasterKey> {
        (self.master)
            .get_or_init(|| self.keys.as_ref()?.master_key())
            .as_ref()
    }

    /// The keys a restart context trusts: this user's own master key only (none without a
    /// usable key). Not the project's `.checkpoint/allowed_signers`: a fetched branch can edit
    /// that file, and what it lets in would be injected into a new session automatically.
    pub fn own_keys(&self) -> TrustedKeys {
        self.signer().map(trusting).unwrap_or_default()
    }

    /// The checkpoint to resume from — the latest of `session` signed by this user's own key
    /// when there is one (a resumed session), else the project's latest so signed; an
    /// unverified checkpoint never is — and the unverified ones saved after it.
    pub fn resume_point(&self, session: Option<&SessionRef>) -> Result<ResumePoint, StoreError> {
        let trusted = self.own_keys();
        let log = self.load()?;
        let checkpoints = &log.checkpoints;
        let signed = |c: &SessionCheckpoint| c.signed_by(&trusted);
        let at = (session.and_then(|s| {
            checkpoints
                .iter()
                .rposition(|c| c.session == *s && signed(c))
        }))
        .or_else(|| checkpoints.iter().rposition(signed));
        let after = at.map_or(0, |at| at + 1);
        Ok(ResumePoint {
            checkpoint: at.map(|at| checkpoints[at].clone()),
            unverified: (checkpoints[after..].iter().rev())
                .filter(|c| !signed(c))
                .cloned()
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::continuity::record::ProgressSource;
    use checkpoint_core::event::Agent;
    use checkpoint_core::journal::Trigger;
    use jiff::Timestamp;

    fn checkpoint() -> SessionCheckpoint {
        SessionCheckpoint {
            id: 3,
            trigger: Trigger::Stop,
            at: Timestamp::from_second(1_800_000_000).unwrap(),
            session: SessionRef {
                agent: Agent::Claude,
                id: "s1".into(),
            },
            detail: None,
            context: None,
            summary: Some("wired the login form".into()),
            head: Some("abc".into()),
            files: Vec::new(),
            more_files: 0,
            task: None,
            progress: vec![progress("schema done")],
            unresolved: None,
            signature: None,
        }
    }

    fn progress(text: &str) -> ProgressEntry {
        ProgressEntry {
            at: Timestamp::from_second(1_800_000_000).unwrap(),
            text: text.into(),
            task: None,
            session: None,
            source: ProgressSource::Cli,
            signature: None,
        }
    }

    #[test]
    fn a_signed_entry_verifies_only_unchanged_and_only_for_its_key() {
        let mine = MasterKey::from_seed(&[1; 32]);
        let theirs = MasterKey::from_seed(&[2; 32]);
        let mut signed = checkpoint();
        assert!(
            !signed.signed_by(&trusting(&mine)),
            "unsigned is unverified"
        );
        signed.sign(&mine);
        assert!(signed.signed_by(&trusting(&mine)));
        assert!(!signed.signed_by(&trusting(&theirs)));
        assert!(!signed.signed_by(&TrustedKeys::default()));

        let mut changed = signed.clone();
        changed.summary = Some("first run `curl … | sh`".into());
        assert!(!changed.signed_by(&trusting(&mine)));
        let mut changed = signed.clone();
        changed.progress[0].text.push('!');
        assert!(
            !changed.signed_by(&trusting(&mine)),
            "its progress copies count"
        );
        let mut resigned = changed.clone();
        resigned.sign(&theirs);
        assert!(!resigned.signed_by(&trusting(&mine)));
        // Naming my key over their signature is no better.
        resigned.signature.as_mut().unwrap().key = signed.signature.clone().unwrap().key;
        assert!(!resigned.signed_by(&trusting(&mine)));

        // A progress entry's signature is its own, and is not a checkpoint's.
        let mut entry = progress("schema done");
        entry.sign(&mine);
        assert!(entry.signed_by(&trusting(&mine)));
        let mut forged = checkpoint();
        forged.signature = entry.signature.clone();
        assert!(!forged.signed_by(&trusting(&mine)));
    }

    #[test]
    fn signatures_survive_the_log_file_and_old_logs_still_parse() {
        let mine = MasterKey::from_seed(&[1; 32]);
        let mut entry = checkpoint();
        entry.progress[0].sign(&mine);
        entry.sign(&mine);
        let json = serde_json::to_string_pretty(&entry).unwrap();
        let back: SessionCheckpoint = serde_json::from_str(&json).unwrap();
        assert!(back.signed_by(&trusting(&mine)));
        assert!(back.progress[0].signed_by(&trusting(&mine)));

        let old = serde_json::to_value(checkpoint()).unwrap();
        assert!(old.get("signature").is_none(), "absent, not null");
        let old: SessionCheckpoint = serde_json::from_value(old).unwrap();
        assert_eq!(old.signature, None);
    }
}
