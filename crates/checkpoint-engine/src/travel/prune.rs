//! `checkpoint cleanup --remote`: deleting on a remote the refs of ours that retention removed
//! here. Only a ref the remote had when it was listed in this same run, that was here after this
//! run's fetch and is gone now is deleted, and only while the remote still holds the commit it
//! was seen with (`--force-with-lease`): a ref never seen, or moved on by another machine since,
//! stays.

use std::time::Duration;

use super::{NAMESPACE, Refs, TravelError};
use crate::git::Repo;
use crate::git::call;

/// Every ref of ours on `remote`, with its commit (`git ls-remote`), within `budget`.
pub fn remote_refs(repo: &Repo, remote: &str, budget: Duration) -> Result<Refs, TravelError> {
    let pattern = format!("{NAMESPACE}*");
    let args = ["ls-remote", "--refs", "--", remote, &pattern];
    let out = call::run_remote(call::git(repo, &args, None), "ls-remote", budget)?;
    let out = call::succeeded(out, "ls-remote")?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .filter(|(_, name)| name.starts_with(NAMESPACE))
        .map(|(oid, name)| (name.to_owned(), oid.to_owned()))
        .collect())
}

/// What to delete on the remote: the refs `seen` there that were here after the fetch
/// (`fetched`) and are not here any more (`now`), each with the commit it was seen with.
pub fn plan(seen: &Refs, fetched: &Refs, now: &Refs) -> Refs {
    seen.iter()
        .filter(|(name, _)| fetched.contains_key(*name) && !now.contains_key(*name))
        .map(|(name, oid)| (name.clone(), oid.clone()))
        .collect()
}

/// What the remote deleted and what it refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Deleted on the remote.
    pub deleted: Vec<String>,
    /// Left there: the remote's commit moved since it was seen, or it refused.
    pub refused: Vec<String>,
}

/// Deletes `refs` on `remote`, each only while it still holds the commit given, within `budget`.
pub fn delete_remote(
    repo: &Repo,
    remote: &str,
    refs: &Refs,
    budget: Duration,
) -> Result<Pruned, TravelError> {
    if refs.is_empty() {
        return Ok(Pruned::default());
    }
    let mut args: Vec<String> = ["push", "--no-verify", "--porcelain"]
        .map(str::to_owned)
        .into();
    args.extend(
        refs.iter()
            .map(|(name, oid)| format!("--force-with-lease={name}:{oid}")),
    );
    args.push("--".to_owned());
    args.push(remote.to_owned());
    args.extend(refs.keys().map(|name| format!(":{name}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = call::run_remote(call::git(repo, &args, None), "push", budget)?;
    let mut pruned = Pruned::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut fields = line.split('\t');
        let (Some(flag), Some(spec)) = (fields.next(), fields.next()) else {
            continue;
        };
        let name = spec.trim_start_matches(':').to_owned();
        match flag {
            "-" => pruned.deleted.push(name),
            "!" => pruned.refused.push(name),
            _ => {}
        }
    }
    if pruned.deleted.is_empty() && pruned.refused.is_empty() {
        call::succeeded(out, "push")?;
    }
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(names: &[&str]) -> Refs {
        names
            .iter()
            .map(|n| (n.to_string(), format!("oid-{n}")))
            .collect()
    }

    #[test]
    fn only_refs_seen_fetched_and_gone_are_deleted() {
        let seen = refs(&["tasks/gone", "tasks/kept", "tasks/never-fetched"]);
        let fetched = refs(&["tasks/gone", "tasks/kept", "tasks/local-only"]);
        let now = refs(&["tasks/kept"]);
        assert_eq!(plan(&seen, &fetched, &now), refs(&["tasks/gone"]));
    }
}
