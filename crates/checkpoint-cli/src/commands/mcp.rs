//! `checkpoint mcp`: an MCP server on stdin/stdout that gives an agent checkpoint's session
//! continuity as tools — save a checkpoint, list them, restore one, read the restart context, log
//! progress and read or change the project's settings — and the stop gate's verdict on demand
//! (`checkpoint_verify`), for agents that have no blocking hook.
//!
//! The project is the directory the server was started in (agents start MCP servers in the
//! project). Every tool answers with text; a failure is a tool error result with a one-line
//! message, never a protocol error or a crash. The rest of the CLI is synchronous: the async
//! runtime the MCP SDK needs lives only inside [`run`].
//!
//! The transport is [`LineTransport`], not the SDK's: a request longer than
//! [`MAX_REQUEST_BYTES`] gets an Invalid Request error reply (and is skipped without being held in
//! memory), a line that is not JSON a Parse error reply, a batch (an array, which MCP no longer
//! has) an Invalid Request error reply, all with `"id": null`; the server goes on serving. (The
//! SDK drops them silently, and a client waits for ever.)

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_core::answer::HookAnswer;
use checkpoint_core::event::HookEvent;
use checkpoint_core::home::Manual;
use checkpoint_core::policy::config::{Key, Origin};
use checkpoint_engine::gate;
use checkpoint_engine::project::Project;
use checkpoint_engine::project::restoring::RestoreTo;
use checkpoint_engine::runner::Unwatched;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ErrorCode, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

use crate::args::FetchArgs;
use crate::commands::check::{self, CheckJson};
use crate::commands::config as config_cmd;
use crate::continuity::{self, Caller};
use crate::error::{CliError, ErrorKind};
use crate::output::one_line;
use crate::{project, schema};

/// Checkpoints `checkpoint_list` shows when no limit is given.
const DEFAULT_LIMIT: usize = 10;

/// What the server tells the agent about itself at initialization.
const INSTRUCTIONS: &str = "checkpoint keeps this project's session continuity. Log each \
     finished milestone with checkpoint_progress, save the state before risky or long work with \
     checkpoint_save, and after a context reset call checkpoint_resume and continue from what it \
     says instead of starting over. Before saying the work is done, call checkpoint_verify and fix \
     what it names until it allows.";

