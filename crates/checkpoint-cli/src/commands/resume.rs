//! `checkpoint resume`: print the restart context a new session would start with (from the
//! latest checkpoint), without counting a restart.

use std::process::ExitCode;

use crate::error::CliError;
use crate::{continuity, output, project};

/// Options of `checkpoint resume` (none).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// `checkpoint resume`.
pub(crate) fn run(_: &Args) -> Result<ExitCode, CliError> {
    output::out(&continuity::resume(&project::open_git()?)?);
    Ok(ExitCode::SUCCESS)
}
