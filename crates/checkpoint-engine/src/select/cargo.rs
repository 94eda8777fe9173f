//! `cargo test` narrowed to the affected packages of the workspace.
//!
//! The workspace's packages, where they live and which of them depend on which (by path, any
//! kind of dependency) come from `cargo metadata --format-version 1 --no-deps --offline` (it
//! reads the manifests and runs nothing of the project's; at most 30 s and 64 MiB of output).
//! It is asked at every stop that runs a recognised `cargo test` (20–150 ms on
//! a 23-crate workspace, a fraction of the test run), never kept: a graph stored in the state
//! directory could be edited by the agent to leave packages out.
//!
//! A changed file belongs to the package whose directory is the deepest one holding it. The
//! selected packages are those owners and every package that depends on one of them, directly or
//! not, among the packages the configured command tests (`--workspace`: every member; else the
//! default members, which is the root package of a non-virtual workspace).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{Narrowing, Whole};
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// How long `cargo metadata` may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);
/// The most `cargo metadata` may print.
const METADATA_LIMIT: u64 = 64 * 1024 * 1024;
/// Changed files that can change what every package builds or tests.
const WHOLE_BUILD: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain",
    "rust-toolchain.toml",
];
/// Flags of `cargo test` that choose packages or features themselves.
const CHOOSING_FLAGS: &[&str] = &[
    "-p",
    "--package",
    "--exclude",
    "--manifest-path",
    "-F",
    "--features",
    "-Z",
];

/// A `cargo test` the gate can narrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoTest {
    /// The words before `-p` go (`cargo test` and its flags, without `--workspace`).
    head: Vec<String>,
    /// `--` and what follows it (the test binaries' arguments), if given.
    tail: Vec<String>,
    /// Whether the command tests every member (`--workspace` / `--all`).
    workspace: bool,
}

impl CargoTest {
    /// `words` as a `cargo test` whose packages may be chosen for it: no flag that chooses
    /// packages or features already.
    pub fn recognise(words: &[String]) -> Option<CargoTest> {
        let (program, rest) = words.split_first()?;
        let (subcommand, args) = rest.split_first()?;
        if program != "cargo" || subcommand != "test" {
            return None;
        }
        let split = args.iter().position(|w| w == "--").unwrap_or(args.len());
        let (flags, tail) = args.split_at(split);
        let mut head = vec![program.clone(), subcommand.clone()];
        let mut workspace = false;
        for flag in flags {
            let name = flag.split_once('=').map_or(flag.as_str(), |(name, _)| name);
            let short_with_value = ["-p", "-F", "-Z"]
                .iter()
                .any(|short| flag.starts_with(short) && flag.len() > 2);
            if CHOOSING_FLAGS.contains(&name) || short_with_value {
                return None;
            }
            if matches!(flag.as_str(), "--workspace" | "--all") {
                workspace = true;
            } else {
                head.push(flag.clone());
            }
        }
        Some(CargoTest {
            head,
            tail: tail.to_vec(),
            workspace,
        })
    }

    /// The selection for `changed` in the workspace at `workdir`, or the whole command.
    pub fn select(&self, changed: &[&str], workdir: &Path) -> Narrowing {
        if changed.iter().any(|path| is_whole_build(path)) {
            return Err(Whole::unsaid());
        }
        let graph = Graph::of(workdir).ok_or_else(Whole::unsaid)?;
        let owners = graph.owners(workdir, changed).ok_or_else(Whole::unsaid)?;
        let affected = graph.dependents(owners);
        let tested: BTreeSet<usize> = if self.workspace {
            (0..graph.packages.len()).collect()
        } else {
            graph.default_members.iter().copied().collect()
        };
        let selected: Vec<usize> = tested.intersection(&affected).copied().collect();
        let mut words = self.head.clone();
        for &package in &selected {
            words.push("-p".to_owned());
            words.push(graph.packages[package].name.clone());
        }
        words.extend(self.tail.iter().cloned());
        super::narrowed(
            &words,
            SelectionUnit::Packages,
            selected.len(),
            tested.len(),
            changed.len(),
        )
    }
}

/// Whether a change to `path` may change every package's build or tests.
fn is_whole_build(path: &str) -> bool {
    let name = file_name(path);
    WHOLE_BUILD.contains(&name) || path.starts_with(".cargo/")
}

/// The workspace's packages as the selection needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Graph {
    /// The members, in `cargo metadata`'s order.
    packages: Vec<Package>,
    /// The members `cargo test` tests without `-p` or `--workspace`.
    default_members: Vec<usize>,
}

/// One member of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    /// Its name, as `-p` takes it.
    name: String,
    /// Its directory relative to the workspace root, `/` separated; empty for the root.
    dir: String,
    /// The members it depends on by path (normal, dev and build dependencies).
    deps: Vec<usize>,
}

impl Graph {
    /// The graph of the workspace at `workdir`, from `cargo metadata`.
    fn of(workdir: &Path) -> Option<Graph> {
        let json = metadata_json(workdir)?;
        let metadata: Metadata = serde_json::from_slice(&json).ok()?;
        Graph::from_metadata(&metadata, workdir)
    }

