//! Session continuity through the real agent CLIs, with our hooks installed by
//! `checkpoint install <agent>` and our adapters built from this workspace.
//!
//! - **Context notice**: at every tool call (Claude and Codex `PreToolUse`, Gemini `BeforeTool`)
//!   the hook reads the context usage from the transcript; at 80 % of the window or more it saves
//!   a checkpoint and tells the model `Checkpoint saved (context N %)`. The mock reports 85 % of
//!   the configured 200,000-token window with a reply that calls the shell tool, so the request
//!   that carries the tool's result must carry the notice: Claude and Codex as the `PreToolUse`
//!   context, Gemini inside the tool's result (the `AfterTool` context).
//! - **Resume**: an allowed stop saves a checkpoint; the next session's `SessionStart` (source
//!   `startup`, or `clear` after `/clear`) injects the restart context: `Resumed from checkpoint: `
//!   with `⚠️ SESSION RESET`, the progress logged with `checkpoint progress`, and the files
//!   modified.
//!
//! Every test starts from the `python-passing` fixture with [`CONFIG`] (a fixed window, so the
//! percentages do not depend on the model; no commit gate, so the uncommitted work of a session
//! does not block its stop).

use std::path::Path;

use checkpoint_e2e::scenario::{Scenario, Step, Usage};
use checkpoint_e2e::{
    Agent, ConversationText, Place, RunResult, Session, checkpoint_project, conversation_texts,
    run_ok, shell_quote, workspace_binaries,
};
use serde_json::{Value, json};

/// Appended to the fixture's `checkpoint.toml`.
const CONFIG: &str = "[context]\nwindow = 200000\n\n[stop]\ncommit_gate = false\n";
/// The prompt tokens of [`USAGE_85`]: 85 % of the configured window.
const USED_85: u64 = 170_000;
/// 2,000 uncached + 8,000 cache-write + 160,000 cache-read prompt tokens. Claude counts the three
/// fields; the mock sends Gemini `promptTokenCount` and Codex `input_tokens` as their sum.
const USAGE_85: Usage = Usage {
    input_tokens: 2_000,
    output_tokens: 50,
    cache_creation_input_tokens: 8_000,
    cache_read_input_tokens: 160_000,
};

/// What the model is told at a tool call once the context is at 85 %.
const NOTICE: &str = "Checkpoint saved (context 85 %)";
/// The start of any context notice, whatever the percentage.
const ANY_NOTICE: &str = "Checkpoint saved (context";

/// How the restart context starts.
const RESUMED: &str = "Resumed from checkpoint: ";
/// Restart-context lines.
const SESSION_RESET: &str = "⚠️ SESSION RESET";
const PROGRESS_HEADER: &str = "Progress logged before reset:";
const FILES_HEADER: &str = "Files modified (do not recreate):";
/// What the first session logs with `checkpoint progress`.
const PROGRESS: &str = "created the schema";
/// The file the first session writes and leaves uncommitted.
const SCHEMA_FILE: &str = "schema.sql";
const SCHEMA: &str = "CREATE TABLE calc_history (a INTEGER, b INTEGER, result INTEGER);\n";
/// The first session's last message: the summary of the checkpoint its stop saves.
const FIRST_SESSION_END: &str = "Created the schema.";

/// A session for `agent` and a `python-passing` repository with [`CONFIG`] and our hooks; `None`
/// when the test is not run (see [`Session::new`]).
fn project(agent: Agent) -> Option<(Session, tempfile::TempDir)> {
    let session = Session::new(agent)?;
    let repo = checkpoint_project(&session, "python-passing", CONFIG);
    Some((session, repo))
}

/// Every conversation text of `request` that contains `needle`.
fn texts_with(agent: Agent, request: &Value, needle: &str) -> Vec<ConversationText> {
    conversation_texts(agent, request)
        .into_iter()
        .filter(|t| t.text.contains(needle))
        .collect()
}

/// The run exited 0 and every request was routed.
fn assert_ran(result: &RunResult) {
    assert!(result.status.success(), "{}", result.summary());
    for request in &result.requests {
        assert_ne!(
            request["api"],
            "unknown",
            "unrouted request: {request}\n{}",
            result.summary()
        );
    }
}

/// `checkpoint log --json` in `repo` with the session's environment: the project's session
/// checkpoints, newest first (no task is active in these tests).
fn checkpoint_log(session: &Session, repo: &Path) -> Vec<Value> {
    let checkpoint = &workspace_binaries().checkpoint;
    let stdout = run_ok(session, checkpoint, &["log", "--json"], repo);
    serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "checkpoint log --json printed no JSON array ({e}):\n{}",
            String::from_utf8_lossy(&stdout)
        )
    })
}

