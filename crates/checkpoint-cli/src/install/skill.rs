//! The `checkpoint-progress` skill: installed with the hooks for agents that load skills, so the
//! agent can log a milestone by invoking it (the `PostToolUse` hook records the argument).

use std::fs;
use std::path::PathBuf;

use checkpoint_engine::gate::PROGRESS_SKILL;
use checkpoint_engine::store;

use crate::CliError;

use super::agents::{AgentSpec, Scope};
use super::config_file::ConfigFile;
use super::ledger::Ledger;

/// The skill file as installed. Its first lines identify it as ours on uninstall.
pub(super) const SKILL_MD: &str = "---
name: checkpoint-progress
description: Log a finished milestone so that a later session (after /clear, compaction, a crash or a context limit) knows it is done and does not redo it. Invoke it after each meaningful piece of work, with a one-line description of what is done as the argument.
---

The checkpoint hook has recorded the argument of this call as a progress entry; it will be listed
under \"Progress logged before reset\" when a new session resumes.

If you invoked this without an argument, nothing was recorded: run
`checkpoint progress \"<what is done>\"` in the shell instead.
";

/// Where the skill lives for `spec` in `scope`, if the agent loads skills.
fn path(spec: &AgentSpec, scope: &Scope) -> Result<Option<PathBuf>, CliError> {
    if !spec.table.skills {
        return Ok(None);
    }
    let dir = spec.config_dir(scope)?.join("skills").join(PROGRESS_SKILL);
    Ok(Some(dir.join("SKILL.md")))
}

/// What [`install`] would write, as a unified diff (`--dry-run`); `None` when it would write
/// nothing.
pub(crate) fn preview(spec: &AgentSpec, scope: &Scope) -> Result<Option<String>, CliError> {
    let Some(path) = path(spec, scope)? else {
        return Ok(None);
    };
    let file = ConfigFile::read(path)?;
    Ok((file.text.as_deref() != Some(SKILL_MD)).then(|| file.diff(SKILL_MD)))
}

/// Writes the skill unless it is already there as written (recording it in `ledger`); returns
/// the path when it wrote.
pub(crate) fn install(
    spec: &AgentSpec,
    scope: &Scope,
    ledger: &Ledger,
) -> Result<Option<PathBuf>, CliError> {
    let Some(path) = path(spec, scope)? else {
        return Ok(None);
    };
    let before = fs::read_to_string(&path).ok();
    if before.as_deref() != Some(SKILL_MD) {
        ledger.make_dirs(&path)?;
        store::write_atomic_sweeping(&path, SKILL_MD.as_bytes()).map_err(|e| {
            CliError::new(e, "check the permissions of the agent's config directory")
        })?;
    }
    ledger.wrote(&path, SKILL_MD.as_bytes(), before.is_none())?;
    Ok((before.as_deref() != Some(SKILL_MD)).then_some(path))
}

/// Removes the skill if it is ours (a file someone changed is kept), and the directories this
/// leaves empty in the project; returns the path when it removed it.
pub(crate) fn uninstall(
    spec: &AgentSpec,
    scope: &Scope,
    ledger: &Ledger,
) -> Result<Option<PathBuf>, CliError> {
    let Some(path) = path(spec, scope)? else {
        return Ok(None);
    };
    if !fs::read_to_string(&path).is_ok_and(|text| text == SKILL_MD) {
        return Ok(None);
    }
    ledger.remove(&path)?;
    // The directory was made for the skill; leave it if anything else is in it.
    let _ = path.parent().map(fs::remove_dir);
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::agents::InstallTarget;
    use crate::install::ledger::Mode;

    #[test]
    fn installs_once_and_removes_only_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::Project(dir.path().to_owned());
        let ledger = Ledger::in_dir(&dir.path().join("state"), Mode::Install);
        let spec = |name| InstallTarget::named(name).and_then(InstallTarget::agent);
        let claude = &spec("claude").unwrap();
        let path = install(claude, &scope, &ledger).unwrap().unwrap();
        assert!(path.ends_with(".claude/skills/checkpoint-progress/SKILL.md"));
        assert_eq!(fs::read_to_string(&path).unwrap(), SKILL_MD);
        assert_eq!(
            install(claude, &scope, &ledger).unwrap(),
            None,
            "already there"
        );
        assert_eq!(
            uninstall(claude, &scope, &ledger).unwrap(),
            Some(path.clone())
        );
        assert!(!path.exists());

        install(claude, &scope, &ledger).unwrap();
        fs::write(&path, "my own edits").unwrap();
        assert_eq!(uninstall(claude, &scope, &ledger).unwrap(), None);
        assert!(path.exists(), "a changed file is the user's");

        let gemini = &spec("gemini").unwrap();
        assert_eq!(
            install(gemini, &scope, &ledger).unwrap(),
            None,
            "no skills for gemini"
        );
    }
}
