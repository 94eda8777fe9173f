//! Test support for the checkpoint workspace: real git repositories built by the shell scripts in
//! `tests/fixtures/` (the gitoxide way), in fresh temporary directories.
//!
//! ```no_run
//! let repo = checkpoint_testkit::repo("failing-test");
//! assert!(repo.path().join(".git").is_dir());
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding the fixture scripts.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Environment that makes git deterministic and independent of the user's config.
pub fn git_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_AUTHOR_NAME", "Fixture"),
        ("GIT_AUTHOR_EMAIL", "fixture@example.com"),
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
        ("GIT_COMMITTER_NAME", "Fixture"),
        ("GIT_COMMITTER_EMAIL", "fixture@example.com"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ]
}

/// Runs `tests/fixtures/<name>.sh` (with `args`) in a new temporary directory and returns it.
/// Panics with the script's output when it fails: a broken fixture is a broken test.
pub fn repo_with_args(name: &str, args: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("ckpt-{name}-"))
        .tempdir()
        .expect("create temp dir");
    let script = fixtures_dir().join(format!("{name}.sh"));
    let out = Command::new("bash")
        .arg("-eu")
        .arg(&script)
        .args(args)
        .current_dir(dir.path())
        .envs(git_env())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "fixture {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Runs `tests/fixtures/<name>.sh` in a new temporary directory and returns it.
pub fn repo(name: &str) -> tempfile::TempDir {
    repo_with_args(name, &[])
}
