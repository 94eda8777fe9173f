use proptest::prelude::*;

use super::*;
use crate::changes::Head;

fn change(path: &str, kind: ChangeKind) -> Change {
    Change {
        path: path.to_owned(),
        kind,
        staged: false,
        committed: false,
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
        "web/__tests__/app.js",
        "core/src/test/java/calc/Helper.java",
        "CalcTest.java",
        "CalcTests.java",
        "CalcIT.java",
        "x.test.y.z",
        "a/src/test/b/c.txt",
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
        "src/main/java/calc/Calc.java",
        "Testing.java",
        "src/testing/x.java",
        "calc.test",
        "test.js",
        "src/x/test/a.js",
        "a/tests",
        "srctest/test/a.js",
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

/// One changed file: its path, how it changed, its `HEAD` and worktree texts.
type File<'a> = (&'a str, ChangeKind, Option<&'a str>, Option<&'a str>);

/// The findings of a change set of `files`, with `matcher`.
fn analyzed_with(files: &[File<'_>], matcher: &TestFiles) -> Vec<Finding> {
    let changes = change_set(
        files
            .iter()
            .map(|(path, kind, _, _)| change(path, *kind))
            .collect(),
    );
    let texts = files
        .iter()
        .map(|(path, _, old, new)| {
            let sides = Sides {
                old: old.map(str::to_owned),
                new: new.map(str::to_owned),
            };
            ((*path).to_owned(), sides)
        })
        .collect();
    analyze(&changes, &texts, matcher)
}

fn analyzed(files: &[File<'_>]) -> Vec<Finding> {
    analyzed_with(files, &TestFiles::default())
}

/// A modified file.
fn m<'a>(path: &'a str, old: &'a str, new: &'a str) -> File<'a> {
    (path, ChangeKind::Modified, Some(old), Some(new))
}

/// A deleted file.
fn d<'a>(path: &'a str, old: &'a str) -> File<'a> {
    (path, ChangeKind::Deleted, Some(old), None)
}

/// An untracked (new) file.
fn u<'a>(path: &'a str, new: &'a str) -> File<'a> {
    (path, ChangeKind::Untracked, None, Some(new))
}

/// A changed source file whose text the analysis does not need.
fn src(path: &str) -> File<'_> {
    (path, ChangeKind::Modified, None, None)
}

const JAVA: &str = "\
package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void adds() {
        assertEquals(5, Calc.add(2, 3));
    }

    @Test void zero() {
        assertEquals(0, Calc.add(0, 0));
    }
}
";

#[test]
fn expected_values_changed_in_each_language() {
    let python = PYTHON
        .replace("add(2, 3), 5)", "add(2, 3), -1)")
        .replace("== 0", "== 7");
    let rust = RUST.replace("add(2, 3), 5)", "add(2, 3), -1)");
    let js = JS.replace("toBe(5)", "toBe(-1)");
    let go = GO.replace("!= 5 {", "!= -1 {");
    let java = JAVA.replace("assertEquals(5,", "assertEquals(-1,");
    let findings = [
        analyzed(&[src("calc.py"), m("tests/test_calc.py", PYTHON, &python)]),
        analyzed(&[src("src/lib.rs"), m("tests/calc.rs", RUST, &rust)]),
        analyzed(&[src("calc.js"), m("calc.test.js", JS, &js)]),
        analyzed(&[src("calc.go"), m("calc_test.go", GO, &go)]),
        analyzed(&[
            src("src/main/java/calc/Calc.java"),
            m("src/test/java/calc/CalcTest.java", JAVA, &java),
        ]),
    ];
    insta::assert_debug_snapshot!(findings);
}

#[test]
fn expected_values_may_change_when_no_exercised_code_did() {
    let python = PYTHON.replace("add(2, 3), 5)", "add(2, 3), -1)");
    // Only the test changed; then a source the test does not name.
    assert_eq!(analyzed(&[m("tests/test_calc.py", PYTHON, &python)]), []);
    assert_eq!(
        analyzed(&[src("other.py"), m("tests/test_calc.py", PYTHON, &python)]),
        []
    );
    // A Go test exercises its own package only.
    let go = GO.replace("!= 5 {", "!= -1 {");
    assert_eq!(
        analyzed(&[src("other/calc.go"), m("calc_test.go", GO, &go)]),
        []
    );
}

