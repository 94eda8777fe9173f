//! What each session's tool calls changed in its working tree, kept in its session record so
//! that a stop can tell its own work from another live session's (see
//! [`checkpoint_core::shared`]).
//!
//! - **Claims.** An edit tool names its file: the session claims it. After any other tool that
//!   may change files (a shell) while another live session works in the tree, the session
//!   claims every changed path whose content differs from what it held at the session's last
//!   look ([`SessionWork::observe`]): whatever changed in between counts as the session's,
//!   another session's concurrent edits and its own work while it was alone included — the safe
//!   side. A session's first look (its start or first prompt) only notes what the tree holds.
//! - **Signed.** The work is signed with this user's master key, bound to the session's agent and
//!   id ([`SessionWork::sign`]). A record that does not verify — written by hand, edited,
//!   copied to another name — counts for nothing: another session's is ignored, and the
//!   session's own starts over with nothing seen, so its next look claims every change.
//! - **Live.** A session is live while it was active within [`LIVE`] and did not end.
//! - **Bounded.** Past [`MAX_TRACKED`] changed paths a session's look is not kept: its work
//!   is [`SessionWork::untracked`], and its stops judge every change as its own.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use checkpoint_core::event::Agent;
use checkpoint_core::journal::signing::{EntryKind, EntrySignature, MasterKey};

/// How long after its last activity a session still counts as live.
pub const LIVE: Duration = Duration::from_secs(30 * 60);

/// A session's activity time is written again only once it is this old: a tool call that
/// changed nothing new writes nothing.
pub const ACTIVITY_STEP: Duration = Duration::from_secs(60);

/// The most changed paths a session's look keeps (see [`SessionWork::untracked`]).
pub const MAX_TRACKED: usize = 5_000;

/// What one session's tool calls changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionWork {
    /// When the session was last active (a tool call, a prompt, a stop), to [`ACTIVITY_STEP`].
    pub active: Timestamp,
    /// The session ended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
    /// The paths the session's tool calls changed, repository-relative.
    #[serde(default)]
    pub touched: BTreeSet<String>,
    /// What each changed path held at the session's last look (see
    /// [`crate::cache::change_digests`]).
    #[serde(default)]
    pub seen: BTreeMap<String, String>,
    /// The session had no look yet: its first only notes what the tree holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unseen: bool,
    /// A look found more than [`MAX_TRACKED`] changed paths: what the session changed is not
    /// known, and its stops judge every change as its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untracked: bool,
    /// The signature by this user's master key over the rest, the agent and the session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<EntrySignature>,
}

/// What is signed of `work` (its signature left out) for `agent`'s session `id`.
#[derive(Serialize)]
struct Signed<'a> {
    agent: &'static str,
    id: &'a str,
    work: &'a SessionWork,
}

impl SessionWork {
    /// The work of a session seen for the first time at `now`: nothing claimed, nothing seen.
    /// `first_look`: its next look only notes what the tree holds (a start or a prompt);
    /// otherwise that look claims every change.
    pub fn new(now: Timestamp, first_look: bool) -> SessionWork {
        SessionWork {
            active: now,
            ended: false,
            touched: BTreeSet::new(),
            seen: BTreeMap::new(),
            unseen: first_look,
            untracked: false,
            signature: None,
        }
    }

    fn signed_bytes(&self, agent: Agent, id: &str) -> Vec<u8> {
        let mut work = self.clone();
        work.signature = None;
        let signed = Signed {
            agent: agent.name(),
            id,
            work: &work,
        };
        serde_json::to_vec(&signed).expect("session work serializes")
    }

    /// Signs the work as `agent`'s session `id`'s with `key`.
    pub fn sign(&mut self, agent: Agent, id: &str, key: &MasterKey) {
        self.signature =
            Some(key.sign_entry(EntryKind::SessionWork, &self.signed_bytes(agent, id)));
    }

    /// Whether the work carries a good signature by the key `public` as `agent`'s session `id`'s.
    pub fn signed_by(&self, agent: Agent, id: &str, public: &[u8; 32]) -> bool {
        (self.signature.as_ref())
            .and_then(|s| s.verify(EntryKind::SessionWork, &self.signed_bytes(agent, id)))
            .is_some_and(|key| key == *public)
    }

