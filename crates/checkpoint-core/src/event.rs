//! The agent-neutral hook event, and the parser that turns an agent's stdin payload into it.
//!
//! Every agent sends one JSON object on stdin, and their field names overlap (`session_id`,
//! `cwd`, `hook_event_name`, `stop_hook_active`, …): [`HookEvent::parse`] reads those shared
//! fields, and asks the agent's home
//! ([`AgentHome::event_kind`](crate::home::AgentHome::event_kind)) what its event name means.
//! Which agent sent a payload is the caller's knowledge (each adapter knows its own; `checkpoint
//! check` asks the homes which one [`claims`](crate::home::AgentHome::claims) it), never guessed
//! here.

use std::io::{self, Read};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::agent::Agent;

/// Largest payload accepted on stdin. Real payloads are a few KB; a `PostToolUse` carrying a big
/// tool response can reach megabytes, so the cap is generous but finite.
pub const MAX_PAYLOAD_BYTES: u64 = 32 * 1024 * 1024;

/// The most files [`HookEvent::tool_files`] gives for one tool call.
pub const MAX_TOOL_FILES: usize = 8;

/// What happened, in agent-neutral terms. Each agent's home says which of its event names means
/// which kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// The agent wants to end its turn.
    Stop,
    /// A subagent wants to end its turn.
    SubagentStop,
    /// A subagent started.
    SubagentStart,
    /// The user sent a prompt.
    UserPrompt,
    /// A tool is about to run.
    PreTool,
    /// A tool has run.
    PostTool,
    /// A session started, resumed, was cleared or compacted.
    SessionStart,
    /// A session ended.
    SessionEnd,
    /// Context is about to be compacted.
    PreCompact,
    /// Any other event, by its wire name.
    Other(String),
}

impl EventKind {
    /// Whether this is an end-of-turn event that the stop gate judges.
    pub fn is_stop(&self) -> bool {
        matches!(self, EventKind::Stop | EventKind::SubagentStop)
    }
}

/// One hook call, normalized across agents. Built by [`HookEvent::new`] (or parsed from a
/// payload by an agent's home); fields may be added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HookEvent {
    /// Who sent it.
    pub agent: Agent,
    /// What happened.
    pub kind: EventKind,
    /// The agent's wire name for the event.
    pub wire_name: String,
    /// The agent's session (Codex: thread) id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// True on every end-of-turn event that follows a blocked one in the same turn.
    pub stop_hook_active: bool,
    /// The last thing the assistant said, when the agent sends it.
    pub last_assistant_message: Option<String>,
    /// The user prompt, on prompt events.
    pub prompt: Option<String>,
    /// The agent's transcript file, when it has one.
    pub transcript_path: Option<PathBuf>,
    /// The tool's name, on tool events.
    pub tool_name: Option<String>,
    /// The tool's arguments, on tool events.
    pub tool_input: Option<serde_json::Value>,
    /// What qualifies a lifecycle event: the `SessionStart` source (`startup`, `resume`,
    /// `clear`, `compact`), the `SessionEnd` reason, the `PreCompact` trigger (`manual`, `auto`).
    #[serde(default)]
    pub detail: Option<String>,
    /// The model, when the agent says.
    #[serde(default)]
    pub model: Option<String>,
    /// The subagent that sent the event (`agent_id`), on a subagent's events.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The subagent's type (`agent_type`): its name, e.g. `Explore`; empty for an agent's
    /// internal forks.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// The turn the event belongs to, when the agent names it (Claude Code's `prompt_id`,
    /// Codex's `turn_id`): every stop of one turn carries the same id.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// How many background tasks the agent reports still running at a stop
    /// (`background_tasks`).
    #[serde(default)]
    pub background_tasks: usize,
    /// The context usage the payload itself reports (`context_usage`), for an agent whose
    /// hooks are given it instead of a transcript to read (see
    /// [`Capabilities::usage_in_payload`](crate::agent::Capabilities::usage_in_payload)).
    #[serde(default)]
    pub context_usage: Option<PayloadUsage>,
}

/// Context usage as a payload reports it: `{"used": <tokens>, "window": <tokens>}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadUsage {
    /// Tokens the last request put into the context window.
    pub used: u64,
    /// The window, when the agent knows it.
    #[serde(default)]
    pub window: Option<u64>,
}

/// Why a payload could not be turned into a [`HookEvent`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// Nothing arrived on stdin.
    #[error("empty hook payload on stdin")]
    Empty,
    /// More than [`MAX_PAYLOAD_BYTES`] arrived.
    #[error("hook payload larger than {} MiB", MAX_PAYLOAD_BYTES / (1024 * 1024))]
    TooLarge,
    /// Reading stdin failed.
    #[error("cannot read hook payload: {0}")]
    Read(#[from] std::io::Error),
    /// The bytes are not a JSON object of the expected shape.
    #[error("malformed hook payload: {0}")]
    Malformed(String),
}

