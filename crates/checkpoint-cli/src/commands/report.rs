//! `checkpoint report`: one self-contained HTML page of what happened in this worktree — each
//! session's turns, stops, test runs, checkpoints and context usage, the task, and which commits
//! `verify` proves — or the same data as JSON.
//!
//! [`gather`] reads the records into the data [`model`]; [`html`] renders the page from it,
//! with [`chart`] for the drawings and [`text`] for how it writes what it is given; `--json`
//! prints the model.

mod chart;
mod gather;
mod html;
mod model;
mod text;

pub(crate) use text::wire_name;

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::policy::Interval;

use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only this session (its id, as the agent names it).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Show this task (default: the active one), and nothing from before it began.
    #[arg(long, value_name = "ID")]
    task: Option<String>,
    /// Only what happened in the last DURATION (`90m`, `2h`, `3d`).
    #[arg(long, value_name = "DURATION")]
    since: Option<Interval>,
    /// Write the page to FILE (default: `report.html` in the worktree's state directory).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Open the page in the default browser once written (`xdg-open`, `open` on macOS).
    #[arg(long, conflicts_with = "json")]
    open: bool,
    /// Print the report's data as JSON (with its `schema_version`) instead of writing the page.
    #[arg(long, conflicts_with = "output")]
    json: bool,
}

/// The program that opens a file in the default browser.
const OPENER: &str = if cfg!(target_os = "macos") {
    "open"
} else {
    "xdg-open"
};

/// `checkpoint report`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let since = (args.since)
        .map(|Interval(back)| project.host.now.saturating_sub(back))
        .transpose()
        .map_err(|e| CliError::usage(format!("--since: {e}"), "give a shorter duration"))?;
    let scope = gather::Scope {
        session: args.session.as_deref(),
        task: args.task.as_deref(),
        since,
    };
    let report = gather::report(&project, &scope)?;
    if args.json {
        output::json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    let page = html::page(&report);
    let path = (args.output.clone()).unwrap_or_else(|| project.state_dir.join("report.html"));
    std::fs::write(&path, &page).map_err(|e| {
        CliError::new(
            format!("writing {}: {e}", path.display()),
            "give a file in a writable directory with -o FILE",
        )
    })?;
    output::out(&format!(
        "Wrote {} ({} KiB)",
        path.display(),
        page.len().div_ceil(1024)
    ));
    if args.open
        && let Err(e) = std::process::Command::new(OPENER).arg(&path).spawn()
    {
        output::warning(&format!("could not run {OPENER} to open it: {e}"));
    }
    Ok(ExitCode::SUCCESS)
}
