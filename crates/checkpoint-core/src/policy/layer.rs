//! One configuration text parsed into a layer: the keys it sets, each with the line that sets it,
//! and its `[[rule]]`s. Keys are looked up in the settings table; errors point at `file:line`
//! and name the key, in serde's words.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{self, Deserializer as _};
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use super::error::ConfigError;
use super::rules::{Rule, RuleSet, RuleTests};
use super::settings::{KEYS, Write, closest};

/// The top-level key of the `[[rule]]`s.
const RULES: &str = "rule";
/// The fields of a `[[rule]]`: [`RawRule`]'s.
const RULE_FIELDS: &[&str] = &["name", "include", "exclude", "tests", "action", "gate"];

/// The keys one layer sets, in the order it sets them; `P` says where each is set (a line of a
/// file, or a variable).
#[derive(Debug)]
pub(crate) struct Layer<P>(pub(crate) Vec<Assignment<P>>);

impl<P> Default for Layer<P> {
    fn default() -> Self {
        Layer(Vec::new())
    }
}

/// One key set by a layer.
pub(crate) struct Assignment<P> {
    /// The key's index in [`KEYS`].
    pub(crate) key: usize,
    /// Where the layer sets it.
    pub(crate) place: P,
    /// Sets the key's field of a policy to the value.
    pub(crate) write: Write,
}

impl<P: fmt::Debug> fmt::Debug for Assignment<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {:?}", KEYS[self.key].name, self.place)
    }
}

/// A configuration file that exists, parsed: the keys it sets and its rules.
#[derive(Debug)]
pub struct ConfigFile {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its text, for turning byte offsets into lines.
    text: String,
    /// The keys it sets, each with its 1-based line; taken by the merge.
    pub(crate) layer: Layer<usize>,
    /// Its `[[rule]]`s, in order.
    rules: Vec<RawRule>,
}

impl ConfigFile {
    /// Parses `text`, the contents of the configuration file at `path`: TOML syntax, unknown
    /// sections and keys, and each value's type and range. Rules are checked when the files are
    /// merged (their names must be unique across files).
    pub fn parse(path: &Path, text: String) -> Result<ConfigFile, ConfigError> {
        let mut file = ConfigFile {
            path: path.to_owned(),
            text,
            layer: Layer::default(),
            rules: Vec::new(),
        };
        (file.layer, file.rules) = file.parse_doc()?;
        Ok(file)
    }

    fn parse_doc(&self) -> Result<(Layer<usize>, Vec<RawRule>), ConfigError> {
        let doc = DeTable::parse(&self.text).map_err(|e| ConfigError::Syntax {
            path: self.path.clone(),
            line: self.line(e.span().map_or(0, |s| s.start)),
            message: e.message().lines().collect::<Vec<_>>().join("; "),
        })?;
        let mut layer = Layer::default();
        let mut rules = Vec::new();
        for (name, value) in doc.into_inner() {
            let section: &str = name.get_ref();
            if section == RULES {
                rules = self.parse_rules(value)?;
            } else if KEYS.iter().any(|key| key.section() == section) {
                self.parse_section(section, value, &mut layer)?;
            } else {
                return Err(self.unknown(name.span(), section, section, &expected().top));
            }
        }
        Ok((layer, rules))
    }

    /// Adds the keys of the table `value`, the section `section`, to `layer`.
    fn parse_section(
        &self,
        section: &str,
        value: Spanned<DeValue<'_>>,
        layer: &mut Layer<usize>,
    ) -> Result<(), ConfigError> {
        let span = value.span();
        let table = match value.into_inner() {
            DeValue::Table(table) => table,
            other => {
                let error = not_a_table(Spanned::new(span.clone(), other));
                return Err(self.invalid(span.start, section, error.message()));
            }
        };
        for (name, value) in table {
            let field: &str = name.get_ref();
            let path = format!("{section}.{field}");
            let Some(key) = KEYS.iter().position(|key| key.name == path) else {
                let fields = expected().fields(section);
                return Err(self.unknown(name.span(), &path, field, fields));
            };
            let at = value.span().start;
            let write = KEYS[key]
                .slot
                .parse_toml(value)
                .map_err(|e| self.invalid(e.span().map_or(at, |s| s.start), &path, e.message()))?;
            layer.0.push(Assignment {
                key,
                place: self.line(name.span().start),
                write,
            });
        }
        Ok(())
    }

