//! Typing a message into a tmux pane so that Codex's composer submits it: a bracketed paste (the
//! composer takes the text whole, and no key of it as a command), a pause, then a separate Enter.
//! (Typed with `send-keys -l` instead, under load the composer took the Enter that followed as
//! part of the text: the message sat unsent in 5 of 11 runs.)

use std::process::Command;
use std::time::Duration;

/// How long the composer needs before a separate Enter counts as "submit".
const PASTE_SETTLE: Duration = Duration::from_millis(500);

/// Types `text` (already terminal-safe) into `pane` and submits it.
pub(crate) fn submit(pane: &str, text: &str) -> Result<(), String> {
    // A leading `/`, `!`, `?` or `@` means something to the composer; a space defuses it.
    let text = if text.starts_with(['/', '!', '?', '@']) {
        format!(" {text}")
    } else {
        text.to_owned()
    };
    // A buffer of this process's own, deleted by the paste.
    let buffer = format!("checkpoint-{}", std::process::id());
    tmux(&["set-buffer", "-b", &buffer, "--", &text])?;
    tmux(&["paste-buffer", "-p", "-d", "-b", &buffer, "-t", pane])?;
    std::thread::sleep(PASTE_SETTLE);
    tmux(&["send-keys", "-t", pane, "Enter"])
}

fn tmux(args: &[&str]) -> Result<(), String> {
    let out = Command::new("tmux")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run tmux: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "tmux {} failed: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
