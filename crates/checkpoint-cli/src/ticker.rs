//! The line `checkpoint check` shows on a terminal while the gate runs a test command —
//! "running `cargo test` (12 s)…" — rewritten in place every second and erased when the run
//! ends, so a long check does not look hung. Only on a terminal: piped or redirected, stderr
//! gets nothing.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use checkpoint_engine::runner::RunWatch;

use crate::output;

/// How often the line ticks; it first shows after one tick, so a quick run shows nothing.
const TICK: Duration = Duration::from_secs(1);
/// The longest command shown (a longer one is cut, with `…`), so the line fits a terminal row.
const COMMAND_CHARS: usize = 50;

/// Ticks a line on stderr during each run it is told of.
#[derive(Debug, Default)]
pub(crate) struct Ticker {
    running: Mutex<Option<Running>>,
}

/// The thread ticking for the current run, and how to stop it.
#[derive(Debug)]
struct Running {
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Ticker {
    /// A ticker when stderr is a terminal; `None` elsewhere.
    pub(crate) fn on_terminal() -> Option<Ticker> {
        std::io::stderr().is_terminal().then(Ticker::default)
    }
}

impl RunWatch for Ticker {
    fn started(&self, command: &str) {
        let command = output::one_line(command);
        let (stop, stopped) = mpsc::channel();
        let thread = thread::spawn(move || {
            let start = Instant::now();
            let mut width = 0;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                let line = line(&command, start.elapsed());
                output::rewrite_line(width, &line);
                width = line.chars().count();
            }
            if width > 0 {
                output::rewrite_line(width, "");
            }
        });
        if let Ok(mut running) = self.running.lock() {
            *running = Some(Running { stop, thread });
        }
    }

    fn ended(&self) {
        let running = self.running.lock().ok().and_then(|mut r| r.take());
        if let Some(Running { stop, thread }) = running {
            let _ = stop.send(());
            let _ = thread.join();
        }
    }
}

/// "running `<command>` (<seconds> s)…", the command cut to [`COMMAND_CHARS`].
fn line(command: &str, elapsed: Duration) -> String {
    let shown: String = if command.chars().count() > COMMAND_CHARS {
        let cut: String = command.chars().take(COMMAND_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        command.to_owned()
    };
    format!("running `{shown}` ({} s)…", elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_command_and_the_seconds_and_fits_a_row() {
        insta::assert_snapshot!(line("cargo test", Duration::from_millis(12_400)), @"running `cargo test` (12 s)…");
        let long = line(&"x".repeat(80), Duration::from_secs(3));
        insta::assert_snapshot!(long, @"running `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…` (3 s)…");
        let fits = "x".repeat(COMMAND_CHARS);
        assert!(
            line(&fits, Duration::ZERO).contains(&format!("`{fits}`")),
            "not cut"
        );
    }
}