    /// Reads the array of `[[rule]]` tables `value`. A misspelt field gets a "did you mean", as
    /// a section's keys do.
    fn parse_rules(&self, value: Spanned<DeValue<'_>>) -> Result<Vec<RawRule>, ConfigError> {
        if let DeValue::Array(items) = value.get_ref() {
            for (i, item) in items.iter().enumerate() {
                let DeValue::Table(table) = item.get_ref() else {
                    continue;
                };
                let unknown = table
                    .keys()
                    .find(|name| !RULE_FIELDS.contains(&&**name.get_ref()));
                if let Some(name) = unknown {
                    let field: &str = name.get_ref();
                    let key = format!("{RULES}[{i}].{field}");
                    return Err(self.unknown(name.span(), &key, field, RULE_FIELDS));
                }
            }
        }
        let at = value.span().start;
        Vec::<RawRule>::deserialize(ValueDeserializer::from(value.clone())).map_err(|e| {
            let offset = e.span().map_or(at, |s| s.start);
            let inner = value_path(value.get_ref(), offset).unwrap_or_default();
            self.invalid(offset, &format!("{RULES}{inner}"), e.message())
        })
    }

    /// The 1-based line of each rule's name, in order.
    pub(crate) fn rule_lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.rules
            .iter()
            .map(|raw| self.line(raw.name.span().start))
    }

    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        let before = &self.text.as_bytes()[..offset.min(self.text.len())];
        1 + before.iter().filter(|&&b| b == b'\n').count()
    }

    fn invalid(&self, offset: usize, key: &str, message: impl fmt::Display) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.clone(),
            line: self.line(offset),
            key: key.to_owned(),
            message: message.to_string(),
        }
    }

    /// `name`, at `span` and with the path `key`, is none of the names `expected`: the error
    /// names the closest of them as a full key ("did you mean `tests.command`?"), or lists them
    /// all when none is close.
    fn unknown(
        &self,
        span: Range<usize>,
        key: &str,
        name: &str,
        expected: &'static [&'static str],
    ) -> ConfigError {
        match closest(name, expected.iter().copied()) {
            Some(candidate) => {
                let full = match key.rsplit_once('.') {
                    Some((parent, _)) => format!("{parent}.{candidate}"),
                    None => candidate.to_owned(),
                };
                self.invalid(
                    span.start,
                    key,
                    format!("unknown field `{name}`, did you mean `{full}`?"),
                )
            }
            None => {
                let error = <de::value::Error as de::Error>::unknown_field(name, expected);
                self.invalid(span.start, key, error)
            }
        }
    }
}

/// The names an "unknown field" error lists, in table order: the top level's (every section,
/// then `rule`) and each section's fields. Serde wants them `'static`; they are built from the
/// table on the first error.
struct Expected {
    top: Vec<&'static str>,
    sections: Vec<(&'static str, Vec<&'static str>)>,
}

impl Expected {
    /// The fields of `section`.
    fn fields(&self, section: &str) -> &[&'static str] {
        let found = self.sections.iter().find(|(name, _)| *name == section);
        found.map_or(&[], |(_, fields)| fields)
    }
}

fn expected() -> &'static Expected {
    static EXPECTED: OnceLock<Expected> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
        for key in KEYS {
            match sections.last_mut() {
                Some((section, fields)) if *section == key.section() => fields.push(key.field()),
                _ => sections.push((key.section(), vec![key.field()])),
            }
        }
        let top = sections.iter().map(|(section, _)| *section).chain([RULES]);
        Expected {
            top: top.collect(),
            sections,
        }
    })
}

/// The error serde reports for `value` where a table is expected, like `invalid type: integer
/// `3`, expected a table`.
fn not_a_table(value: Spanned<DeValue<'_>>) -> toml::de::Error {
    struct Table;

    impl de::Visitor<'_> for Table {
        type Value = Infallible;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a table")
        }
    }

    match ValueDeserializer::from(value).deserialize_any(Table) {
        Ok(never) => match never {},
        Err(error) => error,
    }
}

