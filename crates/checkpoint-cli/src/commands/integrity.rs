//! `checkpoint integrity accept`: the user accepts the test changes the stop gate reports as
//! weakening the tests (a test that was itself wrong, an intended removal). It is a person's
//! step: it asks on a terminal, and every stop shows the accepted findings to the user while
//! they stand (see `checkpoint_core::integrity::Acceptance`).

use std::process::ExitCode;

use checkpoint_core::render;

use crate::error::CliError;
use crate::{exit_codes, output, project};

/// Options of `checkpoint integrity`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Accept the current changes' test-integrity findings, after showing them: each stands
    /// while its file keeps its current content (a count drop, while the count is the same).
    ///
    /// Asks on a terminal; --yes accepts without asking.
    Accept {
        /// Accept without asking (for scripts).
        #[arg(long)]
        yes: bool,
    },
}

/// `checkpoint integrity accept [--yes]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let Action::Accept { yes } = args.action;
    let mut project = project::open_git()?;
    // The findings the gate would report: under the approved commands, like a stop.
    let approval = project.approval()?;
    project.policy = project.approved_policy(approval.as_ref()).0;
    let mut warnings = Vec::new();
    let integrity = project.current_integrity(&mut warnings)?;
    for warning in &warnings {
        output::warning(warning);
    }
    if integrity.findings.is_empty() {
        output::out(&match &integrity.notice {
            Some(notice) => format!("Nothing new to accept.\n{notice}"),
            None => "Nothing to accept: the changes weaken no test.".to_owned(),
        });
        return Ok(ExitCode::SUCCESS);
    }
    let mut list = String::new();
    render::finding_list(&mut list, &integrity.findings);
    output::out(&format!(
        "These changes weaken the tests:\n{}Accepted, the gate lets them pass until one of these \
         files changes again, and shows them to you at every stop.",
        list
    ));
    let refusal = "read them above, then run `checkpoint integrity accept --yes` to accept them";
    if !yes && !output::confirm("Accept them?", "accept these findings", refusal)? {
        output::out("Nothing accepted.");
        return Ok(ExitCode::from(exit_codes::NO));
    }
    let all: Vec<_> = (integrity.findings.iter())
        .chain(&integrity.accepted)
        .cloned()
        .collect();
    project.accept_integrity(&all)?;
    output::out(&format!(
        "Accepted {} finding(s) in {}.",
        integrity.findings.len(),
        project.workdir.display()
    ));
    Ok(ExitCode::SUCCESS)
}
