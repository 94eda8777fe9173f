//! Agent-neutral text for every [`Decision`]. Adapters wrap it in their wire format; the texts
//! are pinned by insta snapshots because agents read them as instructions.

use std::fmt::Write as _;

use crate::changes::{Change, ChangeKind};
use crate::decide::{AllowReason, BlockReason, Decision, Note};
use crate::integrity::{Acceptance, Finding, FindingKind};
use crate::outcome::{TestRun, TestStatus};
use crate::policy::ChangedDefinition;
use crate::sanitize::{self, ERROR_CHARS, name};
use crate::shared::OtherSession;

/// How every message of the gate begins: `checkpoint history` tells the gate's block, sent back
/// to the agent as a prompt, from the user's prompts by it.
pub const HEADLINE_PREFIX: &str = "Checkpoint — ";

/// Longest file list shown before "… and N more files".
pub const MAX_FILES_SHOWN: usize = 20;
/// Most integrity findings shown before "… and N more".
pub const MAX_FINDINGS_SHOWN: usize = 10;

/// The message for a decision: for a block, the instruction the agent gets; for an allow, a short
/// summary for the user (empty for events that are not stops).
pub fn message(decision: &Decision) -> String {
    let mut out = String::new();
    match decision {
        Decision::Block { reason, notes, .. } => {
            let awaiting = notes.contains(&Note::TestsAwaitApproval);
            block_text(&mut out, reason, awaiting);
        }
        Decision::Allow { reason, .. } => allow_text(&mut out, reason),
    }
    for note in decision.notes() {
        let _ = writeln!(out, "Note: {}", note_text(note));
    }
    // An allowed stop's text is the user's: weakened tests it let pass come with the way to
    // accept them.
    let warned = (decision.notes().iter()).any(|n| matches!(n, Note::IntegrityWarning { .. }));
    if warned && !decision.is_block() {
        out.push_str(ACCEPT_HINT);
    }
    while out.ends_with('\n') {
        out.pop();
    }
    sanitize::message(&out)
}

/// The text of a block; `awaiting`: the project's test command awaits the user's approval.
fn block_text(out: &mut String, reason: &BlockReason, awaiting: bool) {
    match reason {
        BlockReason::Integrity { findings } => {
            let of = |kind| -> Vec<Finding> {
                (findings.iter())
                    .filter(|f| f.kind == kind)
                    .cloned()
                    .collect()
            };
            let (unproven, refuted) = (
                of(FindingKind::PassesWithoutTheChange),
                of(FindingKind::OldTestsFail),
            );
            let weakened: Vec<Finding> = (findings.iter())
                .filter(|f| {
                    !matches!(
                        f.kind,
                        FindingKind::PassesWithoutTheChange | FindingKind::OldTestsFail
                    )
                })
                .cloned()
                .collect();
            if !weakened.is_empty() {
                out.push_str("Checkpoint — The tests were weakened:\n");
                finding_list(out, &weakened);
                out.push_str(
                    "Fix the code, not the tests: restore what was weakened. If a test itself \
                     was wrong, say so to the user in your final answer.\n",
                );
            }
            if !refuted.is_empty() {
                out.push_str("Checkpoint — The tests were changed to fit the code:\n");
                finding_list(out, &refuted);
                out.push_str(
                    "Fix the code so that the tests as they were pass, and keep what their \
                     assertions meant. If the behaviour change is intended, say so to the user in \
                     your final answer: the user can accept it.\n",
                );
            }
            if !unproven.is_empty() {
                out.push_str("Checkpoint — The changed tests do not show the change:\n");
                finding_list(out, &unproven);
                out.push_str(
                    "Make a changed test fail on the old code: test what the change fixes or \
                     adds. If no test can, say why in your final answer.\n",
                );
            }
        }
        BlockReason::TestsFailed { failed } => tests_failed(out, failed),
        BlockReason::Required {
            tests,
            files,
            actions,
            uncommitted,
        } => {
            let headline = if tests.is_empty() && awaiting {
                "The tests await the user's approval".to_owned()
            } else {
                tests_headline(tests)
            };
            let _ = writeln!(out, "{HEADLINE_PREFIX}{headline}");
            tests.iter().for_each(|run| selection_line(out, run));
            if !actions.is_empty() {
                out.push_str("Changed files:\n");
                file_list(out, files);
                out.push_str("Required actions:\n");
                for action in actions {
                    let _ = writeln!(out, "- {}", name(action));
                }
            }
            if !uncommitted.is_empty() {
                out.push_str(
                    "You have uncommitted code changes. Commit your work before stopping.\n",
                );
                if actions.is_empty() {
                    file_list(out, uncommitted);
                }
            }
        }
        BlockReason::TestsUnapproved { changed } => {
            out.push_str(
                "Checkpoint — The tests cannot run: what the approved test command runs changed \
                 since the user approved it:\n",
            );
            definition_list(out, changed);
            out.push_str(
                "The tests run again once the user approves the changed definition (`checkpoint \
                 trust`) or it is restored. Tell the user what you changed there and why.\n",
            );
        }
        BlockReason::Capture { interval_secs } => {
            let _ = writeln!(
                out,
                "Checkpoint — No code changes detected. Capture anything worth keeping \
                 (decisions, findings, open questions, next steps) in the project's notes, then \
                 stop again. (Asked at most once every {}.)",
                duration(interval_secs * 1000)
            );
        }
    }
}

