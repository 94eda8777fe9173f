//! The `checkpoint` command-line tool: run the stop gate by hand, install the agents' hooks, keep
//! the task journal and session continuity by hand, and serve them over MCP. `main.rs` is one
//! call into [`main`], which parses the command line, runs one command and turns its result into
//! the exit status.
//!
//! Where things are:
//!
//! - `commands/`: one file per subcommand, named for it (`checkpoint git-hook` is
//!   `commands/git_hook.rs`), with its options and its `run`;
//! - `install/`: `checkpoint install` and `uninstall`: the agents' hooks files, the MCP server
//!   entry, the status line, the skill and the git hooks;
//! - `continuity.rs`: save, progress, resume and the checkpoint list, as both the commands and
//!   the MCP tools do them, in one wording;
//! - `agents.rs`: the agents' homes, from the adapter libraries: their names on the command line,
//!   which agent a payload is from, their install tables;
//! - `project.rs`: the only place that finds the project (host, current directory, repository);
//! - `error.rs`: [`CliError`], whose [`ErrorKind`] sets the exit status and whose hint is the same
//!   for the same core error everywhere;
//! - [`exit_codes`]: every exit status, named, with the table; [`schema`]: the one
//!   [`SCHEMA_VERSION`](schema::SCHEMA_VERSION) of the JSON outputs;
//! - `output.rs`: the printer (lines, JSON, warnings, errors; colour on a terminal);
//! - `ticker.rs`: the line `check` ticks on a terminal while a test command runs;
//! - `args.rs`: options several commands share;
//! - `fetching.rs`: fetching the checkpoint refs on demand for the commands that read them.

mod agents;
mod args;
#[cfg(test)]
mod book;
mod commands;
mod continuity;
mod error;
pub mod exit_codes;
mod fetching;
mod install;
mod output;
mod project;
pub mod schema;
mod ticker;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub use error::{CliError, ErrorKind};

use commands::{
    check, ci, cleanup, completions, config, diff, doctor, explain, git_hook, history, integrity,
    keys, log, man, mcp, progress, push, receipts, recover, report, restore, resume, save, status,
    statusline, step, task, trust, validate, verify,
};

