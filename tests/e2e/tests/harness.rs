//! Proves the harness against the three real CLIs: an end-of-turn hook that blocks once makes
//! each CLI send a second model request carrying the hook's reason in that CLI's wrapper.

use std::path::Path;
use std::process::Command;

use checkpoint_e2e::scenario::{Scenario, Step};
use checkpoint_e2e::{Agent, last_user_texts, run_agent, stop_feedback, write_hooks};
use serde_json::Value;

const REASON: &str = "E2E_REASON_123";

/// Writes a hook script that logs each stdin payload to `payloads.jsonl` and blocks the stop
/// the first time only (a marker file remembers), then allows it. Returns its path.
fn write_block_once_hook(dir: &Path, agent: Agent) -> String {
    let (block, allow) = match agent {
        Agent::Claude | Agent::Codex => {
            (format!(r#"{{"decision":"block","reason":"{REASON}"}}"#), "")
        }
        Agent::Gemini => (
            format!(r#"{{"decision":"deny","reason":"{REASON}"}}"#),
            "{}",
        ),
    };
    let script = dir.join("stop-hook.sh");
    let dir = dir.display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             cat >> '{dir}/payloads.jsonl'\n\
             echo >> '{dir}/payloads.jsonl'\n\
             if [ -e '{dir}/blocked-once' ]; then printf '%s' '{allow}'; exit 0; fi\n\
             touch '{dir}/blocked-once'\n\
             printf '%s\\n' '{block}'\n"
        ),
    )
    .unwrap();
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    assert!(status.success());
    script.to_str().unwrap().to_owned()
}

/// The hook's reason exactly as the CLI's wrapper puts it in front of the model.
fn assert_wrapped(agent: Agent, texts: &[String]) {
    let wrapped = |t: &String| match agent {
        Agent::Claude => t == &format!("Stop hook feedback:\n{REASON}"),
        Agent::Gemini => t == REASON,
        Agent::Codex => {
            t.starts_with("<hook_prompt hook_run_id=")
                && t.ends_with(&format!(">{REASON}</hook_prompt>"))
        }
    };
    assert!(
        texts.iter().any(wrapped),
        "{agent}: no user text carries {REASON} in the {agent} wrapper: {texts:#?}"
    );
}

fn block_once_reaches_the_model(agent: Agent) {
    let repo = checkpoint_testkit::repo("python-passing");
    let hook_dir = tempfile::tempdir().unwrap();
    let hook = write_block_once_hook(hook_dir.path(), agent);
    write_hooks(agent, repo.path(), &hook, &[]);
    let scenario = Scenario::new([
        Step::reply("E2E_FIRST_REPLY"),
        Step::reply("E2E_SECOND_REPLY")
            .write("done.txt", "done\n")
            .run("git add done.txt && git commit -qm 'e2e: done'"),
    ]);

    let result = run_agent(agent, repo.path(), "Please finish the task.", scenario);
    result.report_timing("block once");

    let summary = result.summary();
    assert!(result.status.success(), "{summary}");
    let turns = result.turns();
    assert_eq!(turns.len(), 2, "exactly one block, so two turns\n{summary}");
    assert_eq!(turns[0]["step"], 0, "{summary}");
    assert_eq!(turns[1]["step"], 1, "{summary}");
    assert!(stop_feedback(agent, turns[0]).is_empty(), "{summary}");
    assert_eq!(stop_feedback(agent, turns[1]), [REASON], "{summary}");
    assert_wrapped(agent, &last_user_texts(agent, turns[1]));
    assert!(
        result.stdout.contains("E2E_SECOND_REPLY"),
        "the final reply is the second step's\n{summary}"
    );
    for request in &result.requests {
        assert_ne!(request["api"], "unknown", "unrouted request: {request}");
    }

    // The hook saw both stops, the second one flagged as a continuation.
    let payloads: Vec<Value> = std::fs::read_to_string(hook_dir.path().join("payloads.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(payloads.len(), 2, "{payloads:#?}\n{summary}");
    for (payload, active) in payloads.iter().zip([false, true]) {
        assert_eq!(payload["hook_event_name"], agent.end_of_turn_event());
        assert_eq!(payload["stop_hook_active"], active, "{payload}");
    }

    // The second step's `before` actions ran in the repository before its reply.
    let log = Command::new("git")
        .args(["log", "-1", "--format=%s"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).trim(), "e2e: done");
}

#[test]
fn claude_stop_block_reaches_the_model() {
    block_once_reaches_the_model(Agent::Claude);
}

#[test]
fn gemini_after_agent_deny_reaches_the_model() {
    block_once_reaches_the_model(Agent::Gemini);
}

#[test]
fn codex_stop_block_reaches_the_model() {
    block_once_reaches_the_model(Agent::Codex);
}
