//! `cargo test` narrowed to the affected packages of the workspace.
//!
//! The workspace's packages, where they live and which of them depend on which (by path, any
//! kind of dependency) come from `cargo metadata --format-version 1 --no-deps --offline` (it
//! reads the manifests and runs nothing of the project's; at most 30 s and 64 MiB of output).
//! It is asked at every stop that runs a recognised `cargo test` (20–150 ms on
//! a 23-crate workspace, a fraction of the test run), never kept: a graph stored in the state
//! directory could be edited by the agent to leave packages out.
//!
//! A changed file is read by the packages the last build recorded reading it: cargo's dep-info
//! files in the target directory (`cargo metadata`'s `target_directory`, profile `debug`, or
//! `release` for `--release`) list every file rustc read for a target — its modules, wherever
//! they lie (`#[path]`), and the files `include_str!`, `include_bytes!` and `include!` pull in —
//! and a build script's `rerun-if-changed` paths (or, when it named none, its whole package
//! directory, which cargo then reruns it for). A target's record is the dep-info whose first file
//! is the target's root source. A package's own Rust source (`.rs` under its `src/`, `tests/`,
//! `benches/`, `examples/`, or its `build.rs`: the deepest member directory holding it) is also
//! read by that package, recorded or not, so a new module or test file narrows.
//!
//! Anything else is known only from the record: a changed file that is not a package's own Rust
//! source runs the command as configured when a package the command tests has no record (never
//! built), or when no record lists it (a file only read at run time, or by nothing). The record
//! is read at every stop, bounded (at most 20 000 files and 64 MiB; beyond that, or a file that
//! cannot be read, there is no record) and only for the workspace's own crates; it is cargo's,
//! outside the project's state, and a record that lists too much only runs more.
//!
//! The selected packages are the readers and every package that depends on one of them,
//! directly or not, among the packages the configured command tests (`--workspace`: every member;
//! else the default members, which is the root package of a non-virtual workspace). A command
//! that builds elsewhere (`--target`, `--target-dir`, `--profile`) has no record.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{Narrowing, Whole};
use checkpoint_core::changes::file_name;
use checkpoint_core::outcome::SelectionUnit;

/// How long `cargo metadata` may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);
/// The most `cargo metadata` may print.
const METADATA_LIMIT: u64 = 64 * 1024 * 1024;
/// The most files of the record (dep-info and build script output) read at one stop.
const RECORD_FILES: usize = 20_000;
/// The most bytes of the record read at one stop.
const RECORD_BYTES: u64 = 64 * 1024 * 1024;
/// The most directory entries looked at for the record at one stop.
const RECORD_ENTRIES: usize = 200_000;
/// The package directories whose Rust files are a package's own sources.
const SOURCE_DIRS: &[&str] = &["src/", "tests/", "benches/", "examples/"];
/// Flags of `cargo test` that build somewhere else than `<target>/debug` or `<target>/release`.
const ELSEWHERE_FLAGS: &[&str] = &["--target", "--target-dir", "--profile"];
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
        let tested: BTreeSet<usize> = if self.workspace {
            (0..graph.packages.len()).collect()
        } else {
            graph.default_members.iter().copied().collect()
        };
        let reads = self
            .profile()
            .and_then(|profile| Reads::recorded(&graph, &graph.target_dir.join(profile)))
            .unwrap_or_default();
        let readers = graph.readers(workdir, changed, &reads, &tested)?;
        let affected = graph.dependents(readers);
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

