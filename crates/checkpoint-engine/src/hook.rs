//! The driver every adapter binary shares: read the payload, judge it, print exactly one answer.
//!
//! An adapter hands over its agent's home ([`AgentHome`]): how it names events and spells
//! answers. Reading stdin (at most [`MAX_PAYLOAD_BYTES`](checkpoint_core::event::MAX_PAYLOAD_BYTES)), the
//! gate call, failing open and the single write to stdout live here, once. Whatever goes wrong —
//! bad stdin, a broken config, a panic — the hook exits 0 with the agent's no-op answer and a line
//! on stderr, so an agent is never wedged by its hook; under a broken config the first event of a
//! session also tells the user that the gate is off (the agent's user-visible `systemMessage`).

use std::cell::Cell;
use std::io::{IsTerminal, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use serde_json::Value;

use crate::gate;
use crate::host::Host;
use crate::project::ProjectError;
use crate::session::{SessionStore, once_per_session};
use checkpoint_core::answer::HookAnswer;
use checkpoint_core::decide::{AllowReason, Decision};
use checkpoint_core::event::{EventKind, HookEvent, read_payload};
use checkpoint_core::home::AgentHome;
use checkpoint_core::render;

/// The version an adapter reports for `--version` (`checkpoint doctor` compares it with its own).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The line an adapter of `home`'s agent prints for `--version`: `checkpoint-<agent> <version>`.
pub fn version_line(home: &dyn AgentHome) -> String {
    format!("checkpoint-{} {VERSION}", home.agent().name())
}

/// What an adapter of `home`'s agent prints for `--help`, or when run by hand (stdin a terminal).
pub fn help_text(home: &dyn AgentHome) -> String {
    let name = home.agent().name();
    let title = home.install().map_or(name, |spec| spec.title);
    let more: String = (home.more_usage().iter())
        .map(|line| format!("\n       {line}"))
        .collect();
    format!(
        "checkpoint-{name} {VERSION}: checkpoint's hook adapter for {title}.\n\n\
         {title} runs it for each hook event with the event's JSON on stdin. It answers on \
         stdout and\nalways exits 0: a problem is one line on stderr and the agent's no-op \
         answer.\n\n\
         Usage: checkpoint-{name} < payload.json\n       checkpoint-{name} --version | \
         --help{more}\n\n\
         Install its hooks with `checkpoint install {name}`; check them with `checkpoint doctor`."
    )
}

/// Runs one hook call for the agent whose home is `home` on the process's stdin/stdout/stderr;
/// with the one argument `--version`, prints [`version_line`] instead, and with `--help` (or
/// no argument and stdin a terminal: a person, not an agent) [`help_text`]. Any other argument
/// (installed handlers pass `--hook`, the mark `checkpoint install` recognises them by) is a hook
/// call. Always exits 0.
pub fn main(home: &dyn AgentHome) -> std::process::ExitCode {
    let arg = std::env::args_os().nth(1);
    let said = |flags: &[&str]| {
        arg.as_deref()
            .is_some_and(|a| flags.iter().any(|f| a == *f))
    };
    if said(&["--version", "-V"]) {
        let _ = writeln!(std::io::stdout(), "{}", version_line(home));
        return std::process::ExitCode::SUCCESS;
    }
    if background_run() {
        return std::process::ExitCode::SUCCESS;
    }
    if said(&["--help", "-h"]) || (arg.is_none() && std::io::stdin().is_terminal()) {
        let _ = writeln!(std::io::stdout(), "{}", help_text(home));
        return std::process::ExitCode::SUCCESS;
    }
    let stdin = crate::stdin::within(crate::stdin::LIMIT);
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    run(home, stdin, &mut stdout, &mut stderr);
    std::process::ExitCode::SUCCESS
}

/// Whether this process was started as the background run of warm results (`<program>
/// --prewarm <dir>`: every program that answers hook events, since the tool hook starts its own
/// executable); if so, it has done that run. No agent reads its output, and it answers no one.
pub fn background_run() -> bool {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(gate::PREWARM_ARG)) {
        return false;
    }
    if let Some(dir) = args.next() {
        let _ = gate::prewarm(&Host::from_process(), std::path::Path::new(&dir));
    }
    true
}

