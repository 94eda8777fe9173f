//! Glob rules that map changed paths to categories, test commands, actions and the commit gate.
//!
//! Configured rules are tried first; every rule that matches a path applies to it. A path that no
//! configured rule matches falls back to the first matching built-in rule: `docs` (prose and
//! images: no tests, not gated), `code` (source files and build manifests: project tests, gated)
//! or `other` (anything else: no tests, gated).

use std::sync::LazyLock;

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// What a rule asks to run when one of its files changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleTests {
    /// No tests (`tests = false`).
    None,
    /// The project's test command (`tests = true`).
    Project,
    /// A command of the rule's own (`tests = "cargo test -p core"`).
    Command(String),
}

/// One `[[rule]]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// Name shown in messages.
    pub name: String,
    /// Globs (repo-relative, `/`-separated; `*` does not cross `/`, `**` does).
    pub include: Vec<String>,
    /// Globs that take a path back out of the rule.
    pub exclude: Vec<String>,
    /// What to run when a matching file changed.
    pub tests: RuleTests,
    /// An instruction for the agent when a matching file changed.
    pub action: Option<String>,
    /// Whether uncommitted changes to matching files count for the commit gate.
    pub gate: bool,
}

/// A bad glob in a rule.
#[derive(Debug, thiserror::Error)]
#[error("rule `{rule}`: bad glob `{glob}`: {reason}")]
pub struct GlobError {
    /// The rule's name.
    pub rule: String,
    /// The offending pattern.
    pub glob: String,
    /// What globset said.
    pub reason: String,
}

/// Rules compiled for matching.
#[derive(Debug, Clone)]
pub struct RuleSet {
    configured: Compiled,
}

/// The built-in fallbacks, compiled on first use: most hook calls (every tool call) load the
/// policy but never classify a path, and compiling these globs is most of a policy load.
static BUILTIN: LazyLock<Compiled> =
    LazyLock::new(|| Compiled::new(RuleSet::builtin_rules()).expect("built-in globs are valid"));

/// Rules with their globs compiled, one include and one exclude set per rule: a set of
/// extension and file-name globs matches by hash lookups, and a rule that decides alone (a
/// built-in, tried in order) costs no more than its own set.
#[derive(Debug, Clone)]
struct Compiled {
    rules: Vec<Rule>,
    /// `(include, exclude)` of each rule.
    sets: Vec<(GlobSet, GlobSet)>,
}

/// Extensions of source files that the built-in `code` rule covers.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "java", "kt",
    "kts", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "cs", "fs", "rb", "php",
    "swift", "dart", "lua", "pl", "pm", "r", "jl", "ex", "exs", "erl", "hrl", "hs", "ml", "mli",
    "clj", "zig", "nim", "sh", "bash", "zsh", "sql", "vue", "svelte", "proto", "css", "scss",
    "html",
];
/// Build manifests and lock files: changing them changes what the tests run against.
const CODE_FILES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "pytest.ini",
    "tox.ini",
    "go.mod",
    "go.sum",
    "Makefile",
    "CMakeLists.txt",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
];
/// Prose and images: captured, never tested or gated by default.
const DOC_EXTENSIONS: &[&str] = &[
    "md", "markdown", "mdx", "rst", "txt", "adoc", "org", "png", "jpg", "jpeg", "gif", "svg",
    "webp", "ico", "pdf",
];
const DOC_FILES: &[&str] = &[
    "LICENSE",
    "LICENSE-*",
    "COPYING",
    "AUTHORS",
    "CHANGELOG",
    "NOTICE",
];

fn any_depth(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| format!("**/{n}")).collect()
}

/// One glob per extension: globset matches `**/*.ext` by a hash lookup of the path's extension,
/// where one `**/*.{a,b,…}` would be a regular expression run over every path.
fn by_extension(exts: &[&str]) -> Vec<String> {
    exts.iter().map(|ext| format!("**/*.{ext}")).collect()
}

impl RuleSet {
    /// Compiles configured rules; the built-in fallbacks are added after them.
    pub fn compile(rules: Vec<Rule>) -> Result<RuleSet, GlobError> {
        Ok(RuleSet {
            configured: Compiled::new(rules)?,
        })
    }

    /// Only the built-in rules.
    pub fn builtin() -> RuleSet {
        RuleSet::compile(Vec::new()).expect("built-in globs are valid")
    }

    /// The built-in fallback rules, in the order they are tried.
    pub fn builtin_rules() -> Vec<Rule> {
        let mut docs = by_extension(DOC_EXTENSIONS);
        docs.extend(any_depth(DOC_FILES));
        let mut code = by_extension(CODE_EXTENSIONS);
        code.extend(any_depth(CODE_FILES));
        vec![
            Rule {
                name: "code".into(),
                include: code,
                exclude: Vec::new(),
                tests: RuleTests::Project,
                action: None,
                gate: true,
            },
            Rule {
                name: "docs".into(),
                include: docs,
                exclude: Vec::new(),
                tests: RuleTests::None,
                action: None,
                gate: false,
            },
            Rule {
                name: "other".into(),
                include: vec!["**".into()],
                exclude: Vec::new(),
                tests: RuleTests::None,
                action: None,
                gate: true,
            },
        ]
    }

