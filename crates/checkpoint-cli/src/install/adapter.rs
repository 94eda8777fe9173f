//! The adapter binary a handler runs: where it is, the command line that runs it, and how a
//! handler that runs it is recognised: by the command install writes, an absolute path to a file
//! named `checkpoint-<agent>` and the marker [`HOOK_MARKER`] (in any directory, so that a reinstall
//! from elsewhere replaces it; after environment assignments a user may have put in front).

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
        Some(path) => std::path::absolute(path).map_err(|e| {
            CliError::usage(format!("{}: {e}", path.display()), "pass a valid path")
        })?,
        None => own_dir()?.join(&name),
    };
    if path.file_name() != Some(OsStr::new(&name)) {
        return Err(CliError::usage(
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

/// The argument after the adapter's path in a hook handler's command: the mark of our handlers.
/// The adapters take any argument other than `--version` and `--help` as a hook call.
pub(crate) const HOOK_MARKER: &str = "--hook";

/// The command line that runs `program` with `arg`: its absolute path, shell-quoted when it needs
/// it, then `arg`.
pub(crate) fn command_line(program: &Path, arg: &str) -> Result<String, CliError> {
    let hint = "install the adapter under a path that is valid UTF-8, or pass one with --adapter";
    let text = program
        .to_str()
        .ok_or_else(|| CliError::new(format!("{}: not valid UTF-8", program.display()), hint))?;
    shlex::try_quote(text)
        .map(|quoted| format!("{quoted} {arg}"))
        .map_err(|e| CliError::new(format!("{}: {e}", program.display()), hint))
}

/// Whether `entry`'s command (under `key`: `command`, or what the agent's hooks layout calls it)
/// is one [`command_line`] writes for a program named `program` and `arg`: an absolute path to a file of that name followed by `arg` — or by nothing, as installs
/// before the marker wrote it — after any environment assignments (`NAME=value`, also after
/// `env`). Any other argument, or a program found on `PATH`, is somebody else's.
pub(crate) fn runs(entry: &Value, key: &str, program: &str, arg: &str) -> bool {
    let words = entry.get(key).and_then(Value::as_str).and_then(invocation);
    match words.as_deref() {
        Some([path, rest @ ..]) => {
            let path = Path::new(path);
            path.is_absolute()
                && path.file_name() == Some(OsStr::new(program))
                && (rest.is_empty() || rest == [arg])
        }
        _ => false,
    }
}

/// The words of a shell command from its program on: leading environment assignments and an
/// `env` before them skipped. `None` when it does not split as a shell would.
pub(crate) fn invocation(command: &str) -> Option<Vec<String>> {
    let mut words = shlex::split(command)?;
    let env = words
        .first()
        .is_some_and(|w| w == "env" || w.ends_with("/env"));
    let skip = usize::from(env)
        + words[usize::from(env)..]
            .iter()
            .take_while(|w| is_assignment(w))
            .count();
    words.drain(..skip);
    Some(words)
}

/// The environment assignments (and the `env` before them) that `command` starts with, as shell
/// text; `None` when there are none.
fn env_prefix(command: &str) -> Option<String> {
    let words = shlex::split(command)?;
    let program = invocation(command)?.len();
    let prefix = &words[..words.len() - program];
    // An assignment's value is quoted, not the assignment: a quoted `NAME=value` is a program.
    let quoted: Option<Vec<String>> = (prefix.iter())
        .map(
            |word| match word.split_once('=').filter(|_| is_assignment(word)) {
                Some((name, value)) => Some(format!("{name}={}", shlex::try_quote(value).ok()?)),
                None => shlex::try_quote(word).ok().map(|w| w.into_owned()),
            },
        )
        .collect();
    quoted
        .filter(|words| !words.is_empty())
        .map(|words| words.join(" "))
}

/// `new`, a handler install writes, with the environment prefix the user gave the command of
/// `old` (the handler of ours it replaces) kept on each command of `new`.
pub(crate) fn keeping_env_prefix(old: &Value, new: &Value) -> Value {
    let mut kept = new.clone();
    let (Some(old), Some(fields)) = (old.as_object(), kept.as_object_mut()) else {
        return kept;
    };
    for (key, value) in fields.iter_mut() {
        let prefix = (old.get(key).and_then(Value::as_str)).and_then(env_prefix);
        if let (Some(prefix), Some(command)) = (prefix, value.as_str()) {
            *value = Value::String(format!("{prefix} {command}"));
        }
    }
    kept
}

/// Whether a shell word is an environment assignment, `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_with_spaces_are_quoted_and_still_recognised() {
        let plain = command_line(Path::new("/usr/bin/checkpoint-codex"), HOOK_MARKER).unwrap();
        assert_eq!(plain, "/usr/bin/checkpoint-codex --hook");
        let spaced =
            command_line(Path::new("/my tools/it's/checkpoint-codex"), HOOK_MARKER).unwrap();
        assert_eq!(
            shlex::split(&spaced).unwrap(),
            ["/my tools/it's/checkpoint-codex", "--hook"]
        );
        for command in [plain, spaced] {
            assert!(runs(
                &json!({"command": command}),
                "command",
                "checkpoint-codex",
                HOOK_MARKER
            ));
        }
    }

    /// Ours is the command install writes, also with environment assignments in front; a
    /// program that only happens to have the adapter's name is not.
    #[test]
    fn only_the_command_install_writes_is_ours() {
        let cases = [
            ("/usr/bin/checkpoint-claude --hook", true),
            ("/usr/bin/checkpoint-claude", true),
            ("FOO=1 '/my dir/checkpoint-claude' --hook", true),
            ("env A=1 B_2= /usr/bin/checkpoint-claude --hook", true),
            ("/usr/bin/env A=1 /usr/bin/checkpoint-claude --hook", true),
            ("checkpoint-claude --hook", false),
            ("checkpoint-claude", false),
            ("$HOME/.cargo/bin/checkpoint-claude --hook", false),
            ("/opt/theirs/checkpoint-claude --verbose", false),
            ("/opt/theirs/checkpoint-claude --hook --verbose", false),
            ("/opt/checkpoint-claude-old --hook", false),
            ("echo /bin/checkpoint-claude --hook", false),
            ("1A=x /usr/bin/checkpoint-claude --hook", false),
            ("'/unbalanced/checkpoint-claude", false),
        ];
        for (command, expected) in cases {
            let handler = json!({"type": "command", "command": command});
            assert_eq!(
                runs(&handler, "command", "checkpoint-claude", HOOK_MARKER),
                expected,
                "{command}"
            );
        }
        assert!(!runs(
            &json!({"type": "prompt"}),
            "command",
            "checkpoint-claude",
            HOOK_MARKER
        ));
    }
}
