//! What `checkpoint doctor` checks for GitHub Copilot CLI: captured payloads of the installed
//! events, folder trust for a project's hooks (`trustedFolders` in `$COPILOT_HOME/config.json`,
//! or `COPILOT_ALLOW_ALL=true`), and its answer shape (empty stdout, or a JSON object of
//! `decision: "block"`, `reason` and `additionalContext`).

use std::path::Path;

use checkpoint_core::doctor::{AnswerShape, Check, DoctorSpec, Here, TrustFile, check_json_answer};
use serde_json::Value;

/// GitHub Copilot CLI's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
        ("agentStop", include_str!("../payloads/agentStop.json")),
        (
            "userPromptSubmitted",
            include_str!("../payloads/userPromptSubmitted.json"),
        ),
        ("preToolUse", include_str!("../payloads/preToolUse.json")),
        ("postToolUse", include_str!("../payloads/postToolUse.json")),
        (
            "sessionStart",
            include_str!("../payloads/sessionStart.json"),
        ),
        (
            "preCompact",
            include_str!("../payloads/preCompact-manual.json"),
        ),
        ("sessionEnd", include_str!("../payloads/sessionEnd.json")),
    ],
    start_dir_vars: &["COPILOT_PROJECT_DIR"],
    trust_file: TrustFile::InUserDir("config.json"),
    runs_here,
    check_answer,
    ask: None,
};

/// Copilot runs a project's hooks only in a folder it trusts: one of `trustedFolders` in its
/// `config.json` (the folder or one above it), or any folder with `COPILOT_ALLOW_ALL=true`. The
/// user's own hooks run everywhere.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    if here.project_scope.is_none() {
        return Vec::new();
    }
    let root = here.root();
    if (here.var)("COPILOT_ALLOW_ALL").is_some_and(|value| value.trim() == "true") {
        return vec![Check::ok(format!(
            "GitHub Copilot CLI trusts {root} (COPILOT_ALLOW_ALL=true)"
        ))];
    }
    let folders = here.trust_text.map(trusted_folders).unwrap_or_default();
    if here
        .project_and_ancestors()
        .any(|dir| folders.iter().any(|folder| Path::new(folder) == dir))
    {
        return vec![Check::ok(format!(
            "GitHub Copilot CLI trusts the folder {root}"
        ))];
    }
    vec![Check::problem(
        format!(
            "GitHub Copilot CLI loads no hooks of {root}: the folder is not among \
             `trustedFolders` in {}",
            here.trust_file.display()
        ),
        format!("cd {root} && copilot  # trust the folder when asked"),
    )]
}

/// The `trustedFolders` of Copilot's `config.json`, which starts with `//` comment lines.
fn trusted_folders(text: &str) -> Vec<String> {
    let json: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let config: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    config["trustedFolders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!(
            "exit {exit_code} (GitHub Copilot CLI only warns, and goes on)"
        ));
    }
    if stdout.trim().is_empty() {
        return Ok(());
    }
    let shape = AnswerShape {
        keys: &["decision", "reason", "additionalContext"],
        decisions: &["block"],
        event_name_checked: false,
    };
    check_json_answer(event, stdout, &shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(trust_text: Option<&str>, allow_all: Option<&str>) -> Vec<Check> {
        let var = |name: &str| {
            (name == "COPILOT_ALLOW_ALL")
                .then(|| allow_all.map(str::to_owned))
                .flatten()
        };
        let here = Here {
            project_scope: Some(Path::new("/home/u/p")),
            project_root: Path::new("/home/u/p"),
            hooks_file: Path::new("/home/u/p/.github/hooks/checkpoint.json"),
            events: &["agentStop"],
            settings: &[],
            trust_file: Path::new("/home/u/.copilot/config.json"),
            trust_text,
            var: &var,
            agent_answer: None,
        };
        runs_here(&here)
    }

    #[test]
    fn a_project_needs_a_trusted_folder() {
        let config = "// User settings belong in settings.json.\n// This file is managed \
                      automatically.\n{\n  \"trustedFolders\": [\"/home/u\"]\n}\n";
        assert!(checks(Some(config), None)[0].ok);
        let elsewhere = "{\"trustedFolders\": [\"/home/u/p/sub\", \"/home/u/pp\"]}";
        assert!(!checks(Some(elsewhere), None)[0].ok);
        assert!(!checks(None, None)[0].ok);
        assert!(checks(None, Some("true"))[0].ok);
        assert!(
            !checks(None, Some("1"))[0].ok,
            "only exactly true trusts the folder"
        );
    }

    #[test]
    fn answers_are_empty_or_block_or_context() {
        for ok in [
            "",
            r#"{"decision":"block","reason":"r"}"#,
            r#"{"additionalContext":"c"}"#,
        ] {
            assert_eq!(check_answer("agentStop", 0, ok), Ok(()), "{ok}");
        }
        assert!(check_answer("agentStop", 2, "").is_err());
        assert!(check_answer("agentStop", 0, r#"{"decision":"deny"}"#).is_err());
        assert!(check_answer("agentStop", 0, r#"{"hookSpecificOutput":{}}"#).is_err());
    }
}
