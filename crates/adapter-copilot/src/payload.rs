//! Copilot CLI's hook payloads, read in the shared shape. Copilot writes camelCase fields
//! (`sessionId`, `transcriptPath`, `toolName`, `toolArgs`; `stop_hook_active` is the one in
//! snake_case) and does not name the event: each event is told by the fields it alone sends
//! ([`EVENTS`]). A `sessionStart` of a new session says `source: "new"`, which is what the
//! other agents call `startup`. Only `agentStop` and `preCompact` name the transcript; it is
//! the session's `events.jsonl` in Copilot's `session-state` directory, so the other events get
//! that path too.

use std::path::{Component, Path};

use serde_json::{Map, Value};

/// Copilot's events, each with the fields that tell it: the first whose fields are all present
/// and whose excluded fields are all absent names the payload's event.
pub const EVENTS: &[(&str, &[&str], &[&str])] = &[
    ("subagentStop", &["stopReason", "agentName"], &[]),
    ("agentStop", &["stopReason"], &[]),
    ("postToolUseFailure", &["toolName", "error"], &[]),
    ("postToolUse", &["toolName", "toolResult"], &[]),
    ("preToolUse", &["toolName"], &[]),
    ("subagentStart", &["agentName"], &[]),
    ("preCompact", &["trigger"], &[]),
    ("sessionStart", &["source"], &[]),
    ("sessionEnd", &["reason"], &[]),
    ("errorOccurred", &["error", "errorContext"], &[]),
    ("userPromptSubmitted", &["prompt"], &["transformedPrompt"]),
];

/// Copilot's field names, and the shared names they are read under.
const FIELDS: &[(&str, &str)] = &[
    ("sessionId", "session_id"),
    ("cwd", "cwd"),
    ("transcriptPath", "transcript_path"),
    ("stop_hook_active", "stop_hook_active"),
    ("stopHookActive", "stop_hook_active"),
    ("prompt", "prompt"),
    ("toolName", "tool_name"),
    ("toolArgs", "tool_input"),
    ("source", "source"),
    ("reason", "reason"),
    ("trigger", "trigger"),
    ("agentId", "agent_id"),
    ("agentName", "agent_type"),
    ("response", "last_assistant_message"),
];

/// The event a Copilot payload was sent for, by its fields.
pub fn event_of(payload: &Map<String, Value>) -> Option<&'static str> {
    EVENTS.iter().find_map(|(name, present, absent)| {
        let told = present.iter().all(|field| payload.contains_key(*field))
            && !absent.iter().any(|field| payload.contains_key(*field));
        told.then_some(*name)
    })
}

/// The transcript of the session `id` in Copilot's `session-state` directory `state`:
/// `<state>/<id>/events.jsonl`, when `id` is a plain file name.
pub fn transcript_of(state: &Path, id: &str) -> Option<std::path::PathBuf> {
    let mut parts = Path::new(id).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(name)), None) => Some(state.join(name).join("events.jsonl")),
        _ => None,
    }
}

/// The payload `bytes` in the shared shape, when they are a Copilot payload (a JSON object with
/// a `sessionId`, of an event [`event_of`] knows); `None` otherwise. A payload that names no
/// transcript gets its session's in the `session-state` directory `state`.
pub fn shared(bytes: &[u8], state: &Path) -> Option<Vec<u8>> {
    let Value::Object(payload) = serde_json::from_slice(bytes).ok()? else {
        return None;
    };
    if !payload.contains_key("sessionId") {
        return None;
    }
    let event = event_of(&payload)?;
    let mut shared = Map::new();
    shared.insert("hook_event_name".to_owned(), event.into());
    for (theirs, ours) in FIELDS {
        if let Some(value) = payload.get(*theirs) {
            shared.insert((*ours).to_owned(), value.clone());
        }
    }
    if !shared.contains_key("transcript_path") {
        let id = payload["sessionId"].as_str().unwrap_or_default();
        if let Some(path) = transcript_of(state, id) {
            shared.insert(
                "transcript_path".to_owned(),
                path.display().to_string().into(),
            );
        }
    }
    if event == "sessionStart" && shared["source"] == "new" {
        shared.insert("source".to_owned(), "startup".into());
    }
    serde_json::to_vec(&Value::Object(shared)).ok()
}

#[cfg(test)]
mod tests {
    use checkpoint_core::HookEvent;
    use checkpoint_core::event::EventKind;
    use serde_json::json;

