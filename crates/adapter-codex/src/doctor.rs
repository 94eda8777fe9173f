//! What `checkpoint doctor` checks for Codex: captured payloads of the installed events, project
//! trust in the user's `config.toml`, hook trust as Codex reports it (`codex app-server`,
//! `hooks/list`; else as recorded in `config.toml`), and the strict per-event answer shapes of
//! its protocol (unknown keys make the whole answer invalid).

use std::path::{Path, PathBuf};

use checkpoint_core::doctor::{
    AgentQuery, AnswerShape, Check, DoctorSpec, Here, TrustFile, check_json_answer,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// Codex's doctor table.
pub const DOCTOR: DoctorSpec = DoctorSpec {
    payloads: &[
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
            include_str!("../payloads/PreCompact-auto.json"),
        ),
        ("SessionEnd", include_str!("../payloads/SessionEnd.json")),
    ],
    // Codex sets no variables of its own for a hook.
    start_dir_vars: &[],
    trust_file: TrustFile::InUserDir("config.toml"),
    runs_here,
    check_answer,
    ask: Some(AgentQuery {
        program: "codex",
        args: &["app-server"],
        request: hooks_list,
        answers: |line| id_of(line) == Some(HOOKS_LIST_ID),
    }),
};

/// The id of the `hooks/list` request in [`hooks_list`].
const HOOKS_LIST_ID: u64 = 2;

/// The JSON-RPC lines that ask `codex app-server` which hooks it would run in `root` and
/// whether it trusts them (the hash it computes itself, against the recorded one).
fn hooks_list(root: &Path) -> Vec<String> {
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "checkpoint-doctor",
                                         "version": checkpoint_engine::hook::VERSION}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": HOOKS_LIST_ID, "method": "hooks/list",
               "params": {"cwd": root}})
        .to_string(),
    ]
}

/// The `id` of a JSON-RPC line.
fn id_of(line: &str) -> Option<u64> {
    serde_json::from_str::<Value>(line)
        .ok()?
        .get("id")?
        .as_u64()
}

/// One hook as `hooks/list` reports it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedHook {
    source_path: PathBuf,
    event_name: String,
    enabled: bool,
    trust_status: String,
}

/// The hooks in a `hooks/list` answer; `None` when it is an error or not that shape.
fn listed_hooks(answer: &str) -> Option<Vec<ListedHook>> {
    let answer: Value = serde_json::from_str(answer).ok()?;
    let data = answer.get("result")?.get("data")?.as_array()?;
    let mut hooks = Vec::new();
    for entry in data {
        hooks.extend(serde_json::from_value::<Vec<ListedHook>>(entry.get("hooks")?.clone()).ok()?);
    }
    Some(hooks)
}

