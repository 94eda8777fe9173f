//! `checkpoint install <agent>` and `checkpoint uninstall <agent>`: write (or remove) one handler
//! per event of the agent's table, each running the agent's adapter, in the agent's hooks file of
//! the project or of the user. Foreign hooks and every other setting are kept; a file that is not
//! strict JSON of the expected shape is refused and left untouched. Run inside a git repository,
//! `install <agent>` also trusts that project's current commands (see `checkpoint trust`).

mod adapter;
mod agents;
mod config_file;
pub(crate) mod git_hooks;
pub(crate) mod inspect;
mod ledger;
mod mcp;
mod notify;
#[cfg(test)]
mod packaged;
mod plugin;
mod settings;
mod skill;
mod statusline;
pub(crate) mod trust;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use checkpoint_core::agent::HooksLayout;
use serde_json::Value;

use crate::{CliError, output, project};

pub(crate) use agents::{AgentSpec, Scope};

use agents::InstallTarget;
use config_file::{ConfigFile, Replaced};
use ledger::{Ledger, Mode};

/// Where and how to edit: the options install and uninstall share.
#[derive(Debug, clap::Args)]
pub(crate) struct Options {
    /// Edit the user's hooks file instead of the project's: ~/.claude/settings.json
    /// ($CLAUDE_CONFIG_DIR), ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini),
    /// ~/.codex/hooks.json ($CODEX_HOME), ~/.copilot/hooks/checkpoint.json ($COPILOT_HOME),
    /// ~/.config/opencode/plugins/checkpoint.js ($XDG_CONFIG_HOME).
    #[arg(long)]
    user: bool,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also register (uninstall: remove) the `checkpoint mcp` server in the agent's MCP config:
    /// .mcp.json (--user: ~/.claude.json), the Gemini settings.json, .codex/config.toml (not for
    /// OpenCode: refused).
    #[arg(long)]
    mcp: bool,
}

/// Which hooks file to edit, and how.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// The agent whose hooks to edit (or git).
    agent: InstallTarget,
    user: bool,
    dry_run: bool,
    mcp: bool,
}

impl Options {
    fn target(&self, agent: InstallTarget) -> Target {
        Target {
            agent,
            user: self.user,
            dry_run: self.dry_run,
            mcp: self.mcp,
        }
    }
}

/// Options of `checkpoint install`.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    /// The agent whose hooks to install (or git).
    #[arg(value_name = "AGENT", value_parser = InstallTarget::parser())]
    agent: InstallTarget,
    #[command(flatten)]
    options: Options,
    /// The adapter the hooks run (default: the agent's, e.g. checkpoint-claude, next to this
    /// executable).
    #[arg(long, value_name = "PATH")]
    adapter: Option<PathBuf>,
    /// Claude Code only: also make `checkpoint statusline` the status line (`statusLine` in the
    /// same settings file), unless another one is set. `uninstall claude` removes it.
    #[arg(long)]
    statusline: bool,
    /// Codex CLI only: instead of hooks, make the adapter Codex's legacy `notify` program in
    /// config.toml (for a Codex without native hooks, run in tmux); the user's other settings
    /// are kept, another notify program is never replaced.
    #[arg(long, conflicts_with_all = ["mcp", "statusline"])]
    notify: bool,
}

/// Options of `checkpoint uninstall`.
#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    /// The agent whose hooks to remove (or git).
    #[arg(
        value_name = "AGENT",
        value_parser = InstallTarget::parser(),
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    agent: Option<InstallTarget>,
    #[command(flatten)]
    options: Options,
    /// Remove everything of checkpoint's from the project (--user: the user's files): every
    /// agent's hooks, MCP server, status line and skill, and the git hooks.
    #[arg(long)]
    all: bool,
    /// Keep the backups (`<file>.checkpoint.bak`) install made of the files it edited.
    #[arg(long)]
    keep_backups: bool,
}