    use super::*;

    fn fixture(name: &str) -> String {
        checkpoint_testkit::payload("copilot", name, std::path::Path::new("/home/dev/project"))
    }

    /// Every captured payload is told its event, and reads as that event's kind.
    #[test]
    fn captured_payloads_are_told_by_their_fields() {
        let cases = [
            ("agentStop", "agentStop", EventKind::Stop),
            ("agentStop-2", "agentStop", EventKind::Stop),
            (
                "userPromptSubmitted",
                "userPromptSubmitted",
                EventKind::UserPrompt,
            ),
            (
                "userPromptSubmitted-2",
                "userPromptSubmitted",
                EventKind::UserPrompt,
            ),
            ("preToolUse", "preToolUse", EventKind::PreTool),
            ("postToolUse", "postToolUse", EventKind::PostTool),
            ("sessionStart", "sessionStart", EventKind::SessionStart),
            (
                "sessionStart-resume",
                "sessionStart",
                EventKind::SessionStart,
            ),
            ("sessionEnd", "sessionEnd", EventKind::SessionEnd),
            ("preCompact-manual", "preCompact", EventKind::PreCompact),
        ];
        for (name, wire, kind) in cases {
            let event = HookEvent::parse(&crate::HOME, fixture(name).as_bytes()).unwrap();
            assert_eq!(
                (event.wire_name.as_str(), event.kind),
                (wire, kind),
                "{name}"
            );
            assert_eq!(event.session_id, "6387ea71-f18b-4543-9010-9ddf1b8f4627");
        }
    }

    #[test]
    fn fields_are_read_under_their_shared_names() {
        let tool = HookEvent::parse(&crate::HOME, fixture("postToolUse").as_bytes()).unwrap();
        assert_eq!(tool.tool_name.as_deref(), Some("bash"));
        assert_eq!(tool.tool_input.unwrap()["command"], "git status --short");
        let start = HookEvent::parse(&crate::HOME, fixture("sessionStart").as_bytes()).unwrap();
        assert_eq!(start.detail.as_deref(), Some("startup"));
        let resume =
            HookEvent::parse(&crate::HOME, fixture("sessionStart-resume").as_bytes()).unwrap();
        assert_eq!(resume.detail.as_deref(), Some("resume"));
        let again = HookEvent::parse(&crate::HOME, fixture("agentStop-2").as_bytes()).unwrap();
        assert!(again.stop_hook_active);
        let prompt = fixture("userPromptSubmitted-2");
        let prompt = HookEvent::parse(&crate::HOME, prompt.as_bytes()).unwrap();
        assert_eq!(prompt.prompt.as_deref(), Some("Fix the failing test."));
    }

    #[test]
    fn other_payloads_are_left_alone() {
        for raw in [
            r#"{"session_id":"s","cwd":"/p","hook_event_name":"Stop"}"#,
            r#"{"sessionId":"s","cwd":"/p"}"#,
            r#"{"sessionId":"s","cwd":"/p","prompt":"x","transformedPrompt":"y"}"#,
            "[1]",
            "not json",
        ] {
            assert_eq!(shared(raw.as_bytes(), Path::new("/s")), None, "{raw}");
        }
    }

    /// Events that name no transcript read their session's.
    #[test]
    fn every_event_gets_its_sessions_transcript() {
        let state = Path::new("/h/.copilot/session-state");
        let transcript = |raw: &str| {
            let shared: Value =
                serde_json::from_slice(&shared(raw.as_bytes(), state).unwrap()).unwrap();
            shared["transcript_path"].as_str().map(str::to_owned)
        };
        assert_eq!(
            transcript(r#"{"sessionId":"abc","cwd":"/p","toolName":"bash","toolArgs":{}}"#)
                .as_deref(),
            Some("/h/.copilot/session-state/abc/events.jsonl")
        );
        assert_eq!(
            transcript(
                r#"{"sessionId":"abc","cwd":"/p","stopReason":"end_turn","transcriptPath":"/t"}"#
            )
            .as_deref(),
            Some("/t")
        );
        for id in ["../x", "a/b", "", ".", "/abs"] {
            let raw = json!({"sessionId": id, "cwd": "/p", "reason": "complete"}).to_string();
            assert_eq!(transcript(&raw), None, "{id}");
        }
    }
}
