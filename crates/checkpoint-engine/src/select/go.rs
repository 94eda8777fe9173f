//! `go test` narrowed to the changed packages and the packages of the module that import them.
//!
//! The module's packages, their files and their imports come from `go list -json ./...` (it
//! reads the sources and compiles nothing; at most 30 s and 64 MiB of output, with
//! `GOPROXY=off` and `GOTOOLCHAIN=local` so it never downloads; any error runs the command as
//! configured); the packages the command tests from `go list` of its patterns. Like `cargo
//! metadata` for Cargo, it is asked at every stop, never kept.
//!
//! A changed file belongs to the package that lists it: its Go files, the files its `//go:embed`
//! lines embed (`EmbedFiles`, `TestEmbedFiles`, `XTestEmbedFiles`), and any file under its
//! `testdata/` directory, which only its tests read. A package is affected when it owns a
//! changed non-test file (Go source or embedded) or imports an affected package, directly or
//! not; its tests run when it is affected, owns a changed test file (test source, test embed,
//! test data), or its tests import an affected package. A changed `go.mod`, `go.sum` or
//! `go.work`, and a file no package claims (a Go file no package builds on this platform, left
//! out by a build constraint; any other file no package embeds or holds in `testdata/`) run the
//! command as configured.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{Narrowing, Whole};
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// How long one `go list` may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most one `go list` may print.
const LIST_LIMIT: u64 = 64 * 1024 * 1024;
/// What `go list` runs with: nothing downloaded.
const LIST_ENV: &[(&str, &str)] = &[("GOPROXY", "off"), ("GOTOOLCHAIN", "local")];
/// Flags of `go test` that change nothing about which packages are tested.
const NEUTRAL_FLAGS: &[&str] = &["-v", "-short", "-failfast", "-race", "-cover", "-json"];
/// Prefixes of neutral flags given with their value (`-count=1`).
const NEUTRAL_WITH_VALUE: &[&str] = &["-count=", "-timeout=", "-p=", "-parallel=", "-covermode="];

/// A `go test` the gate can narrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoTest {
    /// `go test` and its flags.
    head: Vec<String>,
    /// The package patterns (`./...` when none but `.` was given).
    patterns: Vec<String>,
}

impl GoTest {
    /// `words` as `go test [neutral flags] [package patterns]`.
    pub fn recognise(words: &[String]) -> Option<GoTest> {
        let (program, rest) = words.split_first()?;
        let (subcommand, args) = rest.split_first()?;
        if program != "go" || subcommand != "test" {
            return None;
        }
        let mut head = vec![program.clone(), subcommand.clone()];
        let mut patterns = Vec::new();
        for arg in args {
            if arg.starts_with('-') {
                let neutral = NEUTRAL_FLAGS.contains(&arg.as_str())
                    || NEUTRAL_WITH_VALUE.iter().any(|p| arg.starts_with(p));
                if !neutral || !patterns.is_empty() {
                    return None;
                }
                head.push(arg.clone());
            } else if is_local_pattern(arg) {
                patterns.push(arg.clone());
            } else {
                return None;
            }
        }
        if patterns.is_empty() {
            patterns.push(".".to_owned());
        }
        Some(GoTest { head, patterns })
    }

    /// The selection for `changed` in the module at `workdir`, or the whole command.
    pub fn select(&self, changed: &[&str], workdir: &Path) -> Narrowing {
        let whole = |path: &&str| file_name(path).starts_with("go.");
        if changed.iter().any(whole) || !workdir.join("go.mod").is_file() {
            return Err(Whole::unsaid());
        }
        let module = list(workdir, &["./..."]).ok_or_else(Whole::unsaid)?;
        let tested: BTreeSet<String> = if self.patterns == ["./..."] {
            module.iter().map(|p| p.import_path.clone()).collect()
        } else {
            let patterns: Vec<&str> = self.patterns.iter().map(String::as_str).collect();
            list(workdir, &patterns)
                .ok_or_else(Whole::unsaid)?
                .into_iter()
                .map(|p| p.import_path)
                .collect()
        };
        let graph = Graph::new(&module, workdir).ok_or_else(Whole::unsaid)?;
        let affected = graph.affected(changed)?;
        let selected: Vec<&Package> = module
            .iter()
            .filter(|p| tested.contains(&p.import_path) && affected.contains(&p.import_path))
            .collect();
        let mut words = self.head.clone();
        for package in &selected {
            words.push(graph.relative_dir(package).ok_or_else(Whole::unsaid)?);
        }
        super::narrowed(
            &words,
            SelectionUnit::Packages,
            selected.len(),
            tested.len(),
            changed.len(),
        )
    }
}

