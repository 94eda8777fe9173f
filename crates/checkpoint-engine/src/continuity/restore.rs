//! `checkpoint restore`: put the worktree's files back to what a session checkpoint saw, whatever
//! changed them since (an agent's edit tool, a shell command, a person).
//!
//! The paths looked at, and what each held at the checkpoint, are those of `checkpoint diff`
//! (see [`super::diff`]): the checkpoint's recorded files (their kept contents), the current
//! change set and, when `HEAD` moved, the paths that differ between the two commits (their
//! content in the checkpoint's `HEAD` commit). A path is then
//!
//! - **restored** (rewritten) when it held other content, or another kind of file (a regular
//!   file, an executable one, a symbolic link), than now;
//! - **recreated** when it was deleted since;
//! - **deleted** when it did not exist at the checkpoint: a file deleted then, or created since
//!   (an untracked file that is not ignored; ignored files are never looked at);
//! - **skipped** when it is a directory now (a submodule: restore does not look into one, as
//!   checkpoints do not).
//!
//! [`plan`] checks everything before anything is written and refuses the whole restore, naming
//! the path, when one file's content is not known (too large to keep, its blob pruned, beyond
//! the files a checkpoint records) or its path is hostile (absolute, `..`, inside `.git`, below a
//! symbolic link or a file). [`apply`] then writes each file atomically (a temporary file renamed
//! into place; a link likewise) and removes the deleted ones. Contents are written raw, as the
//! checkpoint kept them: no git filters run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use super::diff::{self, DiffError, FileDelta, GIT_TIMEOUT, Side};
use super::record::{FileMode, FileState};
use super::{Continuity, MAX_BLOB_BYTES, SessionCheckpoint};
use crate::git::Repo;
use crate::git::call::{self, GitCallError};
use crate::store::{self, StoreError};
use checkpoint_core::changes::{ChangeKind, ChangeSet};
use checkpoint_core::policy::GitBackend;

/// Permission bits of a regular file restore creates (git's, under the usual umask).
const REGULAR_MODE: u32 = 0o644;
/// Permission bits of an executable file restore creates.
const EXECUTABLE_MODE: u32 = 0o755;

/// What restore does to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreAction {
    /// The file exists and gets the checkpoint's content (or kind).
    Restore,
    /// The file was deleted since the checkpoint and is written again.
    Recreate,
    /// The file did not exist at the checkpoint and is removed.
    Delete,
}

/// What a path is to hold after the restore.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// Nothing.
    Absent,
    /// A regular file; executable when known (`None`: keep the current file's bits).
    File {
        bytes: Vec<u8>,
        executable: Option<bool>,
    },
    /// A symbolic link to this target.
    Link(Vec<u8>),
}

/// One path restore changes.
#[derive(Debug, Clone, Serialize)]
pub struct FileRestore {
    /// What is done to it.
    pub action: RestoreAction,
    /// The path and the lines the restore adds and removes in it (`checkpoint diff`'s count,
    /// from the file as it is now to the checkpoint's content).
    #[serde(flatten)]
    pub delta: FileDelta,
    /// The unified diff from the file as it is now to the checkpoint's content (at most
    /// [`diff::PATCH_LINES`] lines); `None` for a binary or only hashed side.
    pub patch: Option<String>,
    #[serde(skip)]
    target: Target,
}

/// Everything a restore to one checkpoint would do, checked.
#[derive(Debug, Clone, Serialize)]
pub struct RestorePlan {
    /// The checkpoint restored to.
    pub checkpoint: u64,
    /// When it was taken.
    pub at: Timestamp,
    /// The paths that change, sorted.
    pub files: Vec<FileRestore>,
    /// Paths that differ but are directories now (submodules), left alone.
    pub skipped: Vec<String>,
    /// The change set the plan was made from, for the safety checkpoint to record.
    #[serde(skip)]
    pub changes: ChangeSet,
}

/// Why a restore was refused or failed. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// The checkpoint's state could not be compared with the worktree.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// One path cannot be restored; nothing was changed.
    #[error("cannot restore `{path}`: {why}; nothing was changed")]
    Refused {
        /// The path, sanitized.
        path: String,
        /// Why not.
        why: String,
    },
    /// Writing or removing a file failed midway.
    #[error(transparent)]
    Write(#[from] StoreError),
}

