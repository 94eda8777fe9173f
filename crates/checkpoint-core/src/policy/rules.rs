//! Glob rules that map changed paths to categories, test commands, actions and the commit gate.
//!
//! Configured rules are tried first; every rule that matches a path applies to it. A path that no
//! configured rule matches falls back to the first matching built-in rule: `docs` (prose and
//! images: no tests, not gated), `code` (source files and build manifests: project tests, gated)
//! or `other` (anything else: no tests, gated).

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

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

/// The built-in fallbacks, each rule's globs compiled the first time a path reaches it: most hook
/// calls (every tool call) load the policy but never classify a path, compiling globs is most of
/// a policy load, and most changed paths stop at the first rule (`code`).
static BUILTIN: LazyLock<Vec<Builtin>> = LazyLock::new(|| {
    (RuleSet::builtin_rules().into_iter())
        .map(|rule| Builtin {
            rule,
            sets: OnceLock::new(),
        })
        .collect()
});

/// Rules with their globs compiled, one include and one exclude set per rule: a set of
/// extension and file-name globs matches by hash lookups.
#[derive(Debug, Clone)]
struct Compiled {
    rules: Vec<Rule>,
    /// `(include, exclude)` of each rule.
    sets: Vec<(GlobSet, GlobSet)>,
}

/// A built-in rule, its globs compiled on first use.
struct Builtin {
    rule: Rule,
    sets: OnceLock<(GlobSet, GlobSet)>,
}

impl Builtin {
    fn matches(&self, path: &Candidate<'_>) -> bool {
        let (include, exclude) =
            (self.sets).get_or_init(|| sets(&self.rule).expect("built-in globs are valid"));
        is_match(include, exclude, path)
    }
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
/// Whether `path` lies under a directory whose files tests read (`tests`, `fixtures`,
/// `testdata`, `snapshots`, …; see the built-in `test-data` rule).
pub fn in_test_data_dir(path: &str) -> bool {
    let dirs = path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
    dirs.split('/').any(|dir| TEST_DATA_DIRS.contains(&dir))
}

/// The name of the built-in rule of test input (see [`in_test_data_dir`]).
pub const TEST_DATA_RULE: &str = "test-data";
/// Prose and images: captured, never tested or gated by default.
const DOC_EXTENSIONS: &[&str] = &[
    "md", "markdown", "mdx", "rst", "txt", "adoc", "org", "png", "jpg", "jpeg", "gif", "svg",
    "webp", "ico", "pdf",
];
/// Directories whose files tests read (data, fixtures, golden files, snapshots): a file there
/// that is not code is test input, whatever its extension.
const TEST_DATA_DIRS: &[&str] = &[
    "tests",
    "test",
    "__tests__",
    "spec",
    "fixtures",
    "testdata",
    "test_data",
    "test-data",
    "golden",
    "snapshots",
    "__snapshots__",
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
        let test_data = (TEST_DATA_DIRS.iter())
            .map(|dir| format!("**/{dir}/**"))
            .collect();
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
                name: TEST_DATA_RULE.into(),
                include: test_data,
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

    /// Replaces the action of the configured rule `name`, if there is one.
    pub fn set_action(&mut self, name: &str, action: Option<String>) {
        if let Some(rule) = (self.configured.rules.iter_mut()).find(|rule| rule.name == name) {
            rule.action = action;
        }
    }

    /// The rules that apply to `path`: every matching configured rule, or else the first matching
    /// built-in rule. Never empty.
    pub fn classify(&self, path: &str) -> Vec<&Rule> {
        let mut rules = Vec::new();
        self.classify_into(path, false, &mut rules);
        rules
    }

    /// [`RuleSet::classify`] of each of `paths`, in order, with each path's rules worked out once.
    pub fn classes<'p>(&self, paths: impl IntoIterator<Item = &'p str>) -> Classes<'_> {
        self.classes_marked(paths.into_iter().map(|path| (path, false)))
    }

    /// [`RuleSet::classes`] of paths each marked whether a test reads it: a marked path that no
    /// configured rule matches is test input (the built-in [`TEST_DATA_RULE`]) whatever the
    /// built-in rules would make of its name.
    pub fn classes_marked<'p>(
        &self,
        paths: impl IntoIterator<Item = (&'p str, bool)>,
    ) -> Classes<'_> {
        let mut classes = Classes::default();
        let mut known: HashMap<Vec<*const Rule>, usize> = HashMap::new();
        let mut rules = Vec::new();
        // The same rules: the same rule objects, in the same order.
        let same = |a: &[&Rule], b: &[&Rule]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| std::ptr::eq(*x, *y))
        };
        for (path, read_by_tests) in paths {
            rules.clear();
            self.classify_into(path, read_by_tests, &mut rules);
            // A change set is sorted by path: a path mostly has the rules of the one before.
            let last = classes.of.last().copied();
            let kind = match last.filter(|&kind| same(&classes.kinds[kind], &rules)) {
                Some(kind) => kind,
                None => {
                    let key = rules.iter().map(|&rule| std::ptr::from_ref(rule)).collect();
                    *known.entry(key).or_insert_with(|| {
                        classes.kinds.push(rules.clone());
                        classes.kinds.len() - 1
                    })
                }
            };
            classes.of.push(kind);
        }
        classes
    }

    /// Puts the rules that apply to `path` in `rules` (see [`RuleSet::classify`]).
    fn classify_into<'s>(&'s self, path: &str, read_by_tests: bool, rules: &mut Vec<&'s Rule>) {
        // One candidate (the path split into name and extension) serves every glob set.
        let candidate = Candidate::new(path);
        rules.extend(self.configured.matching(&candidate));
        if rules.is_empty() {
            rules.extend(
                (BUILTIN.iter())
                    .find(|builtin| {
                        builtin.matches(&candidate)
                            || (read_by_tests && builtin.rule.name == TEST_DATA_RULE)
                    })
                    .map(|builtin| &builtin.rule),
            );
        }
    }
}