    /// The graph of `metadata`, whose workspace must be the one at `workdir`.
    fn from_metadata(metadata: &Metadata, workdir: &Path) -> Option<Graph> {
        let root = metadata.workspace_root.canonicalize().ok()?;
        if root != workdir.canonicalize().ok()? {
            return None;
        }
        let members: Vec<&MetaPackage> = metadata
            .packages
            .iter()
            .filter(|p| metadata.workspace_members.contains(&p.id))
            .collect();
        let dirs: Vec<PathBuf> = members
            .iter()
            .map(|p| p.manifest_path.parent().map(Path::to_owned))
            .collect::<Option<_>>()?;
        let index_of_dir = |dir: &Path| dirs.iter().position(|d| d == dir);
        let mut packages = Vec::new();
        for (member, dir) in members.iter().zip(&dirs) {
            let relative = dir.strip_prefix(&metadata.workspace_root).ok()?;
            let deps = member
                .dependencies
                .iter()
                .filter_map(|dep| index_of_dir(dep.path.as_deref()?))
                .collect();
            packages.push(Package {
                name: member.name.clone(),
                dir: super::slash_path(relative)?,
                deps,
            });
        }
        let default_ids = metadata.workspace_default_members.as_ref()?;
        let default_members = members
            .iter()
            .enumerate()
            .filter(|(_, p)| default_ids.contains(&p.id))
            .map(|(i, _)| i)
            .collect();
        Some(Graph {
            packages,
            default_members,
        })
    }

    /// The owners of `changed`; `None` when one has none.
    fn owners(&self, workdir: &Path, changed: &[&str]) -> Option<BTreeSet<usize>> {
        changed
            .iter()
            .map(|path| self.owner(workdir, path))
            .collect()
    }

    /// The package owning `path`: the member with the deepest directory holding it. `None` when
    /// no member holds it, or a directory on the way there has a manifest of a package that is
    /// not a member the graph knows.
    fn owner(&self, workdir: &Path, path: &str) -> Option<usize> {
        let mut dir = path;
        loop {
            dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
            if let Some(package) = self.packages.iter().position(|p| p.dir == dir) {
                return Some(package);
            }
            if dir.is_empty() || workdir.join(dir).join("Cargo.toml").exists() {
                return None;
            }
        }
    }

    /// `packages` and every member that depends on one of them, directly or not.
    fn dependents(&self, packages: BTreeSet<usize>) -> BTreeSet<usize> {
        let mut affected = packages;
        loop {
            let more: Vec<usize> = (0..self.packages.len())
                .filter(|p| !affected.contains(p))
                .filter(|&p| self.packages[p].deps.iter().any(|d| affected.contains(d)))
                .collect();
            if more.is_empty() {
                return affected;
            }
            affected.extend(more);
        }
    }
}

/// What `cargo metadata --no-deps` prints, as far as the selection reads it.
#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
    workspace_members: Vec<String>,
    /// Missing before Cargo 1.71: no selection then.
    workspace_default_members: Option<Vec<String>>,
    workspace_root: PathBuf,
}

#[derive(Debug, Deserialize)]
struct MetaPackage {
    id: String,
    name: String,
    manifest_path: PathBuf,
    dependencies: Vec<MetaDependency>,
}

#[derive(Debug, Deserialize)]
struct MetaDependency {
    /// Set for a path dependency.
    path: Option<PathBuf>,
}

/// The output of `cargo metadata` in `workdir`, bounded in time and size; `None` when it fails.
fn metadata_json(workdir: &Path) -> Option<Vec<u8>> {
    let args = [
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ];
    crate::runner::output(
        "cargo",
        &args,
        &[],
        workdir,
        METADATA_TIMEOUT,
        METADATA_LIMIT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::words;

    #[test]
    fn cargo_test_is_recognised_unless_it_chooses_packages_itself() {
        let plain = CargoTest::recognise(&words("cargo test -q --workspace -- --nocapture"))
            .expect("recognised");
        assert_eq!(plain.head, words("cargo test -q"));
        assert_eq!(plain.tail, words("-- --nocapture"));
        assert!(plain.workspace);
        for command in [
            "cargo test -p a",
            "cargo test --package=a",
            "cargo test -pa",
            "cargo test --exclude a --workspace",
            "cargo test --manifest-path x/Cargo.toml",
            "cargo test --features f",
            "cargo test -Ffoo",
            "cargo build",
            "cargo",
            "cargo-test",
        ] {
            assert_eq!(CargoTest::recognise(&words(command)), None, "{command}");
        }
    }

    fn graph() -> Graph {
        // app -> core, cli -> app, tool (independent), root package "" depends on nothing.
        let package = |name: &str, dir: &str, deps: &[usize]| Package {
            name: name.to_owned(),
            dir: dir.to_owned(),
            deps: deps.to_vec(),
        };
        Graph {
            packages: vec![
                package("core", "crates/core", &[]),
                package("app", "crates/app", &[0]),
                package("cli", "crates/cli", &[1]),
                package("tool", "tools/tool", &[]),
            ],
            default_members: vec![0, 1, 2, 3],
        }
    }

    #[test]
    fn owners_are_the_deepest_member_directory() {
        let graph = graph();
        let dir = Path::new("/nonexistent");
        assert_eq!(graph.owner(dir, "crates/core/src/lib.rs"), Some(0));
        assert_eq!(graph.owner(dir, "crates/app/tests/it.rs"), Some(1));
        assert_eq!(graph.owner(dir, "README.md"), None);
        assert_eq!(graph.owner(dir, "crates/other/src/lib.rs"), None);
    }

    #[test]
    fn dependents_are_followed_transitively() {
        let graph = graph();
        let of = |p: &[usize]| {
            graph
                .dependents(p.iter().copied().collect())
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(of(&[0]), [0, 1, 2]);
        assert_eq!(of(&[1]), [1, 2]);
        assert_eq!(of(&[3]), [3]);
    }
}
