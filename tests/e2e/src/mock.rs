//! The scripted model server: Anthropic Messages, Gemini `generateContent`, OpenAI Responses and
//! OpenAI Chat Completions on 127.0.0.1, answering from a [`Scenario`] and logging every request as JSONL.
//!
//! Replies are sent whole (`Content-Length`, no chunking), SSE included; all three CLIs accept
//! that. Which requests consume a scenario step (see [`Kind::Turn`]):
//!
//! | API | turn | answered without a step |
//! |---|---|---|
//! | Anthropic `POST /v1/messages` | a request that offers tools | `count_tokens`; the `/compact` summary request ("CRITICAL: Respond with TEXT ONLY"); tool-less side calls |
//! | Gemini `POST /v1beta/models/<m>:<method>` | `streamGenerateContent` | `countTokens`; `generateContent` with a JSON schema (the router) or without one |
//! | OpenAI `POST /v1/responses` | `x-codex-turn-metadata` `request_kind` `turn` (or no header) | `request_kind` `compaction` or anything else; title generation |
//! | OpenAI `POST /v1/chat/completions` | a request that offers tools | its compaction summary request ("Tools are unavailable in this step"); tool-less side calls |
//!
//! A step with a [`ToolCall`] answers with its text and then a call of the CLI's shell tool:
//!
//! | API | the call | stop |
//! |---|---|---|
//! | Anthropic | a `tool_use` block `Bash` `{"command", "description"}` (Factory Droid: `Execute` `{"command", "summary", "riskLevelReason", "riskLevel"}`, when offered; streamed as one `input_json_delta`) | `stop_reason: "tool_use"` |
//! | Gemini | a `functionCall` part `run_shell_command` `{"command", "description"}` | `finishReason: "STOP"` |
//! | OpenAI | a `function_call` output item `exec_command`, `arguments` `{"cmd"}`, `call_id` `call_mock_<seq>` | `response.completed` |
//! | OpenAI Chat | a `tool_calls` delta `bash` (Qwen Code: `run_shell_command`, when offered) `{"command", "description"}`, `id` `call_mock_<seq>` | `finish_reason: "tool_calls"` |
//!
//! Each CLI then runs the command (with its tool hooks) and sends the result in its next turn
//! request. The log line of the request that got the call has it under `tool`. A step with a
//! [`ToolCall::Subagent`] calls Claude's `Agent` tool instead (`{"description", "prompt",
//! "subagent_type": "general-purpose", "run_in_background": false}`); the subagent's turns are
//! turn requests of their own and take the next steps. [`ToolCall::Read`] and [`ToolCall::Edit`]
//! call Claude's `Read` and `Edit` tools.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use serde::Serialize;
use serde_json::{Value, json};

use crate::scenario::{ActionOutcome, EXHAUSTED_REPLY, Scenario, ToolCall, Usage};

/// The reply to a compaction (summary) request. Claude retries once when the reply has no
/// `<summary>` block, so the block is always there.
pub const COMPACTION_REPLY: &str = "<summary>Mock compaction summary.</summary>";
/// The reply to a title-generation request.
pub const TITLE_REPLY: &str = "Mock task";
/// The reply to any other side call that is not a turn.
pub const SIDE_REPLY: &str = "OK";

/// Marker text of Claude's `/compact` summary prompt.
const CLAUDE_COMPACTION_MARKER: &str = "CRITICAL: Respond with TEXT ONLY";
/// Marker text of Copilot CLI's compaction (summary) prompt.
const COPILOT_COMPACTION_MARKER: &str = "Tools are unavailable in this step";
/// Marker text of Codex's title-generation prompt.
const CODEX_TITLE_MARKER: &str = "Generate a concise, single-line task title";
/// Claude Code's shell tool.
pub const CLAUDE_SHELL_TOOL: &str = "Bash";
/// Claude Code's subagent tool.
pub const CLAUDE_SUBAGENT_TOOL: &str = "Agent";
/// Claude Code's tool that writes a whole file.
pub const CLAUDE_WRITE_TOOL: &str = "Write";
/// Gemini CLI's shell tool.
pub const GEMINI_SHELL_TOOL: &str = "run_shell_command";
/// Codex's shell tool.
pub const CODEX_SHELL_TOOL: &str = "exec_command";
/// GitHub Copilot CLI's shell tool.
pub const COPILOT_SHELL_TOOL: &str = "bash";
/// Qwen Code's shell tool (Gemini CLI's name, on the Chat Completions API).
pub const QWEN_SHELL_TOOL: &str = "run_shell_command";
/// Factory Droid's shell tool (on the Anthropic Messages API).
pub const DROID_SHELL_TOOL: &str = "Execute";
/// The `description` argument the mock gives Claude's and Gemini's shell tools.
const SHELL_DESCRIPTION: &str = "e2e scenario step";
/// Headers whose values are replaced in the log.
const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];