    /// The configured rules, in file order.
    pub fn configured(&self) -> &[Rule] {
        &self.configured.rules
    }

    /// Replaces what the configured rule `name` runs, if there is one (its globs stay as they
    /// were compiled).
    pub fn set_tests(&mut self, name: &str, tests: RuleTests) {
        if let Some(rule) = (self.configured.rules.iter_mut()).find(|rule| rule.name == name) {
            rule.tests = tests;
        }
    }

    /// The rules that apply to `path`: every matching configured rule, or else the first matching
    /// built-in rule. Never empty.
    pub fn classify(&self, path: &str) -> Vec<&Rule> {
        // One candidate (the path split into name and extension) serves every glob set.
        let candidate = Candidate::new(path);
        let matched: Vec<&Rule> = self.configured.matching(&candidate).collect();
        if !matched.is_empty() {
            return matched;
        }
        BUILTIN.matching(&candidate).take(1).collect()
    }
}

impl Compiled {
    fn new(rules: Vec<Rule>) -> Result<Compiled, GlobError> {
        let set = |rule: &Rule, patterns: &[String]| {
            let mut set = GlobSetBuilder::new();
            for pattern in patterns {
                set.add(glob(rule, pattern)?);
            }
            set.build().map_err(|e| set_error(rule, e))
        };
        let sets = (rules.iter())
            .map(|rule| Ok((set(rule, &rule.include)?, set(rule, &rule.exclude)?)))
            .collect::<Result<_, GlobError>>()?;
        Ok(Compiled { rules, sets })
    }

    /// The rules matching `path`, in order, each asked only when the one before was.
    fn matching<'s>(&'s self, path: &Candidate<'_>) -> impl Iterator<Item = &'s Rule> {
        (self.rules.iter().zip(&self.sets))
            .filter(move |(_, (include, exclude))| {
                include.is_match_candidate(path)
                    && (exclude.is_empty() || !exclude.is_match_candidate(path))
            })
            .map(|(rule, _)| rule)
    }
}

/// A repository-relative path glob as every setting writes them: `*` does not cross `/`, `**`
/// does, and `\` escapes.
pub(crate) fn path_glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

fn glob(rule: &Rule, pattern: &str) -> Result<Glob, GlobError> {
    path_glob(pattern).map_err(|e| GlobError {
        rule: rule.name.clone(),
        glob: pattern.to_owned(),
        reason: e.kind().to_string(),
    })
}

fn set_error(rule: &Rule, e: globset::Error) -> GlobError {
    GlobError {
        rule: rule.name.clone(),
        glob: e.glob().unwrap_or_default().to_owned(),
        reason: e.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rule(name: &str, include: &[&str], exclude: &[&str]) -> Rule {
        Rule {
            name: name.into(),
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            tests: RuleTests::Project,
            action: None,
            gate: true,
        }
    }

    fn names(set: &RuleSet, path: &str) -> Vec<String> {
        set.classify(path).iter().map(|r| r.name.clone()).collect()
    }

    #[test]
    fn builtins_classify_code_docs_and_other() {
        let set = RuleSet::builtin();
        assert_eq!(names(&set, "src/main.rs"), ["code"]);
        assert_eq!(names(&set, "Cargo.toml"), ["code"]);
        assert_eq!(names(&set, "web/package.json"), ["code"]);
        assert_eq!(names(&set, "README.md"), ["docs"]);
        assert_eq!(names(&set, "docs/img/logo.png"), ["docs"]);
        assert_eq!(names(&set, "LICENSE"), ["docs"]);
        assert_eq!(names(&set, ".github/ci.yml"), ["other"]);
    }

    #[test]
    fn star_does_not_cross_slash() {
        let set = RuleSet::compile(vec![rule("top", &["*.py"], &[])]).unwrap();
        assert_eq!(names(&set, "a.py"), ["top"]);
        assert_eq!(names(&set, "src/a.py"), ["code"]);
    }

    #[test]
    fn exclude_takes_paths_out_and_all_matching_rules_apply() {
        let set = RuleSet::compile(vec![
            rule("daemon", &["src/**/*.py"], &["src/hooks/**"]),
            rule("py", &["**/*.py"], &[]),
        ])
        .unwrap();
        assert_eq!(names(&set, "src/d/x.py"), ["daemon", "py"]);
        assert_eq!(names(&set, "src/hooks/x.py"), ["py"]);
    }

    #[test]
    fn bad_glob_names_rule_and_pattern() {
        let err = RuleSet::compile(vec![rule("broken", &["src/[a"], &[])]).unwrap_err();
        assert_eq!(err.rule, "broken");
        assert_eq!(err.glob, "src/[a");
        assert!(
            err.to_string()
                .starts_with("rule `broken`: bad glob `src/[a`")
        );
    }

    proptest! {
        /// Every path gets at least one rule, and a path a configured rule matches never falls
        /// back to a built-in.
        #[test]
        fn classification_is_total(path in "[a-z]{1,5}(/[a-z]{1,5}){0,3}\\.(py|rs|md|yml)") {
            let set = RuleSet::compile(vec![rule("py", &["**/*.py"], &[])]).unwrap();
            let got = set.classify(&path);
            prop_assert!(!got.is_empty());
            prop_assert_eq!(got.iter().any(|r| r.name == "py"), path.ends_with(".py"));
        }
    }
}