#[test]
fn expected_values_moved_into_a_name() {
    let cases = [
        (
            "calc.py",
            "test_calc.py",
            "from calc import add\n\nEXPECTED = 5\n\n\ndef test_add():\n    assert add(2, 3) == EXPECTED\n",
        ),
        (
            "calc.js",
            "calc.test.js",
            "const { add } = require('./calc');\nconst EXPECTED = 5;\n\ntest('adds', () => {\n  expect(add(2, 3)).toBe(EXPECTED);\n});\n",
        ),
        (
            "calc.go",
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\twant := 5\n\tif got := Add(2, 3); got != want {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n",
        ),
        (
            "src/lib.rs",
            "tests/calc.rs",
            "use calc::add;\n\nconst EXPECTED: i32 = 5;\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), EXPECTED);\n}\n",
        ),
    ];
    let mut found = Vec::new();
    for (source, test, old) in cases {
        let new = old
            .replacen("EXPECTED = 5", "EXPECTED = -1", 1)
            .replacen("EXPECTED: i32 = 5", "EXPECTED: i32 = -1", 1)
            .replacen("want := 5", "want := -1", 1);
        assert_ne!(old, new);
        let findings = analyzed(&[src(source), m(test, old, &new)]);
        found.extend(
            findings
                .iter()
                .map(|f| format!("{}:{:?}: {}", f.file, f.line, f.description)),
        );
        // The same change with no exercised code changed is a test's own business.
        assert_eq!(analyzed(&[m(test, old, &new)]), [], "{test}");
    }
    assert_eq!(
        found,
        [
            "test_calc.py:Some(3): expected value `EXPECTED` changed from `5` to `-1`",
            "calc.test.js:Some(2): expected value `EXPECTED` changed from `5` to `-1`",
            "calc_test.go:Some(6): expected value `want` changed from `5` to `-1`",
            "tests/calc.rs:Some(3): expected value `EXPECTED` changed from `5` to `-1`",
        ]
    );
}

#[test]
fn changed_inputs_in_a_name_are_no_findings() {
    // The name is an argument of the call under test, not what the result is compared with;
    // or the name's new value is no literal on either side.
    let old = "from calc import add\n\nX = 2\nY = 3\n\n\ndef test_add():\n    assert add(X, 3) == 5\n    self.assertEqual(add(Y, 2), 5)\n    result = add(2, 3)\n    assert result == 5\n";
    let new = old
        .replace("X = 2", "X = 4")
        .replace("Y = 3", "Y = 1")
        .replace("result = add(2, 3)", "result = add(3, 2)");
    assert_eq!(
        analyzed(&[src("calc.py"), m("test_calc.py", old, &new)]),
        []
    );
    for (line, name, compared) in [
        ("assert add(X, 3) == 5", "X", false),
        ("assert add(2, 3) == X", "X", true),
        ("self.assertEqual(add(X, 2), 5)", "X", false),
        ("self.assertEqual(add(2, 2), X)", "X", true),
        ("expect(add(X)).toBe(5)", "X", false),
        ("expect(add(2)).toBe(X)", "X", true),
        ("assert XS == 5", "X", false),
    ] {
        assert_eq!(expected::compares(line, name), compared, "{line}");
    }
    for (line, bound) in [
        ("EXPECTED = 5", Some(("EXPECTED", "5"))),
        ("const WANT: i32 = -1;", Some(("WANT", "-1"))),
        ("static final int EXPECTED = 5;", Some(("EXPECTED", "5"))),
        ("want := \"a\"", Some(("want", "\"a\""))),
        ("let mut total = 0;", Some(("total", "0"))),
        ("assert x == 5", None),
        ("x == 5", None),
        ("self.assertEqual(x, 5)", None),
        ("5 = x", None),
    ] {
        assert_eq!(expected::binding(line), bound, "{line}");
    }
}

#[test]
fn honest_assertion_changes_are_no_findings() {
    // New assertions next to the old ones, an assertion on a renamed variable, a changed input
    // (not a literal expected value), a longer message: all with the code changed.
    let old = "from calc import add\n\n\ndef test_add():\n    result = add(2, 3)\n    assert result == 5\n";
    for new in [
        "from calc import add\n\n\ndef test_add():\n    result = add(2, 3)\n    assert result == 5\n    assert add(3, 3) == 6\n",
        "from calc import add\n\n\ndef test_add():\n    total = add(2, 3)\n    assert total == 5\n",
        "from calc import add\n\n\ndef test_add():\n    result = add(2, 3)\n    assert result == 5, \"adds\"\n",
    ] {
        assert_eq!(
            analyzed(&[src("calc.py"), m("test_calc.py", old, new)]),
            [],
            "{new}"
        );
    }
    // A refactor that keeps every assertion.
    let refactored = PYTHON.replace("class TestAdd", "class TestAddition");
    assert_eq!(
        analyzed(&[src("calc.py"), m("tests/test_calc.py", PYTHON, &refactored)]),
        []
    );
}

#[test]
fn changed_operands() {
    for (old, new, expected) in [
        (
            "self.assertEqual(add(2, 3), 5)",
            "self.assertEqual(add(2, 3), -1)",
            Some(("5", "-1")),
        ),
        (
            "assert add(2, 3) == 5",
            "assert add(2, 3) == 50",
            Some(("5", "50")),
        ),
        (
            "expect(f(\"a,b\")).toEqual([1, 2])",
            "expect(f(\"a,b\")).toEqual([1, 3])",
            Some(("2", "3")),
        ),
        (
            "assert_eq!(f(), Some(5));",
            "assert_eq!(f(), Some(6));",
            Some(("5", "6")),
        ),
        ("assert x == 5", "assert x !== 5", None),
        ("assertEqual(f(1), 2)", "assertEqual(f(3), 4)", None),
        ("assert_eq!(a, b)", "assert_eq!(a, b)", None),
    ] {
        assert_eq!(
            expected::changed_operand(old, new),
            expected,
            "{old} → {new}"
        );
    }
    for (operand, literal) in [
        ("-1", true),
        ("\"five\"", true),
        ("[1, 2.5, None]", true),
        ("Some(Point(1, 2))", true),
        ("vec![1]", true),
        ("result", false),
        ("add(2, 3)", false),
        ("x.len()", false),
        ("5.into()", false),
    ] {
        assert_eq!(expected::is_literal(operand), literal, "{operand}");
    }
}

const PY_TESTS: &str = "\
import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
";

#[test]
fn renamed_test_files() {
    let skipped = PY_TESTS.replace(
        "    def test_add",
        "    @unittest.skip(\"later\")\n    def test_add",
    );
    let moved_and_renamed = PY_TESTS.replace("test_add", "test_addition");
    let js = "const { add } = require('./foo');\n\ntest('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n";
    let findings = [
        // Renamed within discovery, also with its test renamed: nothing.
        analyzed(&[
            d("tests/test_a.py", PY_TESTS),
            u("tests/test_b.py", PY_TESTS),
        ]),
        analyzed(&[
            d("tests/test_a.py", PY_TESTS),
            u("tests/test_b.py", &moved_and_renamed),
        ]),
        // Renamed out of discovery.
        analyzed(&[d("test_calc.py", PY_TESTS), u("calc_disabled.py", PY_TESTS)]),
        analyzed(&[d("foo.test.js", js), u("foo.js.bak", js)]),
        // Renamed, and a skip marker added on the way.
        analyzed(&[
            d("tests/test_a.py", PY_TESTS),
            u("tests/test_b.py", &skipped),
        ]),
        // Deleted, its tests nowhere.
        analyzed(&[
            d("tests/test_a.py", PY_TESTS),
            u("tests/test_b.py", "import os\n"),
        ]),
    ];
    insta::assert_debug_snapshot!(findings);
}

#[test]
fn tests_moved_to_another_test_file_are_not_removed() {
    let rest = PYTHON.replace(
        "    def test_zero(self):\n        assert add(0, 0) == 0\n",
        "",
    );
    let elsewhere = "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n";
    let findings = analyzed(&[
        m("tests/test_calc.py", PYTHON, &rest),
        u("tests/test_zero.py", elsewhere),
    ]);
    // The test moved; the old file has one assertion fewer, which is still said.
    assert_eq!(
        findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        [FindingKind::AssertionRemoved]
    );
}

#[test]
fn java_markers_tests_and_assertions() {
    let disabled = JAVA.replace(
        "    @Test\n    void adds",
        "    @Disabled(\"flaky\")\n    @Test\n    void adds",
    );
    let removed = JAVA.replace("    @Test void zero", "    void zero");
    let weaker = JAVA.replace("        assertEquals(0, Calc.add(0, 0));\n", "");
    let path = "src/test/java/calc/CalcTest.java";
    insta::assert_debug_snapshot!([
        analyzed(&[m(path, JAVA, &disabled)]),
        analyzed(&[m(path, JAVA, &removed)]),
        analyzed(&[m(path, JAVA, &weaker)]),
    ]);
}

const LIB_RS: &str = "\
pub fn add(a: i32, b: i32) -> i32 {
    assert!(a < 1000);
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn zero() {
        assert_eq!(add(0, 0), 0);
    }
}
";

