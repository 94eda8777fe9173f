//! What the core knows about an agent, as data: an identity for state files, what its hook
//! protocol can do ([`Capabilities`]), how its transcript reads ([`TranscriptFormat`]) and what
//! `checkpoint install` writes for it ([`InstallSpec`]). Each agent's home — its adapter crate
//! (`adapter-claude`, `adapter-gemini`, `adapter-codex`, `adapter-copilot`,
//! `adapter-opencode`, `adapter-qwen`, `adapter-droid`) — fills these in through [`AgentHome`](crate::home::AgentHome). The core
//! never branches on which agent it serves; it asks the home's capabilities instead.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::doctor::DoctorSpec;
use crate::turn_event::TurnEvent;

/// Who sent an event: the identity state files and messages are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Gemini CLI.
    Gemini,
    /// OpenAI Codex CLI.
    Codex,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenCode.
    OpenCode,
    /// Qwen Code.
    Qwen,
    /// Factory Droid.
    Droid,
    /// A human running `checkpoint` by hand.
    Cli,
}

impl Agent {
    /// The lowercase name used in state file names and messages.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::OpenCode => "opencode",
            Agent::Qwen => "qwen",
            Agent::Droid => "droid",
            Agent::Cli => "cli",
        }
    }
}

/// What an agent's hook protocol can and cannot do, in the terms the gate decides by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// Context returned before a tool runs reaches the model. When false, a notice from the
    /// context watch is held back and delivered with the session's next tool result.
    pub context_before_tool: bool,
    /// Context returned at a `SessionStart` after `/clear` reaches the model. When false, it is
    /// held back and delivered with the session's next prompt.
    pub context_after_clear: bool,
    /// The agent may write the reply that asked for a tool only after the pre-tool hook ran, so
    /// the context watch looks again after the tool.
    pub reply_written_after_pre_tool: bool,
    /// Automatic compaction events fire every turn; one counts only from this share of the window
    /// (percent).
    pub compaction_threshold: Option<u8>,
    /// The agent has a status line that `checkpoint statusline` records context usage from.
    pub status_line: bool,
    /// The agent's tool-result events carry the context usage in their payload
    /// ([`HookEvent::context_usage`](crate::HookEvent::context_usage)): the context watch runs
    /// there, its notice going with the tool's result.
    pub usage_in_payload: bool,
    /// A block reaches the model only when the agent's plugin sends it back to the session as
    /// the next prompt, which may not happen (OpenCode's lone `opencode run` may be gone): a
    /// block counts toward the cap once delivered (see
    /// `Counting::WhenDelivered` in the decision).
    pub block_counted_when_delivered: bool,
}

impl Capabilities {
    /// Capabilities with every flag off (the builder's starting point).
    pub const NONE: Capabilities = Capabilities {
        context_before_tool: false,
        context_after_clear: false,
        reply_written_after_pre_tool: false,
        compaction_threshold: None,
        status_line: false,
        usage_in_payload: false,
        block_counted_when_delivered: false,
    };

    /// Sets [`Capabilities::context_before_tool`].
    pub const fn context_before_tool(mut self, yes: bool) -> Self {
        self.context_before_tool = yes;
        self
    }

    /// Sets [`Capabilities::context_after_clear`].
    pub const fn context_after_clear(mut self, yes: bool) -> Self {
        self.context_after_clear = yes;
        self
    }

    /// Sets [`Capabilities::reply_written_after_pre_tool`].
    pub const fn reply_written_after_pre_tool(mut self, yes: bool) -> Self {
        self.reply_written_after_pre_tool = yes;
        self
    }

    /// Sets [`Capabilities::compaction_threshold`].
    pub const fn compaction_threshold(mut self, percent: Option<u8>) -> Self {
        self.compaction_threshold = percent;
        self
    }

    /// Sets [`Capabilities::status_line`].
    pub const fn status_line(mut self, yes: bool) -> Self {
        self.status_line = yes;
        self
    }

    /// Sets [`Capabilities::usage_in_payload`].
    pub const fn usage_in_payload(mut self, yes: bool) -> Self {
        self.usage_in_payload = yes;
        self
    }

