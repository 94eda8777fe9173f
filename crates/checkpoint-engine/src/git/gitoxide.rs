//! The gitoxide backend: `HEAD`, then gitoxide's status (`HEAD^{tree}` against the index, the
//! index against the worktree, and a directory walk for untracked files), in-process.

use std::collections::{BTreeMap, BTreeSet};

use gix::bstr::BString;
use gix::diff::index::Change as IndexChange;
use gix::head::Kind;
use gix::status::index_worktree::Item as WorktreeItem;
use gix::status::plumbing::index_as_worktree_with_renames::Summary;
use gix::status::{Item, Submodule, UntrackedFiles, tree_index::TrackRenames};

use super::{Collector, Diff, GitError, Repo, gix_error};
use checkpoint_core::changes::{ChangeSet, Head};

/// Reads `HEAD` and the status of `repo` with gitoxide.
pub(super) fn changes(repo: &Repo) -> Result<ChangeSet, GitError> {
    let mut git = gix::open(&repo.git_dir).map_err(gix_error("open the repository"))?;
    git.set_workdir(repo.workdir.clone())
        .map_err(gix_error("open the working tree"))?;
    let head = head(&git)?;
    let status = git
        .status(gix::progress::Discard)
        .map_err(gix_error("configure status"))?
        .untracked_files(UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .tree_index_track_renames(TrackRenames::Disabled)
        .index_worktree_submodules(Submodule::Given {
            ignore: gix::submodule::config::Ignore::None,
            check_dirty: true,
        })
        .into_iter(Vec::<BString>::new())
        .map_err(gix_error("read the status"))?;
    let mut collector = Collector::default();
    for item in status {
        match item.map_err(gix_error("read the status"))? {
            Item::TreeIndex(change) => {
                let diff = match change {
                    IndexChange::Addition { .. } => Diff::Added,
                    IndexChange::Deletion { .. } => Diff::Deleted,
                    IndexChange::Modification { .. } => Diff::Modified,
                    IndexChange::Rewrite { .. } => return Err(unexpected_rename()),
                };
                collector.path(change.location()).staged = Some(diff);
            }
            Item::IndexWorktree(item) => record_worktree(&mut collector, &item)?,
        }
    }
    Ok(collector.finish(head))
}

/// Records an index-against-worktree item. Stat-only differences (`summary()` is `None`) are no
/// change.
fn record_worktree(collector: &mut Collector, item: &WorktreeItem) -> Result<(), GitError> {
    let Some(summary) = item.summary() else {
        return Ok(());
    };
    let state = collector.path(item.rela_path());
    match summary {
        // An untracked file: mentioning it is all.
        Summary::Added => {}
        Summary::Removed => state.unstaged = Some(Diff::Deleted),
        Summary::Modified | Summary::TypeChange => state.unstaged = Some(Diff::Modified),
        Summary::IntentToAdd => state.unstaged = Some(Diff::Added),
        Summary::Conflict => state.conflict = true,
        Summary::Renamed | Summary::Copied => return Err(unexpected_rename()),
    }
    Ok(())
}

/// Rename tracking is off on both sides, so gitoxide reporting one is a bug worth surfacing
/// rather than a change to guess at.
fn unexpected_rename() -> GitError {
    GitError::Gix {
        action: "read the status",
        reason: "gitoxide reported a rename although rename tracking is off".to_owned(),
    }
}

/// Where `HEAD` points, with the commit peeled as `git status` reports it.
fn head(git: &gix::Repository) -> Result<Head, GitError> {
    let head = git.head().map_err(gix_error("read HEAD"))?;
    let branch = match &head.kind {
        Kind::Unborn(name) => {
            return Ok(Head::Unborn {
                name: name.shorten().to_string(),
            });
        }
        Kind::Symbolic(reference) => Some(reference.name.shorten().to_string()),
        Kind::Detached { .. } => None,
    };
    let commit = head
        .into_peeled_id()
        .map_err(gix_error("resolve HEAD"))?
        .to_string();
    Ok(match branch {
        Some(name) => Head::Branch { name, commit },
        None => Head::Detached { commit },
    })
}

/// The content of each of `paths` in `commit` that is a blob of at most `max` bytes, read
/// in-process: no git process to start (two of them cost more than a stop's whole integrity
/// analysis), and a big blob is never read (its size comes from the object's header). A path
/// that is missing, or not a blob, is left out.
pub(crate) fn small_blobs(
    repo: &Repo,
    commit: &str,
    paths: &BTreeSet<String>,
    max: usize,
) -> Result<BTreeMap<String, Vec<u8>>, GitError> {
    let mut blobs = BTreeMap::new();
    if paths.is_empty() {
        return Ok(blobs);
    }
    let git = repo.isolated().map_err(gix_error("open the repository"))?;
    let tree = commit_tree(&git, commit)?;
    for path in paths {
        let Some(entry) = (tree.lookup_entry_by_path(path)).map_err(gix_error("look up a path"))?
        else {
            continue;
        };
        if !entry.mode().is_blob() {
            continue;
        }
        let header = (git.find_header(entry.object_id())).map_err(gix_error("read a header"))?;
        if usize::try_from(header.size()).map_or(true, |size| size > max) {
            continue;
        }
        let blob = (git.find_blob(entry.object_id())).map_err(gix_error("read a blob"))?;
        blobs.insert(path.clone(), blob.detach().data);
    }
    Ok(blobs)
}

/// The names of the regular files (blobs, executable or not; no links) directly in the
/// directory `dir` of `commit` (`""`: its root); none when there is no such directory.
pub(crate) fn file_names(repo: &Repo, commit: &str, dir: &str) -> Result<Vec<String>, GitError> {
    let git = repo.isolated().map_err(gix_error("open the repository"))?;
    let root = commit_tree(&git, commit)?;
    let tree = if dir.is_empty() {
        root
    } else {
        let Some(entry) = (root.lookup_entry_by_path(dir)).map_err(gix_error("look up a path"))?
        else {
            return Ok(Vec::new());
        };
        if !entry.mode().is_tree() {
            return Ok(Vec::new());
        }
        (entry.object().map_err(gix_error("read a tree"))?).into_tree()
    };
    let decoded = tree.decode().map_err(gix_error("decode a tree"))?;
    Ok((decoded.entries.iter())
        .filter(|entry| entry.mode.is_blob())
        .map(|entry| entry.filename.to_string())
        .collect())
}

/// The tree of `commit` (a full hex id).
fn commit_tree<'r>(git: &'r gix::Repository, commit: &str) -> Result<gix::Tree<'r>, GitError> {
    let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| GitError::Gix {
        action: "read the commit id",
        reason: e.to_string(),
    })?;
    (git.find_commit(id).map_err(gix_error("find the commit"))?)
        .tree()
        .map_err(gix_error("read the commit's tree"))
}
