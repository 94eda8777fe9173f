//! What a project's pytest configuration does to a run narrowed to some test modules.
//!
//! The configuration is the first of pytest's files at the root that pytest takes for one (read
//! by [`checkpoint_core::pytest_config`]), and `PYTEST_ADDOPTS` from the environment. The narrowed
//! run names test modules on pytest's command line, after the configured command's words; so:
//!
//! - **`addopts`** apply to it as to the whole run. Options that only change what is reported
//!   or how tests run (`-q`, `-ra`, `--tb=…`, `--strict-markers`, `--cov=…`, `-p no:…`, …) keep
//!   it narrowed, and so do the filters pytest applies to the collected tests (`FILTERS`:
//!   `-k`, `-m`, `--deselect`): they apply to a run given test modules as to the whole run, so
//!   the narrowed run is the selected modules' tests under the same filter, a subset of the
//!   whole run's. Any other option — one that leaves files out of collection (`--ignore`,
//!   `--ignore-glob`: pytest still collects a file named on its command line), runs other tests
//!   (`--lf`), collects more (`--doctest-modules`, `--pyargs`, a plugin `-p`), a path, or one not
//!   known here — runs the whole command, saying which. The same holds for the command's own
//!   flags.
//! - **`testpaths`** is ignored by pytest when paths are given, so the selection keeps to it
//!   itself: only test modules under one of its entries (a path, or a glob) are candidates.
//! - **`python_files`** says which files are test modules (glob patterns of file names); a
//!   pattern with a `/`, or for files that are not `.py`, runs the whole command.
//! - **`norecursedirs`** set by the project runs the whole command: pytest runs a test module
//!   named on its command line even inside a directory it would not enter.

use std::path::Path;

use checkpoint_core::pytest_config::{self, PytestConfig};
use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};

use super::Whole;
use crate::bounded;
use checkpoint_core::changes::file_name;

/// `addopts` words that change nothing about which tests run.
const NEUTRAL: &[&str] = &[
    "-q",
    "-qq",
    "--quiet",
    "-v",
    "-vv",
    "-vvv",
    "--verbose",
    "-x",
    "--exitfirst",
    "-s",
    "-l",
    "--showlocals",
    "--no-showlocals",
    "--strict",
    "--strict-markers",
    "--strict-config",
    "--no-header",
    "--no-summary",
    "--full-trace",
    "--disable-warnings",
    "--disable-pytest-warnings",
    "--cov-branch",
    "--runxfail",
    "--setup-show",
    "--code-highlight=yes",
    "--code-highlight=no",
];
/// `addopts` options whose value (`--tb=short` or `--tb short`) changes nothing about which tests
/// run: reporting, warnings, capture, import mode, logging, coverage, workers, timeouts.
const NEUTRAL_WITH_VALUE: &[&str] = &[
    "--tb",
    "--color",
    "--capture",
    "--import-mode",
    "--durations",
    "--durations-min",
    "--maxfail",
    "-W",
    "--pythonwarnings",
    "--log-level",
    "--log-format",
    "--log-date-format",
    "--log-cli-level",
    "--log-cli-format",
    "--log-cli-date-format",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-context",
    "-n",
    "--numprocesses",
    "--dist",
    "--timeout",
    "--junitxml",
    "--junit-xml",
    "--verbosity",
];

/// Options that deselect collected tests by keyword expression (`-k`), mark expression (`-m`) or
/// node id prefix (`--deselect`), given with a value (`-k expr`, `-kexpr`, `--deselect=id`).
/// pytest applies them after collection to whatever was collected, with the same node ids and
/// keywords in a narrowed run (the root directory is the configuration's), so they keep the
/// narrowing. Filters added to `addopts` by the agent are the integrity check's to catch
/// (`checkpoint_core::integrity`).
const FILTERS: &[&str] = &["-k", "-m", "--deselect"];

/// The test modules a pytest run collects, as the project's configuration says.
pub(super) struct Collection {
    /// `testpaths`' entries: a run narrowed to test modules keeps to those under one. Empty when
    /// not set (everywhere).
    testpaths: Vec<Entry>,
    /// `python_files`' patterns, matched against a file's name.
    python_files: GlobSet,
}

