//! The result of one test command, as the decision and the messages see it. Running the command is
//! [`crate::runner`]'s job.

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
    /// Could not be started or was not found (shell exit 126/127); says nothing about the code.
    Error,
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
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
    /// Names of failing tests found in the output, in order, deduplicated.
    pub failing: Vec<String>,
    /// The useful end of the output: bounded (see [`crate::tail`]).
    pub tail: String,
    /// One line for [`TestStatus::Error`]: what could not be done.
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
    /// The shell command.
    pub command: String,
    /// Names of the rules whose changed files asked for it.
    pub rules: Vec<String>,
    /// How it went.
    pub outcome: TestOutcome,
}
