//! What `checkpoint install copilot` writes: a hooks file of its own, `checkpoint.json`, in
//! `.github/hooks/` (the project's) or `$COPILOT_HOME/hooks/` (`~/.copilot/hooks/` for the
//! user), version 1, each handler `{"type": "command", "bash": …, "timeoutSec": …}` straight in
//! its event's list; the MCP server in `.mcp.json` (the project's) or
//! `~/.copilot/mcp-config.json`.

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, McpFile, McpFormat, McpSpec,
    ProjectHooks, TimeUnit, UserDir,
};

/// GitHub Copilot CLI's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "GitHub Copilot CLI",
    dir: ".github",
    file: "hooks/checkpoint.json",
    layout: HooksLayout::Versioned {
        version: 1,
        command_key: "bash",
        timeout_key: "timeoutSec",
    },
    user_dir: UserDir::Named {
        var: "COPILOT_HOME",
        dir: ".copilot",
    },
    unit: TimeUnit::Seconds,
    handler_name: None,
    events: &[
        InstalledEvent::end_of_turn("agentStop"),
        InstalledEvent::quick("userPromptSubmitted"),
        InstalledEvent::quick("preToolUse"),
        InstalledEvent::quick("postToolUse"),
        InstalledEvent::quick("sessionStart"),
        InstalledEvent::quick("preCompact"),
        InstalledEvent::session_end("sessionEnd"),
    ],
    project_hooks: ProjectHooks::ProjectRoot,
    skills: false,
    mcp: Some(McpSpec {
        project: McpFile::AtProjectRoot(".mcp.json"),
        user: McpFile::InConfigDir("mcp-config.json"),
        format: McpFormat::Json { typed: true },
        project_next_step: Some(
            "Next: GitHub Copilot CLI reads the project's .mcp.json only in a trusted folder.",
        ),
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

/// Copilot loads a project's hooks only in a folder it trusts.
fn next_steps(scope: &InstallScope) -> String {
    match scope {
        InstallScope::Project(_) => "Next: trust the folder when GitHub Copilot CLI asks (or \
            start it with --trust-folder, or COPILOT_ALLOW_ALL=true); it loads a project's hooks \
            only in a trusted folder."
            .to_owned(),
        InstallScope::User => "Next: nothing — GitHub Copilot CLI runs your own hooks in every \
            folder."
            .to_owned(),
    }
}
