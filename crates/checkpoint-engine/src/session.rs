//! Per-session memory of the stop gate: consecutive blocks, shown actions, capture requests.
//!
//! One small JSON file per agent session under `<state dir>/sessions/`, updated in one
//! transaction under its sidecar lock (see [`crate::store`]). They expire
//! ([`SessionStore::expire`], by `checkpoint cleanup` and at a session start at most daily): a
//! session's file (and its lock) is removed once it is older than every session checkpoint the
//! continuity log keeps, older than `journal.retention_sessions`, or beyond the newest
//! `journal.max_sessions` — unless the log keeps a checkpoint of that session or it was written
//! within [`MIN_AGE`].
//!
//! A record also keeps what the session did, for `checkpoint report` ([`activity`]): its latest
//! stops, context samples and starts, each list bounded.

pub mod activity;
pub mod work;

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::store::{self, StoreError};
use activity::{ContextSample, StartEntry, StopEntry};
use checkpoint_core::decide::SessionFacts;
use checkpoint_core::event::Agent;
use checkpoint_core::journal::signing::MasterKey;
use work::SessionWork;

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
    /// [`context_before_tool`](checkpoint_core::agent::Capabilities::context_before_tool) or
    /// [`context_after_clear`](checkpoint_core::agent::Capabilities::context_after_clear)): delivered with
    /// the session's next tool result or prompt.
    #[serde(default)]
    pub pending_context: Option<String>,
    /// The context usage the agent's status line last reported for the session (recorded by
    /// `checkpoint statusline`, for an agent with a
    /// [`status_line`](checkpoint_core::agent::Capabilities::status_line)); fresher than the transcript
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
    /// Digest of what the session's last allowed stop saved its checkpoints from: the change
    /// fingerprint, the reply, what was left unresolved, the checkpoint mode and where the
    /// checkpoint refs stood after the save. A stop with the same digest has nothing new to
    /// save.
    #[serde(default)]
    pub stop_mark: Option<String>,
    /// The turn's base: the commit `HEAD` was at when the session's current turn began
    /// (recorded at the agent's prompt, a subagent's start, the session's start when none was
    /// recorded yet, and every allowed stop). A stop judges the change set from it to the
    /// worktree, so that what the turn committed is judged too; `None` (an old record, an
    /// unborn `HEAD`) judges against `HEAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_base: Option<String>,
    /// When the session's current turn began (set with [`SessionRecord::turn_base`]): an
    /// approval or acceptance recorded after it applies from the next turn (see
    /// [`crate::trust`]). `None` in an old record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_began: Option<Timestamp>,
    /// An earlier stop of the current turn claimed completion (see
    /// [`checkpoint_core::checks`]): its `full` checks stay due until the turn ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub claimed: bool,
    /// The weakenings the agent was told of after a tool call (see `gate::nudge`), newest
    /// last: digests of a file's path and its findings, so that the same weakening is named
    /// once however often a tool touches the file (at most [`MAX_NUDGED`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nudged: Vec<String>,
    /// The session's latest judged stops, oldest first (at most [`activity::MAX_STOPS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stops: Vec<StopEntry>,
    /// The context usage the watch measured, oldest first, one sample per change of the
    /// percentage (at most [`activity::MAX_SAMPLES`]). The hooks never store it in the record
    /// (an older version did): the watch appends its samples to a file of their own beside it
    /// ([`SessionStore::record_sample`]), and [`SessionStore::latest`] reads them back into
    /// this list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextSample>,
    /// The session's starts, oldest first (at most [`activity::MAX_STARTS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starts: Vec<StartEntry>,
    /// What the session's tool calls changed, signed (see [`work`]); `None` before its first
    /// tool call, start or prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<SessionWork>,
}

impl SessionRecord {
    /// A turn begins at `now`, at the commit `head` (see [`SessionRecord::turn_base`]).
    pub fn begin_turn(&mut self, head: Option<String>, now: Timestamp) {
        self.turn_base = head;
        self.turn_began = Some(now);
        self.claimed = false;
    }
}

/// `notice` unless the session was already shown it (`shown` holds the digest of the last one
/// shown, and is updated); no notice forgets it, so that the same one later is shown again.
pub(crate) fn once_per_session(
    shown: &mut Option<String>,
    notice: Option<String>,
) -> Option<String> {
    let digest = notice
        .as_deref()
        .map(|n| checkpoint_core::hex::sha256_hex(n.as_bytes()));
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

/// A session file written within this long is never expired, whatever the continuity log says.
pub const MIN_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// A session file `checkpoint cleanup` removed, or would remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpiredSession {
    /// Its name in `<state dir>/sessions/` (`<agent>-<session id>.json`).
    pub file: String,
    /// When it was last written.
    pub written: Timestamp,
}

