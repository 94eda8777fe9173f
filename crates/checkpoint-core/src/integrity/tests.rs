use proptest::prelude::*;

use super::*;
use crate::changes::Head;

fn change(path: &str, kind: ChangeKind) -> Change {
    Change {
        path: path.to_owned(),
        kind,
        staged: false,
    }
}

fn change_set(changes: Vec<Change>) -> ChangeSet {
    ChangeSet {
        head: Head::Branch {
            name: "main".to_owned(),
            commit: "0".repeat(40),
        },
        changes,
        non_utf8_paths: 0,
    }
}

/// The findings of modifying `path` from `old` to `new`.
fn modified(path: &str, old: &str, new: &str) -> Vec<Finding> {
    let texts = BTreeMap::from([(
        path.to_owned(),
        Sides {
            old: Some(old.to_owned()),
            new: Some(new.to_owned()),
        },
    )]);
    analyze(
        &change_set(vec![change(path, ChangeKind::Modified)]),
        &texts,
        &TestFiles::default(),
    )
}

const PYTHON: &str = "\
import unittest

from calc import add


class TestAdd(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_zero(self):
        assert add(0, 0) == 0
";

const RUST: &str = "\
use calc::add;

#[test]
fn adds() {
    assert_eq!(add(2, 3), 5);
}

#[test]
fn zero() {
    assert!(add(0, 0) == 0);
}
";

const JS: &str = "\
const { add } = require('./calc');

describe('add', () => {
  it('adds', () => {
    expect(add(2, 3)).toBe(5);
  });

  test(\"zero\", () => {
    expect(add(0, 0)).toBe(0);
  });
});
";

const GO: &str = "\
package calc

import \"testing\"

