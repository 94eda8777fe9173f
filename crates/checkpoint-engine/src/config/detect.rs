//! Guesses a project's test command from the files at its root, for projects whose
//! configuration names none.
//!
//! The first match wins, in this order:
//!
//! | Project shape                                                  | Command                   |
//! |----------------------------------------------------------------|---------------------------|
//! | `Cargo.toml`                                                   | `cargo test`              |
//! | `pyproject.toml`, `setup.cfg`, `pytest.ini` or `tox.ini`       | `pytest -x -q`            |
//! | `package.json` with a real `scripts.test`                      | `npm test`                |
//! | `go.mod`                                                       | `go test ./...`           |
//! | `test*.py` at the root, or in a `tests/` package               | `python3 -m unittest -q`  |
//!
//! Checks (`[checks]`) are detected only where the project says which command it uses:
//!
//! | Check       | Project shape                                                          | Command                |
//! |-------------|------------------------------------------------------------------------|------------------------|
//! | `typecheck` | `package.json` with a `typecheck` script                               | `<pm> run typecheck`   |
//! |             | `mypy.ini`, `.mypy.ini`, `[tool.mypy]` in `pyproject.toml`, `[mypy]` in `setup.cfg` | `mypy .`  |
//! | `lint`      | `package.json` with a `lint` script                                    | `<pm> run lint`        |
//! |             | `ruff.toml`, `.ruff.toml`, `[tool.ruff]` in `pyproject.toml`           | `ruff check .`         |
//! | `build`     | `package.json` with a `build` script                                   | `<pm> run build`       |
//!
//! `<pm>` is the package manager whose lock file is at the root (`pnpm-lock.yaml`: pnpm,
//! `yarn.lock`: yarn, `bun.lock` or `bun.lockb`: bun), else npm. A Rust project gets no
//! `cargo check`: `cargo test` compiles everything it checks.
//!
//! The last row mirrors what `python3 -m unittest` discovers by default (`test*.py` files in
//! the start directory and in importable packages below it), so the detected command never
//! reports "no tests ran" for a project it was detected for. Detection only stats and reads
//! files at the root and lists the root and `tests/`: it runs on every hook call.

use std::fs;
use std::path::Path;

use crate::bounded::{self, MAX_CONFIG_BYTES};
use checkpoint_core::checks::CheckKind;

/// Marker files that make a project a pytest project.
const PYTEST_MARKERS: &[&str] = &["pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"];

/// The `scripts.test` that `npm init` writes: a placeholder, not a test suite.
const NPM_PLACEHOLDER: &str = "Error: no test specified";

/// Every file detection may read, relative to the root: what a commit's tree must provide
/// for [`detect_in`] to see it as a checkout would.
pub const READ_FILES: &[&str] = &[
    "Cargo.toml",
    "pyproject.toml",
    "setup.cfg",
    "pytest.ini",
    "tox.ini",
    "package.json",
    "go.mod",
    "tests/__init__.py",
    "mypy.ini",
    ".mypy.ini",
    "ruff.toml",
    ".ruff.toml",
];

/// The directories whose file names detection lists: the root (`""`) and `tests`.
pub const LISTED_DIRS: &[&str] = &["", "tests"];

/// What detection looks at in a project: the files at its root and in `tests/` — of a
/// directory on disk ([`Path`]) or of a commit's tree.
pub trait ProjectShape {
    /// Whether `path` (one of [`READ_FILES`]) is a regular file.
    fn is_file(&self, path: &str) -> bool;
    /// The text of `path` (one of [`READ_FILES`]), when it is a regular file of at most
    /// [`MAX_CONFIG_BYTES`].
    fn text(&self, path: &str) -> Option<String>;
    /// The names of the regular files directly in `dir` (one of [`LISTED_DIRS`]).
    fn file_names(&self, dir: &str) -> Vec<String>;
}

impl ProjectShape for Path {
    fn is_file(&self, path: &str) -> bool {
        self.join(path).is_file()
    }

    fn text(&self, path: &str) -> Option<String> {
        bounded::read_regular_text(&self.join(path), MAX_CONFIG_BYTES).ok()
    }