/// Which session files [`SessionStore::expire`] lets go (besides those written within
/// [`MIN_AGE`], which it always keeps).
#[derive(Debug, Clone)]
pub struct SessionRetention<'a> {
    /// Files last written before this expire: the oldest session checkpoint the continuity log
    /// keeps (`None`: it keeps none).
    pub horizon: Option<Timestamp>,
    /// Files not written for this long expire (`journal.retention_sessions`).
    pub max_age: Duration,
    /// Files beyond this many, counted from the most recently written, expire
    /// (`journal.max_sessions`).
    pub max_count: usize,
    /// File names ([`file_name`]) that never expire: the sessions the continuity log keeps a
    /// checkpoint of.
    pub keep: &'a HashSet<String>,
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
        Ok(self.dir.join(file_name(agent, session_id)?))
    }

    /// Removes (unless `dry_run`) the session files `retention` lets go and that were last
    /// written more than [`MIN_AGE`] before `now`, each with its lock file. Each is removed under
    /// its lock, after checking that it was not written since it was listed: a hook of the
    /// session that holds the lock or wrote the file meanwhile keeps it. Other files (locks,
    /// temporary files) are left alone.
    pub fn expire(
        &self,
        retention: &SessionRetention<'_>,
        now: Timestamp,
        dry_run: bool,
    ) -> Result<Vec<ExpiredSession>, StoreError> {
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |source| StoreError::Io { path, source }
        };
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        // When a regular file was last written.
        let written = |path: &Path| {
            let meta = fs::symlink_metadata(path)
                .ok()
                .filter(fs::Metadata::is_file)?;
            Timestamp::try_from(meta.modified().ok()?).ok()
        };
        let mut records: Vec<(String, Timestamp)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file = entry.file_name().into_string().ok()?;
                let record = file.ends_with(".json") && !file.starts_with('.');
                let at = written(&entry.path()).filter(|_| record)?;
                Some((file, at))
            })
            .collect();
        // Newest first: the rank is the count of newer records.
        records.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let young = now.saturating_sub(MIN_AGE).unwrap_or(now);
        let too_old = now.saturating_sub(retention.max_age).unwrap_or(now);
        let mut expired = Vec::new();
        for (rank, (file, at)) in records.into_iter().enumerate() {
            let expires = at < young
                && !retention.keep.contains(&file)
                && (at < too_old
                    || rank >= retention.max_count
                    || retention.horizon.is_some_and(|horizon| at < horizon));
            if !expires {
                continue;
            }
            let path = self.dir.join(&file);
            if !dry_run {
                // A file whose lock is held is in use by a hook of its session: not waited for
                // (a session start housekeeps), kept.
                let lock = match store::Lock::acquire_within(&path, Duration::ZERO) {
                    Ok(lock) => lock,
                    Err(StoreError::LockTimeout { .. }) => continue,
                    Err(e) => return Err(e),
                };
                if written(&path) != Some(at) {
                    continue;
                }
                fs::remove_file(&path).map_err(io_err(&path))?;
                match fs::remove_file(samples_path(&path)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        return Err(io_err(&samples_path(&path))(e));
                    }
                    _ => {}
                }
                let mut lock_path = path.clone().into_os_string();
                lock_path.push(".lock");
                // Removed while held: a hook that opened it before waits on the old file and
                // starts from an empty record, as one that creates it afresh does.
                match fs::remove_file(&lock_path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        return Err(io_err(Path::new(&lock_path))(e));
                    }
                    _ => {}
                }
                drop(lock);
            }
            expired.push(ExpiredSession { file, written: at });
        }
        expired.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(expired)
    }

    /// The stored record, or an empty one for a new session.
    pub fn load(&self, agent: Agent, session_id: &str) -> Result<SessionRecord, StoreError> {
        Ok(store::read_json(&self.path(agent, session_id)?)?.unwrap_or_default())
    }

    /// Appends `sample` to the session's context samples when its percentage differs from the
    /// last one kept. The watch measures at every tool call, so this is the hook path: one
    /// bounded read of the file's end and, when the percentage moved, one appended line — no
    /// lock, no fsync, no rewrite of the record (a sample lost to a crash or to two hooks at once
    /// only thins the report's curve; a torn line is skipped on reading). Past twice
    /// [`activity::MAX_SAMPLES`] lines' worth of bytes the file is rewritten with its latest
    /// samples.
    pub fn record_sample(
        &self,
        agent: Agent,
        session_id: &str,
        sample: ContextSample,
    ) -> Result<(), StoreError> {
        let path = samples_path(&self.path(agent, session_id)?);
        let io_err = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let size = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => meta.len(),
            // Not ours to write through (a link, a FIFO): no sample.
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io_err(e)),
        };
        let mut record = SessionRecord::default();
        if let Some(last) = last_sample(&path, size) {
            record.context.push(last);
        }
        if !record.is_new_sample(&sample) {
            return Ok(());
        }
        if size > MAX_SAMPLES_BYTES {
            record.context = read_samples(&path);
            record.record_sample(sample);
            let mut text = String::new();
            for kept in &record.context {
                text.push_str(&sample_line(kept));
            }
            return store::write_atomic(&path, text.as_bytes());
        }
        let line = sample_line(&sample);
        fs::create_dir_all(&self.dir).map_err(io_err)?;
        let mut file = fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err)?;
        file.write_all(line.as_bytes()).map_err(io_err)
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

