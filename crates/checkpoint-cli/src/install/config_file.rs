//! A hooks file on disk: read once, parsed strictly, shown as a diff, and replaced atomically after
//! a backup of what it held (recorded in the [`Ledger`]).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use checkpoint_engine::store;

use crate::CliError;

use super::ledger::{Ledger, Mode};
use super::settings::{self, Settings};

/// The suffix of the backup kept next to an edited file.
const BACKUP_SUFFIX: &str = ".checkpoint.bak";

/// A hooks file as it was read.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    /// Where it is; for a symlink, the file the link points at (so the link survives the edit).
    pub(crate) path: PathBuf,
    /// Its content; `None` when it does not exist.
    pub(crate) text: Option<String>,
}

impl ConfigFile {
    /// Reads the file at `path`, which need not exist.
    pub(crate) fn read(path: PathBuf) -> Result<ConfigFile, CliError> {
        let is_link = fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_symlink());
        let path = if is_link {
            path.canonicalize().unwrap_or(path)
        } else {
            path
        };
        let text = read_bounded(&path).map_err(|e| {
            CliError::new(
                format!("{}: {e}", path.display()),
                "the file was left untouched; make it a readable UTF-8 text file",
            )
        })?;
        Ok(ConfigFile { path, text })
    }

    /// The parsed settings; empty when the file does not exist.
    pub(crate) fn settings(&self) -> Result<Settings, CliError> {
        self.text
            .as_deref()
            .map_or_else(|| Ok(Settings::new()), settings::parse)
            .map_err(|e| self.invalid(e))
    }

    /// The error for a file whose content cannot be edited.
    pub(crate) fn invalid(&self, err: settings::SettingsError) -> CliError {
        CliError::new(
            format!("{}: {err}", self.path.display()),
            "the file was left untouched; fix it by hand and run this again",
        )
    }

    /// A unified diff from the current content to `new`.
    pub(crate) fn diff(&self, new: &str) -> String {
        let name = self.path.display().to_string();
        let old_name = match self.text {
            Some(_) => name.as_str(),
            None => "/dev/null",
        };
        similar::TextDiff::from_lines(self.text.as_deref().unwrap_or(""), new)
            .unified_diff()
            .header(old_name, &name)
            .to_string()
    }

    /// Replaces the file with `new` and records it in `ledger`. Installing, the file's current
    /// content is first saved as `<file>.checkpoint.bak` unless an earlier install already saved
    /// it (the backup keeps what the file held before checkpoint). Uninstalling, a file
    /// checkpoint created that `new` leaves empty (`{}` or nothing) is deleted, and content that says
    /// what install's backup holds is written as the backup's exact text. The file keeps its
    /// permissions.
    pub(crate) fn replace(&self, new: &str, ledger: &Ledger) -> Result<Replaced, CliError> {
        let hint = "check the permissions of the file and its directory";
        let write = |path: &Path, bytes: &str| {
            store::write_atomic_sweeping(path, bytes.as_bytes()).map_err(|e| CliError::new(e, hint))
        };
        let empty = matches!(new.trim(), "" | "{}");
        if empty && ledger.mode != Mode::Install && ledger.created(&self.path)? {
            ledger.remove(&self.path)?;
            return Ok(Replaced {
                backup_made: None,
                file_removed: true,
            });
        }
        // The file's permissions, kept by the new content and the backup.
        let permissions = fs::metadata(&self.path).ok().map(|m| m.permissions());
        let keep = |path: &Path| match &permissions {
            Some(permissions) => fs::set_permissions(path, permissions.clone())
                .map_err(|e| CliError::new(format!("{}: {e}", path.display()), hint)),
            None => Ok(()),
        };
        ledger.make_dirs(&self.path)?;
        let backup_made = match &self.text {
            Some(old) if ledger.wants_backup(&self.path)? => {
                let mut name = self.path.clone().into_os_string();
                name.push(BACKUP_SUFFIX);
                let backup = PathBuf::from(name);
                write(&backup, old)?;
                keep(&backup)?;
                ledger.backed_up(&self.path, &backup, old.as_bytes())?;
                Some(backup)
            }
            _ => None,
        };
        // Uninstall giving back what the file held before install: its exact bytes, layout kept.
        let new = match ledger.backup(&self.path)? {
            Some((_, old)) if ledger.mode != Mode::Install && same_content(&old, new) => old,
            _ => new.to_owned(),
        };
        write(&self.path, &new)?;
        if let Some(permissions) = permissions {
            fs::set_permissions(&self.path, permissions)
                .map_err(|e| CliError::new(format!("{}: {e}", self.path.display()), hint))?;
        }
        ledger.wrote(&self.path, new.as_bytes(), self.text.is_none())?;
        Ok(Replaced {
            backup_made,
            file_removed: false,
        })
    }
}

/// Whether `a` and `b` say the same: equal as JSON values when both are JSON, else equal text.
fn same_content(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What [`ConfigFile::replace`] did besides writing.
#[derive(Debug, Default)]
pub(crate) struct Replaced {
    /// The backup of the previous content made now.
    pub(crate) backup_made: Option<PathBuf>,
    /// The file was checkpoint's own and is gone.
    pub(crate) file_removed: bool,
}

/// The most an agent's config file may hold (Claude Code's `.claude.json` keeps every project's
/// history, and grows).
pub(crate) const MAX_CONFIG_BYTES: u64 = 32 * 1024 * 1024;

/// The text of the file at `path` (through symlinks), `None` when it does not exist. Refuses what
/// is not a regular file (a FIFO would block, a device never end), more than
/// [`MAX_CONFIG_BYTES`], and text that is not UTF-8.
pub(crate) fn read_bounded(path: &Path) -> io::Result<Option<String>> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} MiB", MAX_CONFIG_BYTES >> 20),
        )
    };
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(dir: &Path) -> Ledger {
        Ledger::in_dir(&dir.join("state"), Mode::Install)
    }

    #[test]
    fn a_symlinked_file_is_edited_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let file = ConfigFile::read(link.clone()).unwrap();
        let backup = file
            .replace("{\"a\": 1}\n", &ledger(dir.path()))
            .unwrap()
            .backup_made;

        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&link).unwrap(), "{\"a\": 1}\n");
        assert_eq!(
            backup,
            Some(real.with_file_name("settings.json.checkpoint.bak"))
        );
        assert_eq!(fs::read_to_string(backup.unwrap()).unwrap(), "{}");
    }

    #[test]
    fn a_new_file_diffs_from_dev_null_and_gets_no_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/hooks.json");
        let file = ConfigFile::read(path.clone()).unwrap();
        assert_eq!(file.settings().unwrap(), Settings::new());
        let diff = file.diff("{}\n");
        assert!(diff.starts_with("--- /dev/null\n+++ "), "{diff}");
        assert!(diff.ends_with("+{}\n"), "{diff}");
        let replaced = file.replace("{}\n", &ledger(dir.path())).unwrap();
        assert_eq!(replaced.backup_made, None);
        assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }
}
