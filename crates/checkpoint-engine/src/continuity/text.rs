//! What agents and users read about session checkpoints. Every text here is pinned by insta
//! snapshots: agents take it as instructions.

use std::fmt::Write as _;
use std::path::Path;

use jiff::Timestamp;

use super::record::{ContextMark, ProgressEntry, SessionCheckpoint};
use checkpoint_core::sanitize::{self, line, name};

/// Files listed by name before the rest are counted.
pub const SHOWN_FILES: usize = 20;
/// The longest summary quoted in a restart context, in characters.
pub const SUMMARY_CHARS: usize = 1_500;
/// The most characters of progress lines a restart context shows; the older entries beyond are
/// counted, with where to read them.
pub const PROGRESS_CHARS: usize = 4_000;
/// The longest one-line summary, in characters.
pub const LINE_CHARS: usize = 160;
/// The longest progress entry shown, in characters.
pub const ENTRY_CHARS: usize = 500;
/// The longest progress entry kept, in characters: a restart context shows less, but a person
/// reading the log may want more.
pub const KEPT_ENTRY_CHARS: usize = 16 * 1024;

/// How close the context window is to full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// At or above `[context] warn`.
    Warn,
    /// At or above `[context] critical`.
    Critical,
}

/// The notice an agent gets with its next tool call once a context checkpoint was saved.
pub fn context_notice(mark: &ContextMark, level: Level) -> String {
    let head = format!(
        "Checkpoint saved (context {} %) — {} of {} tokens in use.",
        mark.percent,
        thousands(mark.used),
        thousands(mark.window)
    );
    match level {
        Level::Warn => format!(
            "{head} Your work so far is recorded and a new session will resume from it. Keep \
             going; log each finished milestone with `checkpoint progress \"<what is done>\"`."
        ),
        Level::Critical => format!(
            "⚠️ {head} The context window is almost full: wrap up now. Finish the change in \
             hand, commit it, log what is done with `checkpoint progress \"<what is done>\"` and \
             end your turn; the next session resumes from this checkpoint."
        ),
    }
}

/// Why a session starts with a restart context: the agent's `SessionStart` source.
pub fn reset_reason(source: Option<&str>) -> String {
    match source {
        Some("startup") | None => "a new session started".to_owned(),
        Some("resume") => "the session was resumed".to_owned(),
        Some("clear") => "the context was cleared (/clear)".to_owned(),
        Some("compact") => "the context was compacted".to_owned(),
        Some(other) => format!("the session restarted ({other})"),
    }
}

/// Everything a restart context says.
#[derive(Debug, Clone, Copy)]
pub struct Resume<'a> {
    /// The checkpoint resumed from.
    pub checkpoint: &'a SessionCheckpoint,
    /// Why the session restarted (see [`reset_reason`]).
    pub why: &'a str,
    /// Which restart of this thread of work without progress in between, from 1.
    pub attempt: u32,
    /// `[resume] max_restarts`.
    pub max_restarts: u32,
    /// The thread's progress entries, oldest first.
    pub progress: &'a [ProgressEntry],
    /// Where all of them can be read (the continuity log's file), for those left out.
    pub progress_file: &'a str,
    /// Now, for "saved 2 h ago".
    pub now: Timestamp,
}

