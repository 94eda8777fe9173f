//! The workspace's shape, checked: no import cycles between the files of a crate, and an
//! agent-neutral core (no branch on a particular agent outside the agent's own home).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path inside a crate (`["gate", "stop"]`), and the file that holds it.
type Modules = BTreeMap<Vec<String>, PathBuf>;

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

/// The code of a file without comments and without its `#[cfg(test)] mod tests { … }` tail.
fn code(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap();
    // A test module (`mod tests`, `pub(crate) mod tests`) is the end of what the file imports.
    let end = text
        .match_indices("#[cfg(test)]")
        .find(|(at, marker)| {
            let rest = text[at + marker.len()..].trim_start();
            ["mod tests", "pub(crate) mod tests"]
                .iter()
                .any(|m| rest.starts_with(m))
        })
        .map_or(text.len(), |(at, _)| at);
    let text = &text[..end];
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
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

/// The longest prefix of `path` that is a module of the crate.
fn resolve<'a>(modules: &'a Modules, path: &[String]) -> Option<&'a Vec<String>> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
}

/// The import graph of one crate's files.
fn graph(src: &Path) -> (Modules, BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: Modules = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        let targets: BTreeSet<Vec<String>> = referenced_paths(&code(file), module)
            .iter()
            .filter_map(|path| resolve(&modules, path))
            .filter(|target| *target != module)
            .cloned()
            .collect();
        edges.insert(module.clone(), targets);
    }
    (modules, edges)
}

/// The cycles of a graph (strongly connected components with more than one member).
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph.
    fn visit<'a>(
        node: &'a Vec<String>,
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
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
    let mut reversed: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> =
        edges.keys().map(|k| (k.clone(), BTreeSet::new())).collect();
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
            found.push(component.into_iter().cloned().collect());
        }
    }
    found
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
            problems.push(format!("{}: {}", src.display(), files.join(" ↔ ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let node = |name: &str| vec![name.to_owned()];
    let edges: BTreeMap<_, _> = [
        (node("a"), BTreeSet::from([node("b")])),
        (node("b"), BTreeSet::from([node("a"), node("c")])),
        (node("c"), BTreeSet::new()),
    ]
    .into_iter()
    .collect();
    assert_eq!(cycles(&edges).len(), 1);
    let code = "use super::{x, y::Z};\nfn f() { crate::gate::run(); }";
    let paths = referenced_paths(code, &node("m"));
    assert!(paths.contains(&node("x")), "{paths:?}");
    assert!(paths.contains(&vec!["gate".to_owned(), "run".to_owned()]));
}

#[test]
fn the_core_names_no_particular_agent() {
    let src = workspace().join("crates/checkpoint-engine/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        // The identity enum itself (and its name table) is the one place agents are named;
        // tests may name agents as data.
        let name = rel.file_name().unwrap().to_string_lossy();
        if rel == Path::new("agent.rs") || name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        for (n, line) in code(&file).lines().enumerate() {
            if [
                "Agent::Claude",
                "Agent::Gemini",
                "Agent::Codex",
                "Agent::Copilot",
            ]
            .iter()
            .any(|name| line.contains(name))
            {
                problems.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "agent-specific branches in the core:\n{}",
        problems.join("\n")
    );
}
