//! What `checkpoint install droid` writes: Claude Code's matcher groups under `"hooks"` in
//! `.factory/settings.json` (the project's, or `~/.factory/settings.json`;
//! `$FACTORY_HOME_OVERRIDE` stands in for the home directory), timeouts in seconds, and the MCP
//! server in `mcp.json` beside it.
//!
//! Droid also reads hooks from a `hooks.json` beside the settings file, and an event named there
//! is read from there only: `checkpoint doctor` reports one of ours in such a file
//! ([`crate::doctor`]).

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, McpFile, McpFormat, McpSpec,
    ProjectHooks, TimeUnit, UserDir,
};

/// The events the adapter handles, in the order they are written: those of Claude Code's list
/// whose payloads were captured from `droid exec` 0.225.2, which fires no `UserPromptSubmit`;
/// a subagent's work is judged at its parent's `Stop`.
pub const EVENTS: &[InstalledEvent] = &[
    InstalledEvent::end_of_turn("Stop"),
    InstalledEvent::quick("PreToolUse"),
    InstalledEvent::quick("PostToolUse"),
    InstalledEvent::quick("SessionStart"),
    InstalledEvent::session_end("SessionEnd"),
];

/// Factory Droid's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "Factory Droid",
    dir: ".factory",
    file: "settings.json",
    layout: HooksLayout::MatcherGroups,
    user_dir: UserDir::Home("FACTORY_HOME_OVERRIDE"),
    unit: TimeUnit::Seconds,
    handler_name: None,
    events: EVENTS,
    // A project's hooks fired with `droid exec` started in a subdirectory (0.225.2).
    project_hooks: ProjectHooks::ProjectRoot,
    skills: false,
    // What `droid mcp add` writes (0.225.2): `mcp.json` beside the settings, `"type": "stdio"`;
    // a project's servers start without asking (`droid mcp list` says `[project]`).
    mcp: Some(McpSpec {
        project: McpFile::InConfigDir("mcp.json"),
        user: McpFile::InConfigDir("mcp.json"),
        format: McpFormat::Json { typed: true },
        project_next_step: None,
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

fn next_steps(_: &InstallScope) -> String {
    "Next: nothing; `droid exec` runs hooks without asking. An event a .factory/hooks.json beside \
     the settings file names is read from there only: `checkpoint doctor` says when that hides ours."
        .to_owned()
}
