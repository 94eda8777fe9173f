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
//! [`scan`](super::scan) (`specifiers`): `import … from`, `export … from`, `import '…'`, `import('…')`,
//! `require('…')`, outside comments. A changed file reached some other way (a setup file, a path
//! alias, a mock, a fixture read at run time) runs the command as configured: the runner would
//! relate no test to it. The counts in the message are those test files.
//!
//! Evidence, or everything: the runner relates a test to what it imports by a literal name only.
//! The scan also keeps each file's first load by a computed name ([`Source::dynamic`]:
//! `require('./' + name)`, `` import(`./${m}.js`) ``, `require(name)`, `jest.requireActual(x)`,
//! `createRequire`). When a test the narrowed command would leave out imports, directly or not, a
//! file with such a load, it may load a changed file unseen: the whole command runs and says so
//! (`` `src/a.test.js` reaches `src/plugins.js`, which loads modules by a computed name
//! (`require`) ``); a load no test reaches, or one in a test selected anyway, does not stop
//! narrowing. So does a runner configuration that maps module names to files
//! (`JEST_MAPPING` in `package.json`'s `jest` or a `jest.config.*`; `VITE_MAPPING` in a
//! vitest or vite configuration), read at every stop.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

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
        if let Some(because) = module_mapping(self.runner, workdir) {
            return Err(Whole::because(because));
        }
        let files = WALK.scan(workdir, state_dir).ok_or_else(Whole::unsaid)?;
        let tests: Vec<&str> = files
            .keys()
            .map(String::as_str)
            .filter(|path| self.runner.is_test(path))
            .collect();
        let importers = importers(&files);
        let mut selected = BTreeSet::new();
        let mut unreached = false;
        for &path in changed {
            let reaching: Vec<&str> = dependents(&importers, [path])
                .into_keys()
                .filter(|file| self.runner.is_test(file))
                .collect();
            unreached |= reaching.is_empty() || !files.contains_key(path);
            selected.extend(reaching);
        }
        // A test left out that reaches a load by a computed name may reach a changed file.
        let dynamic = files
            .iter()
            .filter(|(_, source)| source.dynamic.is_some())
            .map(|(path, _)| path.as_str());
        let reaching_dynamic = dependents(&importers, dynamic);
        let unseen = tests.iter().find_map(|test| {
            let file = reaching_dynamic
                .get(test)
                .filter(|_| !selected.contains(test))?;
            let form = files[*file].dynamic.as_deref()?;
            Some(super::python::reaching(test, file, form))
        });
        if let Some(because) = unseen {
            return Err(Whole::because(because));
        }
        // A changed file no test imports may still be loaded by one (a setup file, an alias).
        if unreached {
            return Err(Whole::unsaid());
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

/// The JS/TS sources of a worktree, their relative imports and dynamic forms.
const WALK: Walk<Source> = Walk {
    cache: "node-sources-v2",
    wanted: is_source,
    parse: Source::read,
};

/// For each file, the files that import it (relative imports that resolve to a scanned file).
fn importers(files: &BTreeMap<String, Source>) -> BTreeMap<&str, Vec<&str>> {
    let mut importers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (path, source) in files {
        for specifier in &source.specifiers {
            if let Some(target) = resolve(files, path, specifier) {
                importers.entry(target).or_default().push(path);
            }
        }
    }
    importers
}

/// Each of `sources` and every file that imports one, directly or not, with the source it
/// reaches (the first found).
fn dependents<'a>(
    importers: &BTreeMap<&'a str, Vec<&'a str>>,
    sources: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<&'a str, &'a str> {
    let mut seen = BTreeMap::new();
    let mut pending = Vec::new();
    for source in sources {
        if seen.insert(source, source).is_none() {
            pending.push(source);
        }
    }
    while let Some(at) = pending.pop() {
        let source = seen[at];
        for &next in importers.get(at).into_iter().flatten() {
            if let std::collections::btree_map::Entry::Vacant(entry) = seen.entry(next) {
                entry.insert(source);
                pending.push(next);
            }
        }
    }
    seen
}

/// Keys of the runner configuration that map module names to files: `jest --findRelatedTests`
/// and `vitest related` relate no test through them.
const JEST_MAPPING: &[&str] = &[
    "moduleNameMapper",
    "modulePaths",
    "moduleDirectories",
    "roots",
];
const VITE_MAPPING: &[&str] = &["alias", "tsconfigPaths"];

/// Why the runner's configuration in `workdir` maps modules (`` `jest.config.js` maps modules
/// (`moduleNameMapper`) ``): a key of `JEST_MAPPING` in `package.json`'s `jest` or anywhere
/// in a `jest.config.*`; for vitest, one of `VITE_MAPPING` anywhere in a `vitest.config.*`,
/// `vite.config.*` or `vitest.workspace.*`. A configuration that cannot be read counts.
fn module_mapping(runner: Runner, workdir: &Path) -> Option<String> {
    let (prefixes, keys): (&[&str], &[&str]) = match runner {
        Runner::Jest => (&["jest.config."], JEST_MAPPING),
        Runner::Vitest => (
            &["vitest.config.", "vite.config.", "vitest.workspace."],
            VITE_MAPPING,
        ),
    };
    let mut configs: Vec<String> = fs::read_dir(workdir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| prefixes.iter().any(|p| name.starts_with(p)))
        .collect();
    configs.sort();
    if runner == Runner::Jest && workdir.join("package.json").exists() {
        configs.insert(0, "package.json".to_owned());
    }
    configs.into_iter().find_map(|name| {
        let text = bounded::read_regular_text(&workdir.join(&name), bounded::MAX_CONFIG_BYTES);
        let Ok(text) = text else {
            return Some(format!("`{name}` could not be read"));
        };
        let key = if name == "package.json" {
            let json: serde_json::Value = serde_json::from_str(&text).ok()?;
            let jest = json.get("jest")?;
            keys.iter().find(|key| jest.get(**key).is_some())
        } else {
            keys.iter().find(|key| text.contains(**key))
        };
        key.map(|key| format!("`{name}` maps modules (`{key}`)"))
    })
}

/// The scanned file the relative `specifier` in the file at `from` loads, as Node, TypeScript
/// and the runners resolve it: the path itself, with a source extension, as a directory's
/// `index`, or a `.js`-family name standing for its TypeScript source.
fn resolve<'a, T>(files: &'a BTreeMap<String, T>, from: &str, specifier: &str) -> Option<&'a str> {
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

