//! Runs one test command with a timeout and reduces its output to a [`TestOutcome`].
//!
//! The command runs as `/bin/sh -c <command>`:
//!
//! - in the given directory, with stdin from `/dev/null`;
//! - with the inherited environment plus `PYTHONDONTWRITEBYTECODE=1` (a same-size edit within the
//!   same second can otherwise make Python reuse stale bytecode, so a real fix still looks broken);
//!   nothing else is set or removed;
//! - with stdout and stderr on two pipes, each drained by its own thread that hashes everything
//!   but keeps only the first 16 KiB and the last 256 KiB (and says how many bytes it dropped in
//!   between), so a chatty test neither blocks on a full pipe nor fills the disk or memory;
//! - as the leader of its own process group, guarded by a watchdog process that kills the group
//!   if this process dies first (the agent's hook timeout, Ctrl-C, SIGKILL).
//!
//! When the timeout runs out the whole group gets SIGTERM, then SIGKILL after [`KILL_GRACE`]. The
//! group is also terminated the same way after the leader exits by itself, even on success, so a
//! test that forks leaves nothing behind. Processes that leave the group (`setsid`, `setpgid`)
//! are out of reach; the output they may still hold open is waited for at most [`DRAIN_LIMIT`].
//! The kept output is summarized by [`checkpoint_core::tail::summarize`].
//!
//! [`run_recorded`] is the run for a signed receipt: stdout and stderr are kept apart and each is
//! hashed whole, so the receipt can say exactly what the command printed.

mod ask;
mod capture;
mod output;
mod watchdog;

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

pub use ask::{ask, on_path};
use capture::Capture;
use checkpoint_core::outcome::{TestOutcome, TestStatus};
use checkpoint_core::tail;
pub use output::output;
pub(crate) use watchdog::Watchdog;

/// How long the process group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(300);
/// How long the output is still read after the group is gone (an escaped process may hold it).
pub const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// How often the group is checked during [`KILL_GRACE`].
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// How long to wait for the killed leader to be reaped (it could be stuck in the kernel).
const REAP_LIMIT: Duration = Duration::from_secs(5);
/// The longest command or output excerpt quoted in an error line.
const MAX_QUOTE_CHARS: usize = 120;

/// Told when the stop gate starts and ends a fresh test run, for a person watching: `checkpoint
/// check` on a terminal shows a ticking line. Hooks watch nothing ([`Unwatched`]).
pub trait RunWatch {
    /// `command` starts to run.
    fn started(&self, command: &str);
    /// The command that started has ended.
    fn ended(&self);
}

/// The [`RunWatch`] of a hook: nobody is watching.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unwatched;

impl RunWatch for Unwatched {
    fn started(&self, _command: &str) {}
    fn ended(&self) {}
}

/// A run with stdout and stderr kept apart and hashed whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// How it went (the tail holds the end of stdout, then of stderr).
    pub outcome: TestOutcome,
    /// Lowercase hex SHA-256 of everything written to stdout; `None` when nothing ran.
    pub stdout_sha256: Option<String>,
    /// Lowercase hex SHA-256 of everything written to stderr; `None` when nothing ran.
    pub stderr_sha256: Option<String>,
}