/// The rules of each path of a list (see [`RuleSet::classes`]): paths that share their rules
/// share one list of them.
#[derive(Debug, Clone, Default)]
pub struct Classes<'r> {
    /// Each distinct list of rules.
    kinds: Vec<Vec<&'r Rule>>,
    /// Each path's list, as its place in `kinds`.
    of: Vec<usize>,
}

impl<'r> Classes<'r> {
    /// How many paths were classified.
    pub fn len(&self) -> usize {
        self.of.len()
    }

    /// Whether no path was.
    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }

    /// The rules of each path, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[&'r Rule]> + '_ {
        self.of.iter().map(|&kind| self.kinds[kind].as_slice())
    }
}

impl Compiled {
    fn new(rules: Vec<Rule>) -> Result<Compiled, GlobError> {
        let sets = rules.iter().map(sets).collect::<Result<_, GlobError>>()?;
        Ok(Compiled { rules, sets })
    }

    /// The rules matching `path`, in order.
    fn matching<'s>(&'s self, path: &Candidate<'_>) -> impl Iterator<Item = &'s Rule> {
        (self.rules.iter().zip(&self.sets))
            .filter(move |(_, (include, exclude))| is_match(include, exclude, path))
            .map(|(rule, _)| rule)
    }
}

/// `rule`'s include and exclude globs, compiled.
fn sets(rule: &Rule) -> Result<(GlobSet, GlobSet), GlobError> {
    let set = |patterns: &[String]| {
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            set.add(glob(rule, pattern)?);
        }
        set.build().map_err(|e| set_error(rule, e))
    };
    Ok((set(&rule.include)?, set(&rule.exclude)?))
}

