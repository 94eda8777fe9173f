//! `python3 -m unittest` and `pytest` narrowed to the test modules a change can affect.
//!
//! Every `.py` file of the worktree (read by [`scan`](super::scan): at most 20,000, each a regular file of at
//! most 4 MiB; hidden directories, virtual environments, `node_modules`, `build`
//! and `dist` are skipped; what each imports is cached by its size, time and inode) is a module named by its path from the root, or from `src/` in a src
//! layout. Its imports are read statically, line by line ([`imports`]): `import a.b`, `from a.b
//! import c` (a submodule `a.b.c` too), relative imports, parenthesised and continued lines;
//! anywhere in the file, so an import inside a function counts; `importlib.import_module` and
//! `__import__` of one literal absolute name count as imports too. A module also loads its
//! package's `__init__.py`, and under pytest the `conftest.py` of its directory and of every
//! directory above. A test module is selected when it, or a module it reaches so, changed.
//!
//! Evidence, or everything: what a module reaches at run time is not in its imports. Each file's
//! first dynamic form ([`dynamic_forms`]: an import by a computed name, `pkgutil`, entry points,
//! `pytest_plugins`, loading from a file, `runpy`, any use of `sys.path`, or a started program
//! that may be a project file — `subprocess.run(["git", …])` is none) is cached with its
//! imports. When a test module the narrowed command would leave out reaches a file with such a
//! form (itself, a helper, a conftest), it may reach a changed module unseen: the whole command
//! runs and says so (`` `tests/test_b.py` imports modules by name (`importlib.import_module`)
//! ``). A form in a module no test reaches (a CLI's plugin loader) does not stop narrowing, nor
//! does one in a test module that is selected anyway.
//!
//! The test modules are the runner's: for unittest's default discovery, `test*.py` at the root
//! and in packages reachable from it (directories with `__init__.py`); for pytest,
//! the files `python_files` names (by default `test_*.py` and `*_test.py`), within `testpaths`
//! when it is set; `addopts` that leave files out, collect more or are unknown run the whole
//! command ([`pytest`](super::pytest)).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::pytest::Collection;
use super::scan::Walk;
use super::{Narrowing, Whole};
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// Changed Python files that change how every test runs.
const WHOLE_SUITE: &[&str] = &["conftest.py", "__init__.py", "setup.py", "__main__.py"];
/// Flags of unittest that change nothing about which tests run (pytest's: [`super::pytest`]).
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
        let neutral = match runner {
            Runner::Unittest => flags
                .iter()
                .all(|flag| NEUTRAL_FLAGS.contains(&flag.as_str())),
            Runner::Pytest => super::pytest::neutral(flags, "the command").is_ok(),
        };
        neutral.then(|| PythonTests {
            runner,
            words: words.to_vec(),
        })
    }

    /// The selection for `changed` in the worktree at `workdir` (the import scan cached in
    /// `state_dir`, when given), or the whole command.
    pub fn select(&self, changed: &[&str], workdir: &Path, state_dir: Option<&Path>) -> Narrowing {
        let (selected, total) = self.reached(changed, workdir, state_dir)?;
        let mut words = self.words.clone();
        words.extend(selected.iter().cloned());
        super::narrowed(
            &words,
            SelectionUnit::TestModules,
            selected.len(),
            total,
            changed.len(),
        )
    }

    /// The test modules `changed` reach, as the command names them (a pytest path, a unittest
    /// dotted module), with how many the command runs in all; the whole command when that
    /// cannot be told.
    pub fn reached(
        &self,
        changed: &[&str],
        workdir: &Path,
        state_dir: Option<&Path>,
    ) -> Result<(Vec<String>, usize), Whole> {
        let whole = |path: &&str| !path.ends_with(".py") || WHOLE_SUITE.contains(&file_name(path));
        if changed.iter().any(whole) {
            return Err(Whole::unsaid());
        }
        let collection = match self.runner {
            Runner::Pytest => {
                let env_addopts = std::env::var("PYTEST_ADDOPTS").ok();
                Some(Collection::of(workdir, env_addopts.as_deref())?)
            }
            Runner::Unittest => None,
        };
        let tree = Tree::scan(workdir, state_dir).ok_or_else(Whole::unsaid)?;
        let tests: Vec<&str> = match &collection {
            None => tree.unittest_modules(),
            Some(collection) => tree.pytest_modules(collection),
        };
        let changed: BTreeSet<&str> = changed.iter().copied().collect();
        let graph = tree.graph(self.runner);
        let mut reached_changed = BTreeSet::new();
        let mut selected = Vec::new();
        let mut unseen = None;
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
            } else if unseen.is_none() {
                unseen = tree.dynamic_in(test, &reached);
            }
        }
        // A test left out that reaches modules the scan cannot see may reach a changed one.
        if let Some(because) = unseen {
            return Err(Whole::because(because));
        }
        // A changed file no test reaches may still be run by one (a script, a subprocess).
        if reached_changed.len() != changed.len() {
            return Err(Whole::unsaid());
        }
        // A path that reads as a flag would not be taken as a path.
        if selected.iter().any(|test| test.starts_with('-')) {
            return Err(Whole::unsaid());
        }
        let named = (selected.iter())
            .map(|test| match self.runner {
                Runner::Unittest => module_name(test, "").ok_or_else(Whole::unsaid),
                Runner::Pytest => Ok((*test).to_owned()),
            })
            .collect::<Result<Vec<String>, Whole>>()?;
        Ok((named, tests.len()))
    }
}