/// Options of `checkpoint mcp` (none: the project is the current directory).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub(crate) fn run(_: &Args) -> Result<ExitCode, CliError> {
    let project = project::cwd()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::bug(format!("starting the MCP server: {e}")))?;
    runtime.block_on(async {
        let hint = "the MCP client must speak JSON-RPC on the server's stdin and stdout";
        let service = Server::new(project)
            .serve(LineTransport::new(
                tokio::io::BufReader::new(tokio::io::stdin()),
                io::stdout(),
            ))
            .await
            .map_err(|e| CliError::new(format!("MCP initialization failed: {e}"), hint))?;
        service
            .waiting()
            .await
            .map_err(|e| CliError::new(format!("MCP server failed: {e}"), hint))?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The longest request line the server reads; a longer one is answered with an error and
/// skipped. Tool arguments are short texts; this is far above any of them.
const MAX_REQUEST_BYTES: usize = 4 << 20;

/// Newline-delimited JSON-RPC on a reader and a writer that answers what it cannot pass on.
///
/// Replies are written whole and synchronously, each with one `write_all` under the writer's
/// lock (the runtime has one thread), so an error reply never interleaves with a response.
struct LineTransport<R, W> {
    reader: R,
    /// The line read so far; kept across cancelled [`Transport::receive`] calls.
    line: Vec<u8>,
    /// The current line has passed [`MAX_REQUEST_BYTES`]; its rest is skipped.
    oversize: bool,
    writer: W,
}

/// Why a line is answered with an error instead of being passed on.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// Longer than [`MAX_REQUEST_BYTES`].
    Oversize,
    /// Not JSON.
    Parse(String),
    /// JSON, but not a JSON-RPC message the server understands; with the request's id if it had
    /// one.
    Invalid(Value),
    /// A JSON-RPC batch (an array of messages): MCP removed batching (2025-06-18).
    Batch,
}

impl Refusal {
    /// The JSON-RPC error reply.
    fn reply(&self) -> Value {
        let (id, code, message) = match self {
            Refusal::Oversize => (
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                format!("request longer than {MAX_REQUEST_BYTES} bytes; it was not read"),
            ),
            Refusal::Parse(why) => (
                Value::Null,
                ErrorCode::PARSE_ERROR,
                format!("parse error: {why}"),
            ),
            Refusal::Batch => (
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                "batch requests are not supported: send one request per line".to_owned(),
            ),
            Refusal::Invalid(id) => (
                id.clone(),
                ErrorCode::INVALID_REQUEST,
                "invalid request: not a JSON-RPC 2.0 message of MCP".to_owned(),
            ),
        };
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
    }
}

impl<R: AsyncBufRead + Unpin + Send, W: io::Write + Send> LineTransport<R, W> {
    fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader,
            line: Vec::new(),
            oversize: false,
            writer,
        }
    }

    /// Reads up to the end of the next line; `Ok(false)` at the end of input. Cancel-safe: what
    /// was consumed is in `self.line` (or counted as oversize).
    async fn read_line(&mut self) -> io::Result<bool> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                return Ok(false);
            }
            let (take, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            if self.line.len() + take > MAX_REQUEST_BYTES + 1 {
                self.oversize = true;
                self.line = Vec::new();
            }
            if !self.oversize {
                self.line.extend_from_slice(&buf[..take]);
            }
            self.reader.consume(take);
            if end {
                return Ok(true);
            }
        }
    }

    /// The message on the line just read, `Ok(None)` for a blank line or a notification the
    /// server ignores, or why it is refused.
    fn parse(&mut self) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Refusal> {
        if std::mem::take(&mut self.oversize) {
            return Err(Refusal::Oversize);
        }
        let line = std::mem::take(&mut self.line);
        let text = line.trim_ascii();
        if text.is_empty() {
            return Ok(None);
        }
        let value: Value =
            serde_json::from_slice(text).map_err(|e| Refusal::Parse(one_line(&e.to_string())))?;
        if value.is_array() {
            return Err(Refusal::Batch);
        }
        match value.get("id").cloned() {
            // A notification gets no reply, not even an error (JSON-RPC 2.0).
            None => Ok(serde_json::from_value(value).ok()),
            Some(id) => serde_json::from_value(value)
                .map(Some)
                .map_err(|_| match id {
                    Value::Number(_) | Value::String(_) => Refusal::Invalid(id),
                    _ => Refusal::Invalid(Value::Null),
                }),
        }
    }

    /// Writes one message as one line.
    fn write(&mut self, message: &impl Serialize) -> io::Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.writer.write_all(&bytes)?;
        self.writer.flush()
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: io::Write + Send,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        std::future::ready(self.write(&item))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.read_line().await.ok()? {
                return None;
            }
            match self.parse() {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(refusal) => self.write(&refusal.reply()).ok()?,
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Arguments of `checkpoint_save`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SaveParams {
    /// What was reached, e.g. "schema migrated, API next"; kept with the checkpoint.
    message: Option<String>,
}

/// Arguments of `checkpoint_list`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ListParams {
    /// How many checkpoints to show, newest first (default 10).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

/// Arguments of `checkpoint_progress`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ProgressParams {
    /// What is done, e.g. "created the schema".
    text: String,
}

/// Arguments of `checkpoint_restore`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RestoreParams {
    /// The checkpoint's number (as `checkpoint_list` shows it); default: the latest.
    checkpoint: Option<u64>,
    /// Only these files or directories, relative to the repository root; default: every file.
    files: Option<Vec<String>>,
    /// Only say what would change; change nothing.
    dry_run: Option<bool>,
    /// Return to the state before the last restore instead.
    undo: Option<bool>,
}

/// Arguments of `checkpoint_configure`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ConfigureParams {
    /// A key like `context.warn` or `resume.auto`; without it, every effective setting is listed.
    key: Option<String>,
    /// The new value, written to the project's checkpoint.toml: a TOML value (`85`, `true`,
    /// `"prompt"`); other text is taken as a string (`5m`). Without it, the key's current value
    /// is shown. Keys that change what the gate runs or enforces (`tests.command`,
    /// `tests.timeout`, `stop.commit_gate`, `stop.max_blocks`) are read-only here.
    value: Option<String>,
}

/// The MCP server: the project it serves and its tools.
#[derive(Debug, Clone)]
struct Server {
    project: PathBuf,
    tool_router: ToolRouter<Server>,
}

