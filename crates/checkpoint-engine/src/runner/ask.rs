//! One question to another program over its stdin and stdout (`checkpoint doctor` asks an agent's
//! own CLI which hooks it trusts): bounded in time and line length, and the program's whole
//! process group is killed after the answer.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// The longest stdout line read; a longer one is read in pieces (none of which answers).
const MAX_LINE: u64 = 64 * 1024 * 1024;

/// The executable `name` in the directories of `path` (a `PATH` value), first match.
pub fn on_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|file| is_executable(file))
}

/// Whether `file` is a regular file someone may execute.
#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Whether `file` is a regular file.
#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.is_file()
}

/// Starts `program args…` in `dir` as the leader of its own process group, writes `lines` to
/// its stdin (a newline after each; stdin stays open while it answers), and returns the first
/// line of its stdout for which `answers` holds, within `timeout`. The whole group is then killed
/// (and, should this process die first, the program sees its stdin close). `None` when it cannot
/// start, ends, or does not answer in time.
pub fn ask(
    program: &Path,
    args: &[&str],
    dir: &Path,
    lines: &[String],
    answers: fn(&str) -> bool,
    timeout: Duration,
) -> Option<String> {
    let mut child = super::question(program, args, dir)
        .stdin(Stdio::piped())
        .spawn()
        .ok()?;
    let (mut stdin, stdout) = (child.stdin.take()?, child.stdout.take()?);
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match (&mut reader).take(MAX_LINE).read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) if answers(line.trim_end()) => {
                    let _ = sender.send(line.trim_end().to_owned());
                    break;
                }
                Ok(_) => {}
            }
        }
    });
    let written = lines.iter().all(|line| writeln!(stdin, "{line}").is_ok());
    let answer = written
        .then(|| receiver.recv_timeout(timeout).ok())
        .flatten();
    super::kill_group(child.id());
    drop(stdin);
    let _ = child.wait();
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answering_line_is_returned_and_the_program_killed() {
        let sh = Path::new("/bin/sh");
        let script = "read q; echo noise; echo \"answer to $q\"; sleep 30";
        let started = std::time::Instant::now();
        let answer = ask(
            sh,
            &["-c", script],
            Path::new("/"),
            &["life".to_owned()],
            |line| line.starts_with("answer"),
            Duration::from_secs(10),
        );
        assert_eq!(answer.as_deref(), Some("answer to life"));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn silence_and_early_ends_are_none() {
        let sh = Path::new("/bin/sh");
        let none = |script: &str, timeout| {
            ask(sh, &["-c", script], Path::new("/"), &[], |_| true, timeout)
        };
        assert_eq!(none("sleep 30", Duration::from_millis(200)), None);
        assert_eq!(none("exit 0", Duration::from_secs(5)), None);
        assert_eq!(
            ask(
                Path::new("/nonexistent/program"),
                &[],
                Path::new("/"),
                &[],
                |_| true,
                Duration::from_secs(1),
            ),
            None
        );
    }
}
