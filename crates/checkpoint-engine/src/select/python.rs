//! `python3 -m unittest` and `pytest` narrowed to the test modules a change can affect.
//!
//! Every `.py` file of the worktree (read by [`scan`](super::scan): at most 20,000, each a regular file of at
//! most 4 MiB; hidden directories, virtual environments, `node_modules`, `build`
//! and `dist` are skipped; what each imports is cached by its size, time and inode) is a module named by its path from the root, or from `src/` in a src
//! layout. Its imports are read statically, line by line ([`imports`]): `import a.b`, `from a.b
//! import c` (a submodule `a.b.c` too), relative imports, parenthesised and continued lines;
//! anywhere in the file, so an import inside a function counts. A test module is selected when
//! it, or a module it imports directly or not, changed. Imports made at run time
//! (`importlib.import_module`, `__import__`) are not seen.
//!
//! The test modules are the runner's: for unittest's default discovery, `test*.py` at the root
//! and in packages reachable from it (directories with `__init__.py`); for pytest,
//! `test_*.py` and `*_test.py` anywhere — and no selection when a pytest configuration sets
//! `testpaths`, `python_files`, `norecursedirs`, `addopts` or `rootdir`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::scan::Walk;
use super::{Narrowing, Whole};
use crate::bounded;
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// Changed Python files that change how every test runs.
const WHOLE_SUITE: &[&str] = &["conftest.py", "__init__.py", "setup.py", "__main__.py"];
/// Flags of the runners that change nothing about which tests run.
const NEUTRAL_FLAGS: &[&str] = &[
    "-q",
    "-qq",
    "-v",
    "-vv",
    "-x",
    "-s",
    "-l",
    "-b",
    "-f",
    "-c",
    "--quiet",
    "--verbose",
    "--exitfirst",
    "--failfast",
    "--buffer",
    "--catch",
    "--locals",
    "--no-header",
    "--strict-markers",
];
/// pytest configuration files, and the settings in them that change which tests run.
const PYTEST_CONFIGS: &[&str] = &["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"];
const PYTEST_CHOOSING: &[&str] = &[
    "testpaths",
    "python_files",
    "norecursedirs",
    "addopts",
    "rootdir",
];

/// Which runner a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Unittest,
    Pytest,
}

/// A unittest or pytest run the gate can narrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonTests {
    runner: Runner,
    /// The command's words; the selected test modules are added after them.
    words: Vec<String>,
}

impl PythonTests {
    /// `words` as `python3 -m unittest [flags]`, `pytest [flags]` or `python3 -m pytest
    /// [flags]`, with only flags that choose no tests.
    pub fn recognise(words: &[String]) -> Option<PythonTests> {
        let (program, args) = words.split_first()?;
        let (runner, flags) = if program == "pytest" {
            (Runner::Pytest, args)
        } else if is_python(program) {
            match args {
                [m, module, flags @ ..] if m == "-m" && module == "unittest" => {
                    (Runner::Unittest, flags)
                }
                [m, module, flags @ ..] if m == "-m" && module == "pytest" => {
                    (Runner::Pytest, flags)
                }
                _ => return None,
            }
        } else {
            return None;
        };
        let neutral = |flag: &String| {
            NEUTRAL_FLAGS.contains(&flag.as_str())
                || (runner == Runner::Pytest
                    && (flag.starts_with("--tb=") || flag.starts_with("--color=")))
        };
        flags.iter().all(neutral).then(|| PythonTests {
            runner,
            words: words.to_vec(),
        })
    }