/// How many told edits [`SessionRecord::nudged`] remembers.
pub const MAX_NUDGED: usize = 32;

/// The most a session record read for a listing may hold: far above a real one (its lists are
/// bounded, see [`activity`]).
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// The size past which a samples file is rewritten with its latest samples: twice what
/// [`activity::MAX_SAMPLES`] lines take (a line is about 100 bytes).
const MAX_SAMPLES_BYTES: u64 = 2 * activity::MAX_SAMPLES as u64 * 128;

/// `sample` as one line of a samples file.
fn sample_line(sample: &ContextSample) -> String {
    serde_json::to_string(sample).expect("a sample serializes") + "\n"
}

/// The file of a session record's context samples (JSON lines), beside the record.
fn samples_path(record: &Path) -> PathBuf {
    let mut path = record.to_owned().into_os_string();
    path.push(".context");
    path.into()
}

/// The last whole sample of the samples file at `path` of `size` bytes, from its last 512
/// bytes; `None` for an empty, unreadable or torn end.
fn last_sample(path: &Path, size: u64) -> Option<ContextSample> {
    const TAIL: u64 = 512;
    let mut file = fs::File::open(path).ok()?;
    let start = size.saturating_sub(TAIL);
    file.seek(io::SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::new();
    file.take(TAIL).read_to_end(&mut tail).ok()?;
    let text = String::from_utf8_lossy(&tail);
    let line = text.strip_suffix('\n')?.rsplit('\n').next()?;
    serde_json::from_str(line).ok()
}

/// The samples kept in the file at `path`, oldest first: its whole lines that parse, each new
/// and at most [`activity::MAX_SAMPLES`] (see [`SessionRecord::record_sample`]); none when it
/// is missing, not a regular file, or beyond twice its bound.
fn read_samples(path: &Path) -> Vec<ContextSample> {
    let Ok(text) = crate::bounded::read_regular_text(path, 2 * MAX_SAMPLES_BYTES) else {
        return Vec::new();
    };
    let mut record = SessionRecord::default();
    for line in text.lines() {
        if let Ok(sample) = serde_json::from_str(line) {
            record.record_sample(sample);
        }
    }
    record.context
}

/// A session's record as [`SessionStore::latest`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// The agent.
    pub agent: Agent,
    /// The id its record is kept under (a subagent's is `<session>+<agent id>`).
    pub id: String,
    /// When the record was last written.
    pub written: Timestamp,
    /// The record.
    pub record: SessionRecord,
}

impl SessionStore {
    /// The `max` records written last that read, newest first. Other files (locks, temporary
    /// files), and records that cannot be read or do not parse, are skipped.
    pub fn latest(&self, max: usize) -> Result<Vec<StoredSession>, StoreError> {
        let found = self.records_written(None)?;
        Ok((found.into_iter())
            .filter_map(|(written, path, agent, id)| {
                let bytes = crate::bounded::read_regular(&path, MAX_RECORD_BYTES).ok()?;
                let mut record: SessionRecord = serde_json::from_slice(&bytes).ok()?;
                record.context = read_samples(&samples_path(&path));
                Some(StoredSession {
                    agent,
                    id,
                    written,
                    record,
                })
            })
            .take(max)
            .collect())
    }