func TestAdd(t *testing.T) {
\tif add(2, 3) != 5 {
\t\tt.Errorf(\"add(2, 3) = %d\", add(2, 3))
\t}
}

func TestZero(t *testing.T) {
\tif add(0, 0) != 0 {
\t\tt.Fatal(\"zero\")
\t}
}
";

#[test]
fn which_files_are_tests() {
    for path in [
        "tests/test_calc.py",
        "crates/x/tests/it/main.rs",
        "test_calc.py",
        "pkg/calc_test.py",
        "calc_test.go",
        "src/calc.test.ts",
        "web/app.spec.js",
    ] {
        assert!(TestFiles::default().is_test(path), "{path}");
    }
    for path in [
        "src/calc.py",
        "testing.py",
        "src/tests.rs",
        "latest/x.py",
        "calc.go",
        "spec.js",
        "contest_x.py",
    ] {
        assert!(!TestFiles::default().is_test(path), "{path}");
    }
}

#[test]
fn a_deleted_test_file() {
    let changes = change_set(vec![
        change("calc.py", ChangeKind::Modified),
        change("tests/test_calc.py", ChangeKind::Deleted),
    ]);
    insta::assert_debug_snapshot!(analyze(&changes, &BTreeMap::new(), &TestFiles::default()), @r#"
    [
        Finding {
            kind: TestFileDeleted,
            file: "tests/test_calc.py",
            line: None,
            description: "test file deleted",
        },
    ]
    "#);
}

#[test]
fn new_markers_in_each_language() {
    let python = PYTHON.replace(
        "    def test_add",
        "    @unittest.skip(\"flaky\")\n    def test_add",
    );
    let rust = RUST.replace("fn adds", "#[ignore]\nfn adds");
    let js = JS
        .replace("it('adds'", "it.only('adds'")
        .replace("test(\"zero\"", "test.skip(\"zero\"");
    let go = GO.replace("\tif add(0, 0)", "\tt.Skip(\"later\")\n\tif add(0, 0)");
    let findings = [
        modified("tests/test_calc.py", PYTHON, &python),
        modified("tests/calc.rs", RUST, &rust),
        modified("calc.test.js", JS, &js),
        modified("calc_test.go", GO, &go),
    ];
    insta::assert_debug_snapshot!(findings);
}

#[test]
fn removed_tests_and_assertions() {
    let python = PYTHON.replace(
        "    def test_zero(self):\n        assert add(0, 0) == 0\n",
        "",
    );
    let rust = RUST.replace("    assert_eq!(add(2, 3), 5);\n", "");
    let js = JS.replace("    expect(add(2, 3)).toBe(5);\n", "    add(2, 3);\n");
    let go = GO.replace("func TestZero", "func helperZero");
    let findings = [
        modified("tests/test_calc.py", PYTHON, &python),
        modified("tests/calc.rs", RUST, &rust),
        modified("calc.test.js", JS, &js),
        modified("calc_test.go", GO, &go),
    ];
    insta::assert_debug_snapshot!(findings);
}

#[test]
fn removing_the_test_attribute_removes_the_test() {
    let rust = RUST.replacen("#[test]\nfn zero", "fn zero", 1);
    insta::assert_debug_snapshot!(modified("tests/calc.rs", RUST, &rust), @r#"
    [
        Finding {
            kind: TestRemoved,
            file: "tests/calc.rs",
            line: Some(
                9,
            ),
            description: "test `zero` removed",
        },
    ]
    "#);
}

#[test]
fn comments_and_lookalikes_are_not_markers() {
    let python = PYTHON.replace(
        "class TestAdd",
        "# @unittest.skip(\"maybe\")\nclass TestAdd",
    );
    assert_eq!(modified("tests/test_calc.py", PYTHON, &python), []);
    let js = JS.replace("describe(", "process.exit(0);\ndescribe(");
    assert_eq!(modified("calc.test.js", JS, &js), []);
}

#[test]
fn unknown_languages_and_new_files_get_no_text_checks() {
    let texts = BTreeMap::from([(
        "tests/data.txt".to_owned(),
        Sides {
            old: Some("a\n".to_owned()),
            new: Some(String::new()),
        },
    )]);
    let changes = change_set(vec![
        change("tests/data.txt", ChangeKind::Modified),
        change("tests/test_new.py", ChangeKind::Untracked),
    ]);
    assert_eq!(analyze(&changes, &texts, &TestFiles::default()), []);
}

/// A Python test file with `names`, one assertion each.
fn python_file(names: &[String]) -> String {
    let mut text = String::from("import unittest\n\n\nclass TestX(unittest.TestCase):\n");
    for (i, name) in names.iter().enumerate() {
        text.push_str(&format!(
            "    def test_{name}(self):\n        self.assertEqual(f({i}), {i})\n\n"
        ));
    }
    text
}

fn names() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set("[a-z]{1,8}", 1..6).prop_map(|s| s.into_iter().collect())
}

proptest! {
    #[test]
    fn adding_tests_or_assertions_yields_nothing(
        names in names(),
        extra in names(),
        at in 0usize..6,
        asserts in 0usize..4,
    ) {
        let old = python_file(&names);
        let mut all = names.clone();
        let at = at.min(all.len());
        for (i, name) in extra.iter().enumerate() {
            all.insert(at + i, format!("new_{name}"));
        }
        let mut new = python_file(&all);
        for i in 0..asserts {
            new = new.replacen(
                "        self.assertEqual",
                &format!("        assert f({i}) is not None\n        self.assertEqual"),
                1,
            );
        }
        prop_assert_eq!(modified("tests/test_x.py", &old, &new), []);
    }

    #[test]
    fn renaming_a_test_with_the_same_body_yields_nothing(
        names in names(),
        which in 0usize..6,
        to in "[a-z]{1,8}",
    ) {
        let old = python_file(&names);
        let mut renamed = names.clone();
        let which = which % renamed.len();
        renamed[which] = format!("renamed_{to}");
        prop_assert_eq!(modified("tests/test_x.py", &old, &python_file(&renamed)), []);
        let old = RUST;
        let new = RUST.replace("fn zero", &format!("fn renamed_{to}"));
        prop_assert_eq!(modified("tests/calc.rs", old, &new), []);
    }
}