/// One line per command whose definition changed: `- `make test`: Makefile, tox.ini`.
fn definition_list(out: &mut String, changed: &[ChangedDefinition]) {
    for definition in changed {
        let what: Vec<String> = definition.changed.iter().map(|w| name(w)).collect();
        let _ = writeln!(
            out,
            "- `{}`: {}",
            name(&definition.command),
            what.join(", ")
        );
    }
}

/// What the user is told when approved test commands' definitions changed (see
/// [`BlockReason::TestsUnapproved`]): what changed, and how to approve it. `root` is the
/// project's.
pub fn definitions_notice(root: &str, changed: &[ChangedDefinition]) -> String {
    let mut out = String::from(
        "Checkpoint: what this project's approved test commands run changed since you approved \
         them, so the stop gate does not run them and blocks stops that need them:\n",
    );
    definition_list(&mut out, changed);
    let _ = write!(
        out,
        "Review the change, then run `checkpoint trust` in {root} to approve it."
    );
    out
}

/// What the user is told while the project's approval was written by an earlier version, which
/// pinned only its commands. `root` is the project's.
pub fn legacy_approval_notice(root: &str) -> String {
    format!(
        "Checkpoint: your approval of this project predates approving its whole configuration, \
         what its test commands run and its repository; until you renew it, only its commands are \
         pinned. Run `checkpoint trust` in {root} to renew it."
    )
}

/// What the user is told when the project's approval (or an acceptance of test changes, when
/// `acceptance`) was recorded while the agent's turn ran: it applies from the next turn, since
/// an agent can run `checkpoint trust` from its shell as well as the user can. `root` is the
/// project's.
pub fn given_during_the_turn_notice(root: &str, acceptance: bool) -> String {
    if acceptance {
        format!(
            "Checkpoint: test changes were accepted while the agent's turn was running; the \
             acceptance applies from the next turn (this stop was judged without it). If you did \
             not accept them, the agent did: read its test changes in {root} (`git diff`) before \
             the next turn."
        )
    } else {
        format!(
            "Checkpoint: this project was approved while the agent's turn was running; the \
             approval applies from the next turn (this stop was judged under what was approved \
             when the turn began). If you did not approve it, the agent did: run \
             `checkpoint untrust` in {root}."
        )
    }
}

/// How a project's config file differs from the one the user approved (see
/// [`config_held_notice`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigChange {
    /// Its text changed.
    Edited,
    /// It was approved and is gone.
    Deleted,
    /// It was not there at the approval and is now.
    Added,
    /// It cannot be read (not a regular file, e.g. a link to `/dev/null`; too large; not UTF-8).
    Unreadable {
        /// Why, in one line.
        error: String,
    },
    /// It is not a valid configuration.
    Invalid {
        /// The configuration error, with its line.
        error: String,
    },
}

