//! `checkpoint verify [REV | RANGE]`: for each commit, whether a passing receipt of its exact
//! tree, of the test command the commit configures, verifies against a trusted key. One line
//! per commit; exit 1 unless every one does. A commit with no receipt here fetches the
//! checkpoint refs first (see [`crate::fetching`]).
//!
//! The keys trusted are this user's own and those of an `allowed_signers` list the commits
//! under verification cannot have edited: a file the verifier names (`--signers`), the list as
//! committed at a revision it names (`--signers-from`), or by default the list at a commit
//! before them ([`verify::default_anchor`]).

use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::journal::TrustedKeys;
use checkpoint_core::sanitize;
use checkpoint_engine::git::base;
use checkpoint_engine::git::call::GitCallError;
use checkpoint_engine::journal::verify::{self, CommitResult};
use checkpoint_engine::journal::{Journal, JournalError, allowed_signers};
use checkpoint_engine::project::Project;
use serde_json::json;

use crate::args::FetchArgs;
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
    /// Trust the signers this file lists (`<name> <key>` per line, as `checkpoint keys export`
    /// prints), besides your own key. Keep it outside the repository: in CI, a file of the CI's
    /// own configuration.
    #[arg(
        long,
        value_name = "FILE",
        env = "CHECKPOINT_VERIFY_SIGNERS",
        conflicts_with = "signers_from"
    )]
    signers: Option<PathBuf>,
    /// Trust the `.checkpoint/allowed_signers` committed at REV (e.g. `origin/main`), besides
    /// your own key. Without this or `--signers`: the list at the range's start (`main` in
    /// `main..HEAD`), or for one commit at its merge base with the remote's default branch, or
    /// at its parent — never the list of a commit being verified.
    #[arg(long, value_name = "REV")]
    signers_from: Option<String>,
    #[command(flatten)]
    fetch: FetchArgs,
}

/// The keys `verify` trusts, and where the project's come from.
pub(crate) struct Signers {
    /// The keys.
    pub(crate) trusted: TrustedKeys,
    /// Where the listed signers were read, for the user.
    pub(crate) from: String,
}

impl Signers {
    /// This user's own key and those of the list `args` chooses for `args.rev`.
    fn read(project: &Project, args: &Args) -> Result<Signers, CliError> {
        let (file, from_rev) = (args.signers.as_deref(), args.signers_from.as_deref());
        Signers::chosen(project, &args.rev, file, from_rev)
    }

    /// This user's own key and those listed in `file`, or at `from_rev`, or by default at a
    /// commit before those of `rev` ([`verify::default_anchor`]).
    pub(crate) fn chosen(
        project: &Project,
        rev: &str,
        file: Option<&std::path::Path>,
        from_rev: Option<&str>,
    ) -> Result<Signers, CliError> {
        let journal = project.journal();
        let (mut trusted, _) = journal.own_keys();
        let repo = project.git()?;
        let bad_rev = |rev: &str| {
            let rev = sanitize::name(rev);
            move |err: GitCallError| match err {
                GitCallError::Failed { .. } => {
                    CliError::usage(format!("--signers-from {rev} names no commit"), REV_HINT)
                }
                err => CliError::from(err),
            }
        };
        let (listed, from) = if let Some(file) = file {
            let listed = allowed_signers::from_file(file).map_err(signers_error)?;
            (listed, file.display().to_string())
        } else {
            let anchor = match from_rev {
                Some(rev) => Some(verify::Anchor {
                    commit: base::resolve(repo, rev).map_err(bad_rev(rev))?,
                    what: sanitize::name(rev),
                }),
                None => verify::default_anchor(repo, rev)?,
            };
            match anchor {
                Some(anchor) => {
                    let listed =
                        allowed_signers::at_commit(repo, &anchor.commit).map_err(signers_error)?;
                    let short = anchor.commit.get(..12).unwrap_or(&anchor.commit);
                    let from = format!(
                        "{} at {short} ({})",
                        allowed_signers::ALLOWED_SIGNERS,
                        anchor.what
                    );
                    (listed, from)
                }
                None => (Vec::new(), "no commit before the ones verified".to_owned()),
            }
        };
        for signer in listed {
            trusted.add(signer.name, signer.key);
        }
        Ok(Signers { trusted, from })
    }

    /// `Trusted signers: you, alice (listed: …)`.
    pub(crate) fn line(&self) -> String {
        let names: Vec<String> = self.trusted.names().map(sanitize::name).collect();
        if names.is_empty() {
            return format!(
                "Trusted signers: none (no key of yours; none listed: {})",
                self.from
            );
        }
        format!(
            "Trusted signers: {} (listed: {})",
            names.join(", "),
            self.from
        )
    }
}

/// A signers list that cannot be used: the verifier's setup to fix.
fn signers_error(err: allowed_signers::SignersError) -> CliError {
    CliError::from(JournalError::Signers(err))
}

/// The hint for a REV or RANGE that names no commit.
const REV_HINT: &str =
    "give a commit (`HEAD`, a branch) or a range with commits in it (`main..HEAD`)";

/// `checkpoint verify [REV | RANGE] [--json]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open_git()?;
    let no_commit = || {
        CliError::usage(
            format!("{} names no commit", sanitize::name(&args.rev)),
            REV_HINT,
        )
    };
    // In a repository git reads, a `git log` that fails was given a revision it does not know.
    let commits = verify::commits(project.git()?, &args.rev).map_err(|err| match err {
        GitCallError::Failed { .. } => no_commit(),
        _ => CliError::from(err),
    })?;
    if commits.is_empty() {
        return Err(no_commit());
    }
    let journal: Journal = project.journal();
    let signers = Signers::read(&project, args)?;
    // A commit with no receipt here may have one on another machine: fetch and look again.
    let checks = fetching::read(
        &project,
        args.fetch,
        || Ok(journal.verify_commits(commits.clone(), &signers.trusted)?),
        |checks| {
            checks
                .iter()
                .any(|c| matches!(c.result, CommitResult::NoReceipt { .. }))
        },
    )?;
    let verified = checks.iter().filter(|c| c.verified).count();
    let ok = verified == checks.len();
    if args.json {
        let names: Vec<&str> = signers.trusted.names().collect();
        let signers = json!({ "names": names, "listed": signers.from });
        output::json(&json!({ "ok": ok, "signers": signers, "commits": checks }))?;
    } else {
        let mut lines = vec![signers.line()];
        lines.extend(checks.iter().map(ToString::to_string));
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
