//! What an approved test command resolves to: the content behind its name, pinned in the
//! approval so that rewriting it is a change the user approves, like the command's text.
//!
//! [`resolve`] follows a command (each of its `&&`/`;`/`|` parts, after `cd`, variable
//! assignments and `env`/`exec`/`time` wrappers) to:
//!
//! - `make` (`-C`, `-f`): the whole makefile — a recipe can be changed through a variable
//!   anywhere in it — and the makefiles it includes; `just`: the whole justfile; `tox` (`-c`):
//!   `tox.ini`; `nox` (`-f`): `noxfile.py`; `pytest` (`python -m pytest`): the root
//!   `conftest.py`; `cargo`: `.cargo/config.toml` (its `runner` decides how tests run); `mypy`:
//!   `mypy.ini`, `.mypy.ini`, `pyproject.toml`, `setup.cfg` (they name plugins it imports);
//! - `npm`/`yarn`/`pnpm`/`bun run`: the `package.json` script with its `pre`/`post` scripts,
//!   each script's own command followed in turn, and `.npmrc`/`.yarnrc`/`.yarnrc.yml`/
//!   `bunfig.toml` (which can replace the shell that runs scripts);
//! - a script file the command runs (`./run_tests.sh`, `bash scripts/test.sh`,
//!   `python3 tools/run.py`);
//! - the runner configuration files in the directories it runs in (those
//!   [`checkpoint_core::integrity::is_runner_config`] names; of `package.json`, its `jest` key).
//!
//! Each piece is named (`Makefile`, `package.json scripts.test`) and recorded as a digest of its
//! content, `absent`, or `unreadable`. Resolution is bounded: at most 32 files (`MAX_READS`) of
//! at most [`MAX_CONFIG_BYTES`] each, scripts followed 3 deep (`MAX_DEPTH`), no process started;
//! what a script itself then runs (another file it sources) is not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use checkpoint_core::hex::sha256_hex;
use checkpoint_core::integrity::is_runner_config;

use crate::bounded::{MAX_CONFIG_BYTES, read_regular};

/// What a command resolves to: each piece by name, with its digest (see the module doc).
pub type Definition = BTreeMap<String, String>;

/// The most files one resolution reads.
const MAX_READS: usize = 32;
/// How deep scripts that name scripts are followed.
const MAX_DEPTH: usize = 3;
/// The most directory entries looked at for runner configuration, per directory.
const MAX_DIR_ENTRIES: usize = 4096;

/// What `command` resolves to in the project at `root`.
pub fn resolve(command: &str, root: &Path) -> Definition {
    let mut resolver = Resolver {
        root,
        out: Definition::new(),
        reads: 0,
        dirs: BTreeSet::new(),
    };
    resolver.command(command, PathBuf::new(), 0);
    let dirs = std::mem::take(&mut resolver.dirs);
    for dir in std::iter::once(PathBuf::new()).chain(dirs) {
        resolver.runner_configs(&dir);
    }
    resolver.out
}

/// The names of what changed from `approved` to `now`, in order.
pub fn changed(approved: &Definition, now: &Definition) -> Vec<String> {
    let names: BTreeSet<&String> = approved.keys().chain(now.keys()).collect();
    (names.into_iter())
        .filter(|name| approved.get(*name) != now.get(*name))
        .cloned()
        .collect()
}

struct Resolver<'a> {
    root: &'a Path,
    out: Definition,
    reads: usize,
    /// The directories other than the root that the command runs in.
    dirs: BTreeSet<PathBuf>,
}

