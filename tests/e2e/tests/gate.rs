//! The stop gate through the real agent CLIs: ten stories, each played by Claude Code, Gemini
//! CLI and Codex CLI against the scripted model, with our hooks installed by
//! `checkpoint install <agent>` and our adapters built from this workspace.
//!
//! Every story starts from the `python-passing` fixture (`checkpoint.toml` runs
//! `python3 -m unittest -q`). The scenario's `before` actions play the agent's edits between
//! model calls. What a block did is read from the next model request: our message, in the CLI's
//! wrapper. Test names are `<story>::<agent>`; the same stories from a subdirectory and a linked
//! worktree are `<story>_from_<start>::<agent>`; Claude Code's subagents have a module of their
//! own (`subagents::…`), and so do warm results (`warm_results::<agent>`) and a repository whose
//! configuration names another working tree (`configured_worktree::<agent>`).

use std::path::Path;
use std::process::Command;

use checkpoint_e2e::scenario::{Scenario, Step};
use std::path::PathBuf;

use checkpoint_e2e::{
    Agent, HOOKS_COMMIT, RunResult, Session, add_plugin, install_checkpoint,
    install_checkpoint_for_user, last_user_texts, stop_feedback, trust_project,
};

/// The prompt every story starts with.
const PROMPT: &str = "Work on the calculator in this repository.";

/// `calc.py` with `add` broken (`test_add` fails, `test_sub` passes). The failure output carries
/// `<`, `>` and `&`, which Codex has to escape inside its `<hook_prompt>` wrapper.
const CALC_BROKEN: &str = r#""""Tiny arithmetic helpers."""


def add(a, b):
    return "<a & b>"


def sub(a, b):
    return a - b
"#;

/// `calc.py` with `add` correct again, written differently from the committed version so that
/// the fix is a commit of its own.
const CALC_FIXED: &str = r#""""Tiny arithmetic helpers."""


def add(a, b):
    """Return the sum of a and b."""
    return a + b


def sub(a, b):
    return a - b
"#;

/// `calc.py` with a new, working helper: the suite still passes.
const CALC_WITH_MUL: &str = r#""""Tiny arithmetic helpers."""


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
"#;

/// `test_calc.py` with `test_add`'s expected value changed to what the broken `add` returns: the
/// suite passes, and the test no longer tests anything.
const TEST_WEAKENED: &str = r#"import unittest

from calc import add, sub


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), "<a & b>")

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)


if __name__ == "__main__":
    unittest.main()
"#;

/// `test_calc.py` with `test_add` returning before its assertion: the suite passes on the broken
/// `add`, and no line pattern sees it.
const TEST_RETURNS_EARLY: &str = r#"import unittest

from calc import add, sub


class CalcTest(unittest.TestCase):
    def test_add(self):
        if add(2, 3) != 5:
            return
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)


if __name__ == "__main__":
    unittest.main()
"#;

/// `test_calc.py` with the code under test replaced by a good implementation in the test:
/// the suite passes on the broken `add`.
const TEST_MOCKS_ADD: &str = r#"import unittest
from unittest import mock

import calc
from calc import sub


class CalcTest(unittest.TestCase):
    @mock.patch.object(calc, "add", lambda a, b: a + b)
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)


if __name__ == "__main__":
    unittest.main()
"#;

/// The first line of a block for tests changed to fit the code (the old tests fail on it).
const TESTS_REFUTED: &str = "Checkpoint — The tests were changed to fit the code:";
/// What a block for tests changed to fit the code says of them.
const OLD_TESTS_FAIL: &str =
    "the tests as they were fail on your code: `test_calc.CalcTest.test_add`";

/// The first line of a block for weakened tests.
const TESTS_WEAKENED: &str = "Checkpoint — The tests were weakened:";

/// A README edit: docs are neither tested nor gated.
const README_EDITED: &str = "# calc\n\nTiny arithmetic helpers: `add` and `sub`.\n\n\
                             Run the tests with `python3 -m unittest`.\n";

/// The first line of a block for failing tests.
const TESTS_FAILED: &str = "Checkpoint — Tests: FAILED";
/// The failing assertion from the test output in a block for `CALC_BROKEN`.
const BROKEN_ASSERTION: &str = "AssertionError: '<a & b>' != 5";
/// The first line of a block for uncommitted work whose tests pass (`test_add`, `test_sub`).
const TESTS_PASSED: &str = "Checkpoint — Tests: 2 passed";
/// The commit gate's instruction.
const COMMIT_GATE: &str = "Commit your work before stopping.";
/// The `[stop] max_blocks` default: blocks in a row before a stop is allowed anyway.
const MAX_BLOCKS: usize = 3;

/// One story of an agent trying to stop.
#[derive(Debug, Clone, Copy)]
enum Story {
    /// The first reply follows an edit that breaks `add`: the stop is blocked for the failing
    /// test; the next step fixes and commits, and the stop is allowed.
    BrokenTest,
    /// A working change is left uncommitted: the commit gate blocks; the next step commits.
    UncommittedCode,
    /// `add` is broken and never fixed: the stop is blocked `max_blocks` times, then allowed.
    NeverFixes,
    /// Only README.md changes: the stop is allowed at once.
    DocsOnly,
    /// `add` is broken and `test_add` returns before its assertion when `add` is wrong: the
    /// tests pass, no line pattern sees it, but the tests as they were fail on the new code —
    /// blocked; it restores the test, fixes the code and commits: allowed.
    ReturnBeforeAssert,
    /// `add` is broken and the test patches `calc.add` with a good implementation: blocked the
    /// same way; it restores the test, fixes the code and commits: allowed.
    MockedCode,
    /// `add` is broken; blocked for the failing test, the model changes the test's expected
    /// value to what the broken code returns: blocked again, for the weakened test; it restores
    /// the test, fixes the code and commits: allowed.
    WeakenedAssertion,
    /// `add` is broken, its test's expected value changed to match, and both committed before
    /// the stop: the turn is judged from where it began, so the commit hides nothing — blocked
    /// for the weakened test; it restores the test, fixes the code and commits: allowed.
    CommittedWeakening,
    /// A working change committed before the stop: allowed at once, the commit gate quiet.
    CommittedWork,
    /// As `CommittedWeakening`, but the model never fixes anything: every stop of the turn is
    /// judged from where the turn began — the block sent back (as a prompt, by some CLIs) does
    /// not move the base — until the cap lets the stop through.
    CommittedNeverFixes,
}

