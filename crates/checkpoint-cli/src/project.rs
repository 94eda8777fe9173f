//! The one place the CLI finds its project: the host of this process, the current directory, the
//! repository around a directory and the project opened there. No other file calls
//! `Host::from_process`, `current_dir` or `git::discover`; the errors become [`CliError`]s with
//! their hints through `From`.

use std::path::{Path, PathBuf};

use checkpoint_engine::host::Host;
use checkpoint_engine::project::Project;

use crate::error::CliError;

/// The host of this process: its `CHECKPOINT_*` environment, user config directory and clock.
/// Loads no configuration.
pub(crate) fn host() -> Host {
    Host::from_process()
}

/// The current directory.
pub(crate) fn cwd() -> Result<PathBuf, CliError> {
    std::env::current_dir()
        .map_err(|e| CliError::new(format!("current directory: {e}"), "cd into your project"))
}

/// The project in the current directory: its git repository, else the directory itself (the
/// task journal works without git).
pub(crate) fn open() -> Result<Project, CliError> {
    Ok(host().open(&cwd()?)?)
}

/// The git project in the current directory.
pub(crate) fn open_git() -> Result<Project, CliError> {
    open_git_in(&cwd()?)
}

/// The git project around `dir`.
pub(crate) fn open_git_in(dir: &Path) -> Result<Project, CliError> {
    Ok(host().require_git_project(dir)?)
}

/// The root of the project in the current directory, loading no settings: the git toplevel,
/// else the directory itself.
pub(crate) fn root() -> Result<PathBuf, CliError> {
    root_of(&cwd()?)
}

/// The root of the project around `dir`, loading no settings: the git toplevel, else `dir`.
pub(crate) fn root_of(dir: &Path) -> Result<PathBuf, CliError> {
    Ok(host()
        .locate(dir)?
        .map_or_else(|| dir.to_owned(), |repo| repo.workdir))
}