/// A tool's answer: text for the agent, or a one-line error message.
type Answer = Result<String, String>;

#[tool_router]
impl Server {
    fn new(project: PathBuf) -> Server {
        Server {
            project,
            tool_router: Server::tool_router(),
        }
    }

    #[tool(
        description = "Save a checkpoint of the current session: the changed files, HEAD and the \
                       active task, so that a new session can resume from here. Returns its number."
    )]
    fn checkpoint_save(&self, Parameters(params): Parameters<SaveParams>) -> Answer {
        continuity::save(&self.open()?, Caller::Mcp, params.message.as_deref()).map_err(failure)
    }

    #[tool(
        description = "List the project's latest session checkpoints, newest first, one line \
                       each: number, trigger, age, session, files, context and summary."
    )]
    fn checkpoint_list(&self, Parameters(params): Parameters<ListParams>) -> Answer {
        let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Err("limit must be at least 1".to_owned());
        }
        let project = self.open()?;
        let mut checkpoints = continuity::newest_first(&project).map_err(failure)?;
        checkpoints.truncate(limit);
        Ok(continuity::list(&project, &checkpoints))
    }

    #[tool(
        description = "The restart context of the latest checkpoint: what was being done, the \
                       progress logged, the files modified and how to go on. Call it after a \
                       context reset, before doing anything else."
    )]
    fn checkpoint_resume(&self) -> Answer {
        continuity::resume(&self.open()?, FetchArgs { fetch: false }).map_err(failure)
    }

    #[tool(
        description = "Log a finished milestone (one short sentence). The next session's restart \
                       context lists it as done, so it is not redone."
    )]
    fn checkpoint_progress(&self, Parameters(params): Parameters<ProgressParams>) -> Answer {
        continuity::progress(&self.open()?, Caller::Mcp, &params.text).map_err(failure)
    }

    #[tool(
        description = "Put the project's files back to a session checkpoint (default: the \
                       latest), whatever changed them since: files created since are deleted, \
                       deleted ones recreated. A safety checkpoint of the current state is saved \
                       first; `undo` returns to it. Refuses, changing nothing, when a file's \
                       content was not kept. Use `dry_run` first to see what would change."
    )]
    fn checkpoint_restore(&self, Parameters(params): Parameters<RestoreParams>) -> Answer {
        let to = match (params.undo.unwrap_or(false), params.checkpoint) {
            (true, Some(_)) => {
                return Err("give either `checkpoint` or `undo`, not both".to_owned());
            }
            (true, None) => RestoreTo::Undo,
            (false, Some(id)) => RestoreTo::Id(id),
            (false, None) => RestoreTo::Latest,
        };
        let only = params.files.unwrap_or_default();
        let dry_run = params.dry_run.unwrap_or(false);
        continuity::restore(&self.open()?, Caller::Mcp, to, only, dry_run)
            .map(|(_, report)| report)
            .map_err(failure)
    }

    #[tool(
        description = "Run this project's approved tests and checks on the current working tree, \
                       as the stop gate does when an agent ends its turn, and return the verdict: \
                       `verdict` is \"allow\" or \"block\", `message` says why (the failing \
                       tests' output, integrity findings, actions still required) and `notice` \
                       what only the user can do (e.g. approve the project's commands). Call it \
                       before saying the work is done; if it blocks, fix what it names and call \
                       it again."
    )]
    fn checkpoint_verify(&self) -> Result<CallToolResult, String> {
        let event = HookEvent::manual_stop(self.project.clone());
        let outcome =
            gate::check(&Manual, &project::host(), &event, &Unwatched, None).map_err(failure)?;
        let HookAnswer::Stop(answer) = &outcome.answer else {
            return Err("the gate gave no verdict on a stop (a bug)".to_owned());
        };
        if let Some(err) = check::unchecked(&answer.decision, &event) {
            return Err(failure(err));
        }
        let judged = CheckJson {
            schema_version: schema::SCHEMA_VERSION,
            event: &event.wire_name,
            base: outcome.base.as_deref(),
            decision: Some(&answer.decision),
        };
        let mut value = serde_json::to_value(&judged).map_err(|e| e.to_string())?;
        value["message"] = Value::String(answer.message.clone());
        if let Some(notice) = &answer.notice {
            value["notice"] = Value::String(notice.clone());
        }
        if !outcome.warnings.is_empty() {
            value["warnings"] = json!(outcome.warnings);
        }
        Ok(CallToolResult::structured(value))
    }

    #[tool(
        description = "Read or change checkpoint's settings for this project. No arguments: every \
                       effective setting with where it comes from. `key`: that setting. `key` \
                       and `value`: set it in the project's checkpoint.toml (validated first); \
                       the test command and the gate's switches are read-only here."
    )]
    fn checkpoint_configure(&self, Parameters(params): Parameters<ConfigureParams>) -> Answer {
        let root = self.root()?;
        match (params.key, params.value) {
            (None, None) => {
                let all = config_cmd::settings(&root).map_err(failure)?;
                Ok(config_cmd::render(&all, &root))
            }
            (None, Some(_)) => Err("a value needs a key, e.g. {\"key\": \"context.warn\", \
                                    \"value\": \"85\"}"
                .to_owned()),
            (Some(key), None) => {
                let all = config_cmd::settings(&root).map_err(failure)?;
                all.iter()
                    .find(|s| s.key == key)
                    .map(|s| config_cmd::render(std::slice::from_ref(s), &root))
                    .ok_or_else(|| {
                        format!(
                            "unknown key {key:?}; {}",
                            config_cmd::valid_keys_hint(&key, true)
                        )
                    })
            }
            (Some(key), Some(value)) => {
                if let Some(row) = Key::named(&key).filter(|row| row.guarded) {
                    return Err(guarded_refusal(row));
                }
                let file = config_cmd::project_file(&root).map_err(failure)?;
                let written = config_cmd::set_value(&file, &key, &value).map_err(failure)?;
                let mut answer = config_cmd::set_message(&key, &written, &file, &root);
                // The file is valid on its own; say so when the layers together are not, or
                // when another layer still decides the value.
                match config_cmd::settings(&root) {
                    Err(err) => {
                        answer.push_str(&format!(" Warning: {}", failure(err)));
                    }
                    Ok(all) => {
                        let origin = all.iter().find(|s| s.key == key).map(|s| &s.origin);
                        let from_file =
                            matches!(origin, Some(Origin::File { path, .. }) if *path == file);
                        if let Some(origin) = origin.filter(|_| !from_file) {
                            answer.push_str(&format!(
                                " Warning: it still comes from {}.",
                                config_cmd::origin_text(origin, &root)
                            ));
                        }
                    }
                }
                Ok(answer)
            }
        }
    }
}

