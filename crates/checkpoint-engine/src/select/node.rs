//! jest and vitest narrowed to the tests related to the changed files: `jest [flags]
//! --findRelatedTests <files>` and `vitest related <files> --run [flags]`; the runner itself
//! finds the tests that import a changed file, directly or not.
//!
//! Recognised: `jest [flags]`, `npx jest [flags]`, `vitest [run] [flags]`, `npx vitest [run]
//! [flags]`, with only flags that choose no tests; and `npm test`, `npm run test`, `yarn test`,
//! `pnpm test` (and their `run` forms) when `package.json` (a regular file of at most 1 MiB) has
//! a `scripts.test` that is one of those, and no `pretest` or `posttest` script. The package
//! manager is then left out: the runner is started from `node_modules/.bin`, as the script would
//! be, and must be there.
//!
//! Before the runner is trusted with the change, every changed file must be a JS/TS source
//! (`.js`, `.jsx`, `.mjs`, `.cjs`, `.ts`, `.tsx`, `.mts`, `.cts`, but no declaration file), none
//! may be runner, Babel or Vite configuration or under `__mocks__`, and each must be imported, by
//! a relative path and directly or not, by a test file (for jest, a file under `__tests__` or
//! named `*.test.*` / `*.spec.*`; for vitest, `*.test.*` / `*.spec.*`). The imports are read by
//! [`scan`](super::scan) ([`specifiers`]): `import … from`, `export … from`, `import '…'`, `import('…')`,
//! `require('…')`, outside comments. A changed file reached some other way (a setup file, a path
//! alias, a mock, a fixture read at run time) runs the command as configured: the runner would
//! relate no test to it. The counts in the message are those test files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::scan::Walk;
use super::{Narrowing, Whole};
use crate::bounded;
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// The extensions of the JS/TS sources the runners relate to tests.
const SOURCE_EXTENSIONS: &[&str] = &["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"];
/// Prefixes of the file names that configure how every test runs.
const WHOLE_SUITE_PREFIXES: &[&str] = &[
    "jest.config.",
    "jest.setup.",
    "jest.preset.",
    "vitest.config.",
    "vitest.workspace.",
    "vitest.setup.",
    "vite.config.",
    "babel.config.",
    ".babelrc.",
    "setupTests.",
];
/// Flags of jest that change nothing about which tests run.
const JEST_NEUTRAL: &[&str] = &[
    "--ci",
    "--silent",
    "--verbose",
    "--bail",
    "-b",
    "-i",
    "--runInBand",
    "--colors",
    "--detectOpenHandles",
    "--forceExit",
    "--passWithNoTests",
    "--no-cache",
    "--noStackTrace",
];
/// Flags of vitest that change nothing about which tests run.
const VITEST_NEUTRAL: &[&str] = &["--silent", "--no-color", "--passWithNoTests"];
/// Prefixes of flags with a value (`--name=value`) that change nothing about which tests run.
const NEUTRAL_WITH_VALUE: &[&str] = &["--maxWorkers=", "--reporter=", "--pool="];

/// Which runner a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Jest,
    Vitest,
}

impl Runner {
    /// Whether the file at `path` is one of the runner's test files by default.
    fn is_test(self, path: &str) -> bool {
        let name = file_name(path);
        let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
        let named = stem.ends_with(".test") || stem.ends_with(".spec");
        match self {
            Runner::Jest => {
                let in_tests_dir = path.split('/').rev().skip(1).any(|d| d == "__tests__");
                let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
                (named || in_tests_dir) && matches!(extension, "js" | "jsx" | "ts" | "tsx")
            }
            Runner::Vitest => named,
        }
    }
}

/// A jest or vitest run the gate can narrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTests {
    runner: Runner,
    /// The words that start the runner (`jest`, `npx vitest`, `node_modules/.bin/jest`).
    program: Vec<String>,
    /// The configured flags, kept.
    flags: Vec<String>,
}

impl NodeTests {
    /// `words` as a jest or vitest run, directly or through `package.json`'s test script in
    /// `workdir`.
    pub fn recognise(words: &[String], workdir: &Path) -> Option<NodeTests> {
        match words {
            [pm, test]
                if is_package_manager(pm) && (test == "test" || (pm == "npm" && test == "t")) =>
            {
                script_tests(workdir)
            }
            [pm, run, test]
                if is_package_manager(pm)
                    && test == "test"
                    && (run == "run" || run == "run-script") =>
            {
                script_tests(workdir)
            }
            _ => direct(words),
        }
    }

