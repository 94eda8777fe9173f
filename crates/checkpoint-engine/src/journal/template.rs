//! Task templates: a small TOML file naming a task's steps and their validations.
//!
//! ```toml
//! name = "feature"                 # optional: the CLI's NAME wins
//!
//! [[step]]
//! name = "plan"
//!
//! [[step]]
//! name = "test"
//! validate = "cargo test"          # optional: must pass before the step is done
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use checkpoint_core::journal::task::StepSpec;

/// A template file that could not be used. One line, naming the file (and line).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TemplateError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// The task's default name.
    #[serde(default)]
    pub name: Option<String>,
    /// The steps, in order.
    #[serde(rename = "step")]
    pub steps: Vec<StepSpec>,
}

impl Template {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<Template, TemplateError> {
        let error = |line, message: String| TemplateError {
            path: path.to_owned(),
            line,
            message,
        };
        let text = crate::bounded::read_regular_text(path, crate::bounded::MAX_CONFIG_BYTES)
            .map_err(|e| error(None, e.to_string()))?;
        toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|span| 1 + text[..span.start.min(text.len())].matches('\n').count());
            error(line, e.message().lines().collect::<Vec<_>>().join("; "))
        })
    }
}

/// Parses the CLI's `--steps a,b,c` and `--validate STEP=CMD` into step specs.
pub fn steps_from_cli(steps: &str, validations: &[String]) -> Result<Vec<StepSpec>, String> {
    let mut specs: Vec<StepSpec> = steps
        .split(',')
        .map(|name| StepSpec {
            name: name.trim().to_owned(),
            validate: None,
        })
        .collect();
    for validation in validations {
        let Some((step, command)) = validation.split_once('=') else {
            return Err(format!("--validate {validation:?}: expected STEP=COMMAND"));
        };
        let Some(spec) = specs.iter_mut().find(|s| s.name == step.trim()) else {
            return Err(format!("--validate {validation:?}: no step named {step:?}"));
        };
        spec.validate = Some(command.to_owned());
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn template_files_parse_and_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        fs::write(
            &path,
            "name = \"feature\"\n\n[[step]]\nname = \"plan\"\n\n[[step]]\nname = \"test\"\nvalidate = \"make test\"\n",
        )
        .unwrap();
        let template = Template::read(&path).unwrap();
        assert_eq!(template.name.as_deref(), Some("feature"));
        assert_eq!(template.steps.len(), 2);
        assert_eq!(template.steps[1].validate.as_deref(), Some("make test"));

        fs::write(&path, "[[step]]\nname = \"plan\"\nvalidat = \"x\"\n").unwrap();
        let err = Template::read(&path).unwrap_err().to_string();
        let err = err.replace(dir.path().to_str().unwrap(), "/dir");
        assert_eq!(
            err,
            "/dir/t.toml:3: unknown field `validat`, expected `name` or `validate`"
        );
        let missing = Template::read(&dir.path().join("none.toml")).unwrap_err();
        assert_eq!(missing.line, None);
    }

    #[test]
    fn cli_steps_and_validations() {
        let specs = steps_from_cli("plan, test", &["test=make test -k a=b".into()]).unwrap();
        assert_eq!(specs[0].name, "plan");
        assert_eq!(specs[1].validate.as_deref(), Some("make test -k a=b"));
        assert!(steps_from_cli("a", &["b=x".into()]).is_err());
        assert!(steps_from_cli("a", &["a".into()]).is_err());
    }
}