/// Runs `command` with `sh -c` in `dir` (stdout and stderr in separate files, each hashed whole
/// for a validation receipt), kills it with its whole process group after `timeout`,
/// and reports how it went. Never panics: problems become a one-line [`TestOutcome::error`].
///
/// Exit 0 is [`TestStatus::Passed`]. The command could not run — [`TestStatus::Error`] — when the
/// shell says 127 (not found) or 126 (not executable), when its process could not be started
/// (the directory is gone, `/bin/sh` cannot be spawned), or when a signal the gate did not send
/// killed it before it reported a test (`exit_code` is then `None`). Any other exit is
/// [`TestStatus::Failed`], a signal after a reported test too; the timeout is
/// [`TestStatus::TimedOut`]. The gate's own failures around the command (a pipe, the watchdog,
/// waiting) are [`TestStatus::Internal`].
pub fn run_recorded(command: &str, dir: &Path, timeout: Duration) -> Recorded {
    let started = Instant::now();
    let result = execute(command, dir, timeout, &Input::default());

    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (ending, out, err) = match result {
        Ok(ran) => ran,
        Err(unstarted) => {
            let (status, error) = match unstarted {
                Unstarted::Command(error) => (TestStatus::Error, error),
                Unstarted::Gate(error) => (TestStatus::Internal, error),
            };
            let outcome = TestOutcome {
                status,
                duration_ms,
                error: Some(error),
                ..TestOutcome::not_run()
            };
            return Recorded {
                outcome,
                stdout_sha256: None,
                stderr_sha256: None,
            };
        }
    };
    let mut output = out.bytes;
    if !output.is_empty() && !output.ends_with(b"\n") {
        output.push(b'\n');
    }
    output.extend(err.bytes);
    let (stdout_sha256, stderr_sha256) = (Some(out.sha256), Some(err.sha256));
    let summary = tail::summarize(&output);
    let (status, exit_code, error) = match ending {
        Ending::TimedOut => (TestStatus::TimedOut, None, None),
        Ending::Exited(Some(0)) => (TestStatus::Passed, Some(0), None),
        Ending::Exited(Some(code @ (126 | 127))) => (
            TestStatus::Error,
            Some(code),
            Some(not_runnable(command, code, &summary.tail)),
        ),
        Ending::Killed(signal) if !reported(&summary) => {
            (TestStatus::Error, None, Some(killed(command, signal)))
        }
        Ending::Killed(_) => (TestStatus::Failed, None, None),
        Ending::Exited(code) => (TestStatus::Failed, code, None),
    };
    let outcome = TestOutcome {
        status,
        exit_code,
        passed: summary.passed,
        failed: summary.failed,
        skipped: summary.skipped,
        duration_ms,
        failing: summary.failing,
        tail: summary.tail,
        error,
        cached: false,
    };
    Recorded {
        outcome,
        stdout_sha256,
        stderr_sha256,
    }
}

/// How the process group's leader ended.
enum Ending {
    /// It exited by itself with this code (`None`: neither a code nor a signal was told).
    Exited(Option<i32>),
    /// A signal the gate did not send killed it: its number.
    Killed(i32),
    /// The timeout ran out and the group was killed.
    TimedOut,
}

/// What a command gets beside its directory: variables added to the inherited environment, and
/// its stdin (else `/dev/null`).
#[derive(Debug, Default)]
struct Input<'a> {
    env: &'a [(String, String)],
    stdin: Option<&'a [u8]>,
}

/// How a hook command ran ([`run_hook`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// Its exit code; `None` when a signal ended it or the timeout ran out.
    pub exit_code: Option<i32>,
    /// Whether the timeout ran out (the whole group was killed).
    pub timed_out: bool,
    /// Its stdout (its head and tail when long, as for a test command), lossily decoded.
    pub stdout: String,
    /// Its stderr, likewise.
    pub stderr: String,
}

/// Runs a hook's `command` the way an agent does — `sh -c` in `dir`, with `env` added to the
/// inherited environment and `stdin` written to it, then closed — as the leader of its own
/// process group, killed with the whole group after `timeout` (and cleaned up, and watched, as a
/// test command is). `Err` is a one-line reason why it could not run at all.
pub fn run_hook(
    command: &str,
    dir: &Path,
    env: &[(String, String)],
    stdin: &[u8],
    timeout: Duration,
) -> Result<HookRun, String> {
    let input = Input {
        env,
        stdin: Some(stdin),
    };
    let (ending, stdout, stderr) = execute(command, dir, timeout, &input).map_err(String::from)?;
    let (exit_code, timed_out) = match ending {
        Ending::Exited(code) => (code, false),
        Ending::Killed(_) => (None, false),
        Ending::TimedOut => (None, true),
    };
    Ok(HookRun {
        exit_code,
        timed_out,
        stdout: String::from_utf8_lossy(&stdout.bytes).into_owned(),
        stderr: String::from_utf8_lossy(&stderr.bytes).into_owned(),
    })
}