/// Whether `arg` is a package pattern inside the module: `.`, `./…` (with `...` allowed at the
/// end), never climbing out with `..`.
fn is_local_pattern(arg: &str) -> bool {
    (arg == "." || arg.starts_with("./"))
        && !arg.split('/').any(|part| part == "..")
        && arg
            .chars()
            .all(|c| c.is_alphanumeric() || "./_-".contains(c))
}

/// One package as `go list -json` prints it, as far as the selection reads it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Package {
    import_path: String,
    dir: PathBuf,
    #[serde(default)]
    go_files: Vec<String>,
    #[serde(default)]
    cgo_files: Vec<String>,
    #[serde(default)]
    test_go_files: Vec<String>,
    #[serde(default)]
    x_test_go_files: Vec<String>,
    #[serde(default)]
    embed_files: Vec<String>,
    #[serde(default)]
    test_embed_files: Vec<String>,
    #[serde(default)]
    x_test_embed_files: Vec<String>,
    #[serde(default)]
    imports: Vec<String>,
    #[serde(default)]
    test_imports: Vec<String>,
    #[serde(default)]
    x_test_imports: Vec<String>,
}

/// The packages `go list -json <patterns>` prints in `workdir`; `None` when it fails.
fn list(workdir: &Path, patterns: &[&str]) -> Option<Vec<Package>> {
    let mut args = vec!["list", "-json"];
    args.extend_from_slice(patterns);
    let out = crate::runner::output("go", &args, LIST_ENV, workdir, LIST_TIMEOUT, LIST_LIMIT)?;
    // A stream of JSON objects, one per package.
    serde_json::Deserializer::from_slice(&out)
        .into_iter::<Package>()
        .collect::<Result<_, _>>()
        .ok()
}

/// The module's packages with their files by path relative to the module root.
struct Graph<'a> {
    /// Each package's directory relative to the module root, `/` separated (empty for the root).
    dirs: BTreeMap<&'a str, String>,
    packages: BTreeMap<&'a str, &'a Package>,
    /// For each file a package lists (Go source, embedded): the package and whether only its
    /// tests read it.
    files: BTreeMap<String, (&'a str, bool)>,
    /// The package of each package directory, by that directory (as in `dirs`).
    by_dir: BTreeMap<String, &'a str>,
}

impl<'a> Graph<'a> {
    fn new(module: &'a [Package], workdir: &Path) -> Option<Graph<'a>> {
        let root = workdir.canonicalize().ok()?;
        let mut files = BTreeMap::new();
        let mut dirs = BTreeMap::new();
        for package in module {
            let dir = package.dir.canonicalize().ok()?;
            let relative = super::slash_path(dir.strip_prefix(&root).ok()?)?;
            let build = (package.go_files.iter())
                .chain(&package.cgo_files)
                .chain(&package.embed_files);
            let tests = (package.test_go_files.iter())
                .chain(&package.x_test_go_files)
                .chain(&package.test_embed_files)
                .chain(&package.x_test_embed_files);
            let marked = build.map(|f| (f, false)).chain(tests.map(|f| (f, true)));
            for (file, test) in marked {
                let path = if relative.is_empty() {
                    file.clone()
                } else {
                    format!("{relative}/{file}")
                };
                files.insert(path, (package.import_path.as_str(), test));
            }
            dirs.insert(package.import_path.as_str(), relative);
        }
        let packages = module.iter().map(|p| (p.import_path.as_str(), p)).collect();
        let by_dir = dirs.iter().map(|(&p, dir)| (dir.clone(), p)).collect();
        Some(Graph {
            dirs,
            packages,
            files,
            by_dir,
        })
    }

    /// The package `path` belongs to and whether only its tests read it: the package listing it,
    /// else the package whose `testdata/` directory holds it. Why the whole command runs when
    /// no package claims it.
    fn claim(&self, path: &str) -> Result<(&'a str, bool), Whole> {
        if let Some(&claim) = self.files.get(path) {
            return Ok(claim);
        }
        if let Some(package) = self.testdata_owner(path) {
            return Ok((package, true));
        }
        Err(Whole::because(if path.ends_with(".go") {
            format!("`{path}` is built by no package on this platform")
        } else {
            format!("`{path}` is embedded by no package and lies in no package's `testdata`")
        }))
    }

    /// The package whose `testdata/` directory holds `path` (the outermost `testdata` on the
    /// way, as `go` ignores everything below it).
    fn testdata_owner(&self, path: &str) -> Option<&'a str> {
        let parts: Vec<&str> = path.split('/').collect();
        let at = parts[..parts.len() - 1]
            .iter()
            .position(|&part| part == "testdata")?;
        self.by_dir.get(&parts[..at].join("/")).copied()
    }

