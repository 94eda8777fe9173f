//! Proves the harness against the three real CLIs: an end-of-turn hook that blocks once makes
//! each CLI send a second model request carrying the hook's reason in that CLI's wrapper; a
//! scenario step with a shell tool call makes each CLI run the command, and the context that
//! `SessionStart` and tool hooks inject reaches the model where [`conversation_texts`] says.

use std::path::Path;
use std::process::Command;

use checkpoint_e2e::scenario::{Scenario, Step};
use checkpoint_e2e::{
    Agent, Place, conversation_texts, last_user_texts, run_agent, stop_feedback, write_hooks,
};
use serde_json::Value;

const REASON: &str = "E2E_REASON_123";

/// Writes a hook script that logs each stdin payload to `payloads.jsonl` and blocks the stop
/// the first time only (a marker file remembers), then allows it. Returns its path.
fn write_block_once_hook(dir: &Path, agent: Agent) -> String {
    let (block, allow) = match agent {
        Agent::Claude | Agent::Codex | Agent::Copilot | Agent::Qwen | Agent::Droid => {
            (format!(r#"{{"decision":"block","reason":"{REASON}"}}"#), "")
        }
        Agent::Gemini => (
            format!(r#"{{"decision":"deny","reason":"{REASON}"}}"#),
            "{}",
        ),
        Agent::OpenCode => unreachable!("OpenCode runs no hook commands"),
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
        Agent::Gemini | Agent::Qwen | Agent::Droid => t == REASON,
        Agent::Codex => {
            t.starts_with("<hook_prompt hook_run_id=")
                && t.ends_with(&format!(">{REASON}</hook_prompt>"))
        }
        Agent::Copilot => {
            t.starts_with("<current_datetime>")
                && t.ends_with(&format!("</current_datetime>\n\n{REASON}"))
        }
        Agent::OpenCode => unreachable!("OpenCode runs no hook commands"),
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

    let Some(result) = run_agent(agent, repo.path(), "Please finish the task.", scenario) else {
        return;
    };
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
        // Copilot names no event in its payloads (it sends `stopReason` at the end of a turn).
        match agent {
            Agent::Copilot => assert_eq!(payload["stopReason"], "end_turn", "{payload}"),
            _ => assert_eq!(payload["hook_event_name"], agent.end_of_turn_event()),
        }
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

#[test]
fn copilot_agent_stop_block_reaches_the_model() {
    block_once_reaches_the_model(Agent::Copilot);
}

#[test]
fn qwen_stop_block_reaches_the_model() {
    block_once_reaches_the_model(Agent::Qwen);
}

#[test]
fn droid_stop_block_reaches_the_model() {
    block_once_reaches_the_model(Agent::Droid);
}

/// Writes `context-hook.sh EVENT TEXT`: reads the payload, then prints
/// `{"hookSpecificOutput":{"hookEventName":EVENT,"additionalContext":TEXT}}`, or, for the
/// end-of-turn event, nothing (Gemini: `{}`). Returns its path.
fn write_context_hook(dir: &Path, agent: Agent) -> String {
    let allow = if agent == Agent::Gemini { "{}" } else { "" };
    // Copilot reads a top-level `additionalContext`; the others Claude's `hookSpecificOutput`.
    let context = match agent {
        Agent::Copilot => r#"printf '{"additionalContext":"%s"}\n' "$2""#,
        _ => {
            r#"printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s"}}\n' "$1" "$2""#
        }
    };
    let script = dir.join("context-hook.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             cat > /dev/null\n\
             if [ \"$1\" = {end} ]; then printf '%s' '{allow}'; exit 0; fi\n\
             {context}\n",
            end = agent.end_of_turn_event()
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

/// A step's shell command runs through the CLI's own shell tool, and the hook context of
/// `SessionStart` and of the tool call reaches the model: Claude and Codex `PreToolUse` as a
/// system (developer) text after the call, Gemini `AfterTool` and Qwen `PostToolUse` inside the
/// tool's result, Droid `PostToolUse` as a user message after it.
fn tool_call_and_hook_context_reach_the_model(agent: Agent) {
    let repo = checkpoint_testkit::repo("python-passing");
    let hook_dir = tempfile::tempdir().unwrap();
    let hook = write_context_hook(hook_dir.path(), agent);
    let (start_event, tool_event) = match agent {
        Agent::Claude | Agent::Codex => ("SessionStart", "PreToolUse"),
        Agent::Gemini => ("SessionStart", "AfterTool"),
        Agent::Copilot => ("sessionStart", "preToolUse"),
        // Qwen Code and Factory Droid drop `PreToolUse` context.
        Agent::Qwen | Agent::Droid => ("SessionStart", "PostToolUse"),
        Agent::OpenCode => unreachable!("OpenCode runs no hook commands"),
    };
    let start_hook = format!("{hook} {start_event} E2E_START_CONTEXT");
    let tool_hook = format!("{hook} {tool_event} E2E_TOOL_CONTEXT");
    write_hooks(
        agent,
        repo.path(),
        &format!("{hook} {}", agent.end_of_turn_event()),
        &[(start_event, &start_hook), (tool_event, &tool_hook)],
    );
    let scenario = Scenario::new([
        Step::reply("E2E_RUNNING").shell("echo E2E_TOOL_OUTPUT; touch tool-ran.txt"),
        Step::reply("E2E_DONE"),
    ]);

    let Some(result) = run_agent(agent, repo.path(), "Please run it.", scenario) else {
        return;
    };
    result.report_timing("tool call");

    let summary = result.summary();
    assert!(result.status.success(), "{summary}");
    assert!(
        repo.path().join("tool-ran.txt").exists(),
        "the shell tool did not run the command\n{summary}"
    );
    let turns = result.turns();
    assert_eq!(turns.len(), 2, "the tool call, then the end\n{summary}");
    assert_eq!(
        turns[0]["tool"]["shell"], "echo E2E_TOOL_OUTPUT; touch tool-ran.txt",
        "the log names the step's tool call\n{summary}"
    );
    let places = |request: &serde_json::Value, needle: &str| -> Vec<Place> {
        conversation_texts(agent, request)
            .into_iter()
            .filter(|t| t.text.contains(needle))
            .map(|t| t.place)
            .collect()
    };
    let start_place = match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen => Place::System,
        Agent::Gemini | Agent::Copilot | Agent::Droid => Place::User,
        Agent::OpenCode => unreachable!("OpenCode runs no hook commands"),
    };
    assert_eq!(
        places(turns[0], "E2E_START_CONTEXT"),
        [start_place],
        "{summary}"
    );
    assert!(places(turns[0], "E2E_TOOL_CONTEXT").is_empty(), "{summary}");
    assert_eq!(
        places(turns[1], "E2E_TOOL_OUTPUT"),
        [Place::ToolResult],
        "{summary}"
    );
    let tool_place = match agent {
        Agent::Claude | Agent::Codex => Place::System,
        Agent::Gemini | Agent::Qwen => Place::ToolResult,
        Agent::Copilot | Agent::Droid => Place::User,
        Agent::OpenCode => unreachable!("OpenCode runs no hook commands"),
    };
    assert_eq!(
        places(turns[1], "E2E_TOOL_CONTEXT"),
        [tool_place],
        "{summary}"
    );
    assert_eq!(
        places(turns[1], "E2E_RUNNING"),
        [Place::Assistant],
        "{summary}"
    );
}

#[test]
fn claude_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Claude);
}

#[test]
fn gemini_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Gemini);
}

#[test]
fn codex_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Codex);
}

#[test]
fn copilot_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Copilot);
}

#[test]
fn qwen_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Qwen);
}

#[test]
fn droid_tool_call_and_hook_context_reach_the_model() {
    tool_call_and_hook_context_reach_the_model(Agent::Droid);
}
