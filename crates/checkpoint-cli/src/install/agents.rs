//! An agent as `checkpoint install` sees it: its home's install table (which lives in the agent's
//! adapter crate), and the generic logic that turns it into files — finding the user's config
//! directory, spelling a handler in the agent's time unit, naming the adapter.

use std::path::{Path, PathBuf};

use checkpoint_core::agent::{InstallSpec, InstalledEvent, ProjectHooks};
use checkpoint_core::home::AgentHome;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde_json::{Map, Value};

use crate::{CliError, agents};

pub(crate) use checkpoint_core::agent::InstallScope as Scope;

/// What `checkpoint install` can install: an agent's hooks, or git's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum InstallTarget {
    /// An agent's hooks.
    Agent(AgentSpec),
    /// Git itself: post-commit and pre-push hooks that record checkpoints of the active task,
    /// chained to the repository's existing hooks.
    Git,
}

/// The name of the git target on the command line.
const GIT: &str = "git";

impl InstallTarget {
    /// The target named `name` on the command line (one of [`InstallTarget::possible_values`]).
    pub(crate) fn named(name: &str) -> Option<InstallTarget> {
        if name == GIT {
            return Some(InstallTarget::Git);
        }
        agents::named(name)
            .and_then(AgentSpec::of)
            .map(InstallTarget::Agent)
    }

    /// Parses a command-line value into a target.
    pub(crate) fn parser() -> impl TypedValueParser<Value = InstallTarget> {
        PossibleValuesParser::new(InstallTarget::possible_values()).try_map(|name: String| {
            InstallTarget::named(&name).ok_or(format!("no target named {name}"))
        })
    }

    /// The targets as command-line values: every agent with an install table, then git.
    pub(crate) fn possible_values() -> impl Iterator<Item = PossibleValue> {
        let git = PossibleValue::new(GIT).help(
            "Git itself: post-commit and pre-push hooks that record checkpoints of the active \
             task, chained to the repository's existing hooks",
        );
        agents::possible_values().chain([git])
    }

    /// The agent, or `None` for git, whose hooks [`crate::git_hooks`] installs.
    pub(crate) fn agent(self) -> Option<AgentSpec> {
        match self {
            InstallTarget::Agent(spec) => Some(spec),
            InstallTarget::Git => None,
        }
    }
}

/// One agent: its home and its install table.
#[derive(Clone, Copy)]
pub(crate) struct AgentSpec {
    /// The agent's home.
    pub(crate) home: &'static dyn AgentHome,
    /// Its install table.
    pub(crate) table: &'static InstallSpec,
}

impl std::fmt::Debug for AgentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl AgentSpec {
    /// The agent of `home`, if it is installed as hooks.
    pub(crate) fn of(home: &'static dyn AgentHome) -> Option<AgentSpec> {
        home.install().map(|table| AgentSpec { home, table })
    }