/// One `testpaths` entry: a path (`tests`), or a glob (`src/*/tests`).
enum Entry {
    Path(String),
    Glob(GlobMatcher),
}

impl Collection {
    /// The collection of a pytest run in `workdir`, with `addopts` from the environment
    /// variable `PYTEST_ADDOPTS` (`env_addopts`); the whole command, and why, when the
    /// configuration does something a narrowed run would not do alike.
    pub(super) fn of(workdir: &Path, env_addopts: Option<&str>) -> Result<Collection, Whole> {
        let (file, config) = configuration(workdir)?;
        if let Some(words) = env_addopts {
            let words = shlex::split(words)
                .ok_or_else(|| Whole::because("`PYTEST_ADDOPTS` has an unclosed quote"))?;
            neutral(&words, "`PYTEST_ADDOPTS`")?;
        }
        if let Some(addopts) = &config.addopts {
            neutral(&addopts.words, &format!("`addopts` in `{file}`"))?;
        }
        if config.norecursedirs.is_some() {
            return Err(Whole::because(format!(
                "`norecursedirs` in `{file}` changes what pytest collects"
            )));
        }
        let default = ["test_*.py".to_owned(), "*_test.py".to_owned()];
        let patterns = config
            .python_files
            .as_ref()
            .map_or(&default[..], |s| &s.words);
        let mut python_files = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = Glob::new(pattern)
                .ok()
                .filter(|_| !pattern.contains(['/', '\\']) && pattern.ends_with(".py"));
            python_files.add(glob.ok_or_else(|| {
                Whole::because(format!(
                    "`python_files` in `{file}` names files by more than their name (`{pattern}`)"
                ))
            })?);
        }
        let python_files = python_files.build().map_err(|_| Whole::unsaid())?;
        let mut testpaths = Vec::new();
        for entry in config.testpaths.iter().flat_map(|s| &s.words) {
            let trimmed = entry.trim_start_matches("./").trim_end_matches('/');
            if matches!(trimmed, "" | ".") {
                // The whole worktree: every test module is a candidate.
                testpaths.clear();
                break;
            }
            if trimmed.starts_with('/') || trimmed.split('/').any(|part| part == "..") {
                return Err(Whole::because(format!(
                    "`testpaths` in `{file}` names `{entry}`, outside the project"
                )));
            }
            testpaths.push(if trimmed.contains(['*', '?', '[']) {
                let glob = Glob::new(trimmed).map_err(|_| Whole::unsaid())?;
                Entry::Glob(glob.compile_matcher())
            } else {
                Entry::Path(trimmed.to_owned())
            });
        }
        Ok(Collection {
            testpaths,
            python_files,
        })
    }

    /// Whether the `.py` file at `path` (relative, `/`-separated) is a test module pytest
    /// collects in a run given no paths.
    pub(super) fn collects(&self, path: &str) -> bool {
        self.python_files.is_match(file_name(path)) && self.within_testpaths(path)
    }

    /// Whether `path` lies under one of `testpaths`' entries (or they are not set).
    fn within_testpaths(&self, path: &str) -> bool {
        if self.testpaths.is_empty() {
            return true;
        }
        let mut prefixes = vec![path];
        prefixes.extend(path.match_indices('/').map(|(at, _)| &path[..at]));
        self.testpaths.iter().any(|entry| {
            prefixes.iter().any(|prefix| match entry {
                Entry::Path(dir) => prefix == dir,
                Entry::Glob(glob) => glob.is_match(prefix),
            })
        })
    }
}

/// The pytest configuration in `workdir`, and its file's name: the first of pytest's files
/// pytest takes for its configuration; an empty one when there is none.
fn configuration(workdir: &Path) -> Result<(&'static str, PytestConfig), Whole> {
    for &name in pytest_config::FILES {
        let path = workdir.join(name);
        if !path.exists() {
            continue;
        }
        let text = bounded::read_regular_text(&path, bounded::MAX_CONFIG_BYTES)
            .map_err(|_| Whole::because(format!("`{name}` cannot be read")))?;
        match pytest_config::read(name, &text) {
            Ok(Some(config)) => return Ok((name, config)),
            Ok(None) => continue,
            Err(error) => return Err(Whole::because(error.to_string())),
        }
    }
    Ok(("", PytestConfig::default()))
}

