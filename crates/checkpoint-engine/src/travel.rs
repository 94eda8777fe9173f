//! Checkpoints travel with the repository: our refs (`refs/checkpoint/…`, one chain of commits per
//! task and per worktree's session log) hold the task journals and session logs, and go to a
//! remote and come back from it with plain git, bounded in time, never forced.
//!
//! | Module | What it holds |
//! |---|---|
//! | [`stream`] | one ref as a store: commits by compare-and-swap, the local cache and its import |
//! | [`push`] | pushing our refs to a remote within a budget, and what did not make it |
//! | [`fetch`] | fetching them on demand, failing open |
//! | [`objects`] | packing their objects as they accumulate, dropping those retention removed |
//! | [`prune`] | deleting on a remote the refs retention removed here |
//! | `queue` | the state file of what each remote has and what is still to go |
//!
//! Every ref of ours moves by fast-forward only: a rejected update means that two machines
//! diverged, and is reported with the ref's name, never forced. Remote names and URLs are passed
//! to git after `--`, so none can become an option, and git runs with the checks of
//! `git::call::run_remote` (its own process group, killed at the budget, no prompt).

pub mod fetch;
pub mod objects;
pub mod prune;
pub mod push;
mod queue;
pub mod stream;

use std::collections::BTreeMap;
use std::process::Output;
use std::time::Duration;

use crate::git::Repo;
use crate::git::call::{self, GitCallError};
use crate::store::StoreError;
use checkpoint_core::sanitize;

/// Where every ref of ours lives.
pub const NAMESPACE: &str = "refs/checkpoint/";

/// The refspec that moves all of them, name for name, without `+`: fast-forwards only.
pub(crate) const REFSPEC: &str = "refs/checkpoint/*:refs/checkpoint/*";

/// How long a git call that stays on this machine may take.
const LOCAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Our refs, by full name, with the commit each points to.
pub type Refs = BTreeMap<String, String>;

/// Why refs could not travel. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TravelError {
    /// A git call failed (the remote unreachable, a timeout).
    #[error(transparent)]
    Git(#[from] GitCallError),
    /// The state file of what is queued could not be read or written.
    #[error("push queue: {0}")]
    Queue(#[from] StoreError),
}

/// The ref of the task `id`: `refs/checkpoint/tasks/<id>`.
pub fn task_ref(id: &str) -> String {
    format!("{NAMESPACE}tasks/{id}")
}

/// Every ref of ours in `repo`.
pub fn local_refs(repo: &Repo) -> Result<Refs, GitCallError> {
    let args = [
        "for-each-ref",
        "--format=%(objectname) %(refname)",
        NAMESPACE,
    ];
    let out = call::output(call::git(repo, &args, None), "for-each-ref", LOCAL_TIMEOUT)?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(oid, name)| (name.to_owned(), oid.to_owned()))
        .collect())
}

/// The remote to fetch from when none is named: the current branch's upstream remote, else
/// `origin`, else the only remote. `None` when there is no remote (or git cannot say).
pub fn default_remote(repo: &Repo) -> Option<String> {
    let lines = |args: &[&str], what| {
        call::output(call::git(repo, args, None), what, LOCAL_TIMEOUT)
            .map(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let remotes = lines(&["remote"], "remote");
    let branch = lines(&["symbolic-ref", "-q", "--short", "HEAD"], "symbolic-ref");
    let upstream = branch.first().and_then(|branch| {
        let key = format!("branch.{branch}.remote");
        lines(&["config", "--get", &key], "config")
            .into_iter()
            .next()
    });
    if let Some(upstream) = upstream.filter(|u| remotes.contains(u)) {
        return Some(upstream);
    }
    if remotes.iter().any(|r| r == "origin") {
        return Some("origin".to_owned());
    }
    match remotes.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    }
}

/// `n checkpoint ref(s)`.
fn refs_count(n: usize) -> String {
    format!("{n} checkpoint ref{}", if n == 1 { "" } else { "s" })
}

/// At most five ref names, shown safely, then how many more.
fn names(refs: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text: Vec<String> = refs.iter().take(SHOWN).map(|r| sanitize::name(r)).collect();
    if refs.len() > SHOWN {
        text.push(format!("and {} more", refs.len() - SHOWN));
    }
    text.join(", ")
}

/// Why a call to a remote did not happen, on one line: "timed out after 3 s" or git's reason.
fn reason(err: &GitCallError) -> String {
    match err {
        GitCallError::TimedOut { timeout, .. } => {
            format!("timed out after {} s", timeout.as_secs_f64())
        }
        other => sanitize::line(&other.to_string(), sanitize::ERROR_CHARS),
    }
}

/// Why a git that ran failed, on one line: the first line of its stderr (`fatal: …`), else how
/// it exited.
fn failed(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    match stderr.lines().find(|line| !line.trim().is_empty()) {
        Some(line) => sanitize::line(line, sanitize::ERROR_CHARS),
        None => format!("git {}", out.status),
    }
}

#[cfg(test)]
mod tests;