/// The fields every agent's payload shares. Unknown fields are ignored: agents add fields often.
#[derive(Deserialize)]
struct WirePayload {
    hook_event_name: String,
    #[serde(default)]
    session_id: Option<String>,
    cwd: PathBuf,
    #[serde(default)]
    stop_hook_active: Option<bool>,
    #[serde(default)]
    last_assistant_message: Option<String>,
    /// The reply under the other name agents give it (`prompt_response`).
    #[serde(default)]
    prompt_response: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    transcript_path: Option<PathBuf>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<serde_json::Value>,
    /// `SessionStart`.
    #[serde(default)]
    source: Option<String>,
    /// `SessionEnd`.
    #[serde(default)]
    reason: Option<String>,
    /// Compaction events.
    #[serde(default)]
    trigger: Option<String>,
    /// Some agents name the model, on some events or on all.
    #[serde(default)]
    model: Option<serde_json::Value>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    agent_type: Option<String>,
    /// The turn, under the names agents give it.
    #[serde(default)]
    turn_id: Option<String>,
    #[serde(default)]
    prompt_id: Option<String>,
    /// Tasks still running; only their number matters.
    #[serde(default)]
    background_tasks: Option<Vec<serde_json::Value>>,
    /// Read as a [`PayloadUsage`] when it has that shape; another agent's field of the same name
    /// (Qwen Code's `Stop` sends the share of the window used, a number) is no usage, not a
    /// malformed payload.
    #[serde(default)]
    context_usage: Option<serde_json::Value>,
}

/// Reads a payload from `reader`: up to the end of the first complete JSON value (a writer that
/// never closes its end does not keep the hook waiting), or to the end of the input when it does
/// not hold one; refusing more than [`MAX_PAYLOAD_BYTES`].
pub fn read_payload(reader: impl Read) -> Result<Vec<u8>, EventError> {
    let mut recorded = Recorder {
        inner: io::BufReader::new(reader.take(MAX_PAYLOAD_BYTES + 1)),
        bytes: Vec::new(),
        error: None,
    };
    let first = serde_json::Deserializer::from_reader(&mut recorded)
        .into_iter::<serde::de::IgnoredAny>()
        .next();
    if let Some(error) = recorded.error {
        return Err(EventError::Read(error));
    }
    if first.is_some_and(|value| value.is_err()) {
        // Not JSON (or cut short): the rest is read too, so the parse error names the input.
        recorded.read_to_end(&mut Vec::new())?;
    }
    if recorded.bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(EventError::TooLarge);
    }
    Ok(recorded.bytes)
}

/// A reader that keeps a copy of every byte read through it, and the first read error (serde
/// reports it as a syntax error otherwise).
struct Recorder<R> {
    inner: R,
    bytes: Vec<u8>,
    error: Option<io::Error>,
}

impl<R: Read> Read for Recorder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.bytes.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            Err(e) => {
                let copy = io::Error::new(e.kind(), e.to_string());
                self.error.get_or_insert(e);
                Err(copy)
            }
        }
    }
}