/// Whether every option of `words` (`addopts`, from `source`) is one a narrowed run keeps alike:
/// it changes nothing about which tests run, or filters the collected tests ([`FILTERS`]); the
/// whole command, naming the first that is not, otherwise.
pub(super) fn neutral(words: &[String], source: &str) -> Result<(), Whole> {
    let mut words = words.iter().peekable();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        let report_chars = word.len() > 2
            && word.starts_with("-r")
            && word[2..].chars().all(|c| c.is_ascii_alphabetic());
        if NEUTRAL.contains(&word.as_str()) || report_chars {
            continue;
        }
        if name == "-p" || name == "-r" {
            // `-p no:NAME` turns a plugin off, in either run; `-p NAME` loads one that may
            // collect differently.
            let value = inline.map(str::to_owned).or_else(|| words.next().cloned());
            if name == "-r" || value.as_deref().is_some_and(|v| v.starts_with("no:")) {
                continue;
            }
            return Err(picks(source, word, value.as_deref()));
        }
        if NEUTRAL_WITH_VALUE.contains(&name) || FILTERS.contains(&name) {
            // pytest never takes a word starting with `-` for a value: `--cov --doctest-modules`
            // is two options (`--cov` takes a value only when one follows).
            if inline.is_none() {
                words.next_if(|value| !value.starts_with('-'));
            }
            continue;
        }
        // pytest-benchmark's options (`--benchmark-sort=fullname`, `--benchmark-skip`) say how
        // the benchmark tests run, are compared and reported, or skip them: test by test, in a
        // narrowed run alike. A value given as the next word is read as a word of its own.
        if word.starts_with("--benchmark-") {
            continue;
        }
        // A short option with its value attached (`-Werror`, `-n4`, `-k'not slow'`).
        let attached = ["-W", "-n", "-k", "-m"]
            .iter()
            .any(|short| word.len() > 2 && word.starts_with(short));
        if attached {
            continue;
        }
        // `--ignore` and `--ignore-glob` are shown with their value: what they leave out.
        let value = match (name, inline) {
            ("--ignore" | "--ignore-glob", None) => words
                .next_if(|value| !value.starts_with('-'))
                .map(String::as_str),
            _ => None,
        };
        return Err(picks(source, word, value));
    }
    Ok(())
}

