//! pytest's own settings, read from the text of one of its configuration files: `addopts` (the
//! options every run gets), `testpaths` (where a run without paths collects), `python_files`
//! (which files are test modules) and `norecursedirs` (directories collection skips).
//!
//! The files, in the order pytest looks for them in a directory ([`FILES`]): `pytest.toml` and
//! `.pytest.toml` (table `[pytest]`), `pytest.ini` and `.pytest.ini` (section `[pytest]`; these
//! two are the configuration even when empty), `pyproject.toml` (`[tool.pytest]`, or
//! `[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and `setup.cfg` (`[tool:pytest]`). TOML is
//! read with the `toml` crate; the ini files as pytest's `iniconfig` reads them (`key = value` or
//! `key: value`, a value continued on indented lines, comment lines starting with `#` or `;`).
//! A value given as one string is split into words as pytest splits it (`shlex`, POSIX rules);
//! a TOML array is taken word by word.

use serde::Deserialize;

/// pytest's configuration files, in the order it looks for them.
pub const FILES: &[&str] = &[
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];

/// One setting: the words of its value, and the (1-based) line of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The line its key is on.
    pub line: u32,
    /// Its value, split into words.
    pub words: Vec<String>,
}

/// The settings of a pytest configuration that bear on which tests run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PytestConfig {
    /// `addopts`: options added to every run's command line.
    pub addopts: Option<Setting>,
    /// `testpaths`: where a run given no paths collects.
    pub testpaths: Option<Setting>,
    /// `python_files`: the glob patterns of test module file names.
    pub python_files: Option<Setting>,
    /// `norecursedirs`: the directories collection does not enter.
    pub norecursedirs: Option<Setting>,
}

/// A configuration file pytest would fail to read, or whose values cannot be split into words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{file}` cannot be read as pytest reads it: {why}")]
pub struct PytestConfigError {
    /// The file's name.
    pub file: String,
    /// What is wrong.
    pub why: String,
}

/// The pytest configuration in the file named `file_name` (its last path component, one of
/// [`FILES`]) holding `text`: `None` when pytest would not take it for its configuration (a
/// `pyproject.toml` with no `[tool.pytest]` table, a `tox.ini` with no `[pytest]` section, a
/// file not in [`FILES`]).
pub fn read(file_name: &str, text: &str) -> Result<Option<PytestConfig>, PytestConfigError> {
    let error = |why: String| PytestConfigError {
        file: file_name.to_owned(),
        why,
    };
    match file_name {
        "pytest.toml" | ".pytest.toml" => {
            let file: PytestToml = toml::from_str(text).map_err(|e| error(e.message().into()))?;
            Ok(Some(file.pytest.unwrap_or_default().settings(text, false)))
        }
        "pyproject.toml" => {
            let file: Pyproject = toml::from_str(text).map_err(|e| error(e.message().into()))?;
            let Some(mut pytest) = file.tool.and_then(|tool| tool.pytest) else {
                return Ok(None);
            };
            // `[tool.pytest]` takes native TOML values; `[tool.pytest.ini_options]` ini ones.
            Ok(Some(match pytest.ini_options.take() {
                Some(ini) => ini.settings(text, true),
                None => pytest.settings(text, false),
            }))
        }
        "pytest.ini" | ".pytest.ini" | "tox.ini" | "setup.cfg" => {
            let section = if file_name == "setup.cfg" {
                "tool:pytest"
            } else {
                "pytest"
            };
            let Some(values) = ini_section(text, section) else {
                return Ok(file_name.contains("pytest").then(PytestConfig::default));
            };
            let setting = |key: &str| -> Result<Option<Setting>, PytestConfigError> {
                let Some((line, value)) = values
                    .iter()
                    .find(|(k, _, _)| k == key)
                    .map(|(_, l, v)| (*l, v))
                else {
                    return Ok(None);
                };
                let words = shlex::split(value)
                    .ok_or_else(|| error(format!("`{key}` has an unclosed quote")))?;
                Ok(Some(Setting { line, words }))
            };
            Ok(Some(PytestConfig {
                addopts: setting("addopts")?,
                testpaths: setting("testpaths")?,
                python_files: setting("python_files")?,
                norecursedirs: setting("norecursedirs")?,
            }))
        }
        _ => Ok(None),
    }
}

/// The `key`, line and value of each setting in the section `[section]` of an ini file, as
/// pytest's `iniconfig` reads them; `None` when there is no such section.
fn ini_section(text: &str, section: &str) -> Option<Vec<(String, u32, String)>> {
    let mut found: Option<Vec<(String, u32, String)>> = None;
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation line of the last value.
            if let (true, Some(last)) = (inside, found.as_mut().and_then(|v| v.last_mut())) {
                last.2.push('\n');
                last.2.push_str(trimmed);
            }
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            inside = header.trim() == section;
            if inside {
                found.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if !inside {
            continue;
        }
        let split = trimmed.find(['=', ':']).map(|at| trimmed.split_at(at));
        if let (Some((key, value)), Some(values)) = (split, found.as_mut()) {
            values.push((key.trim().to_owned(), number, value[1..].trim().to_owned()));
        }
    }
    found
}

