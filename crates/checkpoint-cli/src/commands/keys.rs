//! `checkpoint keys export`: this user's line for a project's `.checkpoint/allowed_signers`,
//! through which teammates and CI trust the receipts made here.

use std::process::ExitCode;

use checkpoint_engine::journal::{FileKeyManager, KeyManager, allowed_signers};

use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint keys`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Print `<name> <public key>` for the project's `.checkpoint/allowed_signers` (creates the
    /// key on first use).
    Export {
        /// The name on the line; `$USER@<hostname>` by default.
        #[arg(long)]
        name: Option<String>,
    },
}

/// `$USER@<hostname>`, as far as they are known.
fn default_name() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "user".to_owned());
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    format!("{user}@{host}")
}

/// `checkpoint keys export`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let Action::Export { name } = &args.action;
    let name = name.clone().unwrap_or_else(default_name);
    if !allowed_signers::valid_name(&name) {
        return Err(CliError::usage(
            format!("bad signer name {name:?}"),
            "use a name without spaces that does not start with `#`, e.g. --name alice@laptop",
        ));
    }
    let keys = FileKeyManager::beside_user_config(project::host().user_config.as_deref())
        .ok_or_else(|| {
            CliError::new(
                "no config directory for a signing key",
                "set HOME or XDG_CONFIG_HOME",
            )
        })?;
    let master = keys.master()?;
    output::out(&allowed_signers::line(&name, &master.public_key()));
    Ok(ExitCode::SUCCESS)
}
