//! The summary `checkpoint ci` prints: Markdown for a job summary or a pull-request comment.
//! Everything from the repository (file names, commands, test names, output) is text here: in
//! code spans and fences long enough for the backticks it holds, table cells with their pipes
//! escaped, control characters gone.

use std::fmt::Write as _;

use checkpoint_core::decide::Decision;
use checkpoint_core::outcome::TestStatus;
use checkpoint_core::{render, sanitize};

use super::verdict::{self, Verdict};

/// The first line of every summary: it finds the comment to update on the next run.
pub(crate) const MARKER: &str = "<!-- checkpoint-ci -->";

/// The most characters of one name or command shown.
const NAME_CHARS: usize = 200;
/// The most findings or test runs listed.
const MAX_ROWS: usize = 50;

/// The summary of `decision` on the change set `base`..`head`.
pub(crate) fn summary(
    verdict: Verdict,
    decision: &Decision,
    message: &str,
    base: &str,
    head: &str,
) -> String {
    let mut out = format!("{MARKER}\n## checkpoint: {}\n\n", verdict.headline());
    let _ = writeln!(
        out,
        "Judged `{}..{}` (the merge base with the base branch → the head), with the tests and \
         the configuration of `{}`.",
        short(base),
        short(head),
        short(base)
    );
    let (findings, blocking) = verdict::findings(decision);
    if !findings.is_empty() {
        let _ = write!(
            out,
            "\n### The tests were weakened ({}{})\n\n| file | line | what |\n|---|---:|---|\n",
            findings.len(),
            if blocking { "" } else { ", a warning" }
        );
        for finding in findings.iter().take(MAX_ROWS) {
            let line = finding.line.map_or_else(String::new, |l| l.to_string());
            let _ = writeln!(
                out,
                "| {} | {line} | {} |",
                code(&finding.file),
                cell(&finding.description)
            );
        }
    }
    let unapproved = verdict::unapproved(decision);
    if !unapproved.is_empty() {
        out.push_str(
            "\n### Changed behind a test command\n\nWhat these commands run changed since the \
             base, so they did not run; a person reviews the change and merges it first:\n\n",
        );
        for changed in unapproved.iter().take(MAX_ROWS) {
            let what: Vec<String> = changed.changed.iter().map(|c| code(c)).collect();
            let _ = writeln!(out, "- {}: {}", code(&changed.command), what.join(", "));
        }
    }
    let runs = verdict::test_runs(decision);
    if !runs.is_empty() {
        out.push_str(
            "\n### Tests\n\n| command | run | outcome | passed | failed | skipped | time |\n\
             |---|---|---|---:|---:|---:|---:|\n",
        );
        for run in runs.iter().take(MAX_ROWS) {
            let outcome = &run.outcome;
            let scope = match &run.selection {
                Some(s) => format!("{} of {} {}", s.selected, s.total, s.unit.name()),
                None => "all".to_owned(),
            };
            let count = |n: Option<u32>| n.map_or_else(String::new, |n| n.to_string());
            let _ = writeln!(
                out,
                "| {} | {scope} | {} | {} | {} | {} | {} |",
                code(run.command_run()),
                status(outcome.status),
                count(outcome.passed),
                count(outcome.failed),
                count(outcome.skipped),
                render::duration(outcome.duration_ms)
            );
        }
    }
    let actions = verdict::actions(decision);
    if !actions.is_empty() {
        out.push_str("\n### Reminders from the rules\n\n");
        for action in actions.iter().take(MAX_ROWS) {
            let _ = writeln!(out, "- {}", cell(action));
        }
    }
    let fence = fence_for(message);
    let _ = write!(
        out,
        "\n<details><summary>What an agent would be told</summary>\n\n{fence}text\n{}\n{fence}\n\n\
         </details>\n",
        sanitize::text(message)
    );
    out
}

/// A commit's short form.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// `text` as a code span: one line, bounded, delimited by more backticks than it holds.
fn code(text: &str) -> String {
    let text = sanitize::line(text, NAME_CHARS).replace('|', "\\|");
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    // A span that begins or ends with a backtick needs a space inside its delimiters.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `text` as the text of a table cell or a list item: one line, bounded, its Markdown and HTML
/// made inert.
fn cell(text: &str) -> String {
    let mut out = String::new();
    for c in sanitize::line(text, NAME_CHARS * 2).chars() {
        if matches!(
            c,
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '!' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    "`".repeat((longest_run(text, '`') + 1).max(3))
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

fn status(status: TestStatus) -> &'static str {
    match status {
        TestStatus::Passed => "passed",
        TestStatus::Failed => "**failed**",
        TestStatus::TimedOut => "**timed out**",
        TestStatus::Error => "**could not run**",
        TestStatus::Internal => "not run (the gate's own error)",
        TestStatus::NotRun => "not run",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_text_stays_text() {
        insta::assert_snapshot!(code("tests/``odd`` name|x.py"), @r"```tests/``odd`` name\|x.py```");
        insta::assert_snapshot!(code("`edge`"), @"`` `edge` ``");
        insta::assert_snapshot!(
            cell("<img src=x onerror=alert(1)> **bold** [link](http://x) | \u{1b}[2J"),
            @r"\<img src=x onerror=alert(1)\> \*\*bold\*\* \[link\](http://x) \| \[2J"
        );
        assert_eq!(fence_for("a ```` b"), "`````");
        assert_eq!(fence_for("plain"), "```");
    }
}
