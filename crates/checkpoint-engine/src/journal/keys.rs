//! The master key, from which every task's receipt-signing key is derived
//! ([`checkpoint_core::journal::signing`]).
//!
//! One Ed25519 key per user, created on first use at `<config dir>/keys/receipt-ed25519.pem`
//! (`$XDG_CONFIG_HOME/checkpoint/keys/`, else `~/.config/checkpoint/keys/`): PKCS#8 v1 PEM, which
//! OpenSSL reads too, mode 0600 in a 0700 directory. A key file that group or others may read is
//! refused, as ssh does. The key is written to a temporary file, fsynced and linked into place
//! without replacing anything, so two processes creating it at once end up with the same key.

use std::fs::{self, DirBuilder, File};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey, KeypairBytes};
use zeroize::Zeroizing;

use crate::continuity::KeySource;
use crate::store;
use checkpoint_core::journal::signing::MasterKey;

/// The key file's name inside the keys directory.
pub const KEY_FILE: &str = "receipt-ed25519.pem";

/// Why the key could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Reading, writing or creating the key failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The key file may be read by group or others.
    #[error("{}: key file is accessible by group or others (mode {mode:o}); refusing to use it", path.display())]
    Insecure {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The key file is not an Ed25519 PKCS#8 PEM key.
    #[error("{}: not an Ed25519 PKCS#8 key: {reason}", path.display())]
    Malformed {
        /// The key file.
        path: PathBuf,
        /// What the decoder said.
        reason: String,
    },
    /// The operating system's random source failed.
    #[error("cannot generate a key: {0}")]
    Random(String),
}

/// Finds, creates and loads the master key.
pub trait KeyManager: std::fmt::Debug {
    /// The master key, creating it on first use.
    fn master(&self) -> Result<MasterKey, KeyError>;
    /// This user's master public key; `Ok(None)` when no key exists yet. Never creates a key.
    fn master_public_key(&self) -> Result<Option<[u8; 32]>, KeyError>;
}

/// The key file under a keys directory.
#[derive(Debug, Clone)]
pub struct FileKeyManager {
    dir: PathBuf,
}

impl FileKeyManager {
    /// Keys kept in `dir` (created 0700 on first use).
    pub fn new(dir: PathBuf) -> FileKeyManager {
        FileKeyManager { dir }
    }

    /// Keys next to the user config file, in `<its directory>/keys/`; `None` when no config
    /// directory is known (neither `XDG_CONFIG_HOME` nor `HOME` is set).
    pub fn beside_user_config(user_config: Option<&Path>) -> Option<FileKeyManager> {
        let dir = user_config?.parent()?.join("keys");
        Some(FileKeyManager::new(dir))
    }

    /// The key file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(KEY_FILE)
    }

    fn load(&self) -> Result<Option<SigningKey>, KeyError> {
        let path = self.path();
        let io_err = |source| KeyError::Io {
            path: path.clone(),
            source,
        };
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(e)),
        };
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyError::Insecure { path, mode });
        }
        let pem = Zeroizing::new(fs::read_to_string(&path).map_err(io_err)?);
        SigningKey::from_pkcs8_pem(&pem)
            .map(Some)
            .map_err(|e| KeyError::Malformed {
                path: path.clone(),
                reason: e.to_string(),
            })
    }

    fn create(&self) -> Result<SigningKey, KeyError> {
        let dir_err = |source| KeyError::Io {
            path: self.dir.clone(),
            source,
        };
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(dir_err)?;
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(seed.as_mut()).map_err(|e| KeyError::Random(e.to_string()))?;
        let pem = KeypairBytes {
            secret_key: *seed,
            public_key: None,
        }
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| KeyError::Random(e.to_string()))?;
        // The temporary file is created 0600; linking it into place never replaces a key another
        // process created meanwhile.
        let mut tmp = store::temp_file_in(&self.dir).map_err(dir_err)?;
        tmp.write_all(pem.as_bytes()).map_err(dir_err)?;
        tmp.as_file().sync_all().map_err(dir_err)?;
        match tmp.persist_noclobber(self.path()) {
            Ok(_) => {}
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(dir_err(e.error)),
        }
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(dir_err)?;
        self.load()?.ok_or_else(|| {
            dir_err(io::Error::new(
                io::ErrorKind::NotFound,
                "the new key vanished",
            ))
        })
    }
}

impl KeyManager for FileKeyManager {
    fn master(&self) -> Result<MasterKey, KeyError> {
        let key = match self.load()? {
            Some(key) => key,
            None => self.create()?,
        };
        Ok(MasterKey::from_signing_key(key))
    }

    fn master_public_key(&self) -> Result<Option<[u8; 32]>, KeyError> {
        Ok(self.load()?.map(|key| key.verifying_key().to_bytes()))
    }
}

/// Signs the continuity log's entries with the master key.
impl<K: KeyManager + ?Sized> KeySource for K {
    fn master_key(&self) -> Option<MasterKey> {
        self.master().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_created_once_with_tight_permissions() {
        let home = tempfile::tempdir().unwrap();
        let keys = FileKeyManager::new(home.path().join("checkpoint/keys"));
        assert_eq!(keys.master_public_key().unwrap(), None);
        let signer = keys.master().unwrap();
        let again = keys.master().unwrap();
        assert_eq!(signer.public_key(), again.public_key());
        assert_eq!(keys.master_public_key().unwrap(), Some(signer.public_key()));
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&keys.path()), 0o600);
        assert_eq!(mode(&home.path().join("checkpoint/keys")), 0o700);
        let pem = fs::read_to_string(keys.path()).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
    }

    #[test]
    fn concurrent_creation_agrees_on_one_key() {
        let home = tempfile::tempdir().unwrap();
        let keys = FileKeyManager::new(home.path().join("keys"));
        let public: Vec<[u8; 32]> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| keys.master().unwrap().public_key()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(public.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn readable_key_is_refused_and_garbage_is_malformed() {
        let home = tempfile::tempdir().unwrap();
        let keys = FileKeyManager::new(home.path().to_owned());
        keys.master().unwrap();
        fs::set_permissions(keys.path(), fs::Permissions::from_mode(0o640)).unwrap();
        let err = keys.master().err().unwrap();
        assert!(
            matches!(err, KeyError::Insecure { mode: 0o640, .. }),
            "{err}"
        );
        assert!(keys.master_public_key().is_err());

        fs::write(keys.path(), "not a key").unwrap();
        fs::set_permissions(keys.path(), fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(
            keys.master().err().unwrap(),
            KeyError::Malformed { .. }
        ));
    }

    #[test]
    fn openssl_style_v1_key_is_read() {
        // `openssl genpkey -algorithm ed25519` output for the RFC 8032 test vector 1 seed.
        let pem = "-----BEGIN PRIVATE KEY-----\n\
                   MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n\
                   -----END PRIVATE KEY-----\n";
        let home = tempfile::tempdir().unwrap();
        let keys = FileKeyManager::new(home.path().to_owned());
        fs::write(keys.path(), pem).unwrap();
        fs::set_permissions(keys.path(), fs::Permissions::from_mode(0o600)).unwrap();
        let public = keys.master_public_key().unwrap().unwrap();
        // RFC 8032 §7.1 TEST 1 public key.
        assert_eq!(
            checkpoint_core::hex::hex(&public),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
    }
}
