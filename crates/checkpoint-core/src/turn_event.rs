//! What one transcript line says about the turn it belongs to, in terms every agent shares: a
//! prompt began a turn, a tool edited a file or ran a shell command, the command's result came
//! back, the assistant replied. Each agent's [`TranscriptFormat`](crate::agent::TranscriptFormat)
//! reads its own lines into these; [`crate::claim_history`] builds turns from them.

use jiff::Timestamp;
use serde_json::Value;

/// One fact of a transcript line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEvent {
    /// The session's id, as the agent names it (the key of the gate's records).
    Session(String),
    /// When the line was written.
    At(Timestamp),
    /// The user's prompt (its text): a turn begins, unless it is the gate's own block message
    /// sent back to the agent.
    Prompt(String),
    /// A tool call that edits files.
    Edit,
    /// A shell command, with the id its result comes back under.
    Shell {
        /// The call's id.
        id: String,
        /// The command line.
        command: String,
    },
    /// The result of the call `id`: whether it succeeded, when the line says.
    Result {
        /// The call's id.
        id: String,
        /// `Some(true)` for a command that exited 0.
        ok: Option<bool>,
    },
    /// The assistant's reply text.
    Reply(String),
}

impl TurnEvent {
    /// The line's time, from the top-level `timestamp` every agent's record carries (ISO-8601).
    pub fn at(record: &Value) -> Option<TurnEvent> {
        let at = record["timestamp"].as_str()?.parse().ok()?;
        Some(TurnEvent::At(at))
    }

    /// The session and the time of a record that names its session in a top-level `sessionId`
    /// (Claude Code's, Gemini CLI's, Qwen Code's), appended to `out`.
    pub fn session_and_time(record: &Value, out: &mut Vec<TurnEvent>) {
        if let Some(id) = record["sessionId"].as_str() {
            out.push(TurnEvent::Session(id.to_owned()));
        }
        out.extend(TurnEvent::at(record));
    }
}

/// The exit code a shell tool's output states: the last `Exit Code: N` (Gemini CLI, Qwen Code),
/// `exit code N` (Copilot CLI's `<shellId: 0 completed with exit code 1>`, Claude Code's
/// `Error: Exit code 1`) or `exited with code N` (Codex CLI), ignoring case; `None` when it states
/// none.
pub fn exit_code_in(output: &str) -> Option<i64> {
    let lower = output.to_ascii_lowercase();
    let found = ["exit code", "exited with code"]
        .iter()
        .filter_map(|marker| Some(lower.rfind(marker)? + marker.len()))
        .max()?;
    let rest = lower[found..].trim_start_matches([':', ' ']);
    let end = (rest.char_indices())
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_as_each_agent_writes_them() {
        let qwen = "Command: ls\nOutput: calc.py\nError: (none)\nExit Code: 0\nSignal: (none)";
        assert_eq!(exit_code_in(qwen), Some(0));
        assert_eq!(
            exit_code_in("?? x\n<shellId: 0 completed with exit code 1>"),
            Some(1)
        );
        assert_eq!(
            exit_code_in("Chunk ID: a\nProcess exited with code 101\nOutput:\n"),
            Some(101)
        );
        assert_eq!(exit_code_in("Error: Exit code 2\nFAILED"), Some(2));
        assert_eq!(exit_code_in("exit code: -1"), Some(-1));
        // The last statement wins: a test that prints "exit code 0" before the real one.
        assert_eq!(exit_code_in("echo exit code 0\nExit Code: 1"), Some(1));
        assert_eq!(exit_code_in("Output: hello"), None);
        assert_eq!(exit_code_in("exit code: none"), None);
    }
}
