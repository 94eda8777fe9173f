//! `checkpoint diff`: what changed in the worktree since a session checkpoint, counted in files
//! and lines, so a user can verify the work before clearing the context.
//!
//! The paths looked at are the checkpoint's recorded files, the current change set and, when
//! `HEAD` moved since the checkpoint, every path that differs between the two commits: work that
//! was committed after the checkpoint still counts.
//!
//! For each path, the *old* side is the content the checkpoint kept for it (a recorded path
//! without a hash was absent) or, for a path the checkpoint did not record, the file in the
//! checkpoint's `HEAD` commit. The *new* side is the worktree file. Paths whose two sides are
//! equal are left out. Lines are counted like `git diff --numstat` counts them, with the
//! [`similar`] crate.
//!
//! Some differences cannot be counted in lines; they still count as changed files:
//!
//! - Content that is not UTF-8 or holds a NUL byte is binary: [`FileDelta::binary`], 0 lines.
//! - A recorded file whose content was too big to keep ([`super::MAX_BLOB_BYTES`]) is compared
//!   by its hash only; when it differs it is a changed file with 0 lines, `binary` when the
//!   content that is known (the worktree's) is binary. The same holds for worktree files bigger
//!   than [`MAX_COUNTED_BYTES`], which are hashed but not read into memory.
//! - A checkpoint records at most [`super::record::MAX_FILES`] files; a changed path beyond those
//!   is compared with the checkpoint's `HEAD`, so it may count more lines than changed since.
//!
//! Contents are compared raw: the worktree bytes against the blob bytes, without git's
//! end-of-line conversion or smudge filters (running those could mean running Git LFS).
//! A symbolic link is followed on the worktree side, as the checkpoint did when it hashed it.
//!
//! Git is asked at most three times: the status (see [`crate::git::changes`]), the paths changed
//! between two commits when `HEAD` moved, and one `git cat-file --batch` for every old content
//! needed (a path holding a newline, which the batch protocol cannot carry, gets a call of its
//! own). Each call gets [`GIT_TIMEOUT`]; a missing or hanging git is a [`DiffError`], never a
//! hang. A status that times out is abandoned on its helper thread, which ends when git does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;
use similar::{DiffTag, TextDiff};

use super::record::FileState;
use super::{Continuity, SessionCheckpoint};
use crate::file_content::FileContent;
use crate::git::call::{GitCallError, git, output, run};
use crate::git::{self, GitError, Repo};
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::policy::GitBackend;

/// How long one git call may take before the diff gives up on it.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(5);
/// Worktree files bigger than this are compared by hash; their lines are not counted.
pub const MAX_COUNTED_BYTES: u64 = 16 * 1024 * 1024;
/// How long the line diff of one file may take before it settles for an approximation (which
/// may count a few more lines than a minimal diff would).
const LINE_DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// The most lines of one file's diff `checkpoint restore --dry-run` shows.
pub const PATCH_LINES: usize = 60;

/// How one file differs from the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDelta {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// Lines added since the checkpoint.
    pub added: u64,
    /// Lines removed since the checkpoint.
    pub removed: u64,
    /// The content is binary (not UTF-8, or holds a NUL byte): no lines are counted.
    pub binary: bool,
}

/// What changed in the worktree since a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkDiff {
    /// The id of the checkpoint compared with.
    pub checkpoint: u64,
    /// When that checkpoint was taken.
    pub at: Timestamp,
    /// The changed files, sorted by path.
    pub files: Vec<FileDelta>,
}

impl WorkDiff {
    /// Whether any file changed since the checkpoint.
    pub fn changed(&self) -> bool {
        !self.files.is_empty()
    }

    /// Lines added, over all files.
    pub fn added(&self) -> u64 {
        self.files.iter().map(|f| f.added).sum()
    }

    /// Lines removed, over all files.
    pub fn removed(&self) -> u64 {
        self.files.iter().map(|f| f.removed).sum()
    }
}

