//! What `checkpoint doctor` checks for Factory Droid: captured payloads of the installed events,
//! the variables it sets for a hook, `hooks.hooksDisabled`, a `hooks.json` that replaces the
//! settings file's hooks, and the answer shapes of Claude Code's protocol, which Droid reads.

use std::path::Path;

use checkpoint_core::doctor::{Check, DoctorSpec, Here, TrustFile};
use serde_json::Value;

/// Factory Droid's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
        ("Stop", include_str!("../payloads/Stop.json")),
        ("PreToolUse", include_str!("../payloads/PreToolUse.json")),
        ("PostToolUse", include_str!("../payloads/PostToolUse.json")),
        (
            "SessionStart",
            include_str!("../payloads/SessionStart.json"),
        ),
        ("SessionEnd", include_str!("../payloads/SessionEnd.json")),
    ],
    start_dir_vars: &[
        "FACTORY_PROJECT_DIR",
        "DROID_PROJECT_DIR",
        "CLAUDE_PROJECT_DIR",
    ],
    // Droid keeps no trust record: `droid exec` ran a project's hooks in a folder it had never
    // seen. Its user settings stand in.
    trust_file: TrustFile::InUserDir("settings.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// The name of the file that, beside a settings file, holds the hooks of its scope instead.
const HOOKS_FILE: &str = "hooks.json";

/// `hooks.hooksDisabled` switches every hook off (the first settings file that sets it decides);
/// a `hooks.json` beside the settings file holding our hooks makes Droid read its hooks from
/// there and none from the settings file.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    vec![hooks_disabled(here), hooks_file(here.hooks_file)]
}

fn hooks_disabled(here: &Here<'_>) -> Check {
    match here.setting("/hooks/hooksDisabled").next() {
        Some((file, Value::Bool(true))) => Check::problem(
            format!(
                "Factory Droid runs no hooks: `hooks.hooksDisabled` is true in {}",
                file.display()
            ),
            format!("remove `\"hooksDisabled\": true` from {}", file.display()),
        ),
        _ => Check::ok("Factory Droid's hooks are not disabled"),
    }
}

fn hooks_file(settings: &Path) -> Check {
    let replaced = settings.with_file_name(HOOKS_FILE);
    // A symlink counts, whatever it points at: Droid would try it.
    if replaced.symlink_metadata().is_err() {
        return Check::ok(format!(
            "Factory Droid reads the hooks of {}",
            settings.display()
        ));
    }
    Check::problem(
        format!(
            "Factory Droid reads no hooks from {}: {} is there, and its hooks replace the \
             settings file's",
            settings.display(),
            replaced.display()
        ),
        format!(
            "move the hooks of {} into the \"hooks\" of {} and delete it, then run \
             `checkpoint install droid` again",
            replaced.display(),
            settings.display()
        ),
    )
}

/// Claude Code's answers, which Droid reads.
fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    adapter_claude::doctor::check_answer_of("Factory Droid", event, exit_code, stdout)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    /// The checks for hooks in `dir/settings.json` of the project `/p`, whose settings are
    /// `project`.
    fn checks(project: Value, dir: &Path) -> Vec<(bool, String)> {
        let Value::Object(project) = project else {
            panic!("an object")
        };
        let user = Map::new();
        let hooks_file = dir.join("settings.json");
        let settings = [
            (hooks_file.as_path(), &project),
            (Path::new("/h/.factory/settings.json"), &user),
        ];
        let here = Here {
            project_scope: Some(Path::new("/p")),
            project_root: Path::new("/p"),
            hooks_file: &hooks_file,
            events: &["Stop"],
            settings: &settings,
            trust_file: Path::new("/h/.factory/settings.json"),
            trust_text: None,
            var: &|_| None,
            agent_answer: None,
        };
        runs_here(&here)
            .into_iter()
            .map(|check| (check.ok, check.message))
            .collect()
    }

    #[test]
    fn disabled_hooks_and_a_hooks_json_beside_ours_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        assert!(checks(json!({}), dir.path()).iter().all(|(ok, _)| *ok));
        let off = checks(json!({"hooks": {"hooksDisabled": true}}), dir.path());
        assert!(!off[0].0 && off[0].1.contains("hooksDisabled"), "{off:?}");
        std::fs::write(dir.path().join(HOOKS_FILE), "{}").unwrap();
        let replaced = checks(json!({}), dir.path());
        assert!(replaced[0].0 && !replaced[1].0, "{replaced:?}");
        assert!(replaced[1].1.contains("hooks.json"), "{replaced:?}");
    }

    #[test]
    fn answers_are_claudes_and_a_failure_names_droid() {
        let block = r#"{"decision":"block","reason":"r"}"#;
        assert_eq!(check_answer("Stop", 0, block), Ok(()));
        assert!(check_answer("Stop", 0, "not JSON").is_err());
        let failed = check_answer("Stop", 1, "").unwrap_err();
        assert!(failed.contains("Factory Droid"), "{failed}");
    }
}
