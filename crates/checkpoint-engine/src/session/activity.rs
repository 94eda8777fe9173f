//! What a session did, kept in its record for `checkpoint report`: its latest stops (verdict,
//! headline, reasons, test runs), its context usage as the watch measured it, and its starts
//! (a resume, a `/clear`, a compaction). Each list keeps its latest entries only, and every text
//! in it is sanitized and cut, so that a record stays small whatever the session did.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use checkpoint_core::decide::{AllowReason, Decision};
use checkpoint_core::integrity::Finding;
use checkpoint_core::outcome::{TestRun, TestStatus};
use checkpoint_core::render;
use checkpoint_core::sanitize;

use super::SessionRecord;

/// Stops a record keeps; older ones are dropped.
pub const MAX_STOPS: usize = 20;
/// Context samples a record keeps; older ones are dropped.
pub const MAX_SAMPLES: usize = 200;
/// Session starts a record keeps; older ones are dropped.
pub const MAX_STARTS: usize = 10;
/// Lines of a stop's message kept as its reasons.
const MAX_REASON_LINES: usize = 12;
/// Characters of a kept line (a reason, a headline, a command).
const LINE_CHARS: usize = 160;
/// Test runs of one stop kept.
const MAX_TESTS: usize = 4;
/// Failing test names of one run kept.
const MAX_FAILING: usize = 3;
/// Integrity findings of one stop kept, one line each.
const MAX_FINDINGS: usize = 5;

pub use checkpoint_core::stop_verdict::StopVerdict;

/// One stop the gate judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopEntry {
    /// When.
    pub at: Timestamp,
    /// When the turn it ended (or tried to end) began, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_began: Option<Timestamp>,
    /// The verdict.
    pub verdict: StopVerdict,
    /// Why a stop was blocked (or would have been, for one allowed by the cap): the block
    /// reason's kind (`tests_failed`, `integrity`, `required`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The first line of the message, sanitized.
    pub headline: String,
    /// The message's next lines, sanitized (at most 12).
    pub reasons: Vec<String>,
    /// The test runs behind it (at most 4).
    pub tests: Vec<TestEntry>,
    /// The integrity findings, one line each, sanitized (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// The commit the change set was judged from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// One test run of a stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestEntry {
    /// The command that ran (a selection's when narrowed), sanitized.
    pub command: String,
    /// When narrowed: "2 of 14 packages".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrowed: Option<String>,
    /// How it ended.
    pub status: TestStatus,
    /// Wall time of the run, in milliseconds (of the earlier run, for a cached outcome).
    pub duration_ms: u64,
    /// Tests reported passed.
    pub passed: Option<u32>,
    /// Tests reported failed.
    pub failed: Option<u32>,
    /// Tests reported skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u32>,
    /// Reused from an earlier run on the same change set.
    pub cached: bool,
    /// The first failing tests' names, sanitized.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
}

/// The context usage at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSample {
    /// When it was measured.
    pub at: Timestamp,
    /// The share of the window in use, 0–100.
    pub percent: u8,
    /// Tokens in the context.
    pub used: u64,
    /// The window.
    pub window: u64,
}

/// A session start the gate answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartEntry {
    /// When.
    pub at: Timestamp,
    /// How it started, as the agent says (`startup`, `resume`, `clear`, `compact`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The checkpoint the session was given to go on from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<u64>,
}

