//! Fetching our refs on demand: when a command needs a checkpoint, task or receipt that is not
//! here (another machine made it), it fetches `refs/checkpoint/*` from the remote, within a
//! budget, and goes on with what is local when that fails. The store sees the refs that moved
//! and reads their state itself; this only moves refs.

use std::time::Duration;

use super::{REFSPEC, default_remote, local_refs, names, reason, refs_count};
use crate::git::Repo;
use crate::git::call;
use checkpoint_core::sanitize;

/// How a fetch of our refs went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// There is no remote to fetch from.
    NoRemote,
    /// The fetch ran.
    Fetched {
        /// The remote fetched from.
        remote: String,
        /// Refs that are new here or moved forward.
        updated: Vec<String>,
        /// Refs whose remote commit does not descend from ours (two machines diverged); ours
        /// are kept, never overwritten.
        rejected: Vec<String>,
    },
    /// The fetch did not happen (offline, a timeout, no such remote); what is local stands.
    Failed {
        /// The remote it was tried from.
        remote: String,
        /// Why, on one line.
        reason: String,
    },
}

impl FetchOutcome {
    /// The one line for the user when something did not come; `None` otherwise.
    pub fn note(&self) -> Option<String> {
        match self {
            FetchOutcome::Failed { remote, reason } => Some(format!(
                "checkpoint: could not fetch checkpoints from {} ({reason}); going on with what \
                 is here",
                sanitize::name(remote)
            )),
            FetchOutcome::Fetched {
                remote, rejected, ..
            } if !rejected.is_empty() => Some(format!(
                "checkpoint: {} not fetched from {}: ours has diverged from the remote's (not a \
                 fast-forward; never forced): {}",
                refs_count(rejected.len()),
                sanitize::name(remote),
                names(rejected)
            )),
            _ => None,
        }
    }

    /// Whether any ref moved here.
    pub fn updated_any(&self) -> bool {
        matches!(self, FetchOutcome::Fetched { updated, .. } if !updated.is_empty())
    }
}

/// Fetches every ref of ours from `remote` (a name or a URL) as fast-forwards, within `budget`,
/// writing no `FETCH_HEAD`, fetching no tags and running no maintenance. Never fails: a fetch that
/// did not happen is [`FetchOutcome::Failed`].
pub fn fetch(repo: &Repo, remote: &str, budget: Duration) -> FetchOutcome {
    let failed = |reason: String| FetchOutcome::Failed {
        remote: remote.to_owned(),
        reason,
    };
    let before = match local_refs(repo) {
        Ok(refs) => refs,
        Err(err) => return failed(reason(&err)),
    };
    let args = [
        "fetch",
        "--no-write-fetch-head",
        "--no-tags",
        "--no-recurse-submodules",
        "--no-auto-gc",
        "--",
        remote,
        REFSPEC,
    ];
    let out = match call::run_remote(call::git(repo, &args, None), "fetch", budget) {
        Ok(out) => out,
        Err(err) => return failed(reason(&err)),
    };
    let rejected = rejected(&String::from_utf8_lossy(&out.stderr));
    if rejected.is_empty() && !out.status.success() {
        return failed(super::failed(&out));
    }
    let after = local_refs(repo).unwrap_or_default();
    let updated = after
        .iter()
        .filter(|(name, oid)| before.get(*name) != Some(*oid))
        .map(|(name, _)| name.clone())
        .collect();
    FetchOutcome::Fetched {
        remote: remote.to_owned(),
        updated,
        rejected,
    }
}

/// [`fetch`] from the remote to use when none is named: the current branch's upstream remote,
/// else `origin`, else the only remote ([`super::default_remote`]).
pub fn fetch_default(repo: &Repo, budget: Duration) -> FetchOutcome {
    match default_remote(repo) {
        Some(remote) => fetch(repo, &remote, budget),
        None => FetchOutcome::NoRemote,
    }
}

/// The refs git's fetch refused as not fast-forward, from its stderr (`LC_ALL=C`):
/// ` ! [rejected]   <from> -> <to>  (non-fast-forward)`.
fn rejected(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|line| line.trim_start().starts_with("! [rejected]"))
        .filter_map(|line| line.split_once(" -> "))
        .filter_map(|(_, rest)| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejected_refs_are_read_from_the_fetch_report() {
        let stderr = "From /tmp/gt/remote\n \
             ! [rejected]        refs/checkpoint/sessions/main -> refs/checkpoint/sessions/main  (non-fast-forward)\n \
             * [new ref]         refs/checkpoint/tasks/a -> refs/checkpoint/tasks/a\n";
        assert_eq!(rejected(stderr), ["refs/checkpoint/sessions/main"]);
        let outcome = FetchOutcome::Fetched {
            remote: "origin".into(),
            updated: vec![],
            rejected: rejected(stderr),
        };
        insta::assert_snapshot!(outcome.note().unwrap(), @"checkpoint: 1 checkpoint ref not fetched from origin: ours has diverged from the remote's (not a fast-forward; never forced): refs/checkpoint/sessions/main");
        let offline = FetchOutcome::Failed {
            remote: "origin".into(),
            reason: "timed out after 10 s".into(),
        };
        insta::assert_snapshot!(offline.note().unwrap(), @"checkpoint: could not fetch checkpoints from origin (timed out after 10 s); going on with what is here");
        assert_eq!(FetchOutcome::NoRemote.note(), None);
    }
}
