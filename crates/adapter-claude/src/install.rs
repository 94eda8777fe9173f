//! What `checkpoint install claude` writes: handlers in `.claude/settings.json` (the project's, or
//! `$CLAUDE_CONFIG_DIR`/`~/.claude/settings.json`), timeouts in seconds, the `checkpoint-progress`
//! skill beside them, and the MCP server in `.mcp.json` (the user's `.claude.json`).

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, McpFile, McpFormat, McpSpec,
    ProjectHooks, TimeUnit, UserDir,
};

/// The events the adapter handles, in the order they are written. Codex adopted Claude's hook
/// protocol, and installs the same list.
pub const EVENTS: &[InstalledEvent] = &[
    InstalledEvent::end_of_turn("Stop"),
    InstalledEvent::end_of_turn("SubagentStop"),
    // What the change set holds when a subagent starts: its stop answers only for what it
    // changed.
    InstalledEvent::quick("SubagentStart"),
    InstalledEvent::quick("UserPromptSubmit"),
    InstalledEvent::quick("PreToolUse"),
    InstalledEvent::quick("PostToolUse"),
    InstalledEvent::quick("SessionStart"),
    InstalledEvent::quick("PreCompact"),
    // Claude gives a SessionEnd hook about 1.5 s unless a timeout is set.
    InstalledEvent::session_end("SessionEnd"),
];

/// Claude Code's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "Claude Code",
    dir: ".claude",
    file: "settings.json",
    layout: HooksLayout::MatcherGroups,
    user_dir: UserDir::ConfigDir("CLAUDE_CONFIG_DIR"),
    unit: TimeUnit::Seconds,
    handler_name: None,
    events: EVENTS,
    project_hooks: ProjectHooks::StartDirOnly,
    skills: true,
    mcp: Some(McpSpec {
        project: McpFile::AtProjectRoot(".mcp.json"),
        user: McpFile::BesideUserDir(".claude.json"),
        format: McpFormat::Json { typed: true },
        project_next_step: Some(
            "Next: Claude Code asks once before it starts a server from the project's .mcp.json; \
             approve `checkpoint` (`claude mcp list` shows it).",
        ),
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

fn next_steps(_: &InstallScope) -> String {
    "Next: nothing for `claude -p`; the interactive TUI runs hooks only in a trusted \
     workspace (accept its trust prompt)."
        .to_owned()
}