impl Server {
    /// The git project the server serves, opened anew for each call (settings may change).
    fn open(&self) -> Result<Project, String> {
        project::open_git_in(&self.project).map_err(failure)
    }

    /// The project's root: the git toplevel around the server's directory, else that directory.
    fn root(&self) -> Result<PathBuf, String> {
        project::root_of(&self.project).map_err(failure)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("checkpoint", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Why `checkpoint_configure` does not set a [guarded](Key::guarded) key: it changes what the
/// gate runs or can switch a gate off, which only the user decides.
fn guarded_refusal(row: &Key) -> String {
    format!(
        "{} changes what the stop gate runs or enforces, so an agent's tool may not set it; \
         ask the user to run `checkpoint config set {} …` in a terminal",
        row.name, row.name
    )
}

/// An error as a tool's one-line error message: what went wrong and, when the request was at
/// fault, how to ask instead (the other hints say what a person should do in a terminal).
fn failure(err: impl Into<CliError>) -> String {
    let err = err.into();
    match (err.kind, err.hint) {
        (ErrorKind::Usage, Some(hint)) => one_line(&format!("{}; {hint}", err.message)),
        _ => one_line(&err.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        assert_eq!(one_line("a\n  b \n\nc"), "a b c");
        assert_eq!(
            failure(checkpoint_engine::project::ProjectError::NoRepository(
                std::path::PathBuf::from("/x")
            )),
            "/x is not inside a git repository"
        );
    }

    #[test]
    fn the_seven_tools_are_routed() {
        let names: Vec<String> = Server::tool_router()
            .list_all()
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "checkpoint_configure",
                "checkpoint_list",
                "checkpoint_progress",
                "checkpoint_restore",
                "checkpoint_resume",
                "checkpoint_save",
                "checkpoint_verify"
            ]
        );
    }
}
