//! `checkpoint statusline`: Claude Code's status line command.
//!
//! Claude runs it on every render with a JSON payload on stdin (`session_id`, `cwd`,
//! `workspace.current_dir`, `context_window{context_window_size, current_usage{…},
//! used_percentage}`, …) and shows the first line it prints. The line says how full the context
//! is and, inside a git repository, when the latest checkpoint was saved and which task is active:
//! `ctx 42 % · checkpoint 5 min ago · task add-auth 2/4`. The exact usage is recorded in the
//! session's record, where the context watch before tool calls prefers it to the transcript while
//! it is fresh.
//!
//! A status line that fails shows its error in the user's terminal, so this never does: whatever
//! goes wrong, it prints what it knows (at least [`NEUTRAL`]) and exits 0. Why it said less goes
//! to stderr only when `CHECKPOINT_DEBUG` is set. It runs often, so it loads no configuration and
//! reads no git status.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use checkpoint_core::Policy;
use checkpoint_core::event::{self, Agent};
use checkpoint_engine::continuity::{Continuity, text};
use checkpoint_engine::git::Repo;
use checkpoint_engine::host::Host;
use checkpoint_engine::journal::Journal;
use checkpoint_engine::session::{SessionStore, StatusLineUsage};
use serde_json::Value;

use crate::error::CliError;
use crate::{output, project};

/// What the status line says when it knows nothing else.
const NEUTRAL: &str = "checkpoint";
/// Set (to anything) to see on stderr why the status line said less than it could.
const DEBUG_VAR: &str = "CHECKPOINT_DEBUG";
/// The longest task name shown, in characters.
const TASK_CHARS: usize = 32;
/// Between the parts of the line.
const SEPARATOR: &str = " · ";

