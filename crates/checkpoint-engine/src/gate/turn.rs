//! The turn's base at a session's start: where no base is recorded (an agent without a prompt
//! event), the first turn begins at `HEAD`. Prompts and stops move the base in `stop`.

use crate::git;
use crate::project::{Project, ProjectError};

use super::call::Call;

/// A session starts: where no turn base is recorded yet (an agent without a prompt event), the
/// first turn begins at `HEAD`. A session that has one (resumed, or compacted mid-turn) keeps it.
pub(super) fn base_at_session_start(call: &Call, project: &Project) -> Result<(), ProjectError> {
    let Ok(repo) = project.git() else {
        return Ok(());
    };
    let sessions = project.sessions();
    if sessions
        .load(call.event.agent, &call.gate_session())?
        .turn_base
        .is_some()
    {
        return Ok(());
    }
    let head = git::base::head_commit(repo);
    sessions.update(call.event.agent, &call.gate_session(), |record| {
        if record.turn_base.is_none() {
            record.begin_turn(head, call.host.now);
        }
    })?;
    Ok(())
}
