//! The keys: a task's signing key, and the master keys its receipts are checked against.

use super::{Journal, JournalError, allowed_signers};
use checkpoint_core::journal::{TaskKey, TrustedKeys};

impl Journal {
    /// Task `task_id`'s signing key, derived from the master key along `[journal]
    /// key_derivation` (never stored: derived again each time): `Ok(None)` with the reason when
    /// no key directory is known; an unusable master key (insecure permissions, garbage) is an
    /// error.
    pub(super) fn task_key(&self, task_id: &str) -> Result<Signing, JournalError> {
        match &self.keys {
            Some(keys) => {
                let key = keys
                    .master()?
                    .task_key(task_id, &self.settings().key_derivation);
                Ok((Some(key), None))
            }
            None => Ok((
                None,
                Some("no config directory (set HOME or XDG_CONFIG_HOME) for a signing key".into()),
            )),
        }
    }

    /// This user's own master public key as the only trusted key, with a warning when there is
    /// none. Never fails: a missing or unusable key only means it cannot vouch for receipts.
    pub fn own_keys(&self) -> (TrustedKeys, Option<String>) {
        let mut trusted = TrustedKeys::default();
        let warning = match self.keys.as_ref().map(|k| k.master_public_key()) {
            Some(Ok(Some(key))) => {
                trusted.add("you", key);
                None
            }
            Some(Ok(None)) => Some("no signing key yet".to_owned()),
            Some(Err(e)) => Some(e.to_string()),
            None => Some("no config directory for a signing key".to_owned()),
        };
        (trusted, warning)
    }

    /// The master public keys receipts are checked against: this user's own and those the
    /// project lists in `.checkpoint/allowed_signers` ([`allowed_signers`]). The warning says why
    /// no key at all is trusted, when none is; a broken `allowed_signers` is an error.
    pub fn trusted_keys(&self) -> Result<(TrustedKeys, Option<String>), JournalError> {
        let (mut trusted, warning) = self.own_keys();
        for signer in allowed_signers::read(&self.workdir)? {
            trusted.add(signer.name, signer.key);
        }
        let warning = match warning {
            Some(why) if trusted.is_empty() => Some(format!(
                "{why} and no {}: receipts cannot be verified",
                allowed_signers::ALLOWED_SIGNERS
            )),
            _ => None,
        };
        Ok((trusted, warning))
    }
}

/// A task's signing key, or why its receipts go unsigned.
type Signing = (Option<TaskKey>, Option<String>);
