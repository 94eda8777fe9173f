//! Options more than one command takes.

use crate::fetching::FetchArgs;

/// `--task ID`, `--json` and `--fetch`: the options of the commands that read a task (`status`,
/// `log`, `receipts`, `recover`, `task status`).
#[derive(Debug, clap::Args)]
pub(crate) struct ReadArgs {
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    pub(crate) task: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}
