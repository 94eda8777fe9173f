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
        render: crate::plugin::render,
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

/// OpenCode loads the plugins it finds at its next start, without asking.
fn next_steps(_scope: &InstallScope) -> String {
    "Next: restart OpenCode; it loads the plugin at start, without asking.".to_owned()
}
