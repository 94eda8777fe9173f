//! A repository's identity, which an approval is keyed by besides its path: a random id that
//! `checkpoint trust` writes into the repository's common git directory (`.git/checkpoint-identity`
//! of the main worktree, shared by its linked worktrees) and records in the approval.
//!
//! A clone never carries it (nothing under `.git` is cloned), so another repository cloned to an
//! approved path has none, or another: it runs nothing. Root commits were the other candidate;
//! finding them walks the whole history on every stop, and an unborn branch has none. An agent
//! can delete or change the file: that only makes the repository another one, which runs
//! nothing and blocks stops that need tests — never an open gate.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use checkpoint_core::hex::sha256_hex;

use crate::bounded::read_regular_text;
use crate::git::Repo;

/// The file's name in the common git directory.
pub const IDENTITY_FILE: &str = "checkpoint-identity";

/// The most bytes of the file read.
const MAX_BYTES: u64 = 256;

/// The common git directory of `repo`: its own for a main worktree, the main one's for a linked
/// worktree (`<common>/worktrees/<name>`).
fn common_dir(repo: &Repo) -> PathBuf {
    let parent = repo.git_dir.parent();
    match parent {
        Some(worktrees) if worktrees.file_name().is_some_and(|n| n == "worktrees") => worktrees
            .parent()
            .map_or_else(|| repo.git_dir.clone(), Path::to_path_buf),
        _ => repo.git_dir.clone(),
    }
}

/// The identity of `repo`; `None` when it has none (never approved by this version, or a clone
/// at an approved path) or it cannot be read.
pub fn read(repo: &Repo) -> Option<String> {
    let text = read_regular_text(&common_dir(repo).join(IDENTITY_FILE), MAX_BYTES).ok()?;
    let id = text.trim();
    (!id.is_empty()).then(|| id.to_owned())
}

/// The identity of `repo`, written first when it has none.
pub fn ensure(repo: &Repo) -> io::Result<String> {
    if let Some(id) = read(repo) {
        return Ok(id);
    }
    let seed = format!(
        "{}\n{}\n{:?}\n{:?}",
        repo.git_dir.display(),
        std::process::id(),
        std::time::SystemTime::now(),
        std::thread::current().id(),
    );
    let id = sha256_hex(seed.as_bytes())[..32].to_owned();
    let path = common_dir(repo).join(IDENTITY_FILE);
    let mut file = std::fs::File::create(&path)?;
    writeln!(file, "{id}")?;
    Ok(id)
}