    /// The selection for `changed` in the worktree at `workdir` (the import scan cached in
    /// `state_dir`, when given), or the whole command.
    pub fn select(&self, changed: &[&str], workdir: &Path, state_dir: Option<&Path>) -> Narrowing {
        let whole = |path: &&str| !path.ends_with(".py") || WHOLE_SUITE.contains(&file_name(path));
        if changed.iter().any(whole) {
            return Err(Whole::unsaid());
        }
        if self.runner == Runner::Pytest && pytest_chooses_tests(workdir) {
            return Err(Whole::unsaid());
        }
        let tree = Tree::scan(workdir, state_dir).ok_or_else(Whole::unsaid)?;
        let tests: Vec<&str> = match self.runner {
            Runner::Unittest => tree.unittest_modules(),
            Runner::Pytest => tree.pytest_modules(),
        };
        let changed: BTreeSet<&str> = changed.iter().copied().collect();
        let graph = tree.graph();
        let mut reached_changed = BTreeSet::new();
        let mut selected = Vec::new();
        for &test in &tests {
            let reached = graph.reachable(test);
            let hits: Vec<&str> = reached
                .iter()
                .copied()
                .filter(|file| changed.contains(file))
                .collect();
            if !hits.is_empty() {
                selected.push(test);
                reached_changed.extend(hits);
            }
        }
        // A changed file no test reaches may still be run by one (a script, a subprocess).
        if reached_changed.len() != changed.len() {
            return Err(Whole::unsaid());
        }
        // A path that reads as a flag would not be taken as a path.
        if selected.iter().any(|test| test.starts_with('-')) {
            return Err(Whole::unsaid());
        }
        let mut words = self.words.clone();
        for test in &selected {
            words.push(match self.runner {
                Runner::Unittest => module_name(test, "").ok_or_else(Whole::unsaid)?,
                Runner::Pytest => (*test).to_owned(),
            });
        }
        super::narrowed(
            &words,
            SelectionUnit::TestModules,
            selected.len(),
            tests.len(),
            changed.len(),
        )
    }
}

/// `python`, `python3` or `python3.N`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether a pytest configuration file at the root sets something that chooses the tests.
fn pytest_chooses_tests(workdir: &Path) -> bool {
    PYTEST_CONFIGS.iter().any(|name| {
        let path = workdir.join(name);
        if !path.exists() {
            return false;
        }
        match bounded::read_regular_text(&path, bounded::MAX_CONFIG_BYTES) {
            Ok(text) => PYTEST_CHOOSING.iter().any(|key| text.contains(key)),
            Err(_) => true,
        }
    })
}

/// The `.py` files of a worktree with their imports, by `/`-separated relative path.
struct Tree {
    files: BTreeMap<String, Vec<Import>>,
    /// Whether `src/` is a source root (a src layout).
    src_layout: bool,
}

/// The `.py` files of a worktree and their imports.
const WALK: Walk<Vec<Import>> = Walk {
    cache: "python-imports-v1",
    wanted: |name| name.ends_with(".py"),
    parse: imports,
};

impl Tree {
    /// Reads every `.py` file under `workdir` (see [`scan`](super::scan)); `None` when there are too many, or
    /// one cannot be read.
    fn scan(workdir: &Path, state_dir: Option<&Path>) -> Option<Tree> {
        let files = WALK.scan(workdir, state_dir)?;
        let src_layout = workdir.join("src").is_dir() && !files.contains_key("src/__init__.py");
        Some(Tree { files, src_layout })
    }

    /// What `python3 -m unittest` discovers: `test*.py` at the root and in the packages reached
    /// from it through directories with `__init__.py`.
    fn unittest_modules(&self) -> Vec<&str> {
        let in_packages = |path: &str| {
            let mut dir = path;
            while let Some((parent, _)) = dir.rsplit_once('/') {
                if !self.files.contains_key(&format!("{parent}/__init__.py")) {
                    return false;
                }
                dir = parent;
            }
            true
        };
        self.files
            .keys()
            .map(String::as_str)
            .filter(|path| file_name(path).starts_with("test") && in_packages(path))
            .collect()
    }

    /// What pytest collects by default: `test_*.py` and `*_test.py` anywhere.
    fn pytest_modules(&self) -> Vec<&str> {
        self.files
            .keys()
            .map(String::as_str)
            .filter(|path| {
                let name = file_name(path);
                name.starts_with("test_") || name.ends_with("_test.py")
            })
            .collect()
    }