/// The whole command, because `option` (with its `value`) in `source` leaves files out, collects
/// more, or is not known to leave the tests alone.
fn picks(source: &str, option: &str, value: Option<&str>) -> Whole {
    let shown = match value {
        Some(value) => format!("{option} {value}"),
        None => option.to_owned(),
    };
    Whole::because(format!(
        "{source} has `{shown}`, which may change which tests run"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        shlex::split(text).unwrap()
    }

    #[test]
    fn reporting_options_keep_the_narrowing() {
        for addopts in [
            "-ra --strict-markers --strict-config",
            "-q --tb=short --tb line -W error -Werror::DeprecationWarning",
            "--showlocals --capture=sys -p no:logging -p no:cacheprovider",
            "--import-mode=importlib --cov=pkg --cov-report term-missing -n 4 --durations=10",
            "-rxXs -vv --color=yes",
            "-l --benchmark-sort=fullname --benchmark-warmup=true --benchmark-skip",
            // `--cov` takes a value only when one follows (waitress, webob).
            "--cov -W always",
            "-W always --cov --cov-context=test --cov-report=term-missing",
        ] {
            assert_eq!(neutral(&words(addopts), "x"), Ok(()), "{addopts}");
        }
    }

    #[test]
    fn filters_of_the_collected_tests_keep_the_narrowing() {
        // pytest applies them to the tests of the modules a narrowed run names as to the whole
        // run's: the narrowed run is a subset of the whole run's tests either way.
        for addopts in [
            "-ra -k 'not slow'",
            "-m 'not property' --capture=sys",
            "-m integration -p no:logging",
            "--deselect=tests/test_a.py::test_x --deselect tests/test_b.py",
            "-kfast -m'not network'",
            "-q -k slow -k fast",
        ] {
            assert_eq!(neutral(&words(addopts), "x"), Ok(()), "{addopts}");
        }
    }

    #[test]
    fn options_that_pick_tests_or_are_unknown_run_everything() {
        for (addopts, shown) in [
            // pytest collects a file named on its command line even where these leave it out:
            // the narrowed run could run tests the whole run does not.
            ("-m 'not slow' --ignore tests/slow", "--ignore tests/slow"),
            ("--ignore-glob=*_slow.py", "--ignore-glob=*_slow.py"),
            ("--doctest-modules", "--doctest-modules"),
            ("--pyargs", "--pyargs"),
            ("-p xdoctest", "-p xdoctest"),
            ("--lf", "--lf"),
            ("tests/unit", "tests/unit"),
            ("--some-plugin-option", "--some-plugin-option"),
            // An option is no option's value: pytest reads `--doctest-modules` as itself.
            ("--cov --doctest-modules", "--doctest-modules"),
            ("--tb --lf", "--lf"),
            ("-k --ignore=tests/slow", "--ignore=tests/slow"),
            // A value as a word of its own, after an option taken alone.
            ("--benchmark-sort fullname", "fullname"),
            // Short options run together: not read here.
            ("-qk fast", "-qk"),
        ] {
            assert_eq!(
                neutral(&words(addopts), "`addopts` in `pytest.ini`"),
                Err(Whole::because(format!(
                    "`addopts` in `pytest.ini` has `{shown}`, which may change which tests run"
                ))),
                "{addopts}"
            );
        }
    }

    fn collection(files: &[(&str, &str)]) -> Result<Collection, Whole> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Collection::of(dir.path(), None)
    }

    #[test]
    fn testpaths_and_python_files_decide_the_candidates() {
        let config = collection(&[(
            "setup.cfg",
            "[tool:pytest]\ntestpaths = tests src/*/checks\npython_files = test_*.py *_solution.py\n",
        )])
        .map_err(|_| ())
        .unwrap();
        for path in [
            "tests/test_a.py",
            "tests/sub/test_b.py",
            "src/pkg/checks/test_c.py",
            "tests/mlk_solution.py",
        ] {
            assert!(config.collects(path), "{path}");
        }
        for path in [
            "bench/test_speed.py",
            "tests/a_test.py",
            "testsuite/test_a.py",
            "src/pkg/test_d.py",
            "tests/helpers.py",
        ] {
            assert!(!config.collects(path), "{path}");
        }
    }

    #[test]
    fn testpaths_of_the_whole_worktree_keep_every_candidate() {
        let config = collection(&[("pytest.ini", "[pytest]\ntestpaths = tests .\n")])
            .map_err(|_| ())
            .unwrap();
        assert!(config.collects("bench/test_speed.py"));
    }

    #[test]
    fn the_first_configuration_pytest_reads_decides() {
        // pytest reads `pytest.ini` (even empty) before `pyproject.toml`.
        let config = collection(&[
            ("pytest.ini", ""),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"--lf\"\n",
            ),
        ]);
        assert!(config.is_ok());
        let config = collection(&[
            ("tox.ini", "[tox]\n"),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"--lf\"\n",
            ),
        ]);
        assert!(config.is_err());
    }

    #[test]
    fn what_a_narrowed_run_would_do_differently_runs_everything() {
        for (files, because) in [
            (
                ("pytest.ini", "[pytest]\nnorecursedirs = legacy\n"),
                "`norecursedirs` in `pytest.ini` changes what pytest collects",
            ),
            (
                ("pytest.ini", "[pytest]\npython_files = tests/check_*.py\n"),
                "`python_files` in `pytest.ini` names files by more than their name \
                 (`tests/check_*.py`)",
            ),
            (
                ("pytest.ini", "[pytest]\ntestpaths = tests ../shared\n"),
                "`testpaths` in `pytest.ini` names `../shared`, outside the project",
            ),
            (
                ("pytest.ini", "[pytest]\naddopts = -k 'open\n"),
                "`pytest.ini` cannot be read as pytest reads it: `addopts` has an unclosed quote",
            ),
        ] {
            assert_eq!(
                collection(&[files]).err(),
                Some(Whole::because(because)),
                "{files:?}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Collection::of(dir.path(), Some("-m slow --lf")).err(),
            Some(Whole::because(
                "`PYTEST_ADDOPTS` has `--lf`, which may change which tests run"
            ))
        );
        assert!(Collection::of(dir.path(), Some("-m slow -k 'not db'")).is_ok());
    }
}