/// Why the diff could not be computed. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// The current change set could not be read.
    #[error("cannot read the change set: {0}")]
    Status(#[source] GitError),
    /// A git call failed: it could not start, timed out or exited unsuccessfully.
    #[error(transparent)]
    Call(#[from] GitCallError),
    /// Git printed something other than what was asked for.
    #[error("unexpected git {what} output: {reason}")]
    Output {
        /// Which git command.
        what: &'static str,
        /// What was wrong with it.
        reason: String,
    },
}

/// Compares the worktree of `repo` now with the checkpoint `from` (see the module documentation
/// for what is compared and how). `backend` reads the current change set.
pub fn diff(
    continuity: &Continuity,
    repo: &Repo,
    backend: GitBackend,
    from: &SessionCheckpoint,
) -> Result<WorkDiff, DiffError> {
    let (old, _) = then(continuity, repo, backend, from)?;
    let files = old
        .into_iter()
        .filter_map(|(path, old)| {
            let new = worktree(&repo.workdir, &path);
            compare(&old, &new).map(|(added, removed, binary)| FileDelta {
                path,
                added,
                removed,
                binary,
            })
        })
        .collect();
    Ok(WorkDiff {
        checkpoint: from.id,
        at: from.at,
        files,
    })
}

/// What each path that may differ from the checkpoint `from` held then (see the module
/// documentation for which paths and where their old side comes from), and the current change
/// set.
pub(super) fn then(
    continuity: &Continuity,
    repo: &Repo,
    backend: GitBackend,
    from: &SessionCheckpoint,
) -> Result<(BTreeMap<String, Side>, ChangeSet), DiffError> {
    let current = changes_within(repo, backend, GIT_TIMEOUT)?;
    let head_now = current.head.commit();

    let mut old: BTreeMap<String, Side> = from
        .files
        .iter()
        .map(|file| (file.path.clone(), recorded(continuity, file)))
        .collect();
    let mut unrecorded: BTreeSet<String> = current
        .changes
        .iter()
        .map(|change| change.path.clone())
        .collect();
    if from.head.as_deref() != head_now {
        unrecorded.extend(moved_paths(repo, from.head.as_deref(), head_now)?);
    }
    unrecorded.retain(|path| !old.contains_key(path));
    match &from.head {
        Some(commit) => {
            let mut blobs = read_blobs(repo, commit, &unrecorded)?;
            for path in unrecorded {
                let side = blobs.remove(&path).map_or(Side::Absent, Side::Content);
                old.insert(path, side);
            }
        }
        None => old.extend(unrecorded.into_iter().map(|path| (path, Side::Absent))),
    }
    Ok((old, current))
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Side {
    /// No file (deleted, never created, or not a regular file).
    Absent,
    /// The file's bytes.
    Content(Vec<u8>),
    /// Only the SHA-256 of the content is known.
    Hashed(String),
}

/// The old side of a path the checkpoint recorded.
fn recorded(continuity: &Continuity, file: &FileState) -> Side {
    match &file.sha256 {
        None => Side::Absent,
        Some(sha) => continuity
            .blob(sha)
            .map_or_else(|| Side::Hashed(sha.clone()), Side::Content),
    }
}

/// The worktree side of `path`. Like the checkpoint's capture, a symbolic link is its target
/// (never followed) and anything else that is not a regular file is absent.
pub(super) fn worktree(workdir: &Path, path: &str) -> Side {
    match FileContent::read(&workdir.join(path), MAX_COUNTED_BYTES) {
        FileContent::File {
            bytes: Some(bytes), ..
        } => Side::Content(bytes),
        FileContent::File { id, .. } => Side::Hashed(id),
        FileContent::Link(target) => Side::Content(target),
        FileContent::Missing | FileContent::Other => Side::Absent,
    }
}

/// `(added, removed, binary)` when the two sides differ; `None` when they are equal.
pub(super) fn compare(old: &Side, new: &Side) -> Option<(u64, u64, bool)> {
    match (old, new) {
        (Side::Absent, Side::Absent) => None,
        (Side::Hashed(a), Side::Hashed(b)) => (a != b).then_some((0, 0, false)),
        (Side::Hashed(sha), Side::Content(bytes)) | (Side::Content(bytes), Side::Hashed(sha)) => {
            (checkpoint_core::hex::sha256_hex(bytes) != *sha).then(|| (0, 0, is_binary(bytes)))
        }
        (Side::Hashed(_), Side::Absent) | (Side::Absent, Side::Hashed(_)) => Some((0, 0, false)),
        (Side::Content(a), Side::Content(b)) if a == b => None,
        (old, new) => {
            let (old, new) = (old.bytes(), new.bytes());
            match (text(old), text(new)) {
                (Some(old), Some(new)) => {
                    let (added, removed) = count_lines(old, new);
                    Some((added, removed, false))
                }
                _ => Some((0, 0, true)),
            }
        }
    }
}

/// The unified diff (3 lines of context, `a/PATH` → `b/PATH`) from `old` to `new`, at most
/// [`PATCH_LINES`] lines of it and then how many more; `None` when either side is binary or
/// only hashed, or nothing differs.
pub(super) fn patch(old: &Side, new: &Side, path: &str) -> Option<String> {
    if matches!(old, Side::Hashed(_)) || matches!(new, Side::Hashed(_)) {
        return None;
    }
    let (old, new) = (text(old.bytes())?, text(new.bytes())?);
    if old == new {
        return None;
    }
    let diff = TextDiff::configure()
        .timeout(LINE_DIFF_TIMEOUT)
        .diff_lines(old, new);
    let full = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .missing_newline_hint(true)
        .to_string();
    let lines: Vec<&str> = full.lines().collect();
    let mut shown = lines[..lines.len().min(PATCH_LINES)].join("\n");
    if lines.len() > PATCH_LINES {
        shown.push_str(&format!(
            "\n… {} more lines (`checkpoint restore --files {path}` restores this file alone)",
            lines.len() - PATCH_LINES
        ));
    }
    Some(shown)
}

impl Side {
    /// The content; empty when absent or only hashed.
    fn bytes(&self) -> &[u8] {
        match self {
            Side::Content(bytes) => bytes,
            Side::Absent | Side::Hashed(_) => &[],
        }
    }
}

/// Whether `bytes` is binary: not UTF-8, or holding a NUL byte.
fn is_binary(bytes: &[u8]) -> bool {
    text(bytes).is_none()
}

/// `bytes` as text, unless they are binary.
fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// Lines added and removed from `old` to `new`. A last line without a newline is a line, and
/// adding its newline changes it, as in git.
fn count_lines(old: &str, new: &str) -> (u64, u64) {
    let diff = TextDiff::configure()
        .timeout(LINE_DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let (old_lines, new_lines) = (old_range.len() as u64, new_range.len() as u64);
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => removed += old_lines,
            DiffTag::Insert => added += new_lines,
            DiffTag::Replace => {
                removed += old_lines;
                added += new_lines;
            }
        }
    }
    (added, removed)
}

/// The change set, read on a helper thread so that a hanging git (or a very slow status) ends in
/// [`GitCallError::TimedOut`] after `timeout`. The thread is left to finish by itself then.
pub fn changes_within(
    repo: &Repo,
    backend: GitBackend,
    timeout: Duration,
) -> Result<ChangeSet, DiffError> {
    let (sender, receiver) = mpsc::channel();
    let repo = repo.clone();
    thread::Builder::new()
        .name("checkpoint-diff-status".to_owned())
        .spawn(move || {
            // The receiver is gone when the wait timed out; the result is not needed then.
            let _ = sender.send(git::changes(&repo, backend));
        })
        .map_err(|source| GitCallError::Spawn {
            what: "status",
            source,
        })?;
    match receiver.recv_timeout(timeout) {
        Ok(changes) => changes.map_err(DiffError::Status),
        Err(RecvTimeoutError::Timeout) => Err(GitCallError::TimedOut {
            what: "status",
            timeout,
        }
        .into()),
        Err(RecvTimeoutError::Disconnected) => Err(DiffError::Output {
            what: "status",
            reason: "the status reader stopped without an answer".to_owned(),
        }),
    }
}

/// The paths that differ between the commits `from` and `to` (all of the one commit's paths
/// when the other is unknown).
fn moved_paths(
    repo: &Repo,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<Vec<String>, DiffError> {
    let out = match (from, to) {
        (Some(from), Some(to)) => {
            let args = [
                "diff-tree",
                "-r",
                "-z",
                "--name-only",
                "--no-renames",
                "--no-ext-diff",
                "--no-textconv",
                from,
                to,
            ];
            output(git(repo, &args, None), "diff-tree", GIT_TIMEOUT)?
        }
        (Some(only), None) | (None, Some(only)) => {
            let args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", only];
            output(git(repo, &args, None), "ls-tree", GIT_TIMEOUT)?
        }
        (None, None) => return Ok(Vec::new()),
    };
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|path| !path.is_empty())
        .map(|path| String::from_utf8_lossy(path).into_owned())
        .collect())
}