impl StopEntry {
    /// The entry for `decision`, rendered as `message`, at `at`.
    pub fn new(
        decision: &Decision,
        message: &str,
        tests: &[TestRun],
        findings: &[Finding],
        at: Timestamp,
    ) -> StopEntry {
        let (verdict, reason) = match decision {
            Decision::Block { reason, .. } => (StopVerdict::Blocked, kind_of(reason)),
            Decision::Allow {
                reason: AllowReason::CapReached { pending, .. },
                ..
            } => (StopVerdict::AllowedByCap, kind_of(pending)),
            _ => (StopVerdict::Allowed, None),
        };
        let mut lines = message.lines().map(|l| sanitize::line(l, LINE_CHARS));
        let headline = lines.next().unwrap_or_default();
        let headline = match headline.strip_prefix("Checkpoint — ") {
            Some(rest) => rest.to_owned(),
            None => headline,
        };
        let mut listed = String::new();
        render::finding_list(&mut listed, findings);
        StopEntry {
            at,
            turn_began: None,
            verdict,
            reason,
            headline,
            reasons: (lines.filter(|l| !l.is_empty()))
                .take(MAX_REASON_LINES)
                .collect(),
            tests: tests.iter().take(MAX_TESTS).map(TestEntry::new).collect(),
            findings: (listed.lines())
                .take(MAX_FINDINGS)
                .map(|l| sanitize::line(l, LINE_CHARS))
                .collect(),
            base: None,
        }
    }
}

/// The serde tag of a tagged enum value (`{"kind": "tests_failed", …}`): a reason's kind, as
/// `checkpoint check --json` names it.
fn kind_of(reason: &impl Serialize) -> Option<String> {
    let value = serde_json::to_value(reason).ok()?;
    Some(value.get("kind")?.as_str()?.to_owned())
}

impl TestEntry {
    fn new(run: &TestRun) -> TestEntry {
        let outcome = &run.outcome;
        TestEntry {
            command: sanitize::line(run.command_run(), LINE_CHARS),
            narrowed: (run.selection.as_ref())
                .map(|s| format!("{} of {} {}", s.selected, s.total, s.unit.name())),
            status: outcome.status,
            duration_ms: outcome.duration_ms,
            passed: outcome.passed,
            failed: outcome.failed,
            skipped: outcome.skipped,
            cached: outcome.cached,
            failing: (outcome.failing.iter())
                .take(MAX_FAILING)
                .map(|name| sanitize::line(name, LINE_CHARS))
                .collect(),
        }
    }
}

/// Appends `entry` to `list`, dropping the oldest beyond `max`.
fn push_bounded<T>(list: &mut Vec<T>, entry: T, max: usize) {
    list.push(entry);
    let excess = list.len().saturating_sub(max);
    list.drain(..excess);
}

impl SessionRecord {
    /// Keeps `stop` (with the turn it belongs to), dropping the oldest beyond [`MAX_STOPS`].
    pub fn record_stop(&mut self, mut stop: StopEntry) {
        stop.turn_began = self.turn_began;
        push_bounded(&mut self.stops, stop, MAX_STOPS);
    }

    /// Whether `sample` says something the last kept one does not: another percentage.
    pub fn is_new_sample(&self, sample: &ContextSample) -> bool {
        self.context
            .last()
            .is_none_or(|last| last.percent != sample.percent)
    }

    /// Keeps `sample` when it is new ([`SessionRecord::is_new_sample`]), dropping the oldest
    /// beyond [`MAX_SAMPLES`].
    pub fn record_sample(&mut self, sample: ContextSample) {
        if self.is_new_sample(&sample) {
            push_bounded(&mut self.context, sample, MAX_SAMPLES);
        }
    }