/// Options of `checkpoint statusline` (none: the payload comes on stdin).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// `checkpoint statusline`: prints one line for Claude Code's status line and records the
/// session's context usage. Always exits 0.
pub(crate) fn run(_: &Args) -> Result<ExitCode, CliError> {
    let host = project::host();
    let mut problems = Vec::new();
    let line = match event::read_payload(checkpoint_engine::stdin::within(
        checkpoint_engine::stdin::LIMIT,
    )) {
        Ok(bytes) => line(&host, &bytes, &mut problems),
        Err(e) => {
            problems.push(format!("reading stdin: {e}"));
            NEUTRAL.to_owned()
        }
    };
    output::out(&line);
    if std::env::var_os(DEBUG_VAR).is_some() {
        for problem in problems {
            output::note(&format!("checkpoint statusline: {problem}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The status line for `payload`, recording its usage on the way; what went wrong is pushed to
/// `problems`.
fn line(host: &Host, payload: &[u8], problems: &mut Vec<String>) -> String {
    let payload: Value = match serde_json::from_slice(payload) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => {
            problems.push("the payload is not a JSON object".to_owned());
            return NEUTRAL.to_owned();
        }
        Err(e) => {
            problems.push(format!("the payload is not JSON: {e}"));
            return NEUTRAL.to_owned();
        }
    };
    let window = ContextWindow::read(&payload["context_window"]);
    let mut parts = Vec::new();
    if let Some(percent) = window.percent {
        parts.push(format!("ctx {percent} %"));
    }
    match project(host, &payload) {
        Ok(Some(repo)) => parts.extend(project_parts(host, &payload, &repo, &window, problems)),
        Ok(None) => {}
        Err(problem) => problems.push(problem),
    }
    if parts.is_empty() {
        NEUTRAL.to_owned()
    } else {
        parts.join(SEPARATOR)
    }
}

/// What the payload's `context_window` says.
#[derive(Debug, Default)]
struct ContextWindow {
    /// Tokens in the context: `input + cache_creation + cache_read` of the last call.
    used: Option<u64>,
    /// The window size.
    size: Option<u64>,
    /// The share in use, as Claude shows it (else computed from the two above).
    percent: Option<u8>,
}

impl ContextWindow {
    /// Reads a `context_window` object; every field is optional (null before the first call).
    fn read(value: &Value) -> ContextWindow {
        let usage = &value["current_usage"];
        let used = usage.is_object().then(|| {
            [
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            ]
            .iter()
            .filter_map(|key| usage[*key].as_u64())
            .fold(0_u64, u64::saturating_add)
        });
        let size = value["context_window_size"].as_u64().filter(|&n| n > 0);
        let computed = match (used, size) {
            (Some(used), Some(size)) => Some(used as f64 / size as f64 * 100.0),
            _ => None,
        };
        let percent = value["used_percentage"]
            .as_f64()
            .or(computed)
            .filter(|p| p.is_finite())
            .map(|p| p.round().clamp(0.0, 100.0) as u8);
        ContextWindow {
            used,
            size,
            percent,
        }
    }

    /// The usage to record, when all of it is known.
    fn usage(&self, host: &Host) -> Option<StatusLineUsage> {
        Some(StatusLineUsage {
            used: self.used?,
            window: self.size?,
            percent: self.percent?,
            at: host.now,
        })
    }
}

/// The repository the payload's session works in (`cwd`, else `workspace.current_dir`), if any.
fn project(host: &Host, payload: &Value) -> Result<Option<Repo>, String> {
    let Some(cwd) = payload["cwd"]
        .as_str()
        .or_else(|| payload["workspace"]["current_dir"].as_str())
        .filter(|cwd| !cwd.is_empty())
        .map(PathBuf::from)
    else {
        return Err("the payload names no cwd".to_owned());
    };
    if !cwd.is_dir() {
        return Err(format!("{}: not a directory", cwd.display()));
    }
    host.locate(&cwd)
        .map_err(|e| format!("{}: {e}", cwd.display()))
}

/// Records the session's usage in `repo`'s state and returns the parts about the project: the
/// latest checkpoint's age and the active task.
fn project_parts(
    host: &Host,
    payload: &Value,
    repo: &Repo,
    window: &ContextWindow,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let state_dir = match host.state_dir(repo) {
        Ok(dir) => dir,
        Err(problem) => {
            problems.push(problem.to_string());
            return Vec::new();
        }
    };
    if let Some(usage) = window.usage(host)
        && let Err(problem) = record(&state_dir, payload, usage)
    {
        problems.push(problem);
    }
    let mut parts = Vec::new();
    match Continuity::new(&state_dir).latest(None) {
        Ok(Some(checkpoint)) => {
            parts.push(format!("checkpoint {}", text::ago(checkpoint.at, host.now)));
        }
        Ok(None) => {}
        Err(e) => problems.push(format!("continuity log: {e}")),
    }
    // The built-in policy is enough to read the active task: no configuration is loaded.
    let journal = Journal::new(
        state_dir,
        repo.workdir.clone(),
        Some(repo.clone()),
        Policy::builtin(),
        None,
    );
    match journal.active() {
        Ok(Some(task)) => {
            let step = task
                .current_step
                .map(|i| format!(" {}/{}", i + 1, task.steps.len()))
                .unwrap_or_default();
            parts.push(format!("task {}{step}", short(&task.name)));
        }
        Ok(None) => {}
        Err(e) => problems.push(format!("active task: {e}")),
    }
    parts
}

/// A task name cut to [`TASK_CHARS`] characters, on one line.
fn short(name: &str) -> String {
    let name = checkpoint_core::sanitize::line(name, usize::MAX);
    match name.char_indices().nth(TASK_CHARS) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name,
    }
}

/// Stores `usage` in the record of the payload's Claude session.
fn record(state_dir: &Path, payload: &Value, usage: StatusLineUsage) -> Result<(), String> {
    let session_id = payload["session_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or("the payload names no session_id")?;
    SessionStore::new(state_dir)
        .update(Agent::Claude, session_id, |record| {
            record.status_line = Some(usage);
        })
        .map_err(|e| format!("recording the usage: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn context_window_fields_are_each_optional() {
        let full = ContextWindow::read(&json!({
            "total_input_tokens": 32106, "context_window_size": 1_000_000,
            "current_usage": {"input_tokens": 106, "output_tokens": 7,
                "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 30000},
            "used_percentage": 3, "remaining_percentage": 97
        }));
        assert_eq!(
            (full.used, full.size, full.percent),
            (Some(32106), Some(1_000_000), Some(3))
        );
        let computed = ContextWindow::read(&json!({
            "context_window_size": 200_000, "current_usage": {"input_tokens": 85_000}
        }));
        assert_eq!(computed.percent, Some(43));
        let fresh = ContextWindow::read(&json!({
            "context_window_size": 200_000, "current_usage": null, "used_percentage": null
        }));
        assert_eq!((fresh.used, fresh.percent), (None, None));
        let odd = ContextWindow::read(&json!({"used_percentage": 140.4, "context_window_size": 0}));
        assert_eq!((odd.size, odd.percent), (None, Some(100)));
        assert_eq!(ContextWindow::read(&Value::Null).percent, None);
    }

    #[test]
    fn task_names_are_one_short_line() {
        assert_eq!(short("add auth"), "add auth");
        assert_eq!(short(" add\n auth "), "add auth");
        let long = "é".repeat(40);
        assert_eq!(short(&long), format!("{}…", "é".repeat(32)));
    }
}