/// The content of each of `paths` in `commit`; paths that are not a blob there are left out.
/// One `git cat-file --batch` reads them all; a path holding a newline (which the batch protocol
/// cannot carry) gets a `git cat-file blob` of its own.
fn read_blobs(
    repo: &Repo,
    commit: &str,
    paths: &BTreeSet<String>,
) -> Result<BTreeMap<String, Vec<u8>>, DiffError> {
    let (odd, batched): (Vec<&String>, Vec<&String>) =
        paths.iter().partition(|path| path.contains('\n'));
    let mut blobs = BTreeMap::new();
    if !batched.is_empty() {
        let input: String = batched
            .iter()
            .map(|path| format!("{commit}:{path}\n"))
            .collect();
        let expression = git(repo, &["cat-file", "--batch"], Some(input.into_bytes()));
        let out = output(expression, "cat-file", GIT_TIMEOUT)?;
        let contents = parse_batch(&out.stdout, batched.len())?;
        for (path, content) in batched.into_iter().zip(contents) {
            if let Some(content) = content {
                blobs.insert(path.clone(), content);
            }
        }
    }
    for path in odd {
        let object = format!("{commit}:{path}");
        // A failure means the path is not a blob in `commit`: absent.
        let out = run(
            git(repo, &["cat-file", "blob", &object], None),
            "cat-file",
            GIT_TIMEOUT,
        )?;
        if out.status.success() {
            blobs.insert(path.clone(), out.stdout);
        }
    }
    Ok(blobs)
}

