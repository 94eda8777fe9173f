//! Two sessions in one working tree, the I/O half: each session's tool calls record what they
//! changed ([`after_tool`], signed, see [`crate::session::work`]); a stop that finds another live
//! session with work in progress names it to the agent and asks whether the failure is that
//! session's alone ([`SharedStop::judge`], on the evidence [`checkpoint_core::shared::attribute`]
//! asks for: the affected-test selection of [`crate::select::reach`]).
//!
//! A session alone — no other live session whose work verifies — is judged exactly as before:
//! the stop reads one directory listing more.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::git::Repo;
use crate::journal::{FileKeyManager, KeyManager};
use crate::project::{self, Project, ProjectError};
use crate::session::SessionStore;
use crate::session::work::SessionWork;
use checkpoint_core::changes::ChangeSet;
use checkpoint_core::event::{Agent, EventKind};
use checkpoint_core::journal::signing::MasterKey;
use checkpoint_core::outcome::{TestRun, TestStatus};
use checkpoint_core::policy::GitBackend;
use checkpoint_core::shared::{self, OtherSession, SharedTree};

use super::call::Call;

/// Tools that edit the file their input names (Claude Code, Gemini CLI, Qwen Code, Copilot CLI,
/// OpenCode): after them only that file is claimed, with no look at the tree.
const EDIT_TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "write_file",
    "replace",
    "edit",
    "create",
    "write",
];

/// This user's master key, which signs every session's work; `None` when none is usable (then no
/// work is recorded and every session is judged alone).
fn master_key(call: &Call) -> Option<MasterKey> {
    let keys = FileKeyManager::beside_user_config(call.host.user_config.as_deref())?;
    keys.master().ok()
}

/// The file an edit tool of `call` names, relative to `workdir`; `None` for any other tool, or a
/// file outside the worktree.
fn edited_file(call: &Call, workdir: &Path) -> Option<String> {
    let event = call.event;
    if !EDIT_TOOLS.contains(&event.tool_name.as_deref()?) {
        return None;
    }
    let named = *event.tool_files().first()?;
    super::nudge::inside(workdir, &event.cwd, named)
}

/// What the tree's changed paths hold now (see [`crate::cache::change_digests`]); `None` when
/// git cannot say.
fn look(repo: &Repo, state_dir: &Path, call: &Call) -> Option<BTreeMap<String, String>> {
    let (facts, mut fingerprints) =
        project::read_changes(repo, state_dir, GitBackend::default(), call.host.now);
    let checkpoint_core::changes::RepoFacts::Changes(changes) = facts else {
        return None;
    };
    let digests = fingerprints.digests(&changes);
    fingerprints.keep();
    Some(digests)
}

/// After a tool call that may have changed files (`read_only`: it cannot): the file an edit tool
/// names is claimed; after any other tool, what changed since the session's last look — only
/// while another live session works in the tree. Alone, the session only notes that it is
/// active: its next look, once another session is there, claims everything that changed since
/// its last one (what it did alone included), so nothing is lost, and a shell call costs no
/// `git status` in the usual case of one session.
pub(super) fn after_tool(
    call: &Call,
    repo: &Repo,
    state_dir: &Path,
    read_only: bool,
) -> Result<(), ProjectError> {
    if read_only {
        return Ok(());
    }
    let Some(key) = master_key(call) else {
        return Ok(());
    };
    let sessions = SessionStore::new(state_dir);
    let me = (call.event.agent, call.session_id());
    let now = call.host.now;
    if let Some(file) = edited_file(call, &repo.workdir) {
        sessions.record_work(me, &key, now, false, |work| work.claim([file.as_str()]))?;
        return Ok(());
    }
    let digests = match sessions
        .others_at_work(me, &key.public_key(), now)?
        .is_empty()
    {
        true => None,
        false => look(repo, state_dir, call),
    };
    sessions.record_work(me, &key, now, false, |work| {
        if let Some(digests) = digests {
            work.observe(digests);
        }
    })?;
    Ok(())
}

/// A session starts or its user prompts: its first look, which claims nothing, when it has none
/// yet; otherwise only its activity.
pub(super) fn first_look(call: &Call, repo: &Repo, state_dir: &Path) -> Result<(), ProjectError> {
    let Some(key) = master_key(call) else {
        return Ok(());
    };
    let sessions = SessionStore::new(state_dir);
    let (agent, id) = (call.event.agent, call.session_id());
    let looked = sessions.own_work(agent, id, &key.public_key())?;
    let digests = match looked {
        Some(_) => None,
        None => look(repo, state_dir, call),
    };
    sessions.record_work((agent, id), &key, call.host.now, true, |work| {
        if let Some(digests) = digests {
            work.observe(digests);
        }
    })?;
    Ok(())
}

