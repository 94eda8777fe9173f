//! The active task: the one `tasks/active.json` names, which the CLI and the hooks work on.

use gix::ObjectId;

use super::{Active, Journal, JournalError};
use crate::store;
use checkpoint_core::journal::Task;

impl Journal {
    /// The id of the active task, if any.
    pub fn active_id(&self) -> Result<Option<String>, JournalError> {
        let active: Option<Active> = store::read_json(&self.active_path())?;
        Ok(active.and_then(|a| a.task))
    }

    /// The id of the active task when there is one and its [`Current`] record says it is not
    /// finished: two small files read, not the task.
    pub(super) fn active_unfinished(&self) -> Result<Option<String>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.current(&id) {
            Ok(current) if !current.state.is_terminal() => Ok(Some(id)),
            Ok(_) | Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Task `id`, or the active task when `id` is `None`.
    pub fn resolve(&self, id: Option<&str>) -> Result<Task, JournalError> {
        match id {
            Some(id) => self.load(id),
            None => self.load(&self.active_id()?.ok_or(JournalError::NoActiveTask)?),
        }
    }

    /// The active task, when there is one and it is not finished.
    pub fn active(&self) -> Result<Option<Task>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        match self.load(&id) {
            Ok(task) if !task.state.is_terminal() => Ok(Some(task)),
            Ok(_) | Err(JournalError::NoSuchTask(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The active task's id and the commit its ref points at (`None` outside git): any update
    /// of the task moves it.
    pub fn active_head(&self) -> Result<Option<(String, Option<ObjectId>)>, JournalError> {
        let Some(id) = self.active_id()? else {
            return Ok(None);
        };
        let head = self.stream(&id)?.map(|s| s.head()).transpose()?.flatten();
        Ok(Some((id, head)))
    }
}