#[test]
fn rust_test_modules_in_source_files() {
    let no_guard = LIB_RS.replace("    assert!(a < 1000);\n", "");
    let should_panic = LIB_RS.replace(
        "    #[test]\n    fn zero",
        "    #[test]\n    #[should_panic]\n    fn zero",
    );
    // Production assertions are not test assertions; `#[should_panic]` is no weakening.
    assert_eq!(analyzed(&[m("src/lib.rs", LIB_RS, &no_guard)]), []);
    assert_eq!(analyzed(&[m("src/lib.rs", LIB_RS, &should_panic)]), []);
    let ignored = LIB_RS.replace(
        "    #[test]\n    fn zero",
        "    #[test]\n    #[ignore]\n    fn zero",
    );
    let unmarked = LIB_RS.replace("    #[test]\n    fn zero", "    fn zero");
    let broken = LIB_RS
        .replace("a + b\n", "a - b\n")
        .replace("add(2, 3), 5)", "add(2, 3), -1)");
    let gone = LIB_RS
        .split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .to_owned();
    insta::assert_debug_snapshot!([
        analyzed(&[m("src/lib.rs", LIB_RS, &ignored)]),
        analyzed(&[m("src/lib.rs", LIB_RS, &unmarked)]),
        analyzed(&[m("src/lib.rs", LIB_RS, &broken)]),
        analyzed(&[m("src/lib.rs", LIB_RS, &gone)]),
    ]);
}

