//! The printer: the one place that writes to stdout and stderr, in the shapes every command
//! shares (a line, pretty JSON, a warning, an error with its hint, a line rewritten in place).
//!
//! Colour marks a headline's verdict and the `error:`, `warning:` and `hint:` prefixes, only on a
//! stream that gets colour by anstream's rules (as clap's own help): a terminal, unless
//! `NO_COLOR` is set or `CLICOLOR=0`; `CLICOLOR_FORCE` forces it. Anywhere else the text is
//! written as it is. Hook answers never pass through here.

use std::io::{BufRead, IsTerminal, Write};

use anstream::ColorChoice;
use anstream::stream::RawStream;
use anstyle::{AnsiColor, Style};
use checkpoint_core::sanitize;
use serde::Serialize;

use crate::error::CliError;

/// What a headline says, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Allowed, all well (green).
    Good,
    /// Blocked, failed (red).
    Bad,
    /// Allowed with something missing (yellow).
    Warn,
}

impl Tone {
    fn style(self) -> Style {
        let colour = match self {
            Tone::Good => AnsiColor::Green,
            Tone::Bad => AnsiColor::Red,
            Tone::Warn => AnsiColor::Yellow,
        };
        Style::new().bold().fg_color(Some(colour.into()))
    }
}

/// Whether `stream` gets colour (anstream's decision, from the terminal and the environment).
fn colours<S: RawStream>(stream: &S) -> bool {
    anstream::AutoStream::choice(stream) != ColorChoice::Never
}

/// `text` in `style` when `on`, else as it is.
fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// Writes `text` to stdout with its first line marked in `tone`'s colour (when stdout gets
/// colour).
pub(crate) fn headline(tone: Tone, text: &str) {
    // Made safe before the colour goes on: the sanitizer would take the colour off again.
    let text = sanitize::text(text);
    let (first, rest) = text
        .split_once('\n')
        .map_or((text.as_str(), None), |(f, r)| (f, Some(r)));
    let first = paint(colours(&std::io::stdout()), tone.style(), first);
    let mut stdout = std::io::stdout().lock();
    let _ = match rest {
        Some(rest) => writeln!(stdout, "{first}\n{rest}"),
        None => writeln!(stdout, "{first}"),
    };
}

/// `<prefix>: <text>` on stderr, the prefix in `tone`'s colour (when stderr gets colour).
fn prefixed(tone: Tone, prefix: &str, text: &str) {
    let prefix = paint(colours(&std::io::stderr()), tone.style(), prefix);
    let _ = writeln!(
        std::io::stderr().lock(),
        "{prefix} {}",
        sanitize::text(text)
    );
}

/// `warning: <text>` on stderr.
pub(crate) fn warning(text: &str) {
    prefixed(Tone::Warn, "warning:", text);
}

/// `hint: <text>` on stderr.
pub(crate) fn hint(text: &str) {
    prefixed(Tone::Good, "hint:", text);
}

/// Rewrites the line on stderr that the last call wrote (`old_width` characters) with `text`,
/// blanking what is left of the old one; an empty `text` erases it, leaving the cursor at the
/// start of the line. For a line that ticks on a terminal while something runs.
pub(crate) fn rewrite_line(old_width: usize, text: &str) {
    let pad = " ".repeat(old_width.saturating_sub(text.chars().count()));
    let end = if text.is_empty() { "\r" } else { "" };
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "\r{text}{pad}{end}");
    let _ = stderr.flush();
}

/// Writes `text` and a newline to stdout, with nothing a terminal acts on
/// ([`sanitize::text`]). A closed pipe is not an error worth reporting.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", sanitize::text(text));
}

/// Writes `bytes` to stdout as they are (a generated script or page).
pub(crate) fn bytes(bytes: &[u8]) {
    let _ = std::io::stdout().lock().write_all(bytes);
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
    prefixed(Tone::Bad, "error:", &err.message);
    if let Some(text) = &err.hint {
        hint(text);
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