/// Why [`execute`] has no ending to report, in one line: the command's process could not be
/// started (the test command cannot run), or the gate failed around it.
#[derive(Debug)]
enum Unstarted {
    /// The command's own process could not be started.
    Command(String),
    /// A pipe, the watchdog or waiting failed: the gate's own failure.
    Gate(String),
}

impl From<Unstarted> for String {
    fn from(unstarted: Unstarted) -> String {
        match unstarted {
            Unstarted::Command(reason) | Unstarted::Gate(reason) => reason,
        }
    }
}

/// Spawns `command` with `input`, waits, cleans up the group and collects stdout and stderr.
fn execute(
    command: &str,
    dir: &Path,
    timeout: Duration,
    input: &Input<'_>,
) -> Result<(Ending, capture::Captured, capture::Captured), Unstarted> {
    let pipe = || {
        io::pipe()
            .map_err(|e| Unstarted::Gate(format!("cannot create a pipe for the test output: {e}")))
    };
    let (out_reader, out_writer) = pipe()?;
    let (err_reader, err_writer) = pipe()?;
    // Built in a block: duct's builders take `&self`, so a binding of the bare command outside it
    // would keep the pipes' write ends open until this function returns, and the readers would
    // wait out DRAIN_LIMIT after every run.
    let expression = {
        let mut bare = duct::cmd!("/bin/sh", "-c", command)
            .stderr_file(err_writer)
            .stdout_file(out_writer)
            .dir(dir)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        for (key, value) in input.env {
            bare = bare.env(key, value);
        }
        match input.stdin {
            Some(bytes) => bare.stdin_bytes(bytes.to_vec()),
            None => bare.stdin_null(),
        }
    }
    .unchecked()
    .before_spawn(|cmd| {
        cmd.process_group(0);
        Ok(())
    });
    let started = expression.start();
    // The expression holds the pipes' write ends: drop them, or the readers never see the end.
    drop(expression);
    let handle = started.map_err(|e| {
        Unstarted::Command(if dir.is_dir() {
            format!("cannot start /bin/sh: {e}")
        } else {
            format!(
                "test directory {} is missing or not a directory",
                dir.display()
            )
        })
    })?;
    // The group id is the leader's pid (process_group(0)); duct starts exactly one process here.
    let group = handle
        .pids()
        .first()
        .and_then(|&pid| i32::try_from(pid).ok())
        .and_then(Pid::from_raw);
    let Some(group) = group else {
        let _ = handle.kill();
        let _ = handle.wait();
        return Err(Unstarted::Gate(
            "the test command started without a process id".to_owned(),
        ));
    };
    let guarded = Watchdog::start(group).and_then(|watchdog| {
        let out = Capture::start(out_reader)?;
        Ok((watchdog, out, Capture::start(err_reader)?))
    });
    let (watchdog, out, err) = match guarded {
        Ok(guarded) => guarded,
        Err(e) => {
            terminate_group(group, &handle);
            return Err(Unstarted::Gate(format!(
                "cannot watch the test command: {e}"
            )));
        }
    };
    let waited = match Instant::now().checked_add(timeout) {
        Some(deadline) => handle.wait_deadline(deadline),
        None => handle.wait().map(Some),
    };
    let ending = waited.map(|done| match done {
        Some(out) => match (out.status.code(), out.status.signal()) {
            (None, Some(signal)) => Ending::Killed(signal),
            (code, _) => Ending::Exited(code),
        },
        None => Ending::TimedOut,
    });
    terminate_group(group, &handle);
    watchdog.disarm();
    let ending =
        ending.map_err(|e| Unstarted::Gate(format!("waiting for the command failed: {e}")))?;
    let deadline = Instant::now() + DRAIN_LIMIT;
    Ok((ending, out.finish(deadline), err.finish(deadline)))
}

