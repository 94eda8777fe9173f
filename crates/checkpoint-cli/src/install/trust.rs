//! `checkpoint install <agent>` run inside a git repository trusts that project's current
//! commands (the user just chose it), as `checkpoint trust --yes` would; and the one listing of
//! a project's commands that both show.

use checkpoint_core::policy::config::ProjectCommand;
use checkpoint_engine::project::{Project, ProjectError};
use checkpoint_engine::store::missing_dirs;

use crate::error::CliError;
use crate::output;

use super::ledger::Ledger;

/// Approves the current commands of `project` after `checkpoint install` (the user just chose
/// it) and says so; says nothing when the project supplies none. An approval that was not there
/// before is recorded in `ledger`, for `uninstall --all` to withdraw (with the directories made
/// for it).
pub(super) fn on_install(project: &Project, ledger: &Ledger) -> Result<(), CliError> {
    if project.commands.is_empty() {
        return Ok(());
    }
    let Some(store) = project.trust_store() else {
        return Err(ProjectError::NoConfigDir.into());
    };
    // Install's own approval, renewed, is still install's to withdraw.
    let ours = match store.approval(&project.workdir)? {
        Some(earlier) => ledger.gave(&project.workdir, earlier.approved_at)?,
        None => true,
    };
    let dirs = store.path().parent().map(missing_dirs).unwrap_or_default();
    project.approve()?;
    if ours && let Some(approval) = store.approval(&project.workdir)? {
        ledger.created_dirs(&dirs)?;
        ledger.approved(&project.workdir, approval.approved_at)?;
    }
    output::out(&format!(
        "Trusted {} to run at stops (`checkpoint untrust` withdraws it):\n{}",
        project.workdir.display(),
        lines(&project.commands)
    ));
    Ok(())
}

/// One indented line per command: `  tests.command: pytest -x -q`.
pub(crate) fn lines(commands: &[ProjectCommand]) -> String {
    (commands.iter())
        .map(|c| format!("  {}: {}", c.slot, c.text))
        .collect::<Vec<_>>()
        .join("\n")
}