/// Makes AI coding agents stop only when their work is validated.
#[derive(Debug, Parser)]
#[command(name = "checkpoint", version, about, after_long_help = exit_codes::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the stop gate for the current directory and print the decision.
    ///
    /// Reads a hook payload (any agent's) from stdin when stdin is not a terminal and not empty;
    /// otherwise judges a stop in the current directory. Exit status: 0 allow, 1 block, 2 allow
    /// with something unchecked (or a usage error), 3 a setup problem (e.g. no git repository),
    /// 4 a bug.
    Check(check::Args),
    /// Judge a pull request in CI: its change set from the merge base with the base branch to
    /// HEAD, on the clean checkout, under the base's configuration.
    ///
    /// Runs the test commands the base approves (never the branch's own, never a local receipt),
    /// with the test-integrity analysis (the old tests on the new code included); prints a
    /// Markdown summary; --sarif writes the findings for code scanning, --json the verdict.
    /// Exit status: 0 passed, 1 failed, 2 not everything could be checked (or a usage error),
    /// 3 a setup problem.
    Ci(ci::Args),
    /// Install the hooks that run checkpoint's adapter into an agent's configuration.
    ///
    /// Writes one handler per event the adapter handles into the project's hooks file (the git
    /// toplevel's, else the current directory's) or, with --user, the user's. Other hooks and
    /// settings are kept; running it again changes nothing.
    Install(install::InstallArgs),
    /// Remove checkpoint's hooks from an agent's configuration, and nothing else.
    Uninstall(install::UninstallArgs),
    /// Check that the gate will really run here: per agent, where its hooks are installed, the
    /// adapter they run, whether the agent runs them in this project, and a live check.
    ///
    /// Pipes a captured payload of each installed event through the configured command (state
    /// in a temporary directory; no test command runs) and checks the answer against the agent's
    /// protocol. One line per check, a fix under each problem. Exit status: 0 all is well, 1 a
    /// problem.
    Doctor(doctor::Args),
    /// Start, inspect and end tasks: named lists of steps an agent works through.
    #[command(subcommand)]
    Task(task::Command),
    /// Start, finish or fail the current step of the active task.
    #[command(subcommand)]
    Step(step::Command),
    /// Run a command as a validation of the current step and keep a signed receipt of it.
    Validate(validate::Args),
    /// Save a checkpoint of the session's state (and of the active task, if any).
    Save(save::Args),
    /// Show what changed since the latest checkpoint: files and lines added and removed.
    ///
    /// Verify the work before clearing an agent's context. With --exit-code, exits 1 when
    /// work changed.
    Diff(diff::Args),
    /// Put the worktree's files back to a session checkpoint (default: the latest), after saving
    /// a safety checkpoint of their current state; --undo returns to that.
    ///
    /// Files created since the checkpoint are deleted, deleted ones recreated; ignored files are
    /// never touched. Refuses, changing nothing, when a file's content was not kept.
    Restore(restore::Args),
    /// Log a finished milestone; a new session's restart context lists it as done.
    Progress(progress::Args),
    /// Print the restart context a new session would start with (from the latest checkpoint).
    Resume(resume::Args),
    /// Serve checkpoint's tools to an agent over MCP on stdin/stdout (for the project in the
    /// current directory): save, list, restore, resume, progress, configure.
    Mcp(mcp::Args),
    /// After a crash: record it, pick how to go on, and print hook.md.
    Recover(args::ReadArgs),
    /// Show the active task.
    Status(args::ReadArgs),
    /// Show the task's history (checkpoints with their triggers), oldest first; without a task,
    /// the project's session checkpoints, newest first.
    Log(args::ReadArgs),
    /// Write one HTML page of what happened here: each session's turns, stops, test runs,
    /// checkpoints and context usage, the task, and which commits `verify` proves.
    ///
    /// Self-contained (no script, no network), light and dark. --json prints the same data.
    Report(report::Args),
    /// Count how many past "done" claims of the agents had a passing test behind them, from the
    /// transcripts already on this machine.
    ///
    /// Every turn that edited files and ended with a completion claim (`stop.claims`) is
    /// verified (a test command passed after the last edit), stale (one passed only before it),
    /// failed or never ran; beside it, what the gate said at that turn, from this worktree's
    /// records. Local only; counts, no transcript text. --json prints the same counts.
    History(history::Args),
    /// List the task's validation receipts; `receipts verify` checks their signatures.
    Receipts(receipts::Args),
    /// For each commit of REV or RANGE (default HEAD): whether a passing receipt of exactly its
    /// tree verifies against a trusted key. Exit 1 unless every commit does.
    Verify(verify::Args),
    /// The receipt-signing key: `keys export` prints this user's line for the project's
    /// `.checkpoint/allowed_signers`.
    Keys(keys::Args),
    /// Remove finished tasks older than their retention (see [journal] in checkpoint.toml) and
    /// session files older than every session checkpoint kept; --remote also deletes the
    /// removed tasks' refs on the remote.
    Cleanup(cleanup::Args),
    /// Push the checkpoint refs (refs/checkpoint/*) to a remote, as the pre-push step of
    /// `checkpoint install git` does, and send what earlier pushes queued.
    ///
    /// Fast-forwards only: a ref that diverged on another machine is reported, never forced.
    /// Exit status: 0 when everything is on the remote, 1 when something is not.
    Push(push::Args),
    /// Show the effective settings and where each came from; `get` one, or `set` one in a file.
    ///
    /// Lists every key of checkpoint.toml with its value and origin (default, detected, a file
    /// and line, or a CHECKPOINT_* variable). `config set KEY VALUE` edits the project's
    /// checkpoint.toml (--user: the user config file), keeping its comments.
    Config(config::ConfigArgs),
    /// Why the last stop here was blocked (or let through): its verdict, what the agent was
    /// told, its test runs; or, given a KEY, what that setting does.
    ///
    /// The stop is the latest one the sessions of this worktree recorded (--session: of that
    /// session). `checkpoint explain stop.max_blocks` prints the key's description, its default,
    /// its value here and where that came from, and its CHECKPOINT_* variable.
    Explain(explain::Args),
    /// Approve the commands this project would run at stops (its test command, detected or
    /// configured, and its rules'), after showing them.
    ///
    /// The stop gate runs a project's commands only once you approved them; when they change
    /// (an edit of checkpoint.toml, a pull), it keeps running the approved ones and tells you.
    /// Asks on a terminal; --yes approves without asking.
    Trust(trust::Args),
    /// Withdraw the approval of this project's commands: the gate runs none of them.
    Untrust(trust::UntrustArgs),
    /// Accept the changes the stop gate reports as weakening the tests (`integrity accept`),
    /// after showing them: an intended test change, approved by a person.
    Integrity(integrity::Args),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    ///
    /// bash: `checkpoint completions bash > ~/.local/share/bash-completion/completions/checkpoint`;
    /// zsh: into a directory on `$fpath` as `_checkpoint`; fish:
    /// `~/.config/fish/completions/checkpoint.fish`.
    Completions(completions::Args),
    /// Print the manual page (roff) generated from this command line; --dir writes one page per
    /// command.
    ///
    /// `checkpoint man | man -l -` reads it; `checkpoint man --dir ~/.local/share/man/man1` installs
    /// every page.
    Man(man::Args),
    /// Record a commit or push checkpoint (run by the installed git hooks).
    #[command(hide = true)]
    GitHook(git_hook::Args),
    /// Print Claude Code's status line (context usage, latest checkpoint, active task) for the
    /// status-line JSON on stdin, and record the session's context usage. Always exits 0.
    #[command(hide = true)]
    Statusline(statusline::Args),
}

