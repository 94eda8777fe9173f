//! What `checkpoint install opencode` writes: checkpoint's plugin ([`crate::plugin`]) as
//! `checkpoint.js` in `.opencode/plugins/` (the project's) or in `plugins/` of OpenCode's config
//! directory (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`, for the user).

use checkpoint_core::agent::{
    HooksLayout, InstallScope, InstallSpec, InstalledEvent, PluginSource, ProjectHooks, TimeUnit,
    UserDir,
};

/// OpenCode's install table.
pub static INSTALL: InstallSpec = InstallSpec {
    title: "OpenCode",
    dir: ".opencode",
    file: "plugins/checkpoint.js",
    layout: HooksLayout::Plugin(PluginSource {
        render,
        command_of: crate::plugin::command_of,
    }),
    user_dir: UserDir::Xdg {
        var: "XDG_CONFIG_HOME",
        base: ".config",
        name: "opencode",
    },
    unit: TimeUnit::Milliseconds,
    handler_name: None,
    events: &[
        InstalledEvent::end_of_turn("session.idle"),
        InstalledEvent::quick("chat.message"),
        InstalledEvent::quick("tool.execute.after"),
        InstalledEvent::quick("session.start"),
        InstalledEvent::quick("session.compacting"),
    ],
    project_hooks: ProjectHooks::ProjectRoot,
    skills: false,
    mcp: None,
    next_steps,
    doctor: crate::doctor::DOCTOR,
};

/// The plugin for `command`, with this table's timeouts.
fn render(command: &str) -> String {
    crate::plugin::render(command, &INSTALL)
}

/// OpenCode loads the plugins it finds at its next start, without asking.
fn next_steps(_scope: &InstallScope) -> String {
    "Next: restart OpenCode; it loads the plugin at start, without asking.".to_owned()
}

#[cfg(test)]
mod tests {
    use checkpoint_core::agent::HooksLayout;

    use super::*;

    /// The plugin as install writes it, and how install reads its command back.
    fn plugin() -> PluginSource {
        let HooksLayout::Plugin(source) = INSTALL.layout else {
            panic!("OpenCode's hooks are a plugin");
        };
        source
    }

    #[test]
    fn the_command_is_read_back_from_the_plugin() {
        let PluginSource { render, command_of } = plugin();
        for command in [
            "/usr/bin/checkpoint-opencode --hook",
            "'/my dir/it'\\''s/checkpoint-opencode' --hook",
            "/a\"quote\\/checkpoint-opencode --hook",
        ] {
            let plugin = render(command);
            assert_eq!(command_of(&plugin).as_deref(), Some(command), "{plugin}");
            assert!(!plugin.contains("__COMMAND__") && !plugin.contains("__TIMEOUTS__"));
        }
    }

    #[test]
    fn the_timeouts_are_the_install_tables() {
        let PluginSource { render, .. } = plugin();
        let plugin = render("/bin/checkpoint-opencode --hook");
        let line = plugin
            .lines()
            .find(|line| line.starts_with("const TIMEOUTS = "))
            .unwrap();
        insta::assert_snapshot!(line, @r#"const TIMEOUTS = {"session.idle":1800000,"chat.message":30000,"tool.execute.after":30000,"session.start":30000,"session.compacting":30000};"#);
    }

    #[test]
    fn other_files_are_not_ours() {
        let PluginSource { render, command_of } = plugin();
        let ours = render("/bin/checkpoint-opencode --hook");
        let without_header = ours.lines().skip(1).collect::<Vec<_>>().join("\n");
        for text in [
            "",
            "export const Mine = async () => ({});\n",
            &without_header,
            &ours.replace("const COMMAND = ", "const CMD = "),
        ] {
            assert_eq!(command_of(text), None, "{text}");
        }
    }
}
