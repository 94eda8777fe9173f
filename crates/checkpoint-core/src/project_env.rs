//! Where an agent's own project configuration puts variables into its hooks' environment, as
//! data: each agent's home lists its sources ([`AgentHome::project_env`](crate::home::AgentHome::project_env)),
//! the engine reads those files (bounded) and asks [`ProjectEnvSource::sets`] whether a
//! `CHECKPOINT_*` variable of the hook's environment holds a value the repository set. Such a
//! value is the project's, approved like `checkpoint.toml`'s, not the user's.
//!
//! The readings are generous on purpose: a text that could be read as setting the variable to the
//! value counts, so that a quirk of one reader cannot pass a repository's value off as the user's.

use serde_json::Value;

/// A file of an agent's project configuration that sets variables in every hook's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectEnvSource {
    /// The file, relative to a directory: it is looked for in the hook's working directory and in
    /// each directory above it, up to the repository's root.
    pub path: &'static str,
    /// How its text sets variables.
    pub format: EnvFormat,
}

/// The sources of every agent, whichever it is: direnv's `.envrc`, whose variables a shell that
/// loaded it gives the agent it starts, and so every hook. The file is in the repository, where
/// the agent writes (and `direnv allow` is a command it can run as well as the user can), so what
/// it sets is the project's. Its plain assignments (`export NAME=value`) are read; a name or
/// value the shell computes is not.
pub const EVERY_AGENT: &[ProjectEnvSource] = &[ProjectEnvSource {
    path: ".envrc",
    format: EnvFormat::DotEnv,
}];

/// How a [`ProjectEnvSource`]'s text sets variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvFormat {
    /// A JSON object whose member of this name is an object of variable names to values
    /// (strings; numbers and booleans as written).
    JsonMember(&'static str),
    /// `NAME=value` lines as a dotenv reader takes them: `export ` before the name, `:` for `=`,
    /// values in `'…'`, `"…"` (escapes expanded) or `` `…` ``, which may span lines, and `#`
    /// comments.
    DotEnv,
}

impl ProjectEnvSource {
    /// Every (variable, value) `text` may be read as setting, in order (a value may be listed
    /// under more than one reading).
    pub fn values(&self, text: &str) -> Vec<(String, String)> {
        match self.format {
            EnvFormat::JsonMember(member) => json_values(text, member),
            EnvFormat::DotEnv => dotenv_values(text),
        }
    }

    /// Whether `text` may be read as setting `var` to `value`.
    pub fn sets(&self, text: &str, var: &str, value: &str) -> bool {
        (self.values(text).iter()).any(|(name, set)| name == var && set == value)
    }
}

fn json_values(text: &str, member: &str) -> Vec<(String, String)> {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(Value::Object(vars)) = root.get(member) else {
        return Vec::new();
    };
    (vars.iter())
        .filter_map(|(name, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((name.clone(), text))
        })
        .collect()
}

fn dotenv_values(text: &str) -> Vec<(String, String)> {
    let text = text.replace("\r\n", "\n");
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let line = rest[..line_end].trim_start();
        let next = &rest[(line_end + 1).min(rest.len())..];
        let Some((name, after)) = assignment(line) else {
            rest = next;
            continue;
        };
        let value = after.trim_start_matches([' ', '\t']);
        let quote = value
            .chars()
            .next()
            .filter(|c| matches!(c, '"' | '\'' | '`'));
        if let Some(q) = quote {
            // A quoted value may run on over the following lines: look in the rest of the text.
            let from = value.as_ptr() as usize - rest.as_ptr() as usize + q.len_utf8();
            let body = &rest[from..];
            if let Some(end) = closing(body, q) {
                let raw = &body[..end];
                found.push((name.to_owned(), raw.to_owned()));
                if q == '"' {
                    let expanded = raw
                        .replace("\\n", "\n")
                        .replace("\\r", "\r")
                        .replace("\\\"", "\"");
                    found.push((name.to_owned(), expanded));
                }
                let after_quote = &body[end + 1..];
                rest = after_quote.find('\n').map_or("", |i| &after_quote[i + 1..]);
                continue;
            }
        }
        // Unquoted: up to a `#`, trimmed; the whole line's value too.
        let cut = value.split('#').next().unwrap_or_default().trim();
        found.push((name.to_owned(), cut.to_owned()));
        if value.trim() != cut {
            found.push((name.to_owned(), value.trim().to_owned()));
        }
        rest = next;
    }
    found
}

