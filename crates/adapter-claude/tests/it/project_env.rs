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
