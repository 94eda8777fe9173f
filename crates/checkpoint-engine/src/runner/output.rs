//! The standard output of a program the gate asks about the project's structure (`cargo
//! metadata`, `go list`): bounded in time and size, and the program's whole process group is
//! killed afterwards, so a helper it started cannot outlive the question.

use std::io::Read as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Runs `program args…` in `dir` with `env` added to the inherited environment (stdin from
/// `/dev/null`, stderr discarded) as the leader of its own process group and returns its stdout
/// when it exits 0 within `timeout` having printed at most `limit` bytes. `None` when it cannot start, fails, prints more, or runs out of time.
pub fn output(
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
    timeout: Duration,
    limit: u64,
) -> Option<Vec<u8>> {
    let mut child = super::question(program, args, dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut out = Vec::new();
        let read = stdout.take(limit + 1).read_to_end(&mut out).map(|_| out);
        let _ = sender.send(read);
    });
    let read = receiver.recv_timeout(timeout);
    // Ends whatever is left of the group: the program when it timed out or printed too much, and
    // any helper it started.
    super::kill_group(child.id());
    let status = child.wait().ok()?;
    match read {
        Ok(Ok(out)) if status.success() && out.len() as u64 <= limit => Some(out),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration, limit: u64) -> Option<Vec<u8>> {
        output(
            "/bin/sh",
            &["-c", script],
            &[],
            Path::new("/"),
            timeout,
            limit,
        )
    }

    #[test]
    fn the_output_of_a_success_within_bounds() {
        let long = Duration::from_secs(10);
        assert_eq!(sh("echo hi", long, 3).as_deref(), Some(&b"hi\n"[..]));
        assert_eq!(sh("echo hi; exit 1", long, 100), None);
        assert_eq!(sh("echo hello", long, 3), None);
        let env = output(
            "/bin/sh",
            &["-c", "echo $X"],
            &[("X", "y")],
            Path::new("/"),
            long,
            9,
        );
        assert_eq!(env.as_deref(), Some(&b"y\n"[..]));
        assert_eq!(
            output("/nonexistent", &[], &[], Path::new("/"), long, 100),
            None
        );
    }

    #[test]
    fn a_program_that_hangs_is_killed_with_its_children() {
        let started = std::time::Instant::now();
        // The background sleep holds stdout open: the group must be killed for the read to end.
        assert_eq!(
            sh(
                "sleep 30 & echo started; wait",
                Duration::from_millis(300),
                100
            ),
            None
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
