//! Crash detection and recovery: a stale task recorded as crashed, with what changed since its
//! last checkpoint.

use std::collections::HashMap;

use jiff::Timestamp;

use super::snapshot;
use super::{Journal, JournalError, Recovered};
use checkpoint_core::journal::{FileSnapshot, Recovery, Task, recovery};

impl Journal {
    /// Checks whether task `id` has crashed and, if so, records it and moves it to
    /// `recovering` with a recommended action. Idempotent: a task already recovering, not stale
    /// or finished is left as it is.
    pub fn recover(&self, id: &str, now: Timestamp) -> Result<Recovered, JournalError> {
        let threshold = self.settings().stale_threshold;
        let task = self.load(id)?;
        if recovery::classify(&task, now, threshold).is_none() {
            self.refresh_markdown(&task)?;
            return Ok(Recovered {
                task,
                recorded: None,
            });
        }
        let seen = self.observe();
        let (recorded, task) = self.update(id, |task| {
            let Some(kind) = recovery::classify(task, now, threshold) else {
                return Ok(None);
            };
            let last_update = task.updated_at;
            let state_before = task.state;
            task.touch_files(&seen.changed);
            let changed_since_checkpoint = self.mark_drift(task);
            let recovery = Recovery {
                detected_at: now,
                last_update,
                state_before,
                kind,
                action: recovery::recommend(task, kind),
                step: task.current_ref(),
                changed_since_checkpoint,
            };
            task.crashed(recovery.clone(), now)?;
            Ok(Some(recovery))
        })?;
        Ok(Recovered { task, recorded })
    }

    /// Marks the current step's files whose content differs from the last checkpoint's snapshot;
    /// returns their paths.
    fn mark_drift(&self, task: &mut Task) -> Vec<String> {
        let last = task.last_step_checkpoint().cloned();
        let Some(i) = task.current_step else {
            return Vec::new();
        };
        let snapshots: Option<HashMap<&str, &FileSnapshot>> = last
            .as_ref()
            .map(|c| c.files.iter().map(|s| (s.path.as_str(), s)).collect());
        let mut drifted = Vec::new();
        for file in &mut task.steps[i].files {
            let changed =
                snapshots
                    .as_ref()
                    .is_some_and(|snaps| match snaps.get(file.path.as_str()) {
                        Some(snap) => snapshot::changed_since(&self.workdir, snap),
                        None => true,
                    });
            file.changed_since_checkpoint = changed;
            if changed {
                drifted.push(file.path.clone());
            }
        }
        drifted
    }
}
