//! A `CHECKPOINT_*` variable that the project's `.claude/settings.json` puts into every hook's
//! environment is the project's value, held back until approved (issue 31).

use checkpoint_testkit::adapter;
use insta::assert_snapshot;

use super::CLAUDE;

#[test]
fn a_variable_from_the_projects_settings_is_held_back() {
    let settings = r#"{"env": {"CHECKPOINT_TESTS_COMMAND": "true"}}"#;
    let notice =
        adapter::assert_project_env_is_held_back(&CLAUDE, ".claude/settings.json", settings);
    assert_snapshot!(notice, @r"
    Checkpoint: the agent's project configuration sets these variables in the hook's environment; they are the project's values, not yours, and the stop gate holds them back until you approve them:
    - CHECKPOINT_TESTS_COMMAND (from .claude/settings.json)
    To use such a value, write it in checkpoint.toml and approve it with `checkpoint trust`, or in your own config file.
    ");
}

/// direnv's `.envrc` in the repository is the project's too, whatever the agent: an agent that
/// writes `export CHECKPOINT_TESTS_COMMAND=true` there (and runs `direnv allow`) does not choose
/// what the gate runs (issue 38).
#[test]
fn a_variable_from_the_projects_envrc_is_held_back() {
    let envrc = "export CHECKPOINT_TESTS_COMMAND=true\n";
    let notice = adapter::assert_project_env_is_held_back(&CLAUDE, ".envrc", envrc);
    assert!(
        notice.contains("- CHECKPOINT_TESTS_COMMAND (from .envrc)"),
        "{notice}"
    );
}

/// The user's own `CHECKPOINT_TESTS_COMMAND` (from the shell that started the agent, set by no
/// file of the repository) is the user's choice: it runs, and the approved project is not
/// reported as changed since it was approved (issue 38).
#[test]
fn the_users_own_variable_is_not_a_change() {
    let repo = checkpoint_testkit::repo("failing-test");
    let dir = repo.path();
    let config_home = tempfile::tempdir().unwrap();
    checkpoint_testkit::trust(config_home.path(), dir, &[]);
    let stdin = checkpoint_testkit::payload(CLAUDE.agent, CLAUDE.stop, dir);
    let mark = dir.join("users-command-ran");
    let users = format!("touch {}; python3 -m unittest -q", mark.display());
    let env = [("CHECKPOINT_TESTS_COMMAND", users.as_str())];
    let bin = std::path::Path::new(CLAUDE.bin);
    let run = checkpoint_testkit::run_hook_in(config_home.path(), bin, dir, stdin.as_bytes(), &env);
    assert!(CLAUDE.blocked(&run), "{run:?}");
    assert!(
        run.stdout.contains("test_calc.CalcTest.test_add"),
        "{run:?}"
    );
    assert!(mark.exists(), "the user's command ran");
    assert!(!run.stdout.contains("since you approved"), "{}", run.stdout);
    assert!(!run.stdout.contains("not approved"), "{}", run.stdout);
}
