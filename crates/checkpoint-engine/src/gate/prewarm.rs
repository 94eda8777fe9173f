//! Warm results (`[tests] prewarm = true`): after a tool call that may have changed files, the
//! planned tests of the change set start in the background, so that the stop finds their outcome
//! for its fingerprint instead of running them.
//!
//! - **Cheap where it starts.** A tool hook loads no configuration for this: a stop, which loads
//!   it anyway, keeps a marker file in the state directory while prewarm is on, and the tool
//!   hook only looks for it. It then starts its own adapter binary (`--prewarm <dir>`) detached,
//!   in a process group of its own with no stdio of the agent's, and does not wait for it.
//! - **One run at a time per worktree.** The background run takes over under a sidecar lock: a
//!   run of the same fingerprint already under way is left alone (the newcomer exits); one of an
//!   older change set is killed with its process group (its test runs die with it: they are
//!   watched, see [`crate::runner`]).
//! - **The same path as a stop.** It runs the approved commands only, narrowed like the stop's,
//!   through the stop's test runs: the cache, the receipts, and the run lock per fingerprint, so
//!   a stop that comes while the run is under way waits for it and reuses its outcome.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::host::Host;
use crate::project::ProjectError;
use crate::project_env::ProjectVar;
use crate::runner::{self, Unwatched};
use crate::store::{self, Lock};
use checkpoint_core::changes::RepoFacts;
use checkpoint_core::decide::{self, SessionFacts, Stop};

use super::runs::{TestRuns, approved_project};

/// The marker a stop keeps in the state directory while prewarm is on.
const MARKER: &str = "prewarm-on";
/// Which background run is under way, and for which change set (taken over under its lock).
const RECORD: &str = "prewarm.json";
/// The argument that makes an adapter the background run.
pub const ARG: &str = "--prewarm";

/// Tools that only read: after them, nothing starts.
const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "read_file",
    "read_many_files",
    "glob",
    "search_file_content",
    "list_directory",
    "google_web_search",
    "web_fetch",
    "view_image",
];

/// Whether `tool` only reads (see [`READ_ONLY_TOOLS`]).
pub(super) fn is_read_only(tool: Option<&str>) -> bool {
    tool.is_some_and(|tool| READ_ONLY_TOOLS.contains(&tool))
}

/// The background run under way.
#[derive(Debug, Serialize, Deserialize)]
struct Running {
    pid: u32,
    fingerprint: String,
}

/// Keeps the marker in step with the policy a stop loaded.
pub(super) fn remember(state_dir: &Path, on: bool) {
    let marker = state_dir.join(MARKER);
    // The marker only saves tool hooks a lookup; failing to keep it must not fail the stop.
    match (on, marker.exists()) {
        (true, false) => {
            let _ = store::write_atomic(&marker, b"");
        }
        (false, true) => {
            let _ = std::fs::remove_file(&marker);
        }
        _ => {}
    }
}

/// After a tool call in the worktree at `workdir` (state in `state_dir`): starts the background
/// run when prewarm is on and the tool may have changed files, without the variables the
/// project set (`set_by_project`): it runs none of the project's values the stop holds back.
/// Never waits for it.
pub(super) fn after_tool(
    tool: Option<&str>,
    workdir: &Path,
    state_dir: &Path,
    set_by_project: &[ProjectVar],
) {
    if is_read_only(tool) || !state_dir.join(MARKER).exists() {
        return;
    }
    let Ok(program) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(program);
    for held in set_by_project {
        command.env_remove(&held.var);
    }
    command
        .arg(ARG)
        .arg(workdir)
        .current_dir(workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // Not waited for: it outlives this hook, reparented, and ends with its test runs.
    let _ = command.spawn();
}

/// The background run for the worktree around `dir` (an adapter started with [`ARG`]): the
/// planned tests of its change set, as a stop would run them, unless a run of the same change
/// set is under way.
pub fn run(host: &Host, dir: &Path) -> Result<(), ProjectError> {
    let Some(repo) = host.locate(dir)? else {
        return Ok(());
    };
    let (project, _) = approved_project(host, repo, &mut Vec::new())?;
    let policy = &project.policy;
    if !policy.tests.prewarm {
        return Ok(());
    }
    let (RepoFacts::Changes(changes), mut fingerprints) = project.read_changes()? else {
        return Ok(());
    };
    let fingerprint = fingerprints.fingerprint(&changes);
    fingerprints.keep();
    if !take_over(&project.state_dir, &fingerprint)? {
        return Ok(());
    }
    let fresh = Stop {
        repeated: false,
        subagent: false,
    };
    let plan = decide::plan(fresh, &changes, &SessionFacts::default(), policy);
    let journal = project.journal();
    let runs = TestRuns {
        journal: &journal,
        watch: &Unwatched,
        cache: project.test_cache(),
        fingerprint: &fingerprint,
        may_run: true,
        base: None,
    };
    let planned = (plan.tests.into_iter())
        .map(|p| (project.selection(&p, &changes), p))
        .collect();
    runs.run(planned, &mut Vec::new());
    let _ = hand_back(&project.state_dir);
    Ok(())
}

/// Makes this process the background run for `fingerprint`: `false` when a live run of the same
/// fingerprint is under way; a live run of another one is killed first.
fn take_over(state_dir: &Path, fingerprint: &str) -> Result<bool, ProjectError> {
    let record = state_dir.join(RECORD);
    let _lock = Lock::acquire(&record)?;
    if let Some(running) = store::read_json::<Running>(&record).ok().flatten()
        && is_background_run(running.pid)
    {
        if running.fingerprint == fingerprint {
            return Ok(false);
        }
        // A background run leads its own group; its test runs die with it (they are watched).
        runner::kill_group(running.pid);
    }
    let me = Running {
        pid: std::process::id(),
        fingerprint: fingerprint.to_owned(),
    };
    store::write_json(&record, &me)?;
    Ok(true)
}

/// Forgets the record when it is still this process's.
fn hand_back(state_dir: &Path) -> Result<(), ProjectError> {
    let record = state_dir.join(RECORD);
    let _lock = Lock::acquire(&record)?;
    if let Some(running) = store::read_json::<Running>(&record).ok().flatten()
        && running.pid == std::process::id()
    {
        let _ = std::fs::remove_file(&record);
    }
    Ok(())
}

/// Whether `pid` is a live background run (its command line has [`ARG`]): a recorded pid that
/// was reused by another process is never killed.
fn is_background_run(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|cmdline| cmdline.split(|&b| b == 0).any(|arg| arg == ARG.as_bytes()))
}