impl RestoreError {
    fn refused(path: &str, why: impl Into<String>) -> RestoreError {
        RestoreError::Refused {
            path: checkpoint_core::sanitize::line(path, checkpoint_core::sanitize::NAME_CHARS),
            why: why.into(),
        }
    }
}

impl From<GitCallError> for RestoreError {
    fn from(err: GitCallError) -> RestoreError {
        RestoreError::Diff(err.into())
    }
}

/// What a restore of `repo`'s worktree to the checkpoint `from` would do, limited to the paths
/// `only` names (a file, or a directory and everything under it; repository-relative) when it
/// names any. Refuses (see the module documentation) when any path cannot be restored.
pub fn plan(
    continuity: &Continuity,
    repo: &Repo,
    backend: GitBackend,
    from: &SessionCheckpoint,
    only: &[String],
) -> Result<RestorePlan, RestoreError> {
    let (then, changes) = diff::then(continuity, repo, backend, from)?;
    let recorded: HashMap<&str, &FileState> =
        from.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let selected = |path: &str| {
        only.is_empty()
            || only.iter().any(|p| {
                let p = p.trim_end_matches('/');
                p.is_empty()
                    || path == p
                    || path.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
            })
    };
    let then: BTreeMap<String, Side> = then.into_iter().filter(|(p, _)| selected(p)).collect();
    let from_commit: Vec<&str> = (then.iter())
        .filter(|(path, side)| {
            !recorded.contains_key(path.as_str()) && matches!(side, Side::Content(_))
        })
        .map(|(path, _)| path.as_str())
        .collect();
    let modes = match (&from.head, from_commit.is_empty()) {
        (Some(commit), false) => commit_modes(repo, commit, &from_commit)?,
        _ => BTreeMap::new(),
    };

    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (path, side) in then {
        let full = repo.workdir.join(&path);
        if fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
            if side != Side::Absent {
                skipped.push(path);
            }
            continue;
        }
        let now = diff::worktree(&repo.workdir, &path);
        if let Side::Hashed(_) = side {
            if diff::compare(&now, &side).is_none() {
                continue; // It holds that content again.
            }
            return Err(not_kept(&path));
        }
        let now_mode = mode_of(&full);
        let target = match recorded.get(path.as_str()) {
            Some(state) => recorded_target(state, &side, from)?,
            None if from.more_files > 0 => {
                // The checkpoint did not record every changed file: this one may have been one.
                return Err(RestoreError::refused(
                    &path,
                    format!(
                        "checkpoint #{} recorded {} of {} changed files, and not this one",
                        from.id,
                        from.files.len(),
                        from.files.len() + from.more_files
                    ),
                ));
            }
            None => match side {
                Side::Content(bytes) => match modes.get(&path).map(String::as_str) {
                    Some("120000") => Target::Link(bytes),
                    Some("100755") => Target::File {
                        bytes,
                        executable: Some(true),
                    },
                    _ => Target::File {
                        bytes,
                        executable: Some(false),
                    },
                },
                Side::Absent | Side::Hashed(_) => Target::Absent,
            },
        };
        let target_side = match &target {
            Target::Absent => Side::Absent,
            Target::File { bytes, .. } | Target::Link(bytes) => Side::Content(bytes.clone()),
        };
        let content = diff::compare(&now, &target_side);
        let kind_differs = kind_differs(&target, now_mode);
        if content.is_none() && !kind_differs {
            continue;
        }
        check_path(&repo.workdir, &path)?;
        let action = match (&target, now_mode) {
            (Target::Absent, _) => RestoreAction::Delete,
            (_, None) => RestoreAction::Recreate,
            (_, Some(_)) => RestoreAction::Restore,
        };
        let (added, removed, binary) = content.unwrap_or((0, 0, false));
        let patch = diff::patch(&now, &target_side, &path);
        files.push(FileRestore {
            action,
            patch,
            delta: FileDelta {
                path,
                added,
                removed,
                binary,
            },
            target,
        });
    }
    Ok(RestorePlan {
        checkpoint: from.id,
        at: from.at,
        files,
        skipped,
        changes,
    })
}

