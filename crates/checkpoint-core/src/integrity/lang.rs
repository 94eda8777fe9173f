//! Per-language test conventions, line by line: markers, assertions, test functions, comments,
//! and Rust's `#[cfg(test)]` modules.

use crate::changes::file_name;

/// The languages whose test conventions are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Lang {
    Python,
    Rust,
    JavaScript,
    Go,
    Java,
}

impl Lang {
    /// The language of `path`, by its extension.
    pub(super) fn of(path: &str) -> Option<Lang> {
        let ext = file_name(path).rsplit_once('.').map(|(_, ext)| ext)?;
        Some(match ext {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Lang::JavaScript,
            "go" => Lang::Go,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    /// Skip, ignore and focus markers; each is matched where no identifier character precedes it.
    pub(super) fn markers(self) -> &'static [&'static str] {
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
            Lang::Java => &["@Disabled", "@Ignore"],
        }
    }

    /// Whether a line (trimmed, not a comment) asserts something.
    pub(super) fn is_assertion(self, line: &str) -> bool {
        match self {
            Lang::Python => {
                line.starts_with("assert ")
                    || line.starts_with("assert(")
                    || has_token(line, "self.assert")
            }
            Lang::Rust => {
                prefixed_call(line, "assert", '!') || prefixed_call(line, "debug_assert", '!')
            }
            Lang::JavaScript => has_token(line, "expect(") || has_token(line, "assert"),
            Lang::Go => ["t.Error", "t.Fatal", "assert.", "require."]
                .iter()
                .any(|token| has_token(line, token)),
            Lang::Java => line.starts_with("assert ") || prefixed_call(line, "assert", '('),
        }
    }

    /// Whether a line (trimmed, not a comment) checks a value, for comparing expected values:
    /// an assertion, a Go `if got != want` and a JS matcher continued on its own line
    /// (`.toBe(5)`).
    pub(super) fn is_check(self, line: &str) -> bool {
        self.is_assertion(line)
            || match self {
                Lang::Go => line.starts_with("if ") && (line.contains("!=") || line.contains("==")),
                Lang::JavaScript => line.starts_with(".to") || line.starts_with(".not."),
                Lang::Python | Lang::Rust | Lang::Java => false,
            }
    }

    fn is_comment(self, line: &str) -> bool {
        match self {
            Lang::Python => line.starts_with('#'),
            Lang::Rust | Lang::JavaScript | Lang::Go | Lang::Java => line.starts_with("//"),
        }
    }

    /// The name of the test a (trimmed) line declares, if it does. `attribute` carries whether a
    /// test attribute (`#[test]`, `@Test`) precedes the line, for the languages that mark tests
    /// so.
    fn test_name<'a>(self, line: &'a str, attribute: &mut bool) -> Option<&'a str> {
        match self {
            Lang::Python => line
                .strip_prefix("async ")
                .unwrap_or(line)
                .strip_prefix("def ")
                .filter(|rest| rest.starts_with("test"))
                .map(ident),
            Lang::Rust => {
                if line.starts_with("#[test]") || line.ends_with("::test]") {
                    *attribute = true;
                    return None;
                }
                let name = (*attribute)
                    .then(|| line.find("fn ").map(|at| ident(&line[at + 3..])))
                    .flatten();
                if name.is_some() || !line.starts_with("#[") {
                    *attribute = false;
                }
                name
            }
            // Every case call ends at a `(`: look there rather than scan for each call.
            Lang::JavaScript => line
                .match_indices('(')
                .find_map(|(at, _)| {
                    let callee = &line[..=at];
                    JS_CASES.iter().find_map(|call| {
                        let start = callee.strip_suffix(call).map(str::len)?;
                        let bounded = !line[..start].chars().next_back().is_some_and(is_ident);
                        bounded.then(|| &line[at + 1..])
                    })
                })
                .and_then(quoted),
            Lang::Go => line
                .strip_prefix("func Test")
                .map(|_| ident(&line["func ".len()..])),
            Lang::Java => {
                let rest = JAVA_TESTS
                    .iter()
                    .find_map(|a| line.strip_prefix(a).filter(|r| !r.starts_with(is_ident)));
                let line = match rest {
                    Some(rest) => {
                        *attribute = true;
                        skip_group(rest.trim_start())
                    }
                    None => line,
                };
                if !*attribute || line.is_empty() || line.starts_with('@') {
                    return None;
                }
                *attribute = false;
                let head = line.split('(').next().filter(|_| line.contains('('))?;
                Some(
                    head.trim_end()
                        .rsplit(|c| !is_ident(c))
                        .next()
                        .unwrap_or(""),
                )
            }
        }
    }
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

/// The JUnit annotations that make a method a test.
const JAVA_TESTS: &[&str] = &["@Test", "@ParameterizedTest", "@RepeatedTest"];

/// `text` after a leading parenthesised group (an annotation's arguments), if it has one.
fn skip_group(text: &str) -> &str {
    if !text.starts_with('(') {
        return text;
    }
    let mut depth = 0i32;
    for (at, c) in text.char_indices() {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth == 0 {
            return text[at + 1..].trim_start();
        }
    }
    ""
}

/// Whether `line` calls `prefix…` followed by `open`: `assert_eq!(` for (`assert`, `!`),
/// `assertEquals(` for (`assert`, `(`).
fn prefixed_call(line: &str, prefix: &str, open: char) -> bool {
    token_positions(line, prefix).any(|at| {
        let rest = &line[at + prefix.len()..];
        let ident = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        rest[ident..].starts_with(open)
    })
}

