//! The workspace's shape, checked: no import cycles between the files of a crate nor between its
//! top-level modules (folders), an agent-neutral core (no branch on a particular agent outside
//! the agent's own home), and no Rust file that no crate declares (never compiled: its tests
//! never run).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path inside a crate (`["gate", "stop"]`), and the file that holds it.
type Modules = BTreeMap<Vec<String>, PathBuf>;

/// Which modules each module refers to.
type Edges = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn crates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file holds: `src/gate/mod.rs` and `src/gate.rs` are `gate`, `lib.rs` is the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// `text` with each comment line emptied (not removed: line numbers stay those of the file).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The code of a file without comments and without its `#[cfg(test)] mod tests { … }` tail.
fn code(file: &Path) -> String {
    without_comments(without_test_tail(&fs::read_to_string(file).unwrap()))
}

/// `text` up to its inline test module (`#[cfg(test)] mod tests {`, `pub(crate) mod tests {`),
/// the end of what the file imports. A test module in a file of its own (`#[cfg(test)] mod
/// tests;`, often at the top) ends nothing.
fn without_test_tail(text: &str) -> &str {
    let end = text
        .match_indices("#[cfg(test)]")
        .find(|(at, marker)| {
            let rest = text[at + marker.len()..].trim_start();
            ["mod tests", "pub(crate) mod tests"].iter().any(|m| {
                rest.strip_prefix(m)
                    .is_some_and(|r| r.trim_start().starts_with('{'))
            })
        })
        .map_or(text.len(), |(at, _)| at);
    &text[..end]
}

/// Every `crate::a::b` and `super::a` path in `code`, with `use x::{a, b}` groups expanded one
/// level, as module paths relative to the crate root.
fn referenced_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let starts = ["crate::", "super::"]
            .into_iter()
            .find(|p| code[i..].starts_with(p));
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let (Some(_), true) = (starts, boundary) else {
            i += 1;
            continue;
        };
        let end = code[i..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(code.len(), |n| i + n);
        let path = code[i..end].trim_end_matches(':');
        let mut segments: Vec<&str> = path.split("::").collect();
        let mut base: Vec<String> = match segments.first() {
            Some(&"crate") => {
                segments.remove(0);
                Vec::new()
            }
            _ => {
                let mut base = module.to_vec();
                while segments.first() == Some(&"super") {
                    segments.remove(0);
                    base.pop();
                }
                base
            }
        };
        base.extend(segments.iter().map(|s| s.to_string()));
        if code[end..].starts_with("{") || code[end..].starts_with("::{") {
            let open = end + code[end..].find('{').unwrap();
            let close = open + code[open..].find('}').unwrap_or(0);
            for item in code[open + 1..close].split(',') {
                let name = item.trim().split([':', ' ']).next().unwrap_or("");
                if !name.is_empty() && name != "self" {
                    let mut path = base.clone();
                    path.push(name.to_owned());
                    found.push(path);
                }
            }
        }
        found.push(base);
        i = end.max(i + 1);
    }
    found
}

/// The names a crate root takes from other crates with `use` (`pub use checkpoint_core::{agent,
/// Agent};` gives `agent` and `Agent`): `crate::agent::…` then names another crate's module, not
/// a file of this one. `local` are the crate's own top-level modules.
fn names_from_other_crates(root: &str, local: &BTreeSet<&str>) -> BTreeSet<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut names = BTreeSet::new();
    for (at, _) in root.match_indices("use ") {
        if root[..at].chars().next_back().is_some_and(ident) {
            continue;
        }
        let statement = &root[at + "use ".len()..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        let mut words = statement
            .split(|c: char| !ident(c))
            .filter(|w| !w.is_empty());
        let first = words.next().unwrap_or("");
        if ["crate", "self", "super"].contains(&first) || local.contains(first) {
            continue;
        }
        names.extend(
            words
                .filter(|w| !["self", "as"].contains(w))
                .map(str::to_owned),
        );
    }
    names
}

