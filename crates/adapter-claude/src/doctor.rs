//! What `checkpoint doctor` checks for Claude Code: captured payloads of the installed events,
//! `CLAUDE_PROJECT_DIR`, workspace trust in `.claude.json` (beside the user's config directory),
//! `disableAllHooks`, and the answer shapes of its protocol.

use checkpoint_core::doctor::{AnswerShape, Check, DoctorSpec, Here, TrustFile, check_json_answer};
use serde_json::Value;

/// Claude Code's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: PAYLOADS,
    start_dir_vars: &["CLAUDE_PROJECT_DIR"],
    trust_file: TrustFile::BesideUserDir(".claude.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// Payloads Claude Code 2.1.330 sent (`tests/payloads/claude/`), one per installed event.
const PAYLOADS: &[(&str, &str)] = &[
    ("Stop", include_str!("../payloads/Stop.json")),
    (
        "SubagentStop",
        include_str!("../payloads/SubagentStop.json"),
    ),
    (
        "SubagentStart",
        include_str!("../payloads/SubagentStart.json"),
    ),
    (
        "UserPromptSubmit",
        include_str!("../payloads/UserPromptSubmit.json"),
    ),
    ("PreToolUse", include_str!("../payloads/PreToolUse.json")),
    ("PostToolUse", include_str!("../payloads/PostToolUse.json")),
    (
        "SessionStart",
        include_str!("../payloads/SessionStart.json"),
    ),
    (
        "PreCompact",
        include_str!("../payloads/PreCompact-manual.json"),
    ),
    ("SessionEnd", include_str!("../payloads/SessionEnd.json")),
];

/// The problem when the first settings file that sets `disableAllHooks` (the project's, then the
/// user's) sets it true: `agent` (Claude Code, or Qwen Code, which took the setting over) runs no
/// hook then.
pub fn all_hooks_disabled(here: &Here<'_>, agent: &str) -> Option<Check> {
    let (file, Value::Bool(true)) = here.setting("/disableAllHooks").next()? else {
        return None;
    };
    let file = file.display();
    Some(Check::problem(
        format!("{agent} runs no hooks: `disableAllHooks` is true in {file}"),
        format!("remove `\"disableAllHooks\": true` from {file}"),
    ))
}

/// `disableAllHooks` switches every hook off; the interactive TUI runs hooks only in a workspace
/// whose trust dialog was accepted (`projects["<dir>"].hasTrustDialogAccepted` in
/// `.claude.json`), unless `CLAUDE_CODE_SANDBOXED` is set. `claude -p` runs them regardless.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    let mut checks: Vec<Check> = all_hooks_disabled(here, "Claude Code")
        .into_iter()
        .collect();
    let root = here.root();
    let trusted = (here.var)("CLAUDE_CODE_SANDBOXED").is_some()
        || here
            .trust_text
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .is_some_and(|config| {
                config["projects"][root.as_str()]["hasTrustDialogAccepted"] == Value::Bool(true)
            });
    checks.push(if trusted {
        Check::ok(format!("Claude Code trusts the workspace {root}"))
    } else {
        Check::problem(
            format!(
                "Claude Code's interactive TUI runs no hooks in {root}: the workspace is not \
                 trusted in {} (`claude -p` runs them)",
                here.trust_file.display()
            ),
            format!("cd {root} && claude  # accept the trust prompt"),
        )
    });
    checks
}

/// The keys every answer may carry.
const KEYS: &[&str] = &[
    "terminalSequence",
    "decision",
    "reason",
    "hookSpecificOutput",
];

/// Exit 0 with empty stdout, or a JSON object of Claude's output fields whose `decision` is
/// `approve` or `block` and whose `hookSpecificOutput` names the event.
fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    check_answer_of("Claude Code", event, exit_code, stdout)
}

/// Whether `agent` (Claude Code, or Factory Droid, which reads the same answers) takes a hook's
/// answer to `event`: exit 0 with empty stdout or a JSON object of Claude Code's output fields.
pub fn check_answer_of(
    agent: &str,
    event: &str,
    exit_code: i32,
    stdout: &str,
) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!("exit {exit_code} ({agent} reports a hook error)"));
    }
    if stdout.trim().is_empty() {
        return Ok(());
    }
    let shape = AnswerShape {
        keys: KEYS,
        decisions: &["approve", "block"],
        event_name_checked: true,
    };
    check_json_answer(event, stdout, &shape)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Map, json};

    use super::*;

    /// The checks with the user's settings `user` (holding the hooks) and the project's
    /// `project`.
    fn checks_with(project: Value, user: Value, trust: Option<&str>) -> Vec<Check> {
        let (Value::Object(project), Value::Object(user)) = (project, user) else {
            panic!("objects")
        };
        let (project, user): (Map<String, Value>, Map<String, Value>) = (project, user);
        let settings = [
            (Path::new("/p/.claude/settings.json"), &project),
            (Path::new("/h/settings.json"), &user),
        ];
        let here = Here {
            project_scope: None,
            project_root: Path::new("/p"),
            hooks_file: Path::new("/h/settings.json"),
            events: &["Stop"],
            settings: &settings,
            trust_file: Path::new("/h/.claude.json"),
            trust_text: trust,
            var: &|_| None,
            agent_answer: None,
        };
        runs_here(&here)
    }

    fn checks(settings: Value, trust: Option<&str>) -> Vec<Check> {
        checks_with(json!({}), settings, trust)
    }

    #[test]
    fn a_trusted_workspace_runs_the_hooks() {
        let trust = json!({"projects": {"/p": {"hasTrustDialogAccepted": true}}}).to_string();
        let found = checks(json!({}), Some(&trust));
        assert!(found.iter().all(|c| c.ok), "{found:?}");
        for trust in [
            None,
            Some(r#"{"projects": {"/q": {"hasTrustDialogAccepted": true}}}"#),
        ] {
            let found = checks(json!({}), trust);
            assert!(!found[0].ok, "{found:?}");
        }
        let found = checks(json!({"disableAllHooks": true}), Some(&trust));
        assert!(found[0].message.contains("disableAllHooks"), "{found:?}");
    }

    #[test]
    fn the_project_settings_switch_the_users_hooks_off_and_on() {
        let trust = json!({"projects": {"/p": {"hasTrustDialogAccepted": true}}}).to_string();
        let off = json!({"disableAllHooks": true});
        let found = checks_with(off.clone(), json!({}), Some(&trust));
        assert_eq!(
            found[0].message,
            "Claude Code runs no hooks: `disableAllHooks` is true in /p/.claude/settings.json"
        );
        let on = json!({"disableAllHooks": false});
        let found = checks_with(on, off, Some(&trust));
        assert!(found.iter().all(|c| c.ok), "{found:?}");
    }

    #[test]
    fn answers_are_checked() {
        assert_eq!(check_answer("Stop", 0, ""), Ok(()));
        assert_eq!(
            check_answer("Stop", 0, r#"{"decision":"block","reason":"r"}"#),
            Ok(())
        );
        assert!(check_answer("Stop", 0, "junk").is_err());
        assert!(check_answer("Stop", 1, "").is_err());
    }
}
