//! What `checkpoint doctor` checks for Gemini CLI: captured payloads of the installed events, the
//! variables it sets for a hook, `hooksConfig` in its settings files, folder trust
//! (`trustedFolders.json`, `security.folderTrust.enabled`, `GEMINI_CLI_TRUST_WORKSPACE`), and
//! its answer shape (always a JSON object; `{}` is the no-op).

use std::path::Path;

use checkpoint_core::doctor::{AnswerShape, Check, DoctorSpec, Here, TrustFile, check_json_answer};
use serde_json::Value;

/// Gemini CLI's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
        ("AfterAgent", include_str!("../payloads/AfterAgent.json")),
        ("BeforeAgent", include_str!("../payloads/BeforeAgent.json")),
        ("BeforeTool", include_str!("../payloads/BeforeTool.json")),
        ("AfterTool", include_str!("../payloads/AfterTool.json")),
        (
            "SessionStart",
            include_str!("../payloads/SessionStart.json"),
        ),
        ("PreCompress", include_str!("../payloads/PreCompress.json")),
        ("SessionEnd", include_str!("../payloads/SessionEnd.json")),
    ],
    start_dir_vars: &["GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR"],
    trust_file: TrustFile::InUserDir("trustedFolders.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// The handler name `checkpoint install gemini` writes (`hooksConfig.disabled` may list it).
const NAME: &str = "checkpoint";

/// `hooksConfig.enabled: false` or our name in `hooksConfig.disabled` switch our hooks off; with
/// folder trust on (the default), Gemini runs no hooks in a folder it does not trust.
/// Settings are looked up in the project's `.gemini/settings.json`, then the user's: the first
/// that sets a value decides, and a `disabled` list of either applies.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some((file, Value::Bool(false))) = here.setting("/hooksConfig/enabled").next() {
        let file = file.display();
        checks.push(Check::problem(
            format!("Gemini CLI runs no hooks: `hooksConfig.enabled` is false in {file}"),
            format!("set `hooksConfig.enabled` to true in {file}"),
        ));
    }
    for (file, names) in here.setting("/hooksConfig/disabled") {
        if names
            .as_array()
            .is_some_and(|names| names.iter().any(|name| name == NAME))
        {
            let file = file.display();
            checks.push(Check::problem(
                format!(
                    "Gemini CLI skips our hooks: `hooksConfig.disabled` lists {NAME:?} in {file}"
                ),
                format!("remove {NAME:?} from `hooksConfig.disabled` in {file}"),
            ));
        }
    }
    checks.push(folder_trust(here));
    checks
}

fn folder_trust(here: &Here<'_>) -> Check {
    let root = here.root();
    let trust_off = here
        .setting("/security/folderTrust/enabled")
        .next()
        .is_some_and(|(_, enabled)| *enabled == Value::Bool(false));
    if trust_off {
        return Check::ok("Gemini CLI's folder trust is off: hooks run in every folder");
    }
    if (here.var)("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Some("true") {
        return Check::ok(format!(
            "Gemini CLI trusts {root} (GEMINI_CLI_TRUST_WORKSPACE=true)"
        ));
    }
    let rules = here
        .trust_text
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    if trusted(rules.as_ref(), here.project_root) {
        return Check::ok(format!("Gemini CLI trusts the folder {root}"));
    }
    Check::problem(
        format!(
            "Gemini CLI runs no hooks in {root}: the folder is not trusted in {}",
            here.trust_file.display()
        ),
        format!("cd {root} && gemini  # trust the folder when asked"),
    )
}

/// Whether `dir` is trusted by `trustedFolders.json` rules (`{"<path>": "TRUST_FOLDER" |
/// "TRUST_PARENT" | "DO_NOT_TRUST"}`): the most specific rule that covers it decides. A
/// `TRUST_FOLDER` covers its path and everything below, `TRUST_PARENT` its path's parent and
/// everything below, `DO_NOT_TRUST` its path. Qwen Code, a fork of Gemini CLI, keeps the same
/// rules.
pub fn trusted(rules: Option<&Value>, dir: &Path) -> bool {
    let Some(rules) = rules.and_then(Value::as_object) else {
        return false;
    };
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in rules {
        let path = Path::new(path);
        let (covered, trusts) = match level.as_str() {
            Some("TRUST_FOLDER") => (Some(path), true),
            Some("TRUST_PARENT") => (path.parent(), true),
            Some("DO_NOT_TRUST") => (Some(path).filter(|path| *path == dir), false),
            _ => (None, false),
        };
        let Some(covered) = covered.filter(|covered| dir.starts_with(covered)) else {
            continue;
        };
        let depth = covered.components().count();
        if best.is_none_or(|(best, _)| depth >= best) {
            best = Some((depth, trusts));
        }
    }
    best.is_some_and(|(_, trusts)| trusts)
}

/// Exit 0 with a JSON object of Gemini's output fields (`{}` for nothing to say).
fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!(
            "exit {exit_code} (Gemini CLI reports a failure; exit 2 denies)"
        ));
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
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn the_most_specific_rule_decides() {
        let dir = Path::new("/home/u/p");
        let cases = [
            (json!({}), false),
            (json!({"/home/u/p": "TRUST_FOLDER"}), true),
            (json!({"/home/u": "TRUST_FOLDER"}), true),
            (json!({"/home/u/p/sub": "TRUST_FOLDER"}), false),
            (json!({"/home/u/p/x": "TRUST_PARENT"}), true),
            (
                json!({"/home": "TRUST_FOLDER", "/home/u/p": "DO_NOT_TRUST"}),
                false,
            ),
            (json!({"/home/u/pp": "TRUST_FOLDER"}), false),
        ];
        for (rules, expected) in cases {
            assert_eq!(trusted(Some(&rules), dir), expected, "{rules}");
        }
    }

    #[test]
    fn the_users_settings_count_for_hooks_in_the_project() {
        let project = Map::new();
        let Value::Object(user) = json!({"hooksConfig": {"disabled": ["checkpoint"]},
                                         "security": {"folderTrust": {"enabled": false}}})
        else {
            panic!("an object")
        };
        let settings = [
            (Path::new("/p/.gemini/settings.json"), &project),
            (Path::new("/h/.gemini/settings.json"), &user),
        ];
        let here = Here {
            project_scope: Some(Path::new("/p")),
            project_root: Path::new("/p"),
            hooks_file: Path::new("/p/.gemini/settings.json"),
            events: &["AfterAgent"],
            settings: &settings,
            trust_file: Path::new("/h/.gemini/trustedFolders.json"),
            trust_text: None,
            var: &|_| None,
            agent_answer: None,
        };
        let found: Vec<(bool, String)> = runs_here(&here)
            .into_iter()
            .map(|check| (check.ok, check.message))
            .collect();
        assert_eq!(
            found,
            [
                (
                    false,
                    "Gemini CLI skips our hooks: `hooksConfig.disabled` lists \"checkpoint\" in \
                     /h/.gemini/settings.json"
                        .to_owned()
                ),
                (
                    true,
                    "Gemini CLI's folder trust is off: hooks run in every folder".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn answers_are_json_objects() {
        assert_eq!(check_answer("AfterAgent", 0, "{}\n"), Ok(()));
        assert_eq!(
            check_answer("AfterAgent", 0, r#"{"decision":"deny","reason":"r"}"#),
            Ok(())
        );
        assert!(check_answer("AfterAgent", 0, "").is_err());
        assert!(check_answer("AfterAgent", 0, "hello").is_err());
    }
}