/// The longest prefix of `path` that is a module of the crate. A path that starts with a name
/// the root takes from another crate (and not with a module of this one) resolves to none.
fn resolve<'a>(
    modules: &'a Modules,
    foreign: &BTreeSet<String>,
    path: &[String],
) -> Option<&'a Vec<String>> {
    let local = |n: usize| modules.get_key_value(&path[..n]).map(|(k, _)| k);
    if !path.is_empty() && local(1).is_none() && foreign.contains(&path[0]) {
        return None;
    }
    (0..=path.len()).rev().find_map(local)
}

/// The import graph of one crate's files. A `main.rs` beside a `lib.rs`, and `src/bin`, are
/// crates of their own (they call the library by name), so they are left out.
fn graph(src: &Path) -> (Modules, Edges) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let has_lib = src.join("lib.rs").is_file();
    let main = src.join("main.rs");
    files.retain(|f| (!has_lib || *f != main) && !f.starts_with(src.join("bin")));
    let modules: Modules = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let local: BTreeSet<&str> = modules
        .keys()
        .filter_map(|m| m.first().map(String::as_str))
        .collect();
    let foreign = modules
        .get(&Vec::new())
        .map(|root| names_from_other_crates(&code(root), &local))
        .unwrap_or_default();
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        let targets: BTreeSet<Vec<String>> = referenced_paths(&code(file), module)
            .iter()
            .filter_map(|path| resolve(&modules, &foreign, path))
            .filter(|target| *target != module)
            .cloned()
            .collect();
        edges.insert(module.clone(), targets);
    }
    (modules, edges)
}

/// Whether `file` holds unit tests only (`tests.rs`, `log_tests.rs`, declared under
/// `#[cfg(test)]`): what it imports is no dependency of the code.
fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// The graph between the crate's top-level modules (its folders: `git::call` belongs to `git`),
/// without the edges inside one, nor those of unit-test files.
fn folders(modules: &Modules, edges: &Edges) -> Edges {
    let top = |module: &Vec<String>| module.first().cloned().into_iter().collect::<Vec<_>>();
    let mut out: Edges = BTreeMap::new();
    for (from, targets) in edges {
        if modules.get(from).is_some_and(|file| is_test_file(file)) {
            continue;
        }
        let from = top(from);
        let entry = out.entry(from.clone()).or_default();
        entry.extend(targets.iter().map(top).filter(|to| *to != from));
    }
    for to in out.values().flatten().cloned().collect::<Vec<_>>() {
        out.entry(to).or_default();
    }
    out
}

