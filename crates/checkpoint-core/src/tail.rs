//! Turns raw test output into what reaches the agent: the names of failing tests, the pass/fail
//! counts when the output states them, and a bounded, cleaned tail. Pure functions, no I/O.
//!
//! Recognised runners: `cargo test` (libtest), cargo-nextest, pytest, python unittest (and
//! Django), `go test`, jest, vitest and node's test runner (TAP and spec reporters). Recognition
//! is line-based and deliberately narrow: a line counts only when it has the runner's exact shape,
//! so ordinary log lines do not produce false failures.

use std::collections::HashSet;

/// The most lines [`Summary::tail`] holds.
pub const MAX_TAIL_LINES: usize = 40;
/// The most bytes [`Summary::tail`] holds.
pub const MAX_TAIL_BYTES: usize = 4096;
/// The most names [`Summary::failing`] holds; compare with [`Summary::failed`] to tell whether
/// names were left out.
pub const MAX_FAILING: usize = 20;
/// A failing test name longer than this many bytes is cut and ends with `…`.
const MAX_NAME_BYTES: usize = 200;

/// What a test run's output says, reduced for a short message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Failing test names, in order of appearance, deduplicated, at most [`MAX_FAILING`].
    pub failing: Vec<String>,
    /// Tests reported passed, summed over every summary line found; `None` when no runner said.
    pub passed: Option<u32>,
    /// Tests reported failed (errors and timeouts included); `None` when no runner said.
    pub failed: Option<u32>,
    /// Tests reported skipped (libtest's `ignored`, `skip`/`skipped` elsewhere); `None` when no
    /// runner said.
    pub skipped: Option<u32>,
    /// The end of the output: escape sequences and `\r` overwrites removed, trailing blank lines
    /// and trailing whitespace trimmed, at most [`MAX_TAIL_LINES`] lines and [`MAX_TAIL_BYTES`]
    /// bytes. Lines are joined with `\n`, with no final newline.
    pub tail: String,
}

/// Summarizes raw (possibly non-UTF-8, possibly coloured) test output. Never panics.
pub fn summarize(output: &[u8]) -> Summary {
    let text = strip_escapes(&String::from_utf8_lossy(output));
    let lines: Vec<&str> = text.split('\n').map(visible).collect();
    let counts = count(&lines);
    Summary {
        failing: failing_tests(&lines),
        passed: counts.passed,
        failed: counts.failed,
        skipped: counts.skipped,
        tail: tail(&lines),
    }
}

// ---------------------------------------------------------------------------------------------
// Cleaning

/// Removes ANSI/VT escape sequences (CSI, OSC and friends, two-byte escapes) and control
/// characters other than `\n`, `\r` and `\t`. An unterminated sequence never swallows a newline.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\r' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Consumes the rest of an escape sequence whose `ESC` was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    let in_range = |lo: char, hi: char| move |c: &char| (lo..=hi).contains(c);
    match chars.peek() {
        // CSI: parameter and intermediate bytes, then one final byte.
        Some('[') => {
            chars.next();
            while chars.next_if(in_range('\u{20}', '\u{3f}')).is_some() {}
            chars.next_if(in_range('\u{40}', '\u{7e}'));
        }
        // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (`ESC \`).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            while let Some(c) = chars.next_if(|&c| c != '\n') {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        // nF (e.g. charset selection `ESC ( B`): intermediates, then one final byte.
        Some(' '..='/') => {
            while chars.next_if(in_range('\u{20}', '\u{2f}')).is_some() {}
            chars.next_if(in_range('\u{30}', '\u{7e}'));
        }
        // Two-byte escapes (`ESC 7`, `ESC M`, ...).
        Some('0'..='~') => {
            chars.next();
        }
        _ => {}
    }
}

/// What a terminal would finally show of one line: the text after the last `\r` (progress bars
/// overwrite themselves), without trailing whitespace.
fn visible(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    line.rsplit('\r').next().unwrap_or(line).trim_end()
}

// ---------------------------------------------------------------------------------------------
// Tail

fn tail(lines: &[&str]) -> String {
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    let joined = lines[end.saturating_sub(MAX_TAIL_LINES)..end].join("\n");
    if joined.len() <= MAX_TAIL_BYTES {
        return joined;
    }
    let mut cut = joined.len() - MAX_TAIL_BYTES;
    while !joined.is_char_boundary(cut) {
        cut += 1;
    }
    // Start on a whole line when the kept part holds a line break after a partial line.
    if joined.as_bytes()[cut - 1] != b'\n'
        && let Some(newline) = joined[cut..].find('\n')
    {
        cut += newline + 1;
    }
    joined[cut..].to_owned()
}

// ---------------------------------------------------------------------------------------------
// Failing test names