pub(super) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `token` starts in `line`; a token that starts with an identifier character must not
/// follow one (`xit(` is not found in `exit(`). Tokens are ASCII; lines are short, so a scan for
/// the first byte beats setting up a substring searcher per line.
pub(super) fn token_positions<'a>(
    line: &'a str,
    token: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    let bounded = token.starts_with(is_ident);
    let (bytes, wanted) = (line.as_bytes(), token.as_bytes());
    let first = wanted.first().copied().filter(u8::is_ascii);
    bytes
        .iter()
        .enumerate()
        .filter(move |&(at, b)| Some(*b) == first && bytes[at..].starts_with(wanted))
        .map(|(at, _)| at)
        .filter(move |&at| !bounded || !line[..at].chars().next_back().is_some_and(is_ident))
}

pub(super) fn has_token(line: &str, token: &str) -> bool {
    token_positions(line, token).next().is_some()
}

/// A text to analyse, or the part of one (a Rust `#[cfg(test)]` module and what follows it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Source<'a> {
    /// The text.
    pub(super) text: &'a str,
    /// The 1-based number, in the file, of its first line.
    pub(super) first: u32,
}

impl<'a> Source<'a> {
    /// All of `text`.
    pub(super) fn whole(text: &'a str) -> Source<'a> {
        Source { text, first: 1 }
    }

    /// Nothing: the side of a file that has no such part.
    pub(super) fn empty() -> Source<'static> {
        Source { text: "", first: 1 }
    }

    /// The file's number of the `i`th (0-based) line.
    fn number(&self, i: usize) -> u32 {
        u32::try_from(i)
            .unwrap_or(u32::MAX)
            .saturating_add(self.first)
    }

    /// The lines with their numbers in the file.
    pub(super) fn lines(self) -> impl Iterator<Item = (u32, &'a str)> {
        self.text
            .lines()
            .enumerate()
            .map(move |(i, line)| (self.number(i), line))
    }

    /// The non-comment lines, trimmed, with their numbers in the file.
    pub(super) fn code_lines(self, lang: Lang) -> impl Iterator<Item = (u32, &'a str)> {
        self.lines()
            .map(|(n, line)| (n, line.trim()))
            .filter(move |(_, line)| !lang.is_comment(line))
    }
}

/// The part of a Rust source file from its `#[cfg(test)]` module on (the attribute, on the line
/// before `mod` or on the same line); `None` when it has none.
pub(super) fn rust_test_region(text: &str) -> Option<(Source<'_>, &str)> {
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.trim().strip_prefix("#[cfg(test)]") {
            let next = std::iter::once(rest.trim())
                .chain(lines[i + 1..].iter().map(|l| l.trim()))
                .find(|l| !l.is_empty() && !l.starts_with("#["));
            let is_mod = next.is_some_and(|l| {
                ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
                    .iter()
                    .any(|m| l.starts_with(m))
            });
            if is_mod {
                let region = Source {
                    text: &text[offset..],
                    first: Source::whole(text).number(i),
                };
                return Some((region, &text[..offset]));
            }
        }
        offset += line.len();
    }
    None
}

/// One test function or case.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TestFn<'a> {
    pub(super) name: &'a str,
    /// Number of its header line in the file.
    pub(super) line: u32,
    /// Its body without the header: equal bodies mean a rename.
    pub(super) body: Body<'a>,
}

/// The lines of a test's body, as they stand in the text; two bodies are equal when their
/// non-blank lines are, trimmed (indentation aside).
#[derive(Debug, Clone, Copy)]
pub(super) struct Body<'a>(&'a str);

impl PartialEq for Body<'_> {
    fn eq(&self, other: &Self) -> bool {
        let lines = |body: &Self| {
            (body.0.lines())
                .map(str::trim)
                .filter(|line| !line.is_empty())
        };
        lines(self).eq(lines(other))
    }
}

impl Eq for Body<'_> {}

/// The tests of `source`, in order.
pub(super) fn test_fns<'a>(lang: Lang, source: Source<'a>) -> Vec<TestFn<'a>> {
    let lines: Vec<&str> = source.text.lines().collect();
    // Where a line starts and ends in the text (`lines` are slices of it).
    let start = |line: &str| line.as_ptr() as usize - source.text.as_ptr() as usize;
    let mut found = Vec::new();
    let mut attribute = false;
    for (i, raw) in lines.iter().enumerate() {
        let name = lang.test_name(raw.trim(), &mut attribute);
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            let length = match lang {
                Lang::Python => indented_body(&lines, i),
                Lang::Rust | Lang::JavaScript | Lang::Go | Lang::Java => braced_body(&lines, i),
            };
            let body = match lines[i + 1..].get(..length) {
                Some([first, .., last]) => &source.text[start(first)..start(last) + last.len()],
                Some([only]) => only,
                _ => "",
            };
            found.push(TestFn {
                name,
                line: source.number(i),
                body: Body(body),
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

/// How many lines after `header` are indented deeper than it (blank ones too), up to the first
/// that is not.
fn indented_body(lines: &[&str], header: usize) -> usize {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let depth = indent(lines[header]);
    lines[header + 1..]
        .iter()
        .take_while(|line| line.trim().is_empty() || indent(line) > depth)
        .count()
}

/// How many lines after `header` there are up to the one that closes the braces opened from
/// `header` on.
fn braced_body(lines: &[&str], header: usize) -> usize {
    let balance = |line: &str| {
        line.chars().fold(0i64, |n, c| match c {
            '{' => n + 1,
            '}' => n - 1,
            _ => n,
        })
    };
    let mut open = balance(lines[header]);
    let mut length = 0;
    for line in &lines[header + 1..] {
        if open <= 0 {
            break;
        }
        open += balance(line);
        length += 1;
    }
    length
}