/// The cycles of a graph (strongly connected components with more than one member).
fn cycles(edges: &Edges) -> Vec<Vec<Vec<String>>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph.
    fn visit<'a>(
        node: &'a Vec<String>,
        edges: &'a Edges,
        seen: &mut BTreeSet<&'a Vec<String>>,
        out: &mut Vec<&'a Vec<String>>,
    ) {
        if !seen.insert(node) {
            return;
        }
        for next in &edges[node] {
            visit(next, edges, seen, out);
        }
        out.push(node);
    }
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for node in edges.keys() {
        visit(node, edges, &mut seen, &mut order);
    }
    let mut reversed: Edges = edges.keys().map(|k| (k.clone(), BTreeSet::new())).collect();
    for (from, targets) in edges {
        for to in targets {
            reversed.get_mut(to).unwrap().insert(from.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut found = Vec::new();
    for node in order.into_iter().rev() {
        let mut component = Vec::new();
        visit(node, &reversed, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            found.push(component.into_iter().cloned().collect());
        }
    }
    found
}

/// Each edge inside a cycle of `edges`, `from → to`, for the failure message.
fn cycle_edges(edges: &Edges, cycle: &[Vec<String>]) -> Vec<(Vec<String>, Vec<String>)> {
    let members: BTreeSet<&Vec<String>> = cycle.iter().collect();
    cycle
        .iter()
        .flat_map(|from| {
            edges[from]
                .iter()
                .filter(|to| members.contains(to))
                .map(|to| (from.clone(), to.clone()))
        })
        .collect()
}

#[test]
fn no_import_cycles_between_files() {
    let mut problems = Vec::new();
    for src in crates() {
        let (modules, edges) = graph(&src);
        for cycle in cycles(&edges) {
            let files: Vec<String> = cycle
                .iter()
                .map(|m| modules[m].strip_prefix(&src).unwrap().display().to_string())
                .collect();
            problems.push(format!("{}: {}", shown(&src), files.join(" ↔ ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles:\n{}",
        problems.join("\n")
    );
}

/// `path` relative to the workspace, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(workspace())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn no_import_cycles_between_folders() {
    let mut problems = Vec::new();
    for src in crates() {
        let (modules, edges) = graph(&src);
        let folders = folders(&modules, &edges);
        for cycle in cycles(&folders) {
            // Which files make each step of the cycle, so that the message says what to move.
            let steps: Vec<String> = cycle_edges(&folders, &cycle)
                .into_iter()
                .map(|(from, to)| {
                    let files: BTreeSet<String> = edges
                        .iter()
                        .filter(|(m, targets)| {
                            !is_test_file(&modules[*m])
                                && m.first() == from.first()
                                && targets.iter().any(|t| t.first() == to.first())
                        })
                        .map(|(m, _)| modules[m].strip_prefix(&src).unwrap().display().to_string())
                        .collect();
                    format!(
                        "{} → {} (in {})",
                        from.join("::"),
                        to.join("::"),
                        files.into_iter().collect::<Vec<_>>().join(", ")
                    )
                })
                .collect();
            problems.push(format!("{}:\n  {}", shown(&src), steps.join("\n  ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles between top-level modules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let node = |name: &str| vec![name.to_owned()];
    let edges: Edges = [
        (node("a"), BTreeSet::from([node("b")])),
        (node("b"), BTreeSet::from([node("a"), node("c")])),
        (node("c"), BTreeSet::new()),
    ]
    .into_iter()
    .collect();
    assert_eq!(cycles(&edges).len(), 1);
    // A test module declared at the top ends nothing; an inline one ends the code.
    let text =
        "#[cfg(test)]\nmod tests;\nuse crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}";
    assert_eq!(
        without_test_tail(text),
        "#[cfg(test)]\nmod tests;\nuse crate::a;\n"
    );
    let code = "use super::{x, y::Z};\nfn f() { crate::gate::run(); }";
    let paths = referenced_paths(code, &node("m"));
    assert!(paths.contains(&node("x")), "{paths:?}");
    assert!(paths.contains(&vec!["gate".to_owned(), "run".to_owned()]));
}

#[test]
fn the_folder_graph_finds_cycles_through_folders() {
    let path = |p: &str| -> Vec<String> {
        p.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    // No two files import each other, but `git` and `runner` do through their files.
    let edges: Edges = [
        ("", vec!["git", "runner"]),
        ("git", vec!["git::call"]),
        ("git::call", vec!["runner"]),
        ("runner", vec!["runner::ask"]),
        ("runner::ask", vec!["git::tree"]),
        ("git::tree", vec![]),
        ("store", vec!["git::tree"]),
        // A unit-test file may import anything: it is no dependency of `store`.
        ("store::tests", vec!["runner"]),
    ]
    .into_iter()
    .map(|(from, to)| (path(from), to.into_iter().map(path).collect()))
    .collect();
    let files: Modules = edges
        .keys()
        .map(|m| (m.clone(), PathBuf::from(format!("{}.rs", m.join("/")))))
        .collect();
    assert!(cycles(&edges).is_empty());
    let folders = folders(&files, &edges);
    assert_eq!(folders[&path("store")], BTreeSet::from([path("git")]));
    assert_eq!(cycles(&folders), vec![vec![path("git"), path("runner")]]);
    assert_eq!(
        folders[&path("")],
        BTreeSet::from([path("git"), path("runner")])
    );
    assert_eq!(folders[&path("git")], BTreeSet::from([path("runner")]));
    assert_eq!(
        cycle_edges(&folders, &[path("git"), path("runner")]).len(),
        2
    );

    // A module another crate supplies (`pub use checkpoint_core::agent;`) is not a file here.
    let root = "pub use checkpoint_core::{\n    agent, answer,\n};\npub mod git;\npub use git::Head;\nuse std::path::Path;";
    let local = BTreeSet::from(["git"]);
    let foreign = names_from_other_crates(root, &local);
    assert!(
        foreign.contains("agent") && foreign.contains("answer"),
        "{foreign:?}"
    );
    assert!(!foreign.contains("Head"), "{foreign:?}");
    let modules: Modules = [(path(""), PathBuf::from("lib.rs"))].into_iter().collect();
    assert_eq!(resolve(&modules, &foreign, &path("agent::Agent")), None);
    assert_eq!(resolve(&modules, &foreign, &path("Head")), Some(&path("")));
}

/// The source of the crate that declares `pub enum Agent` (`crates/*/src/agent.rs`).
fn agent_source() -> (PathBuf, String) {
    let found: Vec<(PathBuf, String)> = crates()
        .into_iter()
        .map(|src| src.join("agent.rs"))
        .filter_map(|file| Some((file.clone(), fs::read_to_string(&file).ok()?)))
        .filter(|(_, text)| text.contains("pub enum Agent "))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one crate declares `pub enum Agent` in src/agent.rs: {:?}",
        found.iter().map(|(file, _)| file).collect::<Vec<_>>()
    );
    found.into_iter().next().unwrap()
}

/// The variants of `pub enum <name>` in `code`, in order (attributes and comments skipped).
fn enum_variants(code: &str, name: &str) -> Vec<String> {
    let code = without_comments(code);
    let start = code
        .find(&format!("pub enum {name} "))
        .unwrap_or_else(|| panic!("no `pub enum {name}`"));
    let open = start + code[start..].find('{').unwrap();
    // The body up to the matching brace, split at its top-level commas.
    let (mut depth, mut entries, mut entry) = (0, Vec::new(), String::new());
    for c in code[open + 1..].chars() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' if depth > 0 => depth -= 1,
            '}' => break,
            ',' if depth == 0 => {
                entries.push(std::mem::take(&mut entry));
                continue;
            }
            _ => {}
        }
        entry.push(c);
    }
    entries.push(entry);
    entries
        .iter()
        .filter_map(|entry| {
            let mut rest = entry.trim();
            // Attributes (`#[serde(rename = "x")]`), however many.
            while rest.starts_with("#[") {
                let mut depth = 0;
                let end = rest
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '[' => depth += 1,
                            ']' => depth -= 1,
                            _ => {}
                        }
                        depth == 0 && c == ']'
                    })
                    .map_or(rest.len(), |(at, _)| at + 1);
                rest = rest[end..].trim_start();
            }
            let variant: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!variant.is_empty()).then_some(variant)
        })
        .collect()
}

/// `Agent::<variant>` for each agent: every variant of the `Agent` enum but `Cli`, which is a
/// human running `checkpoint` by hand, the default identity of the core's own commands, not an
/// agent whose protocol the core could branch on.
fn agent_names() -> Vec<String> {
    let (_, source) = agent_source();
    enum_variants(&source, "Agent")
        .into_iter()
        .filter(|variant| variant != "Cli")
        .map(|variant| format!("Agent::{variant}"))
        .collect()
}

/// The first of `names` that `line` holds as a whole path (`Agent::Codex`, not `HookAgent::Codex`
/// nor `Agent::CodexHome`).
fn named_agent<'a>(line: &str, names: &'a [String]) -> Option<&'a String> {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    names.iter().find(|name| {
        line.match_indices(name.as_str()).any(|(at, _)| {
            !ident(line[..at].chars().next_back()) && !ident(line[at + name.len()..].chars().next())
        })
    })
}