/// Where a failing name came from. jest reports each failure twice, as `✕ subtracts` in the
/// result tree and as `● Calculator › subtracts` in the details; when details are present they
/// are the better names and the marks are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A `✕`/`×`/`✖` result line (jest, vitest, node spec).
    Mark,
    /// A jest `● Suite › name` failure header.
    Bullet,
    /// Any other runner.
    Other,
}

type Recogniser = fn(&str) -> Option<String>;

const RECOGNISERS: [(Origin, Recogniser); 8] = [
    (Origin::Other, libtest_failure),
    (Origin::Other, nextest_failure),
    (Origin::Other, pytest_failure),
    (Origin::Other, unittest_failure),
    (Origin::Other, go_failure),
    (Origin::Other, tap_failure),
    (Origin::Bullet, jest_bullet),
    (Origin::Mark, marked_failure),
];

fn failing_tests(lines: &[&str]) -> Vec<String> {
    let hits: Vec<(Origin, String)> = lines
        .iter()
        .filter_map(|line| {
            RECOGNISERS
                .iter()
                .find_map(|&(origin, recognise)| Some((origin, recognise(line)?)))
        })
        .collect();
    let has_bullets = hits.iter().any(|(origin, _)| *origin == Origin::Bullet);
    let mut seen = HashSet::new();
    hits.into_iter()
        .filter(|(origin, _)| !(has_bullets && *origin == Origin::Mark))
        .map(|(_, name)| clip(name.trim()))
        .filter(|name| !name.is_empty() && seen.insert(name.clone()))
        .take(MAX_FAILING)
        .collect()
}

/// Cuts `name` to at most [`MAX_NAME_BYTES`] bytes plus `…`, on a char boundary.
fn clip(name: &str) -> String {
    if name.len() <= MAX_NAME_BYTES {
        return name.to_owned();
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &name[..end])
}

/// libtest: `test foo::bar ... FAILED`, `test foo - should panic ... FAILED`,
/// `test src/lib.rs - f (line 3) ... FAILED`. Only unindented lines: nextest echoes libtest's
/// output indented.
fn libtest_failure(line: &str) -> Option<String> {
    let (name, verdict) = line.strip_prefix("test ")?.rsplit_once(" ... ")?;
    if verdict != "FAILED" && !verdict.starts_with("FAILED <") {
        return None;
    }
    Some(
        name.strip_suffix(" - should panic")
            .unwrap_or(name)
            .to_owned(),
    )
}

/// nextest: `        FAIL [   0.003s] (3/4) my-crate tests::bad` (older versions have no
/// counter). Retry attempts (`TRY 1 FAIL`) are not final and are skipped; the final status is
/// repeated in the summary.
fn nextest_failure(line: &str) -> Option<String> {
    let (status, rest) = line.trim_start().split_once(" [")?;
    let final_failure = matches!(status, "FAIL" | "TIMEOUT" | "LEAK-FAIL" | "ABORT")
        || status
            .strip_prefix("SIG")
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase()));
    if !final_failure {
        return None;
    }
    let (time, rest) = rest.split_once("] ")?;
    if !is_seconds(time.trim()) {
        return None;
    }
    let rest = rest.trim_start();
    let name = match rest.strip_prefix('(').and_then(|r| r.split_once(") ")) {
        Some((counter, name)) if is_counter(counter.trim()) => name,
        _ => rest,
    };
    Some(name.to_owned())
}

/// `0.003s`, `60.002s`.
fn is_seconds(text: &str) -> bool {
    text.strip_suffix('s')
        .is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok_and(f64::is_finite))
}

