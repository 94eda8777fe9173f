//! `checkpoint progress "…"`: log a finished milestone; a new session's restart context lists it
//! as done.

use std::process::ExitCode;

use crate::continuity::{self, Caller};
use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint progress`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What is done, e.g. "created the schema".
    text: String,
}

/// `checkpoint progress TEXT`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let logged = continuity::progress(&project::open_git()?, Caller::Cli, &args.text)?;
    output::out(&logged);
    Ok(ExitCode::SUCCESS)
}