/// Which provider API a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Anthropic Messages (Claude Code).
    Anthropic,
    /// Gemini `generateContent` family (Gemini CLI).
    Gemini,
    /// OpenAI Responses (Codex).
    OpenAi,
    /// OpenAI Chat Completions (GitHub Copilot CLI's bring-your-own-model default).
    OpenAiChat,
    /// No route matched; answered 404.
    Unknown,
}

/// What a request is for; only [`Kind::Turn`] consumes a scenario step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A real agent turn: consumes the next step.
    Turn,
    /// A JSON-schema request (Gemini's model router): answered with JSON fitting the schema.
    Router,
    /// A token count.
    CountTokens,
    /// A context compaction (summary) request.
    Compaction,
    /// A title-generation request.
    Title,
    /// Any other side call.
    Side,
    /// No route matched.
    Unknown,
}

/// A running mock model server. Dropping it stops the server.
pub struct MockServer {
    server: Arc<tiny_http::Server>,
    state: Arc<Mutex<State>>,
    stopping: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    port: u16,
}

/// The scenario being played and where requests are logged.
struct State {
    scenario: Scenario,
    root: PathBuf,
    next_step: usize,
    seq: u64,
    log: Option<File>,
}

impl MockServer {
    /// Starts a server on `127.0.0.1:port` (0 picks a free port), with an empty scenario and no
    /// log until [`MockServer::begin`].
    pub fn start(port: u16) -> io::Result<Self> {
        let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(io::Error::other)?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| io::Error::other("mock-model: not listening on an IP socket"))?;
        let server = Arc::new(server);
        let state = Arc::new(Mutex::new(State {
            scenario: Scenario::default(),
            root: PathBuf::from("."),
            next_step: 0,
            seq: 0,
            log: None,
        }));
        let stopping = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (server, state, stopping) = (server.clone(), state.clone(), stopping.clone());
            std::thread::Builder::new()
                .name("mock-model-accept".into())
                .spawn(move || {
                    loop {
                        match server.recv() {
                            Ok(request) => {
                                let state = state.clone();
                                // A request whose thread cannot start is dropped; the client
                                // sees a closed connection and fails loudly.
                                let _ = std::thread::Builder::new()
                                    .name("mock-model-request".into())
                                    .spawn(move || handle(request, &state));
                            }
                            Err(_) if stopping.load(Ordering::SeqCst) => break,
                            Err(_) => {}
                        }
                    }
                })?
        };
        Ok(Self {
            server,
            state,
            stopping,
            acceptor: Some(acceptor),
            port,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts playing `scenario` from its first step: `before` actions run in `root`, and every
    /// request from now on is appended to `log` (created or truncated).
    pub fn begin(&self, scenario: Scenario, root: &Path, log: &Path) -> io::Result<()> {
        let file = File::create(log)?;
        let mut state = lock(&self.state);
        state.scenario = scenario;
        state.root = root.to_path_buf();
        state.next_step = 0;
        state.log = Some(file);
        Ok(())
    }

    /// Blocks until the server stops (it only stops when dropped from another thread or when
    /// the process ends); used by the `mock-model` binary.
    pub fn wait(mut self) {
        if let Some(acceptor) = self.acceptor.take() {
            // A panicked acceptor has nothing left to clean up.
            let _ = acceptor.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.server.unblock();
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic in one request thread must not wedge the others; the state stays consistent
    // because every mutation completes before anything that can panic.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How a request was routed.
#[derive(Debug, Clone, PartialEq)]
struct Route {
    api: Api,
    kind: Kind,
    /// The model named in the body (Anthropic, OpenAI) or the path (Gemini).
    model: String,
    /// Whether the answer is a stream (SSE).
    stream: bool,
}

/// Classifies a request from its method, path, headers and JSON body.
fn route(method: &str, path: &str, headers: &BTreeMap<String, String>, body: &Value) -> Route {
    let body_model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_owned();
    let body_stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    let unknown = Route {
        api: Api::Unknown,
        kind: Kind::Unknown,
        model: body_model.clone(),
        stream: false,
    };
    if method != "POST" {
        return unknown;
    }
    match path {
        "/v1/messages/count_tokens" => Route {
            api: Api::Anthropic,
            kind: Kind::CountTokens,
            model: body_model,
            stream: false,
        },
        "/v1/messages" => Route {
            api: Api::Anthropic,
            kind: messages_kind(body, CLAUDE_COMPACTION_MARKER),
            model: body_model,
            stream: body_stream,
        },
        "/v1/chat/completions" => Route {
            api: Api::OpenAiChat,
            kind: messages_kind(body, COPILOT_COMPACTION_MARKER),
            model: body_model,
            stream: body_stream,
        },
        "/v1/responses" => {
            let request_kind = headers
                .get("x-codex-turn-metadata")
                .and_then(|m| serde_json::from_str::<Value>(m).ok())
                .and_then(|m| {
                    m.get("request_kind")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            let input = body.get("input").map(Value::to_string).unwrap_or_default();
            let kind = if input.contains(CODEX_TITLE_MARKER) {
                Kind::Title
            } else {
                match request_kind.as_deref() {
                    None | Some("turn") => Kind::Turn,
                    Some("compaction") => Kind::Compaction,
                    Some(_) => Kind::Side,
                }
            };
            Route {
                api: Api::OpenAi,
                kind,
                model: body_model,
                stream: body_stream,
            }
        }
        _ => {
            let Some((model, method)) = path
                .strip_prefix("/v1beta/models/")
                .and_then(|rest| rest.split_once(':'))
            else {
                return unknown;
            };
            let config = body.get("generationConfig");
            let has_schema = config.is_some_and(|c| {
                c.get("responseJsonSchema").is_some() || c.get("responseSchema").is_some()
            });
            let (kind, stream) = match method {
                "streamGenerateContent" => (Kind::Turn, true),
                "generateContent" if has_schema => (Kind::Router, false),
                "generateContent" => (Kind::Side, false),
                "countTokens" => (Kind::CountTokens, false),
                _ => return unknown,
            };
            Route {
                api: Api::Gemini,
                kind,
                model: model.to_owned(),
                stream,
            }
        }
    }
}

/// What a request with a `messages` list is for: a compaction when its last message holds the
/// CLI's `compaction_marker`, a turn when it offers tools, else a side call.
fn messages_kind(body: &Value, compaction_marker: &str) -> Kind {
    let last_message = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default();
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if last_message.contains(compaction_marker) {
        Kind::Compaction
    } else if has_tools {
        Kind::Turn
    } else {
        Kind::Side
    }
}

/// Serves one request: read, route, consume a step if it is a turn, log, answer.
fn handle(mut request: tiny_http::Request, state: &Mutex<State>) {
    let method = request.method().as_str().to_owned();
    let (path, query) = match request.url().split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (request.url().to_owned(), None),
    };
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .map(|h| {
            let name = h.field.as_str().as_str().to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                "<redacted>".to_owned()
            } else {
                h.value.as_str().to_owned()
            };
            (name, value)
        })
        .collect();
    let mut raw = Vec::new();
    let read_error = request.as_reader().read_to_end(&mut raw).err();
    let body: Value = serde_json::from_slice(&raw).unwrap_or_else(|_| {
        json!({ "_raw": String::from_utf8_lossy(&raw), "_read_error": read_error.map(|e| e.to_string()) })
    });
    let route = route(&method, &path, &headers, &body);

    let mut state = lock(state);
    state.seq += 1;
    let seq = state.seq;
    let mut step_index = None;
    let mut actions: Vec<ActionOutcome> = Vec::new();
    let mut tool = None;
    let (reply, usage) = match route.kind {
        Kind::Turn => {
            let index = state.next_step;
            let step = state.scenario.steps.get(index).cloned();
            match step {
                Some(step) => {
                    state.next_step += 1;
                    step_index = Some(index);
                    actions = step.before.iter().map(|a| a.apply(&state.root)).collect();
                    tool = step.tool;
                    (step.reply, step.usage)
                }
                None => {
                    // The context does not shrink because the script ran out.
                    let usage = state
                        .scenario
                        .steps
                        .last()
                        .map(|s| s.usage)
                        .unwrap_or_default();
                    (EXHAUSTED_REPLY.to_owned(), usage)
                }
            }
        }
        Kind::Router => (
            schema_example(gemini_schema(&body)).to_string(),
            side_usage(),
        ),
        Kind::Compaction => (COMPACTION_REPLY.to_owned(), side_usage()),
        Kind::Title => (TITLE_REPLY.to_owned(), side_usage()),
        Kind::Side | Kind::CountTokens | Kind::Unknown => (SIDE_REPLY.to_owned(), side_usage()),
    };
    let count = u64::try_from(raw.len() / 4).unwrap_or(u64::MAX).max(1);
    let answer = Answer {
        text: &reply,
        tool: tool.as_ref(),
        usage: &usage,
        seq,
        shell: shell_tool(route.api, &body),
    };
    let (status, content_type, payload) = render(&route, &answer, count);

    let entry = json!({
        "seq": seq,
        "method": method,
        "path": path,
        "query": query,
        "api": route.api,
        "kind": route.kind,
        "step": step_index,
        "exhausted": route.kind == Kind::Turn && step_index.is_none(),
        "actions": actions,
        "reply": reply,
        "tool": tool,
        "status": status,
        "headers": headers,
        "body": body,
    });
    if let Some(log) = state.log.as_mut() {
        let mut line = entry.to_string();
        line.push('\n');
        // A log write failure surfaces as a missing request in the test's assertions.
        let _ = log.write_all(line.as_bytes());
    }
    drop(state);

    let response = tiny_http::Response::from_data(payload)
        .with_status_code(status)
        .with_header(
            tiny_http::Header::from_bytes("Content-Type", content_type)
                .expect("a static content type is a valid header"),
        );
    // The client hung up; nothing to do.
    let _ = request.respond(response);
}

/// Usage reported for side calls.
fn side_usage() -> Usage {
    Usage {
        input_tokens: 10,
        output_tokens: 1,
        ..Usage::default()
    }
}

/// The JSON schema of a Gemini structured-output request.
fn gemini_schema(body: &Value) -> &Value {
    let config = &body["generationConfig"];
    match config.get("responseJsonSchema") {
        Some(schema) => schema,
        None => &config["responseSchema"],
    }
}

/// A value that satisfies `schema` (the subset Gemini CLI uses): every property filled,
/// numbers at their minimum but at least 1, the first enum value (`"user"` when offered, so a
/// next-speaker check hands the turn back).
fn schema_example(schema: &Value) -> Value {
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        let user = Value::from("user");
        return if options.contains(&user) {
            user
        } else {
            options.first().cloned().unwrap_or(Value::Null)
        };
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".to_owned(),
        _ => "string".to_owned(),
    };
    match kind.as_str() {
        "object" => Value::Object(
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| {
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), schema_example(v)))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        "array" => json!([schema_example(&schema["items"])]),
        "integer" | "number" => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0);
            let max = schema
                .get("maximum")
                .and_then(Value::as_f64)
                .unwrap_or(f64::MAX);
            let value = min.max(1.0).min(max);
            if kind == "integer" {
                // Integral after ceil(), and schema bounds are small, so the cast is exact.
                json!(value.ceil() as i64)
            } else {
                json!(value)
            }
        }
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        _ => Value::from("mock"),
    }
}

