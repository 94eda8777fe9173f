//! Checkpoint's OpenCode plugin, `checkpoint.js`: the file install writes for an adapter's
//! command line, and how a file is recognised as one it wrote. The plugin's text is
//! `checkpoint.js` beside this file, with the command line and each event's timeout (from the
//! install table) filled in.

use serde_json::{Map, Value};

use crate::install::INSTALL;

/// The plugin's source, before the command line and the timeouts are filled in.
const TEMPLATE: &str = include_str!("checkpoint.js");
/// The placeholder of the command line (a JSON string) in [`TEMPLATE`].
const COMMAND: &str = "__COMMAND__";
/// The placeholder of the timeouts (a JSON object) in [`TEMPLATE`].
const TIMEOUTS: &str = "__TIMEOUTS__";
/// The line that holds the command line, up to the value.
const COMMAND_LINE: &str = "const COMMAND = ";

/// The plugin that runs `command` (the adapter's absolute path and the marker), with each
/// event's timeout in milliseconds.
pub fn render(command: &str) -> String {
    let timeouts: Map<String, Value> = INSTALL
        .events
        .iter()
        .map(|event| (event.name.to_owned(), INSTALL.timeout(event).into()))
        .collect();
    TEMPLATE
        .replacen(COMMAND, &Value::from(command).to_string(), 1)
        .replacen(TIMEOUTS, &Value::Object(timeouts).to_string(), 1)
}

/// The command line of a plugin [`render`] wrote: the file starts with the template's first line
/// and names its command in the template's `COMMAND` line. `None` for anybody else's file.
pub fn command_of(text: &str) -> Option<String> {
    let header = TEMPLATE.lines().next()?;
    if text.lines().next() != Some(header) {
        return None;
    }
    let value = text
        .lines()
        .find_map(|line| line.strip_prefix(COMMAND_LINE))?
        .strip_suffix(';')?;
    serde_json::from_str::<String>(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_read_back_from_the_plugin() {
        for command in [
            "/usr/bin/checkpoint-opencode --hook",
            "'/my dir/it'\\''s/checkpoint-opencode' --hook",
            "/a\"quote\\/checkpoint-opencode --hook",
        ] {
            let plugin = render(command);
            assert_eq!(command_of(&plugin).as_deref(), Some(command), "{plugin}");
            assert!(!plugin.contains(COMMAND) && !plugin.contains(TIMEOUTS));
        }
    }

    #[test]
    fn the_timeouts_are_the_install_tables() {
        let plugin = render("/bin/checkpoint-opencode --hook");
        let line = plugin
            .lines()
            .find(|line| line.starts_with("const TIMEOUTS = "))
            .unwrap();
        insta::assert_snapshot!(line, @r#"const TIMEOUTS = {"session.idle":1800000,"chat.message":30000,"tool.execute.after":30000,"session.start":30000,"session.compacting":30000};"#);
    }

    #[test]
    fn other_files_are_not_ours() {
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
