//! `checkpoint explain`: why the last stop of this worktree's sessions was answered as it was —
//! its verdict, the message the agent got, its test runs — from the sessions' records (what
//! `checkpoint report` draws); or, given a key, what that setting does, from the settings table,
//! with its default and its value here.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use checkpoint_core::policy::Policy;
use checkpoint_core::policy::config::{Key, Origin, Setting};
use checkpoint_core::{render, sanitize};
use checkpoint_engine::session::StoredSession;
use checkpoint_engine::session::activity::{StopEntry, StopVerdict};

use crate::args::SettingKey;
use crate::commands::config;
use crate::commands::report::wire_name;
use crate::error::CliError;
use crate::{output, project};

/// Session records read at most (the latest written) to find the last stop.
const MAX_SESSIONS: usize = 20;

/// Options of `checkpoint explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A setting (`stop.max_blocks`): what it does, its default, its variable and its value
    /// here. Without it: the last stop.
    #[arg(value_parser = SettingKey, hide_possible_values = true)]
    key: Option<String>,
    /// The last stop of this session (its id, as the agent names it) rather than of any.
    #[arg(long, value_name = "ID", conflicts_with = "key")]
    session: Option<String>,
}

/// `checkpoint explain [KEY | --session ID]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    match &args.key {
        Some(key) => output::out(&key_text(key, &project::root()?)?),
        None => {
            let project = project::open()?;
            let records = project.sessions().latest(MAX_SESSIONS)?;
            output::out(&last_stop(&records, args.session.as_deref())?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `key` does, its default, its variable, whether a project's value waits for approval,
/// and its value in the project at `root` with where it came from.
fn key_text(key: &str, root: &Path) -> Result<String, CliError> {
    let row = Key::named(key).ok_or_else(|| {
        CliError::usage(
            format!("unknown key {key:?}"),
            config::valid_keys_hint(key, false),
        )
    })?;
    let settings = config::settings(root)?;
    let here =
        (settings.iter().find(|s| s.key == row.name)).expect("every key of the table is a setting");
    let default = Setting {
        key: row.name.to_owned(),
        value: row.value_in(&Policy::builtin()),
        origin: Origin::Default,
    };
    let mut text = format!("{}: {}\n", row.name, row.doc);
    let _ = writeln!(text, "  default:  {}", default.value_text());
    let _ = writeln!(
        text,
        "  here:     {}  # {}",
        here.value_text(),
        config::origin_text(&here.origin, root)
    );
    let _ = writeln!(text, "  variable: {}", row.env);
    if row.guarded {
        text.push_str(
            "  guarded:  a project's value applies once you approve it (`checkpoint trust`); an \
             agent's tool cannot set it\n",
        );
    }
    let _ = write!(
        text,
        "Set it with `checkpoint config set {} VALUE` (--user: your own config file).",
        row.name
    );
    Ok(text)
}

/// The last stop among `records` (of session `session` only, when given): its verdict, the
/// message the agent got, its test runs and what to do next.
fn last_stop(records: &[StoredSession], session: Option<&str>) -> Result<String, CliError> {
    let last = (records.iter())
        .filter(|r| session.is_none_or(|id| r.id == id))
        .flat_map(|r| r.record.stops.iter().map(move |stop| (r, stop)))
        .max_by_key(|(_, stop)| stop.at);
    let Some((stored, stop)) = last else {
        let whose = session.map_or_else(
            || "this worktree's sessions".to_owned(),
            |id| format!("session {}", sanitize::name(id)),
        );
        return Err(CliError::usage(
            format!("no stop recorded in {whose}"),
            "a stop is recorded when an agent's stop hook runs here; `checkpoint doctor` checks \
             that it does, and `checkpoint check` judges the worktree now",
        ));
    };
    Ok(stop_text(stored, stop))
}

/// One stop, as `explain` shows it.
fn stop_text(stored: &StoredSession, stop: &StopEntry) -> String {
    let verdict = match stop.verdict {
        StopVerdict::Blocked => "blocked",
        StopVerdict::Allowed => "allowed",
        StopVerdict::AllowedByCap => "allowed by the block cap (stop.max_blocks)",
    };
    let kind = stop.reason.as_deref().map(|r| format!(" ({r})"));
    let mut text = format!(
        "The last stop was {verdict}{}: {}\n",
        kind.unwrap_or_default(),
        stop.headline
    );
    let _ = write!(
        text,
        "  {} session {}, {}",
        stored.agent.name(),
        sanitize::name(&stored.id),
        stop.at.strftime("%Y-%m-%d %H:%M:%S UTC")
    );
    if let Some(base) = &stop.base {
        let _ = write!(text, ", judged from commit {}", short(base));
    }
    text.push('\n');
    if !stop.reasons.is_empty() {
        text.push_str("What the agent was told:\n");
        for line in &stop.reasons {
            let _ = writeln!(text, "  {line}");
        }
    }
    if !stop.tests.is_empty() {
        text.push_str("Test runs:\n");
        for run in &stop.tests {
            let cached = if run.cached { ", cached" } else { "" };
            let counts = match (run.passed, run.failed) {
                (Some(passed), Some(failed)) => format!(", {passed} passed, {failed} failed"),
                _ => String::new(),
            };
            let _ = writeln!(
                text,
                "  {}: {}{counts}{cached}, {}",
                run.command,
                wire_name(&run.status),
                render::duration(run.duration_ms)
            );
        }
    }
    text.push_str(match stop.verdict {
        StopVerdict::Blocked => {
            "`checkpoint check` judges the worktree as it is now; `checkpoint report` shows every stop."
        }
        StopVerdict::Allowed | StopVerdict::AllowedByCap => {
            "`checkpoint report` shows every stop."
        }
    });
    text
}

/// The first 12 characters of a commit id.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