/// `python`, `python3` or `python3.N`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The `.py` files of a worktree with what the scan read of them, by `/`-separated relative path.
struct Tree {
    files: BTreeMap<String, Module>,
    /// Whether `src/` is a source root (a src layout).
    src_layout: bool,
}

/// The `.py` files of a worktree, their imports and dynamic forms.
const WALK: Walk<Module> = Walk {
    cache: "python-modules-v2",
    wanted: |name| name.ends_with(".py"),
    parse: Module::read,
};

impl Tree {
    /// Reads every `.py` file under `workdir` (see [`scan`](super::scan)); `None` when there are too many, or
    /// one cannot be read.
    fn scan(workdir: &Path, state_dir: Option<&Path>) -> Option<Tree> {
        let files = WALK.scan(workdir, state_dir)?;
        let src_layout = workdir.join("src").is_dir() && !files.contains_key("src/__init__.py");
        Some(Tree { files, src_layout })
    }

    /// Why the test module `test`, which reaches the files `reached`, may reach modules the
    /// scan cannot see (`` `tests/test_b.py` imports modules by name (`__import__`) ``): the
    /// first dynamic form, in the test itself or else in the first file it reaches that has one.
    fn dynamic_in(&self, test: &str, reached: &BTreeSet<&str>) -> Option<String> {
        let form = |file: &str| self.files.get(file)?.dynamic.as_deref();
        if let Some(form) = form(test) {
            return Some(reaching(test, test, form));
        }
        reached
            .iter()
            .find_map(|&file| form(file).map(|form| reaching(test, file, form)))
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

    /// What pytest collects as `collection` says: by default `test_*.py` and `*_test.py`
    /// anywhere.
    fn pytest_modules(&self, collection: &Collection) -> Vec<&str> {
        self.files
            .keys()
            .map(String::as_str)
            .filter(|path| collection.collects(path))
            .collect()
    }

    /// The import graph: for each file, the files it imports, and those `runner` loads with it.
    fn graph(&self, runner: Runner) -> Graph<'_> {
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
            .map(|(path, module)| {
                let package = package_of(path);
                let mut targets: Vec<&str> = module
                    .imports
                    .iter()
                    .filter_map(|import| import.resolve(package.as_deref()))
                    .flatten()
                    .flat_map(|name| with_parents(&name))
                    .filter_map(|name| by_module.get(&name).copied())
                    .collect();
                targets.extend(self.implicit(path, runner));
                (path.as_str(), targets)
            })
            .collect();
        Graph { edges }
    }

