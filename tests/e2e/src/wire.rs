//! Reading what a CLI sent to the model: the texts of the last user turn(s) of a logged request,
//! and the end-of-turn hook reasons inside them, unwrapped from each CLI's wrapper.
//!
//! | agent | wire shape of a blocked stop's reason R |
//! |---|---|
//! | Claude | `messages[]` user message, content `"Stop hook feedback:\n" + R` |
//! | Gemini | `contents[]` user turn whose first text part is exactly R |
//! | Codex | `input[]` user message `<hook_prompt hook_run_id="…">R</hook_prompt>`, R HTML-escaped |
//!
//! [`conversation_texts`] gives every text of a request's conversation with where it sits, for
//! finding what other hooks injected (`additionalContext`):
//!
//! | agent | SessionStart context C | tool-hook context C (PreToolUse, PostToolUse / AfterTool) |
//! |---|---|---|
//! | Claude | `system` text `SessionStart hook additional context: C\n\n# Environment…` | `system` text after the tool result: `PreToolUse:Bash hook additional context: C` (`\n\n`-joined with PostToolUse's) |
//! | Gemini | user text `<hook_context>C</hook_context>\n\n<prompt>`, `<`/`>` in C escaped | AfterTool only: appended to the `functionResponse` output, `\n\n<hook_context>C</hook_context>` |
//! | Codex | `developer` text C | `developer` text C after the `function_call` |

use serde_json::Value;

use crate::Agent;

/// Claude's prefix on a Stop hook's reason.
const CLAUDE_STOP_PREFIX: &str = "Stop hook feedback:\n";
/// Codex's wrapper around a Stop hook's reason.
const CODEX_OPEN: &str = "<hook_prompt";
const CODEX_CLOSE: &str = "</hook_prompt>";
/// What Copilot CLI puts around a prompt.
const COPILOT_TIME_OPEN: &str = "<current_datetime>";
const COPILOT_TIME_CLOSE: &str = "</current_datetime>";
const COPILOT_REMINDER_OPEN: &str = "\n\n<system_reminder>";

/// The user-role texts sent after the last assistant (model) message of a logged request (a
/// line of the mock's log; its `body` is read), in order. For the first request of a
/// conversation that is every user text, including the CLI's own preamble.
///
/// Claude: string contents, `text` blocks and `tool_result` texts of `user` messages (`system`
/// entries in `messages` are skipped). Gemini: `text` parts of `user` turns. Codex: `input_text`
/// parts of `user` messages (`developer` messages are skipped).
pub fn last_user_texts(agent: Agent, request: &Value) -> Vec<String> {
    trailing_user_turns(agent, &request["body"])
        .into_iter()
        .flatten()
        .collect()
}

/// The end-of-turn hook reasons carried by a logged request's trailing user turns, unwrapped and
/// (for Codex) HTML-unescaped. Empty when the request carries none.
///
/// Gemini sends the reason as a bare user turn, so for Gemini this is the first text of each
/// user turn that follows a model turn; a follow-up prompt typed by a user would look the same.
pub fn stop_feedback(agent: Agent, request: &Value) -> Vec<String> {
    let turns = trailing_user_turns(agent, &request["body"]);
    match agent {
        Agent::Claude => turns
            .iter()
            .flatten()
            .filter_map(|t| t.strip_prefix(CLAUDE_STOP_PREFIX))
            .map(|r| r.trim_end_matches('\n').to_owned())
            .collect(),
        Agent::Gemini => {
            let follows_model = request["body"]["contents"]
                .as_array()
                .is_some_and(|c| c.iter().any(|t| t["role"] == "model"));
            if follows_model {
                turns
                    .into_iter()
                    .filter_map(|t| t.into_iter().next())
                    .collect()
            } else {
                Vec::new()
            }
        }
        Agent::Codex => turns
            .iter()
            .flatten()
            .flat_map(|t| codex_hook_prompts(t))
            .collect(),
        Agent::Copilot | Agent::OpenCode | Agent::Qwen | Agent::Droid => {
            let follows_assistant = request["body"]["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["role"] == "assistant"));
            if !follows_assistant {
                return Vec::new();
            }
            let texts = turns.iter().flatten();
            match agent {
                // OpenCode's plugin sends the reason as the next prompt, as it is.
                Agent::OpenCode => texts.cloned().collect(),
                // Qwen Code sends it as a user message whose first part is the reason (hook
                // context for that prompt follows in parts of its own); Factory Droid as a user
                // message that is exactly the reason.
                Agent::Qwen | Agent::Droid => {
                    turns.iter().filter_map(|t| t.first().cloned()).collect()
                }
                _ => texts.filter_map(|t| copilot_prompt(t)).collect(),
            }
        }
    }
}

/// Where a text sits in a request's conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A user message (Gemini: a user turn's text part).
    User,
    /// A model message.
    Assistant,
    /// Claude's `role: "system"` entries in `messages`, Codex's `developer` (and `system`)
    /// messages: where both put hook context.
    System,
    /// A tool's result: Claude `tool_result`, Gemini `functionResponse`, Codex
    /// `function_call_output`.
    ToolResult,
}

