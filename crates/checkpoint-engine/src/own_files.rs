//! The files checkpoint itself wrote: `checkpoint install`'s hooks files, skill and MCP entries,
//! and the backups it made of them. A ledger (`own-files.json`, in the project's state directory
//! or beside the user config file) records each one with the SHA-256 of what was written, whether
//! checkpoint created it, and its backup; with them, the directories install created and the
//! projects whose approval install gave (see [`OwnFiles::approved`]). The stop gate does not count a changed file that still
//! holds exactly what checkpoint wrote (an agent's edit makes it count again), and `checkpoint
//! uninstall` deletes what install created and the backups it made, and `uninstall --all` what
//! is left: the approvals, the emptied directories and the ledger itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::digest;
use crate::store::{self, StoreError};
use checkpoint_core::changes::ChangeSet;

/// The ledger's file name.
pub const LEDGER_FILE: &str = "own-files.json";

/// What the ledger knows about one file checkpoint wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnFile {
    /// The SHA-256 (hex) of the content checkpoint last wrote.
    pub sha256: String,
    /// Whether the file did not exist before checkpoint first wrote it.
    pub created: bool,
    /// The backup checkpoint made of the file's content before its first edit, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<PathBuf>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Ledger {
    /// By absolute path.
    files: BTreeMap<PathBuf, OwnFile>,
    /// The directories checkpoint created for them (and for this ledger).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    dirs: BTreeSet<PathBuf>,
    /// The projects install approved, with the time of that approval.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    approvals: BTreeMap<PathBuf, Timestamp>,
}

impl Ledger {
    fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty() && self.approvals.is_empty()
    }
}

/// The ledger of one scope (a project, or the user's files).
#[derive(Debug, Clone)]
pub struct OwnFiles {
    path: PathBuf,
}

impl OwnFiles {
    /// The ledger kept in `dir` (a project's state directory, or the user config directory).
    pub fn in_dir(dir: &Path) -> OwnFiles {
        OwnFiles {
            path: dir.join(LEDGER_FILE),
        }
    }

    /// What the ledger says about `file`.
    pub fn get(&self, file: &Path) -> Result<Option<OwnFile>, StoreError> {
        Ok(self.load()?.files.remove(file))
    }

    /// Records that checkpoint wrote `bytes` to `file`, which existed before unless `created`.
    /// A file already in the ledger keeps its first `created` and its backup.
    pub fn wrote(&self, file: &Path, bytes: &[u8], created: bool) -> Result<(), StoreError> {
        let sha256 = checkpoint_core::hex::sha256_hex(bytes);
        self.update(|ledger| {
            ledger
                .files
                .entry(file.to_owned())
                .and_modify(|entry| entry.sha256.clone_from(&sha256))
                .or_insert(OwnFile {
                    sha256: sha256.clone(),
                    created,
                    backup: None,
                });
        })
    }

    /// Records that checkpoint saved `bytes`, the content of `file` before its first edit, as
    /// `backup` (a file it created).
    pub fn backed_up(&self, file: &Path, backup: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let sha256 = checkpoint_core::hex::sha256_hex(bytes);
        self.update(|ledger| {
            ledger.files.insert(
                backup.to_owned(),
                OwnFile {
                    sha256: sha256.clone(),
                    created: true,
                    backup: None,
                },
            );
            ledger
                .files
                .entry(file.to_owned())
                .or_insert(OwnFile {
                    sha256: String::new(),
                    created: false,
                    backup: None,
                })
                .backup = Some(backup.to_owned());
        })
    }

    /// Drops `file` from the ledger (after uninstall removed it, or gave it back).
    pub fn forget(&self, file: &Path) -> Result<(), StoreError> {
        self.update(|ledger| {
            ledger.files.remove(file);
        })
    }

    /// Records `dirs` as directories checkpoint created.
    pub fn created_dirs(&self, dirs: &[PathBuf]) -> Result<(), StoreError> {
        self.update(|ledger| ledger.dirs.extend(dirs.iter().cloned()))
    }

    /// Whether checkpoint created the directory `dir`.
    pub fn created_dir(&self, dir: &Path) -> Result<bool, StoreError> {
        Ok(self.load()?.dirs.contains(dir))
    }

    /// Drops the directory `dir` from the ledger (after uninstall removed it).
    pub fn forget_dir(&self, dir: &Path) -> Result<(), StoreError> {
        self.update(|ledger| {
            ledger.dirs.remove(dir);
        })
    }

    /// Records that install approved the project at `root` (which had no approval) at `at`.
    pub fn approved(&self, root: &Path, at: Timestamp) -> Result<(), StoreError> {
        self.update(|ledger| {
            ledger.approvals.insert(root.to_owned(), at);
        })
    }