/// What the mock model says in one answer.
struct Answer<'a> {
    /// The assistant's text (left out of the answer when empty and a tool is called).
    text: &'a str,
    /// The tool called after the text, if any.
    tool: Option<&'a ToolCall>,
    /// The usage reported.
    usage: &'a Usage,
    /// The request's sequence number, for unique ids.
    seq: u64,
    /// The shell tool an Anthropic or Chat Completions answer calls ([`shell_tool`]).
    shell: &'static str,
}

impl Answer<'_> {
    /// Whether the text goes into the answer: always, unless it is empty and a tool is called.
    fn has_text(&self) -> bool {
        !self.text.is_empty() || self.tool.is_none()
    }
}

/// The HTTP status, content type and body answering a routed request.
fn render(route: &Route, answer: &Answer<'_>, count: u64) -> (u16, &'static str, Vec<u8>) {
    const SSE: &str = "text/event-stream";
    const JSON: &str = "application/json";
    let json_body = |v: Value| (200, JSON, v.to_string().into_bytes());
    match (route.api, route.kind) {
        (Api::Unknown, _) => (
            404,
            JSON,
            json!({"error": {"message": "mock-model: no such route"}})
                .to_string()
                .into_bytes(),
        ),
        (Api::Anthropic, Kind::CountTokens) => json_body(json!({ "input_tokens": count })),
        (Api::Gemini, Kind::CountTokens) => json_body(json!({ "totalTokens": count })),
        (Api::Anthropic, _) if route.stream => (200, SSE, anthropic_sse(&route.model, answer)),
        (Api::Anthropic, _) => json_body(anthropic_message(&route.model, answer)),
        (Api::Gemini, _) => {
            let chunk = gemini_response(&route.model, answer);
            if route.stream {
                (200, SSE, format!("data: {chunk}\r\n\r\n").into_bytes())
            } else {
                json_body(chunk)
            }
        }
        (Api::OpenAi, _) if route.stream => (200, SSE, openai_sse(&route.model, answer)),
        (Api::OpenAi, _) => json_body(openai_response(&route.model, answer)),
        (Api::OpenAiChat, _) if route.stream => (200, SSE, chat_sse(&route.model, answer)),
        (Api::OpenAiChat, _) => json_body(chat_completion(&route.model, answer)),
    }
}

