//! Installing the pinned agent CLIs (`install-clis.sh`) once per test run.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::Agent;

/// Paths of the installed CLI executables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clis {
    /// `claude` (Claude Code 2.1.330, a native binary).
    pub claude: PathBuf,
    /// `gemini` (Gemini CLI 0.61.0, a Node script).
    pub gemini: PathBuf,
    /// `codex` (Codex CLI 0.169.0, a Node launcher for the native binary).
    pub codex: PathBuf,
    /// `copilot`.
    pub copilot: PathBuf,
    /// `opencode` (OpenCode 1.18.33, a native binary).
    pub opencode: PathBuf,
    /// `qwen` (Qwen Code 0.24.4, a Node script).
    pub qwen: PathBuf,
    /// `droid` (Factory Droid 0.225.2, a native binary).
    pub droid: PathBuf,
}

impl Clis {
    /// The executable for `agent`.
    pub fn path(&self, agent: Agent) -> &Path {
        match agent {
            Agent::Claude => &self.claude,
            Agent::Gemini => &self.gemini,
            Agent::Codex => &self.codex,
            Agent::Copilot => &self.copilot,
            Agent::OpenCode => &self.opencode,
            Agent::Qwen => &self.qwen,
            Agent::Droid => &self.droid,
        }
    }
}

/// The install script, next to this crate's manifest.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install-clis.sh")
}

/// `$CHECKPOINT_E2E_CACHE`, else `$HOME/.cache/checkpoint-e2e` (the script's own rule).
fn cache_dir() -> Result<PathBuf, String> {
    match std::env::var_os("CHECKPOINT_E2E_CACHE") {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| Path::new(&home).join(".cache/checkpoint-e2e"))
            .ok_or_else(|| "neither CHECKPOINT_E2E_CACHE nor HOME is set".to_owned()),
    }
}

/// Installs the CLIs if needed and returns their paths. Runs `install-clis.sh` at most once per
/// process, under an exclusive lock on `<cache>/.install.lock` so that parallel test processes
/// (nextest) take turns. `None` when they cannot be installed (no npm, no network): the running
/// test is then not run, and says so by its name with the script's last word
/// ([`checkpoint_testkit::not_run`]); in CI (`CI` set) that is a broken setup, and this panics.
pub fn clis() -> Option<&'static Clis> {
    static CLIS: OnceLock<Result<Clis, String>> = OnceLock::new();
    match CLIS.get_or_init(install) {
        Ok(clis) => Some(clis),
        Err(e) => {
            checkpoint_testkit::not_run(&format!("the agent CLIs, which were not installed: {e}"));
            None
        }
    }
}

fn install() -> Result<Clis, String> {
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache).map_err(|e| format!("create {}: {e}", cache.display()))?;
    let lock_path = cache.join(".install.lock");
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("lock {}: {e}", lock_path.display()))?;
    let script = script();
    let out = Command::new("bash")
        .arg(&script)
        .env("CHECKPOINT_E2E_CACHE", &cache)
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    drop(lock);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // The script's last line names what failed (`install-clis: error: npm is not on PATH`).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!(
            "{} exited with {}: {last}",
            script.display(),
            out.status
        ));
    }
    parse_paths(&stdout)
}

/// Parses the script's `<agent>=<path>` lines.
fn parse_paths(stdout: &str) -> Result<Clis, String> {
    let find = |agent: Agent| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(agent.name())?.strip_prefix('='))
            .map(PathBuf::from)
            .ok_or_else(|| format!("install-clis.sh printed no {agent}= line:\n{stdout}"))
    };
    Ok(Clis {
        claude: find(Agent::Claude)?,
        gemini: find(Agent::Gemini)?,
        codex: find(Agent::Codex)?,
        copilot: find(Agent::Copilot)?,
        opencode: find(Agent::OpenCode)?,
        qwen: find(Agent::Qwen)?,
        droid: find(Agent::Droid)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_script_output() {
        let clis =
            parse_paths("claude=/c/claude\ngemini=/g/gemini\ncodex=/x/codex\ncopilot=/p/copilot\nopencode=/o/opencode\nqwen=/q/qwen\ndroid=/d/droid\n")
                .unwrap();
        assert_eq!(clis.path(Agent::OpenCode), Path::new("/o/opencode"));
        assert_eq!(clis.path(Agent::Qwen), Path::new("/q/qwen"));
        assert_eq!(clis.path(Agent::Droid), Path::new("/d/droid"));
        assert_eq!(clis.path(Agent::Copilot), Path::new("/p/copilot"));
        assert_eq!(clis.path(Agent::Gemini), Path::new("/g/gemini"));
        assert_eq!(clis.path(Agent::Codex), Path::new("/x/codex"));
        assert_eq!(clis.path(Agent::Claude), Path::new("/c/claude"));
        let missing = parse_paths("claude=/c\ngemini=/g\n").unwrap_err();
        assert!(missing.contains("codex="), "{missing}");
    }
}
