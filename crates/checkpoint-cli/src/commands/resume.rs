//! `checkpoint resume`: print the restart context a new session would start with (from the
//! latest checkpoint), without counting a restart. With no checkpoint here, the checkpoint refs
//! are fetched from the remote first (see [`crate::fetching`]).

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
    output::out(&continuity::resume(&project::open_git()?, args.fetch)?);
    Ok(ExitCode::SUCCESS)
}