    fn file_names(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.join(dir)) else {
            return Vec::new();
        };
        (entries.flatten())
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// The test command a project of this shape conventionally uses, if any.
pub fn detect_test_command(root: &Path) -> Option<String> {
    detect_in(root)
}

/// The value a project of this shape gives the detected setting `key` (`tests.command`,
/// `checks.typecheck`, …), if any.
pub fn detect_key(project: &(impl ProjectShape + ?Sized), key: &str) -> Option<String> {
    match CheckKind::of_key(key) {
        Some(kind) => detect_check(project, kind),
        None if key == "tests.command" => detect_in(project),
        None => None,
    }
}

/// The command a project of this shape names for the check `kind`, if it names one.
fn detect_check(project: &(impl ProjectShape + ?Sized), kind: CheckKind) -> Option<String> {
    let script = kind.name();
    if npm_script(project.text("package.json"), script).is_some() {
        return Some(format!("{} run {script}", package_manager(project)));
    }
    let sets = |file: &str, table: &str| {
        (project.text(file)).is_some_and(|text| {
            (text.lines()).any(|line| {
                let line = line.trim();
                line.strip_prefix(table)
                    .is_some_and(|rest| rest.starts_with(']') || rest.starts_with('.'))
            })
        })
    };
    let command = match kind {
        CheckKind::Typecheck
            if project.is_file("mypy.ini")
                || project.is_file(".mypy.ini")
                || sets("pyproject.toml", "[tool.mypy")
                || sets("setup.cfg", "[mypy") =>
        {
            "mypy ."
        }
        CheckKind::Lint
            if project.is_file("ruff.toml")
                || project.is_file(".ruff.toml")
                || sets("pyproject.toml", "[tool.ruff") =>
        {
            "ruff check ."
        }
        _ => return None,
    };
    Some(command.to_owned())
}

/// The package manager whose lock file is at the root, else `npm`.
fn package_manager(project: &(impl ProjectShape + ?Sized)) -> &'static str {
    let names = project.file_names("");
    let has = |name: &str| names.iter().any(|n| n == name);
    if has("pnpm-lock.yaml") {
        "pnpm"
    } else if has("yarn.lock") {
        "yarn"
    } else if has("bun.lock") || has("bun.lockb") {
        "bun"
    } else {
        "npm"
    }
}

/// [`detect_test_command`] for a project of any [`ProjectShape`].
pub fn detect_in(project: &(impl ProjectShape + ?Sized)) -> Option<String> {
    let command = if project.is_file("Cargo.toml") {
        "cargo test"
    } else if PYTEST_MARKERS.iter().any(|m| project.is_file(m)) {
        "pytest -x -q"
    } else if has_npm_test_script(project.text("package.json")) {
        "npm test"
    } else if project.is_file("go.mod") {
        "go test ./..."
    } else if has_unittest_files(project) {
        "python3 -m unittest -q"
    } else {
        return None;
    };
    Some(command.to_owned())
}

/// Whether the `package.json` text has a non-empty `scripts.test` other than npm's placeholder.
fn has_npm_test_script(manifest: Option<String>) -> bool {
    npm_script(manifest, "test").is_some_and(|script| !script.contains(NPM_PLACEHOLDER))
}

/// The `package.json` text's non-blank `scripts.<name>`, if any.
fn npm_script(manifest: Option<String>, name: &str) -> Option<String> {
    let json = serde_json::from_str::<serde_json::Value>(&manifest?).ok()?;
    let script = json.get("scripts")?.get(name)?.as_str()?;
    (!script.trim().is_empty()).then(|| script.to_owned())
}

