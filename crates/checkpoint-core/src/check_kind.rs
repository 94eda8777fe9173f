//! The kinds of checks other than the tests (see [`crate::checks`]).

use serde::{Deserialize, Serialize};

/// A check other than the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A type checker (`tsc --noEmit`, `mypy`).
    Typecheck,
    /// A linter (`eslint`, `ruff check`).
    Lint,
    /// A build.
    Build,
    /// A command of the project's own (`checks.custom`): a schema check, a generated-code diff,
    /// `make verify`. Never detected.
    Custom,
}

impl CheckKind {
    /// Every kind, in the order a stop runs them.
    pub const ALL: [CheckKind; 4] = [
        CheckKind::Typecheck,
        CheckKind::Lint,
        CheckKind::Build,
        CheckKind::Custom,
    ];

    /// Its name: `typecheck`, `lint`, `build`, `custom`.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Typecheck => "typecheck",
            CheckKind::Lint => "lint",
            CheckKind::Build => "build",
            CheckKind::Custom => "custom",
        }
    }

    /// The setting holding its command: `checks.typecheck`.
    pub fn key(self) -> &'static str {
        match self {
            CheckKind::Typecheck => "checks.typecheck",
            CheckKind::Lint => "checks.lint",
            CheckKind::Build => "checks.build",
            CheckKind::Custom => "checks.custom",
        }
    }

    /// Its kind by the setting holding its command.
    pub fn of_key(key: &str) -> Option<CheckKind> {
        CheckKind::ALL.into_iter().find(|kind| kind.key() == key)
    }
}