    /// Sets [`Capabilities::block_counted_when_delivered`].
    pub const fn block_counted_when_delivered(mut self, yes: bool) -> Self {
        self.block_counted_when_delivered = yes;
        self
    }
}

/// What one transcript line says about context usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineUsage {
    /// A usage record: tokens in the context, and the window and model when the line says.
    Usage {
        /// Tokens the request put into the context window.
        used: u64,
        /// The window size, when the line states it.
        window: Option<u64>,
        /// The model, when the line names it.
        model: Option<String>,
    },
    /// A compaction boundary: the context was replaced by a summary of this many tokens.
    Compacted(Option<u64>),
}

/// How an agent writes its transcript: what the core's tail reader needs to find context usage
/// and the last reply in it.
pub trait TranscriptFormat: Sync {
    /// What `line` says about context usage, if anything. Should reject most lines cheaply
    /// (before parsing JSON): it runs on every line of the tail.
    fn line_usage(&self, line: &str) -> Option<LineUsage>;

    /// The assistant's text in `line`, if it is a reply with text.
    fn reply_text(&self, line: &str) -> Option<String>;

    /// The window, in tokens, when neither the settings nor the transcript state it.
    fn default_window(&self, model: Option<&str>) -> u64;

    /// Whether a usage record without a window takes the window of an earlier record (the
    /// agent states the window only in some records).
    fn window_from_earlier_record(&self) -> bool {
        false
    }

    /// Where the agent keeps its transcripts, for `checkpoint history`; `None` when it keeps
    /// none there.
    fn files(&self) -> Option<TranscriptFiles> {
        None
    }

    /// What `line` says about its turn (see [`TurnEvent`]), appended to `out`; a line that is
    /// not the agent's record, or says nothing of the kind, adds nothing.
    fn turn_events(&self, _line: &str, _out: &mut Vec<TurnEvent>) {}
}

/// Where an agent keeps its transcripts: a directory in its user config directory (the one
/// [`UserDir`] finds), and which files below it are the main transcripts of sessions.
#[derive(Debug, Clone, Copy)]
pub struct TranscriptFiles {
    /// The directory, relative to the user config directory (`projects`, `sessions`).
    pub dir: &'static str,
    /// How deep below it they are, at most (directories entered).
    pub depth: usize,
    /// Whether the file at this path (relative to `dir`) is a session's transcript.
    pub is_transcript: fn(&std::path::Path) -> bool,
}

/// The unit an agent counts hook timeouts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeUnit {
    /// Whole seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

/// How the user's configuration directory of an agent is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserDir {
    /// This variable names the config directory itself (else `~/<dir>`).
    ConfigDir(&'static str),
    /// This variable stands in for the home directory (`$VAR/<dir>`, else `~/<dir>`).
    Home(&'static str),
    /// The user's config directory is not named like the project's: `$VAR` (the variable names
    /// it), else `~/<dir>`.
    Named {
        /// The variable that names the user's config directory.
        var: &'static str,
        /// The user's config directory in the home directory.
        dir: &'static str,
    },
    /// The user's config directory is `<name>` in the directory `$VAR` names (an XDG base
    /// directory), else in `~/<base>`.
    Xdg {
        /// The variable that names the base directory (`XDG_CONFIG_HOME`).
        var: &'static str,
        /// The base directory in the home directory, when the variable is not set (`.config`).
        base: &'static str,
        /// The config directory's name in the base directory.
        name: &'static str,
    },
}

impl UserDir {
    /// The environment variable that moves the user's config directory.
    pub fn variable(self) -> &'static str {
        match self {
            UserDir::ConfigDir(var)
            | UserDir::Home(var)
            | UserDir::Named { var, .. }
            | UserDir::Xdg { var, .. } => var,
        }
    }

    /// Whether the variable names the config directory itself; else the config directory is
    /// [`UserDir::below_variable`] in the directory it names.
    pub fn names_config_dir(self) -> bool {
        matches!(self, UserDir::ConfigDir(_) | UserDir::Named { .. })
    }

    /// The config directory's path in the directory the variable names, when it does not name
    /// the config directory itself: the project's `dir` (the variable stands in for the home), or
    /// the XDG config directory's name.
    pub fn below_variable(self, dir: &'static str) -> &'static str {
        match self {
            UserDir::Xdg { name, .. } => name,
            _ => dir,
        }
    }

    /// The user's config directory in the home directory, when the variable is not set: the
    /// project's `dir`, unless the agent names it otherwise.
    pub fn in_home(self, dir: &'static str) -> std::borrow::Cow<'static, str> {
        match self {
            UserDir::Named { dir, .. } => dir.into(),
            UserDir::Xdg { base, name, .. } => format!("{base}/{name}").into(),
            _ => dir.into(),
        }
    }
}

/// Where `checkpoint install` writes: a project's configuration, or the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallScope {
    /// The project rooted here (the git toplevel, else the working directory).
    Project(PathBuf),
    /// The user's config directory of the agent.
    User,
}

/// Where an agent looks for a project's hooks, and so where hooks installed for a project fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectHooks {
    /// Only in the directory the agent starts in: a project's hooks fire when the agent starts at
    /// its root, not in a subdirectory or in another worktree.
    StartDirOnly,
    /// In the project root around the directory the agent starts in (the git toplevel): a
    /// project's hooks fire anywhere inside it.
    ProjectRoot,
}

