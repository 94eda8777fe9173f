//! One hook event being answered: the agent's home, the host it runs on, the event, and what
//! every handler asks of them (the project around the event's cwd, the session it belongs to, the
//! agent's last reply, what the agent can do).

use std::borrow::Cow;

use crate::context;
use crate::continuity::SessionRef;
use crate::host::Host;
use crate::project::{Project, ProjectError};
use crate::runner::RunWatch;
use checkpoint_core::agent::Capabilities;
use checkpoint_core::event::HookEvent;
use checkpoint_core::home::AgentHome;

/// One event being answered.
pub(super) struct Call<'a> {
    pub(super) home: &'a dyn AgentHome,
    pub(super) host: &'a Host,
    pub(super) event: &'a HookEvent,
    /// Who is told about fresh test runs.
    pub(super) watch: &'a dyn RunWatch,
    /// The revision a stop is judged from, when the caller names one (`checkpoint check
    /// --base`); else the session's recorded turn base, else `HEAD`.
    pub(super) base: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// The call for `event`, its test runs told to `watch`; its working directory must exist.
    pub(super) fn new(
        home: &'a dyn AgentHome,
        host: &'a Host,
        event: &'a HookEvent,
        watch: &'a dyn RunWatch,
    ) -> Result<Call<'a>, ProjectError> {
        if !event.cwd.is_dir() {
            return Err(ProjectError::MissingCwd(event.cwd.clone()));
        }
        Ok(Call {
            home,
            host,
            event,
            watch,
            base: None,
        })
    }

    /// What the agent's hook protocol can do.
    pub(super) fn can(&self) -> Capabilities {
        self.home.capabilities()
    }

    /// The git project around the event's cwd, with its settings; `None` outside git.
    pub(super) fn project(&self) -> Result<Option<Project>, ProjectError> {
        self.host.git_project(&self.event.cwd)
    }

    /// The event's session id (`unknown` when the agent sent none).
    pub(super) fn session_id(&self) -> &str {
        self.event.session_key()
    }

    /// The id the stop gate keeps its session memory under: the session's, or for a subagent's
    /// events `<session>+<agent id>`, so that a subagent's blocks are counted apart from its
    /// parent's (and from other subagents').
    pub(super) fn gate_session(&self) -> Cow<'_, str> {
        match &self.event.agent_id {
            Some(agent) if !agent.is_empty() => {
                Cow::Owned(format!("{}+{agent}", self.session_id()))
            }
            _ => Cow::Borrowed(self.session_id()),
        }
    }

    /// The event's session, as checkpoints name it.
    pub(super) fn session(&self) -> SessionRef {
        SessionRef {
            agent: self.event.agent,
            id: self.session_id().to_owned(),
        }
    }

    /// The agent's last reply: from the payload when it has one (stops), else from the
    /// transcript's tail (a compressed one remembered in `project`'s memo, which the context
    /// watch shares: see [`context::read_tail`]).
    pub(super) fn reply(&self, project: &Project) -> Option<String> {
        let event = self.event;
        event.last_assistant_message.clone().or_else(|| {
            let transcript = event.transcript_path.as_deref()?;
            let format = self.home.transcript()?;
            let memo = context::memo_path(&project.state_dir);
            context::read_tail(format, transcript, Some(&memo))
                .ok()?
                .reply
        })
    }
}
