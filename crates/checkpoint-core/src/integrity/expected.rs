//! Expected values: which operand of an assertion changed, whether it is a literal value, and
//! whether a test exercises a changed source file.
//!
//! Heuristics, cheap and documented:
//! - Two check lines have the *same shape* when they differ in exactly one operand: an argument
//!   of a call, an element of a list, or a side of `==`/`!=`, found by bracket depth outside
//!   string literals. The changed operand must be a literal on at least one side (numbers,
//!   strings, `true`/`None`/`nil`…, constructors written with a capital like `Some(5)`, and
//!   lists of these), so that renaming a variable in an assertion is not an expected value
//!   changing.
//! - An expected value may live in a name the checks use (`EXPECTED = 5`, `const WANT: i32 = 5;`,
//!   `want := 5`): a binding line whose value changed, a literal on at least one side, counts
//!   as an expected value changing when a check line of the new text compares the name itself
//!   (not an argument of the call under test).
//! - A test *exercises* a changed source file when its text names the file's module stem as a
//!   whole word (`calc` for `calc.py`, `src/calc/index.ts`, `Calc.java`), when both are Go files
//!   of one directory (one package), or when the source is under the `src/` of the Rust crate
//!   whose `tests/` or `src/` holds the test.

use std::collections::BTreeMap;

use super::files::dir_of;
use super::lang::{Lang, is_ident, token_positions};

/// Check lines longer than this are not compared for expected values (minified code).
pub(super) const MAX_CHECK_LINE: usize = 400;

/// Literal words that are no identifiers.
const LITERAL_WORDS: &[&str] = &["true", "false", "null", "nil", "undefined", "none"];

/// The operand that differs between two lines of the same shape, as (old, new), trimmed;
/// `None` when the lines differ in more than one operand or not at all.
pub(super) fn changed_operand<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    if old == new || old.len() > MAX_CHECK_LINE || new.len() > MAX_CHECK_LINE {
        return None;
    }
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    let (old_depths, new_depths) = (Depths::of(old), Depths::of(new));
    let old_range = (prefix, old.len() - suffix);
    let new_range = (prefix, new.len() - suffix);
    let depth = old_depths
        .min_in(old_range)
        .into_iter()
        .chain(new_depths.min_in(new_range))
        .min()?;
    let (left, old_right) = old_depths.operand(old_range, depth)?;
    let (new_left, new_right) = new_depths.operand(new_range, depth)?;
    if left != new_left || old.len() - old_right != new.len() - new_right {
        return None;
    }
    let (before, after) = (old[left..old_right].trim(), new[left..new_right].trim());
    (!before.is_empty() && !after.is_empty() && before != after).then_some((before, after))
}

fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(n) {
        n -= 1;
    }
    n
}

fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    while !a.is_char_boundary(a.len() - n) || !b.is_char_boundary(b.len() - n) {
        n -= 1;
    }
    n
}

/// Per byte of a line: its bracket depth (an opening or closing bracket has the depth outside
/// it) and whether an operand separator (`,`, `==`, `!=`) starts there; strings hold none.
struct Depths {
    depth: Vec<i32>,
    separator: Vec<u8>,
    /// Whether the byte is whitespace.
    space: Vec<bool>,
    /// Whether the byte opens a bracket.
    opener: Vec<bool>,
}

