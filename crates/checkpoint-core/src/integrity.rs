//! Test integrity: whether a change set weakens the tests (deletes a test file, adds a skip or
//! focus marker, removes a test function or assertions), so that a green run means something.
//!
//! Pure and line-based: the caller gives the change set and, for each modified test file, its
//! `HEAD` and worktree text ([`Sides`]); [`analyze`] returns typed [`Finding`]s. Matching is cheap
//! and deliberately simple (no parsers): a marker counts as new when the new text has more
//! occurrences of it than the old; a test counts as removed when neither its name nor its body is
//! found among the new text's tests (a rename with the same body is not a removal); assertions
//! count as removed when the new text has fewer assertion lines than the old.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::changes::{Change, ChangeKind, ChangeSet};

mod accept;
mod counts;

pub use accept::{ABSENT, Acceptance};
pub use counts::GreenCounts;

/// What kind of weakening a [`Finding`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingKind {
    /// A test file was deleted.
    TestFileDeleted,
    /// A skip, ignore or focus marker was added.
    MarkerAdded,
    /// A test function or case was removed (not renamed).
    TestRemoved,
    /// The file has fewer assertion lines than at `HEAD`.
    AssertionRemoved,
    /// A passing test command ran fewer tests than in the last green stop (see
    /// [`GreenCounts`]); the finding's `file` is the command.
    TestCountDropped,
    /// With `[integrity] prove_failing`: a test command passes on `HEAD`'s code with the changed
    /// tests, so they do not show the change; the finding's `file` is the command.
    PassesWithoutTheChange,
}

/// One way a change weakens the tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Finding {
    /// What was weakened.
    pub kind: FindingKind,
    /// The test file, repository-relative; for [`FindingKind::TestCountDropped`], the test
    /// command.
    pub file: String,
    /// The 1-based line it concerns: in the new text for an added marker, in the `HEAD` text for
    /// something removed; `None` for a deleted file.
    pub line: Option<u32>,
    /// One line saying what changed.
    pub description: String,
}

/// The two sides of one modified test file; a side that could not be read (too big, not UTF-8)
/// is `None`, and the file then gets only the file-level check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sides {
    /// The text at `HEAD`.
    pub old: Option<String>,
    /// The text in the worktree.
    pub new: Option<String>,
}

/// Whether `path` is a test file by the per-ecosystem defaults: anything under a `tests`
/// directory, `test_*.py`, `*_test.py`, `*_test.go`, `*.test.*` and `*.spec.*`.
pub fn is_test_file(path: &str) -> bool {
    let mut segments = path.split('/');
    let name = segments.next_back().unwrap_or_default();
    if segments.any(|dir| dir == "tests") {
        return true;
    }
    let parts: Vec<&str> = name.split('.').collect();
    let inner = parts.len() > 2
        && parts[1..parts.len() - 1]
            .iter()
            .any(|p| matches!(*p, "test" | "spec"));
    inner
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
}

/// The changed test files of `changes`.
pub fn test_files(changes: &ChangeSet) -> impl Iterator<Item = &Change> {
    changes.changes.iter().filter(|c| is_test_file(&c.path))
}

/// The findings of `changes`, given the [`Sides`] of its modified test files (keyed by path;
/// a modified test file without sides gets no text checks), file by file in the change set's
/// order: new markers, removed tests, then removed assertions.
pub fn analyze(changes: &ChangeSet, texts: &BTreeMap<String, Sides>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for change in test_files(changes) {
        match change.kind {
            ChangeKind::Deleted => findings.push(Finding {
                kind: FindingKind::TestFileDeleted,
                file: change.path.clone(),
                line: None,
                description: "test file deleted".to_owned(),
            }),
            ChangeKind::Modified => {
                let Some(Sides {
                    old: Some(old),
                    new: Some(new),
                }) = texts.get(&change.path)
                else {
                    continue;
                };
                if let Some(lang) = Lang::of(&change.path) {
                    compare(lang, &change.path, old, new, &mut findings);
                }
            }
            ChangeKind::Added | ChangeKind::Untracked => {}
        }
    }
    findings
}