#[test]
fn the_agent_list_comes_from_the_enum() {
    let names = agent_names();
    assert!(!names.is_empty());
    assert!(names.contains(&"Agent::OpenCode".to_owned()), "{names:?}");
    assert!(names.contains(&"Agent::Claude".to_owned()), "{names:?}");
    assert!(!names.contains(&"Agent::Cli".to_owned()), "{names:?}");

    let source = "/// Who.\n#[derive(Debug)]\n#[non_exhaustive]\npub enum Agent {\n    /// A.\n    \
                  Claude,\n    // Not yet: Zed,\n    #[serde(rename = \"open-code\")]\n    OpenCode,\n    \
                  Named { id: u8, other: (u8, u8) },\n    Tuple(String),\n    Cli\n}\n\
                  pub enum Other { Nope }";
    assert_eq!(
        enum_variants(source, "Agent"),
        ["Claude", "OpenCode", "Named", "Tuple", "Cli"]
    );
    let names = ["Agent::Codex".to_owned()];
    assert!(named_agent("match a { Agent::Codex => 1 }", &names).is_some());
    assert!(named_agent("HookAgent::Codex", &names).is_none());
    assert!(named_agent("Agent::CodexHome", &names).is_none());
}

#[test]
fn the_core_names_no_particular_agent() {
    let names = agent_names();
    let mut problems = Vec::new();
    for src in ["crates/checkpoint-core/src", "crates/checkpoint-engine/src"]
        .map(|dir| workspace().join(dir))
        .into_iter()
        .filter(|src| src.is_dir())
    {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(&src).unwrap();
            // The identity enum itself (and its name table) is the one place agents are named;
            // tests may name agents as data.
            if rel == Path::new("agent.rs") || is_test_file(rel) {
                continue;
            }
            for (n, line) in code(&file).lines().enumerate() {
                if named_agent(line, &names).is_some() {
                    let shown = file.strip_prefix(workspace()).unwrap_or(&file);
                    problems.push(format!("{}:{}: {}", shown.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "agent-specific branches in the core:\n{}",
        problems.join("\n")
    );
}

/// What the core may not touch, outside its tests: the file system, processes, the environment,
/// the network, and a clock or standard input read inside (the time is passed in).
const IO_IN_THE_CORE: &[&str] = &[
    "std::fs",
    "std::process",
    "std::env",
    "std::net",
    "SystemTime::now",
    "Instant::now",
    "Timestamp::now",
    "Zoned::now",
    "io::stdin",
];

/// The entries of [`IO_IN_THE_CORE`] that `code` uses: written out (`std::fs::read`), or as an
/// item of a `std::{…}` group (`use std::{fs, io}`, `use std::{env::var, io::Read}`).
fn io_used(code: &str) -> BTreeSet<&'static str> {
    let ends_a_path = |rest: &str| {
        !rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let mut found: BTreeSet<&'static str> = IO_IN_THE_CORE
        .iter()
        .filter(|path| {
            code.match_indices(**path)
                .any(|(at, _)| ends_a_path(&code[at + path.len()..]))
        })
        .copied()
        .collect();
    for (at, _) in code.match_indices("std::{") {
        let mut depth = 0;
        let mut item = String::new();
        for c in code[at + "std::{".len()..].chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                _ => {}
            }
            if c == ',' && depth == 0 {
                item.clear();
                continue;
            }
            item.push(c);
            let head = item.trim().split("::").next().unwrap_or("");
            let path = format!("std::{head}");
            if let Some(io) = IO_IN_THE_CORE.iter().find(|io| **io == path) {
                found.insert(io);
            }
        }
    }
    found
}

#[test]
fn the_core_does_no_io() {
    let src = workspace().join("crates/checkpoint-core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        if is_test_file(rel) {
            continue;
        }
        let code = code(&file);
        let used = io_used(&code);
        if !used.is_empty() {
            // The lines that show it (a `use std::{…}` group may span several).
            let lines: Vec<String> = (code.lines().enumerate())
                .filter(|(_, line)| !io_used(line).is_empty())
                .map(|(n, _)| (n + 1).to_string())
                .collect();
            let used: Vec<&str> = used.into_iter().collect();
            problems.push(format!(
                "{} (lines {}): {}",
                shown(&file),
                lines.join(", "),
                used.join(", ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "I/O in checkpoint-core (it takes values and returns values; the engine does the I/O):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_io_finder_finds_io() {
    let io = |code: &str| io_used(code).into_iter().collect::<Vec<_>>();
    assert_eq!(io("let t = std::fs::read(p);"), ["std::fs"]);
    assert_eq!(
        io("use std::{\n    collections::BTreeMap,\n    env::var,\n};"),
        ["std::env"]
    );
    assert_eq!(
        io("use std::{fs, io::{self, Read}, net};"),
        ["std::fs", "std::net"]
    );
    assert_eq!(io("let now = jiff::Timestamp::now();"), ["Timestamp::now"]);
    assert_eq!(io("let x = std::io::stdin();"), ["io::stdin"]);
    assert!(io("use std::fmt; use std::path::Path; let f = std::fsx;").is_empty());
    assert!(io("use std::{io::Read, time::Duration};").is_empty());
}

/// The packages of the workspace: its `members`, `dir/*` expanded to the folders that hold a
/// Cargo.toml.
fn packages() -> Vec<PathBuf> {
    let manifest = fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let start = manifest.find("members").expect("workspace members");
    let list = &manifest[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    let mut packages = Vec::new();
    for member in list.split(',').map(|m| m.trim().trim_matches('"')) {
        if member.is_empty() {
            continue;
        }
        if let Some(parent) = member.strip_suffix("/*") {
            for entry in fs::read_dir(workspace().join(parent)).unwrap() {
                packages.push(entry.unwrap().path());
            }
        } else {
            packages.push(workspace().join(member));
        }
    }
    packages.retain(|p| p.join("Cargo.toml").is_file());
    packages.sort();
    packages
}

/// The crate roots of a package: what Cargo finds by itself (`src/lib.rs`, `src/main.rs`,
/// `src/bin/*.rs`, `tests/*.rs`, `tests/*/main.rs`, and so for `examples` and `benches`),
/// `build.rs`, and each `path = "…"` of its manifest's targets.
fn crate_roots(package: &Path) -> BTreeSet<PathBuf> {
    let mut roots: BTreeSet<PathBuf> = ["src/lib.rs", "src/main.rs", "build.rs"]
        .iter()
        .map(|file| package.join(file))
        .collect();
    for dir in ["src/bin", "tests", "examples", "benches"] {
        let Ok(entries) = fs::read_dir(package.join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                roots.insert(path.join("main.rs"));
            } else if path.extension().is_some_and(|e| e == "rs") {
                roots.insert(path);
            }
        }
    }
    if let Ok(manifest) = fs::read_to_string(package.join("Cargo.toml")) {
        for line in manifest.lines() {
            let line = line.trim();
            if let Some(value) = line.strip_prefix("path").map(str::trim_start)
                && let Some(value) = value.strip_prefix('=')
            {
                roots.insert(package.join(value.trim().trim_matches('"')));
            }
        }
    }
    roots.retain(|root| root.is_file());
    roots
}

/// The module name a line declares with `mod name;` (a file module, not an inline one).
fn declared_mod(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let rest = rest.strip_prefix("mod")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_end);
    (after.trim_start().starts_with(';') && !name.is_empty()).then(|| name.trim_start_matches("r#"))
}

/// The files the `mod name;` declarations of `file` name (`#[path = "…"]` honoured), whether
/// they exist or not. `root` says `file` is a crate root, whose modules live beside it as
/// those of a `mod.rs` do. Declarations inside inline modules (`mod a { mod b; }`) are taken
/// as the file's own.
fn declared_files(file: &Path, root: bool) -> Vec<PathBuf> {
    let text = without_comments(&fs::read_to_string(file).unwrap());
    let beside = file.parent().unwrap().to_path_buf();
    let dir = if root || file.file_name().is_some_and(|n| n == "mod.rs") {
        beside.clone()
    } else {
        beside.join(file.file_stem().unwrap())
    };
    let mut found = Vec::new();
    let mut path_attribute: Option<String> = None;
    for line in text.lines() {
        let mut rest = line.trim();
        // The item's attributes, on its line or on the lines above it.
        while let Some(attribute) = rest.strip_prefix("#[") {
            let Some(close) = attribute.find(']') else {
                break;
            };
            let inner = attribute[..close].trim();
            if let Some(value) = inner.strip_prefix("path").map(str::trim_start)
                && let Some(value) = value.strip_prefix('=')
            {
                path_attribute = Some(value.trim().trim_matches('"').to_owned());
            }
            rest = attribute[close + 1..].trim_start();
        }
        if rest.is_empty() {
            continue;
        }
        if let Some(name) = declared_mod(rest) {
            found.push(match path_attribute.take() {
                Some(path) => beside.join(path),
                None if dir.join(name).join("mod.rs").is_file() => dir.join(name).join("mod.rs"),
                None => dir.join(format!("{name}.rs")),
            });
        }
        path_attribute = None;
    }
    found
}

/// The Rust files of `package` (under `src`, `tests`, `examples`, `benches`; a folder with a
/// Cargo.toml of its own is another package) that no crate root reaches through `mod`
/// declarations: Cargo never compiles them.
fn forgotten(package: &Path) -> Vec<PathBuf> {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.join("Cargo.toml").exists() {
                    files(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let roots = crate_roots(package);
    let mut reached: BTreeSet<PathBuf> = BTreeSet::new();
    let mut todo: Vec<(PathBuf, bool)> = roots.iter().map(|r| (r.clone(), true)).collect();
    while let Some((file, root)) = todo.pop() {
        if !file.is_file() || !reached.insert(file.clone()) {
            continue;
        }
        todo.extend(declared_files(&file, root).into_iter().map(|f| (f, false)));
    }
    let mut all = Vec::new();
    for dir in ["src", "tests", "examples", "benches"] {
        files(&package.join(dir), &mut all);
    }
    all.retain(|file| !reached.contains(file));
    all.sort();
    all
}

#[test]
fn no_rust_file_is_forgotten() {
    let packages = packages();
    assert!(
        packages.iter().any(|p| p.ends_with("checkpoint-cli")),
        "{packages:?}"
    );
    let mut problems = Vec::new();
    for package in packages {
        for file in forgotten(&package) {
            let shown = file.strip_prefix(workspace()).unwrap_or(&file);
            problems.push(shown.display().to_string());
        }
    }
    assert!(
        problems.is_empty(),
        "Rust files no `mod` declares (never compiled, their tests never run): declare each \
         in its parent (`mod name;` in tests/it/main.rs, `#[cfg(test)] mod tests;` beside the \
         code) or delete it:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_forgotten_file_finder_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path();
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"p\"\n\n[[bin]]\nname = \"tool\"\npath = \"tool/main.rs\"\n",
        ),
        (
            "src/lib.rs",
            "//! Doc.\npub mod a;\npub(crate) mod b;\n// mod commented_out;\n#[path = \"elsewhere/h.rs\"]\nmod helper;\n",
        ),
        (
            "src/a.rs",
            "fn f() {}\n\n#[cfg(test)]\nmod tests;\n#[cfg(test)] #[path = \"a_more_tests.rs\"] mod more;\n",
        ),
        ("src/a/tests.rs", ""),
        ("src/a_more_tests.rs", ""),
        ("src/b/mod.rs", "mod c;\n"),
        ("src/b/c.rs", ""),
        ("src/elsewhere/h.rs", ""),
        ("src/commented_out.rs", ""),
        ("src/x/tests.rs", ""),
        ("src/bin/extra.rs", "mod extra_part;\n"),
        ("src/bin/extra_part.rs", ""),
        ("tool/main.rs", ""),
        ("tests/it/main.rs", "mod check;\nmod sub;\n"),
        ("tests/it/check.rs", ""),
        ("tests/it/install.rs", ""),
        ("tests/it/sub/mod.rs", "mod deep;\n"),
        ("tests/it/sub/deep.rs", ""),
        ("tests/it/other/lost.rs", ""),
        ("tests/smoke.rs", "mod common;\n"),
        ("tests/common/mod.rs", ""),
        ("tests/fixture/Cargo.toml", ""),
        ("tests/fixture/src/lib.rs", ""),
    ];
    for (name, text) in files {
        let path = package.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let found: Vec<String> = forgotten(package)
        .iter()
        .map(|f| f.strip_prefix(package).unwrap().display().to_string())
        .collect();
    assert_eq!(
        found,
        [
            "src/commented_out.rs",
            "src/x/tests.rs",
            "tests/it/install.rs",
            "tests/it/other/lost.rs",
        ]
    );
    assert_eq!(declared_mod("pub(in crate::a) mod r#type;"), Some("type"));
    assert_eq!(declared_mod("mod inline {"), None);
    assert_eq!(declared_mod("model;"), None);
}