/// What the scan keeps of one JS/TS source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The relative module specifiers (`./x`, `../y/z`) it imports: the string after `from` or
    /// `import`, or inside `require(` / `import(`, outside comments.
    pub specifiers: Vec<String>,
    /// Its first load of a module by a computed name, as the end of a sentence about the file
    /// (`` loads modules by a computed name (`require`) ``): `require`, `import`,
    /// `jest.requireActual` or `jest.requireMock` called with anything but one string literal
    /// (`require('./' + name)`, `` import(`./${m}.js`) ``, `require(name)`), or `createRequire`
    /// anywhere; `None` when it has none.
    pub dynamic: Option<String>,
}

impl Source {
    /// What JS/TS source `text` imports.
    pub fn read(text: &str) -> Source {
        let tokens = tokens(text);
        let word = |at: Option<usize>, names: &[&str]| {
            at.and_then(|at| tokens.get(at))
                .is_some_and(|t| matches!(t, Token::Word(w) if names.contains(&w.as_str())))
        };
        let mut source = Source {
            specifiers: Vec::new(),
            dynamic: None,
        };
        for (i, token) in tokens.iter().enumerate() {
            match token {
                Token::Str(specifier) => {
                    let direct = word(i.checked_sub(1), &["from", "import"]);
                    let called = i >= 2
                        && tokens[i - 1] == Token::Punct('(')
                        && word(Some(i - 2), &["require", "import"]);
                    let relative = specifier == "."
                        || specifier == ".."
                        || specifier.starts_with("./")
                        || specifier.starts_with("../");
                    if (direct || called) && relative {
                        source.specifiers.push(specifier.clone());
                    }
                }
                Token::Word(name) if source.dynamic.is_none() => {
                    let loads = matches!(
                        name.as_str(),
                        "require" | "import" | "requireActual" | "requireMock"
                    ) && tokens.get(i + 1) == Some(&Token::Punct('('));
                    let literal = matches!(tokens.get(i + 2), Some(Token::Str(_)))
                        && matches!(
                            tokens.get(i + 3),
                            Some(Token::Punct(')') | Token::Punct(','))
                        );
                    if (loads && !literal) || name == "createRequire" {
                        source.dynamic =
                            Some(format!("loads modules by a computed name (`{name}`)"));
                    }
                }
                _ => {}
            }
        }
        source
    }
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
            Source::read(source).specifiers,
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
    fn loads_by_computed_names_are_dynamic() {
        let dynamic = |source: &str| Source::read(source).dynamic;
        for (source, name) in [
            ("const m = require('./' + name);", "require"),
            ("const m = await import(`./${m}.js`);", "import"),
            ("const m = require(name);", "require"),
            ("jest.requireActual(path.join(dir, 'x'));", "requireActual"),
            (
                "import { createRequire } from 'module';\nconst req = createRequire(import.meta.url);",
                "createRequire",
            ),
        ] {
            assert_eq!(
                dynamic(source),
                Some(format!("loads modules by a computed name (`{name}`)")),
                "{source}"
            );
        }
        for source in [
            "const a = require('./a');\nconst b = require(\"lodash\", 'x');",
            "const c = await import(`./c.js`);\nimport d from './d';",
            "// require(name)\nconst s = 'import(x)';",
            "jest.mock('./e');\njest.requireActual('./e');",
        ] {
            assert_eq!(dynamic(source), None, "{source}");
        }
    }