    /// The import graph: for each file, the files it imports.
    fn graph(&self) -> Graph<'_> {
        let mut by_module: BTreeMap<String, &str> = BTreeMap::new();
        for path in self.files.keys() {
            for root in self.roots() {
                if let Some(name) = module_name(path, root) {
                    by_module.entry(name).or_insert(path);
                }
            }
        }
        let edges = self
            .files
            .iter()
            .map(|(path, imports)| {
                let package = package_of(path);
                let targets = imports
                    .iter()
                    .filter_map(|import| import.resolve(package.as_deref()))
                    .flatten()
                    .flat_map(|name| with_parents(&name))
                    .filter_map(|name| by_module.get(&name).copied())
                    .collect();
                (path.as_str(), targets)
            })
            .collect();
        Graph { edges }
    }

    /// The directories module names are taken from.
    fn roots(&self) -> Vec<&'static str> {
        if self.src_layout {
            vec!["", "src/"]
        } else {
            vec![""]
        }
    }
}

/// The dotted module name of the file at `path` under the source root `root` (`""` or a prefix
/// ending in `/`): `pkg/mod.py` is `pkg.mod`, `pkg/__init__.py` is `pkg`.
fn module_name(path: &str, root: &str) -> Option<String> {
    let stem = path.strip_prefix(root)?.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let valid = stem
        .split('/')
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'));
    valid.then(|| stem.replace('/', "."))
}

/// The package a relative import in the file at `path` starts from: its directory, dotted.
fn package_of(path: &str) -> Option<String> {
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    Some(dir.replace('/', "."))
}

/// `name` and each of its parents (`a.b.c`, `a.b`, `a`): importing a module runs its packages'
/// `__init__` first.
fn with_parents(name: &str) -> Vec<String> {
    let mut names = vec![name.to_owned()];
    let mut rest = name;
    while let Some((parent, _)) = rest.rsplit_once('.') {
        names.push(parent.to_owned());
        rest = parent;
    }
    names
}

/// One import statement's target, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// Leading dots of a relative import (0 for an absolute one).
    pub level: usize,
    /// The module after the dots (may be empty: `from . import x`).
    pub module: String,
    /// The names imported from it (`from m import a, b`), which may be submodules.
    pub names: Vec<String>,
}

impl Import {
    /// The absolute module names this import may load, seen from the package `package` (for a
    /// relative import); `None` when it climbs above the root.
    fn resolve(&self, package: Option<&str>) -> Option<Vec<String>> {
        let base = if self.level == 0 {
            self.module.clone()
        } else {
            let mut parts: Vec<&str> = package?.split('.').filter(|p| !p.is_empty()).collect();
            for _ in 1..self.level {
                parts.pop()?;
            }
            if !self.module.is_empty() {
                parts.push(&self.module);
            }
            parts.join(".")
        };
        let mut names: Vec<String> = self
            .names
            .iter()
            .map(|name| {
                if base.is_empty() {
                    name.clone()
                } else {
                    format!("{base}.{name}")
                }
            })
            .collect();
        if !base.is_empty() {
            names.push(base);
        }
        Some(names)
    }
}

/// The imports in Python source `text`, read line by line: `import a, b.c as d`, `from x.y
/// import (a, b)`, `from . import z`, with parenthesised and backslash-continued lines joined.
/// Anything else is ignored; a string that looks like an import counts (more is selected, never
/// less).
pub fn imports(text: &str) -> Vec<Import> {
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut statement = strip_comment(line).trim().to_owned();
        if !(statement.starts_with("import ") || statement.starts_with("from ")) {
            continue;
        }
        while statement.ends_with('\\') || (statement.contains('(') && !statement.contains(')')) {
            if statement.ends_with('\\') {
                statement.pop();
            }
            let Some(next) = lines.next() else { break };
            statement.push(' ');
            statement.push_str(strip_comment(next).trim());
        }
        for one in statement.split(';') {
            found.extend(parse_statement(one.trim()));
        }
    }
    found
}

/// `line` without a trailing `# comment`.
fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(code, _)| code)
}