/// What the user is told when the project's config file `file` is not the one approved: the
/// gate keeps applying the approved configuration in full; `waiting` lists what the new file
/// would change among the approved commands (`new: tests.command: …`). `root` is the project's.
pub fn config_held_notice(
    root: &str,
    file: &str,
    change: &ConfigChange,
    waiting: &[String],
) -> String {
    let what = match change {
        ConfigChange::Edited => format!("{file} changed since you approved it"),
        ConfigChange::Deleted => format!("{file} was deleted since you approved it"),
        ConfigChange::Added => format!("{file} was added since you approved this project"),
        ConfigChange::Unreadable { error } => format!(
            "{file} cannot be read ({})",
            sanitize::line(error, ERROR_CHARS)
        ),
        ConfigChange::Invalid { error } => format!(
            "{file} is not a valid configuration ({})",
            sanitize::line(error, ERROR_CHARS)
        ),
    };
    let mut out = format!(
        "Checkpoint: {what}; the stop gate keeps applying the configuration you approved, in \
         full, until you approve the new one."
    );
    for line in waiting {
        let _ = write!(out, "\n- {}", sanitize::line(line, ERROR_CHARS));
    }
    let _ = write!(
        out,
        "\nTo approve, run `checkpoint trust` in {root} (it shows what would run)."
    );
    out
}

