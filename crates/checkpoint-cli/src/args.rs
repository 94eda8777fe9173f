//! Options more than one command takes.

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

/// `--fetch`: the option of the commands that fetch on demand.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct FetchArgs {
    /// Fetch the checkpoint refs from the remote first (otherwise only when what is asked for
    /// is not here).
    #[arg(long)]
    pub(crate) fetch: bool,
}
