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
    /// Whether the change is committed: the path differs between the turn's base and `HEAD`
    /// (a commit made during the turn) and not between `HEAD` and the worktree. The tests and
    /// the integrity analysis judge it; the commit gate does not ask for it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub committed: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
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

    /// The change set of a turn whose base is not `HEAD`: these changes (`HEAD` against the
    /// worktree) together with `committed`, how each path differs between the base and `HEAD`
    /// (kinds [`ChangeKind::Added`], [`ChangeKind::Modified`] or [`ChangeKind::Deleted`], in any
    /// order). The result is again sorted by path with one entry per path, and each entry says
    /// how the path differs between the base and the worktree:
    ///
    /// - a path only committed is a [`Change::committed`] change of its committed kind;
    /// - a path that also differs in the worktree keeps its worktree entry (uncommitted, its
    ///   `staged` as it is), its kind told from both sides: a path the base lacks is
    ///   [`ChangeKind::Added`] unless the worktree lacks it too, a path the base has is
    ///   [`ChangeKind::Deleted`] when the worktree lacks it, else [`ChangeKind::Modified`]. A
    ///   path added by a commit and deleted since stays [`ChangeKind::Deleted`]: the worktree
    ///   still differs from `HEAD` there, so the commit gate asks for it as today.
    pub fn with_committed(mut self, mut committed: Vec<Change>) -> ChangeSet {
        if committed.is_empty() {
            return self;
        }
        committed.sort_by(|a, b| a.path.cmp(&b.path));
        committed.dedup_by(|later, kept| later.path == kept.path);
        let worktree = std::mem::take(&mut self.changes);
        let mut merged = Vec::with_capacity(worktree.len() + committed.len());
        let mut worktree = worktree.into_iter().peekable();
        let mut committed = committed.into_iter().peekable();
        loop {
            let order = match (worktree.peek(), committed.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(w), Some(c)) => w.path.cmp(&c.path),
            };
            match order {
                std::cmp::Ordering::Less => merged.extend(worktree.next()),
                std::cmp::Ordering::Greater => {
                    if let Some(c) = committed.next() {
                        merged.push(Change {
                            staged: false,
                            committed: true,
                            ..c
                        });
                    }
                }
                std::cmp::Ordering::Equal => {
                    if let (Some(w), Some(c)) = (worktree.next(), committed.next()) {
                        let in_base = c.kind != ChangeKind::Added;
                        let in_worktree = w.kind != ChangeKind::Deleted;
                        let kind = match (in_base, in_worktree) {
                            (false, true) => ChangeKind::Added,
                            (true, true) => ChangeKind::Modified,
                            (_, false) => ChangeKind::Deleted,
                        };
                        merged.push(Change {
                            kind,
                            committed: false,
                            ..w
                        });
                    }
                }
            }
        }
        self.changes = merged;
        self
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
    use super::{Change, ChangeKind, ChangeSet, Head, file_name};
    use proptest::prelude::*;

    fn kind() -> impl Strategy<Value = ChangeKind> {
        prop_oneof![
            Just(ChangeKind::Added),
            Just(ChangeKind::Modified),
            Just(ChangeKind::Deleted),
            Just(ChangeKind::Untracked),
        ]
    }

    fn committed_kind() -> impl Strategy<Value = ChangeKind> {
        prop_oneof![
            Just(ChangeKind::Added),
            Just(ChangeKind::Modified),
            Just(ChangeKind::Deleted),
        ]
    }

    /// Paths from a small alphabet, so that the two sides share many.
    fn path() -> impl Strategy<Value = String> {
        "[ab/é]{1,4}"
    }

    fn change(path: String, kind: ChangeKind, staged: bool) -> Change {
        Change {
            path,
            kind,
            staged,
            committed: false,
        }
    }

    /// A worktree change set as the git module makes them: sorted, one entry per path.
    fn worktree() -> impl Strategy<Value = ChangeSet> {
        proptest::collection::btree_map(path(), (kind(), any::<bool>()), 0..12).prop_map(|m| {
            ChangeSet {
                head: Head::Detached {
                    commit: "c".repeat(40),
                },
                changes: (m.into_iter()).map(|(p, (k, s))| change(p, k, s)).collect(),
                non_utf8_paths: 0,
            }
        })
    }

    proptest! {
        #[test]
        fn the_union_is_sorted_unique_and_keeps_every_path_and_the_worktree_side(
            set in worktree(),
            committed in proptest::collection::vec((path(), committed_kind()), 0..12),
        ) {
            let committed: Vec<Change> = (committed.into_iter())
                .map(|(p, k)| change(p, k, true))
                .collect();
            let union = set.clone().with_committed(committed.clone());
            let paths: Vec<&str> = union.changes.iter().map(|c| c.path.as_str()).collect();
            let mut sorted = paths.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(&paths, &sorted, "sorted by path, one entry per path");
            prop_assert_eq!(&union.head, &set.head);
            for c in &union.changes {
                let worktree = set.changes.iter().find(|w| w.path == c.path);
                let first = committed.iter().find(|k| k.path == c.path);
                match (worktree, first) {
                    (Some(w), None) => prop_assert_eq!(c, w),
                    (None, Some(k)) => {
                        prop_assert!(c.committed && !c.staged);
                        prop_assert_eq!(c.kind, k.kind);
                    }
                    (Some(w), Some(k)) => {
                        prop_assert!(!c.committed, "uncommitted work is never called committed");
                        prop_assert_eq!(c.staged, w.staged);
                        let expected = match (k.kind, w.kind) {
                            (_, ChangeKind::Deleted) => ChangeKind::Deleted,
                            (ChangeKind::Added, _) => ChangeKind::Added,
                            _ => ChangeKind::Modified,
                        };
                        prop_assert_eq!(c.kind, expected);
                    }
                    (None, None) => prop_assert!(false, "{} came from nowhere", c.path),
                }
            }
            for path in (set.changes.iter().map(|c| &c.path)).chain(committed.iter().map(|c| &c.path)) {
                prop_assert!(paths.contains(&path.as_str()), "{path} was lost");
            }
            // Nothing committed: the change set as it was.
            prop_assert_eq!(set.clone().with_committed(Vec::new()), set);
        }
    }

    #[test]
    fn committed_is_left_out_of_the_json_when_false() {
        let c = change("a".into(), ChangeKind::Modified, false);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(text, r#"{"path":"a","kind":"modified","staged":false}"#);
        assert_eq!(serde_json::from_str::<Change>(&text).unwrap(), c);
        let committed = Change {
            committed: true,
            ..c
        };
        let text = serde_json::to_string(&committed).unwrap();
        assert!(text.ends_with(r#""committed":true}"#), "{text}");
    }

    #[test]
    fn a_file_name_is_what_follows_the_last_slash() {
        assert_eq!(file_name("calc.py"), "calc.py");
        assert_eq!(file_name("src/pkg/calc.py"), "calc.py");
        assert_eq!(file_name("dé/ü/ñ.rs"), "ñ.rs");
        assert_eq!(file_name("vendor/lib/"), "");
        assert_eq!(file_name(""), "");
    }
}
