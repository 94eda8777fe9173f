//! `checkpoint resume`: print the restart context a new session would start with (from the
//! latest checkpoint signed by the user's key), without counting a restart. With no such
//! checkpoint here, the checkpoint refs are fetched from the remote first (see
//! [`crate::fetching`]).

use std::process::ExitCode;

use crate::args::FetchArgs;
use crate::error::CliError;
use crate::{continuity, output, project};

/// Options of `checkpoint resume`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    fetch: FetchArgs,
}

/// `checkpoint resume [--fetch]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    output::out(&continuity::resume(&project, args.fetch)?);
    continuity::tell_set_aside(&project);
    Ok(ExitCode::SUCCESS)
}