    /// The selection for `changed` in the worktree at `workdir` (the import scan cached in
    /// `state_dir`, when given), or the whole command.
    pub fn select(&self, changed: &[&str], workdir: &Path, state_dir: Option<&Path>) -> Narrowing {
        let doubtful =
            |path: &&str| !is_source(path) || is_whole_suite(path) || path.starts_with('-');
        if changed.iter().any(doubtful) {
            return Err(Whole::unsaid());
        }
        let files = WALK.scan(workdir, state_dir).ok_or_else(Whole::unsaid)?;
        let tests: Vec<&str> = files
            .keys()
            .map(String::as_str)
            .filter(|path| self.runner.is_test(path))
            .collect();
        let importers = importers(&files);
        let mut selected = BTreeSet::new();
        for &path in changed {
            if !files.contains_key(path) {
                return Err(Whole::unsaid());
            }
            let reaching: Vec<&str> = dependents(&importers, path)
                .into_iter()
                .filter(|file| self.runner.is_test(file))
                .collect();
            if reaching.is_empty() {
                return Err(Whole::unsaid());
            }
            selected.extend(reaching);
        }
        let changed_files = changed.len();
        let changed = changed.iter().map(|path| (*path).to_owned());
        let mut words = self.program.clone();
        match self.runner {
            Runner::Jest => {
                words.extend(self.flags.iter().cloned());
                words.push("--findRelatedTests".to_owned());
                words.extend(changed);
            }
            Runner::Vitest => {
                words.push("related".to_owned());
                words.extend(changed);
                words.push("--run".to_owned());
                words.extend(self.flags.iter().cloned());
            }
        }
        super::narrowed(
            &words,
            SelectionUnit::TestFiles,
            selected.len(),
            tests.len(),
            changed_files,
        )
    }
}

/// `npm`, `yarn` or `pnpm`.
fn is_package_manager(word: &str) -> bool {
    matches!(word, "npm" | "yarn" | "pnpm")
}

/// The runner `package.json`'s test script in `workdir` starts, from `node_modules/.bin` when
/// the script names it bare; `None` when the script is anything else, or has a `pretest` or
/// `posttest` beside it.
fn script_tests(workdir: &Path) -> Option<NodeTests> {
    let text = bounded::read_regular_text(&workdir.join("package.json"), bounded::MAX_CONFIG_BYTES)
        .ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let scripts = json.get("scripts")?;
    if scripts.get("pretest").is_some() || scripts.get("posttest").is_some() {
        return None;
    }
    let script = scripts.get("test")?.as_str()?;
    let mut tests = direct(&super::plain_words(script)?)?;
    if let [bare] = tests.program.as_slice() {
        let local = format!("node_modules/.bin/{bare}");
        if !workdir.join(&local).is_file() {
            return None;
        }
        tests.program = vec![local];
    }
    Some(tests)
}

/// `words` as `[npx] jest [flags]` or `[npx] vitest [run] [flags]` with only neutral flags.
fn direct(words: &[String]) -> Option<NodeTests> {
    let npx = words.first().is_some_and(|w| w == "npx");
    let rest = if npx { &words[1..] } else { words };
    let (name, mut flags) = rest.split_first()?;
    let runner = match name.as_str() {
        "jest" => Runner::Jest,
        "vitest" => Runner::Vitest,
        _ => return None,
    };
    if runner == Runner::Vitest && flags.first().is_some_and(|w| w == "run") {
        flags = &flags[1..];
    }
    let neutral = |flag: &String| {
        let list = match runner {
            Runner::Jest => JEST_NEUTRAL,
            Runner::Vitest => VITEST_NEUTRAL,
        };
        list.contains(&flag.as_str()) || NEUTRAL_WITH_VALUE.iter().any(|p| flag.starts_with(p))
    };
    if !flags.iter().all(neutral) {
        return None;
    }
    let program = words[..words.len() - flags.len()]
        .iter()
        .filter(|w| *w != "run")
        .cloned()
        .collect();
    Some(NodeTests {
        runner,
        program,
        flags: flags.to_vec(),
    })
}

/// Whether `path` is a JS/TS source (not a declaration file).
fn is_source(path: &str) -> bool {
    let name = file_name(path);
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    SOURCE_EXTENSIONS.contains(&extension) && !stem.ends_with(".d")
}

/// Whether a change to `path` can change how every test runs.
fn is_whole_suite(path: &str) -> bool {
    let name = file_name(path);
    WHOLE_SUITE_PREFIXES.iter().any(|p| name.starts_with(p))
        || path.split('/').any(|dir| dir == "__mocks__")
}

/// The JS/TS sources of a worktree and their relative imports.
const WALK: Walk<Vec<String>> = Walk {
    cache: "node-imports-v1",
    wanted: is_source,
    parse: specifiers,
};

