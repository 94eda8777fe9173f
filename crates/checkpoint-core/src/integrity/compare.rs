//! The findings of one changed test file (or Rust test module): new markers, removed tests,
//! removed assertions, changed expected values and new Go build constraints.

use std::collections::BTreeMap;

use super::expected::{Sources, binding, changed_operand, compares, is_literal};
use super::finding::{Finding, FindingKind, MAX_VALUE, shown};
use super::lang::{Lang, Source, TestFn, has_token, test_fns};

/// At most this many changed check lines per side are paired up for expected values.
const MAX_PAIRED: usize = 100;

/// Numbered lines of a text.
type Lines<'a> = Vec<(u32, &'a str)>;

/// One test file's (or test module's) two sides, and what else the change set holds for it.
pub(super) struct Subject<'a> {
    pub(super) lang: Lang,
    /// The file the findings name.
    pub(super) file: &'a str,
    /// The text at `HEAD`.
    pub(super) old: Source<'a>,
    /// The text in the worktree.
    pub(super) new: Source<'a>,
    /// The tests in the worktree's test files (this one's too, when its new side is recorded).
    pub(super) tests_now: &'a TestsNow<'a>,
    /// The change set's changed sources: only when one the file exercises changed (or
    /// `code_changed`) is a changed expected value a finding.
    pub(super) sources: &'a Sources<'a>,
    /// Whether the code the file tests changed in the file itself (a Rust test module's).
    pub(super) code_changed: bool,
}

impl<'a> Subject<'a> {
    /// The findings, in this order: new markers, removed tests, removed assertions, changed
    /// expected values, new build constraints.
    pub(super) fn findings(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        // Each side's code lines, once: every check below filters them.
        let code = (
            self.old.code_lines(self.lang).collect::<Vec<_>>(),
            self.new.code_lines(self.lang).collect::<Vec<_>>(),
        );
        self.markers(&code, &mut findings);
        let before = test_fns(self.lang, self.old);
        let computed;
        let after = match self.tests_now.of(self.file, self.lang) {
            Some(after) => after,
            None => {
                computed = test_fns(self.lang, self.new);
                &computed
            }
        };
        let removed = removed_tests(&before, after).into_iter();
        for removed in removed.filter(|test| !self.tests_now.holds(self.lang, test)) {
            findings.push(self.finding(
                FindingKind::TestRemoved,
                Some(removed.line),
                format!("test `{}` removed", shown(removed.name, MAX_VALUE)),
            ));
        }
        self.assertions(&code, &mut findings);
        self.expected_values(&code, &mut findings);
        if self.lang == Lang::Go {
            self.build_constraints(&mut findings);
        }
        findings
    }

    fn finding(&self, kind: FindingKind, line: Option<u32>, description: String) -> Finding {
        Finding::new(kind, self.file, line, description)
    }