/// `pytest.toml`.
#[derive(Deserialize)]
struct PytestToml {
    pytest: Option<Table>,
}

/// `pyproject.toml`, as far as pytest reads it.
#[derive(Deserialize)]
struct Pyproject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    pytest: Option<Table>,
}

/// A table of pytest settings, each a string or an array of strings, with where it is; in
/// `pyproject.toml`'s `[tool.pytest]`, the `ini_options` table of ini-style ones.
#[derive(Default, Deserialize)]
struct Table {
    ini_options: Option<Box<Table>>,
    addopts: Option<toml::Spanned<Words>>,
    testpaths: Option<toml::Spanned<Words>>,
    python_files: Option<toml::Spanned<Words>>,
    norecursedirs: Option<toml::Spanned<Words>>,
}

/// A setting's TOML value.
#[derive(Clone, Deserialize)]
#[serde(untagged)]
enum Words {
    One(String),
    Many(Vec<String>),
}

impl Table {
    /// The settings, a string value split into words (`split`, for ini-style values) or taken
    /// as one word (native values); their lines found in `text`.
    fn settings(self, text: &str, split: bool) -> PytestConfig {
        let setting = |value: Option<toml::Spanned<Words>>| {
            let value = value?;
            let start = value.span().start.min(text.len());
            let line = text.as_bytes()[..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            let words = match value.into_inner() {
                Words::Many(words) => words,
                // An unsplittable string is kept whole: whatever reads it finds no option it knows.
                Words::One(one) if split => shlex::split(&one).unwrap_or_else(|| vec![one]),
                Words::One(one) => vec![one],
            };
            Some(Setting {
                line: u32::try_from(line).unwrap_or(u32::MAX),
                words,
            })
        };
        PytestConfig {
            addopts: setting(self.addopts),
            testpaths: setting(self.testpaths),
            python_files: setting(self.python_files),
            norecursedirs: setting(self.norecursedirs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(setting: &Option<Setting>) -> Option<(u32, Vec<&str>)> {
        setting
            .as_ref()
            .map(|s| (s.line, s.words.iter().map(String::as_str).collect()))
    }

    #[test]
    fn each_file_is_read_as_pytest_reads_it() {
        let ini = "[metadata]\nname = x\n\n[tool:pytest]\n# a comment\naddopts = -ra -k 'not slow'\npython_files =\n    test_*.py\n    *_check.py\ntestpaths: tests\n";
        let config = read("setup.cfg", ini).unwrap().unwrap();
        assert_eq!(
            words(&config.addopts),
            Some((6, vec!["-ra", "-k", "not slow"]))
        );
        assert_eq!(
            words(&config.python_files),
            Some((7, vec!["test_*.py", "*_check.py"]))
        );
        assert_eq!(words(&config.testpaths), Some((10, vec!["tests"])));
        assert_eq!(config.norecursedirs, None);

        let pyproject = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = [\n  \"-ra\",  # summary\n  \"-m\", \"not slow\",\n]\ntestpaths = \"tests docs\"\n";
        let config = read("pyproject.toml", pyproject).unwrap().unwrap();
        assert_eq!(
            words(&config.addopts),
            Some((5, vec!["-ra", "-m", "not slow"]))
        );
        assert_eq!(words(&config.testpaths), Some((9, vec!["tests", "docs"])));

        let native = "[tool.pytest]\nstrict = true\naddopts = [\"-ra\", \"--import-mode=importlib\"]\ntestpaths = [\"tests\"]\n";
        let config = read("pyproject.toml", native).unwrap().unwrap();
        assert_eq!(
            words(&config.addopts),
            Some((3, vec!["-ra", "--import-mode=importlib"]))
        );
        assert_eq!(words(&config.testpaths), Some((4, vec!["tests"])));

        let config = read("pytest.toml", "[pytest]\naddopts = [\"-q\"]\n")
            .unwrap()
            .unwrap();
        assert_eq!(words(&config.addopts), Some((2, vec!["-q"])));
    }

    #[test]
    fn a_file_without_pytest_settings_is_not_the_configuration_unless_pytest_ini() {
        assert_eq!(
            read("pyproject.toml", "[project]\nname = \"x\"\n"),
            Ok(None)
        );
        assert_eq!(read("tox.ini", "[tox]\nenvlist = py3\n"), Ok(None));
        assert_eq!(read("setup.cfg", "[pytest]\naddopts = -k x\n"), Ok(None));
        assert_eq!(read("pytest.ini", ""), Ok(Some(PytestConfig::default())));
        assert_eq!(read("README.md", "[pytest]"), Ok(None));
    }

    #[test]
    fn what_pytest_cannot_read_is_an_error() {
        assert!(read("pyproject.toml", "[tool.pytest.ini_options\n").is_err());
        assert!(read("pytest.ini", "[pytest]\naddopts = -k 'open\n").is_err());
    }
}
