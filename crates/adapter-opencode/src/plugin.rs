//! Checkpoint's OpenCode plugin, `checkpoint.js`: the file install writes for an adapter's
//! command line, and how a file is recognised as one it wrote. The plugin's text is
//! `checkpoint.js` beside this file, with the command line and each event's timeout (from the
//! install table) filled in.

use checkpoint_core::agent::InstallSpec;
use serde_json::{Map, Value};

/// The plugin's source, before the command line and the timeouts are filled in.
const TEMPLATE: &str = include_str!("checkpoint.js");
/// The placeholder of the command line (a JSON string) in [`TEMPLATE`].
const COMMAND: &str = "__COMMAND__";
/// The placeholder of the timeouts (a JSON object) in [`TEMPLATE`].
const TIMEOUTS: &str = "__TIMEOUTS__";
/// The line that holds the command line, up to the value.
const COMMAND_LINE: &str = "const COMMAND = ";

/// The plugin that runs `command` (the adapter's absolute path and the marker), with the
/// timeout of each event of `spec` (in its unit, milliseconds).
pub fn render(command: &str, spec: &InstallSpec) -> String {
    let timeouts: Map<String, Value> = spec
        .events
        .iter()
        .map(|event| (event.name.to_owned(), spec.timeout(event).into()))
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