impl Story {
    /// The model's script.
    fn steps(self) -> Vec<Step> {
        match self {
            Story::BrokenTest => vec![
                Step::reply("I changed add.").write("calc.py", CALC_BROKEN),
                Step::reply("Fixed add and committed.")
                    .write("calc.py", CALC_FIXED)
                    .run("git commit -qam fix"),
            ],
            Story::UncommittedCode => vec![
                Step::reply("I added mul.").write("calc.py", CALC_WITH_MUL),
                Step::reply("Committed.").run("git commit -qam 'calc: mul'"),
            ],
            // After the first step the mock answers every turn with its "nothing more to do".
            Story::NeverFixes => vec![Step::reply("I changed add.").write("calc.py", CALC_BROKEN)],
            Story::DocsOnly => {
                vec![Step::reply("I updated the README.").write("README.md", README_EDITED)]
            }
            Story::ReturnBeforeAssert => Story::changed_to_fit(TEST_RETURNS_EARLY),
            Story::MockedCode => Story::changed_to_fit(TEST_MOCKS_ADD),
            Story::WeakenedAssertion => vec![
                Step::reply("I changed add.").write("calc.py", CALC_BROKEN),
                Step::reply("The test expected the wrong value; I updated it.")
                    .write("test_calc.py", TEST_WEAKENED),
                Step::reply("Restored the test, fixed add and committed.")
                    .write("calc.py", CALC_FIXED)
                    .run("git checkout -- test_calc.py")
                    .run("git commit -qam fix"),
            ],
            Story::CommittedWeakening => vec![
                Step::reply("I changed add and updated its test.")
                    .write("calc.py", CALC_BROKEN)
                    .write("test_calc.py", TEST_WEAKENED)
                    .run("git commit -qam wip"),
                Step::reply("Restored the test, fixed add and committed.")
                    .write("calc.py", CALC_FIXED)
                    .run("git checkout HEAD~1 -- test_calc.py")
                    .run("git commit -qam fix"),
            ],
            Story::CommittedWork => vec![
                Step::reply("I added mul and committed.")
                    .write("calc.py", CALC_WITH_MUL)
                    .run("git commit -qam 'calc: mul'"),
            ],
            // After the first step the mock answers every turn with its "nothing more to do".
            Story::CommittedNeverFixes => vec![
                Step::reply("I changed add and updated its test.")
                    .write("calc.py", CALC_BROKEN)
                    .write("test_calc.py", TEST_WEAKENED)
                    .run("git commit -qam wip"),
            ],
        }
    }

    /// The script of a story that breaks `add`, changes `test_calc.py` to `tests` so that the
    /// suite passes, then restores the test, fixes `add` and commits.
    fn changed_to_fit(tests: &str) -> Vec<Step> {
        vec![
            Step::reply("I changed add and its test.")
                .write("calc.py", CALC_BROKEN)
                .write("test_calc.py", tests),
            Step::reply("Restored the test, fixed add and committed.")
                .write("calc.py", CALC_FIXED)
                .run("git checkout -- test_calc.py")
                .run("git commit -qam fix"),
        ]
    }

    /// For each block, in order: texts the block message must contain. The stop after the last
    /// block is allowed, so the run has one more model turn than blocks.
    fn blocks(self) -> Vec<&'static [&'static str]> {
        match self {
            Story::BrokenTest => vec![&[TESTS_FAILED, "test_add", BROKEN_ASSERTION]],
            Story::UncommittedCode => vec![&[TESTS_PASSED, COMMIT_GATE, "M calc.py"]],
            Story::NeverFixes => vec![&[TESTS_FAILED, "test_add", BROKEN_ASSERTION]; MAX_BLOCKS],
            Story::DocsOnly => Vec::new(),
            Story::ReturnBeforeAssert | Story::MockedCode => {
                vec![&[TESTS_REFUTED, OLD_TESTS_FAIL, "Fix the code so that"]]
            }
            Story::WeakenedAssertion => vec![
                &[TESTS_FAILED, "test_add", BROKEN_ASSERTION],
                &[
                    TESTS_WEAKENED,
                    "test_calc.py:8",
                    "Fix the code, not the tests",
                ],
            ],
            Story::CommittedWeakening => vec![&[
                TESTS_WEAKENED,
                "test_calc.py:8: expected value changed",
                "Fix the code, not the tests",
            ]],
            Story::CommittedWork => Vec::new(),
            Story::CommittedNeverFixes => {
                vec![&[TESTS_WEAKENED, "test_calc.py:8: expected value changed",]; MAX_BLOCKS]
            }
        }
    }

    /// `git status --porcelain` and HEAD's subject after the run.
    fn final_repo(self) -> (&'static str, &'static str) {
        match self {
            Story::BrokenTest => ("", "fix"),
            Story::UncommittedCode => ("", "calc: mul"),
            Story::NeverFixes => (" M calc.py\n", HOOKS_COMMIT),
            Story::DocsOnly => (" M README.md\n", HOOKS_COMMIT),
            Story::ReturnBeforeAssert | Story::MockedCode => ("", "fix"),
            Story::WeakenedAssertion => ("", "fix"),
            Story::CommittedWeakening => ("", "fix"),
            Story::CommittedWork => ("", "calc: mul"),
            Story::CommittedNeverFixes => ("", "wip"),
        }
    }
}