#[test]
fn runner_configuration_that_runs_fewer_tests() {
    let pytest_ini = "[pytest]\naddopts = -q\n";
    let pytest_k = "[pytest]\naddopts = -q\n    -k \"not add\"\n";
    let pyproject = "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    let pyproject_array = "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = [\n  \"-q\",\n  \"--deselect\", \"tests/test_calc.py::test_add\",\n]\n";
    let setup_cfg = "[tool:pytest]\naddopts = --ignore=tests/test_calc.py\n";
    let other_section = "[flake8]\naddopts = -k add\n";
    let package = "{\n  \"name\": \"calc\",\n  \"jest\": {\n    \"testPathIgnorePatterns\": [\"/node_modules/\"]\n  }\n}\n";
    let package_ignored = package.replace("[\"/node_modules/\"]", "[\"/node_modules/\", \"calc\"]");
    let jest = "module.exports = {\n  testPathIgnorePatterns: ['/node_modules/'],\n};\n";
    let jest_ignored = "module.exports = {\n  testPathIgnorePatterns: [\n    '/node_modules/',\n    // flaky\n    '<rootDir>/src/calc',\n  ],\n};\n";
    let vitest =
        "export default defineConfig({\n  test: {\n    coverage: { exclude: ['a'] },\n  },\n});\n";
    let vitest_coverage = vitest.replace("['a']", "['a', 'b']");
    let vitest_excluded = vitest.replace(
        "    coverage",
        "    exclude: ['**/calc.test.ts'],\n    coverage",
    );
    let cargo =
        "[package]\nname = \"calc\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[[test]]\nname = \"it\"\n";
    let cargo_off = cargo.replace(
        "path = \"src/lib.rs\"",
        "path = \"src/lib.rs\"\ntest = false",
    );
    let cargo_gone = cargo
        .replace("[[test]]\nname = \"it\"\n", "")
        .replace("[package]", "[package]\nautotests = false # later");
    let go_tagged = format!("//go:build integration\n\n{GO}");
    let honest = [
        analyzed(&[m("pytest.ini", pytest_ini, "[pytest]\naddopts = -q -x\n")]),
        analyzed(&[("tox.ini", ChangeKind::Untracked, None, Some(other_section))]),
        analyzed(&[m("vitest.config.ts", vitest, &vitest_coverage)]),
        analyzed(&[m("Cargo.toml", cargo, &cargo.replace("calc", "calc2"))]),
    ];
    for findings in honest {
        assert_eq!(findings, []);
    }
    insta::assert_debug_snapshot!([
        analyzed(&[m("pytest.ini", pytest_ini, pytest_k)]),
        analyzed(&[m("pyproject.toml", pyproject, pyproject_array)]),
        analyzed(&[u("setup.cfg", setup_cfg)]),
        analyzed(&[m("package.json", package, &package_ignored)]),
        analyzed(&[m("jest.config.js", jest, jest_ignored)]),
        analyzed(&[m("vitest.config.ts", vitest, &vitest_excluded)]),
        analyzed(&[m("Cargo.toml", cargo, &cargo_off)]),
        analyzed(&[m("crates/x/Cargo.toml", cargo, &cargo_gone)]),
        analyzed(&[m("calc_test.go", GO, &go_tagged)]),
    ]);
}

#[test]
fn pytest_mark_expressions_added_to_addopts_are_found() {
    // A selection keeps narrowing under `-m`, so it is the integrity check that must see an
    // agent mark the failing test and filter the mark out.
    let before = "[tool.pytest.ini_options]\naddopts = [\"-ra\", \"-m\", \"not property\"]\n";
    let honest = before.replace("\"-ra\"", "\"-ra\", \"-x\"");
    assert_eq!(analyzed(&[m("pyproject.toml", before, &honest)]), []);
    for (after, gained) in [
        (
            before.replace("not property", "not property and not broken"),
            "`-m not property and not broken`",
        ),
        (
            "[tool.pytest.ini_options]\naddopts = \"-ra -m 'not property' -mfast\"\n".to_owned(),
            "`-mfast`",
        ),
    ] {
        let found = analyzed(&[m("pyproject.toml", before, &after)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, FindingKind::RunnerConfigNarrowed);
        assert_eq!(found[0].line, Some(2));
        assert_eq!(
            found[0].description,
            format!("pytest `addopts` now leaves tests out: {gained}")
        );
    }
}

#[test]
fn configured_test_globs_and_protected_files() {
    let settings = crate::policy::IntegritySettings {
        tests: vec!["spec/**/*.py".to_owned()],
        protected: vec!["golden/**".to_owned(), "checkpoint.toml".to_owned()],
        ..Default::default()
    };
    let matcher = TestFiles::new(&settings).unwrap();
    assert!(matcher.is_test("spec/unit/calc.py"));
    assert!(!matcher.is_test("spec.py"));
    let findings = analyzed_with(
        &[
            ("golden/out.txt", ChangeKind::Modified, None, None),
            ("golden/new.txt", ChangeKind::Untracked, None, None),
            d("spec/unit/calc.py", "x = 1\n"),
            src("calc.py"),
        ],
        &matcher,
    );
    insta::assert_debug_snapshot!(findings);
    let bad = crate::policy::IntegritySettings {
        tests: vec!["a[".to_owned()],
        ..Default::default()
    };
    assert!(TestFiles::new(&bad).is_err());
}

/// Text of every shape the parsers meet: test files, configuration, binary-ish noise.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ \t\n(){}\\[\\],:=!\"'`#@/*a-z0-9_.-]{0,200}",
        Just(PYTHON.to_owned()),
        Just(LIB_RS.to_owned()),
    ]
}

