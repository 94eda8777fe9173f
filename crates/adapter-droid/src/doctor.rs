//! What `checkpoint doctor` checks for Factory Droid: captured payloads of the installed events,
//! the variables it sets for a hook, `hooks.hooksDisabled`, a `hooks.json` whose events replace
//! the settings file's, and the answer shapes of Claude Code's protocol, which Droid reads.

use std::io::ErrorKind;
use std::path::Path;

use checkpoint_core::doctor::{Check, DoctorSpec, Here, TrustFile};
use checkpoint_engine::bounded::{MAX_CONFIG_BYTES, read_regular_text};
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

/// The name of the file beside a settings file whose events replace the settings file's.
const HOOKS_FILE: &str = "hooks.json";

/// `hooks.hooksDisabled` switches every hook off (the first settings file that sets it decides);
/// an event that the `hooks.json` beside the settings file holding our hooks names never runs our
/// handler.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    vec![
        hooks_disabled(here),
        hooks_file(here.hooks_file, here.events),
    ]
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

/// Droid reads an event of a scope from the `hooks.json` beside its settings file when that file
/// names the event (with an empty list too), and from the settings file's `"hooks"` only
/// otherwise; scopes still add up (checked with 0.225.2). So each of our `events` named there
/// is a handler of ours that never runs.
fn hooks_file(settings: &Path, events: &[&str]) -> Check {
    let replacing = settings.with_file_name(HOOKS_FILE);
    let (settings, replacing_shown) = (settings.display(), replacing.display());
    let fix = format!(
        "move the hooks of {replacing_shown} into the \"hooks\" of {settings} and delete it, then \
         run `checkpoint install droid` again"
    );
    let text = match read_regular_text(&replacing, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Check::ok(format!("Factory Droid reads the hooks of {settings}"));
        }
        Err(e) => {
            return Check::problem(
                format!(
                    "{replacing_shown} cannot be read ({e}): it may replace hooks of {settings}"
                ),
                fix,
            );
        }
    };
    let Ok(Value::Object(declared)) = serde_json::from_str::<Value>(&text) else {
        return Check::problem(
            format!("{replacing_shown} is not a JSON object: it may replace hooks of {settings}"),
            fix,
        );
    };
    let replaced: Vec<&str> = (events.iter().copied())
        .filter(|event| declared.contains_key(*event))
        .collect();
    if replaced.is_empty() {
        return Check::ok(format!(
            "Factory Droid reads checkpoint's events from {settings} ({replacing_shown} names none)"
        ));
    }
    Check::problem(
        format!(
            "Factory Droid runs no handler of {settings} for {}: {replacing_shown} names those \
             events, and its hooks replace the settings file's",
            replaced.join(", ")
        ),
        fix,
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
    fn disabled_hooks_and_our_events_in_a_hooks_json_beside_ours_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        assert!(checks(json!({}), dir.path()).iter().all(|(ok, _)| *ok));
        let off = checks(json!({"hooks": {"hooksDisabled": true}}), dir.path());
        assert!(!off[0].0 && off[0].1.contains("hooksDisabled"), "{off:?}");
        let hooks_json = |text: &str| {
            std::fs::write(dir.path().join(HOOKS_FILE), text).unwrap();
            checks(json!({}), dir.path()).remove(1)
        };
        // Events of its own leave ours alone; one of ours, even with no handler, replaces it.
        let others = hooks_json(r#"{"Notification": []}"#);
        assert!(others.0, "{others:?}");
        let stop = hooks_json(r#"{"Stop": []}"#);
        assert!(!stop.0 && stop.1.contains("for Stop: "), "{stop:?}");
        let junk = hooks_json("{");
        assert!(!junk.0 && junk.1.contains("not a JSON object"), "{junk:?}");
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
