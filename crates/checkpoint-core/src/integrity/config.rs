//! Runner configuration that runs fewer tests, compared line by line between `HEAD` and the
//! worktree:
//! - pytest `addopts` gaining `-k`, `-m`, `--deselect`, `--ignore` or `--ignore-glob` (in any of
//!   its configuration files, read by [`crate::pytest_config`]);
//! - jest `testPathIgnorePatterns` / `modulePathIgnorePatterns` (`jest.config.*`, the `jest` key
//!   of `package.json`) and vitest `exclude` (`vitest.config.*`, not under `coverage`) gaining
//!   entries;
//! - `Cargo.toml` gaining `test = false` or `autotests = false`, or losing a `[[test]]` target.
//!
//! (A Go build constraint added to a test file is found with the file's other checks.)

use std::collections::BTreeMap;

use super::finding::{Finding, FindingKind, MAX_VALUE, shown};
use crate::changes::file_name;

/// A configuration file that decides which tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Runner {
    /// One of pytest's configuration files ([`crate::pytest_config::FILES`]).
    Pytest,
    /// jest's own configuration file.
    Jest,
    /// `package.json`, whose `jest` key configures jest.
    PackageJson,
    /// vitest's configuration file.
    Vitest,
    /// A Cargo manifest.
    Cargo,
}

impl Runner {
    /// The runner configuration `path` is, by its file name.
    pub(super) fn of(path: &str) -> Option<Runner> {
        let name = file_name(path);
        Some(match name {
            _ if crate::pytest_config::FILES.contains(&name) => Runner::Pytest,
            "package.json" => Runner::PackageJson,
            "Cargo.toml" => Runner::Cargo,
            _ if name.starts_with("jest.config.") => Runner::Jest,
            _ if name.starts_with("vitest.config.") => Runner::Vitest,
            _ => return None,
        })
    }

    /// The findings of the configuration `file` changing from `old` to `new`.
    pub(super) fn narrowed(self, file: &str, old: &str, new: &str) -> Vec<Finding> {
        let finding = |line, description| {
            Finding::new(FindingKind::RunnerConfigNarrowed, file, line, description)
        };
        match self {
            Runner::Pytest => {
                let (before, after) = (
                    self.pytest_options(file, old),
                    self.pytest_options(file, new),
                );
                added(&before, &after)
                    .map(|(line, gained)| {
                        finding(
                            Some(line),
                            format!("pytest `addopts` now leaves tests out: `{gained}`"),
                        )
                    })
                    .into_iter()
                    .collect()
            }
            Runner::Jest | Runner::PackageJson | Runner::Vitest => {
                let (keys, within, outside): (&[&str], _, _) = match self {
                    Runner::Vitest => (&["exclude"], None, Some("coverage")),
                    Runner::PackageJson => (JEST_KEYS, Some("jest"), None),
                    _ => (JEST_KEYS, None, None),
                };
                let lists = |text| ListScan::new(keys, within, outside).entries(text);
                let (before, after) = (lists(old), lists(new));
                keys.iter()
                    .filter_map(|key| {
                        let of = |entries: &[(&str, u32, String)]| {
                            entries
                                .iter()
                                .filter(|(k, _, _)| k == key)
                                .map(|(_, line, entry)| (*line, format!("\"{entry}\"")))
                                .collect::<Vec<_>>()
                        };
                        let (line, gained) = added(&of(&before), &of(&after))?;
                        Some(finding(
                            Some(line),
                            format!("`{key}` now leaves tests out: `{gained}`"),
                        ))
                    })
                    .collect()
            }
            Runner::Cargo => {
                let mut findings = Vec::new();
                for setting in ["test = false", "autotests = false"] {
                    let (before, after) = (cargo_lines(old, setting), cargo_lines(new, setting));
                    if let Some((line, _)) = added(&before, &after) {
                        findings.push(finding(
                            Some(line),
                            format!("`{setting}` added: `cargo test` no longer runs those tests"),
                        ));
                    }
                }
                let (before, after) = (cargo_lines(old, "[[test]]"), cargo_lines(new, "[[test]]"));
                if after.len() < before.len() {
                    findings.push(finding(None, "a `[[test]]` target removed".to_owned()));
                }
                findings
            }
        }
    }

    /// The options in pytest's `addopts` that leave tests out, with the line of `addopts`; a
    /// file pytest cannot read has none (its tests do not run at all).
    fn pytest_options(self, file: &str, text: &str) -> Vec<(u32, String)> {
        let config = crate::pytest_config::read(file_name(file), text);
        let Some(addopts) = config.ok().flatten().and_then(|config| config.addopts) else {
            return Vec::new();
        };
        let line = addopts.line;
        let mut options = Vec::new();
        let mut words = addopts.words.into_iter();
        while let Some(word) = words.next() {
            if matches!(
                word.as_str(),
                "-k" | "-m" | "--deselect" | "--ignore" | "--ignore-glob"
            ) {
                let argument = words.next().unwrap_or_default();
                options.push((line, format!("{word} {argument}")));
            } else if ((word.starts_with("-k") || word.starts_with("-m")) && word.len() > 2)
                || ["--deselect=", "--ignore=", "--ignore-glob="]
                    .iter()
                    .any(|p| word.starts_with(p))
            {
                options.push((line, word));
            }
        }
        options
    }
}

