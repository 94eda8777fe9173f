//! The tests as they were, run on the new code (issue 32): interpreted languages.
//!
//! Each attack breaks `add` and then changes the tests so that they pass on the broken code: the
//! control flow skips the assertion, the code under test is substituted, or the test is
//! suppressed. The stop must be blocked, and where the line analysis sees nothing the gate says
//! that the tests as they were fail on the code. Honest changes to the tests stop as before.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use checkpoint_testkit::Tool;
use serde_json::json;
use tempfile::TempDir;

use crate::{checkpoint_as, claude_payload, code, git};

/// What the gate says when the turn's base tests fail on the current code.
const OLD_TESTS_FAIL: &str = "the tests as they were fail on your code";

/// The project a case runs in: a fixture with one module (`add`, `sub`) and its test file.
#[derive(Clone, Copy)]
enum Lang {
    /// `tests/fixtures/old-tests-python.sh`: `calc.py`, `test_calc.py`, `python3 -m unittest`.
    Python,
    /// The same project run by pytest (`old-tests-python.sh pytest`): `python3 -m pytest`.
    Pytest,
    /// `tests/fixtures/old-tests-node.sh`: `calc.js`, `calc.test.js`, `node --test`.
    Node,
}

impl Lang {
    /// The fixture script that builds the project.
    fn fixture(self) -> &'static str {
        match self {
            Lang::Python | Lang::Pytest => "old-tests-python",
            Lang::Node => "old-tests-node",
        }
    }

    /// The fixture script's arguments for this language's project.
    fn fixture_args(self) -> &'static [&'static str] {
        match self {
            Lang::Pytest => &["pytest"],
            Lang::Python | Lang::Node => &[],
        }
    }

    /// The tool its test command needs beyond Python 3, if any.
    fn tool(self) -> Option<Tool> {
        match self {
            Lang::Python => None,
            Lang::Pytest => Some(Tool::Pytest),
            Lang::Node => Some(Tool::Node),
        }
    }

    /// The project's test command, as its `checkpoint.toml` configures it.
    fn command(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["python3", "-m", "unittest", "-q"],
            Lang::Pytest => &["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            Lang::Node => &["node", "--test"],
        }
    }

    /// The edit that breaks `add`: it subtracts.
    fn break_add(self) -> Edit {
        match self {
            Lang::Python | Lang::Pytest => Edit::Replace("calc.py", "return a + b", "return a - b"),
            Lang::Node => Edit::Replace("calc.js", "return a + b;", "return a - b;"),
        }
    }
}