/// For each file, the files that import it (relative imports that resolve to a scanned file).
fn importers(files: &BTreeMap<String, Vec<String>>) -> BTreeMap<&str, Vec<&str>> {
    let mut importers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (path, specifiers) in files {
        for specifier in specifiers {
            if let Some(target) = resolve(files, path, specifier) {
                importers.entry(target).or_default().push(path);
            }
        }
    }
    importers
}

/// `path` and every file that imports it, directly or not.
fn dependents<'a>(importers: &BTreeMap<&'a str, Vec<&'a str>>, path: &'a str) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::from([path]);
    let mut pending = vec![path];
    while let Some(at) = pending.pop() {
        for &next in importers.get(at).into_iter().flatten() {
            if seen.insert(next) {
                pending.push(next);
            }
        }
    }
    seen
}

/// The scanned file the relative `specifier` in the file at `from` loads, as Node, TypeScript
/// and the runners resolve it: the path itself, with a source extension, as a directory's
/// `index`, or a `.js`-family name standing for its TypeScript source.
fn resolve<'a>(
    files: &'a BTreeMap<String, Vec<String>>,
    from: &str,
    specifier: &str,
) -> Option<&'a str> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in specifier.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let base = parts.join("/");
    let mut candidates = vec![base.clone()];
    for extension in SOURCE_EXTENSIONS {
        candidates.push(format!("{base}.{extension}"));
    }
    for extension in SOURCE_EXTENSIONS {
        candidates.push(format!("{base}/index.{extension}"));
    }
    for (js, ts) in [
        ("js", "ts"),
        ("js", "tsx"),
        ("jsx", "tsx"),
        ("mjs", "mts"),
        ("cjs", "cts"),
    ] {
        if let Some(stem) = base.strip_suffix(&format!(".{js}")) {
            candidates.push(format!("{stem}.{ts}"));
        }
    }
    candidates
        .into_iter()
        .find_map(|candidate| files.get_key_value(&candidate).map(|(k, _)| k.as_str()))
}

/// A token of JS/TS source, as far as finding imports needs.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Punct(char),
    Str(String),
}

/// The relative module specifiers (`./x`, `../y/z`) JS/TS source `text` imports: the string
/// after `from` or `import`, or inside `require(` / `import(`, outside comments.
pub fn specifiers(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    let mut found = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Token::Str(specifier) = token else {
            continue;
        };
        let word = |at: Option<usize>, names: &[&str]| {
            at.and_then(|at| tokens.get(at))
                .is_some_and(|t| matches!(t, Token::Word(w) if names.contains(&w.as_str())))
        };
        let direct = word(i.checked_sub(1), &["from", "import"]);
        let called = i >= 2
            && tokens[i - 1] == Token::Punct('(')
            && word(Some(i - 2), &["require", "import"]);
        let relative = specifier == "."
            || specifier == ".."
            || specifier.starts_with("./")
            || specifier.starts_with("../");
        if (direct || called) && relative {
            found.push(specifier.clone());
        }
    }
    found
}