impl Resolver<'_> {
    /// Follows `command`, run in `dir` (relative to the root).
    fn command(&mut self, command: &str, mut dir: PathBuf, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for part in parts(command) {
            let words = words(&part);
            let mut rest: &[String] = &words;
            while let Some((first, tail)) = rest.split_first() {
                if is_assignment(first)
                    || ["env", "exec", "time", "command", "nohup", "nice"].contains(&first.as_str())
                {
                    rest = tail;
                } else {
                    break;
                }
            }
            let Some((program, args)) = rest.split_first() else {
                continue;
            };
            let name = program.rsplit('/').next().unwrap_or(program);
            match name {
                "cd" => {
                    if let Some(to) = args.first().and_then(|to| within(&dir, to)) {
                        dir = to;
                        self.dirs.insert(dir.clone());
                    }
                }
                "make" | "gmake" => {
                    let at = option(args, &["-C", "--directory"])
                        .and_then(|to| within(&dir, &to))
                        .unwrap_or_else(|| dir.clone());
                    self.dirs.insert(at.clone());
                    let file = option(args, &["-f", "--file", "--makefile"]).unwrap_or_else(|| {
                        let names = ["GNUmakefile", "makefile", "Makefile"];
                        let found = names.iter().find(|n| self.root.join(&at).join(n).exists());
                        found.unwrap_or(&"Makefile").to_string()
                    });
                    self.makefile(&at, &file, 0);
                }
                "cargo" => {
                    // Its configuration can replace how test binaries run (`runner`).
                    for config in [".cargo/config.toml", ".cargo/config"] {
                        self.file(&dir, config);
                    }
                }
                "pytest" | "py.test" => self.file(&dir, "conftest.py"),
                // Its configuration names plugins: Python modules it imports.
                "mypy" => {
                    for config in ["mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"] {
                        self.file(&dir, config);
                    }
                }
                "just" => match option(args, &["-f", "--justfile"]) {
                    Some(file) => self.file(&dir, &file),
                    None => self.first_of(&dir, &["justfile", "Justfile", ".justfile"]),
                },
                "tox" => {
                    let file = option(args, &["-c"]).unwrap_or_else(|| "tox.ini".into());
                    self.file(&dir, &file);
                }
                "nox" => {
                    let file = option(args, &["-f", "--noxfile"]);
                    self.file(&dir, file.as_deref().unwrap_or("noxfile.py"));
                }
                "npm" | "yarn" | "pnpm" | "bun" => {
                    let at = option(args, &["--prefix", "--cwd", "--dir", "-C"])
                        .and_then(|to| within(&dir, &to))
                        .unwrap_or_else(|| dir.clone());
                    if at != dir {
                        self.dirs.insert(at.clone());
                    }
                    // Their configuration can replace the shell that runs scripts.
                    for config in [".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml"] {
                        self.file(&at, config);
                    }
                    if let Some(script) = script_name(name, args) {
                        self.scripts(&at, &script, depth);
                    }
                }
                _ if is_interpreter(name) => {
                    if args.windows(2).any(|w| w[0] == "-m" && w[1] == "pytest") {
                        self.file(&dir, "conftest.py");
                    }
                    let script = args.iter().find(|a| !a.starts_with('-') || is_inline(a));
                    if let Some(script) = script.filter(|a| !is_inline(a)) {
                        self.file(&dir, script);
                    }
                }
                _ if program.contains('/') => self.file(&dir, program),
                _ => {}
            }
        }
    }

    /// The `package.json` scripts `pre<name>`, `<name>` and `post<name>` in `dir`, each followed.
    fn scripts(&mut self, dir: &Path, name: &str, depth: usize) {
        let manifest = dir.join("package.json");
        let Some(json) = self.json(&manifest) else {
            let key = format!("{} scripts.{name}", shown(&manifest));
            self.out.insert(key, "unreadable".into());
            return;
        };
        for script in [format!("pre{name}"), name.to_owned(), format!("post{name}")] {
            let text = json
                .get("scripts")
                .and_then(|scripts| scripts.get(&script))
                .and_then(serde_json::Value::as_str);
            let key = format!("{} scripts.{script}", shown(&manifest));
            self.out.insert(key, text.map_or("absent".into(), digest));
            if let Some(text) = text {
                self.command(text, dir.to_owned(), depth + 1);
            }
        }
    }

    /// The runner configuration files directly in `dir`.
    fn runner_configs(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return;
        };
        let mut names: Vec<String> = (entries.take(MAX_DIR_ENTRIES).flatten())
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| is_runner_config(name))
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            if name == "package.json" {
                let jest = self.json(&path).map(|json| json.get("jest").cloned());
                let value = match jest {
                    None => "unreadable".into(),
                    Some(None) => "absent".into(),
                    Some(Some(jest)) => digest(&jest.to_string()),
                };
                self.out.insert(format!("{} jest", shown(&path)), value);
            } else {
                let content = self.read(&path);
                self.out.insert(shown(&path), content);
            }
        }
    }

    /// The first of `names` in `dir` that exists, else the last one as absent.
    fn first_of(&mut self, dir: &Path, names: &[&str]) {
        let found = names
            .iter()
            .find(|name| self.root.join(dir).join(name).exists());
        self.file(dir, found.or(names.last()).copied().unwrap_or_default());
    }

    /// The makefile `name` in `dir`, and the files it includes (`include`, `-include`,
    /// `sinclude`, names without variables), [`MAX_DEPTH`] deep.
    fn makefile(&mut self, dir: &Path, name: &str, depth: usize) {
        let Some(path) = within(dir, name) else {
            return;
        };
        if self.out.contains_key(&shown(&path)) {
            return;
        }
        let text = self.text(&path);
        let content = text
            .as_ref()
            .map_or_else(|e| (*e).to_owned(), |t| digest(t));
        self.out.insert(shown(&path), content);
        let (Ok(text), true) = (text, depth < MAX_DEPTH) else {
            return;
        };
        for line in text.lines() {
            let Some((directive, names)) = line.trim_start().split_once(char::is_whitespace) else {
                continue;
            };
            if !["include", "-include", "sinclude"].contains(&directive) {
                continue;
            }
            for included in names.split_whitespace().filter(|n| !n.contains('$')) {
                self.makefile(dir, included, depth + 1);
            }
        }
    }

    /// The text of the file at `path` (relative to the root), or why there is none.
    fn text(&mut self, path: &Path) -> Result<String, &'static str> {
        if self.reads >= MAX_READS {
            return Err("unread (too many files)");
        }
        self.reads += 1;
        match read_regular(&self.root.join(path), MAX_CONFIG_BYTES) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("absent"),
            Err(_) => Err("unreadable"),
        }
    }

    /// The file `name`, relative to `dir`; nothing for one outside the project.
    fn file(&mut self, dir: &Path, name: &str) {
        if let Some(path) = within(dir, name) {
            let content = self.read(&path);
            self.out.insert(shown(&path), content);
        }
    }

    /// The digest of the file at `path` (relative to the root), `absent`, or `unreadable`.
    fn read(&mut self, path: &Path) -> String {
        self.bytes(path).unwrap_or_else(|missing| missing.into())
    }

    fn bytes(&mut self, path: &Path) -> Result<String, &'static str> {
        if self.reads >= MAX_READS {
            return Err("unread (too many files)");
        }
        self.reads += 1;
        match read_regular(&self.root.join(path), MAX_CONFIG_BYTES) {
            Ok(bytes) => Ok(format!("sha256:{}", sha256_hex(&bytes))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("absent"),
            Err(_) => Err("unreadable"),
        }
    }

    /// The JSON of the file at `path`, when it can be read.
    fn json(&mut self, path: &Path) -> Option<serde_json::Value> {
        if self.reads >= MAX_READS {
            return None;
        }
        self.reads += 1;
        let bytes = read_regular(&self.root.join(path), MAX_CONFIG_BYTES).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The digest of a text, as recorded.
fn digest(text: &str) -> String {
    format!("sha256:{}", sha256_hex(text.as_bytes()))
}

/// `path` as a piece's name: relative to the root, with `/`.
fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `to` relative to `dir` (itself relative to the root), normalized; `None` when it leaves the
/// project (an absolute path or too many `..`): what lies outside is the user's.
fn within(dir: &Path, to: &str) -> Option<PathBuf> {
    let mut path = PathBuf::new();
    for component in dir.join(to).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !path.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(path)
}

/// The parts of a shell command: split at `&&`, `||`, `;`, `|`, `&` and newlines (quotes are not
/// honoured: a resolution may find a piece too many, never run anything).
fn parts(command: &str) -> Vec<String> {
    command
        .split(['\n', ';', '|', '&', '(', ')'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The words of a part, with surrounding quotes taken off.
fn words(part: &str) -> Vec<String> {
    part.split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']).to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
    })
}

/// The value of the first of `flags` in `args`: `-C dir`, `-Cdir` (short flags), `--flag=dir`.
fn option(args: &[String], flags: &[&str]) -> Option<String> {
    for (at, arg) in args.iter().enumerate() {
        for flag in flags {
            if arg == flag {
                return args.get(at + 1).cloned();
            }
            if let Some(value) = arg.strip_prefix(&format!("{flag}=")) {
                return Some(value.to_owned());
            }
            if !flag.starts_with("--")
                && let Some(value) = arg.strip_prefix(flag).filter(|v| !v.is_empty())
            {
                return Some(value.to_owned());
            }
        }
    }
    None
}

/// The `package.json` script a package manager's `args` run, if any.
fn script_name(manager: &str, args: &[String]) -> Option<String> {
    // Flags and their values (`--prefix dir`) are not the script.
    let mut words = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
        } else if [
            "--prefix",
            "--cwd",
            "--dir",
            "-C",
            "--filter",
            "-w",
            "--workspace",
        ]
        .contains(&arg.as_str())
        {
            skip = true;
        } else if !arg.starts_with('-') {
            words.push(arg.as_str());
        }
    }
    let (first, rest) = words.split_first()?;
    let named = |word: Option<&&str>| word.map(|w| (*w).to_owned());
    match (manager, *first) {
        (_, "run" | "run-script" | "rum" | "urn") => named(rest.first()),
        ("npm", "t" | "tst" | "test") | (_, "test") if manager != "bun" => Some("test".into()),
        ("npm", "start" | "stop" | "restart") => Some((*first).to_owned()),
        ("npm" | "bun", _) => None,
        (_, builtin) if YARN_PNPM_BUILTINS.contains(&builtin) => None,
        (_, script) => Some(script.to_owned()),
    }
}