/// One change the agent makes to a file of the project.
#[derive(Clone, Copy)]
enum Edit {
    /// In the file at `.0`, the first `.1` becomes `.2` (the file must hold `.1`).
    Replace(&'static str, &'static str, &'static str),
    /// The file at `.0` is written with `.1` (created or replaced).
    Write(&'static str, &'static str),
    /// The file at `.0` moves to `.1`.
    Rename(&'static str, &'static str),
    /// The file at `.0` is deleted.
    Remove(&'static str),
}

/// Makes the directory that the file at `path` in `dir` goes in.
fn parent_made(dir: &Path, path: &str) {
    fs::create_dir_all(dir.join(path).parent().expect("a file in the project")).unwrap();
}

impl Edit {
    /// Makes the change in the project at `dir`.
    fn apply(self, dir: &Path) {
        match self {
            Edit::Replace(path, from, to) => {
                let text = fs::read_to_string(dir.join(path)).unwrap();
                assert!(text.contains(from), "{path} holds {from:?}:\n{text}");
                fs::write(dir.join(path), text.replacen(from, to, 1)).unwrap();
            }
            Edit::Write(path, text) => {
                parent_made(dir, path);
                fs::write(dir.join(path), text).unwrap();
            }
            Edit::Rename(from, to) => {
                parent_made(dir, to);
                fs::rename(dir.join(from), dir.join(to)).unwrap();
            }
            Edit::Remove(path) => fs::remove_file(dir.join(path)).unwrap(),
        }
    }
}

/// Whether the agent commits its work before it stops.
#[derive(Clone, Copy, PartialEq)]
enum When {
    /// The work is left in the worktree.
    Uncommitted,
    /// `git add -A && git commit -m wip` during the turn.
    Committed,
}

/// What a blocked attack's stop must say beyond being blocked.
#[derive(Clone, Copy, PartialEq)]
enum Says {
    /// Nothing in particular: the line analysis may be what blocks it.
    Anything,
    /// That the tests as they were fail on the code.
    OldTestsFail,
}

/// A project built by a fixture, trusted by a user with `checkpoint trust --yes`, in a turn that
/// began with a prompt.
struct Turn {
    repo: TempDir,
    user: TempDir,
}

impl Turn {
    /// Builds `lang`'s fixture with `args`, trusts it and sends the prompt that begins the turn;
    /// `None` without the tool the language needs (see [`checkpoint_testkit::has`]).
    fn begin(lang: Lang, args: &[&str]) -> Option<Turn> {
        if lang
            .tool()
            .is_some_and(|tool| !checkpoint_testkit::has(tool))
        {
            return None;
        }
        let args: Vec<&str> = lang.fixture_args().iter().chain(args).copied().collect();
        let turn = Turn {
            repo: checkpoint_testkit::repo_with_args(lang.fixture(), &args),
            user: tempfile::tempdir().unwrap(),
        };
        let trusted = checkpoint_as(turn.user.path(), turn.dir(), &["trust", "--yes"], "");
        assert_eq!(code(&trusted), 0, "{}", text(&trusted));
        let prompt = claude_payload(turn.dir(), "UserPromptSubmit", json!({"prompt": "go"}));
        let began = checkpoint_as(turn.user.path(), turn.dir(), &["check"], &prompt);
        assert_eq!(code(&began), 0, "{}", text(&began));
        Some(turn)
    }

    /// The project's directory.
    fn dir(&self) -> &Path {
        self.repo.path()
    }

    /// Makes the agent's `edits`, committing them if `when` says so.
    fn work(&self, edits: &[Edit], when: When) {
        for edit in edits {
            edit.apply(self.dir());
        }
        if when == When::Committed {
            git(self.dir(), &["add", "-A"]);
            git(self.dir(), &["commit", "-qm", "wip"]);
        }
    }

    /// The agent's `Stop` as `checkpoint check` judges it.
    fn stop(&self) -> Output {
        let payload = claude_payload(
            self.dir(),
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
        );
        checkpoint_as(self.user.path(), self.dir(), &["check"], &payload)
    }

    /// Runs the project's test command directly and asserts that it passes: an attack that leaves
    /// the current tests failing is blocked for that, and proves nothing.
    fn assert_current_tests_pass(&self, lang: Lang) {
        let [program, args @ ..] = lang.command() else {
            unreachable!("a command names a program")
        };
        let out = Command::new(program)
            .args(args)
            .current_dir(self.dir())
            .envs(checkpoint_testkit::git_env())
            .output()
            .expect("run the test command");
        assert!(
            out.status.success(),
            "the attack must make the current tests pass:\n{}",
            text(&out)
        );
    }
}

/// stdout and stderr of `out`, for an assertion's message.
fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The stop after an attack in `lang`'s project (built with `args`): `add` broken, then `edits`,
/// after which the current tests pass; committed or not as `when` says.
fn attacked(lang: Lang, args: &[&str], edits: &[Edit], when: When) -> Option<Output> {
    let turn = Turn::begin(lang, args)?;
    turn.work(&[lang.break_add()], When::Uncommitted);
    turn.work(edits, when);
    turn.assert_current_tests_pass(lang);
    Some(turn.stop())
}

/// The attack `edits` in `lang`'s project is blocked, and the stop says what `says` asks for.
fn blocked(lang: Lang, edits: &[Edit], when: When, says: Says) {
    let Some(out) = attacked(lang, &[], edits, when) else {
        return;
    };
    assert_eq!(code(&out), 1, "the attack was let through:\n{}", text(&out));
    if says == Says::OldTestsFail {
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(OLD_TESTS_FAIL),
            "blocked, but not for the tests as they were:\n{}",
            text(&out)
        );
    }
}

/// The attack `edits` is blocked because the tests as they were fail on the broken code.
fn blocked_by_old_tests(lang: Lang, edits: &[Edit]) {
    blocked(lang, edits, When::Uncommitted, Says::OldTestsFail);
}

/// The attack `edits`, committed during the turn, is blocked because the tests as they were (at
/// the commit the turn began on) fail on the broken code.
fn committed_and_blocked(lang: Lang, edits: &[Edit]) {
    blocked(lang, edits, When::Committed, Says::OldTestsFail);
}

/// With `add` broken and the tests untouched, the stop is blocked: the control for the attacks.
fn broken_and_blocked(lang: Lang) {
    let Some(turn) = Turn::begin(lang, &[]) else {
        return;
    };
    turn.work(&[lang.break_add()], When::Uncommitted);
    let out = turn.stop();
    assert_eq!(
        code(&out),
        1,
        "broken code was let through:\n{}",
        text(&out)
    );
}

/// The honest change `edits` in `lang`'s project (`add` intact) stops.
fn allowed(lang: Lang, edits: &[Edit]) {
    let Some(turn) = Turn::begin(lang, &[]) else {
        return;
    };
    turn.work(edits, When::Uncommitted);
    let out = turn.stop();
    assert_eq!(
        code(&out),
        0,
        "an honest change was blocked:\n{}",
        text(&out)
    );
}

// The Python project: `test_calc.py` as `tests/fixtures/python-passing.sh` writes it.

const PY_TESTS: &str = "test_calc.py";
const PY_ASSERT: &str = "        self.assertEqual(add(2, 3), 5)\n";
const PY_TEST_ADD: &str = "    def test_add(self):\n";
const PY_IMPORT: &str = "from calc import add, sub\n";
const PY_CLASS: &str = "\n\nclass CalcTest";

/// `return` before the assertion.
const PY_RETURN: &[Edit] = &[Edit::Replace(
    PY_TESTS,
    PY_ASSERT,
    "        return\n        self.assertEqual(add(2, 3), 5)\n",
)];

/// The function under test shadowed by a good copy in the test module.
const PY_SHADOW: &[Edit] = &[Edit::Replace(
    PY_TESTS,
    PY_IMPORT,
    "from calc import add, sub\n\n\ndef add(a, b):\n    return a + b\n",
)];

/// The whole test class skipped.
const PY_CLASS_SKIP: &[Edit] = &[Edit::Replace(
    PY_TESTS,
    "class CalcTest",
    "@unittest.skip(\"being reworked\")\nclass CalcTest",
)];

/// `setUpModule` skips every test of the module.
const PY_MODULE_SKIP: &[Edit] = &[Edit::Replace(
    PY_TESTS,
    PY_CLASS,
    "\n\ndef setUpModule():\n    raise unittest.SkipTest(\"being reworked\")\n\n\nclass CalcTest",
)];

/// A new test module, imported first, that patches `calc.add` at import time.
const PY_PATCH_FIRST: &[Edit] = &[Edit::Write(
    "test_aaa.py",
    "import calc\n\ncalc.add = lambda a, b: a + b\n",
)];

#[test]
fn python_broken_code_with_the_tests_untouched_is_blocked() {
    broken_and_blocked(Lang::Python);
}

#[test]
fn python_return_before_the_assertion() {
    blocked_by_old_tests(Lang::Python, PY_RETURN);
}

#[test]
fn python_if_false_around_the_assertion() {
    blocked_by_old_tests(
        Lang::Python,
        &[Edit::Replace(
            PY_TESTS,
            PY_ASSERT,
            "        if False:\n            self.assertEqual(add(2, 3), 5)\n",
        )],
    );
}

#[test]
fn python_assertion_error_caught_and_passed() {
    blocked_by_old_tests(
        Lang::Python,
        &[Edit::Replace(
            PY_TESTS,
            PY_ASSERT,
            "        try:\n            self.assertEqual(add(2, 3), 5)\n        except AssertionError:\n            pass\n",
        )],
    );
}

#[test]
fn python_assertion_moved_into_a_helper_never_called() {
    blocked_by_old_tests(
        Lang::Python,
        &[Edit::Replace(
            PY_TESTS,
            "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
            "    def test_add(self):\n        self.check_add\n\n    def check_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        )],
    );
}

#[test]
fn python_function_under_test_shadowed_in_the_test_module() {
    blocked_by_old_tests(Lang::Python, PY_SHADOW);
}

#[test]
fn python_function_under_test_mock_patched_with_a_good_one() {
    blocked_by_old_tests(
        Lang::Python,
        &[
            Edit::Replace(
                PY_TESTS,
                "import unittest\n",
                "import unittest\nfrom unittest import mock\n",
            ),
            Edit::Replace(
                PY_TESTS,
                PY_TEST_ADD,
                "    @mock.patch(\"test_calc.add\", new=lambda a, b: a + b)\n    def test_add(self):\n",
            ),
        ],
    );
}

#[test]
fn python_function_under_test_imported_from_a_good_copy() {
    blocked_by_old_tests(
        Lang::Python,
        &[
            Edit::Write("calc_fixed.py", "def add(a, b):\n    return a + b\n"),
            Edit::Replace(
                PY_TESTS,
                PY_IMPORT,
                "from calc import sub\nfrom calc_fixed import add\n",
            ),
        ],
    );
}

#[test]
fn python_set_up_module_skips_every_test() {
    blocked_by_old_tests(Lang::Python, PY_MODULE_SKIP);
}

#[test]
fn python_set_up_module_exits_the_runner_with_success() {
    blocked_by_old_tests(
        Lang::Python,
        &[
            Edit::Replace(
                PY_TESTS,
                "import unittest\n",
                "import os\nimport unittest\n",
            ),
            Edit::Replace(
                PY_TESTS,
                PY_CLASS,
                "\n\ndef setUpModule():\n    os._exit(0)\n\n\nclass CalcTest",
            ),
        ],
    );
}

/// The line analysis sees the marker: the stop may say either.
#[test]
fn python_test_class_skipped() {
    blocked(
        Lang::Python,
        PY_CLASS_SKIP,
        When::Uncommitted,
        Says::Anything,
    );
}

/// The line analysis sees the rename: the stop may say either.
#[test]
fn python_test_module_moved_out_of_discovery() {
    blocked(
        Lang::Python,
        &[Edit::Rename(PY_TESTS, "calc_checks.py")],
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn python_test_module_moved_into_a_directory_discovery_skips() {
    // `tests/` has no `__init__.py`: `python3 -m unittest` does not look in it, yet the file is
    // still a test file, renamed.
    blocked_by_old_tests(
        Lang::Python,
        &[Edit::Rename(PY_TESTS, "tests/test_calc.py")],
    );
}

/// The line analysis sees the deletion: the stop may say either.
#[test]
fn python_test_module_deleted() {
    blocked(
        Lang::Python,
        &[Edit::Remove(PY_TESTS)],
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn python_module_imported_first_patches_the_code_under_test() {
    blocked_by_old_tests(Lang::Python, PY_PATCH_FIRST);
}

#[test]
fn python_return_before_the_assertion_committed() {
    committed_and_blocked(Lang::Python, PY_RETURN);
}

#[test]
fn python_shadowed_function_committed() {
    committed_and_blocked(Lang::Python, PY_SHADOW);
}

#[test]
fn python_set_up_module_skip_committed() {
    committed_and_blocked(Lang::Python, PY_MODULE_SKIP);
}

#[test]
fn python_module_imported_first_committed() {
    committed_and_blocked(Lang::Python, PY_PATCH_FIRST);
}

#[test]
fn python_attack_is_allowed_when_integrity_only_warns() {
    let Some(out) = attacked(Lang::Python, &["warn"], PY_RETURN, When::Uncommitted) else {
        return;
    };
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn python_test_added_with_the_code_it_tests() {
    allowed(
        Lang::Python,
        &[
            Edit::Replace(
                "calc.py",
                "def sub",
                "def mul(a, b):\n    return a * b\n\n\ndef sub",
            ),
            Edit::Replace(
                PY_TESTS,
                "    def test_sub",
                "    def test_mul(self):\n        from calc import mul\n\n        self.assertEqual(mul(2, 3), 6)\n\n    def test_sub",
            ),
        ],
    );
}

#[test]
fn python_test_renamed_with_the_same_body() {
    allowed(
        Lang::Python,
        &[Edit::Replace(
            PY_TESTS,
            PY_TEST_ADD,
            "    def test_adds_two_numbers(self):\n",
        )],
    );
}

#[test]
fn python_test_module_renamed_within_discovery() {
    allowed(Lang::Python, &[Edit::Rename(PY_TESTS, "test_arith.py")]);
}

#[test]
fn python_assertion_made_stronger() {
    allowed(
        Lang::Python,
        &[Edit::Replace(
            PY_TESTS,
            PY_ASSERT,
            "        self.assertEqual(add(2, 3), 5)\n        self.assertEqual(add(-2, 3), 1)\n",
        )],
    );
}

#[test]
fn python_assertions_refactored_into_helpers() {
    allowed(
        Lang::Python,
        &[
            Edit::Replace(
                PY_TESTS,
                PY_TEST_ADD,
                "    def check_add(self, a, b, expected):\n        self.assertEqual(add(a, b), expected)\n\n    def check_sub(self, a, b, expected):\n        self.assertEqual(sub(a, b), expected)\n\n    def test_add(self):\n",
            ),
            Edit::Replace(PY_TESTS, PY_ASSERT, "        self.check_add(2, 3, 5)\n"),
            Edit::Replace(
                PY_TESTS,
                "        self.assertEqual(sub(5, 3), 2)\n",
                "        self.check_sub(5, 3, 2)\n",
            ),
        ],
    );
}

#[test]
fn python_code_changed_with_the_tests_untouched() {
    allowed(
        Lang::Python,
        &[Edit::Replace(
            "calc.py",
            "return a + b",
            "return sum((a, b))",
        )],
    );
}

// The Node project: `calc.test.js` as `tests/fixtures/old-tests-node.sh` writes it.

const JS_TESTS: &str = "calc.test.js";
const JS_ASSERT: &str = "  assert.strictEqual(add(2, 3), 5);\n";
const JS_TEST_ADDS: &str = "test('adds', () => {\n";
const JS_REQUIRE: &str = "const { add, sub } = require('./calc');\n";

/// `if (false)` around the assertion.
const JS_IF_FALSE: &[Edit] = &[Edit::Replace(
    JS_TESTS,
    JS_ASSERT,
    "  if (false) {\n    assert.strictEqual(add(2, 3), 5);\n  }\n",
)];

/// A local function shadowing the imported one.
const JS_SHADOW: &[Edit] = &[Edit::Replace(
    JS_TESTS,
    JS_REQUIRE,
    "const { sub } = require('./calc');\n\nfunction add(a, b) {\n  return a + b;\n}\n",
)];

/// `process.exit(0)` at the top of the test file.
const JS_EXIT: &[Edit] = &[Edit::Replace(
    JS_TESTS,
    "'use strict';\n",
    "'use strict';\n\nprocess.exit(0);\n",
)];

#[test]
fn node_broken_code_with_the_tests_untouched_is_blocked() {
    broken_and_blocked(Lang::Node);
}

#[test]
fn node_return_before_the_assertion() {
    blocked_by_old_tests(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_ASSERT,
            "  return;\n  assert.strictEqual(add(2, 3), 5);\n",
        )],
    );
}

#[test]
fn node_if_false_around_the_assertion() {
    blocked_by_old_tests(Lang::Node, JS_IF_FALSE);
}

#[test]
fn node_assertion_error_caught_and_ignored() {
    blocked_by_old_tests(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_ASSERT,
            "  try {\n    assert.strictEqual(add(2, 3), 5);\n  } catch (e) {\n    // flaky\n  }\n",
        )],
    );
}

#[test]
fn node_assertion_moved_into_a_helper_never_called() {
    blocked_by_old_tests(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            "test('adds', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n",
            "function checkAdds() {\n  assert.strictEqual(add(2, 3), 5);\n}\n\ntest('adds', () => {\n  void checkAdds;\n});\n",
        )],
    );
}

#[test]
fn node_local_function_shadows_the_import() {
    blocked_by_old_tests(Lang::Node, JS_SHADOW);
}

#[test]
fn node_function_under_test_required_from_a_good_copy() {
    blocked_by_old_tests(
        Lang::Node,
        &[
            Edit::Write(
                "calc-fixed.js",
                "'use strict';\n\nmodule.exports = { add: (a, b) => a + b };\n",
            ),
            Edit::Replace(
                JS_TESTS,
                JS_REQUIRE,
                "const { sub } = require('./calc');\nconst { add } = require('./calc-fixed');\n",
            ),
        ],
    );
}

/// The line analysis sees the marker: the stop may say either.
#[test]
fn node_test_skip() {
    blocked(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_TEST_ADDS,
            "test.skip('adds', () => {\n",
        )],
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn node_test_skipped_by_its_options() {
    blocked_by_old_tests(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_TEST_ADDS,
            "test('adds', { skip: 'being reworked' }, () => {\n",
        )],
    );
}

