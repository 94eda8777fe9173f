//! OpenCode's server for one run. `opencode run` alone exits at the session's first idle, before
//! checkpoint's plugin can send a block back to the session (the message is stored, the model
//! never asked), so a run is what the TUI does: `opencode serve` keeps the session, `opencode run
//! --attach` sends the prompt, and the run is over once the server has settled — every session
//! idle, no adapter running, three polls in a row.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::Value;

/// How often the server is asked whether it settled.
const POLL: Duration = Duration::from_millis(300);
/// Polls in a row that must find it settled.
const QUIET_POLLS: u32 = 3;
/// The adapter the plugin runs, as its command line names it.
const ADAPTER: &str = "checkpoint-opencode";

/// A running `opencode serve`, in a process group of its own; dropping it kills the group.
pub(crate) struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts `program serve` on a free port of 127.0.0.1 in `dir` with `env`, its output in
    /// `log`, and waits (up to `timeout`) until it accepts connections.
    pub(crate) fn start(
        program: &Path,
        dir: &Path,
        env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
        log: &Path,
        timeout: Duration,
    ) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let output =
            std::fs::File::create(log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
        let child = Command::new(program)
            .args([
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .current_dir(dir)
            .env_clear()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("clone the log file"))
            .stderr(output)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {} serve: {e}", program.display()));
        let server = Server { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < timeout,
                "opencode serve did not listen on {port} within {}s",
                timeout.as_secs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The URL `opencode run --attach` takes.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until every session of `dir` is idle and no adapter runs under the server, for
    /// [`QUIET_POLLS`] polls in a row; false when that did not happen before `deadline`.
    pub(crate) fn settle(&self, dir: &Path, deadline: Instant) -> bool {
        let mut quiet = 0;
        while Instant::now() < deadline {
            let idle = self.all_idle(dir) && !adapter_runs_under(self.child.id());
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet == QUIET_POLLS {
                return true;
            }
            std::thread::sleep(POLL);
        }
        false
    }

    /// Whether `GET /session/status` of `dir` lists no session that is not idle.
    fn all_idle(&self, dir: &Path) -> bool {
        let path = format!(
            "/session/status?directory={}",
            encode(&dir.display().to_string())
        );
        get(self.port, &path).is_some_and(|status| {
            status
                .as_object()
                .is_some_and(|sessions| sessions.values().all(|s| s["type"] == "idle"))
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The group may be gone already; a failed kill changes nothing then.
        let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        let _ = self.child.wait();
    }
}

/// The JSON body of `GET path` on the server, `None` on any failure.
fn get(port: u16, path: &str) -> Option<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then_some(())?;
    serde_json::from_str(body).ok()
}

/// `text` percent-encoded for a query value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether a process whose command line names the adapter runs below `root` (the plugin starts
/// it in a session of its own, so only the parent links say it is the server's).
fn adapter_runs_under(root: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut below = vec![root];
    let mut i = 0;
    while let Some(&pid) = below.get(i) {
        below.extend(parents.iter().filter(|(_, p)| *p == pid).map(|(c, _)| *c));
        i += 1;
    }
    below[1..].iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(ADAPTER))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(encode("/tmp/a b/ü"), "/tmp/a%20b/%C3%BC");
    }

    #[test]
    fn an_adapter_below_a_process_is_seen() {
        let mut sh = Command::new("sh")
            .args(["-c", "sh -c 'sleep 5; : checkpoint-opencode'; :"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(adapter_runs_under(sh.id()));
        assert!(!adapter_runs_under(std::process::id() + 1_000_000));
        sh.kill().unwrap();
        sh.wait().unwrap();
    }
}
