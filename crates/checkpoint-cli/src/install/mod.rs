//! `checkpoint install <agent>` and `checkpoint uninstall <agent>`: write (or remove) one handler
//! per event of the agent's table, each running the agent's adapter, in the agent's hooks file of
//! the project or of the user. Foreign hooks and every other setting are kept; a file that is not
//! strict JSON of the expected shape is refused and left untouched. Run inside a git repository,
//! `install <agent>` also trusts that project's current commands (see `checkpoint trust`).

mod adapter;
mod agents;
mod config_file;
mod git_hooks;
pub(crate) mod inspect;
mod mcp;
mod settings;
mod skill;
mod statusline;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use crate::{CliError, output, project};

pub(crate) use agents::{AgentSpec, Scope};

use agents::InstallTarget;
use config_file::ConfigFile;

/// Which hooks file to edit, and how.
#[derive(Debug, clap::Args)]
pub(crate) struct Target {
    /// The agent whose hooks to edit (or git).
    #[arg(value_name = "AGENT", value_parser = InstallTarget::parser())]
    agent: InstallTarget,
    /// Edit the user's hooks file instead of the project's: ~/.claude/settings.json
    /// ($CLAUDE_CONFIG_DIR), ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini),
    /// ~/.codex/hooks.json ($CODEX_HOME).
    #[arg(long)]
    user: bool,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also register (uninstall: remove) the `checkpoint mcp` server in the agent's MCP config:
    /// .mcp.json (--user: ~/.claude.json), the Gemini settings.json, .codex/config.toml.
    #[arg(long)]
    mcp: bool,
}

/// Options of `checkpoint install`.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    target: Target,
    /// The adapter the hooks run (default: the agent's, e.g. checkpoint-claude, next to this
    /// executable).
    #[arg(long, value_name = "PATH")]
    adapter: Option<PathBuf>,
    /// Claude Code only: also make `checkpoint statusline` the status line (`statusLine` in the
    /// same settings file), unless another one is set. `uninstall claude` removes it.
    #[arg(long)]
    statusline: bool,
}

/// Options of `checkpoint uninstall`.
#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    target: Target,
}

/// Installs the agent's handlers, replacing ours from an earlier install wherever they are.
pub(crate) fn install(args: &InstallArgs) -> Result<ExitCode, CliError> {
    statusline::check(args.statusline, args.target.agent.agent())?;
    let Some(spec) = args.target.agent.agent() else {
        let target = &args.target;
        mcp::not_for_git(target)?;
        return git_hooks::install_command(target.user, args.adapter.is_some(), target.dry_run);
    };
    let adapter = adapter::locate(&spec, args.adapter.as_deref())?;
    let command = adapter::command_line(&adapter)?;
    let handlers: Vec<(&str, Value)> = spec
        .table
        .events
        .iter()
        .map(|event| (event.name, spec.handler(&command, event)))
        .collect();
    let events: Vec<&str> = handlers.iter().map(|(event, _)| *event).collect();
    let edit = edit(&args.target, &spec, &handlers)?;
    let file = edit.file.display();
    match &edit.result {
        EditResult::Previewed => {
            mcp::install(&args.target, &spec, &edit)?;
            statusline::install(args.statusline, &args.target, &spec, &edit)?;
            return Ok(ExitCode::SUCCESS);
        }
        EditResult::Unchanged => output::out(&format!(
            "Checkpoint hooks for {} are already installed in {file}: nothing to change.",
            spec.table.title
        )),
        EditResult::Written { backup } => {
            output::out(&format!(
                "Installed checkpoint hooks for {} in {file}: {}.",
                spec.table.title,
                events.join(", ")
            ));
            report_backup(backup.as_deref());
        }
    }
    // The user just chose this project: its current commands may run at stops.
    if let Some(project) = project::host().git_project(&project::cwd()?)? {
        crate::commands::trust::on_install(&project)?;
    }
    if let Some(path) = skill::install(&spec, &edit.scope)? {
        output::out(&format!(
            "Installed the checkpoint-progress skill in {}.",
            path.display()
        ));
    }
    output::out(&spec.reach(&edit.scope));
    output::out(&spec.next_steps(&edit.scope));
    mcp::install(&args.target, &spec, &edit)?;
    statusline::install(args.statusline, &args.target, &spec, &edit)?;
    Ok(ExitCode::SUCCESS)
}

