//! `checkpoint restore [CHECKPOINT] [--files PATH…] [--dry-run]` and `checkpoint restore --undo`:
//! put the worktree's files back to a session checkpoint, after saving a safety checkpoint of
//! the state they are in.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use checkpoint_engine::project::restoring::RestoreTo;
use serde_json::json;

use crate::continuity::{self, Caller};
use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint restore`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The checkpoint's number (`checkpoint log` lists them); default: your latest (one your key
    /// signed: a checkpoint fetched from elsewhere is restored only when named).
    #[arg(conflicts_with = "undo")]
    checkpoint: Option<u64>,
    /// Restore only these files or directories (relative to the current directory).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    files: Vec<PathBuf>,
    /// Print what would change, file by file, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Return to the state before the last restore (its safety checkpoint).
    #[arg(long)]
    undo: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `checkpoint restore`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    let workdir = &project.git()?.workdir;
    let cwd = project::cwd()?;
    let only = (args.files.iter())
        .map(|path| repo_relative(workdir, &cwd, path))
        .collect::<Result<Vec<_>, _>>()?;
    let to = match (args.undo, args.checkpoint) {
        (true, _) => RestoreTo::Undo,
        (false, Some(id)) => RestoreTo::Id(id),
        (false, None) => RestoreTo::Latest,
    };
    let (restored, report) = continuity::restore(&project, Caller::Cli, to, only, args.dry_run)?;
    if args.json {
        output::json(&json!({
            "checkpoint": restored.checkpoint.id,
            "dry_run": args.dry_run,
            "safety": restored.safety,
            "files": restored.plan.files,
            "skipped": restored.plan.skipped,
        }))?;
    } else {
        output::out(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// `path` (relative to `cwd`, or absolute) as a `/`-separated path relative to `workdir`.
fn repo_relative(workdir: &Path, cwd: &Path, path: &Path) -> Result<String, CliError> {
    let mut full = PathBuf::new();
    for part in cwd.join(path).components() {
        match part {
            Component::ParentDir => {
                full.pop();
            }
            Component::CurDir => {}
            other => full.push(other),
        }
    }
    let relative = full
        .strip_prefix(workdir)
        .ok()
        .and_then(|p| p.to_str())
        .ok_or_else(|| {
            CliError::usage(
                format!("{} is not inside the repository", path.display()),
                "name files of this repository, relative to the current directory",
            )
        })?;
    Ok(relative.to_owned())
}
