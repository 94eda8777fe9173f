//! One git process, bounded: started for an explicitly named repository with a configuration
//! that runs no program, its output captured, killed when it takes longer than it was given.
//! `checkpoint diff`, `restore`, `verify`, the tested-tree id of receipts and the temporary
//! worktree of a failing-test proof all call git this way.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use super::Repo;

/// How much of git's standard error goes into [`GitCallError::Failed`].
const MAX_STDERR_CHARS: usize = 300;

/// Why a git call failed. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitCallError {
    /// A git process (or a thread waiting for one) could not be started.
    #[error("cannot run git {what}: {source}")]
    Spawn {
        /// Which git command, e.g. `cat-file`.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// Git did not answer in time; the process was killed.
    #[error("git {what} did not finish within {} s", timeout.as_secs_f64())]
    TimedOut {
        /// Which git command.
        what: &'static str,
        /// How long it was given.
        timeout: Duration,
    },
    /// Git exited unsuccessfully.
    #[error("git {what} failed ({status}): {stderr}")]
    Failed {
        /// Which git command.
        what: &'static str,
        /// How it exited.
        status: String,
        /// Its standard error, on one line.
        stderr: String,
    },
}

/// `git ARGS` for `repo`, reading nothing else: `GIT_DIR` and `GIT_WORK_TREE` name the
/// repository explicitly, its config runs no program ([`SAFE_CONFIG`](super::SAFE_CONFIG)),
/// no optional locks are taken, and stdin is `input` or empty.
pub(crate) fn git(repo: &Repo, args: &[&str], input: Option<Vec<u8>>) -> duct::Expression {
    git_with_index(repo, args, input, None)
}

/// [`git`] with `GIT_INDEX_FILE` set to `index` (a temporary index, so that the user's is never
/// touched), or removed when `None`.
pub(crate) fn git_with_index(
    repo: &Repo,
    args: &[&str],
    input: Option<Vec<u8>>,
    index: Option<&Path>,
) -> duct::Expression {
    let mut argv: Vec<&OsStr> = super::SAFE_CONFIG.iter().map(OsStr::new).collect();
    argv.push(OsStr::new("--no-optional-locks"));
    argv.extend(args.iter().map(OsStr::new));
    let expression = duct::cmd("git", argv)
        .dir(&repo.workdir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_DIR", &repo.git_dir)
        .env("GIT_WORK_TREE", &repo.workdir);
    let expression = match index {
        Some(index) => expression.env("GIT_INDEX_FILE", index),
        None => expression.env_remove("GIT_INDEX_FILE"),
    };
    match input {
        Some(bytes) => expression.stdin_bytes(bytes),
        None => expression.stdin_null(),
    }
}

/// Runs `expression` with its output captured, killing it when it takes longer than `timeout`.
/// Any exit status is returned; see [`succeeded`].
pub(crate) fn run(
    expression: duct::Expression,
    what: &'static str,
    timeout: Duration,
) -> Result<Output, GitCallError> {
    let handle = expression
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .start()
        .map_err(|source| GitCallError::Spawn { what, source })?;
    let waited = match Instant::now().checked_add(timeout) {
        Some(deadline) => handle.wait_deadline(deadline),
        None => handle.wait().map(Some),
    };
    match waited {
        Ok(Some(out)) => Ok(out.clone()),
        Ok(None) => {
            let _ = handle.kill();
            // Reaped here when it dies at once; dropping the handle reaps it later otherwise.
            let _ = handle.wait_deadline(Instant::now() + Duration::from_millis(200));
            Err(GitCallError::TimedOut { what, timeout })
        }
        Err(source) => Err(GitCallError::Spawn { what, source }),
    }
}

/// [`run`] for a git that talks to a remote (`push`, `fetch`, `ls-remote`): it starts helpers
/// (`ssh`, `git-remote-https`, `receive-pack` for a path) that outlive a killed git and hold its
/// output open. So git leads a process group of its own, the whole group is killed at the
/// timeout (and, through a watchdog, when this process dies first, e.g. a push interrupted with
/// Ctrl-C), and it never asks on the terminal (`GIT_TERMINAL_PROMPT=0`): a prompt in a
/// background group would only wait for the timeout.
pub(crate) fn run_remote(
    expression: duct::Expression,
    what: &'static str,
    timeout: Duration,
) -> Result<Output, GitCallError> {
    let handle = expression
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .before_spawn(|cmd| {
            cmd.process_group(0);
            Ok(())
        })
        .start()
        .map_err(|source| GitCallError::Spawn { what, source })?;
    let group = handle.pids().first().copied();
    let watchdog = group.and_then(crate::runner::guard_group);
    let waited = match Instant::now().checked_add(timeout) {
        Some(deadline) => handle.wait_deadline(deadline),
        None => handle.wait().map(Some),
    };
    // The group goes in every case: a helper git left behind must not outlive the call.
    if let Some(group) = group {
        crate::runner::kill_group(group);
    }
    let waited = match waited {
        Ok(None) => {
            let _ = handle.wait_deadline(Instant::now() + Duration::from_millis(500));
            Err(GitCallError::TimedOut { what, timeout })
        }
        Ok(Some(out)) => Ok(out.clone()),
        Err(source) => Err(GitCallError::Spawn { what, source }),
    };
    if let Some(watchdog) = watchdog {
        watchdog.disarm();
    }
    waited
}

/// `out` when the process exited successfully, else [`GitCallError::Failed`] with its stderr.
pub(crate) fn succeeded(out: Output, what: &'static str) -> Result<Output, GitCallError> {
    if out.status.success() {
        return Ok(out);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(GitCallError::Failed {
        what,
        status: out.status.to_string(),
        stderr: checkpoint_core::sanitize::line(&stderr, MAX_STDERR_CHARS),
    })
}

/// The object id git printed as `out`'s standard output (`rev-parse`, `write-tree`), or
/// [`GitCallError::Failed`] when it printed something else.
pub(crate) fn object_id(out: &Output, what: &'static str) -> Result<String, GitCallError> {
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if id.len() < 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(GitCallError::Failed {
            what,
            status: "unexpected output".to_owned(),
            stderr: checkpoint_core::sanitize::line(&id, 80),
        });
    }
    Ok(id)
}

/// Runs `expression` within `timeout` and returns its output when it succeeded.
pub(crate) fn output(
    expression: duct::Expression,
    what: &'static str,
    timeout: Duration,
) -> Result<Output, GitCallError> {
    succeeded(run(expression, what, timeout)?, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(5);

    #[test]
    fn a_slow_process_is_killed_at_the_timeout() {
        let started = Instant::now();
        let err = run(
            duct::cmd!("sleep", "10"),
            "sleep",
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(matches!(err, GitCallError::TimedOut { .. }), "{err}");
        assert_eq!(err.to_string(), "git sleep did not finish within 0.1 s");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn missing_programs_and_failures_are_errors() {
        let err = run(duct::cmd!("checkpoint-no-such-program-here"), "x", TIMEOUT).unwrap_err();
        assert!(matches!(err, GitCallError::Spawn { .. }), "{err}");
        let out = run(
            duct::cmd!("sh", "-c", "echo 'bad\nthing' >&2; exit 3"),
            "y",
            TIMEOUT,
        )
        .unwrap();
        let err = succeeded(out, "y").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("git y failed (exit status: 3): bad thing"),
            "{err}"
        );
        let out = output(duct::cmd!("sh", "-c", "echo hi"), "z", TIMEOUT).unwrap();
        assert_eq!(out.stdout, b"hi\n");
    }
}