proptest! {
    #[test]
    fn renaming_a_test_file_within_discovery_yields_nothing(
        names in names(),
        to in "[a-z]{1,8}",
        dir in prop_oneof![Just(""), Just("tests/"), Just("pkg/tests/")],
    ) {
        let text = python_file(&names);
        let from = format!("{dir}test_x.py");
        let to = format!("tests/test_{to}_renamed.py");
        prop_assert_eq!(analyzed(&[d(&from, &text), u(&to, &text)]), []);
        // Its tests renamed on the way, bodies unchanged.
        let renamed: Vec<String> = names.iter().map(|n| format!("{n}_renamed")).collect();
        let moved = python_file(&renamed);
        prop_assert_eq!(analyzed(&[d(&from, &text), u(&to, &moved)]), []);
    }

    #[test]
    fn adding_assertions_with_changed_code_yields_nothing(
        names in names(),
        asserts in 1usize..4,
    ) {
        let old = python_file(&names);
        let mut new = old.clone();
        for i in 0..asserts {
            new = new.replacen(
                "        self.assertEqual",
                &format!("        self.assertEqual(f({i}), {})\n        self.assertEqual", i + 100),
                1,
            );
        }
        prop_assert_eq!(analyzed(&[src("f.py"), m("tests/test_x.py", &old, &new)]), []);
    }

    #[test]
    fn no_text_panics_the_analysis(old in hostile(), new in hostile()) {
        for path in [
            "tests/test_x.py",
            "src/lib.rs",
            "x.test.ts",
            "x_test.go",
            "src/test/java/XTest.java",
            "pytest.ini",
            "pyproject.toml",
            "package.json",
            "vitest.config.ts",
            "Cargo.toml",
        ] {
            let _ = analyzed(&[src("x.py"), m(path, &old, &new)]);
            let _ = analyzed(&[d(path, &old), u("tests/other.py", &new), u("x.bak", &new)]);
        }
        let _ = expected::changed_operand(&old, &new);
        let _ = expected::is_literal(&new);
    }
}

