//! What `checkpoint doctor` needs to know about an agent beyond where its hooks are written
//! ([`DoctorSpec`], part of each agent's install table): captured payloads of its events, the
//! variables it sets for a hook, where it records what it trusts and how to read that, and what
//! an answer may look like in its protocol. Everything here is pure: the CLI reads the files
//! (bounded) and runs the hooks; an agent's home judges what came back.

use std::path::Path;

use serde_json::{Map, Value};

/// What `checkpoint doctor` checks for one agent.
#[derive(Debug, Clone, Copy)]
pub struct DoctorSpec {
    /// A payload the agent really sent (captured from its CLI), for each installed event: the
    /// event's name and the payload's JSON. Its `cwd` is replaced by the project's.
    pub payloads: &'static [(&'static str, &'static str)],
    /// The variables the agent sets, for a hook, to the directory it was started in.
    pub start_dir_vars: &'static [&'static str],
    /// The user's file in which the agent records which workspaces (and hooks) it trusts.
    pub trust_file: TrustFile,
    /// Whether the agent will run hooks installed here: one check per condition.
    pub runs_here: fn(&Here<'_>) -> Vec<Check>,
    /// Whether a hook's answer to `event` (its exit code and stdout) follows the agent's
    /// protocol; `Err` says what is wrong, in one line.
    pub check_answer: fn(event: &str, exit_code: i32, stdout: &str) -> Result<(), String>,
    /// What to ask the agent's own CLI about the hooks it will run here, if it can say.
    pub ask: Option<AgentQuery>,
}

/// A question `checkpoint doctor` puts to the agent's own CLI when it is on `PATH`: `program
/// args…` in the project root gets the lines of `request(project root)` on stdin (kept open
/// while it answers), and the first line of its stdout for which `answers` holds goes to
/// [`DoctorSpec::runs_here`] as [`Here::agent_answer`]. The CLI is then killed.
#[derive(Debug, Clone, Copy)]
pub struct AgentQuery {
    /// The program's name, looked up on `PATH`.
    pub program: &'static str,
    /// Its arguments.
    pub args: &'static [&'static str],
    /// The lines to write to its stdin, for the project at the given root.
    pub request: fn(&Path) -> Vec<String>,
    /// Whether a line of its stdout is the answer.
    pub answers: fn(&str) -> bool,
}

/// Where an agent keeps its trust records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustFile {
    /// This file in the user's config directory of the agent (`~/.gemini/trustedFolders.json`).
    InUserDir(&'static str),
    /// This file beside the user's config directory, as for
    /// [`McpFile::BesideUserDir`](crate::agent::McpFile::BesideUserDir) (`~/.claude.json`).
    BesideUserDir(&'static str),
}

/// What an agent's [`DoctorSpec::runs_here`] looks at: where our hooks are and what the agent's
/// files say. Paths are absolute.
pub struct Here<'a> {
    /// The project root when the hooks are installed for the project; `None` for the user's.
    pub project_scope: Option<&'a Path>,
    /// The project the agent is started in (the git toplevel).
    pub project_root: &'a Path,
    /// The hooks file holding our handlers.
    pub hooks_file: &'a Path,
    /// The events our handlers are installed for, by the agent's names.
    pub events: &'a [&'a str],
    /// Every settings file of the agent that applies here and exists, the project's first, then
    /// the user's (the hooks file is one of them, when it is a settings file): its path and
    /// content.
    pub settings: &'a [(&'a Path, &'a Map<String, Value>)],
    /// The agent's [`TrustFile`].
    pub trust_file: &'a Path,
    /// Its content, `None` when it does not exist (it was read bounded).
    pub trust_text: Option<&'a str>,
    /// The value of an environment variable, when set.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// The agent CLI's answer to [`DoctorSpec::ask`]; `None` when there is no question, the CLI
    /// is not on `PATH`, or it did not answer in time.
    pub agent_answer: Option<&'a str>,
}

impl std::fmt::Debug for Here<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Here")
            .field("project_scope", &self.project_scope)
            .field("project_root", &self.project_root)
            .field("hooks_file", &self.hooks_file)
            .field("trust_file", &self.trust_file)
            .finish_non_exhaustive()
    }
}

