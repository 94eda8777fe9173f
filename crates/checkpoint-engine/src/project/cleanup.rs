//! `checkpoint cleanup` for a project: the finished tasks past their retention
//! ([`checkpoint_core::journal::retention`]), the session files past theirs
//! ([`crate::session::SessionStore::expire`]) and the leftovers of interrupted writes
//! ([`crate::store::sweep_temp_files_under`]); the last two also at a session start, at most once
//! per [`HOUSEKEEPING_INTERVAL`] ([`Project::housekeep`]).

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;

use crate::session::{self, ExpiredSession, SessionRetention};
use crate::store::{self, StoreError};
use crate::travel::objects;
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

/// How often a session start expires session files and sweeps the state directory for the
/// leftovers of interrupted writes (which no write looks for: see [`crate::store`]).
pub const HOUSEKEEPING_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

/// The state directory's file whose modification time is the last housekeeping's.
const HOUSEKEEPING_STAMP: &str = "housekeeping";

impl Project {
    /// Removes (unless `dry_run`) the finished tasks past their retention, the session files
    /// past theirs (see [`SessionRetention`]: the continuity log's horizon and kept sessions,
    /// `journal.retention_sessions` and `journal.max_sessions`) and the leftovers of interrupted
    /// writes in the state directory.
    pub fn cleanup(&self, dry_run: bool) -> Result<Cleanup, ProjectError> {
        // The objects of our refs are packed first, so that those of the refs removed next are
        // dropped with them (best-effort, as when a save packs: the refs go either way).
        let repo = self.repo.as_ref().filter(|_| !dry_run);
        if let Some(repo) = repo {
            let _ = objects::pack(repo, false);
        }
        let tasks = self.journal().cleanup(self.host.now, dry_run)?;
        let sessions = self.expire_sessions(dry_run)?;
        if !dry_run {
            store::sweep_temp_files_under(&self.state_dir);
        }
        if let Some(repo) = repo {
            let _ = objects::pack(repo, true);
        }
        Ok(Cleanup { tasks, sessions })
    }

    /// At a session start: unless the state directory was housekept within
    /// [`HOUSEKEEPING_INTERVAL`] (or another process is at it), expires session files and
    /// sweeps the leftovers of interrupted writes, as [`Project::cleanup`] does. Returns whether
    /// it ran. The time is recorded first: a failure is retried an interval later, not at every
    /// session start.
    pub fn housekeep(&self) -> Result<bool, ProjectError> {
        let stamp = self.state_dir.join(HOUSEKEEPING_STAMP);
        let due = || {
            let last = std::fs::metadata(&stamp).and_then(|m| m.modified()).ok();
            let last = last.and_then(|t| jiff::Timestamp::try_from(t).ok());
            let next = last.and_then(|t| t.checked_add(HOUSEKEEPING_INTERVAL).ok());
            next.is_none_or(|next| next <= self.host.now)
        };
        if !due() {
            return Ok(false);
        }
        let _lock = match store::Lock::acquire_within(&stamp, Duration::ZERO) {
            Ok(lock) => lock,
            Err(StoreError::LockTimeout { .. }) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        if !due() {
            return Ok(false);
        }
        store::write_atomic(&stamp, b"")?;
        self.expire_sessions(false)?;
        store::sweep_temp_files_under(&self.state_dir);
        Ok(true)
    }

    fn expire_sessions(&self, dry_run: bool) -> Result<Vec<ExpiredSession>, ProjectError> {
        let log = self.continuity().load()?;
        let keep: HashSet<String> = (log.checkpoints.iter())
            .filter_map(|c| session::file_name(c.session.agent, &c.session.id).ok())
            .collect();
        let settings = &self.policy.journal;
        let retention = SessionRetention {
            horizon: log.checkpoints.iter().map(|c| c.at).min(),
            max_age: settings.retention_sessions,
            max_count: usize::try_from(settings.max_sessions).unwrap_or(usize::MAX),
            keep: &keep,
        };
        Ok(self.sessions().expire(&retention, self.host.now, dry_run)?)
    }
}