/// One text of a request's conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationText {
    /// Where it sits.
    pub place: Place,
    /// The text as sent.
    pub text: String,
}

/// Every text of a logged request's conversation, in order, with where it sits: Claude
/// `messages` (the top-level `system` prompt is left out), Gemini `contents`, Codex `input`.
/// Tool calls themselves are left out; a Gemini `functionResponse` gives its `response.output`
/// (or the whole `response` as JSON).
pub fn conversation_texts(agent: Agent, request: &Value) -> Vec<ConversationText> {
    let body = &request["body"];
    let mut out = Vec::new();
    let mut push = |place, text: &str| {
        out.push(ConversationText {
            place,
            text: text.to_owned(),
        });
    };
    let items = |key: &str| body[key].as_array().cloned().unwrap_or_default();
    match agent {
        Agent::Claude | Agent::Droid => {
            for message in items("messages") {
                let place = match message["role"].as_str() {
                    Some("assistant") => Place::Assistant,
                    Some("system") => Place::System,
                    _ => Place::User,
                };
                match &message["content"] {
                    Value::String(s) => push(place, s),
                    Value::Array(blocks) => {
                        for block in blocks {
                            match block["type"].as_str() {
                                Some("text") => push(place, block["text"].as_str().unwrap_or("")),
                                Some("tool_result") => {
                                    for text in content_texts(&block["content"]) {
                                        push(Place::ToolResult, &text);
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Agent::Gemini => {
            for turn in items("contents") {
                let place = if turn["role"] == "model" {
                    Place::Assistant
                } else {
                    Place::User
                };
                for part in turn["parts"].as_array().into_iter().flatten() {
                    if let Some(text) = part["text"].as_str() {
                        push(place, text);
                    } else if let Some(response) = part.get("functionResponse") {
                        let response = &response["response"];
                        match response["output"].as_str() {
                            Some(output) => push(Place::ToolResult, output),
                            None => push(Place::ToolResult, &response.to_string()),
                        }
                    }
                }
            }
        }
        Agent::Copilot | Agent::OpenCode | Agent::Qwen => {
            for message in items("messages") {
                let place = match message["role"].as_str() {
                    Some("assistant") => Place::Assistant,
                    Some("system") => Place::System,
                    Some("tool") => Place::ToolResult,
                    _ => Place::User,
                };
                for text in content_texts(&message["content"]) {
                    push(place, &text);
                }
            }
        }
        Agent::Codex => {
            for item in items("input") {
                if item["type"] == "function_call_output" {
                    for text in content_texts(&item["output"]) {
                        push(Place::ToolResult, &text);
                    }
                    continue;
                }
                let place = match item["role"].as_str() {
                    Some("assistant") => Place::Assistant,
                    Some("developer" | "system") => Place::System,
                    Some("user") => Place::User,
                    _ => continue,
                };
                for text in content_texts(&item["content"]) {
                    push(place, &text);
                }
            }
        }
    }
    out
}

/// A content value's texts: a string, or the `text` of each part.
fn content_texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a request item came from the model.
type IsAssistant = fn(&Value) -> bool;
/// The texts of a user item, `None` for other roles.
type UserTexts = fn(&Value) -> Option<Vec<String>>;

/// The texts of each user turn after the last assistant turn, one `Vec` per turn.
fn trailing_user_turns(agent: Agent, body: &Value) -> Vec<Vec<String>> {
    let (items, is_assistant, user_texts): (&Value, IsAssistant, UserTexts) = match agent {
        Agent::Claude | Agent::Droid => (
            &body["messages"],
            |m| m["role"] == "assistant",
            claude_user_texts,
        ),
        Agent::Gemini => (
            &body["contents"],
            |c| c["role"] == "model",
            gemini_user_texts,
        ),
        Agent::Codex => (&body["input"], codex_is_assistant, codex_user_texts),
        Agent::Copilot | Agent::OpenCode | Agent::Qwen => (
            &body["messages"],
            |m| m["role"] == "assistant",
            codex_user_texts,
        ),
    };
    let items = items.as_array().map(Vec::as_slice).unwrap_or_default();
    let start = items.iter().rposition(is_assistant).map_or(0, |i| i + 1);
    items[start..].iter().filter_map(user_texts).collect()
}

fn claude_user_texts(message: &Value) -> Option<Vec<String>> {
    if message["role"] != "user" {
        return None;
    }
    Some(match &message["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .flat_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_owned).into_iter().collect(),
                Some("tool_result") => match &b["content"] {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(inner) => inner
                        .iter()
                        .filter_map(|i| i["text"].as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    })
}

fn gemini_user_texts(turn: &Value) -> Option<Vec<String>> {
    if turn["role"] != "user" {
        return None;
    }
    let parts = turn["parts"].as_array()?;
    Some(
        parts
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
    )
}

/// Whether a Responses input item came from the model: an assistant message, a tool call or a
/// reasoning item.
fn codex_is_assistant(item: &Value) -> bool {
    item["role"] == "assistant"
        || item["type"] == "reasoning"
        || item["type"].as_str().is_some_and(|t| t.ends_with("_call"))
}

fn codex_user_texts(item: &Value) -> Option<Vec<String>> {
    if item["role"] != "user" {
        return None;
    }
    Some(match &item["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    })
}

/// The unescaped bodies of every `<hook_prompt …>…</hook_prompt>` in `text`.
fn codex_hook_prompts(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(CODEX_OPEN) {
        let after_open = &rest[open..];
        let Some(tag_end) = after_open.find('>') else {
            break;
        };
        let inner = &after_open[tag_end + 1..];
        let Some(close) = inner.find(CODEX_CLOSE) else {
            break;
        };
        found.push(html_unescape(&inner[..close]));
        rest = &inner[close + CODEX_CLOSE.len()..];
    }
    found
}

/// Undoes the HTML escaping Codex applies to hook prompts.
/// The prompt in a user message of Copilot CLI: it puts `<current_datetime>…</current_datetime>`
/// and a blank line before the prompt, and a `<system_reminder>` block with
/// `userPromptSubmitted` context after it.
fn copilot_prompt(text: &str) -> Option<String> {
    let (_, prompt) = text
        .strip_prefix(COPILOT_TIME_OPEN)?
        .split_once(COPILOT_TIME_CLOSE)?;
    let prompt = prompt.strip_prefix("\n\n").unwrap_or(prompt);
    let prompt = prompt
        .rsplit_once(COPILOT_REMINDER_OPEN)
        .map_or(prompt, |(before, _)| before);
    Some(prompt.trim_end().to_owned())
}

fn html_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The wire shapes of protocols.md §1.5, §2.5 and §3.4, wrapped as mock log lines.
    fn logged(body: Value) -> Value {
        json!({ "kind": "turn", "body": body })
    }

    #[test]
    fn claude_reason_is_prefixed_user_text() {
        let first = logged(json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                         {"type": "text", "text": "hello there"}]}]}));
        assert_eq!(
            last_user_texts(Agent::Claude, &first),
            ["<system-reminder>x</system-reminder>", "hello there"]
        );
        assert!(stop_feedback(Agent::Claude, &first).is_empty());

        let second = logged(json!({"messages": [
            {"role": "user", "content": "hello there"},
            {"role": "system", "content": [{"type": "text", "text": "ctx"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "MOCK_REPLY_1"}]},
            {"role": "user", "content": "Stop hook feedback:\nR <1> & more"},
            {"role": "system", "content": [{"type": "text", "text": "Stop hook blocking error from command"}]},
            {"role": "user", "content": "Stop hook feedback:\n[/h]: EXIT2\n"}]}));
        assert_eq!(
            last_user_texts(Agent::Claude, &second),
            [
                "Stop hook feedback:\nR <1> & more",
                "Stop hook feedback:\n[/h]: EXIT2\n"
            ]
        );
        assert_eq!(
            stop_feedback(Agent::Claude, &second),
            ["R <1> & more", "[/h]: EXIT2"]
        );
    }

    #[test]
    fn gemini_reason_is_a_raw_user_turn() {
        let first = logged(json!({"contents": [
            {"role": "user", "parts": [{"text": "<session_context>…</session_context>"}]},
            {"role": "user", "parts": [{"text": "hello gemini"}]}]}));
        assert_eq!(
            last_user_texts(Agent::Gemini, &first),
            ["<session_context>…</session_context>", "hello gemini"]
        );
        assert!(stop_feedback(Agent::Gemini, &first).is_empty());

        let second = logged(json!({"contents": [
            {"role": "user", "parts": [{"text": "hello gemini"}]},
            {"role": "model", "parts": [{"text": "GEMINI_MOCK_REPLY_2"}]},
            {"role": "user", "parts": [{"text": "R <1> & more"},
                                       {"text": "<hook_context>CTX</hook_context>"}]}]}));
        assert_eq!(stop_feedback(Agent::Gemini, &second), ["R <1> & more"]);
    }

    #[test]
    fn conversation_texts_know_where_hook_context_sits() {
        let place_of = |agent, request: &Value, needle: &str| -> Vec<Place> {
            conversation_texts(agent, request)
                .into_iter()
                .filter(|t| t.text.contains(needle))
                .map(|t| t.place)
                .collect()
        };
        // Shapes observed from the real CLIs with hooks that print additionalContext.
        let claude = logged(json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "Probe."}]},
            {"role": "system", "content": "SessionStart hook additional context: CTX_START\n\n# Environment"},
            {"role": "assistant", "content": [{"type": "text", "text": "Running."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "CTX_NOT_TEXT"}}]},
            {"role": "user", "content": [{"tool_use_id": "t1", "type": "tool_result", "content": "TOOL_OUT"}]},
            {"role": "system", "content": [{"type": "text", "text": "PreToolUse:Bash hook additional context: CTX_TOOL"}]}]}));
        assert_eq!(
            place_of(Agent::Claude, &claude, "CTX_START"),
            [Place::System]
        );
        assert_eq!(
            place_of(Agent::Claude, &claude, "CTX_TOOL"),
            [Place::System]
        );
        assert_eq!(
            place_of(Agent::Claude, &claude, "TOOL_OUT"),
            [Place::ToolResult]
        );
        assert_eq!(
            place_of(Agent::Claude, &claude, "Running."),
            [Place::Assistant]
        );
        assert!(place_of(Agent::Claude, &claude, "CTX_NOT_TEXT").is_empty());

        let gemini = logged(json!({"contents": [
            {"role": "user", "parts": [{"text": "<session_context>x</session_context>"},
                                       {"text": "<hook_context>CTX_START</hook_context>\n\nProbe."}]},
            {"role": "model", "parts": [{"text": "Running."}, {"functionCall": {"name": "run_shell_command", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response":
                {"output": "Output: TOOL_OUT\n\n<hook_context>CTX_TOOL</hook_context>"}}}]}]}));
        assert_eq!(place_of(Agent::Gemini, &gemini, "CTX_START"), [Place::User]);
        assert_eq!(
            place_of(Agent::Gemini, &gemini, "CTX_TOOL"),
            [Place::ToolResult]
        );
        assert_eq!(
            place_of(Agent::Gemini, &gemini, "Running."),
            [Place::Assistant]
        );

        let codex = logged(json!({"input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "CTX_START"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Probe."}]},
            {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"},
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "CTX_TOOL"}]},
            {"type": "function_call_output", "call_id": "c1", "output": "Output:\nTOOL_OUT\n"}]}));
        assert_eq!(place_of(Agent::Codex, &codex, "CTX_START"), [Place::System]);
        assert_eq!(place_of(Agent::Codex, &codex, "CTX_TOOL"), [Place::System]);
        assert_eq!(
            place_of(Agent::Codex, &codex, "TOOL_OUT"),
            [Place::ToolResult]
        );
        assert_eq!(place_of(Agent::Codex, &codex, "Probe."), [Place::User]);
    }

    #[test]
    fn codex_reason_is_an_escaped_hook_prompt() {
        let second = logged(json!({"input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "CTX"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello codex"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "R1"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                "<hook_prompt hook_run_id=\"stop:4:/h/.codex/hooks.json\">R &lt;1&gt; &amp;amp; more</hook_prompt>"}]}]}));
        assert_eq!(
            last_user_texts(Agent::Codex, &second),
            [
                "<hook_prompt hook_run_id=\"stop:4:/h/.codex/hooks.json\">R &lt;1&gt; &amp;amp; more</hook_prompt>"
            ]
        );
        assert_eq!(stop_feedback(Agent::Codex, &second), ["R <1> &amp; more"]);

        let after_tool = logged(json!({"input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}]}));
        assert!(last_user_texts(Agent::Codex, &after_tool).is_empty());
        assert!(stop_feedback(Agent::Codex, &after_tool).is_empty());
    }
}