    /// The files loaded with the file at `path` that it does not import by name: the
    /// `__init__.py` of its package (of the package above, for an `__init__.py`), and for pytest
    /// the `conftest.py` of its directory and of each directory above it.
    fn implicit(&self, path: &str, runner: Runner) -> Vec<&str> {
        let mut dirs = Vec::new();
        let mut dir = path;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            dirs.push(parent);
            dir = parent;
        }
        dirs.push("");
        let package = if file_name(path) == "__init__.py" {
            dirs.get(1)
        } else {
            dirs.first()
        };
        let mut wanted: Vec<String> = package
            .filter(|dir| !dir.is_empty())
            .map(|dir| format!("{dir}/__init__.py"))
            .into_iter()
            .collect();
        if runner == Runner::Pytest {
            wanted.extend(dirs.iter().map(|dir| match *dir {
                "" => "conftest.py".to_owned(),
                dir => format!("{dir}/conftest.py"),
            }));
        }
        wanted
            .iter()
            .filter_map(|file| self.files.get_key_value(file).map(|(k, _)| k.as_str()))
            .collect()
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

/// Why the whole command runs when the test `test` reaches `file`, whose dynamic form is
/// `form`: `` `tests/test_b.py` imports modules by name (`__import__`) `` when the form is in the
/// test itself, else `` `tests/test_b.py` reaches `tests/helpers.py`, which imports … ``.
pub(super) fn reaching(test: &str, file: &str, form: &str) -> String {
    if test == file {
        format!("`{test}` {form}")
    } else {
        format!("`{test}` reaches `{file}`, which {form}")
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

/// What the scan keeps of one `.py` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Module {
    /// Its imports: the statements, and `importlib.import_module` / `__import__` of one
    /// literal absolute name.
    pub imports: Vec<Import>,
    /// The first form in it that reaches modules its imports do not name, as the end of a
    /// sentence about the file (`` imports modules by name (`__import__`) ``); `None` when it
    /// has none.
    pub dynamic: Option<String>,
}

impl Module {
    /// What Python source `text` imports, statically and by the literal names of
    /// [`dynamic_forms`].
    pub fn read(text: &str) -> Module {
        let (literal, dynamic) = dynamic_forms(text);
        let mut imports = imports(text);
        imports.extend(literal.into_iter().map(|module| Import {
            level: 0,
            module,
            names: Vec::new(),
        }));
        Module { imports, dynamic }
    }
}

/// Calls that import the module their argument names.
const IMPORT_CALLS: &[&str] = &["import_module", "__import__"];
/// Names that load modules the source does not name (matched against a dotted name's last
/// part, or its first for modules), and what using them does.
const LOADERS: &[(&str, &str)] = &[
    ("import_string", "imports modules by name"),
    ("resolve_name", "imports modules by name"),
    ("pkgutil", "imports modules by name"),
    ("pydoc", "imports modules by name"),
    ("entry_points", "loads plugins by name"),
    ("iter_entry_points", "loads plugins by name"),
    ("load_entry_point", "loads plugins by name"),
    ("pytest_plugins", "loads plugins by name"),
    ("spec_from_file_location", "loads modules from files"),
    ("module_from_spec", "loads modules from files"),
    ("SourceFileLoader", "loads modules from files"),
    ("load_source", "loads modules from files"),
    ("runpy", "loads modules from files"),
    ("addsitedir", "edits the import path"),
];
/// Whether `module.function` starts a program: `subprocess.run`, `call`, `check_call`,
/// `check_output`, `Popen`, `getoutput`, `getstatusoutput`; `os.system`, `os.popen`,
/// `os.posix_spawn[p]`, `os.exec…`, `os.spawn…`; `pexpect.spawn`, `pexpect.run`; and
/// `create_subprocess_exec` / `_shell`, `subprocess_exec` / `_shell` of any object.
fn starts_program(module: &str, function: &str) -> bool {
    let of_module = match module {
        "subprocess" => matches!(
            function,
            "run"
                | "call"
                | "check_call"
                | "check_output"
                | "Popen"
                | "getoutput"
                | "getstatusoutput"
        ),
        "os" => {
            matches!(function, "system" | "popen")
                || ["posix_spawn", "exec", "spawn"]
                    .iter()
                    .any(|prefix| function.starts_with(prefix))
        }
        "pexpect" => matches!(function, "spawn" | "run"),
        _ => false,
    };
    of_module
        || matches!(
            function,
            "create_subprocess_exec"
                | "create_subprocess_shell"
                | "subprocess_exec"
                | "subprocess_shell"
        )
}

/// Programs that run other files: started by a test, they may run a project file.
const LAUNCHERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "env", "exec", "xargs", "nohup", "time", "make", "uv", "poetry",
    "pipenv", "pdm", "hatch", "tox", "nox", "coverage", "pytest", "py.test",
];

/// The literal absolute module names `text` imports through `IMPORT_CALLS` (`importlib.
/// import_module("a.b")`), and the first form in it that reaches modules no name in it shows:
///
/// - an import call of anything but one literal absolute name (`importlib.import_module(name)`,
///   `__import__("ca" + "lc")`, `import_module(f"pkg.{x}")`, `import_module(".m", "pkg")`), or
///   the function named anywhere outside an import statement (`load = importlib.import_module`);
/// - a name of `LOADERS`: `pkgutil`, `pydoc`, `import_string`, entry points,
///   `pytest_plugins`, `importlib.util.spec_from_file_location`, `runpy`, …;
/// - `sys.path` in any use, `site.addsitedir`;
/// - a started program that may be a project file: a `subprocess` call (`SUBPROCESS_CALLS`,
///   through `subprocess.`, an alias of it, or a name imported from it), `os.system`,
///   `os.popen`, `os.exec…`, `os.spawn…`, `asyncio.create_subprocess_…`, whose program is not
///   a literal bare name (`sys.executable`, a variable, a path), is `python…`, `pypy…` or one of
///   `LAUNCHERS`, or whose literal arguments name a `.py` or `.sh` file, a `./` or `../` path
///   or `python…`. `subprocess.run(["git", "status"])` starts none.
///
/// Strings and comments are skipped; a form inside a string is not one.
pub fn dynamic_forms(text: &str) -> (Vec<String>, Option<String>) {
    let tokens = py_tokens(text);
    let mut literal = Vec::new();
    // Modules by the names they are bound to (`import subprocess as sp`), and the modules
    // names are imported from (`from subprocess import run`).
    let mut aliases: Vec<(&str, &str)> = Vec::new();
    let mut imported_from: Vec<&str> = Vec::new();
    let mut statement_start = true;
    let mut in_import = false;
    for (i, token) in tokens.iter().enumerate() {
        if *token == PyToken::Newline {
            statement_start = true;
            continue;
        }
        let PyToken::Name(name) = token else {
            statement_start = false;
            continue;
        };
        if statement_start {
            in_import = name == "import" || name == "from";
            statement_start = false;
            if let (true, Some(PyToken::Name(module))) = (name == "from", tokens.get(i + 1)) {
                imported_from.push(module);
            }
        }
        let next = |k: usize| tokens.get(i + k);
        if let (true, Some(PyToken::Name(alias))) = (
            in_import && next(1) == Some(&PyToken::Name("as".into())),
            next(2),
        ) {
            aliases.push((alias, name));
        }
        let last = name.rsplit('.').next().unwrap_or(name);
        let first = name.split('.').next().unwrap_or(name);
        let called = next(1) == Some(&PyToken::Open('('));
        let found = if IMPORT_CALLS.contains(&last) {
            match (next(1), next(2), next(3)) {
                (
                    Some(PyToken::Open('(')),
                    Some(PyToken::Str(module)),
                    Some(PyToken::Close(')')),
                ) if is_dotted_identifier(module) => {
                    literal.push(module.clone());
                    None
                }
                _ if in_import => None,
                _ => Some("imports modules by name"),
            }
        } else if let Some((_, what)) = LOADERS
            .iter()
            .find(|(loader, _)| *loader == last || *loader == first)
        {
            Some(*what)
        } else if name == "sys.path" || name.starts_with("sys.path.") {
            Some("edits the import path")
        } else if called && !in_import && {
            let starts = match name.rsplit_once('.') {
                Some((qualifier, function)) => {
                    let module = aliases
                        .iter()
                        .find(|(alias, _)| *alias == qualifier)
                        .map_or(qualifier, |(_, module)| module);
                    starts_program(module, function)
                }
                None => imported_from
                    .iter()
                    .any(|module| starts_program(module, name)),
            };
            starts && may_start_project_file(&tokens[i + 2..])
        } {
            Some("runs a program that may be a project file")
        } else {
            None
        };
        if let Some(what) = found {
            let form = if name == "sys.path" || name.starts_with("sys.path.") {
                "sys.path"
            } else {
                name
            };
            return (literal, Some(format!("{what} (`{form}`)")));
        }
    }
    (literal, None)
}

/// Whether the arguments `args` of a call that starts a program (the tokens after its `(`) may
/// start a project file: see [`dynamic_forms`].
fn may_start_project_file(args: &[PyToken]) -> bool {
    let program = match args {
        [PyToken::Open('[' | '('), PyToken::Str(program), ..] | [PyToken::Str(program), ..] => {
            program.split_whitespace().next().unwrap_or("")
        }
        _ => return true,
    };
    let python = |word: &str| word.starts_with("python") || word.starts_with("pypy");
    if program.is_empty()
        || program.contains('/')
        || python(program)
        || LAUNCHERS.contains(&program)
    {
        return true;
    }
    let mut depth = 0usize;
    for token in args {
        match token {
            PyToken::Open(_) => depth += 1,
            PyToken::Close(_) if depth == 0 => break,
            PyToken::Close(_) => depth -= 1,
            PyToken::Name(name) if name.ends_with("executable") => return true,
            PyToken::Str(text) => {
                let project_file = |word: &str| {
                    python(word)
                        || word.ends_with(".py")
                        || word.ends_with(".sh")
                        || word.starts_with("./")
                        || word.starts_with("../")
                };
                if text.split_whitespace().any(project_file) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// A token of Python source, as far as finding dynamic forms needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PyToken {
    /// A dotted name: `importlib.import_module`, `sys.path.insert`, `x`.
    Name(String),
    /// A string literal without substitutions.
    Str(String),
    /// An f-string with substitutions.
    Formatted,
    Open(char),
    Close(char),
    Punct(char),
    /// The end of a logical line (outside brackets).
    Newline,
}

/// The tokens of Python source `text`: comments are dropped; strings (any prefix, triple
/// quoted or not) are one token.
fn py_tokens(text: &str) -> Vec<PyToken> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\n' || c == ';' {
            if depth == 0 && tokens.last() != Some(&PyToken::Newline) {
                tokens.push(PyToken::Newline);
            }
            i += 1;
            continue;
        }
        if c == '\\' && chars.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if is_word(c) {
            let start = i;
            while i < chars.len() && is_word(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let prefix = word.len() <= 2 && word.chars().all(|c| "rRbBuUfF".contains(c));
            if prefix && matches!(chars.get(i), Some('\'' | '"')) {
                let formatted = word.contains(['f', 'F']);
                let (value, end) = py_string(&chars, i);
                i = end;
                tokens.push(if formatted && value.contains('{') {
                    PyToken::Formatted
                } else {
                    PyToken::Str(value)
                });
                continue;
            }
            let mut name = word;
            while chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(|&c| is_word(c)) {
                let start = i + 1;
                i = start;
                while i < chars.len() && is_word(chars[i]) {
                    i += 1;
                }
                name.push('.');
                name.extend(&chars[start..i]);
            }
            tokens.push(PyToken::Name(name));
            continue;
        }
        if c == '\'' || c == '"' {
            let (value, end) = py_string(&chars, i);
            i = end;
            tokens.push(PyToken::Str(value));
            continue;
        }
        tokens.push(match c {
            '(' | '[' | '{' => {
                depth += 1;
                PyToken::Open(c)
            }
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                PyToken::Close(c)
            }
            c => PyToken::Punct(c),
        });
        i += 1;
    }
    tokens
}

/// The value of the string literal whose opening quote is at `start` in `chars`, and where it
/// ends; a one-quoted string ends at its line's end if not before.
fn py_string(chars: &[char], start: usize) -> (String, usize) {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    let mut value = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            if let Some(&escaped) = chars.get(i + 1) {
                value.push(escaped);
            }
            i += 2;
            continue;
        }
        if triple {
            if c == quote && chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                return (value, i + 3);
            }
        } else if c == quote {
            return (value, i + 1);
        } else if c == '\n' {
            return (value, i);
        }
        value.push(c);
        i += 1;
    }
    (value, i)
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
            // Filters of the collected tests apply to a narrowed run alike.
            "pytest -k fast",
            "pytest -m 'not slow'",
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
            "pytest --lf",
            "pytest --ignore=tests/slow",
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

    /// The dynamic form `dynamic_forms` finds in `source`.
    fn dynamic(source: &str) -> Option<String> {
        dynamic_forms(source).1
    }

    #[test]
    fn imports_by_computed_names_are_dynamic() {
        for (source, form) in [
            (
                "import importlib\nm = importlib.import_module(name)",
                "imports modules by name (`importlib.import_module`)",
            ),
            (
                "from importlib import import_module\nimport_module(f'pkg.{x}')",
                "imports modules by name (`import_module`)",
            ),
            (
                "m = __import__('ca' + 'lc')",
                "imports modules by name (`__import__`)",
            ),
            (
                "load = importlib.import_module",
                "imports modules by name (`importlib.import_module`)",
            ),
            (
                "importlib.import_module('.m', 'pkg')",
                "imports modules by name (`importlib.import_module`)",
            ),
            (
                "import pkgutil\nfor m in pkgutil.iter_modules(): pass",
                "imports modules by name (`pkgutil`)",
            ),
            (
                "from importlib.metadata import entry_points",
                "loads plugins by name (`entry_points`)",
            ),
            (
                "pytest_plugins = ['pkg.fixtures']",
                "loads plugins by name (`pytest_plugins`)",
            ),
            (
                "spec = importlib.util.spec_from_file_location('m', path)",
                "loads modules from files (`importlib.util.spec_from_file_location`)",
            ),
            (
                "runpy.run_path('tool.py')",
                "loads modules from files (`runpy.run_path`)",
            ),
            (
                "import sys\nsys.path.insert(0, here)",
                "edits the import path (`sys.path`)",
            ),
            (
                "sys.path[:0] = [here]",
                "edits the import path (`sys.path`)",
            ),
        ] {
            assert_eq!(dynamic(source).as_deref(), Some(form), "{source}");
        }
    }

    #[test]
    fn started_project_files_are_dynamic() {
        for (source, form) in [
            (
                "subprocess.run([sys.executable, 'tool.py'])",
                "`subprocess.run`",
            ),
            (
                "import subprocess as sp\nsp.check_output(cmd)",
                "`sp.check_output`",
            ),
            (
                "from subprocess import Popen\nPopen(['python3', '-m', 'pkg'])",
                "`Popen`",
            ),
            ("os.system('python tool.py')", "`os.system`"),
            ("os.execv(path, args)", "`os.execv`"),
            ("subprocess.call(['./run.sh'])", "`subprocess.call`"),
            ("subprocess.run(['bash', '-c', 'x'])", "`subprocess.run`"),
            (
                "await asyncio.create_subprocess_exec('node', 'x.py')",
                "`asyncio.create_subprocess_exec`",
            ),
        ] {
            let found = dynamic(source).unwrap_or_else(|| panic!("{source}"));
            assert_eq!(
                found,
                format!("runs a program that may be a project file ({form})"),
                "{source}"
            );
        }
    }

    #[test]
    fn ordinary_code_has_no_dynamic_form() {
        for source in [
            "subprocess.run(['git', 'init', '-q', tmp], check=True)",
            "subprocess.check_output('git status --short', shell=True)",
            "import importlib.metadata\nv = importlib.metadata.version('x')",
            "from importlib import resources\nresources.files('pkg')",
            "from importlib import import_module, reload",
            "platform.system()\nrunner.run(suite)\nasyncio.run(main())",
            "x = 'importlib.import_module(name)'  # sys.path.insert(0, x)",
            "'''\nsubprocess.run(cmd)\n'''\nos.path.join(a, b)",
            "s = f'{sys}' + r'\\d' + 'sys.path'",
        ] {
            assert_eq!(dynamic(source), None, "{source}");
        }
    }

    #[test]
    fn a_literal_name_is_an_import() {
        let module = Module::read(
            "import importlib\nc = importlib.import_module('pkg.calc')\nd = __import__(\"pkg.db\")",
        );
        assert_eq!(module.dynamic, None);
        assert_eq!(
            module.imports,
            [
                import(0, "importlib", &[]),
                import(0, "pkg.calc", &[]),
                import(0, "pkg.db", &[])
            ]
        );
    }

    /// A tree of `files` (path, source), as the scan would read it.
    fn tree(files: &[(&str, &str)]) -> Tree {
        Tree {
            files: files
                .iter()
                .map(|(path, source)| ((*path).to_owned(), Module::read(source)))
                .collect(),
            src_layout: false,
        }
    }

    #[test]
    fn packages_and_conftests_are_loaded_with_a_module() {
        let tree = tree(&[
            ("conftest.py", "sys.path.append('lib')"),
            ("tests/__init__.py", ""),
            ("tests/conftest.py", ""),
            ("tests/test_a.py", "import os"),
            ("tests/sub/__init__.py", ""),
        ]);
        assert_eq!(
            tree.implicit("tests/test_a.py", Runner::Unittest),
            ["tests/__init__.py"]
        );
        assert_eq!(
            tree.implicit("tests/sub/__init__.py", Runner::Pytest),
            ["tests/__init__.py", "tests/conftest.py", "conftest.py"]
        );
        let graph = tree.graph(Runner::Pytest);
        let reached = graph.reachable("tests/test_a.py");
        assert_eq!(
            tree.dynamic_in("tests/test_a.py", &reached).as_deref(),
            Some(
                "`tests/test_a.py` reaches `conftest.py`, which edits the import path (`sys.path`)"
            )
        );
        let graph = tree.graph(Runner::Unittest);
        let reached = graph.reachable("tests/test_a.py");
        assert_eq!(tree.dynamic_in("tests/test_a.py", &reached), None);
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