    /// Whether the session is live at `now`: active within [`LIVE`], not ended.
    pub fn is_live(&self, now: Timestamp) -> bool {
        let within = i64::try_from(LIVE.as_millis()).unwrap_or(i64::MAX);
        !self.ended
            && now
                .as_millisecond()
                .saturating_sub(self.active.as_millisecond())
                < within
    }

    /// The session was active at `now` (written when it moved by [`ACTIVITY_STEP`]).
    pub fn touch(&mut self, now: Timestamp) {
        let step = i64::try_from(ACTIVITY_STEP.as_millis()).unwrap_or(i64::MAX);
        let moved = now
            .as_millisecond()
            .saturating_sub(self.active.as_millisecond());
        if moved.saturating_abs() >= step {
            self.active = now;
        }
    }

    /// A look at the tree, whose changed paths hold `now` (see
    /// [`crate::cache::change_digests`]): every path that differs from the last look is the
    /// session's, unless this is its first look.
    pub fn observe(&mut self, now: BTreeMap<String, String>) {
        if now.len() > MAX_TRACKED {
            self.untracked = true;
            self.seen.clear();
            return;
        }
        if !std::mem::take(&mut self.unseen) {
            for (path, digest) in &now {
                if self.seen.get(path) != Some(digest) {
                    self.touched.insert(path.clone());
                }
            }
        }
        self.seen = now;
    }

    /// The session's tool named `paths` as the files it edited.
    pub fn claim<'p>(&mut self, paths: impl IntoIterator<Item = &'p str>) {
        self.touched.extend(paths.into_iter().map(str::to_owned));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    fn digests(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(p, d)| ((*p).to_owned(), (*d).to_owned()))
            .collect()
    }

    #[test]
    fn a_look_claims_what_changed_since_the_last_one_but_not_at_first() {
        let mut work = SessionWork::new(at(0), true);
        work.observe(digests(&[("theirs.py", "1")]));
        assert!(work.touched.is_empty(), "the first look only notes");
        work.observe(digests(&[("theirs.py", "1"), ("mine.py", "1")]));
        work.observe(digests(&[("theirs.py", "1"), ("mine.py", "2")]));
        work.claim(["edited.py"]);
        let touched: Vec<&str> = work.touched.iter().map(String::as_str).collect();
        assert_eq!(touched, ["edited.py", "mine.py"]);
        // Without a first look (no start seen, or a record that did not verify), every change is
        // claimed.
        let mut fresh = SessionWork::new(at(0), false);
        fresh.observe(digests(&[("theirs.py", "1")]));
        assert!(fresh.touched.contains("theirs.py"));
        // Too many paths: nothing is known.
        let many = (0..=MAX_TRACKED)
            .map(|n| (n.to_string(), String::new()))
            .collect();
        fresh.observe(many);
        assert!(fresh.untracked && fresh.seen.is_empty());
    }

    #[test]
    fn the_signature_binds_the_work_to_its_session_and_key() {
        let key = MasterKey::from_seed(&[7; 32]);
        let other = MasterKey::from_seed(&[8; 32]);
        let mut work = SessionWork::new(at(0), false);
        work.claim(["a.py"]);
        assert!(!work.signed_by(Agent::Claude, "s1", &key.public_key()));
        work.sign(Agent::Claude, "s1", &key);
        assert!(work.signed_by(Agent::Claude, "s1", &key.public_key()));
        assert!(!work.signed_by(Agent::Claude, "s2", &key.public_key()));
        assert!(!work.signed_by(Agent::Codex, "s1", &key.public_key()));
        assert!(!work.signed_by(Agent::Claude, "s1", &other.public_key()));
        let mut edited = work.clone();
        edited.touched.clear();
        assert!(!edited.signed_by(Agent::Claude, "s1", &key.public_key()));
        let mut freshened = work.clone();
        freshened.active = at(3600);
        assert!(!freshened.signed_by(Agent::Claude, "s1", &key.public_key()));
    }

    #[test]
    fn a_session_is_live_while_recently_active_and_not_ended() {
        let mut work = SessionWork::new(at(0), false);
        assert!(work.is_live(at(10)));
        assert!(!work.is_live(at(LIVE.as_secs() as i64)));
        work.touch(at(30));
        assert_eq!(work.active, at(0), "moved less than a step: not written");
        work.touch(at(600));
        assert_eq!(work.active, at(600));
        assert!(work.is_live(at(600 + LIVE.as_secs() as i64 - 1)));
        work.ended = true;
        assert!(!work.is_live(at(601)));
    }
}