impl Depths {
    fn of(line: &str) -> Depths {
        let mut depths = Depths {
            depth: vec![0; line.len()],
            separator: vec![0; line.len()],
            space: line.bytes().map(|b| b.is_ascii_whitespace()).collect(),
            opener: vec![false; line.len()],
        };
        let bytes = line.as_bytes();
        let (mut depth, mut quote, mut escaped) = (0i32, None, false);
        for (i, &b) in bytes.iter().enumerate() {
            if let Some(q) = quote {
                depths.depth[i] = depth;
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    _ if b == q => quote = None,
                    _ => {}
                }
                continue;
            }
            match b {
                b'(' | b'[' | b'{' => {
                    depths.depth[i] = depth;
                    depths.opener[i] = true;
                    depth += 1;
                    continue;
                }
                b')' | b']' | b'}' => depth -= 1,
                b'"' | b'\'' | b'`' => quote = Some(b),
                b',' => depths.separator[i] = 1,
                b'=' | b'!' if bytes.get(i + 1) == Some(&b'=') => {
                    // `===` and `!==` are one separator.
                    let len = if bytes.get(i + 2) == Some(&b'=') {
                        3
                    } else {
                        2
                    };
                    if i == 0 || !matches!(bytes[i - 1], b'=' | b'!' | b'<' | b'>') {
                        depths.separator[i] = len;
                    }
                }
                _ => {}
            }
            depths.depth[i] = depth;
        }
        depths
    }

    /// The least depth in `range`, or at its position when it is empty.
    fn min_in(&self, (start, end): (usize, usize)) -> Option<i32> {
        if start < end {
            self.depth[start..end].iter().copied().min()
        } else {
            // An insertion point: the depth inside whatever encloses it.
            let before = start.checked_sub(1);
            Some(before.map_or(0, |i| self.depth[i] + i32::from(self.is_opener(i))))
        }
    }

    fn is_opener(&self, i: usize) -> bool {
        self.opener[i]
    }

    /// The operand at `depth` around `range`: from after the separator or bracket before it to
    /// the separator or bracket after it; `None` when a separator at `depth` lies inside.
    fn operand(&self, (start, end): (usize, usize), depth: i32) -> Option<(usize, usize)> {
        if (start..end).any(|i| self.separator[i] > 0 && self.depth[i] == depth) {
            return None;
        }
        let left = (0..start)
            .rev()
            .find_map(|i| {
                if self.depth[i] < depth {
                    Some(i + 1)
                } else if self.separator[i] > 0 && self.depth[i] == depth {
                    Some(i + usize::from(self.separator[i]))
                } else {
                    None
                }
            })
            .unwrap_or(0);
        // A block opened after the operand (Go's `if got != 5 {`) ends it too.
        let block =
            |i: usize| self.is_opener(i) && self.depth[i] == depth && i > 0 && self.space[i - 1];
        let right = (end..self.depth.len())
            .find(|&i| {
                self.depth[i] < depth
                    || (self.separator[i] > 0 && self.depth[i] == depth)
                    || block(i)
            })
            .unwrap_or(self.depth.len());
        Some((left, right))
    }
}

/// Words before a binding's name that say how it is bound.
const BINDING_WORDS: &[&str] = &[
    "pub",
    "const",
    "static",
    "final",
    "private",
    "protected",
    "let",
    "mut",
    "var",
];

/// The name and the value of a line that binds one (`NAME = 5`, `const NAME: i32 = 5;`,
/// `static final int NAME = 5;`, `name := 5`), trimmed; `None` for any other line.
pub(super) fn binding(line: &str) -> Option<(&str, &str)> {
    let mut rest = line.trim();
    while let Some(word) = BINDING_WORDS.iter().find_map(|word| {
        rest.strip_prefix(word)
            .filter(|after| after.starts_with(char::is_whitespace))
    }) {
        rest = word.trim_start();
    }
    let (mut name, mut after) = split_ident(rest)?;
    // A type before the name (Java, C#): `int NAME = 5`.
    if let Some((second, tail)) = after
        .strip_prefix(char::is_whitespace)
        .and_then(|tail| split_ident(tail.trim_start()))
    {
        (name, after) = (second, tail);
    }
    let after = after.trim_start();
    let value = if let Some(value) = after.strip_prefix(":=") {
        value
    } else if let Some(typed) = after.strip_prefix(':') {
        // A type annotation, then `=`.
        let at = typed.find('=')?;
        typed[at..].strip_prefix('=')?
    } else {
        after.strip_prefix('=')?
    };
    if value.starts_with('=') {
        return None;
    }
    let value = value.trim().trim_end_matches([';', ',']).trim_end();
    (!value.is_empty()).then_some((name, value))
}

/// The identifier `text` starts with (not a number) and what follows it.
fn split_ident(text: &str) -> Option<(&str, &str)> {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    let name = &text[..end];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()))
        .then_some((name, &text[end..]))
}

