//! The git hooks behind `checkpoint install git` / `checkpoint uninstall git`: `post-commit` and
//! `pre-push` (git has no post-push) record a checkpoint of the active task through the hidden
//! `checkpoint git-hook` command, and `pre-push` then pushes the checkpoint refs to the remote git
//! is pushing to (its arguments, passed on), within `[travel] push_budget`. Our step's exit status
//! is ignored, and its stderr (one line when refs did not go) reaches the user. A wrapper written
//! before the arguments were passed on still works: it records the checkpoint and pushes nothing;
//! installing again replaces it.
//!
//! An existing hook is never replaced: it is renamed aside to `<hook>.checkpoint-chained`
//! (content, mode and symlink-ness untouched) and our wrapper runs it first, with the same
//! arguments and stdin, and exits with its status; the checkpoint is only recorded when it
//! succeeded. Uninstalling removes the wrapper and renames the original back, so it is exactly
//! as it was. Hooks go where git looks for them (`git rev-parse --git-path hooks`, which honours
//! `core.hooksPath`). `--dry-run` reports the same changes and writes nothing.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use checkpoint_core::doctor::Check;
use checkpoint_engine::store;

use crate::{CliError, output, project};

/// The hooks installed.
pub(crate) const HOOKS: [&str; 2] = ["post-commit", "pre-push"];

/// The line that marks a hook file as ours.
const MARKER: &str = "# checkpoint-managed hook";

/// How the wrapper passes git's arguments on to `checkpoint git-hook`.
const PASSED_ON: &str = "-- \"$@\"";

/// Appended to an existing hook's name when it is moved aside.
const CHAINED: &str = ".checkpoint-chained";

/// What happened to one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookChange {
    /// Our wrapper was written; `chained` when an existing hook was moved aside and is run by it.
    Installed {
        /// The hook's name.
        hook: &'static str,
        /// An existing hook is chained.
        chained: bool,
    },
    /// Our wrapper was already there, unchanged.
    AlreadyInstalled(&'static str),
    /// Our wrapper was removed; `restored` when the original hook was put back.
    Removed {
        /// The hook's name.
        hook: &'static str,
        /// The chained original is back in place.
        restored: bool,
    },
    /// Nothing of ours was there.
    NotInstalled(&'static str),
}

/// What `checkpoint doctor` says of the `pre-push` hook in `dir`: `None` when it is not ours,
/// else whether it pushes the checkpoint refs (a wrapper of an older version passes git's
/// arguments on to nothing).
pub(crate) fn pre_push_check(dir: &Path) -> Option<Check> {
    let path = dir.join("pre-push");
    if !is_ours(&path) {
        return None;
    }
    let current = fs::read_to_string(&path).is_ok_and(|text| text.contains(PASSED_ON));
    Some(if current {
        Check::ok(format!(
            "{}: pushes the checkpoint refs with every push",
            path.display()
        ))
    } else {
        Check::problem(
            format!(
                "{}: installed by an older version, it pushes no checkpoint refs",
                path.display()
            ),
            "checkpoint install git",
        )
    })
}

/// Where git looks for the hooks of the repository around `cwd`.
pub(crate) fn hooks_dir(cwd: &Path) -> Result<PathBuf, CliError> {
    let hint = "run this inside a git repository";
    let out = Command::new("git")
        .args(checkpoint_engine::git::SAFE_CONFIG)
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(cwd)
        .output()
        .map_err(|e| CliError::new(format!("cannot run git: {e}"), hint))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(CliError::new(
            format!("git rev-parse failed: {}", stderr.trim()),
            hint,
        ));
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(cwd.join(dir))
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> CliError + '_ {
    move |e| {
        CliError::new(
            format!("{}: {e}", path.display()),
            "check the permissions of the hooks directory",
        )
    }
}

fn is_ours(path: &Path) -> bool {
    fs::read_to_string(path)
        .is_ok_and(|text| text.lines().nth(1).is_some_and(|l| l.starts_with(MARKER)))
}

fn aside(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(CHAINED);
    path.with_file_name(name)
}

/// The wrapper script for `hook`, running `checkpoint` at `exe`.
fn wrapper(hook: &str, exe: &Path) -> Result<String, CliError> {
    let exe = exe.display().to_string();
    let exe = shlex::try_quote(&exe).map_err(|e| {
        CliError::new(
            format!("{exe}: {e}"),
            "install checkpoint at a path without NUL bytes",
        )
    })?;
    Ok(format!(
        "#!/bin/sh\n{MARKER}: records a checkpoint of the active task after running the {hook} \
         hook it\n# replaced, if any ({hook}{CHAINED}). Remove with `checkpoint uninstall git`.\n\
         chained=\"$(dirname \"$0\")/{hook}{CHAINED}\"\n\
         status=0\n\
         if [ -x \"$chained\" ]; then\n    \"$chained\" \"$@\" || status=$?\nfi\n\
         if [ \"$status\" -eq 0 ]; then\n    {exe} git-hook {hook} {PASSED_ON} </dev/null >/dev/null || true\nfi\n\
         exit \"$status\"\n"
    ))
}

/// Installs the hooks in `dir`, each running `exe git-hook <hook>`; an existing hook is chained.
/// Every hook is checked before anything is written: a foreign hook next to a leftover chained
/// copy refuses the whole install. With `dry_run`, reports the changes and writes nothing.
pub(crate) fn install(dir: &Path, exe: &Path, dry_run: bool) -> Result<Vec<HookChange>, CliError> {
    let mut plan = Vec::new();
    for hook in HOOKS {
        let path = dir.join(hook);
        let script = wrapper(hook, exe)?;
        let exists = path.symlink_metadata().is_ok();
        let foreign = exists && !is_ours(&path);
        let chained = aside(&path);
        let has_chained = chained.symlink_metadata().is_ok();
        if foreign && has_chained {
            return Err(CliError::new(
                format!(
                    "{}: both a hook and an older chained hook {} exist",
                    path.display(),
                    chained.display()
                ),
                "merge or remove one of them by hand, then install again",
            ));
        }
        let current = !foreign && fs::read_to_string(&path).is_ok_and(|text| text == script);
        plan.push((hook, path, script, foreign, current, foreign || has_chained));
    }
    if !dry_run {
        fs::create_dir_all(dir).map_err(io_error(dir))?;
    }
    let mut changes = Vec::new();
    for (hook, path, script, foreign, current, chained) in plan {
        if current {
            changes.push(HookChange::AlreadyInstalled(hook));
            continue;
        }
        changes.push(HookChange::Installed { hook, chained });
        if dry_run {
            continue;
        }
        if foreign {
            fs::rename(&path, aside(&path)).map_err(io_error(&path))?;
        }
        store::write_atomic_sweeping(&path, script.as_bytes())
            .map_err(|e| CliError::new(e, "check the permissions of the hooks directory"))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).map_err(io_error(&path))?;
    }
    Ok(changes)
}