/// One edit judged alone: a skip marker and a removed assertion come out; an edit that keeps
/// every check, or changes nothing, gives nothing; a test moved out of the file reads as removed.
#[test]
fn an_edit_is_judged_by_its_file_alone() {
    let files = TestFiles::default();
    let old = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n\n\ndef test_zero():\n    assert add(0, 1) == 1\n";
    let weakened = old
        .replace("def test_add", "@pytest.mark.skip\ndef test_add")
        .replace("    assert add(0, 0) == 0\n", "");
    let kinds: Vec<FindingKind> = weakened_by_edit("tests/test_calc.py", old, &weakened, &files)
        .into_iter()
        .map(|f| f.kind)
        .collect();
    assert_eq!(
        kinds,
        [FindingKind::MarkerAdded, FindingKind::AssertionRemoved]
    );
    let added = format!("{old}\n\ndef test_more():\n    assert add(1, 1) == 2\n");
    assert!(weakened_by_edit("tests/test_calc.py", old, old, &files).is_empty());
    assert!(weakened_by_edit("tests/test_calc.py", old, &added, &files).is_empty());
    // Renamed with its body kept: nothing; gone from the file (moved elsewhere or deleted):
    // removed, as far as this file can tell.
    let renamed = old.replace("def test_zero", "def test_zero_adds_nothing");
    assert!(weakened_by_edit("tests/test_calc.py", old, &renamed, &files).is_empty());
    let moved = &old[..old.find("\n\n\ndef test_zero").unwrap() + 1];
    let kinds: Vec<FindingKind> = weakened_by_edit("tests/test_calc.py", old, moved, &files)
        .into_iter()
        .map(|f| f.kind)
        .collect();
    assert_eq!(
        kinds,
        [FindingKind::TestRemoved, FindingKind::AssertionRemoved]
    );
    assert!(weakened_by_edit("calc.py", "x = 1\n", "x = 2\n", &files).is_empty());
}