/// Runs one hook call: the answer goes to `stdout` (written once), problems to `stderr` (one
/// line each; a panic's message and place go to the process's stderr first).
pub fn run(
    home: &dyn AgentHome,
    stdin: impl Read,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) {
    install_panic_hook();
    JUDGING.with(|judging| judging.set(true));
    let answer = panic::catch_unwind(AssertUnwindSafe(|| answer(home, stdin, stderr)))
        .unwrap_or_else(|_| Err("internal error (see above)".to_owned()));
    JUDGING.with(|judging| judging.set(false));
    let text = match answer {
        Ok(Some(value)) => value.to_string(),
        Ok(None) => home.no_op().to_owned(),
        Err(problem) => {
            let _ = writeln!(
                stderr,
                "checkpoint: {}; allowing",
                problem.replace('\n', " ")
            );
            home.no_op().to_owned()
        }
    };
    if !text.is_empty() {
        let _ = writeln!(stdout, "{text}");
    }
    let _ = stdout.flush();
}

/// Whether the user of `event`'s session was not told `notice` yet; records, in the session's
/// state (one locked update), that they now are. When that state cannot be reached they are told.
fn untold(host: &Host, event: &HookEvent, notice: &str) -> bool {
    let Ok(Some(repo)) = host.locate(&event.cwd) else {
        return true;
    };
    let Ok(state_dir) = host.state_dir(&repo) else {
        return true;
    };
    let sessions = SessionStore::new(&state_dir);
    let told = sessions.update(event.agent, event.session_key(), |record| {
        once_per_session(&mut record.config_notice, Some(notice.to_owned()))
    });
    told.map_or(true, |new| new.is_some())
}

thread_local! {
    /// Whether this thread is inside [`run`]: its panics are reported in one line.
    static JUDGING: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once per process, a panic hook that reports a panic inside [`run`] as one
/// `checkpoint: internal error: …` line and leaves every other panic to the hook before it.
fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if JUDGING.with(Cell::get) {
                let _ = writeln!(
                    std::io::stderr(),
                    "checkpoint: internal error: {}",
                    info.to_string().replace('\n', " ")
                );
            } else {
                previous(info);
            }
        }));
    });
}

fn answer(
    home: &dyn AgentHome,
    stdin: impl Read,
    stderr: &mut impl Write,
) -> Result<Option<Value>, String> {
    let bytes = read_payload(stdin).map_err(|e| e.to_string())?;
    let event = HookEvent::parse(home, &bytes).map_err(|e| e.to_string())?;
    if !gate::handles(&event.kind) {
        return Ok(None);
    }
    let host = Host::from_process().with_project_env(home, &event.cwd);
    let outcome = match gate::run(home, &host, &event) {
        Ok(outcome) => outcome,
        // A broken config lets everything through: the user hears that the gate is off, once per
        // session (a session that ends has no one left to tell).
        Err(ProjectError::Config(error)) => {
            let error = error.to_string().replace('\n', " ");
            let _ = writeln!(stderr, "checkpoint: {error}; allowing");
            let decision = Decision::Allow {
                reason: AllowReason::ConfigBroken { error },
                notes: Vec::new(),
            };
            let notice = render::message(&decision);
            if event.kind == EventKind::SessionEnd || !untold(&host, &event, &notice) {
                return Ok(None);
            }
            return Ok(home.render(&event, &HookAnswer::Notice(notice)));
        }
        Err(error) => return Err(error.to_string()),
    };
    for warning in &outcome.warnings {
        let _ = writeln!(stderr, "checkpoint: warning: {warning}");
    }
    Ok(home.render(&event, &outcome.answer))
}
