//! The one place that writes to stdout and stderr.

use std::io::Write;

use crate::CliError;

/// Writes `text` and a newline to stdout. A closed pipe is not an error worth reporting.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// Writes a warning or hint line to stderr.
pub(crate) fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Writes an error and its hint to stderr.
pub(crate) fn error(err: &CliError) {
    note(&format!("error: {}", err.message));
    if let Some(hint) = &err.hint {
        note(&format!("hint: {hint}"));
    }
}