/// One SSE event.
fn sse_event(out: &mut Vec<u8>, event: &str, data: &Value) {
    out.extend_from_slice(format!("event: {event}\ndata: {data}\n\n").as_bytes());
}

fn anthropic_usage(usage: &Usage, output_tokens: u64) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": output_tokens,
    })
}

/// The tool an Anthropic answer calls for `tool`, and its arguments: Claude Code's, or Droid's
/// `Execute` (which requires a summary and a risk level) when `shell` is that.
fn anthropic_tool(tool: &ToolCall, shell: &'static str) -> (&'static str, Value) {
    match tool {
        ToolCall::Shell(command) if shell == DROID_SHELL_TOOL => (
            DROID_SHELL_TOOL,
            json!({"command": command, "summary": "Run the e2e scenario step",
                   "riskLevelReason": "A scripted test step.", "riskLevel": "medium"}),
        ),
        ToolCall::Shell(command) => (
            CLAUDE_SHELL_TOOL,
            json!({"command": command, "description": SHELL_DESCRIPTION}),
        ),
        ToolCall::Background(command) => (
            CLAUDE_SHELL_TOOL,
            json!({"command": command, "description": SHELL_DESCRIPTION,
                   "run_in_background": true}),
        ),
        ToolCall::Subagent(prompt) => (
            CLAUDE_SUBAGENT_TOOL,
            json!({"description": SHELL_DESCRIPTION, "prompt": prompt,
                   "subagent_type": "general-purpose", "run_in_background": false}),
        ),
        ToolCall::Read(path) => ("Read", json!({"file_path": path})),
        ToolCall::Edit { path, old, new } => (
            "Edit",
            json!({"file_path": path, "old_string": old, "new_string": new}),
        ),
        ToolCall::WriteFile { path, content } => (
            CLAUDE_WRITE_TOOL,
            json!({"file_path": path, "content": content}),
        ),
    }
}

