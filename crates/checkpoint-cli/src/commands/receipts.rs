//! `checkpoint receipts [verify]`: the task's validation receipts, and a check of their
//! signatures.

use std::process::ExitCode;

use checkpoint_core::journal::{Journal, ReceiptCheck};
use serde::Serialize;

use crate::args::ReadArgs;
use crate::error::CliError;
use crate::{output, project};

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
    /// Check every receipt's signature; exit 1 when any is invalid.
    Verify(ReadArgs),
}

/// Warns on stderr when receipts cannot be verified here; returns the trusted key.
pub(crate) fn trusted_key(journal: &Journal) -> Option<[u8; 32]> {
    let (key, warning) = journal.trusted_key();
    if let Some(warning) = warning {
        output::note(&format!("warning: {warning}"));
    }
    key
}

/// One receipt as `checkpoint receipts` shows it.
#[derive(Debug, Serialize)]
struct ReceiptView {
    id: String,
    step: Option<String>,
    command: Option<String>,
    passed: Option<bool>,
    check: ReceiptCheck,
}

/// `checkpoint receipts [verify]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let (read, verify) = match &args.action {
        Some(Action::Verify(read)) => (read, true),
        None => (&args.read, false),
    };
    let journal = project::open()?.journal();
    let task = journal.resolve(read.task.as_deref())?;
    let key = trusted_key(&journal);
    let views: Vec<ReceiptView> = task
        .receipts
        .iter()
        .map(|r| {
            let payload = r.parsed().ok();
            ReceiptView {
                id: r.id.clone(),
                step: payload
                    .as_ref()
                    .and_then(|p| p.step.as_ref())
                    .map(|s| s.name.clone()),
                command: payload.as_ref().map(|p| p.command.clone()),
                passed: payload.as_ref().map(|p| p.passed()),
                check: r.check(&task.id, key),
            }
        })
        .collect();
    let invalid = views
        .iter()
        .filter(|v| matches!(v.check, ReceiptCheck::Invalid(_)))
        .count();
    if read.json {
        output::json(&views)?;
    } else {
        let mut lines: Vec<String> = views
            .iter()
            .map(|v| {
                let outcome = match v.passed {
                    Some(true) => "passed",
                    Some(false) => "did not pass",
                    None => "?",
                };
                format!(
                    "{}  [{}]  `{}`  {outcome}  {}",
                    v.id,
                    v.step.as_deref().unwrap_or("-"),
                    v.command.as_deref().unwrap_or("?"),
                    v.check
                )
            })
            .collect();
        if verify {
            let verified = views.iter().filter(|v| v.check.is_verified()).count();
            lines.push(format!(
                "{} receipt(s): {verified} verified, {invalid} invalid",
                views.len()
            ));
        } else if views.is_empty() {
            lines.push("No receipts yet.".into());
        }
        output::out(&lines.join("\n"));
    }
    Ok(if verify && invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