/// The languages whose test conventions are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Rust,
    JavaScript,
    Go,
}

impl Lang {
    fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, ext)| ext)?;
        Some(match ext {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Lang::JavaScript,
            "go" => Lang::Go,
            _ => return None,
        })
    }

    /// Skip, ignore and focus markers; each is matched where no identifier character precedes it.
    fn markers(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &[
                "@unittest.skip",
                "@unittest.expectedFailure",
                "@pytest.mark.skip",
                "@pytest.mark.xfail",
                "self.skipTest(",
            ],
            Lang::Rust => &["#[ignore"],
            Lang::JavaScript => &[
                "it.skip(",
                "test.skip(",
                "describe.skip(",
                "xit(",
                "xtest(",
                "xdescribe(",
                ".only(",
                ".todo(",
            ],
            Lang::Go => &["t.Skip"],
        }
    }

    /// Whether a line (trimmed, not a comment) asserts something.
    fn is_assertion(self, line: &str) -> bool {
        match self {
            Lang::Python => {
                line.starts_with("assert ")
                    || line.starts_with("assert(")
                    || has_token(line, "self.assert")
            }
            Lang::Rust => rust_assertion(line),
            Lang::JavaScript => has_token(line, "expect(") || has_token(line, "assert"),
            Lang::Go => ["t.Error", "t.Fatal", "assert.", "require."]
                .iter()
                .any(|token| has_token(line, token)),
        }
    }

    fn is_comment(self, line: &str) -> bool {
        match self {
            Lang::Python => line.starts_with('#'),
            Lang::Rust | Lang::JavaScript | Lang::Go => line.starts_with("//"),
        }
    }
}

/// `assert!(`, `assert_eq!(`, `debug_assert_ne!(`, `assert_snapshot!(`…
fn rust_assertion(line: &str) -> bool {
    token_positions(line, "assert").any(|at| {
        let rest = &line[at + "assert".len()..];
        let ident = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        rest[ident..].starts_with('!')
    }) || token_positions(line, "debug_assert").next().is_some()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `token` starts in `line`; a token that starts with an identifier character must not
/// follow one (`xit(` is not found in `exit(`).
fn token_positions<'a>(line: &'a str, token: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bounded = token.starts_with(is_ident);
    line.match_indices(token)
        .map(|(at, _)| at)
        .filter(move |&at| !bounded || !line[..at].chars().next_back().is_some_and(is_ident))
}

fn has_token(line: &str, token: &str) -> bool {
    token_positions(line, token).next().is_some()
}

/// The non-comment lines of `text`, trimmed, with their 1-based numbers.
fn code_lines(lang: Lang, text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (u32::try_from(i + 1).unwrap_or(u32::MAX), line.trim()))
        .filter(move |(_, line)| !lang.is_comment(line))
}

