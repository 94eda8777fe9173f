//! Retention: removing the finished tasks older than their end state's retention.

use std::fs;

use jiff::Timestamp;

use super::{Active, Journal, JournalError};
use crate::store::{self, StoreError};
use crate::travel::stream::Stream;
use checkpoint_core::journal::{Removal, retention};

impl Journal {
    /// Removes (unless `dry_run`) every finished task older than its end state's retention.
    /// Unfinished and unreadable tasks are never touched.
    pub fn cleanup(&self, now: Timestamp, dry_run: bool) -> Result<Vec<Removal>, JournalError> {
        let mut removed = Vec::new();
        let active = self.active_id()?;
        for id in self.task_ids()? {
            let Ok(task) = self.load(&id) else {
                continue;
            };
            let Some(removal) = retention::expired(&task, now, self.settings()) else {
                continue;
            };
            if !dry_run {
                let dir = self.task_dir(&id)?;
                let lock = store::Lock::acquire(&self.hook_json(&id)?)?;
                // Re-read under the lock: a finished task cannot change, but be sure.
                let stream = self.stream(&id)?;
                let head = stream.as_ref().map(Stream::head).transpose()?.flatten();
                if self.read_task(&id).is_ok_and(|t| t.state.is_terminal()) {
                    if let (Some(stream), Some(head)) = (stream, head) {
                        stream.delete(head)?;
                    }
                    fs::remove_dir_all(&dir)
                        .map_err(|source| StoreError::Io { path: dir, source })?;
                }
                drop(lock);
                if active.as_deref() == Some(id.as_str()) {
                    store::write_json(&self.active_path(), &Active::default())?;
                }
            }
            removed.push(removal);
        }
        Ok(removed)
    }
}