/// The type and size of the object a `git cat-file --batch(-check)` header line describes;
/// `None` for a missing one. A found object is "<oid> <type> <size>"; anything else names the
/// object (which may hold spaces) and says what is wrong with it, e.g. "<name> missing".
fn object_header(header: &str) -> Result<Option<(&str, usize)>, String> {
    let fields: Vec<&str> = header.split(' ').collect();
    if let [oid, kind, size] = fields.as_slice()
        && oid.bytes().all(|b| b.is_ascii_hexdigit())
        && let Ok(size) = size.parse::<usize>()
    {
        return Ok(Some((kind, size)));
    }
    if header.ends_with(" missing") || header.ends_with(" ambiguous") {
        return Ok(None);
    }
    Err(format!("unexpected header `{header}`"))
}

/// Splits `git cat-file --batch` output into `count` answers: the content of each blob, `None`
/// for a missing object or one that is not a blob.
fn parse_batch(mut out: &[u8], count: usize) -> Result<Vec<Option<Vec<u8>>>, DiffError> {
    let malformed = |reason: &str| DiffError::Output {
        what: "cat-file",
        reason: reason.to_owned(),
    };
    let mut answers = Vec::with_capacity(count);
    for _ in 0..count {
        let end = out
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| malformed("the output ends early"))?;
        let header = String::from_utf8_lossy(&out[..end]).into_owned();
        out = &out[end + 1..];
        let Some((kind, size)) = object_header(&header).map_err(|reason| malformed(&reason))?
        else {
            answers.push(None);
            continue;
        };
        if out.len() <= size || out[size] != b'\n' {
            return Err(malformed("an object's content ends early"));
        }
        answers.push((kind == "blob").then(|| out[..size].to_vec()));
        out = &out[size + 1..];
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_like_git() {
        assert_eq!(count_lines("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
        assert_eq!(count_lines("", "x\ny"), (2, 0));
        assert_eq!(count_lines("x\n", ""), (0, 1));
        // Adding the missing final newline changes the last line.
        assert_eq!(count_lines("a\nb", "a\nb\n"), (1, 1));
    }

    #[test]
    fn sides_compare_by_content_or_hash() {
        let content = |s: &str| Side::Content(s.as_bytes().to_vec());
        let hashed = |s: &str| Side::Hashed(checkpoint_core::hex::sha256_hex(s.as_bytes()));
        assert_eq!(compare(&Side::Absent, &Side::Absent), None);
        assert_eq!(compare(&content("a\n"), &content("a\n")), None);
        assert_eq!(
            compare(&Side::Absent, &content("a\nb\n")),
            Some((2, 0, false))
        );
        assert_eq!(compare(&content("a\n"), &Side::Absent), Some((0, 1, false)));
        assert_eq!(compare(&Side::Absent, &content("")), Some((0, 0, false)));
        assert_eq!(compare(&hashed("big"), &content("big")), None);
        assert_eq!(
            compare(&hashed("big"), &content("bigger")),
            Some((0, 0, false))
        );
        assert_eq!(compare(&content("a"), &hashed("b")), Some((0, 0, false)));
        assert_eq!(compare(&hashed("a"), &hashed("a")), None);
        assert_eq!(compare(&hashed("a"), &Side::Absent), Some((0, 0, false)));
        let nul = Side::Content(b"a\0b".to_vec());
        assert_eq!(compare(&content("ab"), &nul), Some((0, 0, true)));
        assert_eq!(compare(&hashed("x"), &nul), Some((0, 0, true)));
        let latin1 = Side::Content(vec![b'a', 0xe9, b'\n']);
        assert_eq!(compare(&Side::Absent, &latin1), Some((0, 0, true)));
    }

    #[test]
    fn batch_output_is_split_per_object() {
        let oid = "0123456789abcdef0123456789abcdef01234567";
        let out = format!(
            "{oid} blob 3\nabc\nc0ffee:gone file missing\n{oid} tree 0\n\n{oid} blob 0\n\n"
        );
        let answers = parse_batch(out.as_bytes(), 4).unwrap();
        assert_eq!(
            answers,
            [Some(b"abc".to_vec()), None, None, Some(Vec::new())]
        );
        let err = parse_batch(format!("{oid} blob 9\nabc\n").as_bytes(), 1).unwrap_err();
        assert!(err.to_string().contains("ends early"), "{err}");
        assert!(parse_batch(b"", 1).is_err());
        assert!(parse_batch(b"what is this\n", 1).is_err());
    }
}