/// Removes every handler of ours, whatever its event, and nothing else.
pub(crate) fn uninstall(args: &UninstallArgs) -> Result<ExitCode, CliError> {
    let Some(spec) = args.target.agent.agent() else {
        mcp::not_for_git(&args.target)?;
        return git_hooks::uninstall_command(args.target.user, args.target.dry_run);
    };
    let edit = edit(&args.target, &spec, &[])?;
    let file = edit.file.display();
    match &edit.result {
        EditResult::Previewed => {}
        EditResult::Unchanged => output::out(&format!(
            "No checkpoint hooks for {} in {file}: nothing to change.",
            spec.table.title
        )),
        EditResult::Written { backup } => {
            output::out(&format!(
                "Removed checkpoint hooks for {} from {file}: {}.",
                spec.table.title,
                edit.removed.join(", ")
            ));
            report_backup(backup.as_deref());
        }
    }
    if !args.target.dry_run
        && let Some(path) = skill::uninstall(&spec, &edit.scope)?
    {
        output::out(&format!(
            "Removed the checkpoint-progress skill from {}.",
            path.display()
        ));
    }
    mcp::uninstall(&args.target, &spec, &edit)?;
    statusline::uninstall(&args.target, &spec, &edit)?;
    Ok(ExitCode::SUCCESS)
}

/// What [`edit`] did.
#[derive(Debug)]
struct Edit {
    scope: Scope,
    /// The hooks file.
    file: PathBuf,
    /// The events whose handlers of ours were removed without a replacement.
    removed: Vec<String>,
    result: EditResult,
}

#[derive(Debug)]
enum EditResult {
    /// The file already was as asked; nothing was written.
    Unchanged,
    /// A dry run printed the diff; nothing was written.
    Previewed,
    /// The file was replaced; the previous content, if any, is in `backup`.
    Written { backup: Option<PathBuf> },
}

/// Makes `handlers` the agent's only handlers of ours in `target`'s hooks file: previews the change
/// with `--dry-run`, else writes it (when there is one).
fn edit(target: &Target, spec: &AgentSpec, handlers: &[(&str, Value)]) -> Result<Edit, CliError> {
    let scope = scope(target.user)?;
    let file = ConfigFile::read(spec.config_path(&scope)?)?;
    let before = file.settings()?;
    let mut after = before.clone();
    let adapter = spec.adapter();
    let removed = settings::set_ours(&mut after, |h| adapter::runs(h, &adapter), handlers)
        .map_err(|e| file.invalid(e))?;
    let result = if after == before {
        if target.dry_run {
            output::out("nothing to change");
            EditResult::Previewed
        } else {
            EditResult::Unchanged
        }
    } else {
        let text = settings::render(&after, file.text.as_deref());
        if target.dry_run {
            output::out(file.diff(&text).trim_end());
            EditResult::Previewed
        } else {
            EditResult::Written {
                backup: file.replace(&text)?,
            }
        }
    };
    Ok(Edit {
        scope,
        file: file.path,
        removed,
        result,
    })
}

/// The user's scope, or the project around the working directory: its git toplevel, else the
/// directory itself.
fn scope(user: bool) -> Result<Scope, CliError> {
    if user {
        return Ok(Scope::User);
    }
    Ok(Scope::Project(project::root()?))
}

/// What an edit beside the hooks (the MCP server, the status line) would do to its file.
#[derive(Debug)]
enum Change {
    /// Nothing to change: the file stays as it is.
    Unchanged,
    /// The file's new content.
    To(String),
    /// The entry exists and is not ours; it runs this command.
    Foreign(String),
}

/// Writes an edit beside the hooks: with `--dry-run` prints its diff and returns false; else
/// replaces `file` with `text`, says `done` and reports the backup. When this run's hooks edit
/// already replaced the same file (Claude and Gemini keep the status line or MCP servers beside
/// the hooks), its backup holds the user's content and stays as it is (and was reported);
/// otherwise the file is backed up as usual.
fn write_beside_hooks(
    file: &ConfigFile,
    text: &str,
    hooks: &Edit,
    dry_run: bool,
    done: &str,
) -> Result<bool, CliError> {
    if dry_run {
        output::out(file.diff(text).trim_end());
        return Ok(false);
    }
    let hooks_wrote_it = matches!(hooks.result, EditResult::Written { .. });
    let backup = if hooks_wrote_it && hooks.file == file.path {
        checkpoint_core::store::write_atomic(&file.path, text.as_bytes())
            .map_err(|e| CliError::new(e, "check the permissions of the file and its directory"))?;
        None
    } else {
        file.replace(text)?
    };
    output::out(done);
    report_backup(backup.as_deref());
    Ok(true)
}

fn report_backup(backup: Option<&Path>) {
    if let Some(backup) = backup {
        output::out(&format!("Previous content saved as {}.", backup.display()));
    }
}