/// The context notice reaches the model with the result of the tool call it was raised at, in
/// the place `agent` puts that hook's context.
fn assert_notice_placed(agent: Agent, notice: &ConversationText, summary: &str) {
    let text = &notice.text;
    let placed = match agent {
        // A `role: "system"` entry after the tool result:
        // "PreToolUse:Bash hook additional context: <context>", or PostToolUse's when Claude had
        // not yet written the reply that asked for the tool when PreToolUse ran.
        Agent::Claude => {
            notice.place == Place::System
                && ["PreToolUse", "PostToolUse"].iter().any(|event| {
                    text.find(&format!("{event}:Bash hook additional context: "))
                        .zip(text.find(NOTICE))
                        .is_some_and(|(wrapper, at)| wrapper < at)
                })
        }
        // Appended to the tool's output: "…\n\n<hook_context><context></hook_context>".
        Agent::Gemini => {
            notice.place == Place::ToolResult
                && text
                    .find("<hook_context>")
                    .zip(text.find(NOTICE))
                    .zip(text.rfind("</hook_context>"))
                    .is_some_and(|((open, at), close)| open < at && at < close)
        }
        // A developer message after the function call.
        Agent::Codex => notice.place == Place::System,
        // A user message after the tool's result, "Additional context from preToolUse
        // hook:\n<context>"; or appended to the result, "…\n\nTool \"bash\" succeeded.
        // Additional guidance from postToolUse hooks:\n<context>", when Copilot had not yet
        // written the reply's usage to its event log when preToolUse ran.
        Agent::Copilot => match notice.place {
            Place::User => text.starts_with(&format!(
                "Additional context from preToolUse hook:\n{NOTICE}"
            )),
            Place::ToolResult => text.contains(&format!(
                "Additional guidance from postToolUse hooks:\n{NOTICE}"
            )),
            _ => false,
        },
        // Appended to the tool's output by the plugin (OpenCode) or by Qwen Code's
        // `PostToolUse`: "…\n\n<context>".
        Agent::OpenCode | Agent::Qwen => {
            notice.place == Place::ToolResult && text.contains(&format!("\n\n{NOTICE}"))
        }
        // Droid's `PostToolUse` context: a user message of its own after the tool's result.
        Agent::Droid => notice.place == Place::User && text.starts_with(NOTICE),
    };
    assert!(
        placed,
        "{agent}: the notice is not where {agent} puts a tool hook's context: {notice:#?}\n{summary}"
    );
}

/// Step 1 reports 85 % of the window and runs a shell command; the request with the command's
/// result must carry `Checkpoint saved (context 85 %)`, once. Step 2 reports ~0 % and runs
/// another command: no second notice. The checkpoint is in `checkpoint log --json`.
fn context_notice_at_next_tool_call(agent: Agent) {
    let Some((mut session, repo)) = project(agent) else {
        return;
    };
    let result = session.run(
        repo.path(),
        "Look around the repository.",
        Scenario::new([
            // Claude Code writes the reply (and its usage) to the transcript after the
            // pre-tool hook, asynchronously: the second the command takes lets the post-tool
            // hook find it even on a loaded machine (without it, the notice comes one tool call
            // later).
            Step::reply("Checking the worktree.")
                .shell("sleep 1; git status --short")
                .usage(USAGE_85),
            Step::reply("Once more, with a small context.").shell("true"),
            Step::reply("All done."),
        ]),
    );
    result.report_timing("context notice");
    let summary = result.summary();
    assert_ran(&result);
    let turns = result.turns();
    assert_eq!(
        turns.len(),
        3,
        "one turn per step: two tool calls, then the end\n{summary}"
    );
    assert!(
        texts_with(agent, turns[0], ANY_NOTICE).is_empty(),
        "a notice before the first tool call\n{summary}"
    );
    // OpenCode records an answer's token usage when its step ends, after the step's tools ran:
    // the plugin has it for the next tool call, whose result carries the notice.
    let (noticed, after) = match agent {
        Agent::OpenCode => {
            assert!(
                texts_with(agent, turns[1], ANY_NOTICE).is_empty(),
                "{agent}: a notice before the answer's usage was recorded\n{summary}"
            );
            (turns[2], None)
        }
        _ => (turns[1], Some(turns[2])),
    };

    let notices = texts_with(agent, noticed, ANY_NOTICE);
    let [notice] = notices.as_slice() else {
        panic!(
            "{agent}: expected one context notice in the request after the tool call at 85 %, \
             got {notices:#?}\n{summary}"
        );
    };
    assert!(
        notice.text.contains(NOTICE),
        "{agent}: the notice does not say {NOTICE:?}: {notice:#?}\n{summary}"
    );
    assert_notice_placed(agent, notice, &summary);

    if let Some(after) = after {
        let later = texts_with(agent, after, ANY_NOTICE);
        assert_eq!(
            later.len(),
            1,
            "{agent}: a tool call at ~0 % of the window must not add a notice: {later:#?}\n{summary}"
        );
    }

    let log = checkpoint_log(&session, repo.path());
    let expected = json!({"used": USED_85, "window": 200_000, "percent": 85});
    assert!(
        log.iter()
            .any(|c| c["context"] == expected && c["session"]["agent"] == agent.name()),
        "{agent}: no {agent} checkpoint with context {expected} in `checkpoint log --json`:\n{}\n{summary}",
        serde_json::to_string_pretty(&log).unwrap_or_default()
    );
}