/// `end_turn`, or `tool_use` when the answer calls a tool.
fn anthropic_stop_reason(answer: &Answer<'_>) -> &'static str {
    if answer.tool.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn anthropic_message(model: &str, answer: &Answer<'_>) -> Value {
    let mut content = Vec::new();
    if answer.has_text() {
        content.push(json!({"type": "text", "text": answer.text}));
    }
    if let Some(tool) = answer.tool {
        let (name, input) = anthropic_tool(tool, answer.shell);
        content.push(
            json!({"type": "tool_use", "id": format!("toolu_mock_{}", answer.seq),
                            "name": name, "input": input}),
        );
    }
    json!({
        "id": format!("msg_mock_{}", answer.seq),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": anthropic_stop_reason(answer),
        "stop_sequence": null,
        "usage": anthropic_usage(answer.usage, answer.usage.output_tokens),
    })
}

/// The Messages SSE sequence of protocols.md §4.1; a tool call is a `tool_use` block whose input
/// arrives as one `input_json_delta`.
fn anthropic_sse(model: &str, answer: &Answer<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    sse_event(
        &mut out,
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{}", answer.seq), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": anthropic_usage(answer.usage, 1),
        }}),
    );
    let mut index = 0;
    let mut block = |out: &mut Vec<u8>, start: Value, delta: Value| {
        sse_event(
            out,
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        sse_event(
            out,
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
        sse_event(
            out,
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    };
    if answer.has_text() {
        block(
            &mut out,
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": answer.text}),
        );
    }
    if let Some(tool) = answer.tool {
        let (name, input) = anthropic_tool(tool, answer.shell);
        block(
            &mut out,
            json!({"type": "tool_use", "id": format!("toolu_mock_{}", answer.seq),
                   "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        );
    }
    sse_event(
        &mut out,
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": anthropic_stop_reason(answer), "stop_sequence": null},
                "usage": {"output_tokens": answer.usage.output_tokens}}),
    );
    sse_event(&mut out, "message_stop", &json!({"type": "message_stop"}));
    out
}

/// A whole `GenerateContentResponse` (also the single SSE chunk of a stream); a tool call is a
/// `functionCall` part after the text.
fn gemini_response(model: &str, answer: &Answer<'_>) -> Value {
    let usage = answer.usage;
    let prompt = usage.prompt_tokens();
    let mut parts = Vec::new();
    if answer.has_text() {
        parts.push(json!({"text": answer.text}));
    }
    if let Some(ToolCall::Shell(command)) = answer.tool {
        parts.push(json!({"functionCall": {"name": GEMINI_SHELL_TOOL,
            "args": {"command": command, "description": SHELL_DESCRIPTION}}}));
    }
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": usage.output_tokens,
                          "totalTokenCount": prompt + usage.output_tokens,
                          "cachedContentTokenCount": usage.cache_read_input_tokens},
        "modelVersion": model,
        "responseId": format!("mock-{}", answer.seq),
    })
}

