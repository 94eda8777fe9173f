//! `checkpoint verify [REV | RANGE]`: for each commit, whether a passing receipt of its exact
//! tree verifies against a trusted key. One line per commit; exit 1 unless every one does. A
//! commit with no receipt here fetches the checkpoint refs first (see [`crate::fetching`]).

use std::process::ExitCode;

use checkpoint_engine::git::call::GitCallError;
use checkpoint_engine::journal::verify::{self, CommitResult};
use serde_json::json;

use crate::args::FetchArgs;
use crate::commands::receipts::trusted_keys;
use crate::error::CliError;
use crate::{exit_codes, fetching, output, project};

/// Options of `checkpoint verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A commit (`HEAD`, a branch, an id) or a range (`main..HEAD`).
    #[arg(default_value = "HEAD")]
    rev: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    fetch: FetchArgs,
}

/// The hint for a REV or RANGE that names no commit.
const REV_HINT: &str =
    "give a commit (`HEAD`, a branch) or a range with commits in it (`main..HEAD`)";

/// `checkpoint verify [REV | RANGE] [--json]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    // In a repository git reads, a `git log` that fails was given a revision it does not know.
    let commits = verify::commits(project.git()?, &args.rev).map_err(|err| match err {
        GitCallError::Failed { .. } => CliError::usage(err, REV_HINT),
        _ => CliError::from(err),
    })?;
    if commits.is_empty() {
        return Err(CliError::usage(
            format!("{} names no commit", args.rev),
            REV_HINT,
        ));
    }
    let journal = project.journal();
    trusted_keys(&journal)?;
    // A commit with no receipt here may have one on another machine: fetch and look again.
    let checks = fetching::read(
        &project,
        args.fetch,
        || Ok(journal.verify_commits(commits.clone())?),
        |checks| {
            checks
                .iter()
                .any(|c| matches!(c.result, CommitResult::NoReceipt { .. }))
        },
    )?;
    let verified = checks.iter().filter(|c| c.verified).count();
    let ok = verified == checks.len();
    if args.json {
        output::json(&json!({ "ok": ok, "commits": checks }))?;
    } else {
        let mut lines: Vec<String> = checks.iter().map(ToString::to_string).collect();
        if checks.len() > 1 {
            lines.push(format!(
                "{} commits: {verified} verified, {} not",
                checks.len(),
                checks.len() - verified
            ));
        }
        output::out(&lines.join("\n"));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit_codes::NO)
    })
}
