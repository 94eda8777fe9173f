//! What install and uninstall record in, and read from, the ledger of the files checkpoint wrote
//! ([`OwnFiles`]): the project's (in its state directory) or the user's (beside the user config
//! file; it also serves a project outside git). Install records every file it writes and the one backup it makes of a file it edits;
//! uninstall deletes a file install created once nothing else is in it, the directories that
//! leaves empty inside the project, and the backups install made (unless asked to keep them).

use std::fs;
use std::path::{Path, PathBuf};

use checkpoint_engine::own_files::{OwnFile, OwnFiles};
use checkpoint_engine::project::ProjectError;
use checkpoint_engine::store;
use checkpoint_engine::trust::TrustStore;
use jiff::Timestamp;

use crate::{CliError, output, project};

use super::agents::Scope;

/// Which way the files are being edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Install: back up a file before its first edit.
    Install,
    /// Uninstall: make no backup; remove install's, unless `keep_backups`.
    Uninstall {
        /// Keep the backups install made.
        keep_backups: bool,
    },
}

/// The ledger of one scope, and what an edit in it does.
#[derive(Debug)]
pub(crate) struct Ledger {
    /// `None` when there is nowhere to keep it (no user config directory).
    own: Option<OwnFiles>,
    /// The project's root: directories emptied below it are removed (none for the user's files).
    root: Option<PathBuf>,
    /// Install or uninstall.
    pub(crate) mode: Mode,
}

impl Ledger {
    /// The ledger of `scope`, for an edit in `mode`.
    pub(crate) fn of(scope: &Scope, mode: Mode) -> Result<Ledger, CliError> {
        let host = project::host();
        // The user's ledger serves the user's files and a project outside git (where no gate
        // runs); its keys are absolute paths.
        let user = host.user_config.as_deref().and_then(Path::parent);
        let (own, root) = match scope {
            Scope::Project(root) => {
                let state = (host.locate(root)?)
                    .map(|repo| host.state_dir(&repo))
                    .transpose()
                    .map_err(ProjectError::from)?;
                (state.or(user.map(Path::to_owned)), Some(root.clone()))
            }
            Scope::User => (user.map(Path::to_owned), None),
        };
        Ok(Ledger {
            own: own.as_deref().map(OwnFiles::in_dir),
            root,
            mode,
        })
    }

    /// A ledger kept in `dir` (for tests: no process's user config is touched).
    #[cfg(test)]
    pub(crate) fn in_dir(dir: &Path, mode: Mode) -> Ledger {
        Ledger {
            own: Some(OwnFiles::in_dir(dir)),
            root: None,
            mode,
        }
    }

    fn entry(&self, file: &Path) -> Result<Option<OwnFile>, CliError> {
        match &self.own {
            Some(own) => Ok(own.get(file).map_err(ledger_error)?),
            None => Ok(None),
        }
    }

    /// Whether install should back `file` up before editing it: in install mode, when checkpoint
    /// has not written it before (then it created it, or backed it up).
    pub(crate) fn wants_backup(&self, file: &Path) -> Result<bool, CliError> {
        Ok(self.mode == Mode::Install && self.entry(file)?.is_none())
    }

    /// The backup install made of `file`, when it is still there: its path and content.
    pub(crate) fn backup(&self, file: &Path) -> Result<Option<(PathBuf, String)>, CliError> {
        let Some(backup) = self.entry(file)?.and_then(|entry| entry.backup) else {
            return Ok(None);
        };
        Ok(fs::read_to_string(&backup).ok().map(|text| (backup, text)))
    }

    /// Whether checkpoint created `file` (it did not exist before the first install).
    pub(crate) fn created(&self, file: &Path) -> Result<bool, CliError> {
        Ok(self.entry(file)?.is_some_and(|entry| entry.created))
    }

    /// Records that `bytes` were written to `file`, which existed before unless `created`.
    pub(crate) fn wrote(&self, file: &Path, bytes: &[u8], created: bool) -> Result<(), CliError> {
        match &self.own {
            Some(own) => own.wrote(file, bytes, created).map_err(ledger_error),
            None => Ok(()),
        }
    }

    /// Records `backup` as the copy of `file`'s content `bytes` before install edited it.
    pub(crate) fn backed_up(
        &self,
        file: &Path,
        backup: &Path,
        bytes: &[u8],
    ) -> Result<(), CliError> {
        match &self.own {
            Some(own) => own.backed_up(file, backup, bytes).map_err(ledger_error),
            None => Ok(()),
        }
    }

    /// Creates the directory `file` goes in, recording those it creates.
    pub(crate) fn make_dirs(&self, file: &Path) -> Result<(), CliError> {
        let Some(dir) = file.parent() else {
            return Ok(());
        };
        let missing = store::missing_dirs(dir);
        fs::create_dir_all(dir).map_err(|e| {
            CliError::new(
                format!("{}: {e}", dir.display()),
                "check the permissions of the agent's config directory",
            )
        })?;
        self.created_dirs(&missing)
    }

