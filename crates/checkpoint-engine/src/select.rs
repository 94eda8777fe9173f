//! Affected-test selection: a test command the gate recognises is narrowed to the tests the
//! changed files can affect, from the repository's own structure.
//!
//! | command | what is selected | from |
//! |---|---|---|
//! | `cargo test [flags]` | the packages that read a changed file — as the last build's dep-info records (modules, `include_str!`/`include_bytes!` files, build script inputs), or as their own `.rs` source — and every workspace package that depends on them, directly or not (`-p` each) | `cargo metadata --no-deps` and cargo's dep-info in the target directory ([`cargo`]) |
//! | `python3 -m unittest [flags]`, `pytest [flags]` | the test modules that import a changed module, directly or not, and changed test modules; everything, saying why, when a test left out reaches a dynamic form (import by a computed name, `pkgutil`, entry points, `sys.path`, a started project file) | a static scan of every module's `import` lines and dynamic forms, cached ([`python`]) |
//! | `go test [flags] [./patterns]` | the packages that own a changed file (Go source, a file they embed, a file under their `testdata/`) and the module's packages that import them, directly or not | `go list -json` ([`go`]) |
//! | `[npx] jest [flags]`, `[npx] vitest [run] [flags]`, `npm`/`yarn`/`pnpm test` running one of them | the tests the runner relates to the changed files (`--findRelatedTests`, `vitest related`), once a static scan has found a test importing each; everything, saying why, when a test left out reaches a `require`/`import(` of a computed name, or the runner configuration maps modules (`moduleNameMapper`, `roots`, `modulePaths`, `moduleDirectories`, `alias`) | a static scan of every source's relative imports and computed loads, cached ([`node`]) |
//!
//! Anything else, and any doubt, runs the command as configured: a command with shell syntax,
//! flags that already choose what runs, a changed build file (`Cargo.toml`, `Cargo.lock`,
//! `conftest.py`, `__init__.py`, `setup.py`, `go.mod`, `go.sum`, `package.json`, a lock file,
//! runner configuration), a changed file the structure does not explain (outside every package;
//! a Python or JS/TS file no test reaches; a file no package's build recorded reading for
//! Cargo; anything but `.py` for Python, a Go file or one a package embeds or holds in its
//! `testdata/` for Go, JS/TS sources for jest and vitest), a path that is not UTF-8, or a
//! selection that is everything anyway; where evidence was missing, the stop says why all the
//! tests ran ([`Whole::because`]). Selection narrows what runs; it never runs a test the configured command would not.
//! The scans are cached in the project's state directory ([`scan`]).

pub mod cargo;
pub mod go;
pub mod node;
pub mod pytest;
pub mod python;
pub mod scan;

use std::collections::BTreeSet;
use std::path::Path;

use checkpoint_core::outcome::{Selection, SelectionUnit};
use checkpoint_core::shared::Reach;

/// Characters that make a command more than plain words: it is then run as configured.
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '\\', '#', '*', '?', '[', ']', '~', '!',
    '\n', '\r',
];

/// What a command runs for a change set: the tests the changed files can affect
/// ([`Selection`]), or the whole command ([`Whole`]).
pub type Narrowing = Result<Selection, Whole>;

/// The whole command runs: the command is not one the gate narrows, or nothing is known to
/// narrow it by — and, where that is worth telling, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Whole {
    /// Why no narrowing was possible where one was asked for, in one line (`` `tests/test_b.py`
    /// imports modules by name ``); `None` when there is nothing worth telling (the command is
    /// not recognised, the selection would be everything anyway).
    pub because: Option<String>,
}

impl Whole {
    /// The whole command, with nothing worth telling.
    pub fn unsaid() -> Whole {
        Whole::default()
    }

    /// The whole command, for want of evidence: `because` says what is missing.
    pub fn because(because: impl Into<String>) -> Whole {
        Whole {
            because: Some(because.into()),
        }
    }
}