/// The findings of one modified test file.
fn compare(lang: Lang, file: &str, old: &str, new: &str, findings: &mut Vec<Finding>) {
    let finding = |kind, line, description| Finding {
        kind,
        file: file.to_owned(),
        line,
        description,
    };
    for marker in lang.markers() {
        let matching = |text| {
            code_lines(lang, text)
                .filter(|(_, line)| has_token(line, marker))
                .collect::<Vec<_>>()
        };
        let (before, after) = (matching(old), matching(new));
        if after.len() > before.len() {
            let line = first_unmatched(&after, &before);
            let marker = match *marker {
                "#[ignore" => "#[ignore]",
                marker => marker.trim_end_matches('('),
            };
            findings.push(finding(
                FindingKind::MarkerAdded,
                line,
                format!("new skip/focus marker `{marker}`"),
            ));
        }
    }
    let (before, after) = (test_fns(lang, old), test_fns(lang, new));
    for removed in removed_tests(&before, &after) {
        findings.push(finding(
            FindingKind::TestRemoved,
            Some(removed.line),
            format!("test `{}` removed", removed.name),
        ));
    }
    let assertions = |text| {
        code_lines(lang, text)
            .filter(|(_, line)| lang.is_assertion(line))
            .collect::<Vec<_>>()
    };
    let (before, after) = (assertions(old), assertions(new));
    if after.len() < before.len() {
        findings.push(finding(
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

/// The number of the first line of `lines` whose text is not matched (as a multiset) in
/// `others`; the last line when every text is.
fn first_unmatched(lines: &[(u32, &str)], others: &[(u32, &str)]) -> Option<u32> {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, text) in others {
        *left.entry(text).or_default() += 1;
    }
    lines
        .iter()
        .find(|(_, text)| match left.get_mut(text) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .or(lines.last())
        .map(|(line, _)| *line)
}

/// The calls that declare a JS/TS test case, marked or not: a marked case is still the same case.
const JS_CASES: &[&str] = &[
    "it(",
    "test(",
    "it.only(",
    "test.only(",
    "it.skip(",
    "test.skip(",
    "it.todo(",
    "test.todo(",
    "xit(",
    "xtest(",
];

/// One test function or case.
#[derive(Debug, PartialEq, Eq)]
struct TestFn<'a> {
    name: &'a str,
    /// 1-based line of its header.
    line: u32,
    /// Its body without the header, trimmed lines joined: equal bodies mean a rename.
    body: String,
}

/// The tests of `text`, in order.
fn test_fns(lang: Lang, text: &str) -> Vec<TestFn<'_>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut attribute = false;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        let name = match lang {
            Lang::Python => line
                .strip_prefix("async ")
                .unwrap_or(line)
                .strip_prefix("def ")
                .filter(|rest| rest.starts_with("test"))
                .map(ident),
            Lang::Rust => {
                if line.starts_with("#[test]") || line.ends_with("::test]") {
                    attribute = true;
                    continue;
                }
                let name = attribute
                    .then(|| line.find("fn ").map(|at| ident(&line[at + 3..])))
                    .flatten();
                if name.is_some() || !line.starts_with("#[") {
                    attribute = false;
                }
                name
            }
            Lang::JavaScript => JS_CASES
                .iter()
                .find_map(|call| {
                    token_positions(line, call)
                        .next()
                        .map(|at| &line[at + call.len()..])
                })
                .and_then(quoted),
            Lang::Go => line
                .strip_prefix("func Test")
                .map(|_| ident(&line["func ".len()..])),
        };
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            let body = match lang {
                Lang::Python => indented_body(&lines, i),
                Lang::Rust | Lang::JavaScript | Lang::Go => braced_body(&lines, i),
            };
            found.push(TestFn {
                name,
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                body,
            });
        }
    }
    found
}

fn ident(text: &str) -> &str {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The content of the string literal `text` starts with.
fn quoted(text: &str) -> Option<&str> {
    let quote = text
        .chars()
        .next()
        .filter(|q| matches!(q, '"' | '\'' | '`'))?;
    let rest = &text[1..];
    rest.find(quote).map(|end| &rest[..end])
}

/// The lines after `header` indented deeper than it, up to the first that is not.
fn indented_body(lines: &[&str], header: usize) -> String {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let depth = indent(lines[header]);
    lines[header + 1..]
        .iter()
        .take_while(|line| line.trim().is_empty() || indent(line) > depth)
        .map(|line| line.trim())
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines after `header` up to the one that closes the braces opened from `header` on.
fn braced_body(lines: &[&str], header: usize) -> String {
    let balance = |line: &str| {
        line.chars().fold(0i64, |n, c| match c {
            '{' => n + 1,
            '}' => n - 1,
            _ => n,
        })
    };
    let mut open = balance(lines[header]);
    let mut body = Vec::new();
    for line in &lines[header + 1..] {
        if open <= 0 {
            break;
        }
        open += balance(line);
        body.push(line.trim());
    }
    body.join("\n")
}

/// The tests of `before` found in `after` neither by name nor, among the new names, by body.
fn removed_tests<'a>(before: &'a [TestFn<'a>], after: &[TestFn<'_>]) -> Vec<&'a TestFn<'a>> {
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

#[cfg(test)]
mod tests;
