//! `checkpoint trust`, `checkpoint trust --list` and `checkpoint untrust`: the user approves (or
//! withdraws approval of) the commands the project in the current directory supplies — its test
//! command, detected or configured, its rules' commands and actions, its values of the guarded
//! settings. The stop gate runs a project's commands only once they are approved (see
//! `checkpoint_engine::trust`).

use std::process::ExitCode;

use checkpoint_engine::project::{Project, ProjectError};
use checkpoint_engine::trust::TrustStore;

use crate::error::CliError;
use crate::install::trust::lines;
use crate::{exit_codes, output, project};

/// Options of `checkpoint trust`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Approve without asking (for scripts). Without it, asks on a terminal and refuses
    /// elsewhere.
    #[arg(long, conflicts_with = "list")]
    yes: bool,
    /// List every approved project and what was approved for it.
    #[arg(long)]
    list: bool,
    /// Forget the approvals of projects whose directory is gone.
    #[arg(long, conflicts_with_all = ["yes", "list"])]
    prune: bool,
}

/// Options of `checkpoint untrust` (none: the project is the current directory's).
#[derive(Debug, clap::Args)]
pub(crate) struct UntrustArgs {}

/// `checkpoint trust [--yes | --list]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    if args.list {
        return list();
    }
    if args.prune {
        return prune();
    }
    let project = project::open()?;
    let approval = project.approval()?;
    let root = project.workdir.display();
    if project.commands.is_empty() && approval.is_none() {
        output::out(&format!(
            "Nothing to approve: {root} supplies no command the gate would run."
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let changes = match &approval {
        Some(approval) => project.changes_since(approval)?,
        None => Vec::new(),
    };
    if approval.is_some() && changes.is_empty() {
        output::out(&format!(
            "{root} is already trusted with these commands:\n{}",
            lines(&project.commands)
        ));
        return Ok(ExitCode::SUCCESS);
    }
    if !changes.is_empty() {
        output::out(&format!(
            "Changed since your approval:\n{}",
            (changes.iter().map(|c| format!("  {c}")))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    output::out(&format!(
        "At the end of an agent's turn, checkpoint would run or apply in {root}:\n{}",
        lines(&project.commands)
    ));
    let refusal = "read them above, then run `checkpoint trust --yes` to approve them";
    if !args.yes && !output::confirm("Trust them?", "trust these commands", refusal)? {
        output::out("Nothing approved.");
        return Ok(ExitCode::from(exit_codes::NO));
    }
    project.approve()?;
    output::out(&format!("Trusted {root}: these commands now run at stops."));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint untrust`.
pub(crate) fn untrust(_: &UntrustArgs) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let root = project.workdir.display();
    let revoked = store(&project)?.revoke(&project.workdir)?;
    output::out(&if revoked {
        format!("Untrusted {root}: the gate runs none of its commands until you trust it again.")
    } else {
        format!("{root} was not trusted: nothing to change.")
    });
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint trust --list`: a project whose directory is gone is marked so.
fn list() -> Result<ExitCode, CliError> {
    let all = user_store()?.list()?;
    if all.is_empty() {
        output::out("No trusted projects.");
    }
    for (root, approval) in all {
        let gone = if root.exists() {
            ""
        } else {
            " — gone: `checkpoint trust --prune` forgets it"
        };
        output::out(&format!(
            "{} (approved {}){gone}:\n{}",
            root.display(),
            approval.approved_at.strftime("%Y-%m-%d %H:%M UTC"),
            lines(&approval.commands)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint trust --prune`.
fn prune() -> Result<ExitCode, CliError> {
    let store = user_store()?;
    let mut forgotten = 0;
    for root in store.list()?.into_keys().filter(|root| !root.exists()) {
        if store.revoke(&root)? {
            output::out(&format!("Forgot {}: it is gone.", root.display()));
            forgotten += 1;
        }
    }
    if forgotten == 0 {
        output::out("Every trusted project is still there: nothing to forget.");
    }
    Ok(ExitCode::SUCCESS)
}

/// The user's trust store.
fn user_store() -> Result<TrustStore, CliError> {
    TrustStore::beside_user_config(project::host().user_config.as_deref()).ok_or_else(no_config_dir)
}

/// The trust store of `project`.
fn store(project: &Project) -> Result<TrustStore, CliError> {
    project.trust_store().ok_or_else(no_config_dir)
}

fn no_config_dir() -> CliError {
    CliError::from(ProjectError::NoConfigDir)
}