/// Whether `python3 -m unittest` would discover test modules at the root or in `tests/`.
fn has_unittest_files(project: &(impl ProjectShape + ?Sized)) -> bool {
    // unittest's default discovery pattern: `test*.py` files.
    let has_test_module = |dir: &str| {
        (project.file_names(dir).iter())
            .any(|name| name.starts_with("test") && name.ends_with(".py"))
    };
    has_test_module("") || (project.is_file("tests/__init__.py") && has_test_module("tests"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    /// A temporary project holding `files` (path, contents); parent directories are created.
    fn project(files: &[(&str, &str)]) -> TempDir {
        let dir = TempDir::new().unwrap();
        for (path, contents) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, contents).unwrap();
        }
        dir
    }

    fn detect(files: &[(&str, &str)]) -> Option<String> {
        detect_test_command(project(files).path())
    }

    #[test]
    fn cargo() {
        assert_eq!(detect(&[("Cargo.toml", "")]).as_deref(), Some("cargo test"));
    }

    #[test]
    fn every_pytest_marker() {
        for marker in PYTEST_MARKERS {
            assert_eq!(
                detect(&[(marker, "")]).as_deref(),
                Some("pytest -x -q"),
                "{marker}"
            );
        }
    }

    #[test]
    fn npm_with_a_test_script() {
        let manifest = r#"{"scripts": {"test": "vitest run"}}"#;
        assert_eq!(
            detect(&[("package.json", manifest)]).as_deref(),
            Some("npm test")
        );
    }

    #[test]
    fn npm_without_a_real_test_script() {
        for manifest in [
            r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            r#"{"scripts": {"test": "  "}}"#,
            r#"{"scripts": {"build": "tsc"}}"#,
            r#"{"name": "x"}"#,
            "not json",
        ] {
            assert_eq!(detect(&[("package.json", manifest)]), None, "{manifest}");
        }
    }

    #[test]
    fn go() {
        assert_eq!(
            detect(&[("go.mod", "module x\n")]).as_deref(),
            Some("go test ./...")
        );
    }

    #[test]
    fn unittest_files_at_the_root_or_in_a_tests_package() {
        let unittest = Some("python3 -m unittest -q");
        assert_eq!(detect(&[("test_app.py", "")]).as_deref(), unittest);
        assert_eq!(detect(&[("tests.py", "")]).as_deref(), unittest);
        assert_eq!(
            detect(&[("tests/__init__.py", ""), ("tests/test_app.py", "")]).as_deref(),
            unittest
        );
    }

    #[test]
    fn python_files_unittest_would_not_discover() {
        assert_eq!(detect(&[("app_test.py", "")]), None);
        assert_eq!(detect(&[("tests/test_app.py", "")]), None);
        assert_eq!(detect(&[("test_fixtures.py/data.txt", "")]), None);
    }

    /// The check `kind`'s command detected in a project holding `files`.
    fn check(kind: CheckKind, files: &[(&str, &str)]) -> Option<String> {
        detect_key(project(files).path(), kind.key())
    }

    #[test]
    fn checks_from_package_json_scripts_with_the_projects_package_manager() {
        let manifest =
            r#"{"scripts": {"typecheck": "tsc --noEmit", "lint": "eslint .", "build": " "}}"#;
        let js = [("package.json", manifest)];
        assert_eq!(
            check(CheckKind::Typecheck, &js).as_deref(),
            Some("npm run typecheck")
        );
        assert_eq!(check(CheckKind::Lint, &js).as_deref(), Some("npm run lint"));
        assert_eq!(check(CheckKind::Build, &js), None);
        for (lock, pm) in [
            ("pnpm-lock.yaml", "pnpm"),
            ("yarn.lock", "yarn"),
            ("bun.lockb", "bun"),
            ("package-lock.json", "npm"),
        ] {
            let files = [("package.json", manifest), (lock, "")];
            assert_eq!(
                check(CheckKind::Lint, &files),
                Some(format!("{pm} run lint")),
                "{lock}"
            );
        }
    }

    #[test]
    fn python_checks_only_where_configured() {
        let configured = [(
            "pyproject.toml",
            "[project]\nname = \"x\"\n\n[tool.mypy]\nstrict = true\n\n[tool.ruff.lint]\nselect = [\"E\"]\n",
        )];
        assert_eq!(
            check(CheckKind::Typecheck, &configured).as_deref(),
            Some("mypy .")
        );
        assert_eq!(
            check(CheckKind::Lint, &configured).as_deref(),
            Some("ruff check .")
        );
        assert_eq!(
            check(CheckKind::Typecheck, &[("mypy.ini", "")]).as_deref(),
            Some("mypy .")
        );
        assert_eq!(
            check(CheckKind::Typecheck, &[("setup.cfg", "[mypy]\n")]).as_deref(),
            Some("mypy .")
        );
        assert_eq!(
            check(CheckKind::Lint, &[(".ruff.toml", "")]).as_deref(),
            Some("ruff check .")
        );
        // A Python project that configures neither, or names a look-alike table.
        let bare = [
            ("pyproject.toml", "[project]\nname = \"x\"\n[tool.mypyc]\n"),
            ("setup.cfg", "[flake8]\n"),
        ];
        assert_eq!(check(CheckKind::Typecheck, &bare), None);
        assert_eq!(check(CheckKind::Lint, &bare), None);
        // Rust: `cargo test` already compiles, so no `cargo check`.
        for kind in CheckKind::ALL {
            assert_eq!(check(kind, &[("Cargo.toml", "")]), None);
        }
    }

    #[test]
    fn nothing_recognisable() {
        assert_eq!(detect(&[]), None);
        assert_eq!(detect(&[("README.md", "")]), None);
    }

    #[test]
    fn first_match_wins() {
        assert_eq!(
            detect(&[("Cargo.toml", ""), ("pyproject.toml", "")]).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            detect(&[("setup.cfg", ""), ("test_app.py", "")]).as_deref(),
            Some("pytest -x -q")
        );
        let manifest = r#"{"scripts": {"test": "jest"}}"#;
        assert_eq!(
            detect(&[("package.json", manifest), ("go.mod", "")]).as_deref(),
            Some("npm test")
        );
        assert_eq!(
            detect(&[("go.mod", ""), ("test_tool.py", "")]).as_deref(),
            Some("go test ./...")
        );
    }
}