/// `3/4`, `  3/120`.
fn is_counter(text: &str) -> bool {
    text.split_once('/')
        .is_some_and(|(done, total)| is_number(done.trim_start()) && is_number(total))
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// pytest: `FAILED tests/test_x.py::test_y - AssertionError`, `ERROR tests/test_db.py - ...`
/// (short summary), `tests/test_x.py::test_y FAILED   [ 50%]` (verbose).
fn pytest_failure(line: &str) -> Option<String> {
    if let Some(rest) = line
        .strip_prefix("FAILED ")
        .or_else(|| line.strip_prefix("ERROR "))
    {
        let id = rest.split(" - ").next().unwrap_or(rest);
        return is_pytest_id(id).then(|| id.to_owned());
    }
    let line = match line.rsplit_once(" [") {
        Some((head, percent)) if percent.ends_with("%]") => head.trim_end(),
        _ => line,
    };
    let id = line
        .strip_suffix(" FAILED")
        .or_else(|| line.strip_suffix(" ERROR"))?;
    (id.contains("::") && is_pytest_id(id)).then(|| id.to_owned())
}

/// A pytest node id: `path/to/test_x.py` optionally followed by `::names`.
fn is_pytest_id(id: &str) -> bool {
    let file = id.split("::").next().unwrap_or(id);
    file.len() > ".py".len() && file.ends_with(".py") && !file.contains(char::is_whitespace)
}

/// unittest: `FAIL: test_add (test_calc.CalcTest.test_add)` (3.11+),
/// `ERROR: test_add (test_calc.CalcTest)` (older), optionally followed by a subtest's params.
/// Returns the dotted id that `python -m unittest` accepts.
fn unittest_failure(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("FAIL: ")
        .or_else(|| line.strip_prefix("ERROR: "))?;
    let (method, rest) = rest.split_once(" (")?;
    let (id, after) = rest.split_once(')')?;
    let identifier = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let valid = !method.is_empty()
        && identifier(method)
        && !id.is_empty()
        && id
            .split('.')
            .all(|part| !part.is_empty() && identifier(part))
        && (after.is_empty() || after.starts_with(' '));
    if !valid {
        return None;
    }
    Some(if id.rsplit('.').next() == Some(method) {
        id.to_owned()
    } else {
        format!("{id}.{method}")
    })
}

/// go test: `--- FAIL: TestX (0.00s)`, `    --- FAIL: TestX/case (0.00s)`.
fn go_failure(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("--- FAIL: ")?;
    let name = rest.split_once(" (").map_or(rest, |(name, _)| name);
    (!name.contains(char::is_whitespace)).then(|| name.to_owned())
}

/// TAP (node's default reporter when not on a terminal): `not ok 2 - subtracts`, indented for
/// subtests. `# TODO` and `# SKIP` results are not failures.
fn tap_failure(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("not ok ")?;
    let (number, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    if !is_number(number) {
        return None;
    }
    let name = rest.strip_prefix("- ").unwrap_or(rest);
    let name = match name.split_once(" # ") {
        Some((_, directive))
            if ["TODO", "SKIP"].iter().any(|d| {
                directive
                    .get(..d.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(d))
            }) =>
        {
            return None;
        }
        Some((name, _)) => name,
        None => name,
    };
    Some(name.to_owned())
}

/// jest failure details: `  ● Calculator › subtracts`. Suite-level errors and warnings
/// (`● Test suite failed to run`, `● Validation Warning:`) are not test names.
fn jest_bullet(line: &str) -> Option<String> {
    let name = line.trim_start().strip_prefix("● ")?.trim();
    let not_a_test = name.ends_with(':') || name == "Test suite failed to run" || name == "Console";
    (!not_a_test).then(|| name.to_owned())
}

/// Result marks: jest `✕ subtracts (3 ms)`, vitest `   × Calculator > subtracts 3ms` (always
/// indented; `×` is also the multiplication sign), node spec `✖ subtracts (2.5ms)`. Headers such
/// as node's `✖ failing tests:` are skipped.
fn marked_failure(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let indented = trimmed.len() < line.len();
    let rest = ['✕', '×', '✖']
        .iter()
        .filter(|&&mark| mark != '×' || indented)
        .find_map(|&mark| trimmed.strip_prefix(mark)?.strip_prefix(' '))?;
    let name = strip_duration(rest.trim());
    (!name.ends_with(':')).then(|| name.to_owned())
}

/// Removes one trailing duration: `(3 ms)`, `(2.5ms)`, `(1.2 s)` or a bare `3ms`.
fn strip_duration(name: &str) -> &str {
    let is_duration = |text: &str| {
        let text = text.trim();
        let number = text
            .strip_suffix("ms")
            .or_else(|| text.strip_suffix('s'))
            .map(str::trim_end);
        number.is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok())
    };
    if let Some((head, last)) = name.rsplit_once(" (")
        && let Some(inner) = last.strip_suffix(')')
        && is_duration(inner)
    {
        return head.trim_end();
    }
    match name.rsplit_once(' ') {
        Some((head, last)) if last.ends_with("ms") && is_duration(last) => head.trim_end(),
        _ => name,
    }
}

// ---------------------------------------------------------------------------------------------
// Counts

/// Passed/failed/skipped counts summed over summary lines; `None` where no line said.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    passed: Option<u32>,
    failed: Option<u32>,
    skipped: Option<u32>,
}

impl Counts {
    fn add(&mut self, line: Counts) {
        let sum = |total: Option<u32>, n: Option<u32>| match (total, n) {
            (Some(t), Some(n)) => Some(t.saturating_add(n)),
            (t, n) => t.or(n),
        };
        self.passed = sum(self.passed, line.passed);
        self.failed = sum(self.failed, line.failed);
        self.skipped = sum(self.skipped, line.skipped);
    }
}