/// The tokens of `text`: words, punctuation and string literals (a template literal with a
/// substitution is punctuation); comments and whitespace are dropped. A string ends at its
/// closing quote or the end of its line.
fn tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if chars.peek() == Some(&'/') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut star = false;
                for next in chars.by_ref() {
                    if star && next == '/' {
                        break;
                    }
                    star = next == '*';
                }
            }
            '\'' | '"' | '`' => {
                let mut value = String::new();
                let mut escaped = false;
                for next in chars.by_ref() {
                    if escaped {
                        escaped = false;
                        value.push(next);
                    } else if next == '\\' {
                        escaped = true;
                    } else if next == c || (next == '\n' && c != '`') {
                        break;
                    } else {
                        value.push(next);
                    }
                }
                tokens.push(if c == '`' && value.contains("${") {
                    Token::Punct('`')
                } else {
                    Token::Str(value)
                });
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut word = String::from(c);
                while let Some(&next) = chars.peek() {
                    if !(next.is_alphanumeric() || next == '_' || next == '$') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
            c => tokens.push(Token::Punct(c)),
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::words;

    #[test]
    fn runners_are_recognised_with_neutral_flags_only() {
        let none = Path::new("/nonexistent");
        let recognised = |command: &str| NodeTests::recognise(&words(command), none);
        let jest = recognised("npx jest --ci --maxWorkers=2").expect("npx jest");
        assert_eq!(
            (jest.runner, jest.program, jest.flags),
            (
                Runner::Jest,
                words("npx jest"),
                words("--ci --maxWorkers=2")
            )
        );
        let vitest = recognised("vitest run --reporter=dot").expect("vitest run");
        assert_eq!(
            (vitest.runner, vitest.program, vitest.flags),
            (Runner::Vitest, words("vitest"), words("--reporter=dot"))
        );
        assert!(recognised("npx vitest").is_some());
        for command in [
            "jest src/a.test.js",
            "jest -t adds",
            "jest --config other.js",
            "jest --watch",
            "vitest watch",
            "vitest run src",
            "npx mocha",
            "npm test",
            "npm run lint",
            "node test.js",
        ] {
            assert_eq!(recognised(command), None, "{command}");
        }
    }

    #[test]
    fn a_package_script_is_read_and_run_from_node_modules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
        std::fs::write(root.join("node_modules/.bin/jest"), "").unwrap();
        let with = |manifest: &str, command: &str| {
            std::fs::write(root.join("package.json"), manifest).unwrap();
            NodeTests::recognise(&words(command), root).map(|t| t.program)
        };
        let script = r#"{"scripts": {"test": "jest --ci"}}"#;
        for command in [
            "npm test",
            "npm t",
            "npm run test",
            "yarn test",
            "pnpm run test",
        ] {
            assert_eq!(
                with(script, command),
                Some(words("node_modules/.bin/jest")),
                "{command}"
            );
        }
        assert_eq!(
            with(r#"{"scripts": {"test": "npx jest"}}"#, "npm test"),
            Some(words("npx jest"))
        );
        for manifest in [
            r#"{"scripts": {"test": "vitest"}}"#,
            r#"{"scripts": {"test": "jest && eslint ."}}"#,
            r#"{"scripts": {"test": "jest", "pretest": "tsc"}}"#,
            r#"{"scripts": {"test": "jest src"}}"#,
            r#"{"scripts": {}}"#,
            "not json",
        ] {
            assert_eq!(with(manifest, "npm test"), None, "{manifest}");
        }
    }

    #[test]
    fn imports_are_read_outside_comments() {
        let source = r#"
import a from './a';
import { b } from "../lib/b.js";
import './side-effect';
export * from './re';
const c = require('./c');
const d = await import('./d');
import React from 'react';
// import x from './commented';
/* require('./blocked') */
const e = `./not-an-import`;
const f = require(`./f`);
const g = require(`./g/${name}`);
"#;
        assert_eq!(
            specifiers(source),
            [
                "./a",
                "../lib/b.js",
                "./side-effect",
                "./re",
                "./c",
                "./d",
                "./f"
            ]
        );
    }

    #[test]
    fn specifiers_resolve_like_node_and_typescript() {
        let files: BTreeMap<String, Vec<String>> =
            ["src/a.ts", "src/b/index.js", "src/c.tsx", "lib/d.js"]
                .into_iter()
                .map(|p| (p.to_owned(), Vec::new()))
                .collect();
        let from = "src/x.test.ts";
        assert_eq!(resolve(&files, from, "./a"), Some("src/a.ts"));
        assert_eq!(resolve(&files, from, "./a.js"), Some("src/a.ts"));
        assert_eq!(resolve(&files, from, "./b"), Some("src/b/index.js"));
        assert_eq!(resolve(&files, from, "./c.jsx"), Some("src/c.tsx"));
        assert_eq!(resolve(&files, from, "../lib/d.js"), Some("lib/d.js"));
        assert_eq!(resolve(&files, from, "./missing"), None);
        assert_eq!(resolve(&files, from, "../../../out"), None);
    }

    #[test]
    fn test_files_are_the_runners_defaults() {
        assert!(Runner::Jest.is_test("src/__tests__/a.js"));
        assert!(Runner::Jest.is_test("src/a.test.ts"));
        assert!(Runner::Jest.is_test("a.spec.jsx"));
        assert!(!Runner::Jest.is_test("src/a.js"));
        assert!(!Runner::Vitest.is_test("src/__tests__/a.js"));
        assert!(Runner::Vitest.is_test("src/a.test.mts"));
        assert!(!is_source("src/types.d.ts"));
        assert!(is_whole_suite("src/__mocks__/fs.js"));
        assert!(is_whole_suite("jest.config.ts"));
    }

    proptest::proptest! {
        /// Any text, however broken, gives only relative specifiers, and each resolves to a
        /// scanned file or nothing.
        #[test]
        fn any_text_gives_relative_specifiers(text in r#"(import|from|require|\(|'\.\./?[a-z/]*'|"\./x"|//|/\*|\*/|`|\$\{|\n| |[a-z])*"#) {
            let files: BTreeMap<String, Vec<String>> =
                [("src/x.js".to_owned(), Vec::new())].into_iter().collect();
            for specifier in specifiers(&text) {
                proptest::prop_assert!(specifier.starts_with('.'), "{specifier}");
                let resolved = resolve(&files, "src/a/b.test.js", &specifier);
                proptest::prop_assert!(resolved.is_none() || resolved == Some("src/x.js"));
            }
        }
    }
}