/// The target of a path the checkpoint recorded, whose old side is `side`.
fn recorded_target(
    state: &FileState,
    side: &Side,
    from: &SessionCheckpoint,
) -> Result<Target, RestoreError> {
    Ok(match (&state.sha256, side) {
        (None, _) if state.kind == ChangeKind::Deleted => Target::Absent,
        (None, _) => {
            return Err(RestoreError::refused(
                &state.path,
                format!(
                    "checkpoint #{} saw something there that is neither a file nor a link",
                    from.id
                ),
            ));
        }
        // Kept contents are checked when imported; again here, right before they are written.
        (Some(sha), Side::Content(bytes)) if checkpoint_core::hex::sha256_hex(bytes) != *sha => {
            return Err(RestoreError::refused(
                &state.path,
                format!(
                    "its kept content does not match the digest checkpoint #{} recorded",
                    from.id
                ),
            ));
        }
        (Some(_), Side::Content(bytes)) => match state.mode {
            Some(FileMode::Link) => Target::Link(bytes.clone()),
            mode => Target::File {
                bytes: bytes.clone(),
                executable: mode.map(|m| m == FileMode::Executable),
            },
        },
        (Some(_), Side::Absent | Side::Hashed(_)) => return Err(not_kept(&state.path)),
    })
}

fn not_kept(path: &str) -> RestoreError {
    RestoreError::refused(
        path,
        format!(
            "its content at the checkpoint was not kept (a file over {} MiB is only hashed; \
             pruned checkpoints lose theirs)",
            MAX_BLOB_BYTES / (1024 * 1024)
        ),
    )
}

/// The kind of file at `full` now (a link is not followed); `None` when nothing (or something
/// that is neither a file nor a link) is there.
fn mode_of(full: &Path) -> Option<FileMode> {
    let meta = fs::symlink_metadata(full).ok()?;
    if meta.is_symlink() {
        Some(FileMode::Link)
    } else if meta.is_file() {
        Some(if meta.permissions().mode() & 0o111 != 0 {
            FileMode::Executable
        } else {
            FileMode::Regular
        })
    } else {
        None
    }
}

/// Whether the kind of file at the path differs from what `target` asks for, where known.
fn kind_differs(target: &Target, now: Option<FileMode>) -> bool {
    match (target, now) {
        (Target::Absent, now) => now.is_some(),
        (Target::Link(_), now) => now != Some(FileMode::Link),
        (Target::File { .. }, None | Some(FileMode::Link)) => true,
        (Target::File { executable, .. }, Some(now)) => {
            executable.is_some_and(|x| x != (now == FileMode::Executable))
        }
    }
}

/// Refuses a path restore must not write: empty, absolute, with `.`, `..` or empty
/// components, inside `.git`, or below a symbolic link or anything but a directory.
pub fn check_path(workdir: &Path, path: &str) -> Result<(), RestoreError> {
    let bad = |why: &str| Err(RestoreError::refused(path, why));
    if path.is_empty() || path.starts_with('/') || path.contains('\0') {
        return bad("not a path inside the repository");
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return bad("not a plain path inside the repository");
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return bad("it is inside a .git directory");
    }
    let mut dir = workdir.to_owned();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_symlink() => {
                return bad("a directory above it is a symbolic link");
            }
            Ok(meta) if !meta.is_dir() => return bad("a path above it is not a directory"),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => break,
            Err(_) => return bad("a directory above it cannot be read"),
        }
    }
    Ok(())
}

/// The git mode of each of `paths` in `commit` (`100644`, `100755`, `120000`…).
fn commit_modes(
    repo: &Repo,
    commit: &str,
    paths: &[&str],
) -> Result<BTreeMap<String, String>, RestoreError> {
    // Past a few hundred paths one listing of the whole tree is cheaper than a long argv.
    let mut args = vec![
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        commit,
    ];
    if paths.len() <= 500 {
        args.push("--");
        args.extend(paths.iter().copied());
    }
    let out = call::output(call::git(repo, &args, None), "ls-tree", GIT_TIMEOUT)?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let (meta, path) = entry.split_at(entry.iter().position(|&b| b == b'\t')?);
            let mode = meta.split(|&b| b == b' ').next()?;
            Some((
                String::from_utf8_lossy(&path[1..]).into_owned(),
                String::from_utf8_lossy(mode).into_owned(),
            ))
        })
        .collect())
}

