//! `checkpoint push [REMOTE]`: push the checkpoint refs by hand, as the `pre-push` step does,
//! and send what earlier pushes queued.

use std::process::ExitCode;

use checkpoint_engine::travel::{default_remote, push};

use crate::error::CliError;
use crate::{exit_codes, output, project};

/// Options of `checkpoint push`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The remote (a name or a URL). Default: every remote refs are queued for, else the
    /// current branch's upstream remote, else `origin`, else the only remote.
    #[arg(allow_hyphen_values = true)]
    remote: Option<String>,
}

/// `checkpoint push [REMOTE]`: exit 0 when every ref of ours is on the remote(s), else 1 with a
/// line per remote saying what did not go.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    let remotes = match &args.remote {
        Some(remote) => vec![remote.clone()],
        None => {
            let queued = push::waiting(&project.state_dir)
                .map_err(checkpoint_engine::project::ProjectError::from)?;
            if queued.is_empty() {
                let repo = project.git()?;
                let remote = default_remote(repo).ok_or_else(|| {
                    CliError::usage(
                        "this repository has no remote to push the checkpoints to",
                        "name one: `checkpoint push REMOTE`, or add one with `git remote add`",
                    )
                })?;
                vec![remote]
            } else {
                queued
            }
        }
    };
    let mut complete = true;
    for remote in remotes {
        let report = project.push_checkpoints(&remote)?;
        output::out(&report.summary());
        if let Some(note) = report.note() {
            complete = false;
            output::note(&note);
        }
    }
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit_codes::NO)
    })
}