/// SIGTERM to the whole group, up to [`KILL_GRACE`] for it to empty, then SIGKILL, then reaps the
/// leader. Returns at once when the group is already gone (the usual case after a clean exit).
///
/// The leader is reaped while polling: an unreaped zombie leader still counts as a member.
fn terminate_group(group: Pid, handle: &duct::Handle) {
    if kill_process_group(group, Signal::TERM) == Err(Errno::SRCH) {
        return;
    }
    let grace_end = Instant::now() + KILL_GRACE;
    while Instant::now() < grace_end {
        let _ = handle.try_wait();
        if test_kill_process_group(group) == Err(Errno::SRCH) {
            return;
        }
        thread::sleep(POLL_INTERVAL);
    }
    // ESRCH (everyone left during the last poll) is fine.
    let _ = kill_process_group(group, Signal::KILL);
    let _ = handle.wait_deadline(Instant::now() + REAP_LIMIT);
}

/// SIGKILL to the process group whose leader is `pid` (a program started with its own group);
/// a group that is already gone is fine.
pub(crate) fn kill_group(pid: u32) {
    if let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(group, Signal::KILL);
    }
}

/// Starts a [`Watchdog`] for the process group whose leader is `pid`, which kills the group
/// should this process die before [`Watchdog::disarm`]; `None` when it cannot start.
pub(crate) fn guard_group(pid: u32) -> Option<Watchdog> {
    let group = i32::try_from(pid).ok().and_then(Pid::from_raw)?;
    Watchdog::start(group).ok()
}

/// The command for asking `program args…` something in `dir` (see [`ask`] and [`output`]): the
/// leader of its own process group, so that [`kill_group`] ends it and whatever it started, with
/// its stdout piped and its stderr discarded; the caller sets its stdin.
fn question(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    dir: &Path,
) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    command
}

/// The one-line error for the shell's 126/127, with the shell's own complaint when there is one
/// (it is the last line: the script stops right after it).
fn not_runnable(command: &str, code: i32, tail: &str) -> String {
    let what = if code == 127 {
        "not found"
    } else {
        "not executable"
    };
    let mut error = format!("test command {what}: `{}`", quote(command));
    if let Some(line) = tail.lines().rev().find(|l| !l.trim().is_empty()) {
        error.push_str(&format!(" ({})", quote(line)));
    }
    error
}

/// Whether the output reports any test: a count, or a failing test's name.
fn reported(summary: &tail::Summary) -> bool {
    summary.passed.is_some() || summary.failed.is_some() || !summary.failing.is_empty()
}

/// The one-line error for a command a signal killed before it reported a test.
fn killed(command: &str, signal: i32) -> String {
    let names = [
        (1, "SIGHUP"),
        (2, "SIGINT"),
        (3, "SIGQUIT"),
        (4, "SIGILL"),
        (6, "SIGABRT"),
        (7, "SIGBUS"),
        (8, "SIGFPE"),
        (9, "SIGKILL"),
        (11, "SIGSEGV"),
        (13, "SIGPIPE"),
        (14, "SIGALRM"),
        (15, "SIGTERM"),
    ];
    let name = (names.iter())
        .find(|(n, _)| *n == signal)
        .map(|(_, name)| format!(" ({name})"))
        .unwrap_or_default();
    format!(
        "test command killed by signal {signal}{name} before it reported: `{}`",
        quote(command)
    )
}