    /// Keeps `start`, dropping the oldest beyond [`MAX_STARTS`].
    pub fn record_start(&mut self, start: StartEntry) {
        push_bounded(&mut self.starts, start, MAX_STARTS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_core::decide::BlockReason;
    use checkpoint_core::outcome::{Selection, SelectionUnit, TestOutcome};

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    fn failing_run() -> TestRun {
        let mut outcome = TestOutcome::not_run();
        outcome.status = TestStatus::Failed;
        outcome.failed = Some(1);
        outcome.passed = Some(4);
        outcome.skipped = Some(2);
        outcome.duration_ms = 1_250;
        outcome.failing = vec!["test_\u{1b}[2Jadd\nnext".into(); 9];
        let mut run = TestRun::new("pytest -q".into(), vec!["py".into()], outcome);
        run.selection = Some(Selection {
            command: "pytest -q tests/test_a.py".into(),
            unit: SelectionUnit::TestModules,
            selected: 1,
            total: 3,
            changed_files: 1,
        });
        run
    }

    #[test]
    fn a_stop_keeps_its_verdict_reason_and_runs_sanitized_and_bounded() {
        let runs = vec![failing_run(); 20];
        let decision = Decision::Block {
            reason: BlockReason::TestsFailed {
                failed: runs.clone(),
            },
            notes: Vec::new(),
            block: 1,
            max_blocks: 3,
        };
        let message = render::message(&decision);
        let entry = StopEntry::new(&decision, &message, &runs, &[], at(0));
        assert_eq!(entry.verdict, StopVerdict::Blocked);
        assert_eq!(entry.reason.as_deref(), Some("tests_failed"));
        assert!(!entry.headline.starts_with("Checkpoint"), "{entry:?}");
        assert!(entry.reasons.len() <= MAX_REASON_LINES);
        assert_eq!(entry.tests.len(), MAX_TESTS);
        let test = &entry.tests[0];
        assert_eq!(test.command, "pytest -q tests/test_a.py");
        assert_eq!(test.narrowed.as_deref(), Some("1 of 3 test modules"));
        assert_eq!(
            (test.passed, test.failed, test.skipped, test.duration_ms),
            (Some(4), Some(1), Some(2), 1_250)
        );
        assert_eq!(test.failing, vec!["test_[2Jadd next"; MAX_FAILING]);

        let capped = Decision::Allow {
            reason: AllowReason::CapReached {
                blocks: 3,
                pending: Box::new(BlockReason::TestsFailed { failed: runs }),
            },
            notes: Vec::new(),
        };
        let entry = StopEntry::new(&capped, &render::message(&capped), &[], &[], at(1));
        assert_eq!(entry.verdict, StopVerdict::AllowedByCap);
        assert_eq!(entry.reason.as_deref(), Some("tests_failed"));
    }

    #[test]
    fn the_lists_keep_their_latest_entries_and_samples_only_when_they_move() {
        let mut record = SessionRecord {
            turn_began: Some(at(-5)),
            ..SessionRecord::default()
        };
        let allowed = Decision::Allow {
            reason: AllowReason::NoChanges,
            notes: Vec::new(),
        };
        for n in 0..MAX_STOPS as i64 + 5 {
            let message = render::message(&allowed);
            record.record_stop(StopEntry::new(&allowed, &message, &[], &[], at(n)));
        }
        assert_eq!(record.stops.len(), MAX_STOPS);
        assert_eq!(record.stops[0].at, at(5));
        assert_eq!(record.stops[0].turn_began, Some(at(-5)));
        assert_eq!(
            record.stops[0].headline,
            "No changes since the last commit."
        );
        let sample = |secs, percent| ContextSample {
            at: at(secs),
            percent,
            used: u64::from(percent) * 2_000,
            window: 200_000,
        };
        for n in 0..MAX_SAMPLES as i64 * 2 {
            record.record_sample(sample(n, 10));
            record.record_sample(sample(n, (n % 100) as u8));
        }
        assert_eq!(record.context.len(), MAX_SAMPLES);
        assert!(
            record
                .context
                .windows(2)
                .all(|w| w[0].percent != w[1].percent)
        );
        for n in 0..MAX_STARTS as i64 + 1 {
            record.record_start(StartEntry {
                at: at(n),
                source: None,
                resumed_from: None,
            });
        }
        assert_eq!(record.starts.len(), MAX_STARTS);
        assert_eq!(record.starts[0].at, at(1));
        // A record keeps its size bounded whatever it holds, and reads back.
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(
            serde_json::from_str::<SessionRecord>(&text).unwrap(),
            record
        );
    }
}