    /// A worktree of `files` (path, text) under a new temporary directory.
    fn worktree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// A shop where `src/plugins.test.js` reaches `src/plugins.js`, which requires plugins by a
    /// computed name, beside plainly imported `cart` (requiring `money`), `text` and `cli` (which
    /// no test imports, and loads by name too).
    const SHOP: &[(&str, &str)] = &[
        ("src/money.js", "exports.add = (a, b) => a + b;"),
        ("src/cart.js", "const { add } = require('./money');"),
        ("src/text.js", "exports.shout = (s) => s.toUpperCase();"),
        (
            "src/plugins.js",
            "exports.load = (name) => require('./' + name);",
        ),
        ("src/cli.js", "import(process.argv[2]);"),
        ("src/cart.test.js", "require('./cart');"),
        ("src/text.test.js", "require('./text');"),
        (
            "src/plugins.test.js",
            "const { load } = require('./plugins');",
        ),
    ];

    #[test]
    fn a_test_left_out_that_loads_by_computed_name_runs_everything() {
        let dir = worktree(SHOP);
        let jest = NodeTests::recognise(&words("jest --ci"), dir.path()).unwrap();
        let select = |changed: &[&str]| jest.select(changed, dir.path(), None);

        // `plugins.test.js` could load `money.js`: everything runs, and says why.
        assert_eq!(
            select(&["src/money.js"]),
            Err(Whole::because(
                "`src/plugins.test.js` reaches `src/plugins.js`, which loads modules by a \
                 computed name (`require`)"
            ))
        );
        // The loading test is selected anyway: narrowed.
        let narrowed = select(&["src/plugins.js"]).unwrap();
        assert_eq!(
            narrowed.command,
            "jest --ci --findRelatedTests src/plugins.js"
        );
        assert_eq!((narrowed.selected, narrowed.total), (1, 3));
    }

    #[test]
    fn a_load_by_computed_name_no_test_reaches_still_narrows() {
        let shop: Vec<(&str, &str)> = SHOP
            .iter()
            .copied()
            .filter(|(path, _)| !path.starts_with("src/plugins"))
            .collect();
        let dir = worktree(&shop);
        let jest = NodeTests::recognise(&words("npx jest"), dir.path()).unwrap();
        let narrowed = jest.select(&["src/money.js"], dir.path(), None).unwrap();
        assert_eq!(narrowed.command, "npx jest --findRelatedTests src/money.js");
        assert_eq!((narrowed.selected, narrowed.total), (1, 2));
    }

    #[test]
    fn a_runner_configuration_that_maps_modules_runs_everything() {
        let text = ("src/text.test.js", "require('./text');");
        let cart = ("src/cart.test.js", "require('./cart');");
        let source = ("src/text.js", "");
        let cart_source = ("src/cart.js", "");
        for (config, runner, because) in [
            (
                (
                    "package.json",
                    r#"{"jest": {"moduleNameMapper": {"^@/(.*)$": "<rootDir>/src/$1"}}}"#,
                ),
                "jest",
                "`package.json` maps modules (`moduleNameMapper`)",
            ),
            (
                (
                    "jest.config.js",
                    "module.exports = { roots: ['<rootDir>/src'] };",
                ),
                "jest",
                "`jest.config.js` maps modules (`roots`)",
            ),
            (
                (
                    "vite.config.ts",
                    "export default { resolve: { alias: { '@': '/src' } } };",
                ),
                "vitest run",
                "`vite.config.ts` maps modules (`alias`)",
            ),
        ] {
            let dir = worktree(&[config, text, cart, source, cart_source]);
            let tests = NodeTests::recognise(&words(runner), dir.path()).unwrap();
            assert_eq!(
                tests.select(&["src/text.js"], dir.path(), None),
                Err(Whole::because(because)),
                "{config:?}"
            );
        }
        // Other keys map nothing.
        let dir = worktree(&[
            ("package.json", r#"{"jest": {"testTimeout": 10}}"#),
            text,
            cart,
            source,
            cart_source,
        ]);
        let jest = NodeTests::recognise(&words("jest"), dir.path()).unwrap();
        assert!(jest.select(&["src/text.js"], dir.path(), None).is_ok());
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
            for specifier in Source::read(&text).specifiers {
                proptest::prop_assert!(specifier.starts_with('.'), "{specifier}");
                let resolved = resolve(&files, "src/a/b.test.js", &specifier);
                proptest::prop_assert!(resolved.is_none() || resolved == Some("src/x.js"));
            }
        }
    }
}