impl Here<'_> {
    /// The project root and its ancestors, innermost first: the keys a trust record may be
    /// under.
    pub fn project_and_ancestors(&self) -> impl Iterator<Item = &Path> {
        self.project_root.ancestors()
    }

    /// The project root as a string, for keys and messages.
    pub fn root(&self) -> String {
        self.project_root.display().to_string()
    }

    /// The value at the JSON `pointer` (`/hooksConfig/enabled`) in each settings file that has
    /// one, the project's first — the first is the one that wins where a scope overrides another
    /// — with the file it is in.
    pub fn setting<'s>(
        &'s self,
        pointer: &'s str,
    ) -> impl Iterator<Item = (&'s Path, &'s Value)> + 's {
        self.settings.iter().filter_map(move |&(path, content)| {
            let mut keys = pointer.split('/').skip(1);
            let mut value = content.get(keys.next()?)?;
            for key in keys {
                value = value.get(key)?;
            }
            Some((path, value))
        })
    }
}

/// One condition checked: whether it holds, what it says, and how to fix it when it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Whether all is well.
    pub ok: bool,
    /// One line: what was found.
    pub message: String,
    /// For a problem, one line: the command (or edit) that fixes it.
    pub fix: Option<String>,
}

impl Check {
    /// A condition that holds.
    pub fn ok(message: impl Into<String>) -> Check {
        Check {
            ok: true,
            message: message.into(),
            fix: None,
        }
    }

    /// A problem, with its fix.
    pub fn problem(message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            ok: false,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// The shape of a JSON answer an agent accepts for one event.
#[derive(Debug, Clone, Copy)]
pub struct AnswerShape {
    /// The top-level keys allowed beside [`COMMON_KEYS`].
    pub keys: &'static [&'static str],
    /// The values `decision` may take.
    pub decisions: &'static [&'static str],
    /// Whether `hookSpecificOutput.hookEventName` must name the event.
    pub event_name_checked: bool,
}

/// The top-level keys every agent's answer may carry.
pub const COMMON_KEYS: &[&str] = &["continue", "stopReason", "suppressOutput", "systemMessage"];

/// Checks a JSON `stdout` against `shape` for `event`: an object with only allowed keys, a
/// `decision` of an allowed value, and a `hookSpecificOutput` that names the event when that is
/// checked. `Err` says what is wrong, in one line.
pub fn check_json_answer(event: &str, stdout: &str, shape: &AnswerShape) -> Result<(), String> {
    let value: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("stdout is not JSON ({e}): {}", excerpt(stdout)))?;
    let Value::Object(answer) = value else {
        return Err(format!("stdout is not a JSON object: {}", excerpt(stdout)));
    };
    if let Some(key) = answer
        .keys()
        .find(|key| !COMMON_KEYS.contains(&key.as_str()) && !shape.keys.contains(&key.as_str()))
    {
        return Err(format!("`{key}` is not allowed in an answer to {event}"));
    }
    if let Some(decision) = answer.get("decision")
        && !decision
            .as_str()
            .is_some_and(|decision| shape.decisions.contains(&decision))
    {
        return Err(format!("`decision` {decision} is not allowed for {event}"));
    }
    if shape.event_name_checked
        && let Some(specific) = answer.get("hookSpecificOutput")
    {
        let named = specific.get("hookEventName").and_then(Value::as_str);
        if named != Some(event) {
            return Err(format!(
                "`hookSpecificOutput.hookEventName` is {}, not {event}",
                named.unwrap_or("missing")
            ));
        }
    }
    Ok(())
}

/// The start of `text` on one line, for a message.
fn excerpt(text: &str) -> String {
    format!("`{}`", crate::sanitize::line(text, 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: AnswerShape = AnswerShape {
        keys: &["decision", "reason", "hookSpecificOutput"],
        decisions: &["block"],
        event_name_checked: true,
    };

    #[test]
    fn answers_are_checked_against_the_shape() {
        let ok = [
            r#"{"decision":"block","reason":"r"}"#,
            "{}\n",
            r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"}}"#,
        ];
        for answer in ok {
            assert_eq!(
                check_json_answer("Stop", answer, &SHAPE),
                Ok(()),
                "{answer}"
            );
        }
        let bad = [
            ("hello", "stdout is not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"x":1}"#, "`x` is not allowed in an answer to Stop"),
            (
                r#"{"decision":"allow"}"#,
                "`decision` \"allow\" is not allowed",
            ),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}"#,
                "is PreToolUse, not Stop",
            ),
        ];
        for (answer, message) in bad {
            let err = check_json_answer("Stop", answer, &SHAPE).unwrap_err();
            assert!(err.contains(message), "{answer}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
