//! `checkpoint diff`: what changed since the latest session checkpoint, to verify the work before
//! clearing an agent's context.

use std::process::ExitCode;

use checkpoint_engine::continuity::diff::{self, WorkDiff};
use checkpoint_engine::continuity::text;
use serde::Serialize;

use crate::error::CliError;
use crate::{exit_codes, output, project};

/// Options of `checkpoint diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Exit with 1 when work changed since the checkpoint, 0 when not (like `git diff
    /// --exit-code`).
    #[arg(long)]
    exit_code: bool,
}

/// The JSON of `checkpoint diff --json`: the diff with its totals.
#[derive(Debug, Serialize)]
struct DiffView<'a> {
    changed: bool,
    added: u64,
    removed: u64,
    #[serde(flatten)]
    diff: &'a WorkDiff,
}

/// `checkpoint diff [--json] [--exit-code]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    let repo = project.git()?;
    let continuity = project.continuity();
    let Some(checkpoint) = continuity.latest(None)? else {
        if args.json {
            output::json(&serde_json::json!({ "checkpoint": null }))?;
        } else {
            output::out(
                "No checkpoint yet: run `checkpoint save \"<what is done>\"` to save one (the \
                 hooks also save one at every allowed stop).",
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    if checkpoint.more_files > 0 {
        output::note(&format!(
            "note: checkpoint #{} recorded {} of {} changed files; the others are compared with \
             its commit",
            checkpoint.id,
            checkpoint.files.len(),
            checkpoint.files.len() + checkpoint.more_files
        ));
    }
    let work = diff::diff(&continuity, repo, project.policy.git.backend, &checkpoint)?;
    if args.json {
        output::json(&DiffView {
            changed: work.changed(),
            added: work.added(),
            removed: work.removed(),
            diff: &work,
        })?;
    } else {
        output::out(&text::diff_line(&work, project.host.now));
        for file in &work.files {
            output::out(&text::file_delta_line(file));
        }
    }
    Ok(if args.exit_code && work.changed() {
        ExitCode::from(exit_codes::NO)
    } else {
        ExitCode::SUCCESS
    })
}
