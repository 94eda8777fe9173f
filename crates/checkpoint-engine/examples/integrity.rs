//! Times the integrity analysis of a change set of 100 changed test files (25 each in Python,
//! Rust, JS and Go, 40 tests of 3 lines each; every one with a changed expected value, a new
//! marker and a changed source next to it), and prints the mean of many runs.
//!
//! ```text
//! cargo run --release -p checkpoint-engine --example integrity [-- RUNS]
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

use checkpoint_core::changes::{Change, ChangeKind, ChangeSet, Head};
use checkpoint_core::integrity::{self, Sides, TestFiles};

/// A test file of `lang` with 40 tests, and its weakened version.
fn test_file(lang: &str, n: usize) -> (String, String, String) {
    let (path, header, test, marker): (String, &str, fn(usize) -> String, &str) = match lang {
        "py" => (
            format!("tests/test_m{n}.py"),
            "import unittest\n\nfrom m import add\n\n\nclass T(unittest.TestCase):\n",
            |i| {
                format!(
                    "    def test_{i}(self):\n        x = add({i}, 1)\n        self.assertEqual(x, {})\n\n",
                    i + 1
                )
            },
            "    @unittest.skip(\"later\")\n",
        ),
        "rs" => (
            format!("tests/m{n}.rs"),
            "use m::add;\n\n",
            |i| {
                format!(
                    "#[test]\nfn t{i}() {{\n    assert_eq!(add({i}, 1), {});\n}}\n\n",
                    i + 1
                )
            },
            "#[ignore]\n",
        ),
        "js" => (
            format!("src/m{n}.test.js"),
            "const { add } = require('./m');\n\n",
            |i| {
                format!(
                    "test('t{i}', () => {{\n  expect(add({i}, 1)).toBe({});\n}});\n\n",
                    i + 1
                )
            },
            "",
        ),
        _ => (
            format!("pkg{n}/m_test.go"),
            "package m\n\nimport \"testing\"\n\n",
            |i| {
                format!(
                    "func TestT{i}(t *testing.T) {{\n\tif add({i}, 1) != {} {{\n\t\tt.Fatal(\"x\")\n\t}}\n}}\n\n",
                    i + 1
                )
            },
            "",
        ),
    };
    let mut old = header.to_owned();
    for i in 0..40 {
        old.push_str(&test(i));
    }
    let first = test(0);
    let weakened = format!(
        "{marker}{}",
        first
            .replace(", 1), 1)", ", 1), -1)")
            .replace("toBe(1)", "toBe(-1)")
            .replace("!= 1 {", "!= -1 {")
            .replace("self.assertEqual(x, 1)", "self.assertEqual(x, -1)")
    );
    let new = old.replacen(&first, &weakened, 1);
    (path, old, new)
}

fn main() {
    let runs: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let mut changes = Vec::new();
    let mut texts = BTreeMap::new();
    for n in 0..100 {
        let lang = ["py", "rs", "js", "go"][n % 4];
        let (path, old, new) = test_file(lang, n);
        let source = match lang {
            "py" => "m.py".to_owned(),
            "rs" => "src/lib.rs".to_owned(),
            "js" => format!("src/m{n}.js"),
            _ => format!("pkg{n}/m.go"),
        };
        for path in [&path, &source] {
            changes.push(Change {
                path: path.clone(),
                kind: ChangeKind::Modified,
                staged: false,
                committed: false,
            });
        }
        texts.insert(
            path,
            Sides {
                old: Some(old),
                new: Some(new),
            },
        );
    }
    changes.sort();
    changes.dedup();
    let changes = ChangeSet {
        head: Head::Branch {
            name: "main".to_owned(),
            commit: "0".repeat(40),
        },
        changes,
        non_utf8_paths: 0,
    };
    let files = TestFiles::default();
    let findings = integrity::analyze(&changes, &texts, &files);
    let started = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(integrity::analyze(&changes, &texts, &files));
    }
    let mean = started.elapsed() / runs;
    let bytes: usize = texts
        .values()
        .map(|s| s.old.as_ref().map_or(0, String::len) * 2)
        .sum();
    let _ = writeln!(
        std::io::stdout(),
        "{} changed test files ({} KiB of text), {} findings: {:.3} ms per analysis (mean of {runs})",
        texts.len(),
        bytes / 1024,
        findings.len(),
        mean.as_secs_f64() * 1000.0
    );
}
