//! The per-agent table: where each agent keeps its hooks, which events the adapter handles and
//! how a handler is spelled. Adding an event is one line in an agent's `events`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::CliError;

/// The end of a turn runs the gate, and with it the test suite (120 s per command by default):
/// give it half an hour before the agent gives up on the hook.
const END_OF_TURN: Duration = Duration::from_secs(30 * 60);
/// Every other event only does bookkeeping.
const QUICK: Duration = Duration::from_secs(30);
/// Agents wait for `SessionEnd` hooks only briefly (Claude gives 1.5 s unless a timeout is set,
/// Codex clamps to 3 s); saving a checkpoint takes milliseconds.
const SESSION_END: Duration = Duration::from_secs(5);

/// The agent named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AgentName {
    /// Claude Code.
    Claude,
    /// Gemini CLI.
    Gemini,
    /// OpenAI Codex CLI.
    Codex,
    /// Git itself: post-commit and pre-push hooks that record checkpoints of the active task,
    /// chained to the repository's existing hooks.
    Git,
}

impl AgentName {
    /// The agent's row of the table; `None` for git, whose hooks [`crate::git_hooks`] installs.
    pub(crate) fn spec(self) -> Option<&'static AgentSpec> {
        match self {
            AgentName::Claude => Some(&CLAUDE),
            AgentName::Gemini => Some(&GEMINI),
            AgentName::Codex => Some(&CODEX),
            AgentName::Git => None,
        }
    }
}

/// Where the hooks go: the project's own config, or the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The project rooted here (the git toplevel, else the working directory).
    Project(PathBuf),
    /// The user's config directory of the agent.
    User,
}

/// The unit an agent counts hook timeouts in.
#[derive(Debug, Clone, Copy)]
enum TimeUnit {
    Seconds,
    Milliseconds,
}