/// The yarn and pnpm commands that are not scripts.
const YARN_PNPM_BUILTINS: &[&str] = &[
    "add",
    "install",
    "i",
    "remove",
    "rm",
    "up",
    "upgrade",
    "update",
    "exec",
    "dlx",
    "x",
    "create",
    "init",
    "link",
    "unlink",
    "pack",
    "publish",
    "why",
    "list",
    "ls",
    "info",
    "config",
    "cache",
    "workspace",
    "workspaces",
    "set",
    "node",
    "audit",
    "outdated",
];

/// A program that runs the script file named by its first argument.
fn is_interpreter(name: &str) -> bool {
    [
        "sh", "bash", "zsh", "dash", "ksh", "node", "ruby", "perl", "php", "Rscript",
    ]
    .contains(&name)
        || (name.starts_with("python") && name[6..].chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// An interpreter flag after which no script file follows (`-c` code, `-m` module, `-e` code).
fn is_inline(arg: &str) -> bool {
    ["-c", "-m", "-e", "--eval", "-p", "--print"].contains(&arg)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    fn names(definition: &Definition) -> Vec<&str> {
        definition.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_make_target_pins_the_makefile_and_the_runner_configuration() {
        let dir = project(&[
            ("Makefile", "test:\n\tpython3 -m unittest\n"),
            ("pytest.ini", "[pytest]\n"),
            ("README.md", ""),
        ]);
        let before = resolve("make test", dir.path());
        assert_eq!(names(&before), ["Makefile", "pytest.ini"]);
        fs::write(dir.path().join("Makefile"), "test:\n\t@true\n").unwrap();
        let after = resolve("make test", dir.path());
        assert_eq!(changed(&before, &after), ["Makefile"]);
        assert_eq!(changed(&after, &resolve("make test", dir.path())), [""; 0]);
    }

    #[test]
    fn an_npm_script_pins_its_pre_and_post_scripts_and_what_they_run() {
        let dir = project(&[(
            "package.json",
            r#"{"scripts": {"pretest": "bash scripts/setup.sh", "test": "jest"}, "jest": {}}"#,
        )]);
        fs::create_dir(dir.path().join("scripts")).unwrap();
        fs::write(dir.path().join("scripts/setup.sh"), "echo hi\n").unwrap();
        let definition = resolve("npm test", dir.path());
        insta::assert_debug_snapshot!(names(&definition), @r#"
        [
            ".npmrc",
            ".yarnrc",
            ".yarnrc.yml",
            "bunfig.toml",
            "package.json jest",
            "package.json scripts.posttest",
            "package.json scripts.pretest",
            "package.json scripts.test",
            "scripts/setup.sh",
        ]
        "#);
        assert_eq!(definition, resolve("npm run test", dir.path()));
        assert_eq!(definition, resolve("yarn test", dir.path()));
        assert_eq!(definition["package.json scripts.posttest"], "absent");
    }

    /// A mypy plugin is code mypy imports: its configuration is part of what `mypy .` runs.
    #[test]
    fn mypy_pins_its_configuration() {
        let dir = project(&[("mypy.ini", "[mypy]\n")]);
        let before = resolve("mypy .", dir.path());
        fs::write(dir.path().join("mypy.ini"), "[mypy]\nplugins = evil\n").unwrap();
        assert_eq!(
            changed(&before, &resolve("mypy .", dir.path())),
            ["mypy.ini"]
        );
    }

    #[test]
    fn scripts_tox_and_directories() {
        let dir = project(&[
            ("tox.ini", "[testenv]\ncommands = pytest\n"),
            ("run_tests.sh", "pytest\n"),
            ("sub/Makefile", "test:\n"),
        ]);
        let root = dir.path();
        assert_eq!(names(&resolve("tox -e py", root)), ["tox.ini"]);
        assert_eq!(
            names(&resolve("./run_tests.sh -q", root)),
            ["run_tests.sh", "tox.ini"]
        );
        assert_eq!(
            names(&resolve("bash run_tests.sh", root)),
            ["run_tests.sh", "tox.ini"]
        );
        assert_eq!(
            names(&resolve("python3 -m pytest", root)),
            ["conftest.py", "tox.ini"]
        );
        assert_eq!(
            names(&resolve("cd sub && make", root)),
            ["sub/Makefile", "tox.ini"]
        );
        assert_eq!(
            names(&resolve("make -C sub test", root)),
            ["sub/Makefile", "tox.ini"]
        );
        // What lies outside the project is not the project's.
        assert_eq!(
            names(&resolve("bash /etc/profile; sh ../x.sh", root)),
            ["tox.ini"]
        );
        assert_eq!(
            names(&resolve("cargo test", root)),
            [".cargo/config", ".cargo/config.toml", "tox.ini"]
        );
    }

    /// What chooses how tests run besides the command's own file: a makefile's includes,
    /// cargo's and npm's configuration, pytest's root `conftest.py`.
    #[test]
    fn includes_and_tool_configuration() {
        let dir = project(&[
            ("Makefile", "include tests.mk\n-include $(LOCAL)\ntest:\n"),
            ("tests.mk", "include Makefile\n"),
        ]);
        let root = dir.path();
        assert_eq!(names(&resolve("make test", root)), ["Makefile", "tests.mk"]);
        let before = resolve("make test", root);
        fs::write(root.join("tests.mk"), "test:\n\ttrue\n").unwrap();
        assert_eq!(changed(&before, &resolve("make test", root)), ["tests.mk"]);
        let npm = resolve("npm test", root);
        assert_eq!(npm[".npmrc"], "absent", "{npm:?}");
        fs::write(root.join(".npmrc"), "script-shell=true\n").unwrap();
        assert_eq!(changed(&npm, &resolve("npm test", root)), [".npmrc"]);
        assert_eq!(names(&resolve("pytest -q", root)), ["conftest.py"]);
        assert_eq!(names(&resolve("python3 -m pytest", root)), ["conftest.py"]);
    }
}