    /// The code lines of both sides that `keep` selects.
    fn both(code: &(Lines<'a>, Lines<'a>), keep: impl Fn(&str) -> bool) -> (Lines<'a>, Lines<'a>) {
        let select = |lines: &Lines<'a>| {
            lines
                .iter()
                .filter(|(_, line)| keep(line))
                .copied()
                .collect::<Vec<_>>()
        };
        (select(&code.0), select(&code.1))
    }

    fn markers(&self, code: &(Lines<'a>, Lines<'a>), findings: &mut Vec<Finding>) {
        for marker in self.lang.markers() {
            // Most files have no marker at all: one search of the whole text says so.
            if !self.new.text.contains(marker) {
                continue;
            }
            let (before, after) = Self::both(code, |line| has_token(line, marker));
            if after.len() > before.len() {
                let line = first_unmatched(&after, &before);
                let marker = match *marker {
                    "#[ignore" => "#[ignore]",
                    marker => marker.trim_end_matches('('),
                };
                findings.push(self.finding(
                    FindingKind::MarkerAdded,
                    line,
                    format!("new skip/focus marker `{marker}`"),
                ));
            }
        }
    }

    fn assertions(&self, code: &(Lines<'a>, Lines<'a>), findings: &mut Vec<Finding>) {
        let (before, after) = Self::both(code, |line| self.lang.is_assertion(line));
        if after.len() < before.len() {
            findings.push(self.finding(
                FindingKind::AssertionRemoved,
                first_unmatched(&before, &after),
                format!(
                    "assertions dropped from {} to {}",
                    before.len(),
                    after.len()
                ),
            ));
        }
    }

    /// Check lines that went away paired with new ones of the same shape whose one changed
    /// operand is a literal, and changed bindings the checks compare.
    fn expected_values(&self, code: &(Lines<'a>, Lines<'a>), findings: &mut Vec<Finding>) {
        let (before, after) = Self::both(code, |line| self.lang.is_check(line));
        let removed = unmatched(&before, &after);
        let mut added = unmatched(&after, &before);
        let exercised = || self.code_changed || self.sources.exercised_by(self.file, self.new.text);
        let bound = |lines: Vec<(u32, &'a str)>| {
            let bindings = lines
                .into_iter()
                .filter(|(_, line)| binding(line).is_some());
            bindings.collect::<Vec<_>>()
        };
        let old_bound = bound(unmatched(&code.0, &code.1));
        let new_bound = bound(unmatched(&code.1, &code.0));
        let bindings_changed = !old_bound.is_empty() && !new_bound.is_empty();
        if !((!removed.is_empty() && !added.is_empty()) || bindings_changed) || !exercised() {
            return;
        }
        if bindings_changed {
            self.expected_bindings(&old_bound, &new_bound, &after, findings);
        }
        added.truncate(MAX_PAIRED);
        for (_, old) in removed.into_iter().take(MAX_PAIRED) {
            let paired = added.iter().enumerate().find_map(|(at, (line, new))| {
                let (from, to) = changed_operand(old, new)?;
                (is_literal(from) || is_literal(to)).then_some((at, *line, from, to))
            });
            if let Some((at, line, from, to)) = paired {
                added.remove(at);
                findings.push(self.finding(
                    FindingKind::ExpectedValueChanged,
                    Some(line),
                    format!(
                        "expected value changed from `{}` to `{}`",
                        shown(from, MAX_VALUE),
                        shown(to, MAX_VALUE)
                    ),
                ));
            }
        }
    }

    /// Bindings that went away paired with new ones of the same name whose value changed, a
    /// literal on one side at least, where a check line of the new text compares the name.
    fn expected_bindings(
        &self,
        removed: &Lines<'a>,
        added: &Lines<'a>,
        checks: &Lines<'a>,
        findings: &mut Vec<Finding>,
    ) {
        let new: Vec<_> = (added.iter().take(MAX_PAIRED))
            .filter_map(|&(line, text)| Some((line, binding(text)?)))
            .collect();
        for (_, old) in removed.iter().take(MAX_PAIRED) {
            let Some((name, from)) = binding(old) else {
                continue;
            };
            let changed = new.iter().find(|(_, (other, to))| {
                *other == name && *to != from && (is_literal(from) || is_literal(to))
            });
            if let Some(&(line, (_, to))) = changed
                && checks.iter().any(|(_, check)| compares(check, name))
            {
                findings.push(self.finding(
                    FindingKind::ExpectedValueChanged,
                    Some(line),
                    format!(
                        "expected value `{}` changed from `{}` to `{}`",
                        shown(name, MAX_VALUE),
                        shown(from, MAX_VALUE),
                        shown(to, MAX_VALUE)
                    ),
                ));
            }
        }
    }

    /// A Go build constraint (`//go:build`, `// +build`) the test file did not have: plain
    /// `go test` no longer compiles it.
    fn build_constraints(&self, findings: &mut Vec<Finding>) {
        let constraints = |source: Source<'a>| {
            source
                .lines()
                .map(|(n, line)| (n, line.trim()))
                .filter(|(_, line)| line.starts_with("//go:build") || line.starts_with("// +build"))
                .collect::<Vec<_>>()
        };
        let (before, after) = (constraints(self.old), constraints(self.new));
        if let Some((line, constraint)) = unmatched(&after, &before).first() {
            findings.push(self.finding(
                FindingKind::RunnerConfigNarrowed,
                Some(*line),
                format!(
                    "build constraint `{}` added: plain `go test` skips the file",
                    shown(constraint, MAX_VALUE)
                ),
            ));
        }
    }
}

/// The lines of `lines` whose text is not matched (as a multiset) in `others`, in order.
fn unmatched<'a>(lines: &[(u32, &'a str)], others: &[(u32, &str)]) -> Vec<(u32, &'a str)> {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, text) in others {
        *left.entry(text).or_default() += 1;
    }
    lines
        .iter()
        .filter(|(_, text)| match left.get_mut(text) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .copied()
        .collect()
}

/// The number of the first line of `lines` not matched in `others`; the last line when every
/// one is.
fn first_unmatched(lines: &[(u32, &str)], others: &[(u32, &str)]) -> Option<u32> {
    unmatched(lines, others)
        .first()
        .or(lines.last())
        .map(|(line, _)| *line)
}

/// The tests of `before` found in `after` neither by name nor, among its new names, by body.
pub(super) fn removed_tests<'a>(
    before: &'a [TestFn<'a>],
    after: &[TestFn<'_>],
) -> Vec<&'a TestFn<'a>> {
    let mut unmatched: Vec<&TestFn<'_>> = after.iter().collect();
    let mut missing = Vec::new();
    for old in before {
        match unmatched.iter().position(|new| new.name == old.name) {
            Some(at) => {
                unmatched.remove(at);
            }
            None => missing.push(old),
        }
    }
    missing.retain(
        |old| match unmatched.iter().position(|new| new.body == old.body) {
            Some(at) => {
                unmatched.remove(at);
                false
            }
            None => true,
        },
    );
    missing
}

/// The tests of the worktree's test files and Rust test modules, by file: a test found in
/// another file was moved, not removed.
#[derive(Default)]
pub(super) struct TestsNow<'a>(BTreeMap<&'a str, (Lang, Vec<TestFn<'a>>)>);

impl<'a> TestsNow<'a> {
    /// Records the tests of `file`, in `lang`.
    pub(super) fn insert(&mut self, file: &'a str, lang: Lang, tests: Vec<TestFn<'a>>) {
        self.0.insert(file, (lang, tests));
    }

    /// The tests of `file` if they are recorded (in `lang`).
    fn of(&self, file: &str, lang: Lang) -> Option<&[TestFn<'a>]> {
        let (recorded, tests) = self.0.get(file)?;
        (*recorded == lang).then_some(tests.as_slice())
    }

    /// Whether a file in `lang` holds a test of `test`'s name or body.
    pub(super) fn holds(&self, lang: Lang, test: &TestFn<'_>) -> bool {
        self.0
            .values()
            .filter(|(recorded, _)| *recorded == lang)
            .flat_map(|(_, tests)| tests)
            .any(|now| now.name == test.name || now.body == test.body)
    }
}
