//! `checkpoint install <agent>` run inside a git repository trusts that project's current
//! commands (the user just chose it), as `checkpoint trust --yes` would; and the one listing of
//! a project's commands that both show.

use checkpoint_core::policy::config::ProjectCommand;
use checkpoint_engine::project::Project;

use crate::error::CliError;
use crate::output;

/// Approves the current commands of `project` after `checkpoint install` (the user just chose
/// it) and says so; says nothing when the project supplies none.
pub(super) fn on_install(project: &Project) -> Result<(), CliError> {
    if project.commands.is_empty() {
        return Ok(());
    }
    project.approve()?;
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
