//! Scenarios: the script the mock model follows, one step per real agent turn.
//!
//! A scenario is JSON:
//!
//! ```json
//! {
//!   "root": "/abs/path/to/repo",
//!   "steps": [
//!     {"reply": "I fixed it.",
//!      "before": [{"write": {"path": "calc.py", "content": "..."}}, {"run": "git commit -qam fix"}],
//!      "usage": {"input_tokens": 170000}},
//!     {"reply": "Let me look.", "tool": {"shell": "ls"}}
//!   ]
//! }
//! ```
//!
//! Each *real* agent turn request (not a router, title, token-count or compaction side call)
//! consumes the next step: its `before` actions run in `root` first (they play the agent's edits
//! between two model calls), then the mock answers with `reply` and reports `usage`. A step with
//! a `tool` also calls the CLI's shell tool (see [`ToolCall`]): the CLI runs it and sends the
//! result in its next turn request, which takes the next step. Once the
//! steps run out every further turn gets [`EXHAUSTED_REPLY`], which makes a model that never fixes
//! anything a scenario whose steps fix nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The reply to every turn request after the scenario's steps have run out.
pub const EXHAUSTED_REPLY: &str = "I have nothing more to do.";

/// A scripted conversation for the mock model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Directory the `before` actions run in. The harness sets it to the agent's repository when
    /// it is unset; the `mock-model` binary's `--root` flag overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    /// The steps, consumed in order, one per real agent turn.
    #[serde(default)]
    pub steps: Vec<Step>,
}

impl Scenario {
    /// A scenario with these steps and no root yet.
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self {
            root: None,
            steps: steps.into_iter().collect(),
        }
    }

    /// Reads a scenario from a JSON file.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("parse {}: {e}", path.display()))
    }
}

/// One model turn: what happens in the repository before the reply, the reply, and its usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The assistant's text for this turn.
    pub reply: String,
    /// Actions applied in the scenario root before the reply is sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Action>,
    /// Token usage reported with the reply; [`Usage::default`] when absent.
    #[serde(default)]
    pub usage: Usage,
    /// A tool the reply calls after its text, so the turn goes on with the tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolCall>,
}

impl Step {
    /// A step that only replies `text`, with default usage.
    pub fn reply(text: impl Into<String>) -> Self {
        Self {
            reply: text.into(),
            before: Vec::new(),
            usage: Usage::default(),
            tool: None,
        }
    }

    /// Adds a `write` action: `path` (relative to the root) gets `content`.
    #[must_use]
    pub fn write(mut self, path: impl Into<PathBuf>, content: impl Into<String>) -> Self {
        self.before.push(Action::Write {
            path: path.into(),
            content: content.into(),
        });
        self
    }

    /// Adds a `run` action: `sh -c command` in the root; a non-zero exit fails the run.
    #[must_use]
    pub fn run(mut self, command: impl Into<String>) -> Self {
        self.before.push(Action::Run(command.into()));
        self
    }

    /// Sets the usage reported with this step's reply.
    #[must_use]
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Makes the reply call the CLI's shell tool with `command` (see [`ToolCall::Shell`]).
    #[must_use]
    pub fn shell(mut self, command: impl Into<String>) -> Self {
        self.tool = Some(ToolCall::Shell(command.into()));
        self
    }

    /// Makes the reply start `command` in the background (see [`ToolCall::Background`]).
    #[must_use]
    pub fn background(mut self, command: impl Into<String>) -> Self {
        self.tool = Some(ToolCall::Background(command.into()));
        self
    }

    /// Makes the reply read the file at `path` (see [`ToolCall::Read`]).
    #[must_use]
    pub fn read(mut self, path: impl Into<String>) -> Self {
        self.tool = Some(ToolCall::Read(path.into()));
        self
    }

    /// Makes the reply edit the file at `path` (see [`ToolCall::Edit`]).
    #[must_use]
    pub fn edit(
        mut self,
        path: impl Into<String>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Self {
        self.tool = Some(ToolCall::Edit {
            path: path.into(),
            old: old.into(),
            new: new.into(),
        });
        self
    }

    /// Makes the reply start a subagent with `prompt` (see [`ToolCall::Subagent`]).
    #[must_use]
    pub fn subagent(mut self, prompt: impl Into<String>) -> Self {
        self.tool = Some(ToolCall::Subagent(prompt.into()));
        self
    }

    /// Makes the reply write `content` to the new file `path` with the CLI's own file tool (see
    /// [`ToolCall::WriteFile`]).
    #[must_use]
    pub fn write_file(mut self, path: impl Into<PathBuf>, content: impl Into<String>) -> Self {
        self.tool = Some(ToolCall::WriteFile {
            path: path.into(),
            content: content.into(),
        });
        self
    }
}

/// A tool call the mock model makes at the end of a step's reply.
///
/// The CLI runs the tool (PreToolUse/BeforeTool and PostToolUse/AfterTool hooks included) and
/// sends its result in the next turn request, so the tool's step is followed by another one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolCall {
    /// Runs a command with the CLI's own shell tool, in the session's working directory:
    ///
    /// | CLI | tool | arguments |
    /// |---|---|---|
    /// | Claude Code | `Bash` | `{"command", "description"}` |
    /// | Gemini CLI | `run_shell_command` | `{"command", "description"}` |
    /// | Codex | `exec_command` (a `function_call` item) | `{"cmd"}` |
    ///
    /// The command runs with the CLI's environment, not the harness's.
    Shell(String),
    /// Starts a subagent with `prompt` and waits for it (Claude Code's `Agent` tool,
    /// `{"description", "prompt", "subagent_type": "general-purpose", "run_in_background":
    /// false}`). The subagent's own turns consume the next steps, then the parent's turn goes on
    /// with its report. Claude Code only: Gemini CLI and Codex get the step's text alone.
    Subagent(String),
    /// Runs a command in the background with Claude Code's `Bash` tool (`{"command",
    /// "description", "run_in_background": true}`): the turn goes on at once, and Claude Code
    /// reports the command's end in a later turn. Claude Code only, like [`ToolCall::Subagent`].
    Background(String),
    /// Reads the file at this absolute path with Claude Code's `Read` tool (`{"file_path"}`), as
    /// it wants before an edit. Claude Code only, like [`ToolCall::Subagent`].
    Read(String),
    /// Replaces `old` with `new` in the file at the absolute `path` with Claude Code's `Edit`
    /// tool (`{"file_path", "old_string", "new_string"}`; the file must have been read in the
    /// session). Claude Code only, like [`ToolCall::Subagent`].
    Edit {
        /// The file's absolute path.
        path: String,
        /// The text replaced (once in the file).
        old: String,
        /// Its replacement.
        new: String,
    },
    /// Writes a new file with Claude Code's `Write` tool (`{"file_path", "content"}`; the path
    /// absolute, as the tool wants it): an edit in the transcript, where an [`Action::Write`] is
    /// none. Claude Code only, like [`ToolCall::Subagent`].
    WriteFile {
        /// The file's absolute path.
        path: PathBuf,
        /// Its content.
        content: String,
    },
}