/// The path below `table` (`.include`, `.exclude[1]`) to the innermost key or value whose span
/// holds `offset`.
fn table_path(table: &DeTable<'_>, offset: usize) -> Option<String> {
    table.iter().find_map(|(key, value)| {
        let inner = value_path(value.get_ref(), offset);
        (inner.is_some() || key.span().contains(&offset) || value.span().contains(&offset))
            .then(|| format!(".{}{}", key.get_ref(), inner.unwrap_or_default()))
    })
}

/// The path below `value` (`[1].include[0]`) to the innermost key or value whose span holds
/// `offset`.
fn value_path(value: &DeValue<'_>, offset: usize) -> Option<String> {
    match value {
        DeValue::Table(table) => table_path(table, offset),
        DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let inner = value_path(item.get_ref(), offset);
            (inner.is_some() || item.span().contains(&offset))
                .then(|| format!("[{i}]{}", inner.unwrap_or_default()))
        }),
        _ => None,
    }
}

/// Checks the rules of all files, then compiles them in order (user file first).
pub(crate) fn compile_rules(files: &[ConfigFile]) -> Result<RuleSet, ConfigError> {
    let placed: Vec<(&ConfigFile, usize, &RawRule)> = files
        .iter()
        .flat_map(|file| {
            file.rules
                .iter()
                .enumerate()
                .map(move |(i, r)| (file, i, r))
        })
        .collect();
    let mut names: HashMap<&str, (&ConfigFile, usize)> = HashMap::new();
    for &(file, i, rule) in &placed {
        let name = rule.name.get_ref();
        let name_at = rule.name.span().start;
        if name.trim().is_empty() {
            return Err(file.invalid(name_at, &format!("rule[{i}].name"), "must not be empty"));
        }
        if rule.include.get_ref().is_empty() {
            return Err(file.invalid(
                rule.include.span().start,
                &format!("rule[{i}].include"),
                "must list at least one glob",
            ));
        }
        if let Some((first, first_at)) = names.insert(name, (file, name_at)) {
            let message = format!(
                "duplicate rule name {name:?} (first defined at {}:{})",
                first.path.display(),
                first.line(first_at),
            );
            return Err(file.invalid(name_at, &format!("rule[{i}].name"), message));
        }
    }
    let rules = placed.iter().map(|(_, _, raw)| raw.to_rule()).collect();
    RuleSet::compile(rules).map_err(|err| {
        placed
            .iter()
            .filter(|(_, _, raw)| *raw.name.get_ref() == err.rule)
            .find_map(|&(file, i, raw)| {
                let fields = [
                    ("include", raw.include.get_ref()),
                    ("exclude", &raw.exclude),
                ];
                fields.into_iter().find_map(|(field, globs)| {
                    let glob = globs.iter().find(|g| *g.get_ref() == err.glob)?;
                    let message = format!("bad glob {:?}: {}", err.glob, err.reason);
                    Some(file.invalid(glob.span().start, &format!("rule[{i}].{field}"), message))
                })
            })
            .unwrap_or(ConfigError::Rules(err))
    })
}

/// A `[[rule]]` as written, with the spans error messages point at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    name: Spanned<String>,
    include: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    tests: TestsField,
    action: Option<String>,
    gate: Option<bool>,
}

impl RawRule {
    fn to_rule(&self) -> Rule {
        let TestsField(tests) = self.tests.clone();
        let globs = |globs: &[Spanned<String>]| globs.iter().map(|g| g.get_ref().clone()).collect();
        Rule {
            name: self.name.get_ref().clone(),
            include: globs(self.include.get_ref()),
            exclude: globs(&self.exclude),
            gate: self.gate.unwrap_or(tests != RuleTests::None),
            tests,
            action: self.action.clone(),
        }
    }
}

/// A rule's `tests`: `true` (the project command), `false` (none) or a command of its own.
#[derive(Debug, Clone)]
struct TestsField(RuleTests);

impl Default for TestsField {
    fn default() -> Self {
        TestsField(RuleTests::Project)
    }
}

