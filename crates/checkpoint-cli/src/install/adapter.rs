//! The adapter binary a handler runs: where it is, the command line that runs it, and how a
//! handler that runs it is recognised (by the file name `checkpoint-<agent>`, in any directory).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::CliError;

use super::agents::AgentSpec;

/// The adapter of `spec`: `given` (from `--adapter`), else `checkpoint-<agent>` next to this
/// executable. The directory is canonicalized; the file name is kept, since it is what recognises
/// the handler later.
pub(crate) fn locate(spec: &AgentSpec, given: Option<&Path>) -> Result<PathBuf, CliError> {
    let name = spec.adapter();
    let path = match given {
        Some(path) => std::path::absolute(path)
            .map_err(|e| CliError::new(format!("{}: {e}", path.display()), "pass a valid path"))?,
        None => own_dir()?.join(&name),
    };
    if path.file_name() != Some(OsStr::new(&name)) {
        return Err(CliError::new(
            format!("{}: the adapter must be named {name}", path.display()),
            format!("checkpoint recognises its hooks by that file name; point --adapter at {name}"),
        ));
    }
    let missing = || {
        CliError::new(
            format!("adapter not found: {}", path.display()),
            format!(
                "install it: cargo install --locked --path crates/adapter-{}",
                spec.name()
            ),
        )
    };
    let dir = path
        .parent()
        .and_then(|dir| dir.canonicalize().ok())
        .ok_or_else(missing)?;
    let path = dir.join(&name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(missing())
    }
}

/// The directory of the running `checkpoint` executable.
fn own_dir() -> Result<PathBuf, CliError> {
    let hint = "pass the adapter's path with --adapter";
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot find this executable: {e}"), hint))?;
    exe.parent()
        .map(Path::to_owned)
        .ok_or_else(|| CliError::new(format!("{}: no parent directory", exe.display()), hint))
}

/// The command line that runs `adapter`: its absolute path, shell-quoted when it needs it.
pub(crate) fn command_line(adapter: &Path) -> Result<String, CliError> {
    let hint = "install the adapter under a path that is valid UTF-8, or pass one with --adapter";
    let text = adapter
        .to_str()
        .ok_or_else(|| CliError::new(format!("{}: not valid UTF-8", adapter.display()), hint))?;
    shlex::try_quote(text)
        .map(|quoted| quoted.into_owned())
        .map_err(|e| CliError::new(format!("{}: {e}", adapter.display()), hint))
}

/// Whether `handler`'s command runs a program named `adapter` (its first word's file name).
pub(crate) fn runs(handler: &Value, adapter: &str) -> bool {
    let words = handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(shlex::split);
    words
        .as_ref()
        .and_then(|words| words.first())
        .and_then(|program| Path::new(program).file_name())
        .is_some_and(|name| name == adapter)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_with_spaces_are_quoted_and_still_recognised() {
        let plain = command_line(Path::new("/usr/bin/checkpoint-codex")).unwrap();
        assert_eq!(plain, "/usr/bin/checkpoint-codex");
        let spaced = command_line(Path::new("/my tools/it's/checkpoint-codex")).unwrap();
        assert_eq!(
            shlex::split(&spaced).unwrap(),
            ["/my tools/it's/checkpoint-codex"]
        );
        for command in [plain, spaced] {
            assert!(runs(&json!({"command": command}), "checkpoint-codex"));
        }
    }

    #[test]
    fn only_the_programs_file_name_counts() {
        let cases = [
            ("checkpoint-claude", true),
            ("$HOME/.cargo/bin/checkpoint-claude --verbose", true),
            ("/opt/checkpoint-claude-old", false),
            ("echo /bin/checkpoint-claude", false),
            ("'/unbalanced/checkpoint-claude", false),
        ];
        for (command, expected) in cases {
            let handler = json!({"type": "command", "command": command});
            assert_eq!(runs(&handler, "checkpoint-claude"), expected, "{command}");
        }
        assert!(!runs(&json!({"type": "prompt"}), "checkpoint-claude"));
    }
}
