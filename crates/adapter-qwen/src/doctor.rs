//! What `checkpoint doctor` checks for Qwen Code: captured payloads of the installed events, the
//! variables it sets for a hook, `disableAllHooks`, folder trust (off unless
//! `security.folderTrust.enabled`; then `trustedFolders.json`, Gemini CLI's rules), and the answer
//! shapes of Claude Code's protocol, which it took over.

use checkpoint_core::doctor::{AnswerShape, Check, DoctorSpec, Here, TrustFile, check_json_answer};
use serde_json::Value;

/// Qwen Code's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
        ("Stop", include_str!("../payloads/Stop.json")),
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
    ],
    start_dir_vars: &[
        "QWEN_PROJECT_DIR",
        "CLAUDE_PROJECT_DIR",
        "GEMINI_PROJECT_DIR",
    ],
    trust_file: TrustFile::InUserDir("trustedFolders.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// `disableAllHooks` switches every hook off; with folder trust on, Qwen Code reads no project
/// hooks in a folder it does not trust (the user's hooks run anyway). The first settings file
/// (the project's, then the user's) that sets a value decides.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    let mut checks: Vec<Check> = adapter_claude::doctor::all_hooks_disabled(here, "Qwen Code")
        .into_iter()
        .collect();
    checks.push(folder_trust(here));
    checks
}

fn folder_trust(here: &Here<'_>) -> Check {
    let root = here.root();
    let trust_on = here
        .setting("/security/folderTrust/enabled")
        .next()
        .is_some_and(|(_, enabled)| *enabled == Value::Bool(true));
    if !trust_on {
        return Check::ok("Qwen Code's folder trust is off: hooks run in every folder");
    }
    if here.project_scope.is_none() {
        return Check::ok("Qwen Code runs the user's hooks in every folder, trusted or not");
    }
    let rules = here
        .trust_text
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    if adapter_gemini::doctor::trusted(rules.as_ref(), here.project_root) {
        return Check::ok(format!("Qwen Code trusts the folder {root}"));
    }
    Check::problem(
        format!(
            "Qwen Code reads no project hooks in {root}: folder trust is on and the folder is \
             not trusted in {}",
            here.trust_file.display()
        ),
        format!("cd {root} && qwen  # trust the folder when asked"),
    )
}

/// Exit 0 with empty stdout, or a JSON object of Claude Code's output fields, which Qwen Code
/// reads.
fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!(
            "exit {exit_code} (Qwen Code reports a hook error; exit 2 blocks)"
        ));
    }
    if stdout.trim().is_empty() {
        return Ok(());
    }
    let shape = AnswerShape {
        keys: &["decision", "reason", "hookSpecificOutput"],
        decisions: &["allow", "deny", "block", "ask"],
        event_name_checked: false,
    };
    check_json_answer(event, stdout, &shape)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Map, json};

    use super::*;

    /// The checks for hooks in the project `/p` (or the user's, `project: false`) with the
    /// user's settings `user` and the trust rules `trust`.
    fn checks(user: Value, trust: Option<&str>, project: bool) -> Vec<(bool, String)> {
        let Value::Object(user) = user else {
            panic!("an object")
        };
        let empty = Map::new();
        let settings = [
            (Path::new("/p/.qwen/settings.json"), &empty),
            (Path::new("/h/.qwen/settings.json"), &user),
        ];
        let here = Here {
            project_scope: project.then_some(Path::new("/p")),
            project_root: Path::new("/p"),
            hooks_file: Path::new("/p/.qwen/settings.json"),
            events: &["Stop"],
            settings: &settings,
            trust_file: Path::new("/h/.qwen/trustedFolders.json"),
            trust_text: trust,
            var: &|_| None,
            agent_answer: None,
        };
        runs_here(&here)
            .into_iter()
            .map(|check| (check.ok, check.message))
            .collect()
    }

    #[test]
    fn folder_trust_matters_only_when_on_and_only_for_the_projects_hooks() {
        let on = json!({"security": {"folderTrust": {"enabled": true}}});
        assert!(checks(json!({}), None, true).iter().all(|(ok, _)| *ok));
        let untrusted = checks(on.clone(), None, true);
        assert!(!untrusted[0].0, "{untrusted:?}");
        assert!(untrusted[0].1.contains("not trusted"), "{untrusted:?}");
        let rules = r#"{"/p": "TRUST_FOLDER"}"#;
        assert!(
            checks(on.clone(), Some(rules), true)
                .iter()
                .all(|(ok, _)| *ok)
        );
        assert!(checks(on, None, false).iter().all(|(ok, _)| *ok));
        let off = checks(json!({"disableAllHooks": true}), None, true);
        assert!(!off[0].0 && off[0].1.contains("disableAllHooks"), "{off:?}");
    }

    #[test]
    fn answers_are_checked() {
        assert_eq!(check_answer("Stop", 0, ""), Ok(()));
        assert_eq!(
            check_answer("Stop", 0, r#"{"decision":"block","reason":"r"}"#),
            Ok(())
        );
        assert!(check_answer("Stop", 0, "junk").is_err());
        assert!(check_answer("Stop", 2, "").is_err());
    }
}
