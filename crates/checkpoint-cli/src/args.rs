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

/// A key of the settings table (`stop.max_blocks`), as `config get`, `config set` and `explain`
/// take it: the table's keys are offered to shell completion; any text parses, so that the command
/// answers an unknown key with its own hint (the key it most likely misspells).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SettingKey;

impl clap::builder::TypedValueParser for SettingKey {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let keys = checkpoint_core::policy::config::KEYS.iter();
        Some(Box::new(keys.map(|key| {
            clap::builder::PossibleValue::new(key.name).help(key.doc)
        })))
    }
}