/// Installs the agent's handlers, replacing ours from an earlier install wherever they are.
pub(crate) fn install(args: &InstallArgs) -> Result<ExitCode, CliError> {
    let target = args.options.target(args.agent);
    statusline::check(args.statusline, target.agent.agent())?;
    notify::check(args.notify, target.agent.agent())?;
    let Some(spec) = target.agent.agent() else {
        mcp::not_for_git(&target)?;
        return git_hooks::install_command(target.user, args.adapter.is_some(), target.dry_run);
    };
    mcp::check(&target, &spec)?;
    let adapter = adapter::locate(&spec, args.adapter.as_deref())?;
    if args.notify {
        notify::set(&target, &spec, Some(&adapter), Mode::Install)?;
        return Ok(ExitCode::SUCCESS);
    }
    let command = adapter::command_line(&adapter, adapter::HOOK_MARKER)?;
    let handlers = spec.handlers(&command);
    let events: Vec<&str> = handlers.iter().map(|(event, _)| *event).collect();
    let edit = edit(&target, &spec, &handlers, Mode::Install)?;
    let file = edit.file.display();
    match &edit.result {
        EditResult::Previewed => {
            if let Some(diff) = skill::preview(&spec, &edit.scope)? {
                output::out(diff.trim_end());
            }
            mcp::install(&target, &spec, &edit)?;
            statusline::install(args.statusline, &target, &spec, &edit)?;
            return Ok(ExitCode::SUCCESS);
        }
        EditResult::Unchanged => output::out(&format!(
            "Checkpoint hooks for {} are already installed in {file}: nothing to change.",
            spec.table.title
        )),
        EditResult::Written(replaced) => {
            output::out(&format!(
                "Installed checkpoint hooks for {} in {file}: {}.",
                spec.table.title,
                events.join(", ")
            ));
            report(&edit.file, replaced);
        }
    }
    // The user just chose this project: its current commands may run at stops.
    if let Some(project) = project::host().git_project(&project::cwd()?)? {
        trust::on_install(&project, &edit.ledger)?;
    }
    if let Some(path) = skill::install(&spec, &edit.scope, &edit.ledger)? {
        output::out(&format!(
            "Installed the checkpoint-progress skill in {}.",
            path.display()
        ));
    }
    output::out(&spec.reach(&edit.scope));
    output::out(&spec.next_steps(&edit.scope));
    mcp::install(&target, &spec, &edit)?;
    statusline::install(args.statusline, &target, &spec, &edit)?;
    report_project_files(&edit.ledger)?;
    Ok(ExitCode::SUCCESS)
}