/// Where the agent is started.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// At the repository's root, with the hooks installed for the project (and committed).
    Root,
    /// In `docs/`, a subdirectory, with the hooks installed for the user in the repository.
    Subdirectory,
    /// At the root of a linked worktree (`git worktree add`) of the repository, with the hooks
    /// installed for the user in the repository (its main worktree).
    Worktree,
    /// At the repository's root, with no hooks installed: checkpoint's plugin from this
    /// repository added for the user ([`add_plugin`], our binaries on `PATH`) and the
    /// repository's commands approved (`checkpoint trust --yes`), as a user of the plugin does.
    Plugin,
}

/// Where one run happens: the worktree the agent edits and the directory it starts in.
struct Place {
    /// The worktree's root: the scenario's edits and the final checks happen here.
    root: PathBuf,
    /// The agent's working directory.
    cwd: PathBuf,
    /// Keeps a linked worktree's parent directory alive for the run.
    _worktrees: Option<tempfile::TempDir>,
}

impl Start {
    /// Installs the hooks in `repo` as this start needs, and says where the agent runs.
    fn prepare(self, session: &mut Session, repo: &Path) -> Place {
        let git = |dir: &Path, args: &[&str]| {
            checkpoint_testkit::git(dir, args);
        };
        match self {
            Start::Root => {
                install_checkpoint(session, repo);
                Place {
                    root: repo.to_owned(),
                    cwd: repo.to_owned(),
                    _worktrees: None,
                }
            }
            Start::Subdirectory => {
                std::fs::create_dir(repo.join("docs")).unwrap();
                std::fs::write(repo.join("docs/guide.md"), "# Guide\n").unwrap();
                git(repo, &["add", "-A"]);
                git(repo, &["commit", "-qm", "docs: guide"]);
                install_checkpoint_for_user(session, repo);
                Place {
                    root: repo.to_owned(),
                    cwd: repo.join("docs"),
                    _worktrees: None,
                }
            }
            Start::Worktree => {
                install_checkpoint_for_user(session, repo);
                let (worktrees, side) = checkpoint_testkit::linked_worktree(repo, "side");
                Place {
                    root: side.clone(),
                    cwd: side,
                    _worktrees: Some(worktrees),
                }
            }
            Start::Plugin => {
                add_plugin(session, true);
                trust_project(session, repo);
                Place {
                    root: repo.to_owned(),
                    cwd: repo.to_owned(),
                    _worktrees: None,
                }
            }
        }
    }
}

/// Plays `story` with `agent` started at the repository's root, and checks every model turn, the
/// exit status and the repository.
fn play(agent: Agent, story: Story) {
    play_from(agent, story, Start::Root);
}

/// Plays `story` with `agent` started at `start`, and checks it as [`play`] does.
fn play_from(agent: Agent, story: Story, start: Start) {
    let Some(mut session) = Session::new(agent) else {
        return;
    };
    let repo = checkpoint_testkit::repo("python-passing");
    let place = start.prepare(&mut session, repo.path());
    let mut scenario = Scenario::new(story.steps());
    scenario.root = Some(place.root.clone());
    let result = session.run(&place.cwd, PROMPT, scenario);
    result.report_timing(&format!("{story:?} from {start:?}"));

    let summary = result.summary();
    assert!(result.status.success(), "{summary}");
    for request in &result.requests {
        assert_ne!(request["api"], "unknown", "unrouted request: {request}");
    }
    let blocks = story.blocks();
    let turns = result.turns();
    assert_eq!(
        turns.len(),
        blocks.len() + 1,
        "one turn, plus one per block\n{summary}"
    );
    let carried: Vec<Vec<String>> = turns.iter().map(|t| stop_feedback(agent, t)).collect();
    assert_eq!(
        carried.iter().filter(|f| !f.is_empty()).count(),
        blocks.len(),
        "requests carrying a block message\n{summary}"
    );
    assert!(
        carried[0].is_empty(),
        "the first turn follows the prompt\n{summary}"
    );
    for ((turn, feedback), expected) in turns[1..].iter().zip(&carried[1..]).zip(&blocks) {
        let [message] = feedback.as_slice() else {
            panic!("expected exactly one block message, got {feedback:#?}\n{summary}");
        };
        for text in *expected {
            assert!(
                message.contains(text),
                "the block message lacks {text:?}:\n{message}\n{summary}"
            );
        }
        assert_wrapped(agent, &last_user_texts(agent, turn), message, &summary);
    }
    assert_repo(&place.root, story.final_repo(), &result);
}

/// Plays `scenario` with `session` started at `root` (where the scenario's edits happen), checks
/// that the CLI exited 0, and returns the run, its summary and the block message each model turn
/// carried (`label` names the run in the timing report).
fn run_at(
    session: &mut Session,
    root: &Path,
    mut scenario: Scenario,
    label: &str,
) -> (RunResult, String, Vec<Vec<String>>) {
    scenario.root = Some(root.to_owned());
    let result = session.run(root, PROMPT, scenario);
    result.report_timing(label);
    let summary = result.summary();
    assert!(result.status.success(), "{summary}");
    let carried = (result.turns().iter())
        .map(|turn| stop_feedback(session.agent(), turn))
        .collect();
    (result, summary, carried)
}