impl<'de> Deserialize<'de> for TestsField {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl de::Visitor<'_> for Visitor {
            type Value = RuleTests;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or a command")
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RuleTests, E> {
                Ok(if v {
                    RuleTests::Project
                } else {
                    RuleTests::None
                })
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<RuleTests, E> {
                if v.trim().is_empty() {
                    Err(E::custom(
                        "empty command; write `tests = false` for no tests",
                    ))
                } else {
                    Ok(RuleTests::Command(v.to_owned()))
                }
            }
        }

        deserializer.deserialize_any(Visitor).map(TestsField)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_support::Sources;

    fn rule(name: &str, include: &[&str], tests: RuleTests, gate: bool) -> Rule {
        Rule {
            name: name.into(),
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: Vec::new(),
            tests,
            action: None,
            gate,
        }
    }

    #[test]
    fn a_section_must_be_a_table() {
        let f = Sources::project("stop = 3\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: stop: invalid type: integer `3`, expected a table");
        let f = Sources::project("[[context]]\nwarn = 60\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: context: invalid type: sequence, expected a table");
    }

    #[test]
    fn syntax_error() {
        let f = Sources::project("[tests]\ncommand = \"x\"\n[stop\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: syntax error: unclosed table, expected `]`");
        let f = Sources::project("[stop]\ncapture = true\ncapture = false\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: syntax error: duplicate key");
    }

    #[test]
    fn type_error_names_line_and_key() {
        let f = Sources::project(
            "[tests]\ncommand = 'x'\n\n[stop]\ncapture = true\nmax_blocks = \"x\"\n",
        );
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:6: stop.max_blocks: invalid type: string "x", expected u32"#);
        let f = Sources::project("[tests]\ntimeout = 5\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: invalid type: integer `5`, expected a duration like "120s", "2m" or "1m30s""#);
    }

    #[test]
    fn unknown_keys_and_sections() {
        let f = Sources::project("[tests]\ncomand = 'pytest -q'\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: tests.comand: unknown field `comand`, did you mean `tests.command`?");
        let f = Sources::project("[stop]\ncapture = true\nmax_block = 3\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: stop.max_block: unknown field `max_block`, did you mean `stop.max_blocks`?");
        let f = Sources::project("[tests]\ncommand = 'x'\n\n[contexts]\nwarn = 80\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: contexts: unknown field `contexts`, did you mean `context`?");
        let f = Sources::project("[context]\nenabled = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: context.enabled: unknown field `enabled`, expected one of `warn`, `critical`, `window`");
        let f = Sources::project("[resume]\nauto_resume = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: resume.auto_resume: unknown field `auto_resume`, did you mean `resume.auto`?");
        let f = Sources::project("[clear]\nauto = true\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: clear.auto: unknown field `auto`, did you mean `clear.auto_checkpoint`?");
        let f = Sources::project("[journal]\nstale = \"2s\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: journal.stale: unknown field `stale`, did you mean `journal.stale_threshold`?");
    }

    #[test]
    fn rule_errors() {
        let f = Sources::project("[[rule]]\ninclude = [\"a\"]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: rule[0]: missing field `name`");
        let f = Sources::project(
            "[[rule]]\nname = \"a\"\ninclude = [\"a\"]\n\n[[rule]]\nname = \"b\"\n",
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:5: rule[1]: missing field `include`");
        let f = Sources::project("[[rule]]\nname = \"a\"\ninclude = []\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: rule[0].include: must list at least one glob");
        let f = Sources::project("[[rule]]\nname = \" \"\ninclude = [\"a\"]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: rule[0].name: must not be empty");
        let f = Sources::project("[[rule]]\nname = \"a\"\ninclude = [\"a\", 1]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:3: rule[0].include[1]: invalid type: integer `1`, expected a string");
        let f = Sources::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\ntests = 1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].tests: invalid type: integer `1`, expected true, false or a command");
        let f = Sources::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\ntests = \"\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].tests: empty command; write `tests = false` for no tests");
        let f = Sources::project("rule = [{ name = \"a\", include = [\"a\"], test = true }]\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: rule[0].test: unknown field `test`, did you mean `rule[0].tests`?");
        let f = Sources::project(
            "[[rule]]\nname = \"a\"\ninclude = [\"a\"]\n\n[[rule]]\nname = \"b\"\nincludes = [\"b\"]\n",
        );
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:7: rule[1].includes: unknown field `includes`, did you mean `rule[1].include`?");
        let f = Sources::project("[[rule]]\nname = \"a\"\ninclude = [\"a\"]\nwhen = 1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:4: rule[0].when: unknown field `when`, expected one of `name`, `include`, `exclude`, `tests`, `action`, `gate`");
    }

