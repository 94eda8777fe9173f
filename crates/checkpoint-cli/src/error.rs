//! The CLI's error: a one-line message and an optional hint, always exit status 2.

/// A command failed; shown as `error: …` plus `hint: …` on stderr.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// What went wrong, one line.
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
}

impl CliError {
    /// An error with a hint.
    pub fn new(message: impl std::fmt::Display, hint: impl Into<String>) -> CliError {
        CliError {
            message: message.to_string(),
            hint: Some(hint.into()),
        }
    }
}