impl CargoTest {
    /// The directory under the target directory the command builds in; `None` when it builds
    /// elsewhere.
    fn profile(&self) -> Option<&'static str> {
        let mut release = false;
        for word in &self.head {
            let name = word.split_once('=').map_or(word.as_str(), |(name, _)| name);
            if ELSEWHERE_FLAGS.contains(&name) {
                return None;
            }
            release |= matches!(name, "--release" | "-r");
        }
        Some(if release { "release" } else { "debug" })
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
    /// The workspace root as cargo names it (and passes it to rustc).
    root: PathBuf,
    /// Where cargo builds.
    target_dir: PathBuf,
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
    /// Its targets' crate names (`-` as `_`), as dep-info files are named.
    crates: Vec<String>,
    /// Its targets' root sources, relative to the workspace root, `/` separated.
    roots: Vec<String>,
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
            let targets = &member.targets;
            packages.push(Package {
                name: member.name.clone(),
                dir: super::slash_path(relative)?,
                deps,
                crates: targets.iter().map(|t| t.name.replace('-', "_")).collect(),
                roots: (targets.iter())
                    .filter_map(|t| {
                        normal_relative(t.src_path.strip_prefix(&metadata.workspace_root).ok()?)
                    })
                    .collect(),
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
            root: metadata.workspace_root.clone(),
            target_dir: metadata.target_directory.clone(),
        })
    }

    /// The packages that read `changed`, by `reads` and their own sources; why the whole
    /// command runs when that is not known for a changed file (see the module documentation).
    fn readers(
        &self,
        workdir: &Path,
        changed: &[&str],
        reads: &Reads,
        tested: &BTreeSet<usize>,
    ) -> Result<BTreeSet<usize>, Whole> {
        let mut all = BTreeSet::new();
        for path in changed {
            let by_dir = self.owner(workdir, path);
            let source = by_dir.filter(|&p| self.is_own_source(p, path));
            let unrecorded = tested.iter().find(|p| !reads.recorded.contains(p));
            if let (None, Some(&unrecorded)) = (source, unrecorded) {
                return Err(Whole::because(if reads.recorded.is_empty() {
                    format!(
                        "`{path}` is no package's Rust source, and no build has recorded which \
                         files the packages read"
                    )
                } else {
                    format!(
                        "`{path}` is no package's Rust source, and no build has recorded which \
                         files `{}` reads",
                        self.packages[unrecorded].name
                    )
                }));
            }
            let mut readers = reads.readers_of(path);
            readers.extend(source);
            readers.extend(by_dir.filter(|p| reads.whole_dir.contains(p)));
            if readers.is_empty() {
                return Err(Whole::because(format!(
                    "`{path}` is read by no package the last build recorded"
                )));
            }
            all.extend(readers);
        }
        Ok(all)
    }

    /// Whether `path` is Rust source of `package`'s own: a `.rs` file under its `src/`,
    /// `tests/`, `benches/` or `examples/`, or its `build.rs`.
    fn is_own_source(&self, package: usize, path: &str) -> bool {
        let dir = &self.packages[package].dir;
        let within = if dir.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(dir.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
        };
        within.is_some_and(|within| {
            within == "build.rs"
                || (within.ends_with(".rs") && SOURCE_DIRS.iter().any(|d| within.starts_with(d)))
        })
    }

    /// The package whose target has the root source `path` (relative to the workspace root).
    fn package_of_root(&self, path: &str) -> Option<usize> {
        (self.packages.iter()).position(|p| p.roots.iter().any(|root| root == path))
    }

    /// `path` (as a dep-info or a build script names it) relative to the workspace root and
    /// without `.` or `..`, `/` separated; `None` outside the workspace.
    fn in_workspace(&self, path: &Path) -> Option<String> {
        if path.is_absolute() {
            normal_relative(path.strip_prefix(&self.root).ok()?)
        } else {
            normal_relative(path)
        }
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

/// `path`, relative, without `.` and with each `..` taking away the part before it, `/`
/// separated; `None` when it climbs out, is absolute or is not UTF-8.
fn normal_relative(path: &Path) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// What the last build recorded the packages read (see the module documentation).
#[derive(Debug, Default, PartialEq, Eq)]
struct Reads {
    /// The packages that read each file or directory, relative to the workspace root, `/`
    /// separated.
    readers: BTreeMap<String, BTreeSet<usize>>,
    /// The packages with a record of at least one target.
    recorded: BTreeSet<usize>,
    /// The packages whose build script reads their whole directory (it named no file).
    whole_dir: BTreeSet<usize>,
}

impl Reads {
    /// The record of `graph`'s packages in the build directory `profile` (`<target>/debug`);
    /// `None` beyond the bounds or when a file of it cannot be read. Only dep-info files named
    /// for a crate of the workspace, and build script directories named for one of its
    /// packages, are read.
    fn recorded(graph: &Graph, profile: &Path) -> Option<Reads> {
        let mut record = Record {
            graph,
            reads: Reads::default(),
            files: RECORD_FILES,
            bytes: RECORD_BYTES,
            entries: RECORD_ENTRIES,
        };
        let crates: BTreeSet<&str> = (graph.packages.iter())
            .flat_map(|p| p.crates.iter().map(String::as_str))
            .collect();
        for path in record.list(&profile.join("deps"))? {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let stem = name.strip_suffix(".d").and_then(|s| s.rsplit_once('-'));
            if stem.is_some_and(|(krate, _)| crates.contains(krate)) {
                record.dep_info(&path)?;
            }
        }
        for dir in record.list(&profile.join("build"))? {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let package = (name.rsplit_once('-'))
                .and_then(|(name, _)| graph.packages.iter().position(|p| p.name == name));
            let Some(package) = package else { continue };
            for path in record.list(&dir)? {
                if path.extension().is_some_and(|e| e == "d") {
                    record.dep_info(&path)?;
                } else if path.file_name().is_some_and(|n| n == "output") {
                    record.build_output(package, &path)?;
                }
            }
        }
        Some(record.reads)
    }

    /// The packages that read `path` or a directory holding it.
    fn readers_of(&self, path: &str) -> BTreeSet<usize> {
        let mut readers = BTreeSet::new();
        let mut at = path;
        loop {
            readers.extend(self.readers.get(at).into_iter().flatten());
            match at.rsplit_once('/') {
                Some((parent, _)) => at = parent,
                None => return readers,
            }
        }
    }
}

/// The record as it is read, with what is left of the bounds.
struct Record<'a> {
    graph: &'a Graph,
    reads: Reads,
    /// Files that may still be read.
    files: usize,
    /// Bytes that may still be read.
    bytes: u64,
    /// Directory entries that may still be looked at.
    entries: usize,
}

