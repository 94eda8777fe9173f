//! What changed in the worktree compared with `HEAD`: the pure types. Gathering them from git is
//! the engine's (`checkpoint-engine`'s `git` module).

use serde::{Deserialize, Serialize};

/// How one path differs from `HEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Tracked in the index but not in `HEAD`.
    Added,
    /// Content differs from `HEAD`.
    Modified,
    /// In `HEAD`, gone from the index or the worktree.
    Deleted,
    /// Not tracked and not ignored.
    Untracked,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Change {
    /// Repository-relative path with `/` separators. A path that is not valid UTF-8 is shown with
    /// replacement characters (see [`ChangeSet::non_utf8_paths`]).
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Whether (some of) the change is staged in the index.
    pub staged: bool,
}

/// The last component of `path`, a repository-relative path as [`Change::path`] spells them (all
/// of it at the top). Found by the last `/` byte, which UTF-8 never uses inside another
/// character: it is asked of every file of a change set that may hold tens of thousands.
pub fn file_name(path: &str) -> &str {
    match path.as_bytes().iter().rposition(|&b| b == b'/') {
        Some(slash) => &path[slash + 1..],
        None => path,
    }
}

/// Where `HEAD` points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Head {
    /// On a branch with at least one commit.
    Branch {
        /// Short branch name.
        name: String,
        /// Full hex commit id.
        commit: String,
    },
    /// Detached at a commit.
    Detached {
        /// Full hex commit id.
        commit: String,
    },
    /// A branch with no commits yet (a fresh repository).
    Unborn {
        /// The branch `HEAD` names.
        name: String,
    },
}

impl Head {
    /// The commit `HEAD` resolves to, if any.
    pub fn commit(&self) -> Option<&str> {
        match self {
            Head::Branch { commit, .. } | Head::Detached { commit } => Some(commit),
            Head::Unborn { .. } => None,
        }
    }
}

/// Every path that differs from `HEAD`: staged, unstaged and untracked, ignored files excluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// Where `HEAD` points.
    pub head: Head,
    /// The changed paths, sorted by path, one entry per path.
    pub changes: Vec<Change>,
    /// How many paths were not valid UTF-8 (shown lossily in `changes`).
    #[serde(default)]
    pub non_utf8_paths: usize,
}

impl ChangeSet {
    /// True when nothing differs from `HEAD`.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// What the gate knows about the repository at the time of a stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RepoFacts {
    /// The working directory is not inside a git repository.
    NoRepository,
    /// A repository was found but its state could not be read.
    Unreadable {
        /// One line saying what failed.
        reason: String,
    },
    /// The change set was read.
    Changes(ChangeSet),
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn a_file_name_is_what_follows_the_last_slash() {
        assert_eq!(file_name("calc.py"), "calc.py");
        assert_eq!(file_name("src/pkg/calc.py"), "calc.py");
        assert_eq!(file_name("dé/ü/ñ.rs"), "ñ.rs");
        assert_eq!(file_name("vendor/lib/"), "");
        assert_eq!(file_name(""), "");
    }
}
