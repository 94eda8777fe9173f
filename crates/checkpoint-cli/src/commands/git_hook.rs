//! The hidden `checkpoint git-hook post-commit|pre-push [REMOTE URL]`, which the git hooks
//! installed by `checkpoint install git` run: a checkpoint of the active task, and before a push
//! the checkpoint refs pushed to the same remote within `[travel] push_budget`.

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
    /// What git passes to the hook: for `pre-push`, the remote's name (or its URL when it has
    /// none) and its URL. Wrappers installed before these were passed give none: no refs are
    /// pushed then.
    #[arg(allow_hyphen_values = true, num_args = 0..=2)]
    remote: Vec<String>,
}

/// `checkpoint git-hook post-commit|pre-push [REMOTE URL]`. Never fails the git operation:
/// problems are printed as one line on stderr and the exit status is 0.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let trigger = match args.hook {
        GitHookName::PostCommit => Trigger::Commit,
        GitHookName::PrePush => Trigger::Push,
    };
    let project = match project::open() {
        Ok(project) => project,
        Err(err) => {
            output::note(&format!("checkpoint: warning: {}", err.message));
            return Ok(ExitCode::SUCCESS);
        }
    };
    let recorded = project
        .journal()
        .checkpoint_active(trigger, None, project.host.now, None);
    if let Err(err) = recorded {
        output::note(&format!(
            "checkpoint: warning: {}",
            CliError::from(err).message
        ));
    }
    // git passes the remote's name, or its URL twice when the push names no remote.
    let remote = args.remote.iter().find(|r| !r.is_empty());
    if let (GitHookName::PrePush, Some(remote), Some(_)) = (args.hook, remote, &project.repo) {
        match project.push_checkpoints(remote) {
            Ok(report) => {
                if let Some(note) = report.note() {
                    output::note(&note);
                }
            }
            Err(err) => output::note(&format!(
                "checkpoint: warning: {}",
                CliError::from(err).message
            )),
        }
    }
    Ok(ExitCode::SUCCESS)
}