/// The block message reached the model in `agent`'s wrapper: Claude `Stop hook feedback:\n` + M,
/// Gemini a user turn that is exactly M, Codex `<hook_prompt hook_run_id="stop:…">` + M
/// HTML-escaped + `</hook_prompt>`, Copilot a user prompt
/// `<current_datetime>…</current_datetime>\n\n` + M, OpenCode a user message that is exactly M
/// (the plugin sends it back to the session), Qwen a user message whose first text is exactly M,
/// Droid a user message that is exactly M.
fn assert_wrapped(agent: Agent, texts: &[String], message: &str, summary: &str) {
    let wrapped = match agent {
        Agent::Claude => format!("Stop hook feedback:\n{message}"),
        Agent::Gemini | Agent::OpenCode | Agent::Qwen | Agent::Droid => message.to_owned(),
        Agent::Codex => format!(">{}</hook_prompt>", html_escape(message)),
        Agent::Copilot => format!("</current_datetime>\n\n{message}"),
    };
    let found = texts.iter().any(|t| match agent {
        Agent::Claude | Agent::Gemini | Agent::OpenCode | Agent::Qwen | Agent::Droid => {
            t.trim_end() == wrapped
        }
        Agent::Copilot => t.starts_with("<current_datetime>") && t.trim_end().ends_with(&wrapped),
        Agent::Codex => t.starts_with("<hook_prompt hook_run_id=\"stop:") && t.ends_with(&wrapped),
    });
    assert!(
        found,
        "{agent}: no user text carries the block message in the {agent} wrapper: {texts:#?}\n{summary}"
    );
}

/// The escaping Codex applies inside `<hook_prompt>`.
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The repository ended as the story says: `git status --porcelain` and HEAD's subject.
fn assert_repo(repo: &Path, (status, subject): (&str, &str), result: &RunResult) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo)
            .envs(checkpoint_testkit::git_env())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        git(&["status", "--porcelain"]),
        status,
        "{}",
        result.summary()
    );
    assert_eq!(
        git(&["log", "-1", "--format=%s"]).trim_end(),
        subject,
        "{}",
        result.summary()
    );
    // No bytecode that could outlive a same-size edit (protocols.md §4.6): the CLIs get
    // PYTHONDONTWRITEBYTECODE=1 from the harness, and the gate's runner sets it for the tests.
    assert!(
        !repo.join("__pycache__").exists(),
        "the gate's test runs left bytecode behind\n{}",
        result.summary()
    );
}

/// One module per story, one test per agent: `broken_test::claude`, …
macro_rules! stories {
    ($($module:ident => $story:ident),* $(,)?) => {$(
        mod $module {
            use super::{Agent, Story, play};

            #[test]
            fn claude() {
                play(Agent::Claude, Story::$story);
            }

            #[test]
            fn gemini() {
                play(Agent::Gemini, Story::$story);
            }

            #[test]
            fn codex() {
                play(Agent::Codex, Story::$story);
            }

            #[test]
            fn copilot() {
                play(Agent::Copilot, Story::$story);
            }

            #[test]
            fn opencode() {
                play(Agent::OpenCode, Story::$story);
            }

            #[test]
            fn qwen() {
                play(Agent::Qwen, Story::$story);
            }

            #[test]
            fn droid() {
                play(Agent::Droid, Story::$story);
            }
        }
    )*};
}

stories! {
    broken_test => BrokenTest,
    uncommitted_code => UncommittedCode,
    never_fixes => NeverFixes,
    docs_only => DocsOnly,
    return_before_assert => ReturnBeforeAssert,
    mocked_code => MockedCode,
    weakened_assertion => WeakenedAssertion,
    committed_weakening => CommittedWeakening,
    committed_work => CommittedWork,
    committed_never_fixes => CommittedNeverFixes,
}

