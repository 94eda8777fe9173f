//! The result of one test command, as the decision and the messages see it. Running the command is
//! the engine's (`checkpoint-engine`'s `runner` module).

use serde::{Deserialize, Serialize};

/// How a test command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    /// Exit code 0.
    Passed,
    /// A non-zero exit code.
    Failed,
    /// Killed (with its whole process group) when the timeout ran out.
    TimedOut,
    /// The command could not run: it was not found or not executable (the shell's 127/126), its
    /// process could not be started, or a signal killed it before it reported anything. Says
    /// nothing about the code, and nothing was checked: the stop is blocked until the tests run.
    Error,
    /// The gate itself failed around the command (a pipe, its watchdog, waiting on it): says
    /// nothing about the code or the command. The gate's own failure lets the stop through.
    Internal,
    /// Skipped, e.g. because the consecutive-block cap was already reached.
    NotRun,
}

/// The outcome of one test command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// How it ended.
    pub status: TestStatus,
    /// The exit code, when the process exited by itself.
    pub exit_code: Option<i32>,
    /// Tests reported passed, when the output says.
    pub passed: Option<u32>,
    /// Tests reported failed, when the output says.
    pub failed: Option<u32>,
    /// Tests reported skipped, when the output says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u32>,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
    /// Names of failing tests found in the output, in order, deduplicated.
    pub failing: Vec<String>,
    /// The useful end of the output: bounded (see [`crate::tail`]).
    pub tail: String,
    /// One line for [`TestStatus::Error`] and [`TestStatus::Internal`]: what could not be done.
    pub error: Option<String>,
    /// True when this outcome was reused from an earlier run with the same fingerprint.
    pub cached: bool,
}

impl TestOutcome {
    /// An outcome for a command that was not run.
    pub fn not_run() -> TestOutcome {
        TestOutcome {
            status: TestStatus::NotRun,
            exit_code: None,
            passed: None,
            failed: None,
            skipped: None,
            duration_ms: 0,
            failing: Vec::new(),
            tail: String::new(),
            error: None,
            cached: false,
        }
    }
}

/// One test command the gate ran (or reused) for a stop, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// The shell command, as configured (or detected).
    pub command: String,
    /// Names of the rules whose changed files asked for it.
    pub rules: Vec<String>,
    /// How it went.
    pub outcome: TestOutcome,
    /// When only the tests the changes can affect ran: what ran instead of [`TestRun::command`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// When the affected tests were asked for and the whole command ran for want of evidence
    /// of what the changed files can affect: why, in one line (`` `tests/test_b.py` imports
    /// modules by name ``).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_because: Option<String>,
    /// The check it is, when it is not the tests (`[checks]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::check_kind::CheckKind>,
}

impl TestRun {
    /// The whole command as planned (no selection) and how it went.
    pub fn new(command: String, rules: Vec<String>, outcome: TestOutcome) -> TestRun {
        TestRun {
            command,
            rules,
            outcome,
            selection: None,
            whole_because: None,
            check: None,
        }
    }

    /// The command that really ran: the selection's, else the configured one.
    pub fn command_run(&self) -> &str {
        self.selection
            .as_ref()
            .map_or(self.command.as_str(), |s| s.command.as_str())
    }
}

/// A test command narrowed to the tests a change set can affect (`[tests] select =
/// "affected"`): the configured command with the affected packages or test modules named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The command that ran in place of the configured one.
    pub command: String,
    /// What was counted.
    pub unit: SelectionUnit,
    /// How many of them ran.
    pub selected: usize,
    /// How many the configured command runs.
    pub total: usize,
    /// How many changed files they were selected for.
    pub changed_files: usize,
}

/// What a [`Selection`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionUnit {
    /// Packages of a Cargo workspace.
    Packages,
    /// Python test modules.
    TestModules,
    /// JS/TS test files.
    TestFiles,
}

impl SelectionUnit {
    /// The unit's name, for "2 of 14 packages".
    pub fn name(self) -> &'static str {
        match self {
            SelectionUnit::Packages => "packages",
            SelectionUnit::TestModules => "test modules",
            SelectionUnit::TestFiles => "test files",
        }
    }
}