/// The context a new session gets: "Resumed from checkpoint: …" and the restart context.
pub fn resume_context(r: &Resume<'_>) -> String {
    let c = r.checkpoint;
    let mut out = format!(
        "Resumed from checkpoint: {} (saved {})\n\n",
        summary_line(c.summary.as_deref()),
        ago(c.at, r.now)
    );
    let _ = writeln!(out, "⚠️ SESSION RESET: {}.", r.why);
    let _ = writeln!(
        out,
        "Last checkpoint: #{} ({}) at {}{}.",
        c.id,
        trigger_text(c),
        c.at.strftime("%Y-%m-%d %H:%M UTC"),
        c.context
            .map(|m| format!(", context {} %", m.percent))
            .unwrap_or_default()
    );
    if let Some(unresolved) = &c.unresolved {
        let _ = writeln!(
            out,
            "⚠️ The last stop was {}. Resolve that first, or tell the user why not.",
            line(unresolved, SUMMARY_CHARS)
        );
    }
    if let Some(task) = &c.task {
        let _ = write!(out, "Task: {} ({})", name(&task.name), name(&task.id));
        if let Some(step) = &task.step {
            let _ = write!(out, ", step {}", name(step));
        }
        out.push_str(".\n");
        if let Some(path) = &task.hook_md {
            let _ = writeln!(out, "Task journal: {} (read it first).", name(path));
        }
    }
    if r.attempt > r.max_restarts {
        let _ = writeln!(
            out,
            "Restart attempt {} — more than the limit of {} without progress in between. The \
             work may be going in circles: tell the user and ask a human to look before going on.",
            r.attempt, r.max_restarts
        );
    } else {
        let _ = writeln!(out, "Restart attempt {} of {}.", r.attempt, r.max_restarts);
    }

    out.push_str("\nProgress logged before reset:\n");
    if r.progress.is_empty() {
        out.push_str("(none logged)\n");
    }
    let lines: Vec<String> = (r.progress.iter())
        .map(|entry| {
            let text = line(&entry.text, ENTRY_CHARS);
            format!("✓ {text} ({})\n", entry.at.strftime("%H:%M UTC"))
        })
        .collect();
    let mut budget = PROGRESS_CHARS;
    let shown = (lines.iter().rev())
        .take_while(|line| match budget.checked_sub(line.chars().count()) {
            Some(left) => {
                budget = left;
                true
            }
            None => false,
        })
        .count();
    let earlier = lines.len() - shown;
    if earlier > 0 {
        let _ = writeln!(
            out,
            "… and {earlier} earlier {}, done too (all in {}).",
            plural(earlier, "milestone"),
            name(r.progress_file)
        );
    }
    for line in &lines[earlier..] {
        out.push_str(line);
    }

    out.push_str("\nFiles modified (do not recreate):\n");
    if c.files.is_empty() {
        out.push_str("(none)\n");
    }
    for file in c.files.iter().take(SHOWN_FILES) {
        let _ = writeln!(out, "- {}", name(&file.path));
    }
    let more = c.files.len().saturating_sub(SHOWN_FILES) + c.more_files;
    if more > 0 {
        let _ = writeln!(out, "… and {more} more {}", plural(more, "file"));
    }

    if let Some(summary) = c.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        // Quoted line by line: none of its lines can pass for one of ours.
        out.push_str("\nYour last message before the reset:\n");
        for line in trimmed(summary.trim(), SUMMARY_CHARS).lines() {
            let _ = writeln!(out, "> {line}");
        }
    }

    out.push_str(
        "\nRules:\n\
         1. Continue where you stopped; do not start over.\n\
         2. Do not redo completed work: the progress above is done.\n\
         3. Review the modified files before changing them; they hold your work.\n\
         4. Log each finished milestone with `checkpoint progress \"<what is done>\"`.\n\
         5. Should the files be worse off than at a checkpoint, `checkpoint restore --dry-run` \
         shows what `checkpoint restore [N]` would put back (`--undo` reverses it).",
    );
    sanitize::message(&out)
}

/// The one-line offer `[resume] auto = "prompt"` injects instead of the full context.
pub fn resume_offer(checkpoint: &SessionCheckpoint, now: Timestamp) -> String {
    format!(
        "A checkpoint from {} is available: {} ({} {}). To go on from it, run `checkpoint \
         resume` and follow what it prints; otherwise ignore this.",
        ago(checkpoint.at, now),
        summary_line(checkpoint.summary.as_deref()),
        checkpoint.files.len() + checkpoint.more_files,
        plural(
            checkpoint.files.len() + checkpoint.more_files,
            "modified file"
        )
    )
}

/// How a checkpoint this user's key did not sign is marked (see [`super::signed`]).
pub const UNVERIFIED: &str = "unverified: not signed by your key";

/// One line per checkpoint for `checkpoint log`: id, trigger, age, session, files, context,
/// summary. An unverified checkpoint (`verified` false) is marked so, and its text — what was
/// left unresolved, its summary — is not shown: whoever pushed the ref wrote it.
pub fn checkpoint_line(c: &SessionCheckpoint, verified: bool, now: Timestamp) -> String {
    let files = c.files.len() + c.more_files;
    let mut text = format!(
        "#{} {} {} ({} {}) {} {}",
        c.id,
        c.trigger.name(),
        ago(c.at, now),
        c.session.agent.name(),
        name(short(&c.session.id)),
        files,
        plural(files, "file")
    );
    if let Some(mark) = c.context {
        let _ = write!(text, ", context {} %", mark.percent);
    }
    if !verified {
        let _ = write!(text, " ⚠ {UNVERIFIED} (its text is not shown)");
        return text;
    }
    if let Some(unresolved) = &c.unresolved {
        let _ = write!(text, " ⚠ {}", line(unresolved, 160));
    }
    if let Some(summary) = c.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        let _ = write!(text, " — {}", line(summary, 80));
    }
    text
}

/// What `checkpoint resume` says of the checkpoints it did not resume from because this user's
/// key did not sign them (`unverified`, newest first; see [`super::signed`]): the newest by
/// number, trigger, age and session — never its text, which whoever pushed the ref wrote — and
/// how many more. `None` when there are none.
pub fn unverified_note(unverified: &[SessionCheckpoint], now: Timestamp) -> Option<String> {
    let newest = unverified.first()?;
    let mut out = format!(
        "⚠ Checkpoint #{} ({}, saved {}, session {} {}) is {UNVERIFIED}, so it was not resumed from \
         and its text is not shown (it came from elsewhere, e.g. a fetched ref).",
        newest.id,
        newest.trigger.name(),
        ago(newest.at, now),
        newest.session.agent.name(),
        name(short(&newest.session.id)),
    );
    let more = unverified.len() - 1;
    if more > 0 {
        let _ = write!(
            out,
            " {more} older {} unverified too (`checkpoint log` lists them).",
            if more == 1 { "one is" } else { "ones are" }
        );
    }
    Some(out)
}