impl Record<'_> {
    /// The entries of `dir`: none when it does not exist; `None` beyond the bounds or when it
    /// cannot be read.
    fn list(&mut self, dir: &Path) -> Option<Vec<PathBuf>> {
        let entries = match std::fs::read_dir(dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Vec::new()),
            entries => entries.ok()?,
        };
        let mut paths = Vec::new();
        for entry in entries {
            self.entries = self.entries.checked_sub(1)?;
            paths.push(entry.ok()?.path());
        }
        Some(paths)
    }

    /// The text of the record's file at `path`, within the bounds.
    fn read(&mut self, path: &Path) -> Option<String> {
        self.files = self.files.checked_sub(1)?;
        let text = crate::bounded::read_regular_text(path, self.bytes).ok()?;
        self.bytes -= text.len() as u64;
        Some(text)
    }

    /// Adds the dep-info file at `path`: the files it lists are read by the package whose target
    /// has the first of them as its root source (a dep-info of no workspace target adds nothing).
    fn dep_info(&mut self, path: &Path) -> Option<()> {
        let text = self.read(path)?;
        let files = dep_info_files(&text);
        let first = files
            .first()
            .and_then(|f| self.graph.in_workspace(Path::new(f)));
        let Some(package) = first.and_then(|root| self.graph.package_of_root(&root)) else {
            return Some(());
        };
        self.reads.recorded.insert(package);
        for file in &files {
            if let Some(file) = self.graph.in_workspace(Path::new(file)) {
                self.reads.readers.entry(file).or_default().insert(package);
            }
        }
        Some(())
    }

    /// Adds the output of `package`'s build script at `path`: its `rerun-if-changed` paths
    /// (relative to the package directory), or its whole directory when it named none and no
    /// `rerun-if-env-changed` either.
    fn build_output(&mut self, package: usize, path: &Path) -> Option<()> {
        let text = self.read(path)?;
        let dir = self.graph.root.join(&self.graph.packages[package].dir);
        let mut rerun_if = false;
        for line in text.lines() {
            let Some(instruction) =
                (line.strip_prefix("cargo::")).or_else(|| line.strip_prefix("cargo:"))
            else {
                continue;
            };
            rerun_if |= instruction.starts_with("rerun-if-");
            let changed = instruction.strip_prefix("rerun-if-changed=");
            if let Some(file) = changed.and_then(|f| self.graph.in_workspace(&dir.join(f))) {
                self.reads.readers.entry(file).or_default().insert(package);
            }
        }
        if !rerun_if {
            self.reads.whole_dir.insert(package);
        }
        Some(())
    }
}