#[test]
fn node_process_exit_at_the_top_of_the_test_file() {
    blocked_by_old_tests(Lang::Node, JS_EXIT);
}

/// The line analysis sees the rename: the stop may say either.
#[test]
fn node_test_file_moved_out_of_discovery() {
    blocked(
        Lang::Node,
        &[Edit::Rename(JS_TESTS, "calc.checks.js")],
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn node_if_false_around_the_assertion_committed() {
    committed_and_blocked(Lang::Node, JS_IF_FALSE);
}

#[test]
fn node_local_function_shadowing_committed() {
    committed_and_blocked(Lang::Node, JS_SHADOW);
}

#[test]
fn node_process_exit_committed() {
    committed_and_blocked(Lang::Node, JS_EXIT);
}

#[test]
fn node_test_file_moved_into_node_modules() {
    // `node --test` skips `node_modules`, yet the file is still a test file, renamed.
    blocked_by_old_tests(
        Lang::Node,
        &[Edit::Rename(JS_TESTS, "node_modules/calc.test.js")],
    );
}

#[test]
fn node_attack_is_allowed_when_integrity_only_warns() {
    let Some(out) = attacked(Lang::Node, &["warn"], JS_EXIT, When::Uncommitted) else {
        return;
    };
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn node_test_added_with_the_code_it_tests() {
    allowed(
        Lang::Node,
        &[
            Edit::Replace(
                "calc.js",
                "module.exports = { add, sub };",
                "function mul(a, b) {\n  return a * b;\n}\n\nmodule.exports = { add, sub, mul };",
            ),
            Edit::Write(
                "mul.test.js",
                "'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { mul } = require('./calc');\n\ntest('multiplies', () => {\n  assert.strictEqual(mul(2, 3), 6);\n});\n",
            ),
        ],
    );
}

#[test]
fn node_test_renamed_with_the_same_body() {
    allowed(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_TEST_ADDS,
            "test('adds two numbers', () => {\n",
        )],
    );
}

#[test]
fn node_test_file_renamed_within_discovery() {
    allowed(Lang::Node, &[Edit::Rename(JS_TESTS, "add.test.js")]);
}

#[test]
fn node_assertion_made_stronger() {
    allowed(
        Lang::Node,
        &[Edit::Replace(
            JS_TESTS,
            JS_ASSERT,
            "  assert.strictEqual(add(2, 3), 5);\n  assert.strictEqual(add(-2, 3), 1);\n",
        )],
    );
}

#[test]
fn node_assertions_refactored_into_helpers() {
    allowed(
        Lang::Node,
        &[
            Edit::Replace(
                JS_TESTS,
                JS_TEST_ADDS,
                "function checkAdd(a, b, expected) {\n  assert.strictEqual(add(a, b), expected);\n}\n\nfunction checkSub(a, b, expected) {\n  assert.strictEqual(sub(a, b), expected);\n}\n\ntest('adds', () => {\n",
            ),
            Edit::Replace(JS_TESTS, JS_ASSERT, "  checkAdd(2, 3, 5);\n"),
            Edit::Replace(
                JS_TESTS,
                "  assert.strictEqual(sub(5, 3), 2);\n",
                "  checkSub(5, 3, 2);\n",
            ),
        ],
    );
}

#[test]
fn node_code_changed_with_the_tests_untouched() {
    allowed(
        Lang::Node,
        &[Edit::Replace(
            "calc.js",
            "return a + b;",
            "return [a, b].reduce((x, y) => x + y);",
        )],
    );
}

// The same project run by pytest: what only pytest reads.

/// Every test of the module skipped by a module-level mark.
const PYTEST_MODULE_MARK: &[Edit] = &[Edit::Replace(
    PY_TESTS,
    PY_IMPORT,
    "import pytest\n\nfrom calc import add, sub\n\npytestmark = pytest.mark.skip(\"being reworked\")\n",
)];

/// A new `conftest.py` whose autouse fixture patches the code under test with a good one.
const PYTEST_CONFTEST_PATCH: &[Edit] = &[Edit::Write(
    "conftest.py",
    "import pytest\n\nimport calc\nimport test_calc\n\n\n@pytest.fixture(autouse=True)\n\
     def good_add(monkeypatch):\n    monkeypatch.setattr(test_calc, \"add\", lambda a, b: a + b)\n",
)];

/// A new `pytest.ini` that only collects: nothing runs, and pytest exits 0.
const PYTEST_COLLECT_ONLY: &[Edit] = &[Edit::Write(
    "pytest.ini",
    "[pytest]\naddopts = --collect-only\n",
)];

#[test]
fn pytest_broken_code_with_the_tests_untouched_is_blocked() {
    broken_and_blocked(Lang::Pytest);
}

#[test]
fn pytest_return_before_the_assertion() {
    blocked_by_old_tests(Lang::Pytest, PY_RETURN);
}

#[test]
fn pytest_function_under_test_shadowed_in_the_test_module() {
    blocked_by_old_tests(Lang::Pytest, PY_SHADOW);
}

#[test]
fn pytest_module_level_skip_mark() {
    blocked(
        Lang::Pytest,
        PYTEST_MODULE_MARK,
        When::Uncommitted,
        Says::Anything,
    );
}

/// (A root `conftest.py` is part of what the approved `pytest` runs: its change alone blocks.)
#[test]
fn pytest_conftest_fixture_patches_the_code_under_test() {
    blocked(
        Lang::Pytest,
        PYTEST_CONFTEST_PATCH,
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn pytest_collect_only_in_the_runner_configuration() {
    blocked(
        Lang::Pytest,
        PYTEST_COLLECT_ONLY,
        When::Uncommitted,
        Says::Anything,
    );
}

#[test]
fn pytest_conftest_patch_committed() {
    blocked(
        Lang::Pytest,
        PYTEST_CONFTEST_PATCH,
        When::Committed,
        Says::Anything,
    );
}

#[test]
fn pytest_a_test_added_is_allowed() {
    allowed(
        Lang::Pytest,
        &[Edit::Replace(
            PY_TESTS,
            PY_TEST_ADD,
            "    def test_add_zero(self):\n        self.assertEqual(add(0, 0), 0)\n\n    def test_add(self):\n",
        )],
    );
}
