//! `checkpoint man`: the manual page, roff generated from the command-line definition (as
//! `rg --generate man` does) on stdout; with `--dir`, one page per command (as
//! `jj util install-man-pages` does).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::CliError;
use crate::output;

/// Options of `checkpoint man`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Write `checkpoint.1` and a page per subcommand (`checkpoint-task-start.1`, …) into this
    /// directory (created if missing) instead of printing `checkpoint.1`.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints `cli`'s manual page, or writes every page into `--dir`. Either way without the `help`
/// subcommand, which has no page, and with the `about` line plain.
pub(crate) fn run(args: &Args, cli: clap::Command) -> Result<ExitCode, CliError> {
    // The NAME line is plain text: no Markdown code spans.
    let about = cli
        .get_about()
        .map(|about| about.to_string().replace('`', ""));
    let cli = cli
        .disable_help_subcommand(true)
        .about(about.unwrap_or_default());
    let failed = |what: &std::path::Path| {
        let what = what.display().to_string();
        move |e: std::io::Error| {
            CliError::new(
                format!("writing the manual pages into {what}: {e}"),
                "choose a directory you can write to",
            )
        }
    };
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(failed(dir))?;
            clap_mangen::generate_to(cli, dir).map_err(failed(dir))?;
            output::out(&format!("Wrote the manual pages into {}.", dir.display()));
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cli)
                .render(&mut page)
                .map_err(CliError::bug)?;
            output::bytes(&page);
        }
    }
    Ok(ExitCode::SUCCESS)
}
