//! The state file of the pushes, `<state-dir>/travel.json`: per remote, the commit each ref of
//! ours had when the remote last took it, and the refs still to go (with why), so that a push
//! that timed out says how many did not make it and the next one can say they went.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Refs;
use crate::store::{self, StoreError};

/// The file name, in the project's state directory.
const FILE: &str = "travel.json";

/// Everything the file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Queue {
    remotes: BTreeMap<String, RemoteState>,
}

/// What one remote has of ours and what is still to go there.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RemoteState {
    /// Each ref the remote took, with the commit it took.
    pushed: Refs,
    /// Refs whose local commit the remote does not have yet.
    queued: Vec<String>,
    /// Why they did not go, on one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

/// Records that `remote` now has `taken` (refs and commits), given every ref of ours `local`,
/// and returns the refs still to go there (sorted). A remote with nothing to go is forgotten
/// but for what it took.
pub(super) fn record(
    state_dir: &Path,
    remote: &str,
    local: &Refs,
    taken: &[String],
    reason: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    store::update_json(&path(state_dir), |queue: &mut Queue| {
        let state = queue.remotes.entry(remote.to_owned()).or_default();
        state.pushed.retain(|name, _| local.contains_key(name));
        for name in taken {
            if let Some(oid) = local.get(name) {
                state.pushed.insert(name.clone(), oid.clone());
            }
        }
        state.queued = local
            .iter()
            .filter(|(name, oid)| state.pushed.get(*name) != Some(*oid))
            .map(|(name, _)| name.clone())
            .collect();
        state.reason = (!state.queued.is_empty())
            .then(|| reason.map(str::to_owned))
            .flatten();
        state.queued.clone()
    })
}

/// The remotes that have refs queued for them, by name.
pub(super) fn waiting(state_dir: &Path) -> Result<Vec<String>, StoreError> {
    let queue: Option<Queue> = store::read_json(&path(state_dir))?;
    Ok(queue
        .map(|q| {
            (q.remotes.into_iter())
                .filter(|(_, state)| !state.queued.is_empty())
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default())
}