/// Carries out `plan` in `workdir`: removes the files to delete, then writes each restored one
/// atomically. Each path is checked again just before it is touched. The leftovers of an
/// interrupted restore (our temporary files, which git would see as untracked) are swept from
/// each directory written, once ([`store::sweep_temp_files`]).
pub fn apply(workdir: &Path, plan: &RestorePlan) -> Result<(), RestoreError> {
    let (deletes, writes): (Vec<&FileRestore>, Vec<&FileRestore>) =
        (plan.files.iter()).partition(|f| f.target == Target::Absent);
    for file in deletes {
        check_path(workdir, &file.delta.path)?;
        let full = workdir.join(&file.delta.path);
        match fs::remove_file(&full) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(StoreError::Io {
                    path: full,
                    source: e,
                }
                .into());
            }
            _ => {}
        }
    }
    let mut swept = HashSet::new();
    for file in writes {
        check_path(workdir, &file.delta.path)?;
        let full: PathBuf = workdir.join(&file.delta.path);
        if let Some(dir) = full.parent().filter(|dir| swept.insert(dir.to_path_buf())) {
            store::sweep_temp_files(dir);
        }
        match &file.target {
            Target::Link(target) => {
                store::link_atomic(&full, Path::new(std::ffi::OsStr::from_bytes(target)))?;
            }
            Target::File { bytes, executable } => {
                let now = fs::symlink_metadata(&full)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.permissions().mode() & 0o7777);
                let executable = executable.unwrap_or(now.is_some_and(|m| m & 0o111 != 0));
                let mode = match (now, executable) {
                    (Some(mode), true) => mode | ((mode & 0o444) >> 2),
                    (Some(mode), false) => mode & !0o111,
                    (None, true) => EXECUTABLE_MODE,
                    (None, false) => REGULAR_MODE,
                };
                store::write_atomic_mode(&full, bytes, mode)?;
            }
            Target::Absent => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn refused(workdir: &Path, path: &str) -> bool {
        matches!(check_path(workdir, path), Err(RestoreError::Refused { .. }))
    }

    #[test]
    fn links_and_files_above_a_path_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir(dir.join("real")).unwrap();
        fs::write(dir.join("file"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        assert!(check_path(dir, "real/a.txt").is_ok());
        assert!(check_path(dir, "new/deeper/a.txt").is_ok());
        assert!(
            check_path(dir, "link").is_ok(),
            "the link itself is replaced, not followed"
        );
        assert!(refused(dir, "link/a.txt"));
        assert!(refused(dir, "file/a.txt"));
    }

    proptest! {
        /// Whatever else a path holds, an absolute one, a `.`/`..`/empty component or a `.git`
        /// component (any case) is refused; plain components are not.
        #[test]
        fn hostile_paths_are_refused(
            parts in proptest::collection::vec("[a-zA-Z0-9_.-]{1,8}", 1..5),
            bad in prop_oneof![
                Just(".."), Just("."), Just(""), Just(".git"), Just(".GIT"), Just(".Git")
            ],
            at in 0usize..5,
            absolute in any::<bool>(),
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let plain = parts.iter().all(|p| {
                p != "." && p != ".." && !p.eq_ignore_ascii_case(".git")
            });
            prop_assume!(plain);
            prop_assert!(check_path(tmp.path(), &parts.join("/")).is_ok());
            let mut hostile = parts.clone();
            hostile.insert(at.min(parts.len()), bad.to_owned());
            prop_assert!(refused(tmp.path(), &hostile.join("/")));
            if absolute {
                let absolute = format!("/{}", parts.join("/"));
                prop_assert!(refused(tmp.path(), &absolute));
            }
        }
    }
}