fn tests_failed(out: &mut String, failed: &[TestRun]) {
    let all = |status: TestStatus| failed.iter().all(|r| r.outcome.status == status);
    let headline = if all(TestStatus::TimedOut) {
        "TIMED OUT"
    } else if all(TestStatus::Error) {
        "COULD NOT RUN"
    } else {
        "FAILED"
    };
    let failed_checks = checks_named(failed.iter());
    let what = match (
        failed_checks.is_empty(),
        failed.iter().all(|r| r.check.is_some()),
    ) {
        (true, _) => "Tests".to_owned(),
        (false, true) => format!("Checks ({})", failed_checks.join(", ")),
        (false, false) => format!("Tests and checks ({})", failed_checks.join(", ")),
    };
    let _ = writeln!(out, "{HEADLINE_PREFIX}{what}: {headline}");
    for run in failed {
        let o = &run.outcome;
        let how = match o.status {
            TestStatus::TimedOut => format!("killed after {}", duration(o.duration_ms)),
            _ => match o.exit_code {
                Some(code) => format!("exit {code}, {}", duration(o.duration_ms)),
                None => duration(o.duration_ms),
            },
        };
        let cached = if o.cached {
            "; cached: nothing changed since this run"
        } else {
            ""
        };
        let check = run
            .check
            .map(|c| format!("{}: ", c.name()))
            .unwrap_or_default();
        let _ = writeln!(out, "{check}$ {}  ({how}{cached})", name(run.command_run()));
        selection_line(out, run);
        let unrunnable = o.status == TestStatus::Error;
        if let Some(error) = o.error.as_deref().filter(|_| unrunnable) {
            let _ = writeln!(out, "{}", sanitize::line(error, ERROR_CHARS));
        }
        if !o.failing.is_empty() {
            out.push_str("Failing tests:\n");
            for test in &o.failing {
                let _ = writeln!(out, "- {}", name(test));
            }
        }
        // The shell's one-line complaint is in the error already.
        let quoted = unrunnable && o.tail.lines().count() == 1;
        if !o.tail.is_empty() && !quoted {
            let _ = writeln!(
                out,
                "Output (last {}):",
                count(o.tail.lines().count(), "line")
            );
            out.push_str(&o.tail);
            if !o.tail.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    let failing = |check: bool| {
        (failed.iter())
            .any(|r| r.outcome.status == TestStatus::Failed && r.check.is_some() == check)
    };
    if failing(false) {
        out.push_str("Fix the failing tests before stopping.\n");
    }
    if failing(true) {
        out.push_str("Fix what the failing checks report before stopping.\n");
    }
    if failed
        .iter()
        .any(|r| r.outcome.status == TestStatus::TimedOut)
    {
        out.push_str(
            "The tests did not finish in time and were killed. Make them finish (or raise \
             [tests] timeout in checkpoint.toml) before stopping.\n",
        );
    }
    if all(TestStatus::Error) {
        out.push_str("The tests could not run, so nothing was checked. ");
        out.push_str(UNRUNNABLE_HINT);
    } else if failed.iter().any(|r| r.outcome.status == TestStatus::Error) {
        out.push_str("A test command could not run, so what it tests was not checked. ");
        out.push_str(UNRUNNABLE_HINT);
    }
}

/// What the agent is told to do about a test command that could not run.
const UNRUNNABLE_HINT: &str = "Make the tests runnable (fix what the error names: a misspelt or missing \
                               program, a script that is not executable, a crash), then stop \
                               again. If only the user can fix it (the approved [tests] command \
                               itself), say so in your final answer.\n";

fn allow_text(out: &mut String, reason: &AllowReason) {
    match reason {
        AllowReason::NoRepository => {
            out.push_str("Checkpoint — Not inside a git repository: nothing to check.\n");
        }
        AllowReason::RepoUnreadable { reason } => {
            let _ = writeln!(
                out,
                "Checkpoint — Cannot read the git repository ({}): stop allowed unchecked.",
                sanitize::line(reason, ERROR_CHARS)
            );
        }
        AllowReason::ConfigBroken { error } => {
            let _ = writeln!(
                out,
                "Checkpoint — The gate is off until its config is fixed (stops are allowed \
                 unchecked): {}",
                sanitize::line(error, ERROR_CHARS)
            );
        }
        AllowReason::NoChanges => out.push_str("Checkpoint — No changes since the last commit.\n"),
        AllowReason::Satisfied { tests, files } => {
            if tests.is_empty() {
                let _ = writeln!(
                    out,
                    "Checkpoint — {} {} no tests and no commit.",
                    count(files.len(), "changed file"),
                    if files.len() == 1 { "needs" } else { "need" }
                );
            } else {
                let _ = writeln!(
                    out,
                    "Checkpoint — {}. Nothing else required.",
                    tests_headline(tests)
                );
                tests.iter().for_each(|run| selection_line(out, run));
            }
        }
        AllowReason::TestsUnavailable { unavailable } => {
            out.push_str(
                "Checkpoint — The gate failed to run the tests (its own error, not the \
                 project's), so the stop was allowed unchecked:\n",
            );
            for run in unavailable {
                match run.outcome.error.as_deref() {
                    Some(error) if !error.is_empty() => {
                        let _ = writeln!(out, "- {}", sanitize::line(error, ERROR_CHARS));
                    }
                    _ => {
                        let _ = writeln!(out, "- `{}` could not be started", name(&run.command));
                    }
                }
            }
            out.push_str("The next stop runs them again.\n");
        }
        AllowReason::CapReached { blocks, pending } => {
            let _ = writeln!(
                out,
                "Checkpoint — Stop allowed {}{}. Still unresolved: {}.",
                allowed_how(*blocks),
                if *blocks > 0 {
                    " (the max_blocks cap)"
                } else {
                    ""
                },
                unresolved(pending)
            );
            if matches!(**pending, BlockReason::Integrity { .. }) {
                out.push_str(ACCEPT_HINT);
            }
        }
        AllowReason::TheirFailure { failed, others } => {
            let _ = writeln!(
                out,
                "Checkpoint — Stop allowed after 1 block: {}, reached only from another live \
                 session's uncommitted files ({}), not from any file this session changed.",
                their_failure(failed),
                sessions_list(others)
            );
        }
    }
}

/// The failure another session's files alone reach, for the user: "the tests fail (test_b)".
fn their_failure(failed: &[TestRun]) -> String {
    unresolved(&BlockReason::TestsFailed {
        failed: failed.to_vec(),
    })
}

/// What a stop the gate let through left unresolved, on one line, for the record a person reads
/// later (`checkpoint log`, the next session's context): "allowed after 3 blocks in a row: the
/// tests fail (test_add)", "allowed with `[integrity] mode = \"warn\"`: the tests were weakened
/// (…)". `None` for a stop that was allowed clean, and for a block.
pub fn let_through(decision: &Decision) -> Option<String> {
    let Decision::Allow { reason, notes } = decision else {
        return None;
    };
    let mut parts = Vec::new();
    match reason {
        AllowReason::CapReached { blocks, pending } => parts.push(format!(
            "allowed {}: {}",
            allowed_how(*blocks),
            unresolved(pending)
        )),
        AllowReason::TheirFailure { failed, others } => parts.push(format!(
            "allowed after 1 block: {}, reached only from another session's files ({})",
            their_failure(failed),
            sessions_list(others)
        )),
        _ => {}
    }
    for note in notes {
        if let Note::IntegrityWarning { findings } = note {
            parts.push(format!(
                "allowed with `[integrity] mode = \"warn\"`: the tests were weakened ({})",
                finding_summary(findings)
            ));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// How a stop with something unresolved got through: "after 3 blocks in a row", or, with
/// `stop.max_blocks = 0` (`blocks` 0), "with blocking off (`stop.max_blocks = 0`)".
fn allowed_how(blocks: u32) -> String {
    if blocks == 0 {
        "with blocking off (`stop.max_blocks = 0`)".to_owned()
    } else {
        format!("after {} in a row", count(blocks as usize, "block"))
    }
}

/// What the user (never the agent) is told along with weakened tests the gate let through.
const ACCEPT_HINT: &str = "If the test change is intended, accept it with `checkpoint integrity \
                           accept`.\n";

fn unresolved(reason: &BlockReason) -> String {
    match reason {
        BlockReason::Integrity { findings } => {
            format!("the tests were weakened ({})", finding_summary(findings))
        }
        BlockReason::TestsFailed { failed }
            if failed.iter().all(|r| r.outcome.status == TestStatus::Error) =>
        {
            let commands: Vec<String> = (failed.iter())
                .map(|r| format!("`{}`", name(r.command_run())))
                .collect();
            format!("the tests could not run ({})", commands.join(", "))
        }
        BlockReason::TestsFailed { failed } => {
            let names: Vec<String> = failed
                .iter()
                .flat_map(|r| r.outcome.failing.iter().map(|test| name(test)))
                .take(3)
                .collect();
            if names.is_empty() {
                "the tests fail".to_owned()
            } else {
                format!("the tests fail ({})", names.join(", "))
            }
        }
        BlockReason::Required {
            actions,
            uncommitted,
            ..
        } => {
            let mut parts = Vec::new();
            if !actions.is_empty() {
                parts.push(count(actions.len(), "required action"));
            }
            if !uncommitted.is_empty() {
                parts.push(format!("{} uncommitted", count(uncommitted.len(), "file")));
            }
            parts.join(" and ")
        }
        BlockReason::TestsUnapproved { .. } => {
            "the tests cannot run until the user approves what the test command runs".to_owned()
        }
        BlockReason::Capture { .. } => "notes were not captured".to_owned(),
    }
}

fn note_text(note: &Note) -> String {
    match note {
        Note::TestsUnavailable { command, error } => format!(
            "the gate failed to run the tests (`{}`): {}",
            name(command),
            sanitize::line(error, ERROR_CHARS)
        ),
        Note::NoTestCommand => "code changed but no test command is configured or detected; set \
             [tests] command in checkpoint.toml."
            .to_owned(),
        Note::TestsAwaitApproval => {
            "no tests ran: the project's test command awaits the user's approval.".to_owned()
        }
        Note::UnbornHead => {
            "no commits yet: changes are compared with an empty repository.".to_owned()
        }
        Note::DetachedHead { commit } => {
            format!("HEAD is detached at {}.", &commit[..commit.len().min(12)])
        }
        Note::HistoryMoved { base, merge_base } => {
            let short = |commit: &str| commit[..commit.len().min(12)].to_owned();
            match merge_base {
                Some(merge_base) if merge_base == base => format!(
                    "history moved during the turn (it began at {}, which shares no history \
                     with HEAD): the turn was judged against that commit.",
                    short(base)
                ),
                Some(merge_base) => format!(
                    "history moved during the turn (it began at {}, no longer an ancestor of \
                     HEAD): the turn was judged against their merge base {}.",
                    short(base),
                    short(merge_base)
                ),
                None => format!(
                    "history moved during the turn (it began at {}, which shares no history \
                     with HEAD): every tracked file was judged as changed.",
                    short(base)
                ),
            }
        }
        Note::IntegrityWarning { findings } => {
            format!("the tests were weakened ({}).", finding_summary(findings))
        }
        Note::Deferred { checks } => {
            let checks: Vec<String> = checks.iter().map(|c| name(c)).collect();
            format!(
                "not run at this stop: {}. They run when your final message says the work is \
                 complete.",
                checks.join(", ")
            )
        }
        Note::OtherSessions { others, theirs } => {
            let mut text = format!(
                "another live session has uncommitted work in this tree: {}. It is that \
                 session's work in progress: do not discard, revert, reformat or \"fix\" those \
                 files, and do not commit them as yours.",
                sessions_list(others)
            );
            if *theirs {
                text.push_str(
                    " The failing tests are reached only from that session's files, not from \
                     any file this session changed: if your own work is done, say so and stop \
                     again; the user will be told.",
                );
            }
            text
        }
        Note::NonUtf8Paths { count: n } => format!(
            "{} not valid UTF-8 and shown approximately.",
            if *n == 1 {
                "1 path is".to_owned()
            } else {
                format!("{n} paths are")
            }
        ),
    }
}

/// Other sessions and their files on one line: `claude 1a2b3c4d (`a.py`, `b.py`)`, at most
/// [`MAX_FILES_SHOWN`] files each.
fn sessions_list(others: &[OtherSession]) -> String {
    let sessions: Vec<String> = (others.iter())
        .map(|other| {
            let id: String = other.session.chars().take(8).collect();
            let mut files: Vec<String> = (other.files.iter().take(MAX_FILES_SHOWN))
                .map(|file| format!("`{}`", name(file)))
                .collect();
            if other.files.len() > MAX_FILES_SHOWN {
                files.push(format!("and {} more", other.files.len() - MAX_FILES_SHOWN));
            }
            format!(
                "{} {} ({})",
                name(&other.agent),
                name(&id),
                files.join(", ")
            )
        })
        .collect();
    sessions.join("; ")
}

/// For a run narrowed to the affected tests: what ran of what, and how to run everything.
fn selection_line(out: &mut String, run: &TestRun) {
    if let Some(because) = &run.whole_because {
        let _ = writeln!(out, "All the tests ran: {}.", sanitize::line(because, 200));
    }
    if let Some(selection) = &run.selection {
        let _ = writeln!(
            out,
            "Only the affected tests ran: {} of {} {}, for {} (`{}`) — full suite: \
             `checkpoint check --all`.",
            selection.selected,
            selection.total,
            selection.unit.name(),
            count(selection.changed_files, "changed file"),
            name(&selection.command),
        );
    }
}

/// "Tests: 12 passed (1.2s)", "Tests: passed (0.4s)" or "No tests to run", and the checks
/// that passed: "; checks passed: typecheck, lint".
fn tests_headline(runs: &[TestRun]) -> String {
    let tests: Vec<&TestRun> = runs.iter().filter(|r| r.check.is_none()).collect();
    let checks = checks_named(runs.iter());
    let mut headline = tests_only_headline(&tests);
    if !checks.is_empty() {
        let _ = write!(headline, "; checks passed: {}", checks.join(", "));
    }
    headline
}

/// The names of the checks among `runs`, in order.
fn checks_named<'a>(runs: impl Iterator<Item = &'a TestRun>) -> Vec<&'static str> {
    runs.filter_map(|r| r.check.map(|c| c.name())).collect()
}

/// [`tests_headline`] of the test runs alone.
fn tests_only_headline(tests: &[&TestRun]) -> String {
    if tests.is_empty() {
        return "No tests to run".to_owned();
    }
    let total_ms: u64 = tests.iter().map(|r| r.outcome.duration_ms).sum();
    let counts: Option<u32> = tests.iter().map(|r| r.outcome.passed).sum();
    let cached = if tests.iter().all(|r| r.outcome.cached) {
        ", cached"
    } else {
        ""
    };
    match counts {
        Some(n) => format!("Tests: {n} passed ({}{cached})", duration(total_ms)),
        None => format!("Tests: passed ({}{cached})", duration(total_ms)),
    }
}

fn file_list(out: &mut String, files: &[Change]) {
    for change in files.iter().take(MAX_FILES_SHOWN) {
        let mark = match change.kind {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Deleted => 'D',
            ChangeKind::Untracked => '?',
        };
        let _ = writeln!(out, "  {mark} {}", name(&change.path));
    }
    if files.len() > MAX_FILES_SHOWN {
        let _ = writeln!(
            out,
            "  … and {}",
            count(files.len() - MAX_FILES_SHOWN, "more file")
        );
    }
}

/// What the user is told while the findings `covered` by an `acceptance` stand (at most
/// [`MAX_FINDINGS_SHOWN`] listed).
pub fn acceptance_notice(acceptance: &Acceptance, covered: &[Finding]) -> String {
    let mut text = format!(
        "Checkpoint: test changes you accepted on {} (`checkpoint integrity accept`) stand:",
        acceptance.accepted_at.strftime("%Y-%m-%d %H:%M UTC")
    );
    text.push('\n');
    finding_list(&mut text, covered);
    text.truncate(text.trim_end().len());
    text
}

/// The note added to an edit tool's result when the edit weakened the tests it touched
/// ([`integrity::weakened_by_edit`](crate::integrity::weakened_by_edit)): what got weaker, and
/// that the stop will hold the agent to it. It never blocks.
pub fn edit_nudge(findings: &[Finding]) -> String {
    let mut text = String::from("Checkpoint: this edit weakened the tests:\n");
    finding_list(&mut text, findings);
    text.push_str(
        "The stop will block on this. Fix the code, not the tests; if a test itself was wrong, \
         say so to the user in your final answer.",
    );
    text
}

/// One indented line per finding, "  file:line: description", up to [`MAX_FINDINGS_SHOWN`], then
/// "  … and N more".
pub fn finding_list(out: &mut String, findings: &[Finding]) {
    for finding in findings.iter().take(MAX_FINDINGS_SHOWN) {
        let _ = writeln!(out, "  {}", finding_line(finding));
    }
    if findings.len() > MAX_FINDINGS_SHOWN {
        let _ = writeln!(out, "  … and {} more", findings.len() - MAX_FINDINGS_SHOWN);
    }
}

/// "file:line: description", on one line whatever the file is called; a finding about a command
/// names it.
fn finding_line(finding: &Finding) -> String {
    let file = name(&finding.file);
    if finding.kind.is_about_a_command() {
        return format!("`{file}`: {}", finding.description);
    }
    match finding.line {
        Some(line) => format!("{file}:{line}: {}", finding.description),
        None => format!("{file}: {}", finding.description),
    }
}

/// The findings on one line, up to [`MAX_FINDINGS_SHOWN`], "; "-separated.
fn finding_summary(findings: &[Finding]) -> String {
    let mut shown: Vec<String> = findings
        .iter()
        .take(MAX_FINDINGS_SHOWN)
        .map(finding_line)
        .collect();
    if findings.len() > MAX_FINDINGS_SHOWN {
        shown.push(format!("and {} more", findings.len() - MAX_FINDINGS_SHOWN));
    }
    shown.join("; ")
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Human duration: "850ms", "1.2s", "2m 05s", "30m".
pub fn duration(ms: u64) -> String {
    if ms >= 60_000 && ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests;