impl HookEvent {
    /// Parses the shared fields of a stdin payload of `agent`, whose event names mean what
    /// `kind_of` says; [`HookEvent::parse`] gives both from the agent's home.
    pub(crate) fn parse_shared(
        agent: Agent,
        kind_of: impl FnOnce(&str) -> EventKind,
        bytes: &[u8],
    ) -> Result<HookEvent, EventError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(EventError::Empty);
        }
        let wire: WirePayload =
            serde_json::from_slice(bytes).map_err(|e| EventError::Malformed(e.to_string()))?;
        let kind = kind_of(&wire.hook_event_name);
        let last_assistant_message = wire.last_assistant_message.or(wire.prompt_response);
        Ok(HookEvent {
            agent,
            kind,
            wire_name: wire.hook_event_name,
            session_id: wire.session_id.unwrap_or_default(),
            cwd: wire.cwd,
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            last_assistant_message,
            prompt: wire.prompt,
            transcript_path: wire.transcript_path,
            tool_name: wire.tool_name,
            tool_input: wire.tool_input,
            detail: wire.source.or(wire.reason).or(wire.trigger),
            model: wire.model.and_then(|m| match m {
                serde_json::Value::String(name) => Some(name),
                // or `{"id": …, "display_name": …}`.
                other => other["id"].as_str().map(str::to_owned),
            }),
            agent_id: wire.agent_id,
            agent_type: wire.agent_type,
            turn_id: wire.turn_id.or(wire.prompt_id),
            background_tasks: wire.background_tasks.map_or(0, |tasks| tasks.len()),
            context_usage: (wire.context_usage)
                .and_then(|usage| serde_json::from_value(usage).ok()),
        })
    }

    /// The event a human's `checkpoint check` stands for: a first stop in `cwd`.
    pub fn manual_stop(cwd: PathBuf) -> HookEvent {
        HookEvent::new(Agent::Cli, EventKind::Stop, "Stop", "manual", cwd)
    }

    /// The id the event's session state is kept under: its session id, `unknown` when the agent
    /// sent none.
    pub fn session_key(&self) -> &str {
        if self.session_id.is_empty() {
            "unknown"
        } else {
            &self.session_id
        }
    }

    /// The files a tool call's arguments name, as given (absolute or relative to the cwd), at
    /// most [`MAX_TOOL_FILES`]: the string values of the keys agents' file tools use
    /// (`file_path`, `filePath`, `path`, `notebook_path`, `absolute_path`) and the files a patch
    /// argument names (`*** Update File: …` headers). Empty for tools that name none, such as
    /// shells.
    pub fn tool_files(&self) -> Vec<&str> {
        let Some(input) = self
            .tool_input
            .as_ref()
            .and_then(serde_json::Value::as_object)
        else {
            return Vec::new();
        };
        let named = [
            "file_path",
            "filePath",
            "path",
            "notebook_path",
            "absolute_path",
        ]
        .into_iter()
        .filter_map(|key| input.get(key)?.as_str());
        let patched = (input.values())
            .filter_map(serde_json::Value::as_str)
            .flat_map(str::lines)
            .filter_map(|line| {
                ["*** Update File: ", "*** Add File: "]
                    .into_iter()
                    .find_map(|header| line.strip_prefix(header))
            });
        let mut files: Vec<&str> = named.chain(patched).filter(|f| !f.is_empty()).collect();
        files.dedup();
        files.truncate(MAX_TOOL_FILES);
        files
    }

    /// Whether this is a [`HookEvent::manual_stop`]: a person's look at the gate, judged like a
    /// stop but a read — it saves no checkpoint.
    pub fn is_manual(&self) -> bool {
        self.agent == Agent::Cli
    }

    /// An event of `kind` that `agent` sent as `wire_name`, for `session_id` in `cwd`; every
    /// optional field empty.
    pub fn new(
        agent: Agent,
        kind: EventKind,
        wire_name: &str,
        session_id: &str,
        cwd: PathBuf,
    ) -> HookEvent {
        HookEvent {
            agent,
            kind,
            wire_name: wire_name.to_owned(),
            session_id: session_id.to_owned(),
            cwd,
            stop_hook_active: false,
            last_assistant_message: None,
            prompt: None,
            transcript_path: None,
            tool_name: None,
            tool_input: None,
            detail: None,
            model: None,
            agent_id: None,
            agent_type: None,
            turn_id: None,
            background_tasks: 0,
            context_usage: None,
        }
    }

    /// Whether the stop gate judges this event: an end of turn, but not one that only pauses
    /// (background tasks still running: the final stop judges) and not the end of an agent's
    /// internal fork (a subagent with an empty or missing `agent_type`).
    pub fn is_judged_stop(&self) -> bool {
        match self.kind {
            EventKind::Stop => self.background_tasks == 0,
            EventKind::SubagentStop => self.is_real_subagent() && self.background_tasks == 0,
            _ => false,
        }
    }

    /// Whether a subagent event comes from a subagent the user or model asked for, rather than
    /// from an agent's internal fork (which sends an empty `agent_type`).
    pub fn is_real_subagent(&self) -> bool {
        self.agent_type
            .as_deref()
            .is_some_and(|t| !t.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::Manual;
    use proptest::prelude::*;

    #[test]
    fn bad_payloads_are_errors() {
        assert!(matches!(
            HookEvent::parse(&Manual, b"  \n"),
            Err(EventError::Empty)
        ));
        assert!(matches!(
            HookEvent::parse(&Manual, b"{"),
            Err(EventError::Malformed(_))
        ));
        assert!(matches!(
            HookEvent::parse(&Manual, br#"{"cwd":1,"hook_event_name":"Stop"}"#),
            Err(EventError::Malformed(_))
        ));
        assert!(matches!(
            HookEvent::parse(&Manual, b"[]"),
            Err(EventError::Malformed(_))
        ));
    }

    #[test]
    fn the_files_a_tool_call_names() {
        let files = |input: serde_json::Value| {
            let event = parsed(serde_json::json!({
                "hook_event_name": "PostToolUse", "cwd": "/r", "tool_name": "T",
                "tool_input": input,
            }));
            event
                .tool_files()
                .iter()
                .map(|f| (*f).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            files(serde_json::json!({"file_path": "/r/t.py", "content": "x"})),
            ["/r/t.py"]
        );
        assert_eq!(files(serde_json::json!({"filePath": "t.py"})), ["t.py"]);
        assert_eq!(
            files(serde_json::json!({"path": "a/t.py", "file_text": ""})),
            ["a/t.py"]
        );
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: b.py\n+z\n*** End Patch";
        assert_eq!(files(serde_json::json!({"input": patch})), ["a.py", "b.py"]);
        assert!(files(serde_json::json!({"command": "pytest -q"})).is_empty());
        assert!(files(serde_json::json!("just text")).is_empty());
        let many: String = (0..50).map(|i| format!("*** Add File: f{i}\n")).collect();
        assert_eq!(
            files(serde_json::json!({"input": many})).len(),
            MAX_TOOL_FILES
        );
    }

    fn parsed(json: serde_json::Value) -> HookEvent {
        let kind = |name: &str| match name {
            "Stop" => EventKind::Stop,
            "SubagentStop" => EventKind::SubagentStop,
            other => EventKind::Other(other.to_owned()),
        };
        HookEvent::parse_shared(Agent::Claude, kind, json.to_string().as_bytes()).unwrap()
    }

    /// Qwen Code's `Stop` says `"context_usage": 0.06` (a share of the window): had that made
    /// the payload malformed, every Qwen stop would have failed open.
    #[test]
    fn a_context_usage_of_another_shape_is_no_usage_and_no_error() {
        let qwen = parsed(serde_json::json!({"hook_event_name": "Stop", "cwd": "/p",
            "context_usage": 0.061725, "context_limit": 200000, "input_tokens": 12345}));
        assert_eq!((qwen.kind, qwen.context_usage), (EventKind::Stop, None));
        let shared = parsed(serde_json::json!({"hook_event_name": "Stop", "cwd": "/p",
            "context_usage": {"used": 5, "window": 10}}));
        assert_eq!(
            shared.context_usage,
            Some(PayloadUsage {
                used: 5,
                window: Some(10)
            })
        );
    }

    #[test]
    fn turns_subagents_and_background_tasks_are_read() {
        let claude = parsed(serde_json::json!({"hook_event_name": "Stop", "cwd": "/p",
            "prompt_id": "p1", "background_tasks": [{"id": "b1"}, {"id": "b2"}]}));
        assert_eq!(claude.turn_id.as_deref(), Some("p1"));
        assert_eq!(claude.background_tasks, 2);
        assert!(!claude.is_judged_stop(), "background tasks still run");
        let codex = parsed(serde_json::json!({"hook_event_name": "Stop", "cwd": "/p",
            "turn_id": "t1", "background_tasks": []}));
        assert_eq!(codex.turn_id.as_deref(), Some("t1"));
        assert!(codex.is_judged_stop());
        let subagent = |agent_type: &str| {
            parsed(
                serde_json::json!({"hook_event_name": "SubagentStop", "cwd": "/p",
                "agent_id": "a1", "agent_type": agent_type}),
            )
        };
        assert!(subagent("Explore").is_judged_stop());
        assert!(!subagent("").is_judged_stop(), "an internal fork");
        let other = parsed(serde_json::json!({"hook_event_name": "PreToolUse", "cwd": "/p"}));
        assert!(!other.is_judged_stop());
    }

    #[test]
    fn reading_stops_after_the_first_json_value() {
        // A writer that sent its payload but never closes: the read must not wait for the end.
        struct NeverEnds(io::Cursor<Vec<u8>>);
        impl Read for NeverEnds {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.read(buf)? {
                    0 => panic!("read past the payload"),
                    n => Ok(n),
                }
            }
        }
        let payload = br#"{"hook_event_name": "Stop", "cwd": "/p"}"#;
        let mut input = payload.to_vec();
        input.extend(b"\n");
        let got = read_payload(NeverEnds(io::Cursor::new(input))).unwrap();
        assert_eq!(got, payload);
        assert_eq!(read_payload(&b"  \n"[..]).unwrap(), b"  \n");
        assert_eq!(
            read_payload(&b"not json at all"[..]).unwrap(),
            b"not json at all"
        );
    }

    #[test]
    fn oversized_payloads_are_refused() {
        let big = std::io::repeat(b' ').take(MAX_PAYLOAD_BYTES + 10);
        assert!(matches!(read_payload(big), Err(EventError::TooLarge)));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = HookEvent::parse(&Manual, &bytes);
        }

        #[test]
        fn arbitrary_json_objects_never_panic(
            name in "[A-Za-z]{0,12}",
            active in proptest::option::of(any::<bool>()),
            extra in "[ -~]{0,40}",
        ) {
            let v = serde_json::json!({
                "hook_event_name": name, "cwd": "/x", "stop_hook_active": active, "extra": extra,
            });
            let _ = HookEvent::parse(&Manual, v.to_string().as_bytes());
        }
    }
}