/// Removes every handler of ours, whatever its event, and nothing else; with `--all`, for every
/// agent (with the MCP server) and git.
pub(crate) fn uninstall(args: &UninstallArgs) -> Result<ExitCode, CliError> {
    let mode = Mode::Uninstall {
        keep_backups: args.keep_backups,
    };
    let Some(agent) = args.agent else {
        let options = Options {
            mcp: true,
            ..args.options
        };
        for spec in crate::agents::HOMES.into_iter().filter_map(AgentSpec::of) {
            uninstall_agent(&options.target(InstallTarget::Agent(spec)), &spec, mode)?;
        }
        if options.user {
            output::note(
                "Git hooks are per repository, not the user's: `checkpoint uninstall git` in \
                 each repository removes them.",
            );
        } else if project::host().locate(&project::cwd()?)?.is_some() {
            git_hooks::uninstall_command(false, options.dry_run)?;
        }
        if !options.dry_run {
            Ledger::of(&scope(options.user)?, mode)?.finish()?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let target = args.options.target(agent);
    let Some(spec) = agent.agent() else {
        mcp::not_for_git(&target)?;
        return git_hooks::uninstall_command(target.user, target.dry_run);
    };
    uninstall_agent(&target, &spec, mode)?;
    Ok(ExitCode::SUCCESS)
}

/// Removes `spec`'s hooks, skill and status line (with `--mcp`, its MCP server).
fn uninstall_agent(target: &Target, spec: &AgentSpec, mode: Mode) -> Result<(), CliError> {
    let edit = edit(target, spec, &[], mode)?;
    let file = edit.file.display();
    match &edit.result {
        EditResult::Previewed => {}
        EditResult::Unchanged => output::out(&format!(
            "No checkpoint hooks for {} in {file}: nothing to change.",
            spec.table.title
        )),
        EditResult::Written(replaced) => {
            output::out(&format!(
                "Removed checkpoint hooks for {} from {file}: {}.",
                spec.table.title,
                edit.removed.join(", ")
            ));
            report(&edit.file, replaced);
        }
    }
    if !target.dry_run
        && let Some(path) = skill::uninstall(spec, &edit.scope, &edit.ledger)?
    {
        output::out(&format!(
            "Removed the checkpoint-progress skill from {}.",
            path.display()
        ));
    }
    if spec.name() == "codex" {
        notify::set(target, spec, None, mode)?;
    }
    let mcp_file = mcp::uninstall(target, spec, &edit)?;
    statusline::uninstall(target, spec, &edit)?;
    if target.dry_run {
        return Ok(());
    }
    let mut files = vec![edit.file.clone()];
    files.extend(mcp_file.filter(|file| *file != edit.file));
    for file in files {
        drop_backup(&edit.ledger, &file)?;
    }
    Ok(())
}

/// After uninstall edited `file`: removes the backup install made of it (unless asked to keep
/// it), and says so.
fn drop_backup(ledger: &Ledger, file: &Path) -> Result<(), CliError> {
    if let Some(backup) = ledger.drop_backup(file)? {
        output::out(&format!(
            "Removed the backup {} (--keep-backups keeps it).",
            backup.display()
        ));
    }
    Ok(())
}

/// What [`edit`] did.
#[derive(Debug)]
struct Edit {
    scope: Scope,
    /// The ledger of `scope`, and whether this is an install or an uninstall.
    ledger: Ledger,
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
    /// The file was replaced (or, emptied, removed).
    Written(Replaced),
}

/// Makes `handlers` the agent's only handlers of ours in `target`'s hooks file: previews the change
/// with `--dry-run`, else writes it (when there is one).
fn edit(
    target: &Target,
    spec: &AgentSpec,
    handlers: &[(&str, Value)],
    mode: Mode,
) -> Result<Edit, CliError> {
    let scope = scope(target.user)?;
    let ledger = Ledger::of(&scope, mode)?;
    let file = ConfigFile::read(spec.config_path(&scope)?)?;
    if let HooksLayout::Plugin(source) = spec.table.layout {
        return plugin::edit(source, target, spec, handlers, (scope, ledger, file));
    }
    let before = file.settings()?;
    let mut after = before.clone();
    let adapter = spec.adapter();
    let layout = spec.table.layout;
    let removed = settings::set_ours(
        &mut after,
        layout,
        |h| adapter::runs(h, layout.command_key(), &adapter, adapter::HOOK_MARKER),
        handlers,
    )
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
            EditResult::Written(file.replace(&text, &ledger)?)
        }
    };
    Ok(Edit {
        scope,
        ledger,
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
/// replaces `file` with `text` (recorded in the hooks edit's ledger: a file the hooks edit already
/// backed up is not backed up again), says `done` and what happened to the file and its backup.
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
    let replaced = file.replace(text, &hooks.ledger)?;
    output::out(done);
    report(&file.path, &replaced);
    Ok(true)
}

/// Says what [`ConfigFile::replace`] did besides writing `file`.
fn report(file: &Path, replaced: &Replaced) {
    if let Some(backup) = &replaced.backup_made {
        output::out(&format!("Previous content saved as {}.", backup.display()));
    }
    if replaced.file_removed {
        output::out(&format!(
            "Removed {}: checkpoint created it, and nothing else is in it.",
            file.display()
        ));
    }
}

/// After a project install: the files it wrote, and what to do with them.
fn report_project_files(ledger: &Ledger) -> Result<(), CliError> {
    let files = ledger.project_files()?;
    if files.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    output::out(&format!(
        "Checkpoint's files in this project: {}. Commit them to share the hooks with everyone \
         working here; until then the stop gate does not count them (nor the \
         `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes \
         them.",
        list.join(", ")
    ));
    Ok(())
}