/// Something the scripted "agent" does to the repository before a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Writes `content` to `path` (relative to the root), creating parent directories.
    Write {
        /// File path, relative to the scenario root.
        path: PathBuf,
        /// The whole new file content.
        content: String,
    },
    /// Runs the command with `sh -c` in the root, with the test kit's deterministic git
    /// identity. Any non-zero exit makes the harness fail the run.
    Run(String),
}

/// What an applied [`Action`] did; logged with the request that triggered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionOutcome {
    /// The action, in its scenario form.
    pub action: Action,
    /// Whether it succeeded.
    pub ok: bool,
    /// Error text, or the command's combined stdout and stderr.
    pub output: String,
}

impl Action {
    /// Applies the action in `root`.
    pub fn apply(&self, root: &Path) -> ActionOutcome {
        let (ok, output) = match self {
            Action::Write { path, content } => {
                let target = root.join(path);
                let written = target
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&target, content));
                match written {
                    Ok(()) => (true, String::new()),
                    Err(e) => (false, format!("write {}: {e}", target.display())),
                }
            }
            Action::Run(command) => match Command::new("sh")
                .arg("-c")
                .arg(command)
                .current_dir(root)
                .envs(checkpoint_testkit::git_env())
                .output()
            {
                Ok(out) => (
                    out.status.success(),
                    format!(
                        "{}{}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr),
                        if out.status.success() {
                            String::new()
                        } else {
                            format!("({})", out.status)
                        }
                    ),
                ),
                Err(e) => (false, format!("spawn sh: {e}")),
            },
        };
        ActionOutcome {
            action: self.clone(),
            ok,
            output,
        }
    }
}

/// Token usage the mock reports for a reply.
///
/// The *prompt* size (what each CLI counts as context used) is
/// `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` for every API, so one
/// scenario means the same context fill for all three agents:
///
/// - Anthropic: the three fields are sent as they are (`message_start.usage`).
/// - Gemini: `promptTokenCount` is the sum, `cachedContentTokenCount` is `cache_read_input_tokens`.
/// - OpenAI Responses: `input_tokens` is the sum, `input_tokens_details.cached_tokens` is
///   `cache_read_input_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    /// Uncached prompt tokens.
    pub input_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: 100,
            output_tokens: 10,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        }
    }
}

impl Usage {
    /// Usage whose prompt is `tokens` uncached input tokens.
    pub fn prompt(tokens: u64) -> Self {
        Self {
            input_tokens: tokens,
            ..Self::default()
        }
    }

    /// The whole prompt: uncached, cache-write and cache-read input tokens.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_shape() {
        let s: Scenario = serde_json::from_str(
            r#"{"root":"/r","steps":[{"reply":"a","before":[{"write":{"path":"x/y.txt","content":"c"}},{"run":"true"}],"usage":{"input_tokens":7,"cache_read_input_tokens":3}},{"reply":"b","tool":{"shell":"ls -a"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            s,
            Scenario {
                root: Some("/r".into()),
                steps: vec![
                    Step::reply("a")
                        .write("x/y.txt", "c")
                        .run("true")
                        .usage(Usage {
                            input_tokens: 7,
                            cache_read_input_tokens: 3,
                            ..Usage::default()
                        }),
                    Step::reply("b").shell("ls -a"),
                ],
            }
        );
        assert_eq!(s.steps[0].usage.prompt_tokens(), 10);
        assert_eq!(s.steps[0].usage.output_tokens, 10);
    }

    #[test]
    fn rejects_unknown_fields() {
        assert!(
            serde_json::from_str::<Scenario>(r#"{"steps":[{"reply":"a","after":[]}]}"#).is_err()
        );
    }

    #[test]
    fn actions_apply_in_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let write = Action::Write {
            path: "sub/f.txt".into(),
            content: "hi".into(),
        }
        .apply(dir.path());
        assert!(write.ok, "{write:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/f.txt")).unwrap(),
            "hi"
        );

        let run = Action::Run("cat sub/f.txt; echo \" $GIT_AUTHOR_NAME\"".into()).apply(dir.path());
        assert_eq!((run.ok, run.output.as_str()), (true, "hi Fixture\n"));

        let fail = Action::Run("echo nope >&2; exit 3".into()).apply(dir.path());
        assert!(!fail.ok);
        assert!(
            fail.output.contains("nope") && fail.output.contains('3'),
            "{fail:?}"
        );
    }
}
