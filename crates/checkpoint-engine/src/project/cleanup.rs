//! `checkpoint cleanup` for a project: the finished tasks past their retention
//! ([`checkpoint_core::journal::retention`]) and the session files past the continuity log's
//! ([`crate::session::SessionStore::expire`]).

use std::collections::HashSet;

use serde::Serialize;

use crate::session::{self, ExpiredSession};
use checkpoint_core::journal::Removal;

use super::{Project, ProjectError};

/// What a cleanup removed, or would remove.
#[derive(Debug, Clone, Serialize)]
pub struct Cleanup {
    /// The finished tasks.
    pub tasks: Vec<Removal>,
    /// The session files.
    pub sessions: Vec<ExpiredSession>,
}

impl Project {
    /// Removes (unless `dry_run`) the finished tasks past their retention and the session
    /// files older than every session checkpoint the continuity log keeps, except those of the
    /// sessions it keeps one of. With no session checkpoint kept, no session file expires.
    pub fn cleanup(&self, dry_run: bool) -> Result<Cleanup, ProjectError> {
        let now = self.host.now;
        let tasks = self.journal().cleanup(now, dry_run)?;
        let log = self.continuity().load()?;
        let sessions = match log.checkpoints.iter().map(|c| c.at).min() {
            None => Vec::new(),
            Some(horizon) => {
                let keep: HashSet<String> = (log.checkpoints.iter())
                    .filter_map(|c| session::file_name(c.session.agent, &c.session.id).ok())
                    .collect();
                self.sessions().expire(horizon, now, &keep, dry_run)?
            }
        };
        Ok(Cleanup { tasks, sessions })
    }
}
