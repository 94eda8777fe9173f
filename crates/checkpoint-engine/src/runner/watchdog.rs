//! A guard that kills a test's process group when the process that started it dies, however it
//! dies (SIGTERM, SIGINT, SIGHUP, SIGKILL, a panic that aborts).
//!
//! The guard is a tiny `/bin/sh` in a process group of its own, blocked reading a pipe whose only
//! write end this process holds. When this process ends without [`Watchdog::disarm`], the kernel
//! closes that end, the read sees end-of-file and the guard sends SIGTERM to the test's group, then
//! SIGKILL after [`super::KILL_GRACE`]. A parent-death signal (`PR_SET_PDEATHSIG`) would need
//! `unsafe` code in a `pre_exec` hook, is Linux-only, fires when the spawning *thread* exits and
//! reaches only the group leader, not the grandchildren a test forks; a child subreaper dies with
//! this process. The guard costs one `sh` start (about 1 ms) per test run.

use std::io::{self, PipeWriter, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use rustix::process::Pid;

/// The guard's script: `$1` is the group to kill when the pipe ends without a line.
const SCRIPT: &str =
    "read -r _ || { kill -s TERM -- -\"$1\"; sleep 0.3; kill -s KILL -- -\"$1\"; }";

/// The guard of one process group; [`Watchdog::disarm`] it once the group is gone.
pub(crate) struct Watchdog {
    pipe: PipeWriter,
    guard: Child,
}

impl Watchdog {
    /// Starts guarding `group`.
    pub(crate) fn start(group: Pid) -> io::Result<Watchdog> {
        let (reader, pipe) = io::pipe()?;
        let guard = Command::new("/bin/sh")
            .args(["-c", SCRIPT, "checkpoint-watchdog"])
            .arg(group.as_raw_nonzero().to_string())
            .stdin(reader)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: an agent that kills the hook's group must not take the guard along.
            .process_group(0)
            .spawn()?;
        Ok(Watchdog { pipe, guard })
    }

    /// Tells the guard to exit without killing anything, and reaps it.
    pub(crate) fn disarm(mut self) {
        // A guard that is already gone (killed by someone else) cannot be told; that is fine.
        let _ = self.pipe.write_all(b"\n");
        drop(self.pipe);
        let _ = self.guard.wait();
    }
}