/// The broken-test story with the agent started somewhere other than the repository's root:
/// `<start>::<agent>`. The block is exactly the one at the root.
macro_rules! starts {
    ($($module:ident => $start:ident),* $(,)?) => {$(
        mod $module {
            use super::{Agent, Start, Story, play_from};

            #[test]
            fn claude() {
                play_from(Agent::Claude, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn gemini() {
                play_from(Agent::Gemini, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn codex() {
                play_from(Agent::Codex, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn copilot() {
                play_from(Agent::Copilot, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn opencode() {
                play_from(Agent::OpenCode, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn qwen() {
                play_from(Agent::Qwen, Story::BrokenTest, Start::$start);
            }

            #[test]
            fn droid() {
                play_from(Agent::Droid, Story::BrokenTest, Start::$start);
            }
        }
    )*};
}

starts! {
    broken_test_from_a_subdirectory => Subdirectory,
    broken_test_from_a_worktree => Worktree,
}

/// checkpoint's plugins from this repository gate as `checkpoint install <agent>` does: the
/// Claude Code plugin added from the repository as a marketplace, the Gemini CLI extension
/// linked, our adapters on `PATH`, no hooks installed (`broken_test_from_the_plugin::<agent>`:
/// the broken-test story, with the root's expectations exactly). Without the adapters on `PATH`
/// the plugin blocks nothing and tells the user how to install them
/// (`plugin_without_adapters::<agent>`).
mod plugin {
    use checkpoint_e2e::scenario::Scenario;
    use checkpoint_e2e::{Agent, Session, add_plugin};

    use super::{Start, Story, play_from, run_at};

    mod broken_test_from_the_plugin {
        use super::{Agent, Start, Story, play_from};

        #[test]
        fn claude() {
            play_from(Agent::Claude, Story::BrokenTest, Start::Plugin);
        }

        #[test]
        fn copilot() {
            play_from(Agent::Copilot, Story::BrokenTest, Start::Plugin);
        }

        #[test]
        fn gemini() {
            play_from(Agent::Gemini, Story::BrokenTest, Start::Plugin);
        }

        #[test]
        fn opencode() {
            play_from(Agent::OpenCode, Story::BrokenTest, Start::Plugin);
        }
    }

    /// The plugin added with no adapter on `PATH`; the model breaks `add` and stops: the stop
    /// is allowed (a missing binary never blocks the agent), the model hears nothing of it, and
    /// the user is told how to install the adapters, on stderr as the CLI shows a hook's
    /// non-blocking error: Claude Code `<Event> hook [<command>] failed: <line>` (`claude -p`
    /// prints it for `SessionEnd`; the TUI shows it for each event), Gemini CLI
    /// `Warning: <line>`, Copilot CLI in the session's events as a failed hook (`copilot -p`
    /// prints nothing of it; the TUI shows it), OpenCode as a warning in its log
    /// (`~/.local/share/opencode/log/opencode.log`, `level=WARN … message="<line>"`), where the
    /// plugin logs what the adapter says on stderr.
    fn without_adapters(agent: Agent) {
        let Some(mut session) = Session::new(agent) else {
            return;
        };
        let repo = checkpoint_testkit::repo("python-passing");
        add_plugin(&mut session, false);
        let scenario = Scenario::new(Story::NeverFixes.steps());
        let label = "plugin without adapters";
        let (result, summary, carried) = run_at(&mut session, repo.path(), scenario, label);
        assert_eq!(
            carried,
            [Vec::<String>::new()],
            "one turn, no block\n{summary}"
        );
        let told = format!("checkpoint: checkpoint-{agent} is not on PATH");
        let model_heard = (result.requests.iter()).any(|r| r["body"].to_string().contains(&told));
        assert!(!model_heard, "{summary}");
        let (shown, shown_as, title) = match agent {
            Agent::Claude => (
                result.stderr.clone(),
                format!("] failed: {told}"),
                "Claude Code",
            ),
            Agent::Gemini => (
                result.stderr.clone(),
                format!("Warning: {told}"),
                "Gemini CLI",
            ),
            Agent::Copilot => (
                copilot_hook_errors(&session),
                format!("Stderr: {told}"),
                "GitHub Copilot CLI",
            ),
            Agent::OpenCode => {
                let log = session
                    .home()
                    .join(".local/share/opencode/log/opencode.log");
                let log = std::fs::read_to_string(log).unwrap_or_default();
                (log, format!("message=\"{told}"), "OpenCode")
            }
            other => panic!("{other}: no plugin"),
        };
        let line = (shown.lines())
            .find_map(|line| line.split_once(&shown_as).map(|(_, rest)| rest))
            .unwrap_or_else(|| panic!("the user was not told: no {shown_as:?}\n{summary}"))
            .trim_end_matches('"');
        assert!(line.contains("scripts/install.sh"), "{line}");
        assert!(line.ends_with(&format!("then restart {title}.")), "{line}");
    }

    /// The error messages of the failed hooks that Copilot CLI recorded in the session's events
    /// (`~/.copilot/session-state/<session>/events.jsonl`, `hook.end` with `success: false`),
    /// one line each: `Error: Hook command failed with code <n> Stderr: <the hook's stderr>`.
    fn copilot_hook_errors(session: &Session) -> String {
        let states = session.home().join(".copilot/session-state");
        let mut errors = String::new();
        for dir in std::fs::read_dir(&states).unwrap() {
            let events = std::fs::read_to_string(dir.unwrap().path().join("events.jsonl"));
            for line in events.unwrap_or_default().lines() {
                let event: serde_json::Value = serde_json::from_str(line).unwrap();
                if event["type"] == "hook.end" && event["data"]["success"] == false {
                    let message = event["data"]["error"]["message"].as_str().unwrap_or("");
                    errors.push_str(message.trim_end().replace('\n', " ").as_str());
                    errors.push('\n');
                }
            }
        }
        errors
    }

    /// The CLIs' own validators accept the plugins: `claude plugin validate --strict` (warnings
    /// are errors) on the marketplace and on the plugin, `gemini extensions validate` on the
    /// extension.
    #[test]
    fn the_clis_validate_the_plugins() {
        let root = checkpoint_e2e::repository_root();
        let checks = [
            (Agent::Claude, vec!["plugin", "validate", "--strict", "."]),
            (
                Agent::Claude,
                vec!["plugin", "validate", "--strict", "plugins/claude"],
            ),
            (
                Agent::Gemini,
                vec!["extensions", "validate", "plugins/gemini"],
            ),
        ];
        for (agent, args) in checks {
            let Some(session) = Session::new(agent) else {
                return;
            };
            let out = std::process::Command::new(session.program())
                .args(&args)
                .current_dir(&root)
                .env_clear()
                .envs(session.env())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{agent} {args:?}: {}\n--- stdout\n{}--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    mod plugin_without_adapters {
        use super::{Agent, without_adapters};

        #[test]
        fn claude() {
            without_adapters(Agent::Claude);
        }

        #[test]
        fn copilot() {
            without_adapters(Agent::Copilot);
        }

        #[test]
        fn gemini() {
            without_adapters(Agent::Gemini);
        }

        #[test]
        fn opencode() {
            without_adapters(Agent::OpenCode);
        }
    }
}

/// Claude Code's subagents (its `Agent` tool, run in the foreground) and background commands: a
/// `SubagentStop` is judged only on the tests of what the subagent changed since its
/// `SubagentStart`, and is never told to commit — the parent's `Stop` is; a `Stop` while a
/// background command runs is not judged yet — the stop after Claude Code reports its end is.
mod subagents {
    use checkpoint_e2e::scenario::{Scenario, Step};
    use checkpoint_e2e::{Agent, RunResult, Session, install_checkpoint};

    use super::{
        BROKEN_ASSERTION, CALC_BROKEN, CALC_FIXED, CALC_WITH_MUL, COMMIT_GATE, TESTS_FAILED,
        TESTS_PASSED, assert_repo, run_at,
    };

    /// Plays `steps` with Claude Code at the root of a `python-passing` repository with the hooks
    /// installed, and returns the run with the block message each turn carried.
    /// `None` when the test is not run (see [`Session::new`]).
    fn play(steps: Vec<Step>) -> Option<(tempfile::TempDir, RunResult, Vec<Vec<String>>)> {
        let mut session = Session::new(Agent::Claude)?;
        let repo = checkpoint_testkit::repo("python-passing");
        install_checkpoint(&session, repo.path());
        let scenario = Scenario::new(steps);
        let (result, _, carried) = run_at(&mut session, repo.path(), scenario, "subagent");
        Some((repo, result, carried))
    }

    #[test]
    fn a_read_only_subagent_is_not_told_to_commit_the_parents_work() {
        let Some((repo, result, carried)) = play(vec![
            Step::reply("I added mul; a reviewer will look at it.")
                .write("calc.py", CALC_WITH_MUL)
                .subagent("Review calc.py and report. Change nothing."),
            // The subagent's only turn: its stop is allowed although calc.py is uncommitted.
            Step::reply("calc.py looks right."),
            // The parent's stop: blocked by the commit gate.
            Step::reply("Reviewed."),
            Step::reply("Committed.").run("git commit -qam 'calc: mul'"),
        ]) else {
            return;
        };
        let summary = result.summary();
        assert_eq!(carried.len(), 4, "{summary}");
        assert!(
            carried[..3].iter().all(Vec::is_empty),
            "only the parent's stop is blocked\n{summary}"
        );
        let [message] = carried[3].as_slice() else {
            panic!("one block message for the parent\n{summary}");
        };
        assert!(message.contains(TESTS_PASSED), "{message}");
        assert!(message.contains(COMMIT_GATE), "{message}");
        assert_repo(repo.path(), ("", "calc: mul"), &result);
    }

    #[test]
    fn a_subagent_that_breaks_a_test_is_blocked_for_the_test_only() {
        let Some((repo, result, carried)) = play(vec![
            Step::reply("A helper will change add.").subagent("Rewrite add in calc.py."),
            Step::reply("I rewrote add.").write("calc.py", CALC_BROKEN),
            // The subagent again, with our block message: it fixes add and stops (allowed, no
            // commit demanded).
            Step::reply("Fixed add.").write("calc.py", CALC_FIXED),
            // The parent's stop: the tests pass, the work is uncommitted.
            Step::reply("The helper is done."),
            Step::reply("Committed.").run("git commit -qam fix"),
        ]) else {
            return;
        };
        let summary = result.summary();
        assert_eq!(carried.len(), 5, "{summary}");
        let [subagent_block] = carried[2].as_slice() else {
            panic!("the subagent's stop is blocked once\n{summary}");
        };
        assert!(subagent_block.contains(TESTS_FAILED), "{subagent_block}");
        assert!(
            subagent_block.contains(BROKEN_ASSERTION),
            "{subagent_block}"
        );
        assert!(!subagent_block.contains(COMMIT_GATE), "{subagent_block}");
        assert!(carried[3].is_empty(), "the fixed subagent stops\n{summary}");
        let [parent_block] = carried[4].as_slice() else {
            panic!("one block message for the parent\n{summary}");
        };
        assert!(parent_block.contains(COMMIT_GATE), "{parent_block}");
        assert_repo(repo.path(), ("", "fix"), &result);
    }

    #[test]
    fn a_stop_waits_for_background_commands_then_is_judged() {
        let Some((repo, result, carried)) = play(vec![
            Step::reply("I changed add and started a slow job.")
                .write("calc.py", CALC_BROKEN)
                .background("sleep 8"),
            // The stop while `sleep 8` runs (long enough for a loaded machine): not judged.
            Step::reply("Waiting for the job."),
            // Claude Code's turn on the job's end: this stop is judged, and blocked.
            Step::reply("The job finished."),
            Step::reply("Fixed add and committed.")
                .write("calc.py", CALC_FIXED)
                .run("git commit -qam fix"),
        ]) else {
            return;
        };
        let summary = result.summary();
        assert_eq!(carried.len(), 4, "{summary}");
        assert!(
            carried[..3].iter().all(Vec::is_empty),
            "no block while the job runs\n{summary}"
        );
        let [message] = carried[3].as_slice() else {
            panic!("one block after the job ended\n{summary}");
        };
        assert!(message.contains(TESTS_FAILED), "{message}");
        assert!(message.contains(BROKEN_ASSERTION), "{message}");
        assert_repo(repo.path(), ("", "fix"), &result);
    }
}

/// Warm results (`[tests] prewarm = true`): the agent's tool call after an edit starts the tests
/// in the background; its stop finds their outcome ("cached") and runs nothing itself.
fn warm_results(agent: Agent) {
    let Some(mut session) = Session::new(agent) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let runs = outside.path().join("runs");
    let config = format!(
        "[tests]\ncommand = \"echo run >> {} && python3 -m unittest -q\"\nprewarm = true\n",
        runs.display()
    );
    let repo = checkpoint_testkit::repo("python-passing");
    std::fs::write(repo.path().join("checkpoint.toml"), config).unwrap();
    install_checkpoint(&session, repo.path());
    // A stop (here a person's check) learns that prewarm is on.
    let check = Command::new(&checkpoint_e2e::workspace_binaries().checkpoint)
        .arg("check")
        .current_dir(repo.path())
        .env_clear()
        .envs(session.env())
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let scenario = Scenario::new([
        Step::reply("I added mul.")
            .write("calc.py", CALC_WITH_MUL)
            .shell("true"),
        // Long enough for the background run to end before the stop.
        Step::reply("Checking once more.").shell("sleep 2"),
        Step::reply("Done."),
        Step::reply("Committed.").run("git commit -qam 'calc: mul'"),
    ]);
    let (result, summary, carried) = run_at(&mut session, repo.path(), scenario, "warm results");
    let blocks: Vec<&String> = carried.iter().flatten().collect();
    let [block] = blocks.as_slice() else {
        panic!("one block, for the commit\n{summary}");
    };
    assert!(block.contains(COMMIT_GATE), "{block}");
    assert!(
        block.contains(", cached)"),
        "the stop ran the tests itself: {block}"
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "run\n",
        "{summary}"
    );
    assert_repo(repo.path(), ("", "calc: mul"), &result);
}

mod warm_results {
    use super::{Agent, warm_results};

    #[test]
    fn claude() {
        warm_results(Agent::Claude);
    }

    #[test]
    fn gemini() {
        warm_results(Agent::Gemini);
    }

    #[test]
    fn codex() {
        warm_results(Agent::Codex);
    }
}

/// The repository's own configuration names a clean copy of the project as its working tree
/// (`core.worktree`), which makes `git status` in the project list nothing: the gate still
/// judges the worktree the agent edits, and blocks for its failing test until the block cap.
mod configured_worktree {
    use checkpoint_e2e::scenario::Scenario;
    use checkpoint_e2e::{Agent, Session, install_checkpoint};

    use super::{BROKEN_ASSERTION, MAX_BLOCKS, Story, TESTS_FAILED, run_at};

    fn play(agent: Agent) {
        let Some(mut session) = Session::new(agent) else {
            return;
        };
        let repo = checkpoint_testkit::repo("python-passing");
        install_checkpoint(&session, repo.path());
        let clean = checkpoint_testkit::clean_copy(repo.path());
        let elsewhere = clean.path().to_str().unwrap();
        checkpoint_testkit::git(repo.path(), &["config", "core.worktree", elsewhere]);
        let scenario = Scenario::new(Story::NeverFixes.steps());
        let label = "configured worktree";
        let (_, summary, carried) = run_at(&mut session, repo.path(), scenario, label);
        assert_eq!(carried.len(), MAX_BLOCKS + 1, "{summary}");
        for feedback in &carried[1..] {
            let [message] = feedback.as_slice() else {
                panic!("expected one block message, got {feedback:#?}\n{summary}");
            };
            assert!(message.contains(TESTS_FAILED), "{message}\n{summary}");
            assert!(message.contains(BROKEN_ASSERTION), "{message}\n{summary}");
        }
    }

    #[test]
    fn claude() {
        play(Agent::Claude);
    }

    #[test]
    fn gemini() {
        play(Agent::Gemini);
    }

    #[test]
    fn codex() {
        play(Agent::Codex);
    }
}

/// The agent's own project configuration puts `CHECKPOINT_TESTS_COMMAND=true` into every hook's
/// environment — Claude Code through the `"env"` of the committed `.claude/settings.json`, Gemini
/// CLI through a committed `.env` (issue 31). That value is the project's, not the user's: it
/// does not choose what runs, so the broken code's real tests block up to the cap, and the user
/// is told that the value is held back.
mod project_env {
    use std::path::Path;

    use checkpoint_e2e::scenario::Scenario;
    use checkpoint_e2e::{Agent, Session, install_checkpoint};

    use super::{BROKEN_ASSERTION, MAX_BLOCKS, Story, TESTS_FAILED, run_at};

    /// What the user is told about the variable.
    const HELD_BACK: &str = "Checkpoint: the agent's project configuration sets these variables";

    /// Sets `CHECKPOINT_TESTS_COMMAND=true` in `agent`'s project configuration in `repo`, and
    /// commits it: the repository a user clones.
    fn set_in_project_config(agent: Agent, repo: &Path) {
        let file = match agent {
            Agent::Claude => {
                let path = repo.join(".claude/settings.json");
                let mut settings: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                settings["env"] = serde_json::json!({"CHECKPOINT_TESTS_COMMAND": "true"});
                std::fs::write(&path, settings.to_string()).unwrap();
                ".claude/settings.json"
            }
            Agent::Gemini => {
                std::fs::write(repo.join(".env"), "CHECKPOINT_TESTS_COMMAND=true\n").unwrap();
                ".env"
            }
            other => panic!("{other}: no project env source"),
        };
        checkpoint_testkit::git(repo, &["add", file]);
        checkpoint_testkit::git(repo, &["commit", "-qm", "agent config: env"]);
    }

    /// The files under `dir` (the session's home: the CLI's transcripts and logs) that hold
    /// `text`.
    fn files_holding(dir: &Path, text: &str) -> Vec<String> {
        let mut found = Vec::new();
        for entry in walk(dir) {
            let bytes = std::fs::read(&entry).unwrap_or_default();
            if String::from_utf8_lossy(&bytes).contains(text) {
                found.push(entry.display().to_string());
            }
        }
        found
    }

    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return files;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && !kind.is_symlink() => files.extend(walk(&path)),
                Ok(kind) if kind.is_file() => files.push(path),
                _ => {}
            }
        }
        files
    }

    fn play(agent: Agent) {
        let Some(mut session) = Session::new(agent) else {
            return;
        };
        let repo = checkpoint_testkit::repo("python-passing");
        install_checkpoint(&session, repo.path());
        set_in_project_config(agent, repo.path());
        let scenario = Scenario::new(Story::NeverFixes.steps());
        let label = "project env";
        let (result, summary, carried) = run_at(&mut session, repo.path(), scenario, label);
        assert_eq!(carried.len(), MAX_BLOCKS + 1, "{summary}");
        for feedback in &carried[1..] {
            let [message] = feedback.as_slice() else {
                panic!("expected one block message, got {feedback:#?}\n{summary}");
            };
            assert!(message.contains(TESTS_FAILED), "{message}\n{summary}");
            assert!(message.contains(BROKEN_ASSERTION), "{message}\n{summary}");
        }
        // The model never hears of it; the user does: the CLI shows and records the notice.
        let model_saw = (result.requests.iter()).any(|r| r["body"].to_string().contains(HELD_BACK));
        assert!(!model_saw, "{summary}");
        let mut told = files_holding(session.home(), "CHECKPOINT_TESTS_COMMAND (from ");
        told.retain(|file| !file.contains("mock-requests"));
        let shown = result.stdout.contains(HELD_BACK) || result.stderr.contains(HELD_BACK);
        assert!(
            shown || !told.is_empty(),
            "the user was not told\n{summary}\n--- stdout\n{}\n--- stderr\n{}",
            result.stdout,
            result.stderr
        );
    }

    #[test]
    fn claude() {
        play(Agent::Claude);
    }

    #[test]
    fn gemini() {
        play(Agent::Gemini);
    }
}

/// OpenCode under a lone `opencode run` (no server of its own): the run ends at the session's
/// first idle, and OpenCode disposes of its instance ~140 ms later, while the adapter answers
/// the idle in about a second (it runs the tests). The plugin holds the disposal until the
/// adapter has answered and stores the block in the session (without a reply: nothing runs any
/// more); the block counts once stored, and reaches the model with that session's next prompt,
/// `opencode run --session <id>` (issue 38).
mod opencode_lone_run {
    use checkpoint_e2e::scenario::{Scenario, Step};
    use checkpoint_e2e::{Agent, Session, install_checkpoint, last_user_texts, run_ok};
    use serde_json::Value;

    use super::{
        BROKEN_ASSERTION, CALC_BROKEN, CALC_FIXED, PROMPT, TESTS_FAILED, assert_repo,
        assert_wrapped,
    };

    #[test]
    fn the_block_reaches_the_model_with_the_sessions_next_prompt() {
        let Some(mut session) = Session::new(Agent::OpenCode) else {
            return;
        };
        session.lone_runs();
        let repo = checkpoint_testkit::repo("python-passing");
        let dir = repo.path();
        install_checkpoint(&session, dir);
        let mut first =
            Scenario::new([Step::reply("I changed add.").write("calc.py", CALC_BROKEN)]);
        first.root = Some(dir.to_owned());
        let result = session.run(dir, PROMPT, first);
        result.report_timing("lone run");
        let summary = result.summary();
        assert!(result.status.success(), "{summary}");
        assert_eq!(
            result.turns().len(),
            1,
            "a lone run asks the model once\n{summary}"
        );

        // The block is in the session, as a user message of its own.
        let listed = run_ok(
            &session,
            session.program(),
            &["session", "list", "--format", "json"],
            dir,
        );
        let listed: Value = serde_json::from_slice(&listed).expect("the session list is JSON");
        let id = listed[0]["id"].as_str().expect("a session id").to_owned();
        let exported = run_ok(&session, session.program(), &["export", &id], dir);
        let exported: Value = serde_json::from_slice(&exported).expect("the export is JSON");
        let user_texts: Vec<&str> = (exported["messages"].as_array().into_iter().flatten())
            .filter(|m| m["info"]["role"] == "user")
            .flat_map(|m| m["parts"].as_array().into_iter().flatten())
            .filter_map(|part| part["text"].as_str())
            .collect();
        let stored: Vec<&&str> = (user_texts.iter())
            .filter(|text| text.starts_with(TESTS_FAILED))
            .collect();
        let [block] = stored.as_slice() else {
            panic!("one block stored in the session: {user_texts:#?}\n{summary}");
        };
        assert!(block.contains(BROKEN_ASSERTION), "{block}");

        // Stored, so counted: once.
        let record = dir.join(format!(".git/checkpoint/sessions/opencode-{id}.json"));
        let record: Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        assert_eq!(record["consecutive_blocks"], 1, "{record:#}");
        assert_eq!(record.get("undelivered_block"), None, "{record:#}");

        // The session's next prompt: the model reads the block before it.
        let mut second = Scenario::new([Step::reply("Fixed add and committed.")
            .write("calc.py", CALC_FIXED)
            .run("git commit -qam fix")]);
        second.root = Some(dir.to_owned());
        let args = ["run", "--session", &id, "Continue."].map(str::to_owned);
        let result = session.run_args(dir, &args, None, second);
        result.report_timing("lone run, next prompt");
        let summary = result.summary();
        assert!(result.status.success(), "{summary}");
        let turns = result.turns();
        assert_eq!(turns.len(), 1, "fixed: the stop is allowed\n{summary}");
        let texts = last_user_texts(Agent::OpenCode, turns[0]);
        assert_wrapped(Agent::OpenCode, &texts, block, &summary);
        assert_eq!(
            texts.last().map(|t| t.trim()),
            Some("Continue."),
            "{summary}"
        );
        assert_repo(dir, ("", "fix"), &result);
    }
}

/// Claude Code's `Edit` tool weakening a test: the note about it reaches the model with the
/// tool's result, in the turn before the agent tries to stop (issue 41: a mid-turn nudge); the
/// stop then blocks on the same finding, and restoring the test ends the turn.
#[test]
fn an_edit_that_weakens_a_test_is_noted_with_the_tool_result() {
    use checkpoint_e2e::scenario::{Scenario, Step};
    use checkpoint_e2e::{Agent, Session, install_checkpoint};

    const NOTE: &str = "Checkpoint: this edit weakened the tests:";
    let Some(mut session) = Session::new(Agent::Claude) else {
        return;
    };
    let repo = checkpoint_testkit::repo("python-passing");
    install_checkpoint(&session, repo.path());
    let test_file = repo.path().canonicalize().unwrap().join("test_calc.py");
    let original = std::fs::read_to_string(&test_file).unwrap();
    let test = test_file.display().to_string();
    let scenario = Scenario::new([
        Step::reply("Let me read the test.").read(&test),
        Step::reply("test_add is flaky; skipping it.").edit(
            &test,
            "    def test_add(self):",
            "    @unittest.skip(\"flaky\")\n    def test_add(self):",
        ),
        Step::reply("Done."),
        Step::reply("Restored the test.").write("test_calc.py", original),
    ]);
    let (result, summary, carried) = run_at(&mut session, repo.path(), scenario, "nudge");
    let noted: Vec<bool> = (result.turns().iter())
        .map(|turn| turn["body"].to_string().contains(NOTE))
        .collect();
    // Turns: the prompt, after Read, after Edit (noted), after the block (the note stays in
    // the conversation from then on).
    assert_eq!(noted.len(), 4, "{summary}");
    assert_eq!(noted[..3], [false, false, true], "{summary}");
    let [block] = carried[3].as_slice() else {
        panic!("the stop after the edit is blocked once\n{summary}");
    };
    assert!(block.contains(TESTS_WEAKENED), "{block}");
    assert_repo(repo.path(), ("", "checkpoint: install hooks"), &result);
}