fn count(lines: &[&str]) -> Counts {
    let mut counts = Counts::default();
    // unittest states its total (`Ran 5 tests in 0.01s`) and its verdict on separate lines.
    let mut unittest_ran: Option<u32> = None;
    for line in lines {
        let trimmed = line.trim();
        if let Some(ran) = unittest_ran
            && !trimmed.is_empty()
        {
            unittest_ran = None;
            if let Some(verdict) = unittest_verdict(trimmed, ran) {
                counts.add(verdict);
                continue;
            }
        }
        if let Some(ran) = unittest_total(trimmed) {
            unittest_ran = Some(ran);
        } else if let Some(summary) = summary_line(line) {
            counts.add(summary);
        } else if let Some(node) = node_count(trimmed) {
            counts.add(node);
        }
    }
    counts
}

/// One-line summaries that state the counts (a missing category means zero).
fn summary_line(line: &str) -> Option<Counts> {
    // libtest: `test result: FAILED. 4 passed; 1 failed; 0 ignored; ...; finished in 0.01s`.
    // Unindented only: nextest echoes each test's libtest output indented.
    if let Some(rest) = line.strip_prefix("test result: ") {
        let rest = rest
            .strip_prefix("ok. ")
            .or_else(|| rest.strip_prefix("FAILED. "))?;
        return tally(
            rest.split(';')
                .filter(|part| !part.trim().starts_with("finished in")),
        );
    }
    let trimmed = line.trim();
    // nextest: `Summary [   0.208s] 4 tests run: 2 passed, 2 failed, 1 skipped`.
    if let Some(rest) = trimmed.strip_prefix("Summary [") {
        let (_, rest) = rest.split_once("] ")?;
        let (_, rest) = rest.split_once(" run: ")?;
        return tally(rest.split(','));
    }
    // jest: `Tests:       1 failed, 4 passed, 5 total`; vitest: `Tests  1 failed | 4 passed (5)`.
    if let Some(rest) = trimmed
        .strip_prefix("Tests:")
        .or_else(|| trimmed.strip_prefix("Tests "))
    {
        return tally(rest.split([',', '|']));
    }
    // pytest: `===== 1 failed, 3 passed, 1 error in 0.12s =====`, `3 passed in 61.55s (0:01:01)`.
    let inner = trimmed.trim_matches(|c| c == '=' || c == ' ');
    let inner = match inner.rsplit_once(" (") {
        Some((head, clock)) if clock.ends_with(')') && clock.contains(':') => head,
        _ => inner,
    };
    let (list, time) = inner.rsplit_once(" in ")?;
    if !is_seconds(time) {
        return None;
    }
    tally(list.split(','))
}

/// Reads `N label` parts (a trailing `(…)` is ignored); a label none of the counts holds
/// (`total`, `filtered out`, `xfailed`) is passed over. `None` unless every part parses and at
/// least one says passed or failed.
fn tally<'a>(parts: impl Iterator<Item = &'a str>) -> Option<Counts> {
    let (mut passed, mut failed, mut skipped, mut known) = (0u32, 0u32, 0u32, false);
    for part in parts {
        let part = part.trim();
        let part = match part.split_once(" (") {
            Some((head, paren)) if paren.ends_with(')') => head,
            _ => part,
        };
        let (number, label) = part.split_once(' ')?;
        let n: u32 = number.parse().ok()?;
        match label.trim() {
            "passed" => passed = passed.saturating_add(n),
            "failed" | "error" | "errors" | "timed out" => failed = failed.saturating_add(n),
            "skipped" | "ignored" => {
                skipped = skipped.saturating_add(n);
                continue;
            }
            _ => continue,
        }
        known = true;
    }
    known.then_some(Counts {
        passed: Some(passed),
        failed: Some(failed),
        skipped: Some(skipped),
    })
}

/// unittest: `Ran 5 tests in 0.003s` / `Ran 1 test in 0.000s`.
fn unittest_total(line: &str) -> Option<u32> {
    let (number, rest) = line.strip_prefix("Ran ")?.split_once(' ')?;
    let time = rest
        .strip_prefix("tests in ")
        .or_else(|| rest.strip_prefix("test in "))?;
    is_seconds(time).then_some(())?;
    number.parse().ok()
}

/// unittest's verdict after `Ran N tests`: `OK`, `OK (skipped=1)`,
/// `FAILED (failures=1, errors=1, skipped=1)`. Failed counts failures, errors and unexpected
/// successes; passed is the rest minus skipped and expected failures.
fn unittest_verdict(line: &str, ran: u32) -> Option<Counts> {
    let details = if line == "OK" {
        ""
    } else {
        line.strip_prefix("OK (")
            .or_else(|| line.strip_prefix("FAILED ("))?
            .strip_suffix(')')?
    };
    let (mut failed, mut skipped, mut expected_failures) = (0u32, 0u32, 0u32);
    for pair in details.split(", ").filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=')?;
        let n: u32 = value.parse().ok()?;
        match key {
            "failures" | "errors" | "unexpected successes" => failed = failed.saturating_add(n),
            "skipped" => skipped = skipped.saturating_add(n),
            "expected failures" => expected_failures = expected_failures.saturating_add(n),
            _ => {}
        }
    }
    let passed = (ran.saturating_sub(failed))
        .saturating_sub(skipped)
        .saturating_sub(expected_failures);
    Some(Counts {
        passed: Some(passed),
        failed: Some(failed),
        skipped: Some(skipped),
    })
}

