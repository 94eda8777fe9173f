//! `checkpoint cleanup`: remove finished tasks older than their retention and session files
//! older than the continuity log.

use std::process::ExitCode;

use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint cleanup`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// List what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `checkpoint cleanup [--dry-run]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let cleanup = project.cleanup(args.dry_run)?;
    if args.json {
        output::json(&cleanup)?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut lines: Vec<String> = (cleanup.tasks.iter())
        .map(|r| {
            format!(
                "{verb} {} ({}, ended {})",
                r.task_id,
                r.state.name(),
                r.ended_at
            )
        })
        .collect();
    if !cleanup.sessions.is_empty() {
        lines.push(format!(
            "{verb} {} session file(s) older than the continuity log",
            cleanup.sessions.len()
        ));
    }
    if lines.is_empty() {
        lines.push("Nothing to clean up.".into());
    }
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}