    #[test]
    fn rule_tests_and_gate_defaults() {
        let project = r#"
            [[rule]]
            name = "default"
            include = ["a/**"]

            [[rule]]
            name = "project"
            include = ["b/**"]
            tests = true
            gate = false

            [[rule]]
            name = "none"
            include = ["c/**"]
            tests = false

            [[rule]]
            name = "gated docs"
            include = ["d/**"]
            tests = false
            gate = true

            [[rule]]
            name = "own"
            include = ["e/**", "f/**"]
            exclude = ["e/gen/**"]
            tests = "cargo test -p e"
            action = "Run `make restart`"
        "#;
        let policy = Sources::project(project).policy();
        assert_eq!(
            policy.rules.configured(),
            [
                rule("default", &["a/**"], RuleTests::Project, true),
                rule("project", &["b/**"], RuleTests::Project, false),
                rule("none", &["c/**"], RuleTests::None, false),
                rule("gated docs", &["d/**"], RuleTests::None, true),
                Rule {
                    exclude: vec!["e/gen/**".into()],
                    action: Some("Run `make restart`".into()),
                    ..rule(
                        "own",
                        &["e/**", "f/**"],
                        RuleTests::Command("cargo test -p e".into()),
                        true,
                    )
                },
            ]
        );
    }

    #[test]
    fn bad_globs_point_at_the_pattern() {
        let project = r#"[[rule]]
name = "ok"
include = ["docs/**"]

[[rule]]
name = "broken"
include = [
    "src/**",
    "src/[a",
]
"#;
        insta::assert_snapshot!(Sources::project(project).error(), @r#"/repo/checkpoint.toml:9: rule[1].include: bad glob "src/[a": unclosed character class; missing ']'"#);
        let project = "[[rule]]\nname = \"x\"\ninclude = [\"src/**\"]\nexclude = [\"a{b\"]\n";
        insta::assert_snapshot!(Sources::project(project).error(), @r#"/repo/checkpoint.toml:4: rule[0].exclude: bad glob "a{b": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"#);
        let project = "[integrity]\nprotected = [\"golden/**\", \"a[\"]\n";
        insta::assert_snapshot!(Sources::project(project).error(), @r#"/repo/checkpoint.toml:2: integrity.protected: bad glob "a[": unclosed character class; missing ']'"#);
    }

    #[test]
    fn duplicate_rule_names_across_files() {
        let user = "[[rule]]\nname = \"py\"\ninclude = [\"**/*.py\"]\n";
        let project =
            "[stop]\ncapture = true\n\n[[rule]]\nname = \"py\"\ninclude = [\"src/*.py\"]\n";
        let f = Sources::new(Some(user), Some(project));
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:5: rule[0].name: duplicate rule name "py" (first defined at /repo/user.toml:2)"#);
    }

    #[test]
    fn rules_are_concatenated_user_first() {
        let user = "[[rule]]\nname = \"mine\"\ninclude = [\"notes/**\"]\n";
        let project = "[[rule]]\nname = \"a\"\ninclude = [\"a/**\"]\n\n\
                       [[rule]]\nname = \"b\"\ninclude = [\"b/**\"]\n";
        let policy = Sources::new(Some(user), Some(project)).policy();
        let names: Vec<_> = policy.rules.configured().iter().map(|r| &r.name).collect();
        assert_eq!(names, ["mine", "a", "b"]);
    }

    #[test]
    fn user_file_errors_name_the_user_file() {
        let f = Sources::new(
            Some("[stop]\ncapture = 1\n"),
            Some("[stop]\ncapture = true\n"),
        );
        insta::assert_snapshot!(f.error(), @"/repo/user.toml:2: stop.capture: invalid type: integer `1`, expected a boolean");
    }
}