/// How the user's config directory of an agent is found.
#[derive(Debug, Clone, Copy)]
enum UserDir {
    /// This variable names the config directory itself (else `~/<dir>`).
    ConfigDir(&'static str),
    /// This variable stands in for the home directory (`$VAR/<dir>`, else `~/<dir>`).
    Home(&'static str),
}

/// One event the adapter handles, and how long the agent waits for it.
#[derive(Debug)]
pub(crate) struct Event {
    /// The agent's own name for the event.
    pub(crate) name: &'static str,
    timeout: Duration,
}

/// One agent: its config file, its events and the shape of its handlers.
#[derive(Debug)]
pub(crate) struct AgentSpec {
    /// The name on the command line, and the adapter's suffix.
    pub(crate) name: &'static str,
    /// The product's name, for messages.
    pub(crate) title: &'static str,
    /// The config directory's name, in a project and in the home directory.
    dir: &'static str,
    /// The hooks file inside it.
    file: &'static str,
    user_dir: UserDir,
    unit: TimeUnit,
    /// The handler's `name` field, for agents that key trust and enablement on it.
    handler_name: Option<&'static str>,
    /// The events the adapter handles, in the order they are written.
    pub(crate) events: &'static [Event],
    /// Whether the agent loads skills from `<config dir>/skills/` (the `checkpoint-progress`
    /// skill is installed with the hooks).
    pub(crate) skills: bool,
    /// What the user still has to do before the hooks run.
    next_steps: fn(&Scope) -> String,
}

/// Claude Code and Codex share event names (Codex adopted Claude's hook protocol).
const CLAUDE_STYLE_EVENTS: &[Event] = &[
    event("Stop", END_OF_TURN),
    event("SubagentStop", END_OF_TURN),
    event("UserPromptSubmit", QUICK),
    event("PreToolUse", QUICK),
    event("PostToolUse", QUICK),
    event("SessionStart", QUICK),
    event("PreCompact", QUICK),
    event("SessionEnd", SESSION_END),
];

const CLAUDE: AgentSpec = AgentSpec {
    name: "claude",
    title: "Claude Code",
    dir: ".claude",
    file: "settings.json",
    user_dir: UserDir::ConfigDir("CLAUDE_CONFIG_DIR"),
    unit: TimeUnit::Seconds,
    handler_name: None,
    events: CLAUDE_STYLE_EVENTS,
    skills: true,
    next_steps: |_| {
        "Next: nothing for `claude -p`; the interactive TUI runs hooks only in a trusted \
         workspace (accept its trust prompt)."
            .to_owned()
    },
};

const GEMINI: AgentSpec = AgentSpec {
    name: "gemini",
    title: "Gemini CLI",
    dir: ".gemini",
    file: "settings.json",
    user_dir: UserDir::Home("GEMINI_CLI_HOME"),
    unit: TimeUnit::Milliseconds,
    handler_name: Some("checkpoint"),
    events: &[
        event("AfterAgent", END_OF_TURN),
        event("BeforeAgent", QUICK),
        event("BeforeTool", QUICK),
        event("AfterTool", QUICK),
        event("SessionStart", QUICK),
        event("PreCompress", QUICK),
        event("SessionEnd", SESSION_END),
    ],
    skills: false,
    next_steps: |_| {
        "Next: trust the folder when Gemini CLI asks (headless: GEMINI_CLI_TRUST_WORKSPACE=true); \
         hooks do not run in an untrusted folder."
            .to_owned()
    },
};

const CODEX: AgentSpec = AgentSpec {
    name: "codex",
    title: "Codex CLI",
    dir: ".codex",
    file: "hooks.json",
    user_dir: UserDir::ConfigDir("CODEX_HOME"),
    unit: TimeUnit::Seconds,
    handler_name: None,
    events: CLAUDE_STYLE_EVENTS,
    skills: false,
    next_steps: codex_next_steps,
};

const fn event(name: &'static str, timeout: Duration) -> Event {
    Event { name, timeout }
}

fn codex_next_steps(scope: &Scope) -> String {
    let review = "Next: review and trust the hooks with `/hooks` in the Codex TUI (or run \
                  `codex exec --dangerously-bypass-hook-trust`).";
    match scope {
        Scope::User => review.to_owned(),
        Scope::Project(root) => {
            let key = toml::Value::String(root.display().to_string());
            format!(
                "{review}\nProject hooks load only in a trusted project: `[projects.{key}] \
                 trust_level = \"trusted\"` in ~/.codex/config.toml."
            )
        }
    }
}

impl AgentSpec {
    /// The adapter's file name, `checkpoint-<agent>`; it is also how our handlers are recognised.
    pub(crate) fn adapter(&self) -> String {
        format!("checkpoint-{}", self.name)
    }

    /// The hooks file for `scope`.
    pub(crate) fn config_path(&self, scope: &Scope) -> Result<PathBuf, CliError> {
        Ok(self.config_dir(scope)?.join(self.file))
    }

    /// The agent's config directory for `scope` (`<project>/.claude`, `~/.claude`, …).
    pub(crate) fn config_dir(&self, scope: &Scope) -> Result<PathBuf, CliError> {
        match scope {
            Scope::Project(root) => Ok(root.join(self.dir)),
            Scope::User => self.user_config_dir(),
        }
    }

    fn user_config_dir(&self) -> Result<PathBuf, CliError> {
        let (var, below) = match self.user_dir {
            UserDir::ConfigDir(var) => (var, Path::new("")),
            UserDir::Home(var) => (var, Path::new(self.dir)),
        };
        if let Some(dir) = std::env::var_os(var).filter(|dir| !dir.is_empty()) {
            let dir = std::path::absolute(dir)
                .map_err(|e| CliError::new(format!("${var}: {e}"), "set it to a directory"))?;
            return Ok(dir.join(below));
        }
        std::env::home_dir()
            .filter(|home| !home.as_os_str().is_empty())
            .map(|home| home.join(self.dir))
            .ok_or_else(|| {
                CliError::new(
                    "cannot find the home directory",
                    format!("set HOME (or {var})"),
                )
            })
    }

    /// The handler for `event` that runs `command`, in the agent's spelling.
    pub(crate) fn handler(&self, command: &str, event: &Event) -> Value {
        let mut handler = Map::new();
        handler.insert("type".to_owned(), "command".into());
        handler.insert("command".to_owned(), command.into());
        if let Some(name) = self.handler_name {
            handler.insert("name".to_owned(), name.into());
        }
        let timeout = match self.unit {
            TimeUnit::Seconds => event.timeout.as_secs(),
            TimeUnit::Milliseconds => event.timeout.as_millis().try_into().unwrap_or(u64::MAX),
        };
        handler.insert("timeout".to_owned(), timeout.into());
        Value::Object(handler)
    }

    /// What the user still has to do before the hooks run.
    pub(crate) fn next_steps(&self, scope: &Scope) -> String {
        (self.next_steps)(scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_in_each_agents_unit() {
        let claude = CLAUDE.handler("/bin/checkpoint-claude", &CLAUDE.events[0]);
        assert_eq!(
            claude.to_string(),
            r#"{"type":"command","command":"/bin/checkpoint-claude","timeout":1800}"#
        );
        let gemini = GEMINI.handler("/bin/checkpoint-gemini", &GEMINI.events[1]);
        assert_eq!(
            gemini.to_string(),
            r#"{"type":"command","command":"/bin/checkpoint-gemini","name":"checkpoint","timeout":30000}"#
        );
    }

    #[test]
    fn project_files_live_under_the_root() {
        let root = Scope::Project(PathBuf::from("/p"));
        let paths: Vec<_> = [AgentName::Claude, AgentName::Gemini, AgentName::Codex]
            .into_iter()
            .map(|agent| agent.spec().unwrap().config_path(&root).unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                Path::new("/p/.claude/settings.json"),
                Path::new("/p/.gemini/settings.json"),
                Path::new("/p/.codex/hooks.json"),
            ]
        );
    }

    #[test]
    fn codex_names_the_project_to_trust_in_valid_toml() {
        for root in ["/p", "/p/my \"x\"", "/p/it's"] {
            let steps = CODEX.next_steps(&Scope::Project(PathBuf::from(root)));
            let snippet = steps
                .split('`')
                .find(|part| part.starts_with("[projects."))
                .unwrap_or_else(|| panic!("{steps}"))
                .replacen("] ", "]\n", 1);
            let config: toml::Table = toml::from_str(&snippet).unwrap();
            assert_eq!(
                config["projects"][root]["trust_level"].as_str(),
                Some("trusted"),
                "{snippet}"
            );
        }
        assert!(!CODEX.next_steps(&Scope::User).contains("projects"));
    }
}