/// One `import …` or `from … import …` statement.
fn parse_statement(statement: &str) -> Vec<Import> {
    let identifiers = |list: &str| -> Vec<String> {
        list.split(',')
            .filter_map(|item| item.split_whitespace().next())
            .map(|name| name.trim_matches(|c| c == '(' || c == ')').to_owned())
            .filter(|name| is_dotted_identifier(name))
            .collect()
    };
    if let Some(list) = statement.strip_prefix("import ") {
        return identifiers(list)
            .into_iter()
            .map(|module| Import {
                level: 0,
                module,
                names: Vec::new(),
            })
            .collect();
    }
    let Some(rest) = statement.strip_prefix("from ") else {
        return Vec::new();
    };
    let Some((source, list)) = rest.split_once(" import ") else {
        return Vec::new();
    };
    let source = source.trim();
    let module = source.trim_start_matches('.');
    if !module.is_empty() && !is_dotted_identifier(module) {
        return Vec::new();
    }
    let names = identifiers(list.replace(['(', ')'], " ").as_str())
        .into_iter()
        .filter(|name| !name.contains('.'))
        .collect();
    vec![Import {
        level: source.len() - module.len(),
        module: module.to_owned(),
        names,
    }]
}

/// Whether `name` is `a.b.c` of identifiers.
fn is_dotted_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// Which file imports which.
struct Graph<'a> {
    edges: BTreeMap<&'a str, Vec<&'a str>>,
}

impl<'a> Graph<'a> {
    /// `file` and every file it imports, directly or not.
    fn reachable(&self, file: &'a str) -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::from([file]);
        let mut pending = vec![file];
        while let Some(at) = pending.pop() {
            for &next in self.edges.get(at).into_iter().flatten() {
                if seen.insert(next) {
                    pending.push(next);
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::words;

    #[test]
    fn runners_are_recognised_with_neutral_flags_only() {
        for command in [
            "python3 -m unittest -q",
            "python -m unittest",
            "python3.12 -m unittest -v -b",
            "pytest -x -q",
            "pytest --tb=short",
            "python3 -m pytest -q",
        ] {
            assert!(
                PythonTests::recognise(&words(command)).is_some(),
                "{command}"
            );
        }
        for command in [
            "python3 -m unittest discover -s tests",
            "python3 -m unittest test_calc",
            "pytest tests/",
            "pytest -k fast",
            "pytest -m 'not slow'",
            "python3 -m pip install x",
            "python3 run_tests.py",
            "pythonista -m unittest",
        ] {
            assert_eq!(PythonTests::recognise(&words(command)), None, "{command}");
        }
    }

    fn import(level: usize, module: &str, names: &[&str]) -> Import {
        Import {
            level,
            module: module.to_owned(),
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    #[test]
    fn every_import_form_is_read() {
        let source = "\
import os, a.b as ab  # comment
from x.y import (
    one,  # the first
    two as deux,
)
from . import sibling
from ..up import thing
    from lazy import late
from long import \\
    cont
import_me = 1
fromage = 2
";
        assert_eq!(
            imports(source),
            [
                import(0, "os", &[]),
                import(0, "a.b", &[]),
                import(0, "x.y", &["one", "two"]),
                import(1, "", &["sibling"]),
                import(2, "up", &["thing"]),
                import(0, "lazy", &["late"]),
                import(0, "long", &["cont"]),
            ]
        );
    }

    #[test]
    fn relative_imports_resolve_from_the_package() {
        let names = |i: Import, package: &str| i.resolve(Some(package));
        assert_eq!(
            names(import(1, "", &["b"]), "pkg.sub"),
            Some(vec!["pkg.sub.b".to_owned(), "pkg.sub".to_owned()])
        );
        assert_eq!(
            names(import(2, "m", &[]), "pkg.sub"),
            Some(vec!["pkg.m".to_owned()])
        );
        assert_eq!(names(import(3, "m", &[]), "pkg"), None);
    }

    #[test]
    fn module_names_follow_the_path() {
        assert_eq!(module_name("pkg/mod.py", "").as_deref(), Some("pkg.mod"));
        assert_eq!(module_name("pkg/__init__.py", "").as_deref(), Some("pkg"));
        assert_eq!(
            module_name("src/pkg/a.py", "src/").as_deref(),
            Some("pkg.a")
        );
        assert_eq!(module_name("my-scripts/a.py", ""), None);
    }
}
