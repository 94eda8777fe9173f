//! `checkpoint validate -- CMD…`: run a command as a validation of the current step and keep a
//! signed receipt of it.

use std::process::ExitCode;

use checkpoint_engine::journal::Validated;

use crate::error::CliError;
use crate::{exit_codes, output, project};

/// Options of `checkpoint validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
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

/// `checkpoint validate -- CMD…`: runs the command, records a signed receipt; exit 1 when it
/// did not pass.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let journal = project::open()?.journal();
    let task = journal.resolve(args.task.as_deref())?;
    let command = shell_command(&args.command)?;
    let timeout = journal.policy().tests.timeout;
    let validated = journal.validate(&task.id, args.step.as_deref(), &command, timeout)?;
    report(&validated);
    Ok(if validated.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit_codes::NO)
    })
}

/// The command line as one shell string: a single word is taken as it is; several are quoted
/// and joined.
fn shell_command(words: &[String]) -> Result<String, CliError> {
    if let [only] = words {
        return Ok(only.clone());
    }
    shlex::try_join(words.iter().map(String::as_str)).map_err(|e| {
        CliError::usage(
            format!("cannot quote the command: {e}"),
            "pass it as one string",
        )
    })
}

/// One line about a validation (plus the output's tail when it did not pass); `step done`
/// reports its validation with it too.
pub(crate) fn report(v: &Validated) {
    if let Some(why) = &v.unsigned_because {
        output::warning(&format!("receipt not signed: {why}"));
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
