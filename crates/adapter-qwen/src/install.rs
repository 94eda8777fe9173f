//! What `checkpoint install qwen` writes: handlers named `checkpoint` in `.qwen/settings.json`
//! (the project's, or `$QWEN_HOME`/`~/.qwen/settings.json`) for Claude Code's events, which Qwen
//! Code took over ([`EVENTS`]), and the MCP server in the same file.
//!
//! Timeouts are written in milliseconds: Qwen Code 0.24.4 reads a command hook's `timeout` in
//! seconds, except that a value of 1000 or more is read as milliseconds (its old unit) — the
//! 30 minutes of an end of turn written as 1800 would be 1.8 seconds. Every timeout checkpoint
//! writes is 5 seconds or more, so in milliseconds each is read as meant.

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, McpFile, McpFormat, McpSpec,
    ProjectHooks, TimeUnit, UserDir,
};

/// The events the adapter handles, in the order they are written: Claude Code's list, less the
/// subagent events (no subagent payload was captured from Qwen Code; a subagent's work is judged
/// at its parent's `Stop`). A headless run ends without `SessionEnd`; the TUI sends it.
pub const EVENTS: &[InstalledEvent] = &[
    InstalledEvent::end_of_turn("Stop"),
    InstalledEvent::quick("UserPromptSubmit"),
    InstalledEvent::quick("PreToolUse"),
    InstalledEvent::quick("PostToolUse"),
    InstalledEvent::quick("SessionStart"),
    InstalledEvent::quick("PreCompact"),
    InstalledEvent::session_end("SessionEnd"),
];

/// Qwen Code's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "Qwen Code",
    dir: ".qwen",
    file: "settings.json",
    // Qwen Code 0.24.4 adds `"$version": 4` to a settings file without one, rewriting it: a
    // committed file would become uncommitted work at the first run.
    layout: HooksLayout::VersionedMatcherGroups {
        key: "$version",
        version: 4,
    },
    user_dir: UserDir::ConfigDir("QWEN_HOME"),
    unit: TimeUnit::Milliseconds,
    handler_name: Some("checkpoint"),
    events: EVENTS,
    project_hooks: ProjectHooks::StartDirOnly,
    skills: false,
    mcp: Some(McpSpec {
        project: McpFile::HooksFile,
        user: McpFile::HooksFile,
        format: McpFormat::Json { typed: false },
        project_next_step: None,
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

fn next_steps(_: &InstallScope) -> String {
    "Next: nothing, unless folder trust is on (`security.folderTrust.enabled`): then Qwen Code \
     reads a project's hooks only in a folder it trusts."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Qwen Code reads a command hook's `timeout` below 1000 as seconds and from 1000 on as
    /// milliseconds: in milliseconds, every timeout written means what it says.
    #[test]
    fn every_timeout_is_read_as_the_duration_meant() {
        for event in INSTALL.events {
            let written = INSTALL.timeout(event);
            assert!(written >= 1000, "{}: {written}", event.name);
            assert_eq!(
                u128::from(written),
                event.timeout.as_millis(),
                "{}",
                event.name
            );
        }
    }
}