/// The Responses output items: the assistant message, then a `function_call` for a tool.
fn openai_output(answer: &Answer<'_>) -> Vec<Value> {
    let mut items = Vec::new();
    if answer.has_text() {
        items.push(
            json!({"type": "message", "id": format!("msg_mock_{}", answer.seq),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": answer.text, "annotations": []}]}),
        );
    }
    if let Some(ToolCall::Shell(command)) = answer.tool {
        items.push(
            json!({"type": "function_call", "id": format!("fc_mock_{}", answer.seq),
            "call_id": format!("call_mock_{}", answer.seq), "name": CODEX_SHELL_TOOL,
            "arguments": json!({"cmd": command}).to_string(), "status": "completed"}),
        );
    }
    items
}

/// A completed Responses object.
fn openai_response(model: &str, answer: &Answer<'_>) -> Value {
    let usage = answer.usage;
    let prompt = usage.prompt_tokens();
    json!({
        "id": format!("resp_mock_{}", answer.seq), "object": "response", "status": "completed",
        "model": model,
        "output": openai_output(answer),
        "usage": {"input_tokens": prompt,
                  "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
                  "output_tokens": usage.output_tokens,
                  "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + usage.output_tokens},
    })
}

/// The Responses SSE sequence of protocols.md §4.3, one `output_item.added`/`done` pair per
/// output item.
fn openai_sse(model: &str, answer: &Answer<'_>) -> Vec<u8> {
    let id = format!("resp_mock_{}", answer.seq);
    let mut out = Vec::new();
    sse_event(
        &mut out,
        "response.created",
        &json!({"type": "response.created", "response": {"id": id, "object": "response",
                "status": "in_progress", "model": model, "output": []}}),
    );
    for (index, item) in openai_output(answer).into_iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        if item["type"] == "message" {
            added["content"] = json!([]);
        }
        sse_event(
            &mut out,
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        if item["type"] == "message" {
            sse_event(
                &mut out,
                "response.output_text.delta",
                &json!({"type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": index, "content_index": 0, "delta": answer.text}),
            );
        }
        sse_event(
            &mut out,
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    sse_event(
        &mut out,
        "response.completed",
        &json!({"type": "response.completed", "response": openai_response(model, answer)}),
    );
    out
}

/// The shell tool of the CLI behind a request, for the two APIs several CLIs share: on Anthropic
/// Messages, Droid's `Execute` when the request offers it, else Claude Code's `Bash`; on Chat
/// Completions, Qwen Code's `run_shell_command` when offered, else Copilot CLI's `bash`.
fn shell_tool(api: Api, body: &Value) -> &'static str {
    let offers = |name: &str| {
        (body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten())
        .any(|t| t["name"] == name || t["function"]["name"] == name)
    };
    match api {
        Api::Anthropic if offers(DROID_SHELL_TOOL) => DROID_SHELL_TOOL,
        Api::Anthropic => CLAUDE_SHELL_TOOL,
        _ if offers(QWEN_SHELL_TOOL) => QWEN_SHELL_TOOL,
        _ => COPILOT_SHELL_TOOL,
    }
}

/// The Chat Completions message: the text, then a call of the CLI's shell tool for a tool.
fn chat_message(answer: &Answer<'_>) -> Value {
    let mut message = json!({"role": "assistant", "content": answer.text});
    if let Some(ToolCall::Shell(command)) = answer.tool {
        message["tool_calls"] = json!([{"index": 0, "id": format!("call_mock_{}", answer.seq),
            "type": "function", "function": {"name": answer.shell,
            "arguments": json!({"command": command, "description": SHELL_DESCRIPTION}).to_string()}}]);
    }
    message
}

/// Why the Chat Completions answer ends: a tool call, or the end of the reply.
fn chat_finish_reason(answer: &Answer<'_>) -> &'static str {
    match answer.tool {
        Some(ToolCall::Shell(_)) => "tool_calls",
        _ => "stop",
    }
}

/// Chat Completions usage: the prompt size, its cached part and the output.
fn chat_usage(usage: &Usage) -> Value {
    let prompt = usage.prompt_tokens();
    json!({"prompt_tokens": prompt, "completion_tokens": usage.output_tokens,
           "total_tokens": prompt + usage.output_tokens,
           "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens}})
}

/// A whole Chat Completions answer.
fn chat_completion(model: &str, answer: &Answer<'_>) -> Value {
    json!({"id": format!("chatcmpl_mock_{}", answer.seq), "object": "chat.completion",
           "created": 0, "model": model,
           "choices": [{"index": 0, "message": chat_message(answer),
                        "finish_reason": chat_finish_reason(answer)}],
           "usage": chat_usage(answer.usage)})
}

/// A streamed Chat Completions answer: the message as one delta, then the finish reason with
/// the usage, then `[DONE]`.
fn chat_sse(model: &str, answer: &Answer<'_>) -> Vec<u8> {
    let chunk = |choice: Value, usage: Option<Value>| {
        let mut chunk = json!({"id": format!("chatcmpl_mock_{}", answer.seq),
            "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [choice]});
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        format!("data: {chunk}\n\n")
    };
    let mut out = chunk(
        json!({"index": 0, "delta": chat_message(answer), "finish_reason": null}),
        None,
    );
    out.push_str(&chunk(
        json!({"index": 0, "delta": {}, "finish_reason": chat_finish_reason(answer)}),
        Some(chat_usage(answer.usage)),
    ));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn routes_side_calls_away_from_the_scenario() {
        let none = headers(&[]);
        let claude_turn = json!({"model": "m", "stream": true, "tools": [{"name": "Bash"}],
                                 "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(
            route("POST", "/v1/messages", &none, &claude_turn).kind,
            Kind::Turn
        );
        let claude_compact = json!({"tools": [{"name": "Bash"}], "messages": [{"role": "user",
            "content": [{"type": "text", "text": "CRITICAL: Respond with TEXT ONLY. Summarize."}]}]});
        assert_eq!(
            route("POST", "/v1/messages", &none, &claude_compact).kind,
            Kind::Compaction
        );
        assert_eq!(
            route("POST", "/v1/messages", &none, &json!({"messages": []})).kind,
            Kind::Side
        );
        assert_eq!(
            route("POST", "/v1/messages/count_tokens", &none, &json!({})).kind,
            Kind::CountTokens
        );

        let chat = |body: Value| route("POST", "/v1/chat/completions", &none, &body);
        let tools = json!([{"type": "function", "function": {"name": "bash"}}]);
        let copilot_turn = chat(json!({"model": "gpt-4.1", "stream": true, "tools": tools,
                                       "messages": [{"role": "user", "content": "hi"}]}));
        assert_eq!(
            (copilot_turn.api, copilot_turn.kind, copilot_turn.stream),
            (Api::OpenAiChat, Kind::Turn, true)
        );
        let copilot_compact = chat(json!({"tools": tools, "messages": [{"role": "user",
            "content": "Summarize. Tools are unavailable in this step, so do not call any."}]}));
        assert_eq!(copilot_compact.kind, Kind::Compaction);
        assert_eq!(chat(json!({"messages": []})).kind, Kind::Side);

        let gem =
            |m: &str, body: Value| route("POST", &format!("/v1beta/models/g-1:{m}"), &none, &body);
        let stream = gem("streamGenerateContent", json!({}));
        assert_eq!(
            (stream.kind, stream.stream, stream.model.as_str()),
            (Kind::Turn, true, "g-1")
        );
        let schema = json!({"generationConfig": {"responseJsonSchema": {"type": "object"}}});
        assert_eq!(gem("generateContent", schema).kind, Kind::Router);
        assert_eq!(gem("generateContent", json!({})).kind, Kind::Side);
        assert_eq!(gem("countTokens", json!({})).kind, Kind::CountTokens);
        assert_eq!(gem("embedContent", json!({})).api, Api::Unknown);

        let turn = headers(&[("x-codex-turn-metadata", r#"{"request_kind":"turn"}"#)]);
        let compaction = headers(&[("x-codex-turn-metadata", r#"{"request_kind":"compaction"}"#)]);
        let body =
            json!({"model": "gpt", "stream": true, "input": [{"role": "user", "content": "hi"}]});
        assert_eq!(
            route("POST", "/v1/responses", &turn, &body).kind,
            Kind::Turn
        );
        assert_eq!(
            route("POST", "/v1/responses", &none, &body).kind,
            Kind::Turn
        );
        assert_eq!(
            route("POST", "/v1/responses", &compaction, &body).kind,
            Kind::Compaction
        );
        let title = json!({"input": [{"role": "user", "content": [{"type": "input_text",
            "text": "Generate a concise, single-line task title for: x"}]}]});
        assert_eq!(
            route("POST", "/v1/responses", &turn, &title).kind,
            Kind::Title
        );

        assert_eq!(
            route("GET", "/v1/models", &none, &json!({})).api,
            Api::Unknown
        );
    }

    #[test]
    fn router_answer_fits_gemini_schema() {
        let schema = json!({"type": "object", "properties": {
            "complexity_reasoning": {"type": "string"},
            "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100},
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
            "tags": {"type": "array", "items": {"type": "STRING"}},
            "ratio": {"type": "number", "minimum": 0, "maximum": 0.5}}});
        assert_eq!(
            schema_example(&schema),
            json!({"complexity_reasoning": "mock", "complexity_score": 1, "next_speaker": "user",
                   "tags": ["mock"], "ratio": 0.5})
        );
    }

    /// The `data:` payloads of an SSE body.
    fn sse_data(body: &[u8]) -> Vec<Value> {
        String::from_utf8_lossy(body)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn usage_maps_to_each_api() {
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 7,
            cache_creation_input_tokens: 2000,
            cache_read_input_tokens: 30000,
        };
        let answer = Answer {
            text: "t",
            tool: None,
            usage: &usage,
            seq: 1,
            shell: COPILOT_SHELL_TOOL,
        };
        let gemini = gemini_response("g", &answer);
        assert_eq!(gemini["usageMetadata"]["promptTokenCount"], 32100);
        assert_eq!(gemini["usageMetadata"]["cachedContentTokenCount"], 30000);
        let openai = openai_response("o", &answer);
        assert_eq!(openai["usage"]["input_tokens"], 32100);
        assert_eq!(
            openai["usage"]["input_tokens_details"]["cached_tokens"],
            30000
        );
        let chat = chat_completion("o", &answer);
        assert_eq!(chat["usage"]["prompt_tokens"], 32100);
        assert_eq!(
            chat["usage"]["prompt_tokens_details"]["cached_tokens"],
            30000
        );
        let sse = String::from_utf8(anthropic_sse("c", &answer)).unwrap();
        assert!(sse.starts_with("event: message_start\ndata: {"), "{sse}");
        assert!(sse.contains(r#""cache_read_input_tokens":30000"#), "{sse}");
        assert!(sse.contains(r#""stop_reason":"end_turn""#), "{sse}");
        assert!(
            sse.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
            "{sse}"
        );
    }

    #[test]
    fn a_tool_call_uses_the_shell_tool_the_request_offers() {
        let offered =
            |name: &str| json!({"tools": [{"type": "function", "function": {"name": name}}]});
        let chat = |body: &Value| shell_tool(Api::OpenAiChat, body);
        assert_eq!(chat(&offered("run_shell_command")), QWEN_SHELL_TOOL);
        assert_eq!(chat(&offered("bash")), COPILOT_SHELL_TOOL);
        assert_eq!(chat(&json!({})), COPILOT_SHELL_TOOL);
        let anthropic = |name: &str| {
            shell_tool(
                Api::Anthropic,
                &json!({"tools": [{"name": "Read"}, {"name": name}]}),
            )
        };
        assert_eq!(anthropic("Execute"), DROID_SHELL_TOOL);
        assert_eq!(anthropic("Bash"), CLAUDE_SHELL_TOOL);
        let tool = ToolCall::Shell("make test".into());
        let (name, input) = anthropic_tool(&tool, DROID_SHELL_TOOL);
        assert_eq!(name, "Execute");
        assert_eq!(input["command"], "make test");
        assert_eq!(input["riskLevel"], "medium");
    }

    #[test]
    fn a_tool_call_follows_the_text_in_each_api() {
        let tool = ToolCall::Shell("echo 'hi'".into());
        let answer = Answer {
            text: "Running it.",
            tool: Some(&tool),
            usage: &Usage::default(),
            seq: 4,
            shell: COPILOT_SHELL_TOOL,
        };

        let claude = anthropic_message("c", &answer);
        assert_eq!(claude["stop_reason"], "tool_use");
        assert_eq!(claude["content"][0]["text"], "Running it.");
        assert_eq!(
            claude["content"][1],
            json!({"type": "tool_use", "id": "toolu_mock_4", "name": "Bash",
                   "input": {"command": "echo 'hi'", "description": SHELL_DESCRIPTION}})
        );
        let events = sse_data(&anthropic_sse("c", &answer));
        assert_eq!(
            events[4],
            json!({"type": "content_block_start", "index": 1, "content_block":
                   {"type": "tool_use", "id": "toolu_mock_4", "name": "Bash", "input": {}}})
        );
        let partial = events[5]["delta"]["partial_json"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(partial).unwrap(),
            claude["content"][1]["input"]
        );
        assert_eq!(events[7]["delta"]["stop_reason"], "tool_use");

        let gemini = gemini_response("g", &answer);
        assert_eq!(
            gemini["candidates"][0]["content"]["parts"],
            json!([{"text": "Running it."}, {"functionCall": {"name": "run_shell_command",
                   "args": {"command": "echo 'hi'", "description": SHELL_DESCRIPTION}}}])
        );

        let chat = sse_data(&chat_sse("o", &answer));
        assert_eq!(chat[0]["choices"][0]["delta"]["content"], "Running it.");
        let call = &chat[0]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(
            (&call["id"], &call["function"]["name"]),
            (&json!("call_mock_4"), &json!("bash"))
        );
        assert_eq!(
            serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(),
            json!({"command": "echo 'hi'", "description": SHELL_DESCRIPTION})
        );
        assert_eq!(chat[1]["choices"][0]["finish_reason"], "tool_calls");

        let openai = openai_response("o", &answer);
        assert_eq!(openai["output"][0]["type"], "message");
        assert_eq!(
            openai["output"][1],
            json!({"type": "function_call", "id": "fc_mock_4", "call_id": "call_mock_4",
                   "name": "exec_command", "arguments": r#"{"cmd":"echo 'hi'"}"#,
                   "status": "completed"})
        );
        let sse = String::from_utf8(openai_sse("o", &answer)).unwrap();
        assert_eq!(
            sse.matches("event: response.output_item.done").count(),
            2,
            "{sse}"
        );

        // Without text, only the tool call is sent.
        let bare = Answer { text: "", ..answer };
        assert_eq!(
            anthropic_message("c", &bare)["content"][0]["type"],
            "tool_use"
        );
        assert_eq!(openai_output(&bare).len(), 1);
    }
}