/// `NAME` and what follows its `=` (or `: `) on a dotenv line; `None` for a comment or a line
/// that assigns nothing.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let line = line
        .strip_prefix("export")
        .filter(|rest| rest.starts_with([' ', '\t']))
        .map_or(line, str::trim_start);
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    if name.is_empty() {
        return None;
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    if let Some(value) = rest.strip_prefix('=') {
        return Some((name, value));
    }
    let value = rest.strip_prefix(':')?;
    value.starts_with([' ', '\t']).then_some((name, value))
}

/// Where the quote `q` that closes `body` is (a `\` escapes a `"`).
fn closing(body: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in body.char_indices() {
        match c {
            '\\' if q == '"' && !escaped => escaped = true,
            c if c == q && !escaped => return Some(at),
            _ => escaped = false,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: ProjectEnvSource = ProjectEnvSource {
        path: "settings.json",
        format: EnvFormat::JsonMember("env"),
    };
    const DOTENV: ProjectEnvSource = ProjectEnvSource {
        path: ".env",
        format: EnvFormat::DotEnv,
    };

    fn values(source: &ProjectEnvSource, text: &str) -> Vec<(String, String)> {
        source.values(text)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        (list.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_json_member_sets_its_strings_numbers_and_booleans() {
        let text = r#"{"hooks": {}, "env": {"CHECKPOINT_TESTS_COMMAND": "true",
            "CHECKPOINT_STOP_MAX_BLOCKS": 0, "CHECKPOINT_STOP_COMMIT_GATE": false,
            "NESTED": {"x": 1}}}"#;
        assert_eq!(
            values(&SETTINGS, text),
            pairs(&[
                ("CHECKPOINT_TESTS_COMMAND", "true"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "0"),
                ("CHECKPOINT_STOP_COMMIT_GATE", "false"),
            ])
        );
        assert!(SETTINGS.sets(text, "CHECKPOINT_TESTS_COMMAND", "true"));
        assert!(!SETTINGS.sets(text, "CHECKPOINT_TESTS_COMMAND", "pytest"));
        for broken in [
            "",
            "[]",
            "{\"env\": [1]}",
            "{not json",
            "{\"other\": {\"A\": \"1\"}}",
        ] {
            assert_eq!(values(&SETTINGS, broken), [], "{broken}");
        }
    }

    #[test]
    fn a_dotenv_file_is_read_as_dotenv_readers_read_it() {
        let text = "# a comment\n\
                    CHECKPOINT_TESTS_COMMAND=true\n\
                    export CHECKPOINT_STOP_MAX_BLOCKS = 0 # none\n\
                    CHECKPOINT_STOP_COMMIT_GATE: no\r\n\
                    A='it''s'\n\
                    B=\"x\\ny\"\n\
                    C=`multi\nline`\n\
                    D=\"open\nstill\"  # after\n\
                    =nothing\n\
                    E\n\
                    exporter=1\n";
        assert_eq!(
            values(&DOTENV, text),
            pairs(&[
                ("CHECKPOINT_TESTS_COMMAND", "true"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "0"),
                ("CHECKPOINT_STOP_MAX_BLOCKS", "0 # none"),
                ("CHECKPOINT_STOP_COMMIT_GATE", "no"),
                ("A", "it"),
                ("B", "x\\ny"),
                ("B", "x\ny"),
                ("C", "multi\nline"),
                ("D", "open\nstill"),
                ("D", "open\nstill"),
                ("exporter", "1"),
            ])
        );
        assert!(DOTENV.sets(text, "CHECKPOINT_STOP_MAX_BLOCKS", "0"));
        assert!(!DOTENV.sets(text, "CHECKPOINT_STOP_MAX_BLOCKS", "3"));
        // Never a panic, whatever the bytes.
        for odd in [
            "\"",
            "A=\"",
            "A='",
            "export",
            "export ",
            "A:",
            "A:x",
            "é=1\nB=é",
        ] {
            let _ = values(&DOTENV, odd);
        }
    }
}
