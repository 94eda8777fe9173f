//! The journal's commands that read or record without moving a step: `status`, `log`,
//! `receipts [verify]`, `recover`, `save`, `validate`, `cleanup`, and the hidden `git-hook` the
//! installed git hooks run.

use std::process::ExitCode;

use checkpoint_core::host::Host;
use checkpoint_core::journal::recovery;
use checkpoint_core::journal::{Journal, JournalError, ReceiptCheck, Task, Trigger};
use serde::Serialize;

pub(crate) use crate::project::journal_error;
use crate::{CliError, output, project};

/// `--task ID` and `--json`, shared by the read commands.
#[derive(Debug, clap::Args)]
pub(crate) struct ReadArgs {
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Options of `checkpoint receipts`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReceiptsArgs {
    #[command(subcommand)]
    action: Option<ReceiptsAction>,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Debug, clap::Subcommand)]
enum ReceiptsAction {
    /// Check every receipt's signature; exit 1 when any is invalid.
    Verify(ReadArgs),
}

/// Options of `checkpoint save`.
#[derive(Debug, clap::Args)]
pub(crate) struct SaveArgs {
    /// What was reached, e.g. "halfway through the refactor".
    message: String,
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
}

/// Options of `checkpoint validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// The step being validated; must be the current one (default: the current one).
    #[arg(long)]
    step: Option<String>,
    /// The task (default: the active one).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
    /// The command: one shell string, or words that are quoted and joined.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Options of `checkpoint cleanup`.
#[derive(Debug, clap::Args)]
pub(crate) struct CleanupArgs {
    /// List what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Which git hook is running.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum GitHookName {
    /// After a commit.
    PostCommit,
    /// Before a push (git has no post-push).
    PrePush,
}

/// Options of the hidden `checkpoint git-hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct GitHookArgs {
    #[arg(value_enum)]
    hook: GitHookName,
}

/// The journal of the project in the current directory, and the host it was opened from.
pub(crate) fn open() -> Result<(Journal, Host), CliError> {
    let project = project::open()?;
    Ok((project.journal(), project.host))
}

/// Prints `value` as pretty JSON.
pub(crate) fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::new(e, "this is a bug; please report it"))?;
    output::out(&json);
    Ok(())
}

/// Warns on stderr when receipts cannot be verified here; returns the trusted key.
fn trusted_key(journal: &Journal) -> Option<[u8; 32]> {
    let (key, warning) = journal.trusted_key();
    if let Some(warning) = warning {
        output::note(&format!("warning: {warning}"));
    }
    key
}