/// node's test runner: `# pass 4`, `# fail 1`, `# skipped 2` (TAP) or `ℹ pass 4` (spec).
fn node_count(line: &str) -> Option<Counts> {
    let rest = line
        .strip_prefix("# ")
        .or_else(|| line.strip_prefix("ℹ "))?;
    let (label, number) = rest.split_once(' ')?;
    if !is_number(number) {
        return None;
    }
    let n = number.parse().ok();
    match label {
        "pass" => Some(Counts {
            passed: n,
            ..Counts::default()
        }),
        "fail" => Some(Counts {
            failed: n,
            ..Counts::default()
        }),
        "skipped" => Some(Counts {
            skipped: n,
            ..Counts::default()
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check_bounds(summary: &Summary) {
        assert!(
            summary.tail.len() <= MAX_TAIL_BYTES,
            "{} bytes",
            summary.tail.len()
        );
        assert!(summary.tail.split('\n').count() <= MAX_TAIL_LINES);
        assert!(summary.failing.len() <= MAX_FAILING);
        assert!(!summary.tail.contains(['\r', '\x1b']), "{:?}", summary.tail);
    }

    const CARGO_TEST: &str = "\
   Compiling calc v0.1.0 (/tmp/calc)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.43s
     Running unittests src/lib.rs (target/debug/deps/calc-a35a48c092d3f767)

running 5 tests
test tests::good ... ok
test tests::ign ... ignored
test tests::slow_ok ... ok
test tests::sp - should panic ... FAILED
test tests::bad ... FAILED

failures:

---- tests::sp stdout ----
note: test did not panic as expected at src/lib.rs:11:32
---- tests::bad stdout ----

thread 'tests::bad' (7969) panicked at src/lib.rs:10:24:
assertion `left == right` failed
  left: 1
 right: 2


failures:
    tests::bad
    tests::sp

test result: FAILED. 2 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.17s

error: test failed, to rerun pass `--lib`
";

    #[test]
    fn cargo_test_failure() {
        let s = summarize(CARGO_TEST.as_bytes());
        assert_eq!(s.failing, ["tests::sp", "tests::bad"]);
        assert_eq!((s.passed, s.failed), (Some(2), Some(2)));
        assert!(
            s.tail
                .ends_with("error: test failed, to rerun pass `--lib`")
        );
        assert!(s.tail.contains("assertion `left == right` failed"));
    }

    #[test]
    fn cargo_test_counts_are_summed_over_binaries_and_doctests() {
        let out = "\
running 3 tests
test a ... ok
test b ... ok
test c ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/it.rs (target/debug/deps/it-1234)

running 2 tests
test it_works ... ok
test it_also_works ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests calc

running 2 tests
test src/lib.rs - add (line 3) ... FAILED
test src/lib.rs - sub (line 9) ... ok

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.21s
";
        let s = summarize(out.as_bytes());
        assert_eq!((s.passed, s.failed), (Some(6), Some(1)));
        assert_eq!(s.failing, ["src/lib.rs - add (line 3)"]);
    }

    #[test]
    fn nextest_failure_without_double_counting_echoed_libtest_output() {
        let out = "\
────────────
 Nextest run ID 7c902afa-b9d5-4390-a435-37bb9e1e7085 with nextest profile: default
    Starting 4 tests across 1 binary (1 test skipped)
        PASS [   0.008s] (1/4) calc tests::good
        PASS [   0.022s] (2/4) calc tests::slow_ok
        FAIL [   0.010s] (3/4) calc tests::sp
  stdout ───

    running 1 test
    test tests::sp - should panic ... FAILED

    failures:
        tests::sp

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s

        FAIL [   0.206s] (4/4) calc tests::bad
────────────
     Summary [   0.208s] 4 tests run: 2 passed, 2 failed, 1 skipped
        FAIL [   0.010s] (3/4) calc tests::sp
        FAIL [   0.206s] (4/4) calc tests::bad
error: test run failed
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, ["calc tests::sp", "calc tests::bad"]);
        assert_eq!((s.passed, s.failed, s.skipped), (Some(2), Some(2), Some(1)));
    }

    #[test]
    fn older_nextest_lines_and_timeouts() {
        let out = "\
        PASS [   0.004s] nextest-tests::basic test_success
        FAIL [   0.004s] nextest-tests::basic test_failure
     TRY 1 FAIL [   0.003s] nextest-tests::basic test_flaky
     TRY 2 PASS [   0.003s] nextest-tests::basic test_flaky
     TIMEOUT [  60.002s] nextest-tests::basic test_slow
     SIGSEGV [   0.100s] nextest-tests::basic test_segfault
     Summary [  60.110s] 5 tests run: 2 passed (1 flaky), 3 failed, 0 skipped
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            [
                "nextest-tests::basic test_failure",
                "nextest-tests::basic test_slow",
                "nextest-tests::basic test_segfault"
            ]
        );
        assert_eq!((s.passed, s.failed), (Some(2), Some(3)));
    }

    #[test]
    fn pytest_short_summary() {
        let out = "\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.0.0, pluggy-1.4.0
rootdir: /tmp/calc
collected 4 items

tests/test_calc.py .F.E                                                  [100%]

==================================== ERRORS ====================================
_________________________ ERROR at setup of test_conn __________________________

    @pytest.fixture
    def db():
>       raise RuntimeError(\"no db\")
E       RuntimeError: no db

tests/test_calc.py:9: RuntimeError
=================================== FAILURES ===================================
___________________________________ test_sub ___________________________________

    def test_sub():
>       assert 1 - 1 == 2
E       assert (1 - 1) == 2

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_sub - assert (1 - 1) == 2
ERROR tests/test_calc.py::test_conn - RuntimeError: no db
==================== 1 failed, 2 passed, 1 error in 0.05s =====================
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            [
                "tests/test_calc.py::test_sub",
                "tests/test_calc.py::test_conn"
            ]
        );
        assert_eq!((s.passed, s.failed), (Some(2), Some(2)));
    }

    #[test]
    fn pytest_verbose_quiet_and_collection_errors() {
        let out = "\
tests/test_calc.py::test_add PASSED                                      [ 33%]
tests/test_calc.py::test_sub[1 - 2] FAILED                               [ 66%]
tests/test_calc.py::test_mul PASSED                                      [100%]
ERROR tests/test_broken.py - ModuleNotFoundError: No module named 'numpyy'
1 failed, 2 passed, 1 error, 2 warnings in 61.55s (0:01:01)
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            [
                "tests/test_calc.py::test_sub[1 - 2]",
                "tests/test_broken.py"
            ]
        );
        assert_eq!((s.passed, s.failed), (Some(2), Some(2)));
    }

    #[test]
    fn skipped_tests_are_counted_as_each_runner_names_them() {
        /// Passed, failed and skipped.
        type Counted = (u32, u32, u32);
        let cases: [(&[u8], Counted); 6] = [
            (
                b"test result: ok. 3 passed; 0 failed; 2 ignored; 0 measured; 1 filtered out; finished in 0.01s\n",
                (3, 0, 2),
            ),
            (b"==== 1 failed, 4 passed, 3 skipped, 1 xfailed in 0.20s ====\n", (4, 1, 3)),
            (b"Tests:       1 skipped, 2 passed, 3 total\n", (2, 0, 1)),
            (b"      Tests  2 passed | 1 skipped (3)\n", (2, 0, 1)),
            (b"# tests 4\n# pass 3\n# fail 0\n# skipped 1\n# todo 0\n", (3, 0, 1)),
            (
                b"Ran 6 tests in 0.010s\n\nOK (skipped=2, expected failures=1)\n",
                (3, 0, 2),
            ),
        ];
        for (output, (passed, failed, skipped)) in cases {
            let s = summarize(output);
            assert_eq!(
                (s.passed, s.failed, s.skipped),
                (Some(passed), Some(failed), Some(skipped)),
                "{}",
                String::from_utf8_lossy(output)
            );
        }
        // Skipped alone is no verdict: a summary needs passed or failed.
        let only_skipped = summarize(b"3 skipped in 0.01s\n");
        assert_eq!((only_skipped.passed, only_skipped.skipped), (None, None));
    }

    #[test]
    fn pytest_all_passed_means_zero_failed() {
        let s = summarize(b"........\n8 passed in 0.02s\n");
        assert_eq!((s.passed, s.failed), (Some(8), Some(0)));
        assert!(s.failing.is_empty());
    }

    #[test]
    fn unittest_failures_and_errors() {
        let out = "\
F.sE
======================================================================
ERROR: test_sub (test_calc.CalcTest.test_sub)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/calc/test_calc.py\", line 6, in test_sub
    raise ValueError(\"boom\")
ValueError: boom

======================================================================
FAIL: test_add (test_calc.CalcTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/calc/test_calc.py\", line 4, in test_add
    self.assertEqual(1 + 1, 3)
AssertionError: 2 != 3

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            ["test_calc.CalcTest.test_sub", "test_calc.CalcTest.test_add"]
        );
        assert_eq!((s.passed, s.failed), (Some(1), Some(2)));
    }

    #[test]
    fn unittest_old_format_subtests_and_ok() {
        let out = "\
FAIL: test_add (test_calc.CalcTest) [case 2]
FAIL: test_add (test_calc.CalcTest) [case 3]
ERROR: setUpClass (test_db.DbTest)
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            ["test_calc.CalcTest.test_add", "test_db.DbTest.setUpClass"]
        );
        let ok = summarize(b"....\n------\nRan 4 tests in 0.010s\n\nOK (skipped=1)\n");
        assert_eq!(
            (ok.passed, ok.failed, ok.skipped),
            (Some(3), Some(0), Some(1))
        );
        // A bare `OK` without `Ran N tests` just before it is not a verdict.
        let stray = summarize(b"Ran 4 tests in 0.010s\nsomething else\nOK\n");
        assert_eq!(
            (stray.passed, stray.failed, stray.skipped),
            (None, None, None)
        );
    }

    #[test]
    fn go_test_has_names_but_no_counts() {
        let out = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
    calc_test.go:12: got 0, want 2
--- FAIL: TestSub (0.00s)
=== RUN   TestTable
=== RUN   TestTable/negative_numbers
    calc_test.go:20: bad
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/negative_numbers (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
FAIL
";
        let s = summarize(out.as_bytes());
        assert_eq!(
            s.failing,
            ["TestSub", "TestTable", "TestTable/negative_numbers"]
        );
        assert_eq!((s.passed, s.failed), (None, None));
    }

    #[test]
    fn jest_reports_each_failure_once() {
        let out = "\
 FAIL  src/calc.test.js
  Calculator
    ✓ adds (2 ms)
    ✕ subtracts (3 ms)
  ✕ standalone

  ● Calculator › subtracts

    expect(received).toBe(expected) // Object.is equality

    Expected: 0
    Received: 2

      at Object.toBe (src/calc.test.js:5:19)

  ● standalone

    boom

Test Suites: 1 failed, 1 total
Tests:       2 failed, 1 passed, 3 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, ["Calculator › subtracts", "standalone"]);
        // Without the details (non-verbose runs print only those anyway), the marks are used.
        let tree_only = summarize(b"  Calculator\n    \xe2\x9c\x95 subtracts (3 ms)\n");
        assert_eq!(tree_only.failing, ["subtracts"]);
        assert_eq!((s.passed, s.failed), (Some(1), Some(2)));
    }

    #[test]
    fn jest_suite_errors_are_not_test_names() {
        let out = "\
 FAIL  src/broken.test.js
  ● Test suite failed to run

    SyntaxError: Unexpected token
";
        assert!(summarize(out.as_bytes()).failing.is_empty());
    }

    #[test]
    fn vitest_default_reporter() {
        let out = "\
 ❯ src/calc.test.ts (2 tests | 1 failed) 5ms
   × Calculator > subtracts 3ms
     → expected 2 to be +0 // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/calc.test.ts > Calculator > subtracts
AssertionError: expected 2 to be +0 // Object.is equality

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
   Start at  10:00:00
   Duration  300ms
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, ["Calculator > subtracts"]);
        assert_eq!((s.passed, s.failed), (Some(1), Some(1)));
    }

    #[test]
    fn node_tap_reporter() {
        let out = "\
TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 2.646199
  ...
# Subtest: subtracts
not ok 2 - subtracts
  ---
  duration_ms: 8.085243
  error: |-
    Expected values to be strictly equal:
  ...
# Subtest: suite
    # Subtest: inner fails
    not ok 1 - inner fails
      ---
      duration_ms: 34.061397
      ...
    not ok 2 - later # TODO
    1..2
not ok 3 - suite
1..3
# tests 4
# suites 1
# pass 2
# fail 2
# cancelled 0
# skipped 0
# todo 0
# duration_ms 362.936327
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, ["subtracts", "inner fails", "suite"]);
        assert_eq!((s.passed, s.failed), (Some(2), Some(2)));
    }

    #[test]
    fn node_spec_reporter() {
        let out = "\
✔ adds (2.344776ms)
✖ subtracts (2.58672ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
▶ suite
  ✖ inner fails (17.617888ms)
✖ suite (18.471792ms)
ℹ tests 4
ℹ pass 2
ℹ fail 2
ℹ duration_ms 327.808193

✖ failing tests:

test at t.test.mjs:4:1
✖ subtracts (2.58672ms)
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, ["subtracts", "inner fails", "suite"]);
        assert_eq!((s.passed, s.failed), (Some(2), Some(2)));
    }

    #[test]
    fn ordinary_log_lines_are_not_failures() {
        let out = "\
INFO test started ... ok
ERROR: could not connect to db (retrying)
ERROR something.py went wrong
FAILED to load config
FAILED: build step
warning: the test FAIL [flag] is deprecated
    FAIL [soon] crate::x
not ok this is prose
× 3 multiplier
● Validation Warning:
--- FAIL: two words (0.00s)
Tests are fun
42 passed the bar in 3s flat
";
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing, Vec::<String>::new());
        assert_eq!((s.passed, s.failed), (None, None));
    }

    #[test]
    fn failing_names_are_capped_and_clipped() {
        let mut out = String::new();
        for i in 0..50 {
            out.push_str(&format!("--- FAIL: TestCase{i} (0.00s)\n"));
        }
        let s = summarize(out.as_bytes());
        assert_eq!(s.failing.len(), MAX_FAILING);
        assert_eq!(s.failing[0], "TestCase0");
        assert_eq!(s.failing[19], "TestCase19");

        let long = summarize(format!("--- FAIL: Test{} (0.00s)\n", "é".repeat(300)).as_bytes());
        assert!(long.failing[0].len() <= MAX_NAME_BYTES + '…'.len_utf8());
        assert!(long.failing[0].ends_with('…'));
    }

    #[test]
    fn tail_strips_colour_progress_and_blank_lines() {
        let out = b"\x1b[1m\x1b[32m   Compiling\x1b[0m calc\r\n\
            Downloading 10%\rDownloading 50%\rDownloading 100%\n\
            \x1b]8;;https://example.com\x07link\x1b]8;;\x07 text   \n\
            \x1b(Bbell\x07 and back\x08space\n\
            \n   \n\n";
        let s = summarize(out);
        assert_eq!(
            s.tail,
            "   Compiling calc\nDownloading 100%\nlink text\nbell and backspace"
        );
    }

    #[test]
    fn coloured_runner_output_is_still_recognised() {
        let out = b"test tests::bad ... \x1b[31mFAILED\x1b[0m\n\
            \x1b[31m\x1b[1m--- FAIL: TestX (0.00s)\x1b[0m\n";
        assert_eq!(summarize(out).failing, ["tests::bad", "TestX"]);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let out: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let s = summarize(out.as_bytes());
        let lines: Vec<&str> = s.tail.lines().collect();
        assert_eq!(lines.len(), MAX_TAIL_LINES);
        assert_eq!(lines[0], "line 61");
        assert_eq!(lines[39], "line 100");
    }

    #[test]
    fn tail_byte_cut_starts_on_a_whole_line() {
        let out: String = (0..10)
            .map(|i| format!("{i}{}\n", "x".repeat(999)))
            .collect();
        let s = summarize(out.as_bytes());
        assert!(s.tail.len() <= MAX_TAIL_BYTES);
        assert!(s.tail.starts_with('6'), "{}", &s.tail[..10]);
        assert!(s.tail.ends_with('x'));
    }

    #[test]
    fn tail_of_one_huge_line_cuts_on_a_char_boundary() {
        // 30 000 bytes of a 3-byte char: the last 4096 bytes start inside a char.
        let s = summarize("✕".repeat(10_000).as_bytes());
        assert_eq!(s.tail.len(), MAX_TAIL_BYTES - 1);
        assert!(s.tail.chars().all(|c| c == '✕'));
    }

    #[test]
    fn empty_and_invalid_utf8_output() {
        assert_eq!(summarize(b""), Summary::default());
        assert_eq!(summarize(b"\n\n  \n").tail, "");
        let s = summarize(b"bad \xff\xfe bytes\n");
        assert_eq!(s.tail, "bad \u{fffd}\u{fffd} bytes");
    }

    /// Pieces of runner output, escapes and line breaks that random concatenation turns into
    /// near-misses of every recogniser.
    const FRAGMENTS: &[&str] = &[
        "a",
        "é",
        "✕",
        "● ",
        "× ",
        " ",
        "  ",
        "\n",
        "\r",
        "\r\n",
        "\x1b",
        "\x1b[",
        "31m",
        "\x1b]",
        "\x07",
        "[",
        "]",
        "(",
        ")",
        ":",
        ".",
        "=",
        "/",
        " - ",
        "::",
        ".py",
        "test ",
        " ... FAILED",
        "FAIL ",
        "FAIL [ 0.1s] ",
        "--- FAIL: ",
        "not ok 1 - ",
        "FAILED ",
        "ERROR: ",
        "test result: ok. ",
        " passed",
        " failed",
        "; ",
        ", ",
        " in 0.1s",
        "Ran 3 tests in 0.1s",
        "OK",
        "# pass ",
        "1",
        "99999999999",
        "Tests: ",
        "Summary [ 0.1s] 2 tests run: ",
    ];

    proptest! {
        #[test]
        fn arbitrary_bytes_never_break_the_bounds(bytes in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            check_bounds(&summarize(&bytes));
        }

        #[test]
        fn arbitrary_structured_text_never_breaks_the_bounds(
            fragments in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..3000)
        ) {
            let text = fragments.concat();
            check_bounds(&summarize(text.as_bytes()));
        }
    }
}
