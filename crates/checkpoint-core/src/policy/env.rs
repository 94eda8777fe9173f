//! The environment's layer: the `CHECKPOINT_*` variables the settings table names, aliases
//! included. Other variables are ignored.

use super::error::ConfigError;
use super::layer::{Assignment, Layer};
use super::settings::KEYS;

/// Parses the variables of `env` (in order; a later duplicate wins) into a layer that remembers
/// which variable set each key. When a key's variable and its alias are both set, the variable
/// wins; an error names the variable actually set.
pub(crate) fn env_layer(env: &[(String, String)]) -> Result<Layer<String>, ConfigError> {
    let mut found = Vec::new();
    for (var, value) in env {
        let named = KEYS.iter().enumerate().find_map(|(key, row)| {
            let canonical = row.env == var;
            (canonical || row.aliases.contains(&var.as_str())).then_some((key, canonical))
        });
        let Some((key, canonical)) = named else {
            continue;
        };
        let write = KEYS[key]
            .slot
            .parse_text(value)
            .map_err(|message| ConfigError::Env {
                var: var.clone(),
                message,
            })?;
        let place = var.clone();
        found.push((canonical, Assignment { key, place, write }));
    }
    // Aliases are applied first, so that a canonical variable overrides them.
    found.sort_by_key(|&(canonical, _)| canonical);
    Ok(Layer(found.into_iter().map(|(_, set)| set).collect()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::policy::config::Origin;
    use crate::policy::test_support::Sources;
    use crate::policy::{
        ContextSettings, GitBackend, ResumeSettings, StopSettings, Switch, TestSettings,
    };

    #[test]
    fn context_resume_and_clear_from_env() {
        let project = "[context]\nwarn = 60\n[resume]\nauto = false\n";
        let policy = Sources::project(project)
            .env(&[
                ("CHECKPOINT_CONTEXT_WARN", "85"),
                ("CHECKPOINT_CONTEXT_CRITICAL", " 99 "),
                ("CHECKPOINT_CONTEXT_WINDOW", "1000000"),
                ("CHECKPOINT_AUTO_RESUME", "Prompt"),
                ("CHECKPOINT_RESUME_MAX_RESTARTS", "100"),
                ("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", "no"),
            ])
            .policy();
        assert_eq!(
            policy.context,
            ContextSettings {
                warn: 85,
                critical: 99,
                window: Some(1_000_000),
            }
        );
        assert_eq!(
            policy.resume,
            ResumeSettings {
                auto: Switch::Prompt,
                max_restarts: 100,
            }
        );
        assert_eq!(policy.clear.auto_checkpoint, Switch::Off);
    }

    #[test]
    fn resume_auto_has_a_canonical_variable_and_an_alias() {
        let explained_auto = |vars: &[(&str, &str)]| {
            let f = Sources::new(None, None).env(vars);
            let auto = f.settings().into_iter().find(|s| s.key == "resume.auto");
            auto.map(|s| (s.value_text(), s.origin)).unwrap()
        };
        let env = |var: &str| Origin::Env(var.to_owned());
        assert_eq!(
            explained_auto(&[("CHECKPOINT_RESUME_AUTO", "prompt")]),
            ("\"prompt\"".to_owned(), env("CHECKPOINT_RESUME_AUTO"))
        );
        assert_eq!(
            explained_auto(&[("CHECKPOINT_AUTO_RESUME", "no")]),
            ("false".to_owned(), env("CHECKPOINT_AUTO_RESUME"))
        );
        // When both are set, the canonical name wins, whatever their order.
        for vars in [
            [
                ("CHECKPOINT_RESUME_AUTO", "no"),
                ("CHECKPOINT_AUTO_RESUME", "prompt"),
            ],
            [
                ("CHECKPOINT_AUTO_RESUME", "prompt"),
                ("CHECKPOINT_RESUME_AUTO", "no"),
            ],
        ] {
            assert_eq!(
                explained_auto(&vars),
                ("false".to_owned(), env("CHECKPOINT_RESUME_AUTO"))
            );
        }
        let f = Sources::new(None, None).env(&[("CHECKPOINT_RESUME_AUTO", "sometimes")]);
        insta::assert_snapshot!(f.error(), @r#"CHECKPOINT_RESUME_AUTO: expected true/false, 1/0, yes/no or prompt, got "sometimes""#);
    }

    #[test]
    fn env_errors() {
        let error = |var: &str, value: &str| Sources::new(None, None).env(&[(var, value)]).error();
        insta::assert_snapshot!(error("CHECKPOINT_STOP_MAX_BLOCKS", "abc"), @r#"CHECKPOINT_STOP_MAX_BLOCKS: expected a whole number, got "abc""#);
        insta::assert_snapshot!(error("CHECKPOINT_STOP_MAX_BLOCKS", "101"), @"CHECKPOINT_STOP_MAX_BLOCKS: must be at most 100, got 101");
        insta::assert_snapshot!(error("CHECKPOINT_STOP_COMMIT_GATE", "maybe"), @r#"CHECKPOINT_STOP_COMMIT_GATE: expected true/false, 1/0 or yes/no, got "maybe""#);
        insta::assert_snapshot!(error("CHECKPOINT_STOP_CAPTURE_INTERVAL", "0s"), @r#"CHECKPOINT_STOP_CAPTURE_INTERVAL: must be a positive duration, got "0s""#);
        insta::assert_snapshot!(error("CHECKPOINT_TESTS_TIMEOUT", "soon"), @r#"CHECKPOINT_TESTS_TIMEOUT: expected a duration like "120s", "2m" or "1m30s", got "soon""#);
        insta::assert_snapshot!(error("CHECKPOINT_GIT_BACKEND", "svn"), @"CHECKPOINT_GIT_BACKEND: unknown variant `svn`, expected one of `auto`, `cli`, `gix`");
    }

    #[test]
    fn env_overrides_project() {
        let project = "[tests]\ncommand = \"make test\"\ntimeout = \"10s\"\n\
                       [stop]\nmax_blocks = 7\ncommit_gate = true\n[git]\nbackend = \"cli\"\n";
        let policy = Sources::project(project)
            .env(&[
                ("CHECKPOINT_TESTS_COMMAND", "just test"),
                ("CHECKPOINT_TESTS_TIMEOUT", "1m30s"),
                ("CHECKPOINT_STOP_COMMIT_GATE", "no"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "9"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "0"),
                ("CHECKPOINT_STOP_CAPTURE", "YES"),
                ("CHECKPOINT_STOP_CAPTURE_INTERVAL", "500ms"),
                ("CHECKPOINT_GIT_BACKEND", "gix"),
                ("CHECKPOINT_STATE_DIR", "not a setting of this module"),
            ])
            .policy();
        assert_eq!(
            policy.tests,
            TestSettings {
                command: Some("just test".into()),
                timeout: Duration::from_secs(90),
                ..TestSettings::default()
            }
        );
        assert_eq!(
            policy.stop,
            StopSettings {
                commit_gate: false,
                max_blocks: 0,
                capture: true,
                capture_interval: Duration::from_millis(500),
                ..StopSettings::default()
            }
        );
        assert_eq!(policy.git.backend, GitBackend::Gix);
    }
}