/// `text` on one line (whitespace runs collapsed), cut to [`MAX_QUOTE_CHARS`] chars plus `…`.
fn quote(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_testkit::procs::live_members;
    use std::fs;

    const LONG: Duration = Duration::from_secs(60);

    fn run(command: &str, dir: &Path, timeout: Duration) -> TestOutcome {
        run_recorded(command, dir, timeout).outcome
    }

    fn run_in(dir: &tempfile::TempDir, command: &str, timeout: Duration) -> TestOutcome {
        run(command, dir.path(), timeout)
    }

    /// The shell writes its pid (= the group id) to `pgid`; returns it.
    fn recorded_group(dir: &tempfile::TempDir) -> i32 {
        fs::read_to_string(dir.path().join("pgid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn live_members_sees_a_live_group() {
        // Guards the checks below: the helper finds this very test process in its own group.
        let own = rustix::process::getpgrp().as_raw_nonzero().get();
        assert!(!live_members(own).is_empty());
    }

    #[test]
    fn passing_command() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(&dir, "echo 'test result: ok. 3 passed; 0 failed'", LONG);
        assert_eq!(out.status, TestStatus::Passed);
        assert_eq!(out.exit_code, Some(0));
        assert_eq!((out.passed, out.failed), (Some(3), Some(0)));
        assert!(out.error.is_none());
        assert!(!out.cached);
    }

    #[test]
    fn failing_command_keeps_stdout_and_stderr_and_runs_in_dir() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("marker"), "here").unwrap();
        let out = run_in(
            &dir,
            "cat marker; echo; echo '--- FAIL: TestX (0.00s)'; echo to-stderr >&2; exit 3",
            LONG,
        );
        assert_eq!(out.status, TestStatus::Failed);
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.failing, ["TestX"]);
        assert_eq!(out.tail, "here\n--- FAIL: TestX (0.00s)\nto-stderr");
        assert!(out.error.is_none());
    }

    #[test]
    fn recorded_run_hashes_stdout_and_stderr_apart() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run_recorded("printf out; printf err >&2; exit 4", dir.path(), LONG);
        assert_eq!(ran.outcome.status, TestStatus::Failed);
        assert_eq!(ran.outcome.exit_code, Some(4));
        assert_eq!(ran.outcome.tail, "out\nerr");
        assert_eq!(
            ran.stdout_sha256,
            Some(checkpoint_core::hex::sha256_hex(b"out"))
        );
        assert_eq!(
            ran.stderr_sha256,
            Some(checkpoint_core::hex::sha256_hex(b"err"))
        );

        let big = run_recorded("yes line | head -n 100000", dir.path(), LONG);
        assert_eq!(
            big.stdout_sha256,
            Some(checkpoint_core::hex::sha256_hex(
                "line\n".repeat(100_000).as_bytes()
            ))
        );
        assert_eq!(
            big.stderr_sha256,
            Some(checkpoint_core::hex::sha256_hex(b""))
        );

        let missing = run_recorded("true", &dir.path().join("gone"), LONG);
        assert_eq!(missing.outcome.status, TestStatus::Error);
        assert_eq!((missing.stdout_sha256, missing.stderr_sha256), (None, None));
    }

    #[test]
    fn child_environment_disables_python_bytecode() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(&dir, r#"test "$PYTHONDONTWRITEBYTECODE" = 1"#, LONG);
        assert_eq!(out.status, TestStatus::Passed);
    }

    /// A command whose output ends when it exits is read to its end at once: the run does not
    /// wait out [`DRAIN_LIMIT`] (it did, for every run, while a builder kept the pipes open).
    #[test]
    fn a_quick_command_is_done_without_waiting_for_the_drain_limit() {
        let dir = tempfile::tempdir().unwrap();
        for input in [None, Some(&b"x"[..])] {
            let started = Instant::now();
            let (ending, out, _) = execute(
                "echo hi",
                dir.path(),
                LONG,
                &Input {
                    env: &[],
                    stdin: input,
                },
            )
            .unwrap();
            assert!(matches!(ending, Ending::Exited(Some(0))));
            assert_eq!(out.bytes, b"hi\n");
            assert!(started.elapsed() < DRAIN_LIMIT, "{:?}", started.elapsed());
        }
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(
            &dir,
            "echo $$ > pgid; sleep 300 & sleep 300 & echo started; wait",
            Duration::from_millis(500),
        );
        assert_eq!(out.status, TestStatus::TimedOut);
        assert_eq!(out.exit_code, None);
        assert!(out.tail.contains("started"), "{:?}", out.tail);
        assert!(out.duration_ms < 60_000);
        assert_eq!(live_members(recorded_group(&dir)), Vec::<String>::new());
    }

    #[test]
    fn group_is_killed_after_a_clean_exit_too() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run_in(&dir, "echo $$ > pgid; sleep 300 & echo bye", LONG);
        assert!(started.elapsed() < LONG / 2);
        assert_eq!(out.status, TestStatus::Passed);
        assert_eq!(out.tail, "bye");
        assert_eq!(live_members(recorded_group(&dir)), Vec::<String>::new());
    }

    #[test]
    fn chatty_command_does_not_deadlock_and_the_tail_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        // 2 × 2.6 MB, half of it on stderr.
        let out = run_in(
            &dir,
            "yes 'stdout line of some length' | head -n 90000; \
             yes 'stderr line of some length' | head -n 90000 >&2; echo done >&2",
            LONG,
        );
        assert_eq!(out.status, TestStatus::Passed);
        assert!(out.tail.len() <= tail::MAX_TAIL_BYTES);
        assert!(out.tail.lines().count() <= tail::MAX_TAIL_LINES);
        assert!(out.tail.ends_with("stderr line of some length\ndone"));
    }

    #[test]
    fn missing_command_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(&dir, "pytestx-not-installed -q", LONG);
        assert_eq!(out.status, TestStatus::Error);
        assert_eq!(out.exit_code, Some(127));
        let error = out.error.unwrap();
        assert!(
            error.starts_with("test command not found: `pytestx-not-installed -q`"),
            "{error}"
        );
        assert!(error.contains("not found)"), "{error}");
        assert!(!error.contains('\n'));
    }

    #[test]
    fn non_executable_command_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.sh"), "#!/bin/sh\nexit 0\n").unwrap();
        let out = run_in(&dir, "./run.sh", LONG);
        assert_eq!(out.status, TestStatus::Error);
        assert_eq!(out.exit_code, Some(126));
        assert!(
            out.error
                .unwrap()
                .starts_with("test command not executable: `./run.sh`")
        );
    }

    /// A command a signal kills before it reports a test could not run (issue 31); one killed
    /// after reporting failed, as before.
    #[test]
    fn a_command_killed_before_it_reports_could_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(&dir, "echo collecting; kill -9 $$", LONG);
        assert_eq!(out.status, TestStatus::Error);
        assert_eq!(out.exit_code, None);
        assert_eq!(
            out.error.as_deref(),
            Some(
                "test command killed by signal 9 (SIGKILL) before it reported: `echo collecting; kill -9 $$`"
            )
        );
        assert_eq!(out.tail, "collecting");
        let out = run_in(&dir, "echo '--- FAIL: TestX (0.00s)'; kill -SEGV $$", LONG);
        assert_eq!(out.status, TestStatus::Failed);
        assert_eq!((out.exit_code, out.error), (None, None));
        assert_eq!(out.failing, ["TestX"]);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let out = run("true", &gone, LONG);
        assert_eq!(out.status, TestStatus::Error);
        assert_eq!(out.exit_code, None);
        assert!(out.error.unwrap().contains("missing or not a directory"));
    }

    #[test]
    fn unbounded_timeout_does_not_overflow() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            run_in(&dir, "true", Duration::MAX).status,
            TestStatus::Passed
        );
    }

    #[test]
    fn multi_line_commands_are_quoted_on_one_line() {
        assert_eq!(quote("cd a &&\n  make   test"), "cd a && make test");
        let long = quote(&"é".repeat(500));
        assert_eq!(long.chars().count(), MAX_QUOTE_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
