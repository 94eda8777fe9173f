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

/// Marker files that make a project a pytest project.
const PYTEST_MARKERS: &[&str] = &["pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"];

/// The `scripts.test` that `npm init` writes: a placeholder, not a test suite.
const NPM_PLACEHOLDER: &str = "Error: no test specified";

/// The test command a project of this shape conventionally uses, if any.
pub fn detect_test_command(root: &Path) -> Option<String> {
    let command = if root.join("Cargo.toml").is_file() {
        "cargo test"
    } else if PYTEST_MARKERS.iter().any(|m| root.join(m).is_file()) {
        "pytest -x -q"
    } else if has_npm_test_script(&root.join("package.json")) {
        "npm test"
    } else if root.join("go.mod").is_file() {
        "go test ./..."
    } else if has_unittest_files(root) {
        "python3 -m unittest -q"
    } else {
        return None;
    };
    Some(command.to_owned())
}

/// Whether `package.json` has a non-empty `scripts.test` other than npm's placeholder.
fn has_npm_test_script(manifest: &Path) -> bool {
    let Ok(text) = crate::bounded::read_regular_text(manifest, crate::bounded::MAX_CONFIG_BYTES)
    else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    json.pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|script| !script.trim().is_empty() && !script.contains(NPM_PLACEHOLDER))
}

/// Whether `python3 -m unittest` would discover test modules at the root or in `tests/`.
fn has_unittest_files(root: &Path) -> bool {
    let tests = root.join("tests");
    has_test_module(root) || (tests.join("__init__.py").is_file() && has_test_module(&tests))
}

/// Whether `dir` directly contains a `test*.py` file (unittest's default discovery pattern).
fn has_test_module(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.starts_with("test")
            && name.ends_with(".py")
            && entry.file_type().is_ok_and(|t| t.is_file())
    })
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
