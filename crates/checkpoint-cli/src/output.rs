//! The printer: the one place that writes to stdout and stderr, in the shapes every command
//! shares (a line, pretty JSON, a warning, an error with its hint).

use std::io::{BufRead, IsTerminal, Write};

use checkpoint_core::sanitize;
use serde::Serialize;

use crate::error::CliError;

/// Writes `text` and a newline to stdout, with nothing a terminal acts on
/// ([`sanitize::text`]). A closed pipe is not an error worth reporting.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", sanitize::text(text));
}

/// Writes `value` to stdout as pretty JSON, exactly: a program reads it (JSON escapes control
/// characters itself).
pub(crate) fn json(value: &impl Serialize) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(value).map_err(CliError::bug)?;
    let _ = writeln!(std::io::stdout().lock(), "{json}");
    Ok(())
}

/// Writes a warning or hint line to stderr, with nothing a terminal acts on.
pub(crate) fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", sanitize::text(text));
}

/// Writes an error and its hint to stderr.
pub(crate) fn error(err: &CliError) {
    note(&format!("error: {}", err.message));
    if let Some(hint) = &err.hint {
        note(&format!("hint: {hint}"));
    }
}

/// `text` on one line ([`sanitize::line()`]): its whitespace runs, newlines included, become one
/// space.
pub(crate) fn one_line(text: &str) -> String {
    sanitize::line(text, usize::MAX)
}

/// Asks `<question> [y/N]` on a terminal (the question on stderr) and says whether the answer
/// was yes. Elsewhere it refuses to guess: "not a terminal: cannot ask whether to `<whether>`", a
/// usage error with `refusal` as the hint (which says how to answer without a terminal).
pub(crate) fn confirm(question: &str, whether: &str, refusal: &str) -> Result<bool, CliError> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::usage(
            format!("not a terminal: cannot ask whether to {whether}"),
            refusal,
        ));
    }
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{question} [y/N] ");
    let _ = stderr.flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| CliError::new(format!("reading the answer: {e}"), "answer y or n"))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