/// Removes our hooks from `dir` and puts chained originals back. A hook that is not ours is left
/// alone. With `dry_run`, reports the changes and writes nothing.
pub(crate) fn uninstall(dir: &Path, dry_run: bool) -> Result<Vec<HookChange>, CliError> {
    let mut changes = Vec::new();
    for hook in HOOKS {
        let path = dir.join(hook);
        if !is_ours(&path) {
            changes.push(HookChange::NotInstalled(hook));
            continue;
        }
        let chained = aside(&path);
        let restored = chained.symlink_metadata().is_ok();
        changes.push(HookChange::Removed { hook, restored });
        if dry_run {
            continue;
        }
        fs::remove_file(&path).map_err(io_error(&path))?;
        if restored {
            fs::rename(&chained, &path).map_err(io_error(&chained))?;
        }
    }
    Ok(changes)
}

/// The hooks directory of the repository around the current directory.
fn current_hooks_dir(user: bool) -> Result<PathBuf, CliError> {
    if user {
        return Err(CliError::usage(
            "git hooks are per repository; --user does not apply",
            "run `checkpoint install git` inside the repository",
        ));
    }
    hooks_dir(&project::cwd()?)
}

/// One line per change, for the user.
fn report(dir: &Path, changes: &[HookChange], dry_run: bool) {
    let would = if dry_run { "would be " } else { "" };
    for change in changes {
        let line = match change {
            HookChange::Installed { hook, chained } => {
                let chain = if *chained {
                    format!("; the existing hook, kept as {hook}{CHAINED}, runs first")
                } else {
                    String::new()
                };
                format!("{hook}: {would}installed{chain}")
            }
            HookChange::AlreadyInstalled(hook) => format!("{hook}: already installed"),
            HookChange::Removed { hook, restored } => {
                let back = if *restored {
                    ", the original hook put back"
                } else {
                    ""
                };
                format!("{hook}: {would}removed{back}")
            }
            HookChange::NotInstalled(hook) => format!("{hook}: not installed"),
        };
        output::out(&format!("{}: {line}", dir.display()));
    }
}

/// `checkpoint install git`: the hooks of the repository around the current directory, running
/// this executable.
pub(crate) fn install_command(
    user: bool,
    adapter_given: bool,
    dry_run: bool,
) -> Result<ExitCode, CliError> {
    if adapter_given {
        return Err(CliError::usage(
            "--adapter does not apply to git: the hooks run `checkpoint git-hook`",
            "drop --adapter",
        ));
    }
    let dir = current_hooks_dir(user)?;
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            format!("cannot find this executable: {e}"),
            "run checkpoint by its path",
        )
    })?;
    let changes = install(&dir, &exe, dry_run)?;
    report(&dir, &changes, dry_run);
    Ok(ExitCode::SUCCESS)
}