/// Whether `path` is in `include` and not in `exclude`.
fn is_match(include: &GlobSet, exclude: &GlobSet, path: &Candidate<'_>) -> bool {
    include.is_match_candidate(path) && (exclude.is_empty() || !exclude.is_match_candidate(path))
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

    /// A data file a test reads is test input wherever its extension would make it docs: a
    /// change to it runs the tests and is gated like code.
    #[test]
    fn data_under_test_directories_is_test_input_not_docs() {
        let set = RuleSet::builtin();
        for path in [
            "tests/data/expected.txt",
            "crates/core/tests/golden/out.svg",
            "fixtures/expected.txt",
            "web/src/__tests__/logo.png",
            "pkg/calc/testdata/golden.txt",
            "src/__snapshots__/app.test.js.snap",
            "tests/snapshots/render__tests__message.snap",
            "spec/fixtures/report.pdf",
            "test/README.md",
            "tests/config.yml",
        ] {
            assert_eq!(names(&set, path), ["test-data"], "{path}");
        }
        // Code stays code, and docs outside those places stay docs.
        assert_eq!(names(&set, "tests/test_calc.py"), ["code"]);
        assert_eq!(names(&set, "docs/testing.md"), ["docs"]);
        assert_eq!(names(&set, "docs/img/tests.png"), ["docs"]);
        assert_eq!(names(&set, "contest/notes.md"), ["docs"]);
        assert!(in_test_data_dir("pkg/calc/testdata/golden.txt"));
        assert!(!in_test_data_dir("tests"));
        assert!(!in_test_data_dir("src/contest/x.txt"));
    }

    /// A file a test names is test input wherever it lies; a configured rule still decides.
    #[test]
    fn a_file_a_test_reads_is_test_input() {
        let set = RuleSet::builtin();
        let paths = [
            ("expected.txt", true),
            ("README.md", false),
            ("src/lib.rs", true),
        ];
        let classes = set.classes_marked(paths);
        let named: Vec<Vec<&str>> = (classes.iter())
            .map(|rules| rules.iter().map(|r| r.name.as_str()).collect())
            .collect();
        assert_eq!(named, [vec!["test-data"], vec!["docs"], vec!["code"]]);
        let configured = RuleSet::compile(vec![Rule {
            name: "text".into(),
            include: vec!["**/*.txt".into()],
            exclude: Vec::new(),
            tests: RuleTests::None,
            action: None,
            gate: false,
        }])
        .unwrap();
        let classes = configured.classes_marked([("expected.txt", true)]);
        let first = classes.iter().next().unwrap();
        assert_eq!(first[0].name, "text");
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

    #[test]
    fn paths_with_the_same_rules_share_one_list() {
        let set = RuleSet::compile(vec![rule("daemon", &["src/**/*.py"], &[])]).unwrap();
        let paths = ["src/a.py", "README.md", "src/b.py", "lib/c.py", "docs/d.md"];
        let classes = set.classes(paths);
        assert_eq!(classes.len(), paths.len());
        assert_eq!(classes.kinds.len(), 3, "daemon, docs and code");
        let named: Vec<Vec<&str>> = (classes.iter())
            .map(|rules| rules.iter().map(|r| r.name.as_str()).collect())
            .collect();
        assert_eq!(
            named,
            [
                vec!["daemon"],
                vec!["docs"],
                vec!["daemon"],
                vec!["code"],
                vec!["docs"]
            ]
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

        /// Classifying a list gives each path what classifying it alone gives.
        #[test]
        fn classes_are_each_paths_classification(
            paths in proptest::collection::vec("[a-z]{1,3}(/[a-z]{1,3}){0,2}\\.(py|rs|md|yml)", 0..40)
        ) {
            let set = RuleSet::compile(vec![
                rule("py", &["**/*.py"], &["a/**"]),
                rule("top", &["*"], &[]),
            ])
            .unwrap();
            let classes = set.classes(paths.iter().map(String::as_str));
            prop_assert_eq!(classes.len(), paths.len());
            for (path, rules) in paths.iter().zip(classes.iter()) {
                let alone = set.classify(path);
                prop_assert!(rules.iter().map(|r| &r.name).eq(alone.iter().map(|r| &r.name)));
            }
        }
    }
}