    /// When install approved the project at `root`, if it did.
    pub fn approval(&self, root: &Path) -> Result<Option<Timestamp>, StoreError> {
        Ok(self.load()?.approvals.remove(root))
    }

    /// Empties the ledger of what `uninstall --all` undoes besides the files: returns the
    /// approvals install gave and the directories it created (outermost first), forgotten; then
    /// deletes the ledger if nothing is left in it.
    pub fn take_rest(&self) -> Result<(BTreeMap<PathBuf, Timestamp>, Vec<PathBuf>), StoreError> {
        if !self.path.exists() {
            return Ok(Default::default());
        }
        let rest = store::update_json(&self.path, |ledger: &mut Ledger| {
            let approvals = std::mem::take(&mut ledger.approvals);
            let dirs = std::mem::take(&mut ledger.dirs);
            (approvals, dirs.into_iter().collect())
        })?;
        store::remove_json(&self.path, Ledger::is_empty)?;
        Ok(rest)
    }

    /// One transaction on the ledger; the first also records the directories it creates for it.
    fn update(&self, f: impl FnOnce(&mut Ledger)) -> Result<(), StoreError> {
        let created = self
            .path
            .parent()
            .map(store::missing_dirs)
            .unwrap_or_default();
        store::update_json(&self.path, |ledger: &mut Ledger| {
            ledger.dirs.extend(created);
            f(ledger);
        })
    }

    /// Every file in the ledger, by path.
    pub fn files(&self) -> Result<BTreeMap<PathBuf, OwnFile>, StoreError> {
        Ok(self.load()?.files)
    }

    /// `changes` without the files under `workdir` that hold exactly what checkpoint wrote. An
    /// unreadable ledger removes nothing.
    pub fn without_ours(&self, workdir: &Path, mut changes: ChangeSet) -> ChangeSet {
        let Ok(ledger) = self.load() else {
            return changes;
        };
        if ledger.files.is_empty() {
            return changes;
        }
        changes.changes.retain(|change| {
            let path = workdir.join(&change.path);
            !ledger.files.get(&path).is_some_and(|entry| {
                crate::bounded::open_regular(&path)
                    .and_then(digest::hash_reader)
                    .is_ok_and(|sha256| sha256 == entry.sha256)
            })
        });
        changes
    }

    fn load(&self) -> Result<Ledger, StoreError> {
        Ok(store::read_json(&self.path)?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use checkpoint_core::changes::{Change, ChangeKind, Head};

    use super::*;

    fn change(path: &str) -> Change {
        Change {
            path: path.to_owned(),
            kind: ChangeKind::Untracked,
            staged: false,
            committed: false,
        }
    }

    #[test]
    fn a_file_counts_again_once_someone_else_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        let ledger = OwnFiles::in_dir(&work.join("state"));
        let ours = work.join(".agent/settings.json");
        fs::create_dir_all(ours.parent().unwrap()).unwrap();
        fs::write(&ours, "{}\n").unwrap();
        ledger.wrote(&ours, b"{}\n", true).unwrap();
        let backup = work.join("old.json.checkpoint.bak");
        fs::write(&backup, "[]").unwrap();
        ledger
            .backed_up(&work.join("old.json"), &backup, b"[]")
            .unwrap();
        let set = ChangeSet {
            head: Head::Unborn {
                name: "main".to_owned(),
            },
            changes: vec![
                change(".agent/settings.json"),
                change("old.json.checkpoint.bak"),
                change("src/lib.rs"),
            ],
            non_utf8_paths: 0,
        };
        let left = ledger.without_ours(work, set.clone());
        assert_eq!(left.changes, [change("src/lib.rs")]);

        fs::write(&ours, "{\"edited\": true}\n").unwrap();
        let left = ledger.without_ours(work, set);
        assert_eq!(
            left.changes,
            [change(".agent/settings.json"), change("src/lib.rs")]
        );
        let entry = ledger.get(&work.join("old.json")).unwrap().unwrap();
        assert_eq!(entry.backup, Some(backup));
        assert!(!entry.created);
    }

    #[test]
    fn a_later_write_keeps_the_first_created_and_backup() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = OwnFiles::in_dir(dir.path());
        let file = dir.path().join("f");
        ledger
            .backed_up(&file, &dir.path().join("f.bak"), b"x")
            .unwrap();
        ledger.wrote(&file, b"y", true).unwrap();
        let entry = ledger.get(&file).unwrap().unwrap();
        assert!(!entry.created, "it existed before the backup");
        assert_eq!(entry.sha256, checkpoint_core::hex::sha256_hex(b"y"));
        assert!(entry.backup.is_some());
        ledger.forget(&file).unwrap();
        assert_eq!(ledger.get(&file).unwrap(), None);
    }
}
