//! What `checkpoint install codex` writes: handlers in `.codex/hooks.json` (the project's, or
//! `$CODEX_HOME`/`~/.codex/hooks.json`) for Claude's event list, timeouts in seconds, and the MCP
//! server in `config.toml` beside it.

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, McpFile, McpFormat, McpSpec, ProjectHooks, TimeUnit,
    UserDir,
};

/// Codex CLI's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "Codex CLI",
    dir: ".codex",
    file: "hooks.json",
    layout: HooksLayout::MatcherGroups,
    user_dir: UserDir::ConfigDir("CODEX_HOME"),
    unit: TimeUnit::Seconds,
    handler_name: None,
    // Codex clamps a SessionEnd hook's timeout to 3 s.
    events: adapter_claude::install::EVENTS,
    project_hooks: ProjectHooks::ProjectRoot,
    skills: false,
    mcp: Some(McpSpec {
        project: McpFile::InConfigDir("config.toml"),
        user: McpFile::InConfigDir("config.toml"),
        format: McpFormat::Toml,
        project_next_step: Some(
            "Next: Codex reads the project's .codex/config.toml only in a trusted project.",
        ),
    }),
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

/// Codex runs hooks only after their review, and a project's only in a trusted project.
fn next_steps(scope: &InstallScope) -> String {
    let review = "Next: review and trust the hooks with `/hooks` in the Codex TUI (or run \
                  `codex exec --dangerously-bypass-hook-trust`).";
    match scope {
        InstallScope::Project(root) => {
            let key = toml::Value::String(root.display().to_string());
            format!(
                "{review}\nProject hooks load only in a trusted project: `[projects.{key}] \
                 trust_level = \"trusted\"` in ~/.codex/config.toml."
            )
        }
        _ => review.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn codex_names_the_project_to_trust_in_valid_toml() {
        for root in ["/p", "/p/my \"x\"", "/p/it's"] {
            let steps = (INSTALL.next_steps)(&InstallScope::Project(PathBuf::from(root)));
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
        assert!(!(INSTALL.next_steps)(&InstallScope::User).contains("projects"));
    }
}
