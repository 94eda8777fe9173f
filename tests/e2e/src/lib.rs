//! End-to-end harness: drives the real agent CLIs (Claude Code, Gemini CLI, Codex CLI, GitHub
//! Copilot CLI, OpenCode, Qwen Code) offline
//! against a scripted model server on 127.0.0.1, so tests can watch what an end-of-turn hook's
//! verdict does to the next model request.
//!
//! ```no_run
//! use checkpoint_e2e::{Agent, run_agent, stop_feedback, write_hooks};
//! use checkpoint_e2e::scenario::{Scenario, Step};
//!
//! let repo = checkpoint_testkit::repo("python-passing");
//! write_hooks(Agent::Codex, repo.path(), "/abs/path/to/stop-hook", &[]);
//! let Some(result) = run_agent(
//!     Agent::Codex,
//!     repo.path(),
//!     "Fix the tests.",
//!     Scenario::new([Step::reply("Done."), Step::reply("Really done.")]),
//! ) else {
//!     return; // the CLIs could not be installed: the test said it is not run
//! };
//! assert!(result.status.success(), "{}", result.summary());
//! let turns = result.turns();
//! assert_eq!(stop_feedback(Agent::Codex, turns[1]), ["the hook's reason"]);
//! ```
//!
//! - [`clis`] installs the pinned CLIs once (`install-clis.sh`, npm registry only); a test whose
//!   CLIs cannot be installed is not run, and says so (it fails in CI).
//! - [`Session`] is one agent with an isolated `HOME` and its own [`mock::MockServer`];
//!   [`run_agent`] is the one-shot form.
//! - [`write_hooks`] writes the project hook config, unless something else (such as
//!   `checkpoint install <agent>`) already did.
//! - [`last_user_texts`] and [`stop_feedback`] read what each CLI sent to the model;
//!   [`conversation_texts`] gives every text of a request with where it sits (hook context).
//! - [`workspace_binaries`] builds `checkpoint` and the adapters from this workspace;
//!   [`install_checkpoint`] installs their hooks with `checkpoint install <agent>`, and
//!   [`checkpoint_project`] sets up a fixture repository with extra config and those hooks;
//!   [`add_plugin`] adds checkpoint's Claude Code plugin or Gemini CLI extension from this
//!   repository instead, and [`trust_project`] approves a repository's commands.

mod clis;
mod hooks;
pub mod mock;
pub mod scenario;
mod server;
mod session;
mod wire;
mod workspace;

pub use clis::{Clis, clis};
pub use hooks::write_hooks;
pub use session::{RunResult, Session, TmuxRun, run_agent};
pub use wire::{ConversationText, Place, conversation_texts, last_user_texts, stop_feedback};
pub use workspace::{
    Binaries, HOOKS_COMMIT, add_plugin, checkpoint_project, install_checkpoint,
    install_checkpoint_for_user, repository_root, run_ok, shell_quote, trust_project,
    workspace_binaries,
};

/// One of the agent CLIs the harness drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code (`claude -p`).
    Claude,
    /// Gemini CLI (`gemini -p`).
    Gemini,
    /// Codex CLI (`codex exec`).
    Codex,
    /// GitHub Copilot CLI (`copilot -p`).
    Copilot,
    /// OpenCode (`opencode serve` and `opencode run --attach`).
    OpenCode,
    /// Qwen Code (`qwen PROMPT`).
    Qwen,
    /// Factory Droid (`droid exec PROMPT`).
    Droid,
}

impl Agent {
    /// All of them, in a fixed order.
    pub const ALL: [Agent; 7] = [
        Agent::Claude,
        Agent::Gemini,
        Agent::Codex,
        Agent::Copilot,
        Agent::OpenCode,
        Agent::Qwen,
        Agent::Droid,
    ];

    /// The lowercase name: `claude`, `gemini`, `codex`.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::OpenCode => "opencode",
            Agent::Qwen => "qwen",
            Agent::Droid => "droid",
        }
    }

    /// The hook event that fires when the agent tries to end its turn.
    pub fn end_of_turn_event(self) -> &'static str {
        match self {
            Agent::Claude | Agent::Codex | Agent::Qwen | Agent::Droid => "Stop",
            Agent::Gemini => "AfterAgent",
            Agent::Copilot => "agentStop",
            Agent::OpenCode => "session.idle",
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
