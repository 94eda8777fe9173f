//! A task's life: starting it, and finishing its steps. Its other moves (a step started,
//! the task completed or abandoned) are [`Task`] methods run in a [`Journal::update`].

use std::time::Duration;

use jiff::Timestamp;

use super::{Active, Journal, JournalError, StepFinish, Synced, random_hex};
use crate::store;
use checkpoint_core::journal::{StepSpec, Task, TaskError, TaskEvent, TaskState, Trigger, state};

impl Journal {
    /// Starts a new task and makes it the active one. Refused while the active task is
    /// unfinished.
    pub fn start_task(
        &self,
        name: &str,
        steps: Vec<StepSpec>,
        now: Timestamp,
    ) -> Result<Task, JournalError> {
        let active_path = self.active_path();
        let _lock = store::Lock::acquire(&active_path)?;
        if let Some(task) = self.active()? {
            return Err(JournalError::Unfinished {
                id: task.id,
                state: task.state,
            });
        }
        let id = new_task_id(name, now)?;
        let mut task = Task::new(id.clone(), name.to_owned(), steps, now)?;
        task.revision = 1;
        let _task_lock = store::Lock::acquire(&self.hook_json(&id)?)?;
        let synced = self
            .stream(&id)?
            .map(|stream| Synced { stream, head: None });
        self.write_task(None, &mut task, synced)?;
        store::write_json(&active_path, &Active { task: Some(id) })?;
        Ok(task)
    }

    /// Makes task `id`, unfinished, the active one of this worktree (a task fetched from another
    /// machine, or another worktree's), and writes its `hook.md` here. Refused while another
    /// active task is unfinished; adopting the active task again changes nothing.
    pub fn adopt(&self, id: &str) -> Result<Task, JournalError> {
        let active_path = self.active_path();
        let _lock = store::Lock::acquire(&active_path)?;
        if let Some(task) = self.active()?.filter(|task| task.id != id) {
            return Err(JournalError::Unfinished {
                id: task.id,
                state: task.state,
            });
        }
        let task = self.load(id)?;
        if task.state.is_terminal() {
            return Err(JournalError::Finished {
                id: task.id,
                state: task.state,
            });
        }
        self.refresh_markdown(&task)?;
        if self.active_id()?.as_deref() != Some(id) {
            store::write_json(
                &active_path,
                &Active {
                    task: Some(id.to_owned()),
                },
            )?;
        }
        Ok(task)
    }

    /// Finishes the current step of task `id`: runs its validation first when it has one that
    /// has not passed in this attempt, then marks it done with a [`Trigger::StepDone`]
    /// checkpoint. A failing validation leaves the step running (`done: false`).
    pub fn finish_step(
        &self,
        id: &str,
        note: Option<String>,
        timeout: Duration,
        now: Timestamp,
    ) -> Result<StepFinish, JournalError> {
        let task = self.load(id)?;
        let pending = task
            .current()
            .filter(|s| s.validated_by.is_none() && task.state == TaskState::StepRunning)
            .and_then(|s| s.validate.clone());
        let validation = match pending {
            Some(command) => Some(self.validate(id, None, &command, timeout)?),
            None => None,
        };
        // The validation took time: what follows happened after it.
        let now = match &validation {
            Some(_) => now.max(Timestamp::now()),
            None => now,
        };
        if validation.as_ref().is_some_and(|v| !v.passed) {
            return Ok(StepFinish {
                validation,
                done: false,
                task: self.load(id)?,
            });
        }
        let seen = self.observe();
        let (_, task) = self.update(id, |task| {
            transition_allowed(task, TaskEvent::StepDone)?;
            self.take_checkpoint(task, &seen, Trigger::StepDone, None, now);
            task.finish_step(note, now)?;
            Ok(())
        })?;
        Ok(StepFinish {
            validation,
            done: true,
            task,
        })
    }
}

fn transition_allowed(task: &Task, event: TaskEvent) -> Result<(), JournalError> {
    state::transition(task.state, event)
        .map(|_| ())
        .map_err(|e| TaskError::from(e).into())
}

/// `<slug of name>-<UTC yyyymmddThhmmss>-<4 hex>`.
fn new_task_id(name: &str, now: Timestamp) -> Result<String, JournalError> {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let slug: String = slug.chars().take(40).collect();
    let stamp = now.strftime("%Y%m%dT%H%M%S");
    let id = match slug.as_str() {
        "" => format!("task-{stamp}-{}", random_hex(2)?),
        slug => format!("{slug}-{stamp}-{}", random_hex(2)?),
    };
    Ok(store::validate_id(&id)?.to_owned())
}
