//! A hooks file on disk: read once, parsed strictly, shown as a diff, and replaced atomically after
//! a backup of what it held.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use checkpoint_core::store;

use crate::CliError;

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

    /// Replaces the file with `new`, first saving its current content (if any) as
    /// `<file>.checkpoint.bak`; returns the backup's path.
    pub(crate) fn replace(&self, new: &str) -> Result<Option<PathBuf>, CliError> {
        let hint = "check the permissions of the file and its directory";
        let write = |path: &Path, bytes: &str| {
            store::write_atomic(path, bytes.as_bytes()).map_err(|e| CliError::new(e, hint))
        };
        let backup = match &self.text {
            Some(old) => {
                let mut name = self.path.clone().into_os_string();
                name.push(BACKUP_SUFFIX);
                let backup = PathBuf::from(name);
                write(&backup, old)?;
                Some(backup)
            }
            None => None,
        };
        write(&self.path, new)?;
        Ok(backup)
    }
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

    #[test]
    fn a_symlinked_file_is_edited_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let file = ConfigFile::read(link.clone()).unwrap();
        let backup = file.replace("{\"a\": 1}\n").unwrap();

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
        assert_eq!(file.replace("{}\n").unwrap(), None);
        assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }
}