    /// The records written at or after `horizon`: agent, id and path.
    fn latest_written(
        &self,
        horizon: Timestamp,
    ) -> Result<Vec<(Agent, String, PathBuf)>, StoreError> {
        let found = self.records_written(Some(horizon))?;
        Ok((found.into_iter())
            .map(|(_, path, agent, id)| (agent, id, path))
            .collect())
    }

    /// The record files (written at or after `horizon`, when given) with when each was last
    /// written, its agent and id, newest first. Other files (locks, temporary files, names
    /// that are no session's) are skipped.
    fn records_written(
        &self,
        horizon: Option<Timestamp>,
    ) -> Result<Vec<(Timestamp, PathBuf, Agent, String)>, StoreError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                let path = self.dir.clone();
                return Err(StoreError::Io { path, source });
            }
        };
        let mut found: Vec<(Timestamp, PathBuf, Agent, String)> = (entries.filter_map(Result::ok))
            .filter_map(|entry| {
                let file = entry.file_name().into_string().ok()?;
                let (agent, id) = file.strip_suffix(".json")?.split_once('-')?;
                let agent = serde_json::from_value(agent.into()).ok()?;
                store::validate_id(id).ok()?;
                let meta = entry.metadata().ok().filter(fs::Metadata::is_file)?;
                let written = Timestamp::try_from(meta.modified().ok()?).ok()?;
                horizon
                    .is_none_or(|horizon| written >= horizon)
                    .then_some(())?;
                Some((written, entry.path(), agent, id.to_owned()))
            })
            .collect();
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(found)
    }
}

impl SessionStore {
    /// Changes the work of `agent`'s session `session_id` with `f` at `now` and signs it with
    /// `key`, in one locked transaction (see [`work`]). Work that does not verify starts over
    /// with nothing seen, as does a session's first: `first_look` makes that look note only what
    /// the tree holds (a start or a prompt). Returns `f`'s result.
    pub fn record_work<R>(
        &self,
        (agent, session_id): (Agent, &str),
        key: &MasterKey,
        now: Timestamp,
        first_look: bool,
        f: impl FnOnce(&mut SessionWork) -> R,
    ) -> Result<R, StoreError> {
        self.update(agent, session_id, |record| {
            let public = key.public_key();
            let mut work = (record.work.take())
                .filter(|work| work.signed_by(agent, session_id, &public))
                .unwrap_or_else(|| SessionWork::new(now, first_look));
            work.touch(now);
            let result = f(&mut work);
            work.sign(agent, session_id, key);
            record.work = Some(work);
            result
        })
    }

    /// The work of `agent`'s session `session_id` when it verifies under the key `public`.
    pub fn own_work(
        &self,
        agent: Agent,
        session_id: &str,
        public: &[u8; 32],
    ) -> Result<Option<SessionWork>, StoreError> {
        let work = self.load(agent, session_id)?.work;
        Ok(work.filter(|work| work.signed_by(agent, session_id, public)))
    }

    /// The other sessions live at `now` whose work verifies under the key `public`: every
    /// record but `me`'s (and its subagents') written within [`work::LIVE`], read bounded.
    pub fn others_at_work(
        &self,
        me: (Agent, &str),
        public: &[u8; 32],
        now: Timestamp,
    ) -> Result<Vec<(Agent, String, SessionWork)>, StoreError> {
        let horizon = now.saturating_sub(work::LIVE).unwrap_or(now);
        let recent = self.latest_written(horizon)?;
        Ok((recent.into_iter())
            .filter(|(agent, id, _)| (*agent, id.as_str()) != me && !id.contains('+'))
            .filter_map(|(agent, id, path)| {
                let bytes = crate::bounded::read_regular(&path, MAX_RECORD_BYTES).ok()?;
                let record: SessionRecord = serde_json::from_slice(&bytes).ok()?;
                let work = (record.work)
                    .filter(|work| work.signed_by(agent, &id, public) && work.is_live(now))?;
                Some((agent, id, work))
            })
            .collect())
    }
}

