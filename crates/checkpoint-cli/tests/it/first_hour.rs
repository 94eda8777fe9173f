//! The first hour of a new user, as the README tells it, on a fresh machine: a fresh `HOME` (so a
//! fresh cargo home, `~/.cargo`), no git identity, and `~/.cargo/bin` not on `PATH`. It runs the
//! Quickstart's `scripts/install.sh`, the demo's commands as the README spells them, then
//! `checkpoint install claude` + `checkpoint check` in the demo repository and `checkpoint
//! uninstall --all`.
//!
//! `scripts/install.sh` runs for real, with a stand-in `cargo` on `PATH` whose `build` puts a
//! script that runs each of the workspace's binaries (built by Cargo for the tests) where a
//! release build would, for the install script to copy into `~/.cargo/bin`: a real release build
//! of the workspace takes minutes the test suite should not spend, and copies of the debug
//! binaries would put hundreds of MB into a temporary directory that may be a small tmpfs (where
//! CI then failed to `mktemp -d`). What the stand-in skips is cargo's own work; the script's
//! progress lines, its copying, its PATH check and everything after it run as a user's would.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README's text.
fn readme() -> String {
    fs::read_to_string(workspace().join("README.md")).unwrap()
}

/// The code blocks of `lang` in the README's section `heading`, in order.
fn blocks(readme: &str, heading: &str, lang: &str) -> Vec<String> {
    let start = readme.find(heading).unwrap_or_else(|| panic!("{heading}"));
    let section = &readme[start + heading.len()..];
    let section = &section[..section.find("\n#").unwrap_or(section.len())];
    let fence = format!("```{lang}\n");
    section
        .split(&fence)
        .skip(1)
        .map(|block| block.split("```").next().unwrap().to_owned())
        .collect()
}

