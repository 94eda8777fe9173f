//! Which changed files are tests, which are protected, and the texts the analysis is given.

use globset::{GlobSet, GlobSetBuilder};

use crate::changes::file_name;
use crate::policy::IntegritySettings;
use crate::policy::rules::path_glob;

/// The two sides of one changed file; a side that does not exist, was not read, or could not be
/// read (too big, not UTF-8) is `None`, and the file then gets only the checks that need no text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sides {
    /// The text at `HEAD`.
    pub old: Option<String>,
    /// The text in the worktree.
    pub new: Option<String>,
}

/// Which files are tests (the per-ecosystem defaults plus `[integrity] tests`) and which are
/// protected (`[integrity] protected`). Globs are repository-relative; `*` does not cross `/`.
#[derive(Debug, Clone, Default)]
pub struct TestFiles {
    tests: GlobSet,
    protected: GlobSet,
}

impl TestFiles {
    /// The matcher of `settings`' globs (which policy loading has already checked).
    pub fn new(settings: &IntegritySettings) -> Result<TestFiles, globset::Error> {
        let set = |globs: &[String]| {
            globs
                .iter()
                .try_fold(GlobSetBuilder::new(), |mut set, glob| {
                    set.add(path_glob(glob)?);
                    Ok::<_, globset::Error>(set)
                })?
                .build()
        };
        Ok(TestFiles {
            tests: set(&settings.tests)?,
            protected: set(&settings.protected)?,
        })
    }

    /// Whether `path` is a test file: by the per-ecosystem defaults (anything under a `tests`
    /// or `__tests__` directory or under `src/test/`, `test_*.py`, `*_test.py`, `*_test.go`,
    /// `*.test.*`, `*.spec.*`, `*Test.java`, `*Tests.java`, `*IT.java`) or a configured glob.
    pub fn is_test(&self, path: &str) -> bool {
        is_default_test(path) || (!self.tests.is_empty() && self.tests.is_match(path))
    }

    /// Whether `path` matches a protected glob.
    pub fn is_protected(&self, path: &str) -> bool {
        !self.protected.is_empty() && self.protected.is_match(path)
    }
}

/// Whether `path` is a test file by the per-ecosystem defaults (see [`TestFiles::is_test`]).
/// Asked of every path of a change set, so it allocates nothing.
fn is_default_test(path: &str) -> bool {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    let mut previous = None;
    for dir in dirs.split('/').filter(|_| !dirs.is_empty()) {
        if matches!(dir, "tests" | "__tests__") || (previous == Some("src") && dir == "test") {
            return true;
        }
        previous = Some(dir);
    }
    // `test` or `spec` between the first and the last dot-separated part of the name.
    let mut parts = name.split('.').skip(1).peekable();
    let mut inner = false;
    while let Some(part) = parts.next() {
        inner |= parts.peek().is_some() && matches!(part, "test" | "spec");
    }
    let java = name
        .strip_suffix(".java")
        .is_some_and(|stem| ["Test", "Tests", "IT"].iter().any(|s| stem.ends_with(s)));
    inner
        || java
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
}

/// The name a test file is about, without test affixes and extensions: `calc` for
/// `test_calc.py`, `calc.test.js`, `calc_test.go`; `Calc` for `CalcTest.java`.
pub(super) fn subject_stem(path: &str) -> &str {
    let name = file_name(path);
    let stem = name.split('.').next().unwrap_or(name);
    let stem = stem.strip_prefix("test_").unwrap_or(stem);
    ["_test", "Tests", "Test", "IT"]
        .iter()
        .find_map(|suffix| stem.strip_suffix(suffix))
        .unwrap_or(stem)
}

/// The directory of `path`, `""` at the top.
pub(super) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}
