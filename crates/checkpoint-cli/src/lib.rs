//! The `checkpoint` command-line tool: run the stop gate by hand, install the agents' hooks and (in
//! later commands) inspect state. `main.rs` is one call into [`main`].

mod agents;
mod check;
mod config_cmd;
mod continuity_cmds;
mod diff_cmd;
mod error;
mod git_hooks;
mod install;
mod journal_cmds;
mod mcp;
mod output;
mod project;
mod statusline;
mod task;

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
    /// Start, inspect and end tasks: named lists of steps an agent works through.
    #[command(subcommand)]
    Task(task::TaskCommand),
    /// Start, finish or fail the current step of the active task.
    #[command(subcommand)]
    Step(task::StepCommand),
    /// Run a command as a validation of the current step and keep a signed receipt of it.
    Validate(journal_cmds::ValidateArgs),
    /// Save a checkpoint of the session's state (and of the active task, if any).
    Save(journal_cmds::SaveArgs),
    /// Show what changed since the latest checkpoint: files and lines added and removed.
    ///
    /// Verify the work before clearing an agent's context. With --exit-code, exits 1 when
    /// work changed.
    Diff(diff_cmd::DiffArgs),
    /// Log a finished milestone; a new session's restart context lists it as done.
    Progress(continuity_cmds::ProgressArgs),
    /// Print the restart context a new session would start with (from the latest checkpoint).
    Resume(continuity_cmds::ResumeArgs),
    /// Serve checkpoint's tools to an agent over MCP on stdin/stdout (for the project in the
    /// current directory): save, list, resume, progress, configure.
    Mcp(mcp::McpArgs),
    /// After a crash: record it, pick how to go on, and print hook.md.
    Recover(journal_cmds::ReadArgs),
    /// Show the active task.
    Status(journal_cmds::ReadArgs),
    /// Show the task's history (checkpoints with their triggers), oldest first; without a task,
    /// the project's session checkpoints, newest first.
    Log(journal_cmds::ReadArgs),
    /// List the task's validation receipts; `receipts verify` checks their signatures.
    Receipts(journal_cmds::ReceiptsArgs),
    /// Remove finished tasks older than their retention (see [journal] in checkpoint.toml).
    Cleanup(journal_cmds::CleanupArgs),
    /// Show the effective settings and where each came from; `get` one, or `set` one in a file.
    ///
    /// Lists every key of checkpoint.toml with its value and origin (default, detected, a file
    /// and line, or a CHECKPOINT_* variable). `config set KEY VALUE` edits the project's
    /// checkpoint.toml (--user: the user config file), keeping its comments.
    Config(config_cmd::ConfigArgs),
    /// Record a commit or push checkpoint (run by the installed git hooks).
    #[command(hide = true)]
    GitHook(journal_cmds::GitHookArgs),
    /// Print Claude Code's status line (context usage, latest checkpoint, active task) for the
    /// status-line JSON on stdin, and record the session's context usage. Always exits 0.
    #[command(hide = true)]
    Statusline(statusline::StatuslineArgs),
}

/// Parses the command line, runs the command and maps the result to an exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Install(args) => install::install(&args),
        Command::Uninstall(args) => install::uninstall(&args),
        Command::Task(command) => task::task(&command),
        Command::Step(command) => task::step(&command),
        Command::Validate(args) => journal_cmds::validate(&args),
        Command::Save(args) => journal_cmds::save(&args),
        Command::Diff(args) => diff_cmd::run(&args),
        Command::Progress(args) => continuity_cmds::progress(&args),
        Command::Resume(args) => continuity_cmds::resume(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Recover(args) => journal_cmds::recover(&args),
        Command::Status(args) => journal_cmds::status(&args),
        Command::Log(args) => journal_cmds::log(&args),
        Command::Receipts(args) => journal_cmds::receipts(&args),
        Command::Cleanup(args) => journal_cmds::cleanup(&args),
        Command::Config(args) => config_cmd::run(&args),
        Command::GitHook(args) => journal_cmds::git_hook(&args),
        Command::Statusline(args) => statusline::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            output::error(&err);
            ExitCode::from(2)
        }
    }
}