/// `checkpoint status`.
pub(crate) fn status(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let (journal, gate) = open()?;
    let task = match &args.task {
        Some(id) => Some(journal.load(id).map_err(journal_error)?),
        None => journal
            .active_id()
            .map_err(journal_error)?
            .map(|id| journal.load(&id))
            .transpose()
            .map_err(journal_error)?,
    };
    let Some(task) = task else {
        if args.json {
            print_json(&serde_json::json!({ "task": null }))?;
        } else {
            output::out(
                "No active task. Start one with `checkpoint task start NAME --steps a,b,c`.",
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    journal.refresh_markdown(&task).map_err(journal_error)?;
    let stale = recovery::is_stale(&task, gate.now, journal.settings().stale_threshold);
    let hook_md = journal.hook_md(&task.id).map_err(journal_error)?;
    if args.json {
        #[derive(Serialize)]
        struct Status<'a> {
            task: &'a Task,
            stale: bool,
            hook_md: &'a std::path::Path,
        }
        print_json(&Status {
            task: &task,
            stale,
            hook_md: &hook_md,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut lines = vec![
        format!("Task: {} ({})", task.name, task.id),
        format!("State: {}", task.state.name()),
    ];
    if let Some((index, step)) = task.current_step.zip(task.current()) {
        lines.push(format!(
            "Step: {} ({} of {}), attempt {}",
            step.name,
            index + 1,
            task.steps.len(),
            step.attempt
        ));
    }
    let idle = gate.now.duration_since(task.updated_at).as_secs().max(0);
    lines.push(format!("Last update: {} ({idle}s ago)", task.updated_at));
    if stale {
        lines.push("STALE: the agent seems to have stopped; run `checkpoint recover`.".into());
    }
    let last = task
        .checkpoints
        .last()
        .map(|c| format!(" (last #{} {} at {})", c.id, c.trigger.name(), c.at))
        .unwrap_or_default();
    lines.push(format!("Checkpoints: {}{last}", task.checkpoints.len()));
    lines.push(format!("Receipts: {}", task.receipts.len()));
    lines.push(format!("hook.md: {}", hook_md.display()));
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint log`: the history, oldest first, checkpoints with their triggers.
pub(crate) fn log(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let (journal, _) = open()?;
    let task = match journal.resolve(args.task.as_deref()) {
        Ok(task) => task,
        // Without a task, the log is the project's session checkpoints.
        Err(JournalError::NoActiveTask) => return crate::continuity_cmds::session_log(args.json),
        Err(e) => return Err(journal_error(e)),
    };
    if args.json {
        print_json(&task.history)?;
        return Ok(ExitCode::SUCCESS);
    }
    let lines: Vec<String> = task
        .history
        .iter()
        .map(|h| {
            let kind = serde_json::to_value(h.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let step = h
                .step
                .as_deref()
                .map(|s| format!(" [{s}]"))
                .unwrap_or_default();
            let detail = h
                .detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            format!("{}  {kind}{step}{detail}  → {}", h.at, h.state.name())
        })
        .collect();
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
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
pub(crate) fn receipts(args: &ReceiptsArgs) -> Result<ExitCode, CliError> {
    let (read, verify) = match &args.action {
        Some(ReceiptsAction::Verify(read)) => (read, true),
        None => (&args.read, false),
    };
    let (journal, _) = open()?;
    let task = journal
        .resolve(read.task.as_deref())
        .map_err(journal_error)?;
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
        print_json(&views)?;
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

/// `checkpoint recover`: records a crash of a stale task (once) and prints hook.md.
pub(crate) fn recover(args: &ReadArgs) -> Result<ExitCode, CliError> {
    let (journal, gate) = open()?;
    let task = journal
        .resolve(args.task.as_deref())
        .map_err(journal_error)?;
    let recovered = journal.recover(&task.id, gate.now).map_err(journal_error)?;
    // Receipts are shown unverified rather than blocking recovery.
    trusted_key(&journal);
    journal
        .refresh_markdown(&recovered.task)
        .map_err(journal_error)?;
    if args.json {
        #[derive(Serialize)]
        struct Recovered<'a> {
            recorded: &'a Option<checkpoint_core::journal::Recovery>,
            task: &'a Task,
        }
        print_json(&Recovered {
            recorded: &recovered.recorded,
            task: &recovered.task,
        })?;
    } else {
        if recovered.recorded.is_none() {
            let why = match recovered.task.state {
                s if s.is_terminal() => format!("the task is {}", s.name()),
                checkpoint_core::journal::TaskState::Recovering => {
                    "the crash was already recorded".to_owned()
                }
                _ => "the task is not stale".to_owned(),
            };
            output::note(&format!("note: nothing to recover: {why}"));
        }
        output::out(journal.markdown(&recovered.task).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint save "message"`: a manual checkpoint.
pub(crate) fn save(args: &SaveArgs) -> Result<ExitCode, CliError> {
    if args.task.is_none() {
        return crate::continuity_cmds::save_session(&args.message);
    }
    let (journal, gate) = open()?;
    let task = journal
        .resolve(args.task.as_deref())
        .map_err(journal_error)?;
    let checkpoint = journal
        .checkpoint(
            &task.id,
            Trigger::Manual,
            Some(args.message.clone()),
            gate.now,
        )
        .map_err(journal_error)?;
    output::out(&format!(
        "Saved checkpoint #{} of {}: {} ({} file(s) snapshotted)",
        checkpoint.id,
        task.id,
        args.message,
        checkpoint.files.len()
    ));
    Ok(ExitCode::SUCCESS)
}

/// The command line as one shell string: a single word is taken as it is; several are quoted
/// and joined.
fn shell_command(words: &[String]) -> Result<String, CliError> {
    if let [only] = words {
        return Ok(only.clone());
    }
    shlex::try_join(words.iter().map(String::as_str)).map_err(|e| {
        CliError::new(
            format!("cannot quote the command: {e}"),
            "pass it as one string",
        )
    })
}

/// `checkpoint validate -- CMD…`: runs the command, records a signed receipt; exit 1 when it
/// did not pass.
pub(crate) fn validate(args: &ValidateArgs) -> Result<ExitCode, CliError> {
    let (journal, _) = open()?;
    let task = journal
        .resolve(args.task.as_deref())
        .map_err(journal_error)?;
    let command = shell_command(&args.command)?;
    let timeout = journal.policy().tests.timeout;
    let validated = journal
        .validate(&task.id, args.step.as_deref(), &command, timeout)
        .map_err(journal_error)?;
    report_validation(&validated);
    Ok(if validated.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One line about a validation (plus the output's tail when it did not pass).
pub(crate) fn report_validation(v: &checkpoint_core::journal::Validated) {
    if let Some(why) = &v.unsigned_because {
        output::note(&format!("warning: receipt not signed: {why}"));
    }
    let outcome = &v.run.outcome;
    let exit = outcome
        .exit_code
        .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    let verdict = if v.passed { "passed" } else { "FAILED" };
    let command = v.receipt.parsed().map(|p| p.command).unwrap_or_default();
    output::out(&format!(
        "Validation {verdict}: `{command}` ({exit}, {}ms) — receipt {}",
        outcome.duration_ms, v.receipt.id
    ));
    if !v.passed {
        if let Some(error) = &outcome.error {
            output::out(error);
        }
        if !outcome.tail.is_empty() {
            output::out(&outcome.tail);
        }
    }
}

/// `checkpoint cleanup [--dry-run]`.
pub(crate) fn cleanup(args: &CleanupArgs) -> Result<ExitCode, CliError> {
    let (journal, gate) = open()?;
    let removed = journal
        .cleanup(gate.now, args.dry_run)
        .map_err(journal_error)?;
    if args.json {
        print_json(&removed)?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut lines: Vec<String> = removed
        .iter()
        .map(|r| {
            format!(
                "{verb} {} ({}, ended {})",
                r.task_id,
                r.state.name(),
                r.ended_at
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push("Nothing to clean up.".into());
    }
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint git-hook post-commit|pre-push`: a checkpoint of the active task. Never fails the
/// git operation: problems are printed as warnings and the exit status is 0.
pub(crate) fn git_hook(args: &GitHookArgs) -> Result<ExitCode, CliError> {
    let trigger = match args.hook {
        GitHookName::PostCommit => Trigger::Commit,
        GitHookName::PrePush => Trigger::Push,
    };
    let result = open().and_then(|(journal, gate)| {
        journal
            .checkpoint_active(trigger, None, gate.now)
            .map_err(journal_error)
    });
    if let Err(err) = result {
        output::note(&format!("checkpoint: warning: {}", err.message));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_quoted_only_when_split_into_words() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let quoted = |w: &[&str]| shell_command(&words(w)).unwrap();
        assert_eq!(quoted(&["make test && echo ok"]), "make test && echo ok");
        assert_eq!(quoted(&["cargo", "test", "-p", "a"]), "cargo test -p a");
        let split = quoted(&["python3", "-c", "print('hi there')"]);
        assert_eq!(
            shlex::split(&split).unwrap(),
            ["python3", "-c", "print('hi there')"]
        );
    }
}