/// `checkpoint uninstall git`.
pub(crate) fn uninstall_command(user: bool, dry_run: bool) -> Result<ExitCode, CliError> {
    let dir = current_hooks_dir(user)?;
    let changes = uninstall(&dir, dry_run)?;
    report(&dir, &changes, dry_run);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    use checkpoint_testkit::git;

    /// A repository with a foreign executable pre-push hook and a fake `checkpoint` that logs its
    /// arguments.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        let exe = dir.path().join("fake checkpoint");
        let log = dir.path().join("log");
        fs::write(
            &exe,
            format!("#!/bin/sh\necho \"$@\" >> '{}'\n", log.display()),
        )
        .unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let hooks = hooks_dir(&repo).unwrap();
        fs::create_dir_all(&hooks).unwrap();
        let pre_push = hooks.join("pre-push");
        fs::write(
            &pre_push,
            "#!/bin/sh\ncat > \"$(dirname \"$0\")/../pushed\"\nexit 0\n",
        )
        .unwrap();
        fs::set_permissions(&pre_push, fs::Permissions::from_mode(0o750)).unwrap();
        (dir, repo, exe)
    }

    #[test]
    fn hooks_chain_to_the_existing_hook_and_uninstall_restores_it_exactly() {
        let (dir, repo, exe) = setup();
        let hooks = hooks_dir(&repo).unwrap();
        let original = fs::read(hooks.join("pre-push")).unwrap();
        let changes = install(&hooks, &exe, false).unwrap();
        assert_eq!(
            changes,
            [
                HookChange::Installed {
                    hook: "post-commit",
                    chained: false
                },
                HookChange::Installed {
                    hook: "pre-push",
                    chained: true
                },
            ]
        );
        assert_eq!(
            install(&hooks, &exe, false).unwrap(),
            [
                HookChange::AlreadyInstalled("post-commit"),
                HookChange::AlreadyInstalled("pre-push")
            ]
        );

        fs::write(repo.join("a.txt"), "a").unwrap();
        git(&repo, &["add", "a.txt"]);
        git(&repo, &["commit", "-qm", "a"]);
        let log = dir.path().join("log");
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "git-hook post-commit --\n"
        );

        // git runs pre-push on a push; run it as git would, refs on stdin.
        let out = // Through `sh`, which reads the script: exec-ing a file written a moment ago can fail with
        // ETXTBSY while another test thread's fork still holds its write descriptor.
        Command::new("sh")
            .arg(hooks.join("pre-push"))
            .args(["origin", "/tmp/remote"])
            .stdin(fs::File::open(repo.join("a.txt")).unwrap())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(fs::read_to_string(hooks.join("../pushed")).unwrap(), "a");
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "git-hook post-commit --\ngit-hook pre-push -- origin /tmp/remote\n"
        );

        assert_eq!(
            uninstall(&hooks, false).unwrap(),
            [
                HookChange::Removed {
                    hook: "post-commit",
                    restored: false
                },
                HookChange::Removed {
                    hook: "pre-push",
                    restored: true
                },
            ]
        );
        assert!(!hooks.join("post-commit").exists());
        assert_eq!(fs::read(hooks.join("pre-push")).unwrap(), original);
        let mode = fs::metadata(hooks.join("pre-push"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750);
        assert!(!aside(&hooks.join("pre-push")).exists());
        assert_eq!(
            uninstall(&hooks, false).unwrap(),
            [
                HookChange::NotInstalled("post-commit"),
                HookChange::NotInstalled("pre-push")
            ]
        );
    }

    #[test]
    fn a_failing_chained_hook_fails_the_push_and_records_nothing() {
        let (dir, repo, exe) = setup();
        let hooks = hooks_dir(&repo).unwrap();
        fs::write(hooks.join("pre-push"), "#!/bin/sh\nexit 7\n").unwrap();
        install(&hooks, &exe, false).unwrap();
        let status = // Through `sh`, which reads the script: exec-ing a file written a moment ago can fail with
        // ETXTBSY while another test thread's fork still holds its write descriptor.
        Command::new("sh")
            .arg(hooks.join("pre-push"))
            .stdin(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(7));
        assert!(!dir.path().join("log").exists());
    }

    #[test]
    fn a_leftover_chained_copy_next_to_a_foreign_hook_is_refused() {
        let (_dir, repo, exe) = setup();
        let hooks = hooks_dir(&repo).unwrap();
        fs::write(aside(&hooks.join("pre-push")), "old").unwrap();
        let err = install(&hooks, &exe, false).unwrap_err();
        assert!(
            err.message.contains("older chained hook"),
            "{}",
            err.message
        );
        assert_eq!(
            fs::read_to_string(aside(&hooks.join("pre-push"))).unwrap(),
            "old"
        );
    }

    #[test]
    fn the_executable_path_is_quoted() {
        let script = wrapper("post-commit", Path::new("/opt/it's here/checkpoint")).unwrap();
        let line = script.lines().find(|l| l.contains("git-hook")).unwrap();
        assert_eq!(
            shlex::split(line).unwrap()[..5],
            [
                "/opt/it's here/checkpoint",
                "git-hook",
                "post-commit",
                "--",
                "$@"
            ]
        );
        assert_eq!(
            script.lines().nth(1).map(|l| l.starts_with(MARKER)),
            Some(true)
        );
    }
}