/// A project's hooks load only in a trusted project (`[projects."<root>"] trust_level =
/// "trusted"`), and every hook runs only once its review is recorded (`[hooks.state."<key>"]
/// trusted_hash`, keys naming the hooks file and the event; `enabled = false` switches one off)
/// for the hook as it is now: Codex is asked (`codex app-server`, `hooks/list`) where it is on
/// `PATH`, else the recorded review is taken as it is.
fn runs_here(here: &Here<'_>) -> Vec<Check> {
    let root = here.root();
    let config: toml::Table = here
        .trust_text
        .and_then(|text| toml::from_str(text).ok())
        .unwrap_or_default();
    let config_file = here.trust_file.display();
    let mut checks = Vec::new();
    if here.project_scope.is_some() {
        let trusted = config
            .get("projects")
            .and_then(|projects| projects.get(root.as_str()))
            .and_then(|project| project.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted");
        let key = toml::Value::String(root.clone());
        checks.push(if trusted {
            Check::ok(format!("Codex trusts the project {root}"))
        } else {
            Check::problem(
                format!(
                    "Codex ignores {}: the project {root} is not trusted in {config_file}",
                    here.hooks_file.display()
                ),
                format!(
                    "mkdir -p {dir} && printf '\\n[projects.%s]\\ntrust_level = \"trusted\"\\n' {} \
                     >> {config_file}",
                    shell_quote(&key.to_string()),
                    dir = here
                        .trust_file
                        .parent()
                        .unwrap_or(here.trust_file)
                        .display(),
                ),
            )
        });
    }
    match here.agent_answer.and_then(listed_hooks) {
        Some(listed) => checks.extend(trust_as_listed(here, &listed)),
        None => checks.extend(trust_as_recorded(here, &config)),
    }
    checks
}

/// Hook trust as Codex itself reports it (`codex app-server`, `hooks/list`: the hash of each
/// hook as it is now, against the one recorded when it was reviewed).
fn trust_as_listed(here: &Here<'_>, listed: &[ListedHook]) -> Vec<Check> {
    let root = here.root();
    let ours = |event: &str| -> Vec<&ListedHook> {
        (listed.iter())
            .filter(|hook| {
                hook.source_path == here.hooks_file && same_event(&hook.event_name, event)
            })
            .collect()
    };
    let missing: Vec<&str> = (here.events.iter().copied())
        .filter(|event| ours(event).is_empty())
        .collect();
    let disabled: Vec<&str> = (here.events.iter().copied())
        .filter(|event| ours(event).iter().any(|hook| !hook.enabled))
        .collect();
    let untrusted: Vec<String> = (here.events.iter().copied())
        .filter_map(|event| {
            let hook = (ours(event).into_iter()).find(|hook| hook.trust_status != "trusted")?;
            Some(format!("{event} ({})", hook.trust_status))
        })
        .collect();
    let mut checks = Vec::new();
    if !missing.is_empty() {
        checks.push(Check::problem(
            format!(
                "Codex does not load {} for: {}",
                here.hooks_file.display(),
                missing.join(", ")
            ),
            format!("cd {root} && checkpoint install codex"),
        ));
    }
    if !disabled.is_empty() {
        checks.push(Check::problem(
            format!("Codex has our hooks switched off: {}", disabled.join(", ")),
            format!("cd {root} && codex  # enable them with /hooks"),
        ));
    }
    checks.push(if untrusted.is_empty() {
        Check::ok("Codex trusts the hooks as they are now (codex app-server, hooks/list)")
    } else {
        Check::problem(
            format!(
                "Codex skips hooks it does not trust, without a word: {}",
                untrusted.join(", ")
            ),
            review_fix(&root),
        )
    });
    checks
}

/// Hook trust as recorded in the user's `config.toml`, when Codex cannot be asked: a review is
/// recorded for each of our events (its hash is not recomputed here).
fn trust_as_recorded(here: &Here<'_>, config: &toml::Table) -> Vec<Check> {
    let root = here.root();
    let config_file = here.trust_file.display();
    let mut checks = Vec::new();
    let hooks_file = here.hooks_file.display().to_string();
    let states = config
        .get("hooks")
        .and_then(|hooks| hooks.get("state"))
        .and_then(toml::Value::as_table);
    let with = |test: &dyn Fn(&toml::Value) -> bool| -> Vec<&str> {
        (here.events.iter().copied())
            .filter(|event| {
                (states.into_iter().flatten()).any(|(key, state)| {
                    key.contains(hooks_file.as_str())
                        && key.split(':').any(|part| same_event(part, event))
                        && test(state)
                })
            })
            .collect()
    };
    let disabled = with(&|state| state.get("enabled") == Some(&toml::Value::Boolean(false)));
    let reviewed = with(&|state| state.get("trusted_hash").is_some());
    let unreviewed: Vec<&str> = (here.events.iter().copied())
        .filter(|event| !reviewed.contains(event))
        .collect();
    if !disabled.is_empty() {
        checks.push(Check::problem(
            format!(
                "Codex has our hooks switched off (`enabled = false` in {config_file}): {}",
                disabled.join(", ")
            ),
            format!("cd {root} && codex  # enable them with /hooks"),
        ));
    }
    checks.push(if unreviewed.is_empty() {
        Check::ok(
            "Codex has the hooks reviewed (recorded in its config; codex is not on PATH to say \
             whether they changed since)",
        )
    } else {
        Check::problem(
            format!(
                "Codex skips hooks it has not trusted, without a word: {} not trusted in \
                 {config_file}",
                unreviewed.join(", ")
            ),
            review_fix(&root),
        )
    });
    checks
}

/// How to review our hooks in Codex.
fn review_fix(root: &str) -> String {
    format!(
        "cd {root} && codex  # trust them with /hooks (automation: codex exec \
         --dangerously-bypass-hook-trust)"
    )
}

/// Whether a part of a hook-state key names `event` (`Stop`, `stop`, `pre_tool_use`).
fn same_event(part: &str, event: &str) -> bool {
    let plain = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    plain(part) == plain(event)
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The shape Codex 0.169.0 accepts for `event` (its output schemas deny unknown fields): the
/// common keys, and for some events these.
fn shape(event: &str) -> AnswerShape {
    const STOP: &[&str] = &["decision", "reason"];
    const WITH_SPECIFIC: &[&str] = &["decision", "reason", "hookSpecificOutput"];
    let (keys, decisions): (&[&str], &[&str]) = match event {
        "Stop" | "SubagentStop" => (STOP, &["block"]),
        "UserPromptSubmit" | "PostToolUse" => (WITH_SPECIFIC, &["block"]),
        "PreToolUse" => (WITH_SPECIFIC, &["approve", "block"]),
        "SessionStart" | "SubagentStart" => (&["hookSpecificOutput"], &[]),
        _ => (&[], &[]),
    };
    AnswerShape {
        keys,
        decisions,
        event_name_checked: true,
    }
}

/// Exit 0 with empty stdout, or a JSON object of exactly the fields Codex allows for the event.
fn check_answer(event: &str, exit_code: i32, stdout: &str) -> Result<(), String> {
    if exit_code != 0 {
        return Err(format!("exit {exit_code} (Codex marks the hook failed)"));
    }
    if stdout.trim().is_empty() {
        return Ok(());
    }
    check_json_answer(event, stdout, &shape(event))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn checks(config: &str, project: bool) -> Vec<Check> {
        checks_told(config, project, None)
    }

    fn checks_told(config: &str, project: bool, answer: Option<&str>) -> Vec<Check> {
        let here = Here {
            project_scope: project.then_some(Path::new("/p")),
            project_root: Path::new("/p"),
            hooks_file: Path::new("/p/.codex/hooks.json"),
            events: &["Stop", "PreToolUse"],
            settings: &[],
            trust_file: Path::new("/h/config.toml"),
            trust_text: Some(config),
            var: &|_| None,
            agent_answer: answer,
        };
        runs_here(&here)
    }

    /// A trusted project whose two hooks have a review on record.
    const REVIEWED: &str = r#"
[projects."/p"]
trust_level = "trusted"
[hooks.state."/p/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:x"
[hooks.state."/p/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:y"
"#;

    #[test]
    fn project_and_hook_trust_are_both_needed() {
        assert!(checks(REVIEWED, true).iter().all(|c| c.ok));
        let found = checks("", true);
        assert_eq!(found.iter().filter(|c| !c.ok).count(), 2, "{found:?}");
        assert!(found[1].message.contains("Stop, PreToolUse"), "{found:?}");
        // A user install needs no project trust.
        assert_eq!(checks("", false).len(), 1);
    }

    #[test]
    fn codex_itself_says_whether_the_hooks_are_trusted_as_they_are_now() {
        let recorded = REVIEWED;
        let listed = |stop: &str| {
            json!({"id": 2, "result": {"data": [{"cwd": "/p", "hooks": [
                {"sourcePath": "/p/.codex/hooks.json", "eventName": "stop", "enabled": true,
                 "trustStatus": stop, "key": "k1"},
                {"sourcePath": "/p/.codex/hooks.json", "eventName": "preToolUse",
                 "enabled": true, "trustStatus": "trusted", "key": "k2"},
                {"sourcePath": "/h/hooks.json", "eventName": "stop", "enabled": true,
                 "trustStatus": "untrusted", "key": "k3"}]}]}})
            .to_string()
        };
        // Recorded, but changed since: only Codex can tell.
        let found = checks_told(recorded, true, Some(&listed("modified")));
        let problems: Vec<&str> = (found.iter())
            .filter(|c| !c.ok)
            .map(|c| c.message.as_str())
            .collect();
        assert_eq!(
            problems,
            ["Codex skips hooks it does not trust, without a word: Stop (modified)"]
        );
        let found = checks_told(recorded, true, Some(&listed("trusted")));
        assert!(found.iter().all(|c| c.ok), "{found:?}");
        // An answer that is not a hook list falls back to the recorded reviews.
        let found = checks_told(recorded, true, Some(r#"{"id":2,"error":{"code":-1}}"#));
        assert!(found.iter().all(|c| c.ok), "{found:?}");
        assert!(found[1].message.contains("recorded"), "{found:?}");
    }

    #[test]
    fn the_project_trust_fix_writes_valid_toml() {
        let found = checks("", true);
        let fix = found[0].fix.as_deref().unwrap();
        assert!(fix.contains(r#"'"/p"'"#), "{fix}");
    }

    #[test]
    fn answers_follow_each_events_schema() {
        assert_eq!(check_answer("Stop", 0, ""), Ok(()));
        assert_eq!(
            check_answer("Stop", 0, r#"{"decision":"block","reason":"r"}"#),
            Ok(())
        );
        assert!(check_answer("Stop", 0, r#"{"hookSpecificOutput":{}}"#).is_err());
        assert!(check_answer("PreCompact", 0, r#"{"decision":"block"}"#).is_err());
        assert_eq!(
            check_answer(
                "SessionStart",
                0,
                r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c"}}"#
            ),
            Ok(())
        );
    }
}
