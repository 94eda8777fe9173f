//! The `checkpoint` command-line tool: run the stop gate by hand, install the agents' hooks and (in
//! later commands) inspect state. `main.rs` is one call into [`main`].

mod check;
mod error;
mod install;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::CliError;

/// Makes AI coding agents stop only when their work is validated.
#[derive(Debug, Parser)]
#[command(name = "checkpoint", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the stop gate for the current directory and print the decision.
    ///
    /// Reads a hook payload (any agent's) from stdin when stdin is not a terminal and not empty;
    /// otherwise judges a stop in the current directory. Exit status: 0 allow, 1 block, 2 error.
    Check(check::Args),
    /// Install the hooks that run checkpoint's adapter into an agent's configuration.
    ///
    /// Writes one handler per event the adapter handles into the project's hooks file (the git
    /// toplevel's, else the current directory's) or, with --user, the user's. Other hooks and
    /// settings are kept; running it again changes nothing.
    Install(install::InstallArgs),
    /// Remove checkpoint's hooks from an agent's configuration, and nothing else.
    Uninstall(install::UninstallArgs),
}

/// Parses the command line, runs the command and maps the result to an exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Install(args) => install::install(&args),
        Command::Uninstall(args) => install::uninstall(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            output::error(&err);
            ExitCode::from(2)
        }
    }
}
