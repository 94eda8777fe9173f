//! Per-session memory of the stop gate: consecutive blocks, shown actions, capture requests.
//!
//! One small JSON file per agent session under `<state dir>/sessions/`, updated in one
//! transaction under its sidecar lock (see [`crate::store`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::decide::SessionFacts;
use crate::event::Agent;
use crate::store::{self, StoreError};

/// What is stored for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The facts `decide` reads.
    #[serde(flatten)]
    pub facts: SessionFacts,
    /// Digest of the last block message. Gemini re-sends a block reason as the next prompt; a
    /// prompt with this digest is that retry, not a new user turn.
    pub last_block_digest: Option<String>,
    /// Context for the agent that could not go with the event that produced it (Gemini's
    /// `BeforeTool` cannot add context): delivered with the session's next tool result.
    #[serde(default)]
    pub pending_context: Option<String>,
}

/// The session files of one state directory.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    /// Sessions kept under `<state_dir>/sessions/`.
    pub fn new(state_dir: &Path) -> SessionStore {
        SessionStore {
            dir: state_dir.join("sessions"),
        }
    }

    fn path(&self, agent: Agent, session_id: &str) -> Result<PathBuf, StoreError> {
        let id = store::validate_id(session_id)?;
        Ok(self.dir.join(format!("{}-{id}.json", agent.name())))
    }

    /// The stored record, or an empty one for a new session.
    pub fn load(&self, agent: Agent, session_id: &str) -> Result<SessionRecord, StoreError> {
        Ok(store::read_json(&self.path(agent, session_id)?)?.unwrap_or_default())
    }

    /// Changes the record in one locked transaction.
    pub fn update<R>(
        &self,
        agent: Agent,
        session_id: &str,
        f: impl FnOnce(&mut SessionRecord) -> R,
    ) -> Result<R, StoreError> {
        store::update_json(&self.path(agent, session_id)?, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_and_ids_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        assert_eq!(
            store.load(Agent::Claude, "s1").unwrap(),
            SessionRecord::default()
        );
        store
            .update(Agent::Claude, "s1", |r| r.facts.consecutive_blocks = 2)
            .unwrap();
        assert_eq!(
            store
                .load(Agent::Claude, "s1")
                .unwrap()
                .facts
                .consecutive_blocks,
            2
        );
        assert_eq!(
            store.load(Agent::Codex, "s1").unwrap(),
            SessionRecord::default()
        );
        assert!(matches!(
            store.load(Agent::Claude, "../escape"),
            Err(StoreError::InvalidId(_))
        ));
    }
}