/// The name of `agent`'s session `session_id`'s file in `<state dir>/sessions/`.
pub fn file_name(agent: Agent, session_id: &str) -> Result<String, StoreError> {
    let id = store::validate_id(session_id)?;
    Ok(format!("{}-{id}.json", agent.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions written `ages` days ago (in that order of ids), in a fresh store.
    fn store_with(ages: &[(&str, u64)]) -> (tempfile::TempDir, SessionStore, Timestamp) {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let now = Timestamp::now();
        for &(id, age) in ages {
            store
                .update(Agent::Claude, id, |r| r.facts.consecutive_blocks = 1)
                .unwrap();
            let file = fs::File::options()
                .write(true)
                .open(store.path(Agent::Claude, id).unwrap())
                .unwrap();
            file.set_modified(days_before(now, age).into()).unwrap();
        }
        (dir, store, now)
    }

    fn days_before(now: Timestamp, n: u64) -> Timestamp {
        now.saturating_sub(Duration::from_secs(n * 86_400)).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut left: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| !name.ends_with(".lock"))
            .collect();
        left.sort();
        left
    }

    const FOREVER: Duration = Duration::from_secs(100 * 365 * 86_400);

    #[test]
    fn only_old_session_files_the_log_does_not_keep_expire() {
        // (session, last written): `kept` has a checkpoint in the log, `young` is within
        // MIN_AGE though older than the horizon.
        let (dir, store, now) =
            store_with(&[("old", 10), ("kept", 10), ("recent", 2), ("young", 0)]);
        let keep = HashSet::from([file_name(Agent::Claude, "kept").unwrap()]);
        let mut retention = SessionRetention {
            horizon: Some(days_before(now, 5)),
            max_age: FOREVER,
            max_count: usize::MAX,
            keep: &keep,
        };
        let listed = store.expire(&retention, now, true).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].file, "claude-old.json");
        assert_eq!(listed[0].written, days_before(now, 10));
        let old = store.path(Agent::Claude, "old").unwrap();
        assert!(old.is_file(), "a dry run removes nothing");
        assert_eq!(store.expire(&retention, now, false).unwrap(), listed);
        assert!(!store.dir.join("claude-old.json.lock").exists());
        assert_eq!(
            names(&store.dir),
            [
                "claude-kept.json",
                "claude-recent.json",
                "claude-young.json"
            ]
        );
        // A horizon within MIN_AGE of now is as good as MIN_AGE ago.
        retention.horizon = Some(now);
        let young = store.expire(&retention, now, true).unwrap();
        let files: Vec<&str> = young.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(files, ["claude-recent.json"]);
        assert!(
            SessionStore::new(&dir.path().join("none"))
                .expire(&retention, now, false)
                .unwrap()
                .is_empty()
        );
    }

    /// The watch's samples go to a file beside the record, appended only when the percentage
    /// moved, never rewriting the record; they read back bounded and in order, a torn line
    /// skipped, and the file stays bounded and expires with its record.
    #[test]
    fn context_samples_are_appended_beside_the_record_and_read_back_bounded() {
        let (_dir, store, now) = store_with(&[("old", 10)]);
        let record = store.path(Agent::Claude, "old").unwrap();
        let record_text = fs::read_to_string(&record).unwrap();
        let sample = |n: i64, percent: u8| ContextSample {
            at: now.checked_add(jiff::SignedDuration::from_secs(n)).unwrap(),
            percent,
            used: u64::from(percent) * 2_000,
            window: 200_000,
        };
        let samples = samples_path(&record);
        store
            .record_sample(Agent::Claude, "old", sample(0, 10))
            .unwrap();
        store
            .record_sample(Agent::Claude, "old", sample(1, 10))
            .unwrap();
        store
            .record_sample(Agent::Claude, "old", sample(2, 11))
            .unwrap();
        assert_eq!(fs::read_to_string(&samples).unwrap().lines().count(), 2);
        assert_eq!(fs::read_to_string(&record).unwrap(), record_text);
        // A torn last line (a writer killed midway) is skipped, and the next sample compares
        // with nothing it cannot read: it is kept.
        fs::OpenOptions::new()
            .append(true)
            .open(&samples)
            .unwrap()
            .write_all(b"{\"at\":")
            .unwrap();
        let read = read_samples(&samples);
        assert_eq!(read.iter().map(|s| s.percent).collect::<Vec<_>>(), [10, 11]);
        for n in 0..activity::MAX_SAMPLES as i64 * 4 {
            store
                .record_sample(Agent::Claude, "old", sample(n, (n % 100) as u8))
                .unwrap();
        }
        let size = fs::metadata(&samples).unwrap().len();
        assert!(size <= MAX_SAMPLES_BYTES + 256, "{size} bytes");
        let read = read_samples(&samples);
        assert_eq!(read.len(), activity::MAX_SAMPLES);
        assert!(read.windows(2).all(|w| w[0].percent != w[1].percent));
        let last = activity::MAX_SAMPLES as i64 * 4 - 1;
        assert_eq!(read.last(), Some(&sample(last, (last % 100) as u8)));
        let listed = store.latest(1).unwrap();
        assert_eq!(listed[0].record.context, read);
        // The record expires with its samples.
        let keep = HashSet::new();
        let retention = SessionRetention {
            horizon: None,
            max_age: Duration::from_secs(86_400 * 5),
            max_count: usize::MAX,
            keep: &keep,
        };
        fs::File::options()
            .write(true)
            .open(&record)
            .unwrap()
            .set_modified(days_before(now, 10).into())
            .unwrap();
        assert_eq!(store.expire(&retention, now, false).unwrap().len(), 1);
        assert!(!samples.exists());
    }

    /// Without any checkpoint in the log, files expire by age and beyond the count, the least
    /// recently written first; the young and the kept never.
    #[test]
    fn session_files_expire_by_age_and_count() {
        let ages = [("a", 40), ("b", 20), ("c", 3), ("d", 2), ("e", 0), ("f", 0)];
        let (_dir, store, now) = store_with(&ages);
        let keep = HashSet::from([file_name(Agent::Claude, "c").unwrap()]);
        let by_age = SessionRetention {
            horizon: None,
            max_age: Duration::from_secs(30 * 86_400),
            max_count: usize::MAX,
            keep: &keep,
        };
        let files = |expired: Vec<ExpiredSession>| -> Vec<String> {
            expired.into_iter().map(|e| e.file).collect()
        };
        assert_eq!(
            files(store.expire(&by_age, now, true).unwrap()),
            ["claude-a.json"]
        );
        let by_count = SessionRetention {
            max_age: FOREVER,
            max_count: 2,
            ..by_age.clone()
        };
        // The newest two are e and f; c is kept; a, b and d go, but not b while a hook of its
        // session holds its lock.
        let in_use = store::Lock::acquire(&store.path(Agent::Claude, "b").unwrap()).unwrap();
        assert_eq!(
            files(store.expire(&by_count, now, false).unwrap()),
            ["claude-a.json", "claude-d.json"]
        );
        drop(in_use);
        assert_eq!(
            files(store.expire(&by_count, now, false).unwrap()),
            ["claude-b.json"]
        );
        assert_eq!(
            names(&store.dir),
            ["claude-c.json", "claude-e.json", "claude-f.json"]
        );
        // The count never removes a file written within MIN_AGE.
        let one = SessionRetention {
            max_count: 0,
            ..by_count
        };
        assert!(store.expire(&one, now, false).unwrap().is_empty());
    }

    #[test]
    fn the_latest_records_are_listed_newest_first_and_other_files_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        assert!(store.latest(5).unwrap().is_empty());
        let now = Timestamp::now();
        for (n, (agent, id)) in [
            (Agent::Claude, "s1"),
            (Agent::Codex, "s2"),
            (Agent::Claude, "s3+a1"),
        ]
        .into_iter()
        .enumerate()
        {
            store
                .update(agent, id, |r| r.facts.consecutive_blocks = n as u32)
                .unwrap();
            let file = fs::File::options()
                .write(true)
                .open(store.path(agent, id).unwrap())
                .unwrap();
            let age = Duration::from_secs(60 * (3 - n as u64));
            file.set_modified(now.saturating_sub(age).unwrap().into())
                .unwrap();
        }
        fs::write(store.dir.join("nobody-x.json"), "{}").unwrap();
        fs::write(store.dir.join("claude-bad.json"), "not json").unwrap();
        fs::write(store.dir.join("notes.txt"), "").unwrap();
        let listed = store.latest(10).unwrap();
        let names: Vec<(Agent, &str, u32)> = (listed.iter())
            .map(|s| (s.agent, s.id.as_str(), s.record.facts.consecutive_blocks))
            .collect();
        assert_eq!(
            names,
            [
                (Agent::Claude, "s3+a1", 2),
                (Agent::Codex, "s2", 1),
                (Agent::Claude, "s1", 0)
            ]
        );
        assert_eq!(store.latest(1).unwrap().len(), 1);
    }

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