/// The one line that tells the user a continuity log was set aside because it did not parse
/// (see [`super::Continuity::untold_corrupt_log`]).
pub fn corrupt_log_notice(aside: &Path) -> String {
    format!(
        "The continuity log did not parse (damaged, or crafted and fetched from a remote); it was \
         set aside as {} and a new log was started.",
        name(&aside.display().to_string())
    )
}

/// "just now", "12 min ago", "2 h ago", "3 d ago".
pub fn ago(then: Timestamp, now: Timestamp) -> String {
    let secs = now.as_second().saturating_sub(then.as_second()).max(0);
    match secs {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..86_400 => format!("{} h ago", secs / 3_600),
        _ => format!("{} d ago", secs / 86_400),
    }
}

/// The summary as one short line, or a placeholder.
fn summary_line(summary: Option<&str>) -> String {
    match summary
        .map(|s| line(s, LINE_CHARS))
        .filter(|s| !s.is_empty())
    {
        Some(summary) => summary,
        None => "(no summary recorded)".to_owned(),
    }
}

fn trigger_text(c: &SessionCheckpoint) -> String {
    match &c.detail {
        Some(detail) => format!("{}: {}", c.trigger.name(), line(detail, LINE_CHARS)),
        None => c.trigger.name().to_owned(),
    }
}

/// `text` cut to `max` characters, with "…" when cut.
fn trimmed(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        what.to_owned()
    } else {
        format!("{what}s")
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The summary of `checkpoint diff`: "Work changed since last checkpoint: 3 files, +127 −4 lines,
/// last checkpoint 45 min ago", or that nothing changed.
pub fn diff_line(d: &super::diff::WorkDiff, now: Timestamp) -> String {
    let when = ago(d.at, now);
    if !d.changed() {
        return format!("No work changed since the last checkpoint ({when}).");
    }
    let (added, removed) = (d.added(), d.removed());
    let lines = if added + removed == 1 {
        "line"
    } else {
        "lines"
    };
    format!(
        "Work changed since last checkpoint: {} {}, +{added} −{removed} {lines}, last checkpoint \
         {when}",
        d.files.len(),
        plural(d.files.len(), "file")
    )
}

/// One file of `checkpoint diff`: "  src/db.rs  +120 −3"; a binary file says so, and a change
/// whose lines were not counted (a file too big to keep, or an empty file) says that.
pub fn file_delta_line(f: &super::diff::FileDelta) -> String {
    format!("  {}  {}", name(&f.path), delta_text(f))
}

/// How a file's lines changed: "+120 −3", "binary", or that no lines were counted.
fn delta_text(f: &super::diff::FileDelta) -> String {
    if f.binary {
        "binary".to_owned()
    } else if f.added == 0 && f.removed == 0 {
        "changed, no lines counted".to_owned()
    } else {
        format!("+{} −{}", f.added, f.removed)
    }
}

/// What `checkpoint restore` did (`safety` is the checkpoint saved before it changed files) or,
/// with `dry_run`, would do: a headline, then one line per file — "  restore src/db.rs  +3 −1",
/// "  recreate", "  delete" — followed, with `dry_run`, by its diff from now to the checkpoint,
/// and a line per directory left alone.
pub fn restore_report(
    plan: &super::restore::RestorePlan,
    safety: Option<u64>,
    dry_run: bool,
    now: Timestamp,
) -> String {
    use super::restore::RestoreAction;
    let at = format!(
        "checkpoint #{} (saved {})",
        plan.checkpoint,
        ago(plan.at, now)
    );
    let count = format!("{} {}", plan.files.len(), plural(plan.files.len(), "file"));
    let mut out = match (plan.files.is_empty(), dry_run, safety) {
        (true, _, _) => format!("Nothing to restore: the files already match {at}."),
        (false, true, _) => {
            format!("Restoring {at} would change {count} (--dry-run: nothing was changed):")
        }
        (false, false, Some(safety)) => format!(
            "Restored {count} to {at}. The state before is checkpoint #{safety}: `checkpoint \
             restore --undo` returns to it."
        ),
        (false, false, None) => format!("Restored {count} to {at}."),
    };
    for file in &plan.files {
        let action = match file.action {
            RestoreAction::Restore => "restore",
            RestoreAction::Recreate => "recreate",
            RestoreAction::Delete => "delete",
        };
        let _ = write!(
            out,
            "\n  {action} {}  {}",
            name(&file.delta.path),
            delta_text(&file.delta)
        );
        if let (true, Some(patch)) = (dry_run, &file.patch) {
            let _ = write!(out, "\n{patch}");
        }
    }
    for path in &plan.skipped {
        let _ = write!(
            out,
            "\n  left alone: {} (a directory now; submodules are not restored)",
            name(path)
        );
    }
    sanitize::message(&out)
}
