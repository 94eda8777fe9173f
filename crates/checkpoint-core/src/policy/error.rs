//! [`ConfigError`]: why the configuration could not be loaded, in one line that says where.

use std::io;
use std::path::PathBuf;

use super::rules::GlobError;

/// Why the configuration could not be loaded. Every message is a single line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A configuration file exists but could not be read.
    #[error("{}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        error: io::Error,
    },
    /// A configuration file is not valid TOML.
    #[error("{}:{line}: syntax error: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A key in a configuration file is unknown, missing or has a bad value.
    #[error("{}:{line}: {key}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending key or value.
        line: usize,
        /// Path of the key, like `stop.capture` or `rule[1].include`.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `CHECKPOINT_*` variable has a bad value.
    #[error("{var}: {message}")]
    Env {
        /// The variable's name.
        var: String,
        /// What is wrong with its value.
        message: String,
    },
    /// The rules' globs could not be compiled together (no single pattern is at fault).
    #[error(transparent)]
    Rules(GlobError),
}
