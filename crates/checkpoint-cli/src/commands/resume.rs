//! `checkpoint resume`: print the restart context a new session would start with.

use std::process::ExitCode;

use crate::{CliError, continuity};

/// Options of `checkpoint resume` (none).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// `checkpoint resume`.
pub(crate) fn run(_: &Args) -> Result<ExitCode, CliError> {
    continuity::resume()
}