/// A session ended: it is no longer live.
pub(super) fn ended(call: &Call, state_dir: &Path) -> Result<(), ProjectError> {
    let Some(key) = master_key(call) else {
        return Ok(());
    };
    let sessions = SessionStore::new(state_dir);
    let me = (call.event.agent, call.session_id());
    sessions.record_work(me, &key, call.host.now, false, |work| work.ended = true)?;
    Ok(())
}

/// A stop that shares its tree with other live sessions: who they are, and what this session
/// changed.
pub(super) struct SharedStop {
    /// The other live sessions with their verified work.
    others: Vec<(Agent, String, SessionWork)>,
    /// The changed paths this session changed, or that no session claims; `None`: every one
    /// (its own work is not known).
    mine: Option<BTreeSet<String>>,
}

impl SharedStop {
    /// The other live sessions of `call`'s stop in `project`, and this session's look at the
    /// tree whose changed paths hold `digests` (see [`crate::cache::change_digests`]), which it
    /// records; `None` when the session is alone (or no key signs work).
    pub(super) fn find(
        call: &Call,
        project: &Project,
        digests: impl FnOnce() -> BTreeMap<String, String>,
    ) -> Result<Option<SharedStop>, ProjectError> {
        let event = call.event;
        if event.is_manual() || event.kind == EventKind::SubagentStop {
            return Ok(None);
        }
        let Some(key) = master_key(call) else {
            return Ok(None);
        };
        let sessions = project.sessions();
        let me = (event.agent, call.session_id());
        let now = call.host.now;
        let others = sessions.others_at_work(me, &key.public_key(), now)?;
        if others.is_empty() {
            return Ok(None);
        }
        let digests = digests();
        let changed: BTreeSet<String> = digests.keys().cloned().collect();
        let own = sessions.own_work(me.0, me.1, &key.public_key())?;
        // This stop is a look too: what changed since the last one (a background process of the
        // session's, say) is the session's.
        let work = sessions.record_work(me, &key, now, false, |work| {
            work.observe(digests);
            work.clone()
        })?;
        let mine = (own.is_some() && !work.untracked).then(|| {
            let claimed: BTreeSet<&String> = (others.iter())
                .flat_map(|(_, _, other)| other.touched.iter())
                .collect();
            (changed.iter())
                .filter(|path| work.touched.contains(*path) || !claimed.contains(path))
                .cloned()
                .collect()
        });
        Ok(Some(SharedStop { others, mine }))
    }

    /// What the stop tells of the other sessions for the change set `changes` whose test runs
    /// are `tests`; `asked` names, for each test command, the changed paths that asked for it.
    pub(super) fn judge(
        &self,
        project: &Project,
        changes: &ChangeSet,
        tests: &[TestRun],
        asked: &BTreeMap<String, Vec<String>>,
    ) -> SharedTree {
        let uncommitted: BTreeSet<&str> = (changes.changes.iter())
            .filter(|change| !change.committed)
            .map(|change| change.path.as_str())
            .collect();
        let is_mine = |path: &str| self.mine.as_ref().is_none_or(|mine| mine.contains(path));
        let others: Vec<OtherSession> = (self.others.iter())
            .filter_map(|(agent, id, work)| {
                let files: Vec<String> = (work.touched.iter())
                    .filter(|path| uncommitted.contains(path.as_str()) && !is_mine(path))
                    .cloned()
                    .collect();
                (!files.is_empty()).then(|| OtherSession {
                    agent: agent.name().to_owned(),
                    session: id.clone(),
                    files,
                })
            })
            .collect();
        let theirs: BTreeSet<&str> = (others.iter())
            .flat_map(|other| other.files.iter().map(String::as_str))
            .collect();
        let failed: Vec<&TestRun> = (tests.iter())
            .filter(|run| {
                matches!(
                    run.outcome.status,
                    TestStatus::Failed | TestStatus::TimedOut | TestStatus::Error
                )
            })
            .collect();
        let failure = match &self.mine {
            Some(mine) if !others.is_empty() => shared::attribute(&failed, |command| {
                let of = |set: &dyn Fn(&str) -> bool| -> Vec<&str> {
                    (asked.get(command).into_iter().flatten())
                        .map(String::as_str)
                        .filter(|path| set(path))
                        .collect()
                };
                let reach = |files: Vec<&str>| {
                    let state = Some(project.state_dir.as_path());
                    crate::select::reach(command, &files, &project.workdir, state)
                };
                let ours = reach(of(&|path| mine.contains(path)));
                let their = reach(of(&|path| theirs.contains(path)));
                (ours, their)
            }),
            _ => shared::Attribution::Ours,
        };
        SharedTree { others, failure }
    }
}