/// The jest keys whose entries leave test files out.
const JEST_KEYS: &[&str] = &["testPathIgnorePatterns", "modulePathIgnorePatterns"];

/// The entries of `after` not in `before` (as a multiset): the line of the first and all of
/// them, quoted for a description; `None` when there are none.
fn added(before: &[(u32, String)], after: &[(u32, String)]) -> Option<(u32, String)> {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, entry) in before {
        *left.entry(entry).or_default() += 1;
    }
    let new: Vec<&(u32, String)> = after
        .iter()
        .filter(|(_, entry)| match left.get_mut(entry.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect();
    let line = new.first()?.0;
    let text: Vec<&str> = new.iter().map(|(_, entry)| entry.as_str()).collect();
    Some((line, shown(&text.join(", "), MAX_VALUE * 2)))
}

/// The lines of a Cargo manifest that say `setting` (spaces and comments aside).
fn cargo_lines(text: &str, setting: &str) -> Vec<(u32, String)> {
    let wanted: String = setting.split_whitespace().collect();
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.split('#').next().unwrap_or_default();
            code.split_whitespace().collect::<String>() == wanted
        })
        .map(|(i, _)| (u32::try_from(i + 1).unwrap_or(u32::MAX), setting.to_owned()))
        .collect()
}

/// A scan of a JSON or JS object literal for the string entries of the lists under some keys.
struct ListScan<'k> {
    keys: &'k [&'k str],
    /// A key the list must be (somewhere) under.
    within: Option<&'k str>,
    /// A key the list must not be under.
    outside: Option<&'k str>,
}

impl<'k> ListScan<'k> {
    fn new(keys: &'k [&'k str], within: Option<&'k str>, outside: Option<&'k str>) -> Self {
        ListScan {
            keys,
            within,
            outside,
        }
    }

    /// (key, line, entry) for every string in a watched list of `text`.
    fn entries(&self, text: &str) -> Vec<(&'k str, u32, String)> {
        let chars: Vec<char> = text.chars().collect();
        let mut found = Vec::new();
        // The key each open bracket was opened under ("" for none).
        let mut stack: Vec<String> = Vec::new();
        let (mut last, mut pending): (Option<String>, Option<String>) = (None, None);
        let mut collecting: Option<(usize, &'k str)> = None;
        let (mut i, mut line) = (0, 1u32);
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\n' => line = line.saturating_add(1),
                '/' if chars.get(i + 1) == Some(&'/') => {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                    continue;
                }
                '/' if chars.get(i + 1) == Some(&'*') => {
                    i += 2;
                    while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                        if chars[i] == '\n' {
                            line = line.saturating_add(1);
                        }
                        i += 1;
                    }
                    i += 2;
                    continue;
                }
                '"' | '\'' | '`' => {
                    let (start, at) = (line, i);
                    let mut text = String::new();
                    i += 1;
                    while i < chars.len() && chars[i] != c {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        if let Some(&d) = chars.get(i) {
                            if d == '\n' {
                                line = line.saturating_add(1);
                            }
                            text.push(d);
                        }
                        i += 1;
                    }
                    if let Some((_, key)) = collecting {
                        found.push((key, start, text.clone()));
                    }
                    last = Some(text);
                    i = i.max(at) + 1;
                    continue;
                }
                c if c.is_alphanumeric() || c == '_' || c == '$' => {
                    let start = i;
                    while i < chars.len()
                        && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '$'))
                    {
                        i += 1;
                    }
                    last = Some(chars[start..i].iter().collect());
                    continue;
                }
                ':' => pending = last.take(),
                '{' | '[' | '(' => {
                    let key = pending.take().unwrap_or_default();
                    let watched = self.keys.iter().find(|k| **k == key);
                    let within = self.within.is_none_or(|w| stack.iter().any(|k| k == w));
                    let outside = self.outside.is_none_or(|o| stack.iter().all(|k| k != o));
                    if let (Some(key), true, true, '[', None) =
                        (watched, within, outside, c, collecting)
                    {
                        collecting = Some((stack.len(), key));
                    }
                    stack.push(key);
                }
                '}' | ']' | ')' => {
                    stack.pop();
                    if collecting.is_some_and(|(depth, _)| depth == stack.len()) {
                        collecting = None;
                    }
                }
                c if c.is_whitespace() => {}
                _ => {
                    last = None;
                    pending = None;
                }
            }
            i += 1;
        }
        found
    }
}