/// `checkpoint help --help` (or `-h`) as `checkpoint help help`, which clap's own `help`
/// subcommand answers: it takes no options of its own.
fn help_of_help(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.len() == 3 && args[1] == "help" && (args[2] == "--help" || args[2] == "-h") {
        args[2] = "help".into();
    }
    args
}

/// Parses the command line, runs the command and maps the result to an exit status.
pub fn main() -> ExitCode {
    // `checkpoint check` answers hook events too, so a tool event it judged may start it as a
    // background run of warm results.
    if checkpoint_engine::hook::background_run() {
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse_from(help_of_help(std::env::args_os().collect()));
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Install(args) => install::install(&args),
        Command::Uninstall(args) => install::uninstall(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Task(command) => task::run(&command),
        Command::Step(command) => step::run(&command),
        Command::Validate(args) => validate::run(&args),
        Command::Save(args) => save::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Restore(args) => restore::run(&args),
        Command::Progress(args) => progress::run(&args),
        Command::Resume(args) => resume::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Recover(args) => recover::run(&args),
        Command::Status(args) => status::run(&args),
        Command::Log(args) => log::run(&args),
        Command::Report(args) => report::run(&args),
        Command::History(args) => history::run(&args),
        Command::Ci(args) => ci::run(&args),
        Command::Receipts(args) => receipts::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Keys(args) => keys::run(&args),
        Command::Cleanup(args) => cleanup::run(&args),
        Command::Push(args) => push::run(&args),
        Command::Config(args) => config::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Trust(args) => trust::run(&args),
        Command::Untrust(args) => trust::untrust(&args),
        Command::Integrity(args) => integrity::run(&args),
        Command::Completions(args) => completions::run(&args, Cli::command()),
        Command::Man(args) => man::run(&args, Cli::command()),
        Command::GitHook(args) => git_hook::run(&args),
        Command::Statusline(args) => statusline::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            output::error(&err);
            err.kind.exit_code()
        }
    }
}
