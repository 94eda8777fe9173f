//! `checkpoint trust`, `untrust` and `trust --list`, and `checkpoint check` on an untrusted
//! project, with one config directory across the calls.

use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;

/// `checkpoint ARGS` in `dir` with `config` as `XDG_CONFIG_HOME`, stdin not a terminal.
fn run(config: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = cargo_bin_cmd!("checkpoint");
    cmd.current_dir(dir)
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .envs(checkpoint_testkit::git_env())
        .write_stdin("");
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKPOINT_") {
            cmd.env_remove(key);
        }
    }
    cmd.output().expect("run checkpoint")
}

#[test]
fn trust_untrust_and_check_on_an_untrusted_project() {
    let config = tempfile::tempdir().unwrap();
    let repo = checkpoint_testkit::repo("failing-test");
    let dir = repo.path();
    let marker = config.path().join("ran");
    let toml = format!(
        "[tests]\ncommand = \"touch {} && python3 -m unittest -q\"\n",
        marker.display()
    );
    std::fs::write(dir.join("checkpoint.toml"), toml).unwrap();
    let stable = |out: &[u8]| {
        (String::from_utf8_lossy(out).replace(&dir.display().to_string(), "[repo]"))
            .replace(&config.path().display().to_string(), "[config]")
    };

    let check = run(config.path(), dir, &["check"]);
    assert!(!marker.exists(), "an untrusted command ran");
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    insta::assert_snapshot!(stable(&check.stderr), @r"
    Checkpoint: this project's commands are not approved, so the stop gate ran none of them (the commit gate still applies):
    - tests.command: touch [config]/ran && python3 -m unittest -q
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");

    let refused = run(config.path(), dir, &["trust"]);
    assert_eq!(refused.status.code(), Some(2));
    insta::assert_snapshot!(stable(&refused.stderr), @r"
    error: not a terminal: cannot ask whether to trust these commands
    hint: read them above, then run `checkpoint trust --yes` to approve them
    ");

    let trusted = run(config.path(), dir, &["trust", "--yes"]);
    assert_eq!(trusted.status.code(), Some(0));
    insta::assert_snapshot!(stable(&trusted.stdout), @r"
    At the end of an agent's turn, checkpoint would run or apply in [repo]:
      tests.command: touch [config]/ran && python3 -m unittest -q
    Trusted [repo]: these commands now run at stops.
    ");

    let check = run(config.path(), dir, &["check"]);
    assert!(marker.exists());
    assert!(
        String::from_utf8_lossy(&check.stdout).starts_with("Checkpoint — Tests: FAILED"),
        "{check:?}"
    );
    let list = run(config.path(), dir, &["trust", "--list"]);
    let canonical = dir.canonicalize().unwrap();
    assert!(
        String::from_utf8_lossy(&list.stdout).contains(&format!("{}", canonical.display())),
        "{list:?}"
    );

    let untrusted = run(config.path(), dir, &["untrust"]);
    insta::assert_snapshot!(stable(&untrusted.stdout), @"Untrusted [repo]: the gate runs none of its commands until you trust it again.");
}

/// `config set` does not write through a `checkpoint.toml` that links out of the project.
#[test]
fn config_set_refuses_a_link_out_of_the_project() {
    let config = tempfile::tempdir().unwrap();
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let outside = config.path().join("elsewhere.toml");
    std::fs::write(&outside, "").unwrap();
    std::fs::remove_file(dir.join("checkpoint.toml")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("checkpoint.toml")).unwrap();
    let out = run(config.path(), dir, &["config", "set", "context.warn", "85"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr)
        .replace(&dir.display().to_string(), "[repo]")
        .replace(&config.path().display().to_string(), "[config]");
    insta::assert_snapshot!(stderr, @r"
    error: [repo]/checkpoint.toml is a link to [config]/elsewhere.toml, outside the project: not changed
    hint: edit the file it points to yourself, or replace the link with a file
    ");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "");
}

/// `stop.commit_gate = false` written into a trusted project's file takes effect only after
/// `checkpoint trust --yes`: until then `checkpoint check` still blocks uncommitted work and says
/// what it holds back.
#[test]
fn an_edited_guarded_value_applies_only_after_trust() {
    let config = tempfile::tempdir().unwrap();
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let trusted = run(config.path(), dir, &["trust", "--yes"]);
    assert_eq!(trusted.status.code(), Some(0), "{trusted:?}");
    std::fs::write(dir.join("deploy.yml"), "replicas: 2\n").unwrap();
    let file = dir.join("checkpoint.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}[stop]\ncommit_gate = false\n")).unwrap();

    let check = run(config.path(), dir, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("Commit your work before stopping"),
        "{check:?}"
    );
    let stderr =
        String::from_utf8_lossy(&check.stderr).replace(&dir.display().to_string(), "[repo]");
    insta::assert_snapshot!(stderr, @r"
    Checkpoint: this project's commands changed since you approved them; the stop gate still runs the approved ones.
    - new: stop.commit_gate: false (held back: the gate uses true)
    To approve, run `checkpoint trust` in [repo] (it shows what would run).
    ");

    let trusted = run(config.path(), dir, &["trust", "--yes"]);
    assert_eq!(trusted.status.code(), Some(0), "{trusted:?}");
    let check = run(config.path(), dir, &["check"]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
}