/// Whether the check line `line` compares `name` itself: the whole word, at the check's own
/// level (no deeper than its shallowest `,`/`==`/`!=`; inside at most one bracket when it has
/// none), so that `assertEqual(add(x, 1), 4)` does not compare `x`.
pub(super) fn compares(line: &str, name: &str) -> bool {
    if line.len() > MAX_CHECK_LINE {
        return false;
    }
    let depths = Depths::of(line);
    let level = (depths.separator.iter().zip(&depths.depth))
        .filter(|(separator, _)| **separator > 0)
        .map(|(_, depth)| *depth)
        .min()
        .unwrap_or(1);
    token_positions(line, name)
        .any(|at| !line[at + name.len()..].starts_with(is_ident) && depths.depth[at] <= level)
}

/// Whether `operand` is a literal value: every word in it (outside strings) is a number, a
/// literal word (`true`, `None`, `nil`…), capitalised (a constructor or constant) or a macro
/// (`vec!`), and it holds at least one such word or string.
pub(super) fn is_literal(operand: &str) -> bool {
    let chars: Vec<char> = operand.chars().collect();
    let (mut i, mut atoms) = (0, 0);
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '"' | '\'' | '`') {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            atoms += 1;
        } else if is_ident(c) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let literal = c.is_ascii_digit()
                || c.is_uppercase()
                || LITERAL_WORDS.contains(&word.to_ascii_lowercase().as_str())
                || chars.get(i) == Some(&'!');
            if !literal {
                return false;
            }
            atoms += 1;
        } else if c == '.' && chars.get(i + 1).is_some_and(|n| n.is_alphabetic()) {
            // A method call or field (`x.len()`, `5.0.into()`): not a plain value.
            return false;
        } else {
            i += 1;
        }
    }
    atoms > 0
}

/// The changed source files of a change set (code in a known language, not tests), for
/// telling which tests exercise them.
pub(super) struct Sources<'a> {
    paths: Vec<&'a str>,
    /// The paths by module stem.
    stems: BTreeMap<&'a str, Vec<&'a str>>,
}

impl<'a> Sources<'a> {
    pub(super) fn new(paths: Vec<&'a str>) -> Sources<'a> {
        let mut stems: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for path in &paths {
            stems.entry(module_stem(path)).or_default().push(path);
        }
        Sources { paths, stems }
    }

    /// Whether the test file `test`, whose text is `text`, exercises one of them (see the
    /// module's heuristics): by path first, then by one pass over the text's words.
    pub(super) fn exercised_by(&self, test: &str, text: &str) -> bool {
        let other = |source: &str| source != test;
        // Go names packages, not files: a Go test exercises its own package only.
        let go = Lang::of(test) == Some(Lang::Go);
        let by_name = |source: &str| other(source) && !(go && Lang::of(source) == Some(Lang::Go));
        self.paths
            .iter()
            .any(|source| other(source) && same_package(test, source))
            || text.split(|c: char| !is_ident(c)).any(|word| {
                self.stems
                    .get(word)
                    .is_some_and(|paths| paths.iter().any(|source| by_name(source)))
            })
    }
}

/// Whether `test` and `source` are Go files of one directory, or `source` is under the `src/`
/// of the Rust crate whose `tests/` or `src/` holds `test`.
fn same_package(test: &str, source: &str) -> bool {
    match (Lang::of(test), Lang::of(source)) {
        (Some(Lang::Go), Some(Lang::Go)) => dir_of(test) == dir_of(source),
        (Some(Lang::Rust), Some(Lang::Rust)) => {
            let crate_root = |path: &str, dirs: &[&str]| {
                let path = format!("/{path}");
                let at = dirs
                    .iter()
                    .filter_map(|dir| path.find(&format!("/{dir}/")))
                    .min()?;
                Some(path[..at].to_owned())
            };
            let test_root = crate_root(test, &["tests", "src"]);
            test_root.is_some() && test_root == crate_root(source, &["src"])
        }
        _ => false,
    }
}

/// The name code uses for the module of `path`: its file name up to the first `.`, or its
/// directory's name for `index`, `__init__`, `mod`, `lib` and `main`.
fn module_stem(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    match stem {
        "index" | "__init__" | "mod" | "lib" | "main" => parts.next().unwrap_or(stem),
        _ => stem,
    }
}