/// The files the first rule of a Makefile-style dep-info file lists (`target: file file …`,
/// `\ ` standing for a space in a name).
fn dep_info_files(text: &str) -> Vec<String> {
    let rule = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((_, files)) = rule.and_then(|rule| rule.split_once(": ").or(rule.split_once(':')))
    else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut name = String::new();
    let mut chars = files.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.extend(chars.next()),
            ' ' | '\t' => names.extend((!name.is_empty()).then(|| std::mem::take(&mut name))),
            c => name.push(c),
        }
    }
    names.extend((!name.is_empty()).then_some(name));
    names
}

/// What `cargo metadata --no-deps` prints, as far as the selection reads it.
#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
    workspace_members: Vec<String>,
    /// Missing before Cargo 1.71: no selection then.
    workspace_default_members: Option<Vec<String>>,
    workspace_root: PathBuf,
    target_directory: PathBuf,
}

#[derive(Debug, Deserialize)]
struct MetaPackage {
    id: String,
    name: String,
    manifest_path: PathBuf,
    dependencies: Vec<MetaDependency>,
    targets: Vec<MetaTarget>,
}

#[derive(Debug, Deserialize)]
struct MetaTarget {
    name: String,
    src_path: PathBuf,
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
            crates: vec![name.to_owned()],
            roots: vec![format!("{dir}/src/lib.rs")],
        };
        Graph {
            packages: vec![
                package("core", "crates/core", &[]),
                package("app", "crates/app", &[0]),
                package("cli", "crates/cli", &[1]),
                package("tool", "tools/tool", &[]),
            ],
            default_members: vec![0, 1, 2, 3],
            root: PathBuf::from("/ws"),
            target_dir: PathBuf::from("/ws/target"),
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

    #[test]
    fn dep_info_lists_the_files_of_its_first_rule() {
        let text = "/t/debug/deps/app-1.d: crates/app/src/lib.rs crates/app/src/../../../fix\\ tures/x.golden\n\n\
                    /t/debug/deps/app-1: crates/app/src/lib.rs\n\ncrates/app/src/lib.rs:\n\n\
                    # env-dep:CARGO_PKG_NAME=app\n";
        assert_eq!(
            dep_info_files(text),
            [
                "crates/app/src/lib.rs",
                "crates/app/src/../../../fix tures/x.golden"
            ]
        );
        assert!(dep_info_files("").is_empty());
        assert_eq!(
            normal_relative(Path::new("crates/app/src/../../../fixtures/x")).as_deref(),
            Some("fixtures/x")
        );
        assert_eq!(normal_relative(Path::new("crates/../../x")), None);
    }

    /// Writes `text` to `path` under `dir`, making its directories.
    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_record_is_what_the_dep_info_and_build_scripts_list() {
        let target = tempfile::tempdir().unwrap();
        let profile = target.path().join("debug");
        let mut graph = graph();
        graph.root = PathBuf::from("/ws");
        // `app`'s test includes a golden file outside every package and data of `core`'s.
        write(
            &profile,
            "deps/app-1.d",
            "/t/app-1: crates/app/src/lib.rs crates/app/src/../../../fixtures/expected.golden \
             /ws/crates/core/tests/data/d.expected /home/u/.cargo/registry/x/src/lib.rs\n",
        );
        write(
            &profile,
            "deps/core-2.d",
            "/t/core-2: crates/core/src/lib.rs\n",
        );
        // Not a workspace crate, and a dep-info whose root is no target: both ignored.
        write(
            &profile,
            "deps/serde-3.d",
            "/t/serde-3: crates/tool/src/lib.rs\n",
        );
        write(
            &profile,
            "deps/tool-4.d",
            "/t/tool-4: crates/app/src/x.rs\n",
        );
        // `tool`'s build script names its input; `cli`'s names none.
        write(
            &profile,
            "build/tool-5/output",
            "cargo:rerun-if-changed=../../fixtures/in.dat\ncargo:rustc-cfg=x\n",
        );
        write(&profile, "build/cli-6/output", "cargo:rustc-cfg=x\n");
        let reads = Reads::recorded(&graph, &profile).expect("within bounds");
        let set = |p: &[usize]| p.iter().copied().collect::<BTreeSet<_>>();
        assert_eq!(reads.readers_of("fixtures/expected.golden"), set(&[1]));
        assert_eq!(
            reads.readers_of("crates/core/tests/data/d.expected"),
            set(&[1])
        );
        assert_eq!(reads.readers_of("crates/core/src/lib.rs"), set(&[0]));
        assert_eq!(reads.readers_of("fixtures/in.dat"), set(&[3]));
        assert_eq!(reads.recorded, set(&[0, 1]));
        assert_eq!(reads.whole_dir, set(&[2]));

        let dir = Path::new("/nonexistent");
        let tested = set(&[0, 1]);
        let readers = |path: &str| graph.readers(dir, &[path], &reads, &tested);
        assert_eq!(readers("fixtures/expected.golden"), Ok(set(&[1])));
        assert_eq!(readers("crates/core/tests/data/d.expected"), Ok(set(&[1])));
        // A package's own new source narrows; its build script's whole directory too.
        assert_eq!(readers("crates/core/tests/new.rs"), Ok(set(&[0])));
        assert_eq!(readers("crates/cli/data/x.json"), Ok(set(&[2])));
        let because = |path: &str| readers(path).unwrap_err().because.unwrap();
        assert!(
            because("crates/core/tests/data/read_at_run_time.json").contains("read by no package")
        );
        assert!(because("fixtures/unread.golden").contains("read by no package"));
        // A tested package without a record: only own sources narrow.
        let unrecorded =
            graph.readers(dir, &["fixtures/expected.golden"], &reads, &set(&[0, 1, 3]));
        assert!(
            unrecorded
                .unwrap_err()
                .because
                .unwrap()
                .contains("which files `tool` reads")
        );
        let none = Reads::default();
        assert_eq!(
            graph.readers(dir, &["crates/app/src/lib.rs"], &none, &tested),
            Ok(set(&[1]))
        );
        let fresh = graph.readers(dir, &["crates/app/data.json"], &none, &tested);
        assert!(
            fresh
                .unwrap_err()
                .because
                .unwrap()
                .contains("which files the packages read")
        );
    }

    #[test]
    fn the_record_is_bounded() {
        let target = tempfile::tempdir().unwrap();
        let graph = graph();
        write(
            target.path(),
            "deps/core-1.d",
            &format!("x: {}\n", "a/".repeat(40)),
        );
        let record = |files, bytes| {
            Record {
                graph: &graph,
                reads: Reads::default(),
                files,
                bytes,
                entries: 10,
            }
            .dep_info(&target.path().join("deps/core-1.d"))
        };
        assert_eq!(record(1, 1000), Some(()));
        assert_eq!(record(0, 1000), None);
        assert_eq!(record(1, 10), None);
    }

    #[test]
    fn a_command_building_elsewhere_has_no_record() {
        let profile = |command: &str| CargoTest::recognise(&words(command)).unwrap().profile();
        assert_eq!(profile("cargo test -q"), Some("debug"));
        assert_eq!(profile("cargo test --release"), Some("release"));
        for command in [
            "cargo test --target x86_64-unknown-linux-gnu",
            "cargo test --target-dir=t",
            "cargo test --profile ci",
        ] {
            assert_eq!(profile(command), None, "{command}");
        }
    }
}
