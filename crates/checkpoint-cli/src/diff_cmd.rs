//! `checkpoint diff`: what changed since the latest session checkpoint, to verify the work before
//! clearing an agent's context.

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::continuity::diff::{self, DiffError, WorkDiff};
use checkpoint_core::continuity::{Continuity, text};
use checkpoint_core::gate::Gate;
use checkpoint_core::git;
use checkpoint_core::policy::config::{self, ConfigSources};
use serde::Serialize;

use crate::journal_cmds::print_json;
use crate::{CliError, output};

/// Options of `checkpoint diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
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
pub(crate) fn run(args: &DiffArgs) -> Result<ExitCode, CliError> {
    let gate = Gate::from_process();
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("current directory: {e}"), "cd into your project"))?;
    let repo = match git::discover(&cwd) {
        Ok(Some(repo)) => repo,
        Ok(None) => {
            return Err(CliError::new(
                format!("{} is not inside a git repository", cwd.display()),
                "cd into the project's git repository",
            ));
        }
        Err(e) => {
            return Err(CliError::new(
                e,
                "run this inside the project's working tree",
            ));
        }
    };
    let sources = ConfigSources {
        user_file: gate.user_config.clone(),
        project_file: repo.workdir.join(config::PROJECT_FILE),
        env: gate.env.clone(),
    };
    let policy = config::load(&sources, &repo.workdir)
        .map_err(|e| CliError::new(e, "fix the setting named above"))?;
    let continuity = Continuity::new(&gate.state_dir(&repo));
    let latest = continuity
        .latest(None)
        .map_err(|e| CliError::new(e, "inspect or move the continuity log named above"))?;
    let Some(checkpoint) = latest else {
        if args.json {
            print_json(&serde_json::json!({ "checkpoint": null }))?;
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
    let work = diff::diff(&continuity, &repo, policy.git.backend, &checkpoint)
        .map_err(|e| diff_error(e, repo.workdir))?;
    if args.json {
        print_json(&DiffView {
            changed: work.changed(),
            added: work.added(),
            removed: work.removed(),
            diff: &work,
        })?;
    } else {
        output::out(&text::diff_line(&work, gate.now));
        for file in &work.files {
            output::out(&text::file_delta_line(file));
        }
    }
    Ok(if args.exit_code && work.changed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A diff error with what to do about it.
fn diff_error(err: DiffError, workdir: PathBuf) -> CliError {
    let hint = match &err {
        DiffError::TimedOut { .. } => format!(
            "git is slow or stuck in {}; try again, or check `git status` there",
            workdir.display()
        ),
        DiffError::Spawn { .. } => "install git, or put it on PATH".to_owned(),
        _ => format!("check that `git status` works in {}", workdir.display()),
    };
    CliError::new(err, hint)
}