/// The first session's work: write `schema.sql` (left uncommitted), log the progress with
/// `checkpoint progress` through the agent's shell tool, and end the turn.
fn create_schema_steps() -> Vec<Step> {
    let checkpoint = workspace_binaries()
        .checkpoint
        .to_str()
        .expect("the checkpoint binary's path is UTF-8");
    vec![
        Step::reply("Writing the schema, then logging the progress.")
            .write(SCHEMA_FILE, SCHEMA)
            .shell(format!(
                "{} progress {}",
                shell_quote(checkpoint),
                shell_quote(PROGRESS)
            )),
        Step::reply(FIRST_SESSION_END),
    ]
}

/// The tool results a request carries, for assertion messages.
fn tool_results(agent: Agent, request: &Value) -> Vec<String> {
    conversation_texts(agent, request)
        .into_iter()
        .filter(|t| t.place == Place::ToolResult)
        .map(|t| t.text)
        .collect()
}

/// The restart context in `request`, from `Resumed from checkpoint: ` to its end, delivered as
/// `agent` delivers a `SessionStart` hook's context:
///
/// - Claude: a `role: "system"` text `SessionStart hook additional context: <context>…` (the
///   CLI's `# Environment` section follows);
/// - Gemini: a user text `<hook_context><context></hook_context>\n\n<prompt>`, `<`/`>` escaped;
/// - Codex: a developer message that is the context;
/// - Copilot: a user message that is the context;
/// - OpenCode: a text of the first user message that is the context;
/// - Droid: the first user message, which is the context;
/// - Qwen: the system prompt, `<qwen:session-start-context hidden="true">\nSessionStart
///   additional context:\n<context>…`.
fn restart_context(agent: Agent, request: &Value) -> Option<String> {
    conversation_texts(agent, request)
        .into_iter()
        .find_map(|t| match agent {
            Agent::Claude => {
                let wrapped = format!("SessionStart hook additional context: {RESUMED}");
                let at = t.text.find(&wrapped)?;
                (t.place == Place::System)
                    .then(|| t.text[at + wrapped.len() - RESUMED.len()..].to_owned())
            }
            Agent::Gemini => {
                let inner = t.text.split("<hook_context>").nth(1)?;
                let inner = inner.split("</hook_context>").next()?;
                (t.place == Place::User && inner.starts_with(RESUMED))
                    .then(|| inner.replace("&lt;", "<").replace("&gt;", ">"))
            }
            Agent::Codex => {
                (t.place == Place::System && t.text.starts_with(RESUMED)).then_some(t.text)
            }
            Agent::Qwen => {
                let wrapped = format!("SessionStart additional context:\n{RESUMED}");
                let at = t.text.find(&wrapped)?;
                (t.place == Place::System)
                    .then(|| t.text[at + wrapped.len() - RESUMED.len()..].to_owned())
            }
            // OpenCode: a text part of the session's first user message, added by the plugin.
            Agent::Copilot | Agent::OpenCode | Agent::Droid => {
                (t.place == Place::User && t.text.starts_with(RESUMED)).then_some(t.text)
            }
        })
}

/// `request` carries the restart context of the first session's checkpoint, in `agent`'s
/// `SessionStart` wrapper: the reset warning, the logged progress and the modified file.
/// `progressed` is the first session's request that carries the `checkpoint progress` result
/// (shown when the context is missing).
fn assert_restart_context(agent: Agent, request: &Value, progressed: &Value, summary: &str) {
    let Some(context) = restart_context(agent, request) else {
        let anywhere = texts_with(agent, request, RESUMED.trim_end());
        panic!(
            "{agent}: no `{RESUMED}…` SessionStart context in the new session's first request \
             (texts that mention it anywhere: {anywhere:#?}; the first session's tool results: \
             {:#?})\n{summary}",
            tool_results(agent, progressed),
        );
    };
    for needle in [SESSION_RESET, PROGRESS_HEADER, PROGRESS, FILES_HEADER] {
        assert!(
            context.contains(needle),
            "{agent}: the restart context lacks {needle:?}:\n{context}\n{summary}"
        );
    }
    let files = &context[context.find(FILES_HEADER).unwrap_or(0)..];
    assert!(
        files.contains(SCHEMA_FILE),
        "{agent}: {SCHEMA_FILE} is not listed under {FILES_HEADER:?}:\n{context}\n{summary}"
    );
}

