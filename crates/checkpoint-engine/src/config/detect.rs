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
//! The last row mirrors what `python3 -m unittest` discovers by default (`test*.py` files in
//! the start directory and in importable packages below it), so the detected command never
//! reports "no tests ran" for a project it was detected for. Detection only stats and reads
//! files at the root and lists the root and `tests/`: it runs on every hook call.

use std::fs;
use std::path::Path;

use crate::bounded::{self, MAX_CONFIG_BYTES};

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
    let Some(json) =
        manifest.and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    else {
        return false;
    };
    json.pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|script| !script.trim().is_empty() && !script.contains(NPM_PLACEHOLDER))
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