/// One hook event the adapter is installed for, and how long the agent waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstalledEvent {
    /// The agent's own name for the event.
    pub name: &'static str,
    /// How long the agent waits for the hook.
    pub timeout: Duration,
}

impl InstalledEvent {
    /// An end of turn: the gate runs, and with it the test suite (120 s per command by default),
    /// so the agent waits half an hour before it gives up on the hook.
    pub const fn end_of_turn(name: &'static str) -> InstalledEvent {
        InstalledEvent {
            name,
            timeout: Duration::from_secs(30 * 60),
        }
    }

    /// An event that only does bookkeeping: 30 seconds.
    pub const fn quick(name: &'static str) -> InstalledEvent {
        InstalledEvent {
            name,
            timeout: Duration::from_secs(30),
        }
    }

    /// The end of a session: agents wait for it only briefly whatever the handler asks, and
    /// saving a checkpoint takes milliseconds, so 5 seconds.
    pub const fn session_end(name: &'static str) -> InstalledEvent {
        InstalledEvent {
            name,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Which file of an agent holds the MCP servers `checkpoint install --mcp` registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFile {
    /// The hooks file itself.
    HooksFile,
    /// This file in the agent's config directory.
    InConfigDir(&'static str),
    /// This file at the project's root.
    AtProjectRoot(&'static str),
    /// This file beside the user's config directory: in the directory the [`UserDir`] variable
    /// names when it is set, else in the directory that holds the config directory (the home).
    BesideUserDir(&'static str),
}

/// How an agent's MCP servers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFormat {
    /// A JSON object with `mcpServers: {name: {command, args}}`; `typed` adds `"type": "stdio"`.
    Json {
        /// Whether each server names its transport.
        typed: bool,
    },
    /// TOML: `[mcp_servers.<name>] command = …, args = […]`.
    Toml,
}

/// Where an agent reads its MCP servers: what `checkpoint install --mcp` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpSpec {
    /// The file for a project.
    pub project: McpFile,
    /// The file for the user.
    pub user: McpFile,
    /// How servers are spelled in it.
    pub format: McpFormat,
    /// What the user still has to do before the agent starts a server registered in a project.
    pub project_next_step: Option<&'static str>,
}

/// How an agent's hooks file lays its handlers out.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum HooksLayout {
    /// `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler, …]}, …]}}`, each handler
    /// `{"type": "command", "command": …, "timeout": …}`: Claude Code's, which other agents
    /// adopted.
    MatcherGroups,
    /// [`HooksLayout::MatcherGroups`] in a settings file the agent versions: `<key>: <version>` at
    /// its top level, which the agent adds when it is missing — rewriting the file, a committed
    /// one included — so install writes it with the first handler (Qwen Code's `"$version": 4`).
    VersionedMatcherGroups {
        /// The version's key.
        key: &'static str,
        /// The version the agent writes.
        version: u64,
    },
    /// `{"version": <version>, "hooks": {"<event>": [handler, …]}}`, each handler
    /// `{"type": "command", <command_key>: …, <timeout_key>: …}`: the handlers straight in the
    /// event's list, in a versioned file.
    Versioned {
        /// The file's `version`.
        version: u64,
        /// The handler's key for the shell command.
        command_key: &'static str,
        /// The handler's key for the timeout.
        timeout_key: &'static str,
    },
    /// No hooks file: a plugin of checkpoint's own, a whole file written from the adapter's
    /// command line, which runs the adapter at the agent's hook points (the install table's
    /// events).
    Plugin(PluginSource),
}

/// How a plugin file of checkpoint's own is written and recognised.
#[derive(Debug, Clone, Copy)]
pub struct PluginSource {
    /// The plugin's text for the adapter's command line (its absolute path and the marker).
    pub render: fn(command: &str) -> String,
    /// The command line a plugin text runs, when the text is a plugin [`PluginSource::render`]
    /// wrote (perhaps for another command, or edited since); `None` for anybody else's file.
    pub command_of: fn(text: &str) -> Option<String>,
}

impl HooksLayout {
    /// The handler's key for the shell command.
    pub fn command_key(self) -> &'static str {
        match self {
            HooksLayout::MatcherGroups
            | HooksLayout::VersionedMatcherGroups { .. }
            | HooksLayout::Plugin(_) => "command",
            HooksLayout::Versioned { command_key, .. } => command_key,
        }
    }

    /// The handler's key for the timeout.
    pub fn timeout_key(self) -> &'static str {
        match self {
            HooksLayout::MatcherGroups
            | HooksLayout::VersionedMatcherGroups { .. }
            | HooksLayout::Plugin(_) => "timeout",
            HooksLayout::Versioned { timeout_key, .. } => timeout_key,
        }
    }

    /// Whether handlers sit in matcher groups (else straight in the event's list).
    pub fn grouped(self) -> bool {
        matches!(
            self,
            HooksLayout::MatcherGroups | HooksLayout::VersionedMatcherGroups { .. }
        )
    }

    /// The file's version: its top-level key and the value install writes with the first
    /// handler.
    pub fn version(self) -> Option<(&'static str, u64)> {
        match self {
            HooksLayout::Versioned { version, .. } => Some(("version", version)),
            HooksLayout::VersionedMatcherGroups { key, version } => Some((key, version)),
            HooksLayout::MatcherGroups | HooksLayout::Plugin(_) => None,
        }
    }
}

/// Where an agent keeps its hooks and how a handler is spelled: what `checkpoint install` writes.
#[derive(Debug, Clone, Copy)]
pub struct InstallSpec {
    /// The product's name, for messages.
    pub title: &'static str,
    /// The config directory's name, in a project and in the home directory.
    pub dir: &'static str,
    /// The hooks file inside it.
    pub file: &'static str,
    /// How the hooks file lays its handlers out.
    pub layout: HooksLayout,
    /// How the user-level config directory is found.
    pub user_dir: UserDir,
    /// The unit of handler timeouts.
    pub unit: TimeUnit,
    /// The handler's `name` field, for agents that key trust and enablement on it.
    pub handler_name: Option<&'static str>,
    /// The events the adapter handles, in the order they are written.
    pub events: &'static [InstalledEvent],
    /// Where the agent reads a project's hooks.
    pub project_hooks: ProjectHooks,
    /// Whether the agent loads skills from `<config dir>/skills/`.
    pub skills: bool,
    /// Where the agent reads MCP servers; `None` when `checkpoint install --mcp` does not write
    /// its configuration.
    pub mcp: Option<McpSpec>,
    /// What the user still has to do before the hooks run, after an install into `scope`.
    pub next_steps: fn(scope: &InstallScope) -> String,
    /// What `checkpoint doctor` checks.
    pub doctor: DoctorSpec,
}

impl InstallSpec {
    /// A handler's timeout in the agent's unit.
    pub fn timeout(&self, event: &InstalledEvent) -> u64 {
        match self.unit {
            TimeUnit::Seconds => event.timeout.as_secs(),
            TimeUnit::Milliseconds => event.timeout.as_millis().try_into().unwrap_or(u64::MAX),
        }
    }
}