    /// Records `dirs` as directories checkpoint created.
    pub(crate) fn created_dirs(&self, dirs: &[PathBuf]) -> Result<(), CliError> {
        match &self.own {
            Some(own) if !dirs.is_empty() => own.created_dirs(dirs).map_err(ledger_error),
            _ => Ok(()),
        }
    }

    /// Records that install approved the project at `root` at `at` (it had no approval before).
    pub(crate) fn approved(&self, root: &Path, at: Timestamp) -> Result<(), CliError> {
        match &self.own {
            Some(own) => own.approved(root, at).map_err(ledger_error),
            None => Ok(()),
        }
    }

    /// Whether install gave the approval of the project at `root` made at `at`.
    pub(crate) fn gave(&self, root: &Path, at: Timestamp) -> Result<bool, CliError> {
        match &self.own {
            Some(own) => Ok(own.approval(root).map_err(ledger_error)? == Some(at)),
            None => Ok(false),
        }
    }

    /// Deletes `file` (which checkpoint created), forgets it, and removes the directories this
    /// leaves empty inside the project, or that checkpoint created.
    pub(crate) fn remove(&self, file: &Path) -> Result<(), CliError> {
        fs::remove_file(file).map_err(|e| {
            CliError::new(
                format!("{}: {e}", file.display()),
                "remove the file by hand",
            )
        })?;
        self.forget(file)?;
        let mut dir = file.parent();
        while let Some(parent) = dir {
            let in_project = (self.root.as_deref())
                .is_some_and(|root| parent.starts_with(root) && parent != root);
            let created = match &self.own {
                Some(own) => own.created_dir(parent).map_err(ledger_error)?,
                None => false,
            };
            if !(in_project || created) || fs::remove_dir(parent).is_err() {
                break;
            }
            if let Some(own) = &self.own {
                own.forget_dir(parent).map_err(ledger_error)?;
            }
            dir = parent.parent();
        }
        Ok(())
    }

    /// The end of `uninstall --all`: withdraws the approvals install gave (unless the user
    /// approved again since), deletes the trust store if that empties it and the ledger if
    /// nothing is left in it, and removes the directories checkpoint created that are empty now.
    pub(crate) fn finish(&self) -> Result<(), CliError> {
        let Some(own) = &self.own else {
            return Ok(());
        };
        let (approvals, dirs) = own.take_rest().map_err(ledger_error)?;
        let store = TrustStore::beside_user_config(project::host().user_config.as_deref());
        if let Some(store) = store.filter(|_| !approvals.is_empty()) {
            for (root, at) in approvals {
                if store.approval(&root)?.is_some_and(|a| a.approved_at == at) {
                    store.revoke(&root)?;
                    output::out(&format!(
                        "Withdrew the approval install gave {}.",
                        root.display()
                    ));
                }
            }
            store.remove_if_empty()?;
        }
        for dir in dirs.iter().rev() {
            // Emptied, or kept for what else is in it.
            let _ = fs::remove_dir(dir);
        }
        Ok(())
    }

    /// After uninstall edited `file`: removes the backup install made of it, unless asked to keep
    /// it (or installing); returns the backup's path when it removed it.
    pub(crate) fn drop_backup(&self, file: &Path) -> Result<Option<PathBuf>, CliError> {
        if self.mode
            != (Mode::Uninstall {
                keep_backups: false,
            })
        {
            return Ok(None);
        }
        let Some(backup) = self.entry(file)?.and_then(|entry| entry.backup) else {
            return Ok(None);
        };
        // Uninstall is done with the file: a later install backs it up afresh.
        self.forget(file)?;
        if !backup.exists() {
            self.forget(&backup)?;
            return Ok(None);
        }
        self.remove(&backup)?;
        Ok(Some(backup))
    }

    /// Drops `file` from the ledger.
    pub(crate) fn forget(&self, file: &Path) -> Result<(), CliError> {
        match &self.own {
            Some(own) => own.forget(file).map_err(ledger_error),
            None => Ok(()),
        }
    }

    /// The files checkpoint wrote inside the project (not the backups), relative to its root;
    /// empty for the user's files.
    pub(crate) fn project_files(&self) -> Result<Vec<PathBuf>, CliError> {
        let (Some(own), Some(root)) = (&self.own, &self.root) else {
            return Ok(Vec::new());
        };
        let files = own.files().map_err(ledger_error)?;
        let backups: Vec<&PathBuf> = files.values().filter_map(|f| f.backup.as_ref()).collect();
        Ok(files
            .keys()
            .filter(|path| !backups.contains(path))
            .filter_map(|path| path.strip_prefix(root).ok())
            .map(Path::to_owned)
            .collect())
    }
}

fn ledger_error(e: checkpoint_engine::store::StoreError) -> CliError {
    CliError::new(
        e,
        "check the permissions of checkpoint's state directory (`.git/checkpoint/`, or \
         ~/.config/checkpoint/ for --user)",
    )
}
