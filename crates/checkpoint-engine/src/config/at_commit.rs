//! The configuration a commit carries: its `checkpoint.toml` over the built-in defaults, and the
//! test command detected in its tree where that file names none — read from git objects, with
//! no checkout, no user file and no variables. `checkpoint verify` asks it which commands count
//! as a commit's tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use checkpoint_core::policy::config::{ConfigError, ConfigFile, Effective};

use super::detect::{LISTED_DIRS, ProjectShape, READ_FILES, detect_key};
use super::load::PROJECT_FILE;
use crate::bounded::MAX_CONFIG_BYTES;
use crate::git::{self, GitError, Repo};

/// Why a commit's configuration could not be read. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AtCommitError {
    /// Git could not read the commit's tree.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The commit's `checkpoint.toml` is not a valid configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The files and names detection looks at, as a commit holds them.
struct CommitShape {
    files: BTreeMap<String, Vec<u8>>,
    names: BTreeMap<&'static str, Vec<String>>,
}

impl ProjectShape for CommitShape {
    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    fn text(&self, path: &str) -> Option<String> {
        String::from_utf8(self.files.get(path)?.clone()).ok()
    }

    fn file_names(&self, dir: &str) -> Vec<String> {
        self.names.get(dir).cloned().unwrap_or_default()
    }
}

/// Every test command the configuration committed in `commit` (a full id) runs: its test
/// command and its rules' own (see [`checkpoint_core::policy::Policy::test_commands`]).
pub fn test_commands_at(repo: &Repo, commit: &str) -> Result<Vec<String>, AtCommitError> {
    let wanted: BTreeSet<String> = (READ_FILES.iter().chain([&PROJECT_FILE]))
        .map(|path| (*path).to_owned())
        .collect();
    let max = usize::try_from(MAX_CONFIG_BYTES).unwrap_or(usize::MAX);
    let mut files = git::small_blobs(repo, commit, &wanted, max)?;
    let project = files.remove(PROJECT_FILE);
    let mut names = BTreeMap::new();
    for dir in LISTED_DIRS {
        names.insert(*dir, git::file_names(repo, commit, dir)?);
    }
    let shape = CommitShape { files, names };
    let short = commit.get(..12).unwrap_or(commit);
    let path = PathBuf::from(format!("{short}:{PROJECT_FILE}"));
    let project = project
        .map(|bytes| {
            let text = String::from_utf8(bytes).map_err(|_| ConfigError::Read {
                path: path.clone(),
                error: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
            })?;
            ConfigFile::parse(&path, text)
        })
        .transpose()?;
    let effective = Effective::merge(project.into_iter().collect(), &[], |key| {
        detect_key(&shape, key)
    })?;
    Ok(effective.into_policy().test_commands())
}