    /// The import paths of the packages whose tests `changed` can affect; why the whole command
    /// runs when a changed file belongs to no package.
    fn affected(&self, changed: &[&str]) -> Result<BTreeSet<String>, Whole> {
        let mut built: BTreeSet<&str> = BTreeSet::new();
        let mut tested: BTreeSet<&str> = BTreeSet::new();
        for path in changed {
            let (package, test) = self.claim(path)?;
            if test {
                tested.insert(package);
            } else {
                built.insert(package);
            }
        }
        loop {
            let more: Vec<&str> = self
                .packages
                .values()
                .filter(|p| !built.contains(p.import_path.as_str()))
                .filter(|p| p.imports.iter().any(|i| built.contains(i.as_str())))
                .map(|p| p.import_path.as_str())
                .collect();
            if more.is_empty() {
                break;
            }
            built.extend(more);
        }
        for package in self.packages.values() {
            let tests_import = package.test_imports.iter().chain(&package.x_test_imports);
            if tests_import.into_iter().any(|i| built.contains(i.as_str())) {
                tested.insert(&package.import_path);
            }
        }
        tested.extend(built);
        Ok(tested.into_iter().map(str::to_owned).collect())
    }

    /// `package`'s directory as a pattern relative to the module root: `.` or `./dir`.
    fn relative_dir(&self, package: &Package) -> Option<String> {
        let relative = self.dirs.get(package.import_path.as_str())?;
        Some(if relative.is_empty() {
            ".".to_owned()
        } else {
            format!("./{relative}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::words;

    #[test]
    fn go_test_is_recognised_with_neutral_flags_and_local_patterns() {
        let go = GoTest::recognise(&words("go test -count=1 -v ./...")).expect("recognised");
        assert_eq!(go.head, words("go test -count=1 -v"));
        assert_eq!(go.patterns, ["./..."]);
        assert_eq!(
            GoTest::recognise(&words("go test")).unwrap().patterns,
            ["."]
        );
        assert!(GoTest::recognise(&words("go test ./pkg/... ./cmd")).is_some());
        for command in [
            "go test -run TestX ./...",
            "go test -timeout 30s ./...",
            "go test ./... -v",
            "go test example.com/m/...",
            "go test ../other/...",
            "go vet ./...",
            "go",
        ] {
            assert_eq!(GoTest::recognise(&words(command)), None, "{command}");
        }
    }

    /// A package of the module at `root`, in `dir`, from `go list`'s JSON fields.
    fn package(root: &Path, dir: &str, fields: serde_json::Value) -> Package {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        let mut value = serde_json::json!({
            "ImportPath": format!("example.com/m/{dir}"),
            "Dir": root.join(dir),
        });
        value
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn embedded_files_and_test_data_belong_to_their_package() {
        let root = tempfile::tempdir().unwrap();
        let module = [
            package(
                root.path(),
                "calc",
                serde_json::json!({
                    "GoFiles": ["calc.go"],
                    "EmbedFiles": ["table.csv"],
                    "TestGoFiles": ["calc_test.go"],
                    "XTestEmbedFiles": ["want/out.golden"],
                }),
            ),
            package(
                root.path(),
                "app",
                serde_json::json!({
                    "GoFiles": ["app.go"],
                    "Imports": ["example.com/m/calc"],
                }),
            ),
        ];
        let graph = Graph::new(&module, root.path()).unwrap();
        let affected = |changed: &[&str]| graph.affected(changed).map(|a| a.into_iter().collect());
        let both = vec![
            "example.com/m/app".to_owned(),
            "example.com/m/calc".to_owned(),
        ];
        let calc = vec!["example.com/m/calc".to_owned()];
        assert_eq!(affected(&["calc/table.csv"]), Ok(both));
        assert_eq!(affected(&["calc/want/out.golden"]), Ok(calc.clone()));
        assert_eq!(affected(&["calc/testdata/golden.txt"]), Ok(calc.clone()));
        assert_eq!(affected(&["calc/testdata/deep/testdata/x.go"]), Ok(calc));
        assert_eq!(
            affected(&["app/testdata/in.json"]),
            Ok(vec!["example.com/m/app".to_owned()])
        );
        for unclaimed in [
            "calc/notes.csv",
            "doc/testdata/x",
            "testdata/x",
            "calc/other.go",
        ] {
            let whole = affected(&[unclaimed]).unwrap_err();
            assert!(whole.because.unwrap().contains(unclaimed), "{unclaimed}");
        }
    }
}
