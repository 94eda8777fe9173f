//! The hidden `checkpoint git-hook post-commit|pre-push`, which the git hooks installed by
//! `checkpoint install git` run: a checkpoint of the active task.

use std::process::ExitCode;

use checkpoint_core::journal::Trigger;

use crate::error::CliError;
use crate::{output, project};

/// Which git hook is running.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum GitHookName {
    /// After a commit.
    PostCommit,
    /// Before a push (git has no post-push).
    PrePush,
}

/// Options of the hidden `checkpoint git-hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[arg(value_enum)]
    hook: GitHookName,
}

/// `checkpoint git-hook post-commit|pre-push`. Never fails the git operation: problems are
/// printed as warnings and the exit status is 0.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let trigger = match args.hook {
        GitHookName::PostCommit => Trigger::Commit,
        GitHookName::PrePush => Trigger::Push,
    };
    let result = project::open().and_then(|project| {
        project
            .journal()
            .checkpoint_active(trigger, None, project.host.now, None)
            .map_err(CliError::from)
    });
    if let Err(err) = result {
        output::note(&format!("checkpoint: warning: {}", err.message));
    }
    Ok(ExitCode::SUCCESS)
}