/// Session 1 writes `schema.sql`, logs `created the schema` and ends its turn; session 2, a new
/// session in the same repository (`SessionStart` source `startup`), starts with the restart
/// context in its first model request.
fn second_session_resumes(agent: Agent) {
    let Some((mut session, repo)) = project(agent) else {
        return;
    };
    let first = session.run(
        repo.path(),
        "Create the schema.",
        Scenario::new(create_schema_steps()),
    );
    first.report_timing("first session");
    assert_ran(&first);
    assert_eq!(first.turns().len(), 2, "{}", first.summary());
    assert!(
        repo.path().join(SCHEMA_FILE).exists(),
        "{}",
        first.summary()
    );

    let second = session.run(
        repo.path(),
        "Continue where the last session stopped.",
        Scenario::new([Step::reply("Picking up from the checkpoint.")]),
    );
    second.report_timing("second session");
    let summary = second.summary();
    assert_ran(&second);
    let turns = second.turns();
    assert!(!turns.is_empty(), "{summary}");
    assert_restart_context(agent, turns[0], first.turns()[1], &summary);
}

/// Claude only: one `claude -p --input-format stream-json` process (`Session::run_messages`)
/// gets `Create the schema.`, then `/clear`, then `Continue …`. The first session's stop saves the
/// checkpoint; `/clear` ends that session and starts a new one with `SessionStart` source
/// `clear`, whose first request must carry the restart context and none of the cleared
/// conversation. The session that `/clear` replaced started before any checkpoint existed, so the
/// context can only come from the `clear` start.
///
/// Gemini (`gemini -p "/clear"` sends `/clear` to the model as a prompt) and Codex (`codex exec
/// "/clear"` too) cannot `/clear` headless; in their TUIs (see the README) Codex delivers the
/// `clear` context and Gemini 0.61.0 drops it.
#[test]
fn clear_resumes_claude() {
    let agent = Agent::Claude;
    let Some((mut session, repo)) = project(agent) else {
        return;
    };
    let mut steps = create_schema_steps();
    steps.push(Step::reply("Picking up from the checkpoint."));
    let result = session.run_messages(
        repo.path(),
        &[
            "Create the schema.",
            "/clear",
            "Continue where the last session stopped.",
        ],
        Scenario::new(steps),
    );
    result.report_timing("clear");
    let summary = result.summary();
    assert_ran(&result);
    let turns = result.turns();
    assert_eq!(
        turns.len(),
        3,
        "two turns before /clear, one after\n{summary}"
    );
    let cleared: Vec<ConversationText> = conversation_texts(agent, turns[2])
        .into_iter()
        .filter(|t| t.place == Place::Assistant)
        .collect();
    assert!(
        cleared.is_empty(),
        "the request after /clear still carries the old conversation: {cleared:#?}\n{summary}"
    );
    assert_restart_context(agent, turns[2], turns[1], &summary);
}

#[test]
fn context_notice_at_next_tool_call_claude() {
    context_notice_at_next_tool_call(Agent::Claude);
}

#[test]
fn context_notice_at_next_tool_call_gemini() {
    context_notice_at_next_tool_call(Agent::Gemini);
}

#[test]
fn context_notice_at_next_tool_call_codex() {
    context_notice_at_next_tool_call(Agent::Codex);
}

#[test]
fn context_notice_at_next_tool_call_copilot() {
    context_notice_at_next_tool_call(Agent::Copilot);
}

#[test]
fn context_notice_at_next_tool_call_opencode() {
    context_notice_at_next_tool_call(Agent::OpenCode);
}

#[test]
fn context_notice_at_next_tool_call_qwen() {
    context_notice_at_next_tool_call(Agent::Qwen);
}

#[test]
fn second_session_resumes_claude() {
    second_session_resumes(Agent::Claude);
}

#[test]
fn second_session_resumes_gemini() {
    second_session_resumes(Agent::Gemini);
}

#[test]
fn second_session_resumes_codex() {
    second_session_resumes(Agent::Codex);
}

#[test]
fn second_session_resumes_copilot() {
    second_session_resumes(Agent::Copilot);
}

#[test]
fn second_session_resumes_opencode() {
    second_session_resumes(Agent::OpenCode);
}

#[test]
fn second_session_resumes_qwen() {
    second_session_resumes(Agent::Qwen);
}

#[test]
fn second_session_resumes_droid() {
    second_session_resumes(Agent::Droid);
}
