//! `checkpoint receipts [verify]`: the task's validation receipts, and a check of each against
//! the trusted keys (this user's own and the project's `.checkpoint/allowed_signers`).

use std::process::ExitCode;

use checkpoint_core::journal::{Receipt, ReceiptCheck, Task, TrustedKeys};
use checkpoint_engine::journal::Journal;
use serde::Serialize;

use crate::args::ReadArgs;
use crate::error::CliError;
use crate::{exit_codes, fetching, output, project};

/// Options of `checkpoint receipts`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Check every receipt against the trusted keys; exit 1 unless every one verifies.
    Verify(ReadArgs),
}

/// The trusted keys, warning on stderr when there are none.
pub(crate) fn trusted_keys(journal: &Journal) -> Result<TrustedKeys, CliError> {
    let (trusted, warning) = journal.trusted_keys()?;
    if let Some(warning) = warning {
        output::warning(&warning);
    }
    Ok(trusted)
}

/// One receipt as `checkpoint receipts` (and `checkpoint report`) shows it.
#[derive(Debug, Serialize)]
pub(crate) struct ReceiptView {
    pub(crate) id: String,
    pub(crate) step: Option<String>,
    pub(crate) command: Option<String>,
    pub(crate) passed: Option<bool>,
    pub(crate) check: ReceiptCheck,
}

impl ReceiptView {
    /// `receipt` of `task`, checked against `trusted`.
    pub(crate) fn of(receipt: &Receipt, task: &Task, trusted: &TrustedKeys) -> ReceiptView {
        let payload = receipt.parsed().ok();
        ReceiptView {
            id: receipt.id.clone(),
            step: payload
                .as_ref()
                .and_then(|p| p.step.as_ref())
                .map(|s| s.name.clone()),
            command: payload.as_ref().map(|p| p.command.clone()),
            passed: payload.as_ref().map(|p| p.passed()),
            check: receipt.check(task, trusted),
        }
    }

    /// `<id>  [<step>]  `<command>`  <outcome>  <check>`.
    fn line(&self) -> String {
        let outcome = match self.passed {
            Some(true) => "passed",
            Some(false) => "did not pass",
            None => "?",
        };
        format!(
            "{}  [{}]  `{}`  {outcome}  {}",
            self.id,
            self.step.as_deref().unwrap_or("-"),
            self.command.as_deref().unwrap_or("?"),
            self.check
        )
    }
}

/// `checkpoint receipts [verify]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let (read, verify) = match &args.action {
        Some(Action::Verify(read)) => (read, true),
        None => (&args.read, false),
    };
    let project = project::open()?;
    let journal = project.journal();
    let task = fetching::task(&project, read)??;
    let trusted = trusted_keys(&journal)?;
    let views: Vec<ReceiptView> = (task.receipts.iter())
        .map(|r| ReceiptView::of(r, &task, &trusted))
        .collect();
    let verified = views.iter().filter(|v| v.check.is_verified()).count();
    let failed = views.len() - verified;
    if read.json {
        output::json(&views)?;
    } else {
        let mut lines: Vec<String> = views.iter().map(ReceiptView::line).collect();
        if verify {
            lines.push(format!(
                "{} receipt(s): {verified} verified, {failed} invalid",
                views.len()
            ));
        } else if views.is_empty() {
            lines.push("No receipts yet.".into());
        }
        output::out(&lines.join("\n"));
    }
    Ok(if verify && failed > 0 {
        ExitCode::from(exit_codes::NO)
    } else {
        ExitCode::SUCCESS
    })
}
