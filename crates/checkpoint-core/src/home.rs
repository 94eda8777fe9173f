//! One home per agent: the trait each adapter crate (`adapter-claude`, `adapter-gemini`,
//! `adapter-codex`, `adapter-copilot`, `adapter-opencode`, `adapter-qwen`, `adapter-droid`) implements for its agent — its event
//! names, which payloads are its own, how it renders a [`HookAnswer`] on its wire, its transcript
//! format, its install table and its project's environment files — and [`Manual`], the home of a human at the command line.
//!
//! Parsing a payload needs the home's event names, so [`HookEvent::parse`] lives here, beside the
//! trait: [`crate::event`] knows only the fields every agent shares.

use std::borrow::Cow;

use serde_json::Value;

use crate::agent::{Agent, Capabilities, InstallSpec, TranscriptFormat};
use crate::answer::HookAnswer;
use crate::event::{EventError, EventKind, HookEvent};
use crate::project_env::ProjectEnvSource;

/// Everything one agent needs, in one place: implemented by each adapter crate.
pub trait AgentHome: Sync {
    /// The agent's identity.
    fn agent(&self) -> Agent;

    /// What its hook protocol can do.
    fn capabilities(&self) -> Capabilities;

    /// What the agent's event called `wire_name` means.
    fn event_kind(&self, wire_name: &str) -> EventKind;

    /// Whether a payload of unknown origin is this agent's (for `checkpoint check` without
    /// `--agent`).
    fn claims(&self, payload: &Value) -> bool;

    /// The payload `bytes` in the shape every agent's is read in (snake_case fields, the event's
    /// name in `hook_event_name`), for an agent whose own payloads differ; as they are by default.
    /// Bytes it cannot read are left as they are (parsing them reports the problem).
    fn shared_payload<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        Cow::Borrowed(bytes)
    }

    /// How the agent writes its transcript; `None` when it keeps none the gate can read.
    fn transcript(&self) -> Option<&dyn TranscriptFormat>;

    /// What to print when there is nothing to say (and when failing open).
    fn no_op(&self) -> &'static str;

    /// `answer` to `event` in the agent's own format, the JSON to print, with every text in it a
    /// [`sanitize::message`](crate::sanitize::message) (see [`crate::answer`]); `None` prints
    /// [`AgentHome::no_op`].
    fn render(&self, event: &HookEvent, answer: &HookAnswer) -> Option<Value>;

    /// What `checkpoint install` writes for the agent; `None` when it is not installed as hooks.
    fn install(&self) -> Option<&InstallSpec>;

    /// More ways to run the adapter, as lines of its `--help` usage (after `< payload.json` and
    /// `--version | --help`).
    fn more_usage(&self) -> &'static [&'static str] {
        &[]
    }

    /// The files of the agent's own project configuration that put variables into every hook's
    /// environment: a `CHECKPOINT_*` value one of them sets is the project's, held back until
    /// the user approves it like `checkpoint.toml`'s. None by default.
    fn project_env(&self) -> &'static [ProjectEnvSource] {
        &[]
    }
}

/// A human at the command line: no transcript, no wire format, no install.
#[derive(Debug, Clone, Copy)]
pub struct Manual;

impl AgentHome for Manual {
    fn agent(&self) -> Agent {
        Agent::Cli
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .context_before_tool(true)
            .context_after_clear(true)
    }

    fn event_kind(&self, wire_name: &str) -> EventKind {
        EventKind::Other(wire_name.to_owned())
    }

    fn claims(&self, _payload: &Value) -> bool {
        false
    }

    fn transcript(&self) -> Option<&dyn TranscriptFormat> {
        None
    }

    fn no_op(&self) -> &'static str {
        ""
    }

    fn render(&self, _event: &HookEvent, _answer: &HookAnswer) -> Option<Value> {
        None
    }

    fn install(&self) -> Option<&InstallSpec> {
        None
    }
}

impl HookEvent {
    /// Parses a stdin payload of the agent whose home is `home`: the fields every agent shares,
    /// and the event kind the home gives its event name.
    pub fn parse(home: &dyn AgentHome, bytes: &[u8]) -> Result<HookEvent, EventError> {
        let bytes = home.shared_payload(bytes);
        HookEvent::parse_shared(home.agent(), |name| home.event_kind(name), &bytes)
    }
}
