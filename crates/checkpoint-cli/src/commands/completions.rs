//! `checkpoint completions SHELL`: the shell's completion script for `checkpoint`, generated
//! from the command-line definition (as `rg --generate complete-bash` and `jj util completion`
//! do), on stdout.

use std::process::ExitCode;

use clap_complete::Shell;

use crate::error::CliError;

/// Options of `checkpoint completions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell whose completion script to print.
    shell: Shell,
}

/// Prints `cli`'s completion script for the shell.
pub(crate) fn run(args: &Args, mut cli: clap::Command) -> Result<ExitCode, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "checkpoint", &mut script);
    crate::output::bytes(&script);
    Ok(ExitCode::SUCCESS)
}