/// A fresh machine: a home, a `PATH` of the system's directories and a stand-in `cargo`.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        let machine = Machine {
            root: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(machine.home()).unwrap();
        fs::create_dir_all(machine.path("tmp")).unwrap();
        let binaries = checkpoint_e2e::workspace_binaries();
        // Each built binary as a two-line script that runs the workspace's: what the install
        // script copies is a few bytes, not the debug binaries.
        let built: Vec<String> = [
            &binaries.checkpoint,
            &binaries.claude,
            &binaries.gemini,
            &binaries.codex,
            &binaries.copilot,
            &binaries.opencode,
            &binaries.qwen,
            &binaries.droid,
        ]
        .iter()
        .map(|bin| {
            let name = bin.file_name().unwrap().to_str().unwrap();
            format!(
                "printf '#!/bin/sh\\nexec %s \"$@\"\\n' '{}' > \"$dir/{name}\"\n\
                 chmod +x \"$dir/{name}\"",
                bin.display()
            )
        })
        .collect();
        let target = machine.path("target");
        let cargo = format!(
            "#!/bin/sh\n# A stand-in for cargo: `metadata` names the machine's target directory, \
             `build` puts the binaries where a release build would.\ntarget='{}'\n\
             case \"$1\" in\n\
             metadata) printf '{{\"target_directory\":\"%s\"}}\\n' \"$target\" ;;\n\
             build)\n  dir=\"$target/release\"\n\
             while [ $# -gt 0 ]; do [ \"$1\" = --target ] && dir=\"$target/$2/release\"; shift; done\n\
             mkdir -p \"$dir\"\n{}\n  echo '    Finished `release` profile' >&2 ;;\n\
             *) exit 101 ;;\nesac\n",
            target.display(),
            built.join("\n")
        );
        let tools = machine.path("tools");
        fs::create_dir_all(&tools).unwrap();
        fs::write(tools.join("cargo"), cargo).unwrap();
        Command::new("chmod")
            .arg("+x")
            .arg(tools.join("cargo"))
            .status()
            .unwrap();
        machine
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// `PATH`: the stand-in cargo and the system's directories; with `cargo_bin`, `~/.cargo/bin`
    /// first, as after the line the install script asks for.
    fn path_var(&self, cargo_bin: bool) -> String {
        let mut dirs = Vec::new();
        if cargo_bin {
            dirs.push(self.home().join(".cargo/bin").display().to_string());
        }
        dirs.push(self.path("tools").display().to_string());
        dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(str::to_owned));
        dirs.join(":")
    }

    /// `bash -c script` in `dir`, with nothing of this process's environment but what a fresh
    /// login has.
    fn bash(&self, dir: &Path, script: &str, cargo_bin: bool) -> Output {
        Command::new("/bin/bash")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", self.path_var(cargo_bin))
            .env("TMPDIR", self.path("tmp"))
            .env("LANG", "C.UTF-8")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The demo's repository: the one directory `mktemp -d` made.
fn demo_dir(machine: &Machine) -> PathBuf {
    let mut dirs: Vec<PathBuf> = fs::read_dir(machine.path("tmp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(".git").is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

/// Every file under `dir` but `.git`, with its content.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                files.push((path.clone(), Vec::new()));
                stack.push(path);
            } else {
                let content = fs::read(&path).unwrap();
                files.push((path, content));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_readme_works_on_a_fresh_machine() {
    let machine = Machine::new();
    let readme = readme();

    // Quickstart: the install script says what it does and, with ~/.cargo/bin not on PATH,
    // the line to add — and fails, so that `&& checkpoint check` does not run into "command not
    // found".
    let quickstart = &blocks(&readme, "## Quickstart", "sh")[0];
    assert_eq!(quickstart.trim(), "scripts/install.sh && checkpoint check");
    let out = machine.bash(&workspace(), quickstart, false);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("==> cargo build --release: checkpoint checkpoint-claude")
            && stderr.contains("==> installed 8 binaries in "),
        "{stderr}"
    );
    assert!(
        stderr.contains("    export PATH=\"$HOME/.cargo/bin:$PATH\"\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("command not found"), "{stderr}");
    assert!(readme.contains("(`export PATH=\"$HOME/.cargo/bin:$PATH\"`)"));

    // With the line added, the script succeeds and `checkpoint` is found.
    let out = machine.bash(&workspace(), "scripts/install.sh", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("checkpoint "));

    // The demo, as the README spells it: its expected output is what the user sees.
    let demo = blocks(&readme, "### Try it on a broken test", "sh").join("\n");
    let out = machine.bash(machine.root.path(), &demo, true);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let expected = &blocks(&readme, "### Try it on a broken test", "text")[0];
    for line in expected.lines() {
        if line.contains('…') || line.starts_with("$ ") {
            continue;
        }
        assert!(
            stdout.contains(line),
            "README line {line:?} not in:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    assert!(
        stdout
            .contains("Note: no tests ran: the project's test command awaits the user's approval.")
    );
    let exits: Vec<&str> = stdout.lines().filter(|l| l.starts_with("exit ")).collect();
    assert_eq!(exits, ["exit 1", "exit 1", "exit 1", "exit 0"], "{stdout}");
    assert!(
        stdout.contains("Commit your work before stopping."),
        "{stdout}"
    );
    let repo = demo_dir(&machine);
    // And it runs again, in a directory of its own.
    let again = machine.bash(machine.root.path(), &demo, true);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let exits_again = text(&again.stdout);
    let exits_again: Vec<&str> = exits_again
        .lines()
        .filter(|l| l.starts_with("exit "))
        .collect();
    assert_eq!(exits_again, exits);

    // Install into an agent: the gate does not block on the files install wrote.
    let before = snapshot(&repo);
    let status = |m: &Machine| text(&m.bash(&repo, "git status --porcelain", true).stdout);
    let clean = status(&machine);
    let out = machine.bash(&repo, "checkpoint install claude", true);
    let installed = text(&out.stdout);
    assert!(out.status.success(), "{installed}\n{}", text(&out.stderr));
    assert!(
        installed.contains("Checkpoint's files in this project: .claude/settings.json"),
        "{installed}"
    );
    let out = machine.bash(&repo, "checkpoint check; echo \"exit $?\"", true);
    let checked = text(&out.stdout);
    assert!(checked.ends_with("exit 0\n"), "{checked}");
    assert!(!checked.contains(".claude"), "{checked}");

    // `uninstall --all` leaves the project exactly as it was.
    let out = machine.bash(&repo, "checkpoint uninstall --all", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(snapshot(&repo), before, "{}", text(&out.stdout));
    assert_eq!(status(&machine), clean);
}
