//! Per-session memory of the stop gate: consecutive blocks, shown actions, capture requests.
//!
//! One small JSON file per agent session under `<state dir>/sessions/`, updated in one
//! transaction under its sidecar lock (see [`crate::store`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::decide::SessionFacts;
use crate::digest;
use crate::event::Agent;
use crate::store::{self, StoreError};

/// What is stored for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The facts `decide` reads.
    #[serde(flatten)]
    pub facts: SessionFacts,
    /// Digest of the last block message. An agent may re-send a block reason as the next prompt
    /// (Gemini does); a prompt with this digest is that retry, not a new user turn.
    pub last_block_digest: Option<String>,
    /// Context for the agent that could not go with the event that produced it (an agent without
    /// [`context_before_tool`](crate::agent::Capabilities::context_before_tool) or
    /// [`context_after_clear`](crate::agent::Capabilities::context_after_clear)): delivered with
    /// the session's next tool result or prompt.
    #[serde(default)]
    pub pending_context: Option<String>,
    /// The context usage the agent's status line last reported for the session (recorded by
    /// `checkpoint statusline`, for an agent with a
    /// [`status_line`](crate::agent::Capabilities::status_line)); fresher than the transcript
    /// while the status line runs.
    #[serde(default)]
    pub status_line: Option<StatusLineUsage>,
    /// Digest of the last trust notice the user was shown in this session (see
    /// [`crate::trust`]), together with the notice of accepted test-integrity findings: the same
    /// notice is shown once per session, a new one again.
    #[serde(default)]
    pub trust_notice: Option<String>,
    /// Digest of the config error the user was last told about in this session (the gate is off
    /// until it is fixed): told once per session, a different error again.
    #[serde(default)]
    pub config_notice: Option<String>,
    /// In a subagent's record: what each changed path held when the subagent started (see
    /// [`crate::cache::change_digests`]). What differs from it at the subagent's stop is what the
    /// subagent changed; `None` when its start was not seen.
    #[serde(default)]
    pub subagent_baseline: Option<BTreeMap<String, String>>,
}

/// `notice` unless the session was already shown it (`shown` holds the digest of the last one
/// shown, and is updated); no notice forgets it, so that the same one later is shown again.
pub(crate) fn once_per_session(
    shown: &mut Option<String>,
    notice: Option<String>,
) -> Option<String> {
    let digest = notice.as_deref().map(|n| digest::sha256_hex(n.as_bytes()));
    let new = digest.is_some() && digest != *shown;
    *shown = digest;
    notice.filter(|_| new)
}

/// How long a status line's usage stays fresh: the context watch before a tool call uses a
/// [`StatusLineUsage`] younger than this instead of reading the transcript.
pub const STATUS_LINE_FRESH: Duration = Duration::from_secs(30);

/// Context usage exactly as an agent's status line reported it (Claude Code's), and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusLineUsage {
    /// Tokens in the context window: `input + cache_creation + cache_read` of the last call.
    pub used: u64,
    /// The window size (`context_window.context_window_size`).
    pub window: u64,
    /// The share of the window in use, 0–100, as Claude shows it (`used_percentage`).
    pub percent: u8,
    /// When the status line reported it.
    pub at: Timestamp,
}

impl StatusLineUsage {
    /// Whether it was reported less than `within` before `now` (and not in `now`'s future by as
    /// much: a clock that went back does not keep a reading fresh).
    pub fn is_fresh(&self, now: Timestamp, within: Duration) -> bool {
        let within = i64::try_from(within.as_millis()).unwrap_or(i64::MAX);
        let age = now
            .as_millisecond()
            .saturating_sub(self.at.as_millisecond());
        age.saturating_abs() < within
    }
}

/// The session files of one state directory.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    /// Sessions kept under `<state_dir>/sessions/`.
    pub fn new(state_dir: &Path) -> SessionStore {
        SessionStore {
            dir: state_dir.join("sessions"),
        }
    }

    fn path(&self, agent: Agent, session_id: &str) -> Result<PathBuf, StoreError> {
        let id = store::validate_id(session_id)?;
        Ok(self.dir.join(format!("{}-{id}.json", agent.name())))
    }

    /// The stored record, or an empty one for a new session.
    pub fn load(&self, agent: Agent, session_id: &str) -> Result<SessionRecord, StoreError> {
        Ok(store::read_json(&self.path(agent, session_id)?)?.unwrap_or_default())
    }

    /// Changes the record in one locked transaction.
    pub fn update<R>(
        &self,
        agent: Agent,
        session_id: &str,
        f: impl FnOnce(&mut SessionRecord) -> R,
    ) -> Result<R, StoreError> {
        store::update_json(&self.path(agent, session_id)?, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_and_ids_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        assert_eq!(
            store.load(Agent::Claude, "s1").unwrap(),
            SessionRecord::default()
        );
        store
            .update(Agent::Claude, "s1", |r| r.facts.consecutive_blocks = 2)
            .unwrap();
        assert_eq!(
            store
                .load(Agent::Claude, "s1")
                .unwrap()
                .facts
                .consecutive_blocks,
            2
        );
        assert_eq!(
            store.load(Agent::Codex, "s1").unwrap(),
            SessionRecord::default()
        );
        assert!(matches!(
            store.load(Agent::Claude, "../escape"),
            Err(StoreError::InvalidId(_))
        ));
    }

    #[test]
    fn status_line_usage_is_fresh_only_briefly_and_old_records_still_load() {
        let now: Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        let usage = |secs: i64| StatusLineUsage {
            used: 1,
            window: 2,
            percent: 50,
            at: now - jiff::SignedDuration::from_secs(secs),
        };
        let within = STATUS_LINE_FRESH;
        assert!(usage(0).is_fresh(now, within));
        assert!(usage(29).is_fresh(now, within));
        assert!(usage(-2).is_fresh(now, within));
        assert!(!usage(30).is_fresh(now, within));
        assert!(!usage(-3600).is_fresh(now, within));

        let old: SessionRecord =
            serde_json::from_str(r#"{"consecutive_blocks":1,"last_block_digest":null}"#).unwrap();
        assert_eq!(old.status_line, None);
        let record = SessionRecord {
            status_line: Some(usage(5)),
            ..SessionRecord::default()
        };
        let text = serde_json::to_string(&record).unwrap();
        assert!(
            text.contains(
                r#""status_line":{"used":1,"window":2,"percent":50,"at":"2026-01-02T03:04:00Z"}"#
            ),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<SessionRecord>(&text).unwrap(),
            record
        );
    }
}