/// The narrowed form of `command` for the changed files `changed` (repository-relative, `/`
/// separated: those that asked for the command) in the worktree at `workdir`, or the whole
/// command. Source scans are cached in `state_dir` when given.
pub fn select(
    command: &str,
    changed: &[&str],
    workdir: &Path,
    state_dir: Option<&Path>,
) -> Narrowing {
    if changed.is_empty() {
        return Err(Whole::unsaid());
    }
    let words = plain_words(command).ok_or_else(Whole::unsaid)?;
    if let Some(cargo) = cargo::CargoTest::recognise(&words) {
        return cargo.select(changed, workdir);
    }
    if let Some(python) = python::PythonTests::recognise(&words) {
        return python.select(changed, workdir, state_dir);
    }
    if let Some(go) = go::GoTest::recognise(&words) {
        return go.select(changed, workdir);
    }
    if let Some(node) = node::NodeTests::recognise(&words, workdir) {
        return node.select(changed, workdir, state_dir);
    }
    Err(Whole::unsaid())
}

/// The tests the changed files `changed` reach for `command` (see [`Reach`]): the test modules
/// a Python command (`pytest`, `python3 -m unittest`) would select for them, as its output names
/// tests (`tests/test_a.py`, `tests.test_a`); no files reach nothing. `None` — it cannot be told
/// — for every other runner and wherever the selection would run the whole command for want of
/// evidence.
pub fn reach(command: &str, changed: &[&str], workdir: &Path, state_dir: Option<&Path>) -> Reach {
    if changed.is_empty() {
        return Some(BTreeSet::new());
    }
    let words = plain_words(command)?;
    let python = python::PythonTests::recognise(&words)?;
    let (reached, _) = python.reached(changed, workdir, state_dir).ok()?;
    Some(reached.into_iter().collect())
}

/// The words of `command` when it is plain words (quotes allowed, no other shell syntax).
fn plain_words(command: &str) -> Option<Vec<String>> {
    if command.contains(SHELL_SYNTAX) {
        return None;
    }
    shlex::split(command).filter(|words| !words.is_empty())
}

/// `path` with `/` separators; `None` when it is not UTF-8.
fn slash_path(path: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = path.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// The selection that runs `words` in place of the configured command: `selected` of the
/// `total` units the command runs, for `changed_files` changed files; the whole command when it
/// selects nothing or everything, or the words cannot be one command line.
fn narrowed(
    words: &[String],
    unit: SelectionUnit,
    selected: usize,
    total: usize,
    changed_files: usize,
) -> Narrowing {
    if selected == 0 || selected >= total {
        return Err(Whole::unsaid());
    }
    Ok(Selection {
        command: command_line(words).ok_or_else(Whole::unsaid)?,
        unit,
        selected,
        total,
        changed_files,
    })
}

/// `words` as one shell command line, each quoted as needed.
fn command_line(words: &[String]) -> Option<String> {
    shlex::try_join(words.iter().map(String::as_str)).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The words of a command line, for the recognisers' tests.
    pub(crate) fn words(command: &str) -> Vec<String> {
        shlex::split(command).unwrap()
    }

    #[test]
    fn only_plain_words_are_understood() {
        assert_eq!(
            plain_words("cargo test -q"),
            Some(vec!["cargo".into(), "test".into(), "-q".into()])
        );
        assert_eq!(
            plain_words("pytest 'a b'"),
            Some(vec!["pytest".into(), "a b".into()])
        );
        for command in [
            "cargo test && rm -rf x",
            "cargo test; echo",
            "cargo test $(evil)",
            "pytest `evil`",
            "pytest tests/*",
            "pytest > out",
            "pytest 'unclosed",
            "",
        ] {
            assert_eq!(plain_words(command), None, "{command}");
        }
    }

    #[test]
    fn a_command_line_quotes_what_needs_it() {
        let words = ["pytest".to_owned(), "dir with space/test_a.py".to_owned()];
        assert_eq!(
            command_line(&words).as_deref(),
            Some("pytest 'dir with space/test_a.py'")
        );
    }
}