    /// The name on the command line, and the adapter's suffix.
    pub(crate) fn name(&self) -> &'static str {
        self.home.agent().name()
    }

    /// The adapter's file name, `checkpoint-<agent>`; it is also how our handlers are recognised.
    pub(crate) fn adapter(&self) -> String {
        format!("checkpoint-{}", self.name())
    }

    /// The hooks file for `scope`.
    pub(crate) fn config_path(&self, scope: &Scope) -> Result<PathBuf, CliError> {
        Ok(self.config_dir(scope)?.join(self.table.file))
    }

    /// The agent's config directory for `scope` (`<project>/.claude`, `~/.claude`, …).
    pub(crate) fn config_dir(&self, scope: &Scope) -> Result<PathBuf, CliError> {
        match scope {
            Scope::Project(root) => Ok(root.join(self.table.dir)),
            Scope::User => self.user_config_dir(),
        }
    }

    /// The variable that moves the user's config directory, when it is set (to a non-empty
    /// value), made absolute.
    pub(crate) fn user_dir_variable(&self) -> Result<Option<PathBuf>, CliError> {
        let var = self.table.user_dir.variable();
        let Some(dir) = std::env::var_os(var).filter(|dir| !dir.is_empty()) else {
            return Ok(None);
        };
        std::path::absolute(dir)
            .map(Some)
            .map_err(|e| CliError::new(format!("${var}: {e}"), "set it to a directory"))
    }

    /// The user's config directory of the agent (`~/.claude`, `$CODEX_HOME`, …), as the agent
    /// finds it from its variable and the home directory.
    pub(crate) fn user_config_dir(&self) -> Result<PathBuf, CliError> {
        let user_dir = self.table.user_dir;
        if let Some(dir) = self.user_dir_variable()? {
            let below = if user_dir.names_config_dir() {
                Path::new("")
            } else {
                Path::new(user_dir.below_variable(self.table.dir))
            };
            return Ok(dir.join(below));
        }
        std::env::home_dir()
            .filter(|home| !home.as_os_str().is_empty())
            .map(|home| home.join(&*user_dir.in_home(self.table.dir)))
            .ok_or_else(|| {
                CliError::new(
                    "cannot find the home directory",
                    format!("set HOME (or {})", user_dir.variable()),
                )
            })
    }

    /// One handler per event of the install table, each running `command`: what `checkpoint
    /// install` writes (with the adapter's absolute path) and what the agent plugins committed in
    /// this repository hold (with the adapter found on `PATH`, see `packaged`).
    pub(crate) fn handlers(&self, command: &str) -> Vec<(&'static str, Value)> {
        (self.table.events.iter())
            .map(|event| (event.name, self.handler(command, event)))
            .collect()
    }

    /// The handler for `event` that runs `command`, in the agent's spelling.
    pub(crate) fn handler(&self, command: &str, event: &InstalledEvent) -> Value {
        let mut handler = Map::new();
        handler.insert("type".to_owned(), "command".into());
        let layout = self.table.layout;
        handler.insert(layout.command_key().to_owned(), command.into());
        if let Some(name) = self.table.handler_name {
            handler.insert("name".to_owned(), name.into());
        }
        handler.insert(
            layout.timeout_key().to_owned(),
            self.table.timeout(event).into(),
        );
        Value::Object(handler)
    }

    /// What the user still has to do before the hooks run.
    pub(crate) fn next_steps(&self, scope: &Scope) -> String {
        (self.table.next_steps)(scope)
    }

    /// Where hooks installed into `scope` fire, and where they do not.
    pub(crate) fn reach(&self, scope: &Scope) -> String {
        let (title, name) = (self.table.title, self.name());
        match (scope, self.table.project_hooks) {
            (Scope::User, _) => format!(
                "Where: the hooks fire wherever {title} starts, in every repository and worktree; \
                 in a project you have not trusted (`checkpoint trust`) the gate runs none of its \
                 commands, but its commit gate applies."
            ),
            (Scope::Project(root), ProjectHooks::StartDirOnly) => format!(
                "Where: the hooks fire only when {title} starts in {} itself — not in its \
                 subdirectories, nor in another worktree ({title} reads a project's hooks only \
                 from the directory it starts in). To gate those too: `checkpoint install \
                 {name} --user`.",
                root.display()
            ),
            (Scope::Project(root), _) => format!(
                "Where: the hooks fire when {title} starts anywhere inside {}; in another worktree \
                 only once {}/{} is committed there. To gate every worktree: `checkpoint install \
                 {name} --user`.",
                root.display(),
                self.table.dir,
                self.table.file
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> AgentSpec {
        InstallTarget::named(name)
            .and_then(InstallTarget::agent)
            .unwrap()
    }

    #[test]
    fn timeouts_are_in_each_agents_unit() {
        let (claude, gemini) = (spec("claude"), spec("gemini"));
        let claude = claude.handler("/bin/checkpoint-claude", &claude.table.events[0]);
        assert_eq!(
            claude.to_string(),
            r#"{"type":"command","command":"/bin/checkpoint-claude","timeout":1800}"#
        );
        let gemini = gemini.handler("/bin/checkpoint-gemini", &gemini.table.events[1]);
        assert_eq!(
            gemini.to_string(),
            r#"{"type":"command","command":"/bin/checkpoint-gemini","name":"checkpoint","timeout":30000}"#
        );
    }

    #[test]
    fn project_files_live_under_the_root() {
        let root = Scope::Project(PathBuf::from("/p"));
        let paths: Vec<_> = ["claude", "gemini", "codex", "copilot", "opencode"]
            .into_iter()
            .map(|agent| spec(agent).config_path(&root).unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                Path::new("/p/.claude/settings.json"),
                Path::new("/p/.gemini/settings.json"),
                Path::new("/p/.codex/hooks.json"),
                Path::new("/p/.github/hooks/checkpoint.json"),
                Path::new("/p/.opencode/plugins/checkpoint.js"),
            ]
        );
    }

    #[test]
    fn git_is_a_target_but_no_agent() {
        assert!(matches!(
            InstallTarget::named("git"),
            Some(InstallTarget::Git)
        ));
        assert!(InstallTarget::named("cli").is_none());
        let names: Vec<_> = InstallTarget::possible_values()
            .map(|v| v.get_name().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "claude", "gemini", "codex", "copilot", "opencode", "qwen", "droid", "git"
            ]
        );
    }
}
