//! Refreshing a stale index, when it can be done safely, as git does opportunistically.
//!
//! The change set is read with `--no-optional-locks`, so git never writes back what it learnt:
//! after an agent's tools touch files (stat data changed, content not), every later status would
//! re-read every such file. Git reports how many entries it had to re-read (trace2's
//! `refresh/sum_scan`, written to the status's standard error); past [`REFRESH_AFTER`] the index
//! is refreshed with `git update-index -q --refresh`, which writes it through `index.lock`:
//!
//! - not when someone holds `index.lock` (an agent's own `git add`, commit or rebase): git
//!   itself then fails at once, without waiting, and the refresh is skipped;
//! - git writes the new index beside the old one and renames it: never a torn index;
//! - git runs as the leader of its own process group, so a hook killed with its group does not
//!   kill it between taking the lock and removing it; past [`TIMEOUT`] it is sent `SIGTERM`, on
//!   which git removes its lock before it exits.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use super::Repo;

/// Stale entries (stat data changed, content not) that make the index worth refreshing.
pub(super) const REFRESH_AFTER: usize = 100;

/// How long the refresh may take before git is asked to stop.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The environment that makes `git status` report what its refresh re-read, on standard error.
pub(super) const TRACE_ENV: [(&str, &str); 2] =
    [("GIT_TRACE2_EVENT", "2"), ("GIT_TRACE2_EVENT_BRIEF", "1")];

/// How many index entries git re-read because their stat data changed, from its trace2 events
/// in `stderr` (0 when it reported none).
pub(super) fn stale_entries(stderr: &[u8]) -> usize {
    const KEY: &str = r#""key":"refresh/sum_scan","value":""#;
    let text = String::from_utf8_lossy(stderr);
    (text.lines())
        .filter_map(|line| line.split_once(KEY))
        .filter_map(|(_, rest)| rest.split('"').next()?.parse::<usize>().ok())
        .sum()
}

/// `stderr` without git's trace2 events: what git said.
pub(super) fn messages(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    (text.lines())
        .filter(|line| !line.starts_with(r#"{"event":"#))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Refreshes `repo`'s index with the git executable `program` unless `index.lock` is held (see
/// the module's notes). Best-effort: a refresh that cannot happen now happens at a later stop.
pub(super) fn refresh(repo: &Repo, program: &Path) {
    if repo.git_dir.join("index.lock").exists() {
        return;
    }
    let started = Command::new(program)
        .arg("-C")
        .arg(&repo.workdir)
        .args(super::SAFE_CONFIG)
        .args(["update-index", "-q", "--refresh"])
        .env("GIT_DIR", &repo.git_dir)
        .env("GIT_WORK_TREE", &repo.workdir)
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let Ok(mut child) = started else {
        return;
    };
    let deadline = Instant::now() + TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
            _ => break,
        }
    }
    if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
        let _ = kill_process(pid, Signal::TERM);
    }
    // git removes its lock on SIGTERM and exits; it is reaped when it does.
    thread::spawn(move || child.wait());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_entries_are_read_from_the_trace_and_removed_from_messages() {
        let stderr = br#"{"event":"start","argv":["git"]}
{"event":"data","category":"index","key":"refresh/sum_lstat","value":"100"}
{"event":"data","category":"index","key":"refresh/sum_scan","value":"37"}
fatal: not a git repository
"#;
        assert_eq!(stale_entries(stderr), 37);
        assert_eq!(messages(stderr), "fatal: not a git repository");
        assert_eq!(stale_entries(b"fatal: bad\n"), 0);
    }
}
