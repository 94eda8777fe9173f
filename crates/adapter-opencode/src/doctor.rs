//! What `checkpoint doctor` checks for OpenCode: captured payloads of the plugin's events, and
//! its answer shape (a JSON object of `block`, `context` and `notice` strings). OpenCode loads
//! the plugins it finds without asking, so nothing needs trusting.

use checkpoint_core::doctor::{Check, DoctorSpec, Here, TrustFile};
use serde_json::Value;

/// OpenCode's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
        (
            "session.idle",
            include_str!("../payloads/session.idle.json"),
        ),
        (
            "chat.message",
            include_str!("../payloads/chat.message.json"),
        ),
        (
            "tool.execute.after",
            include_str!("../payloads/tool.execute.after.json"),
        ),
        (
            "session.start",
            include_str!("../payloads/session.start.json"),
        ),
        (
            "session.compacting",
            include_str!("../payloads/session.compacting.json"),
        ),
    ],
    start_dir_vars: &[],
    trust_file: TrustFile::InUserDir("opencode.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// OpenCode loads every plugin in `.opencode/plugins/` of the project (from the directory it
/// starts in up to the git toplevel) and in the user's config directory, without asking.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    vec![Check::ok(format!(
        "OpenCode loads {} when it starts, without asking",
        here.hooks_file.display()
    ))]
}

/// The plugin acts on a JSON object with only `block`, `context` and `notice`, each a string;
/// anything else it ignores.
fn check_answer(_event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!("exit {exit_code} (the plugin ignores the answer)"));
    }
    let answer: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("stdout is not JSON ({e}); the plugin ignores it"))?;
    let Value::Object(answer) = answer else {
        return Err("stdout is not a JSON object; the plugin ignores it".to_owned());
    };
    match answer.iter().find(|(key, value)| {
        !["block", "context", "notice"].contains(&key.as_str()) || !value.is_string()
    }) {
        Some((key, _)) => Err(format!("`{key}` is not a string the plugin reads")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_objects_of_strings_the_plugin_reads() {
        for ok in ["{}", r#"{"block":"b"}"#, r#"{"context":"c","notice":"n"}"#] {
            assert_eq!(check_answer("session.idle", 0, ok), Ok(()), "{ok}");
        }
        assert!(check_answer("session.idle", 1, "{}").is_err());
        assert!(check_answer("session.idle", 0, "").is_err());
        assert!(check_answer("session.idle", 0, "[]").is_err());
        assert!(check_answer("session.idle", 0, r#"{"decision":"block"}"#).is_err());
        assert!(check_answer("session.idle", 0, r#"{"block":1}"#).is_err());
    }
}
