//! What `checkpoint install gemini` writes: handlers named `checkpoint` in `.gemini/settings.json`
//! (the project's, or `$GEMINI_CLI_HOME/.gemini`/`~/.gemini/settings.json`), timeouts in
//! milliseconds, and the MCP server in the same file.

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, McpFile, McpFormat, McpSpec,
    ProjectHooks, TimeUnit, UserDir,
};

/// Gemini CLI's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "Gemini CLI",
    dir: ".gemini",
    file: "settings.json",
    layout: HooksLayout::MatcherGroups,
    user_dir: UserDir::Home("GEMINI_CLI_HOME"),
    unit: TimeUnit::Milliseconds,
    handler_name: Some("checkpoint"),
    events: &[
        InstalledEvent::end_of_turn("AfterAgent"),
        InstalledEvent::quick("BeforeAgent"),
        InstalledEvent::quick("BeforeTool"),
        InstalledEvent::quick("AfterTool"),
        InstalledEvent::quick("SessionStart"),
        InstalledEvent::quick("PreCompress"),
        InstalledEvent::session_end("SessionEnd"),
    ],
    project_hooks: ProjectHooks::StartDirOnly,
    skills: false,
    mcp: Some(McpSpec {
        project: McpFile::HooksFile,
        user: McpFile::HooksFile,
        format: McpFormat::Json { typed: false },
        project_next_step: Some(
            "Next: Gemini CLI reads the project's settings only in a trusted folder.",
        ),
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

fn next_steps(_: &InstallScope) -> String {
    "Next: trust the folder when Gemini CLI asks (headless: GEMINI_CLI_TRUST_WORKSPACE=true); \
     hooks do not run in an untrusted folder."
        .to_owned()
}
