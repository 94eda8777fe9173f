//! A project's test-integrity check (see [`checkpoint_core::integrity`]): reading the two sides of each
//! changed test file, comparing test counts with the last green stop, and setting aside what the
//! user accepted. The stop gate and `checkpoint integrity` both come here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::cache;
use crate::digest;
use crate::git::{self, Repo};
use crate::store;
use checkpoint_core::changes::{ChangeSet, RepoFacts};
use checkpoint_core::decide::{self, SessionFacts, Stop};
use checkpoint_core::integrity::{
    self, ABSENT, Acceptance, Finding, GreenCounts, Sides, TestFiles,
};
use checkpoint_core::outcome::{TestRun, TestStatus};
use checkpoint_core::policy::IntegrityMode;
use checkpoint_core::render;

use super::{Project, ProjectError};

/// Files bigger than this (on either side) get only the integrity checks that need no text.
const MAX_INTEGRITY_BYTES: usize = 1024 * 1024;

/// The baseline of [`GreenCounts`], in the state directory.
const GREEN_COUNTS_FILE: &str = "green-counts.json";

/// The integrity of one change set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Integrity {
    /// What weakens the tests and was not accepted.
    pub findings: Vec<Finding>,
    /// What weakens the tests and the user accepted.
    pub accepted: Vec<Finding>,
    /// What the user is told about `accepted` (`None` when it is empty).
    pub notice: Option<String>,
}

/// What a stop gathered, as its integrity check needs it.
#[derive(Debug, Clone, Copy)]
pub struct Stopped<'a> {
    /// The change set.
    pub changes: &'a ChangeSet,
    /// Its fingerprint (see [`cache::change_fingerprint`]).
    pub fingerprint: &'a str,
    /// The planned test commands' runs.
    pub tests: &'a [TestRun],
    /// Whether the stop may still run anything (else only cached outcomes count).
    pub may_run: bool,
    /// The commit whose files are the old side of each changed test file: the turn's base
    /// (`HEAD` when none was recorded); `None` when there is none (an unborn `HEAD`, or history
    /// that shares nothing with the base).
    pub base: Option<&'a str>,
}

impl Stopped<'_> {
    /// Whether test commands ran and every one passed: the stops the execution checks look at.
    pub(super) fn green(&self) -> bool {
        !self.tests.is_empty()
            && (self.tests.iter()).all(|run| run.outcome.status == TestStatus::Passed)
    }
}

impl Project {
    /// The integrity of a stop: the findings of the text analysis, of the count check, (with
    /// `[integrity] prove_failing`) of the changed tests on `HEAD`'s code and of the tests as
    /// they were on the new code, less those the user accepted. A failure to read a side, the
    /// baseline or the acceptance is a warning and leaves that part out.
    pub fn integrity(
        &self,
        repo: &Repo,
        stopped: &Stopped<'_>,
        warnings: &mut Vec<String>,
    ) -> Integrity {
        let files = TestFiles::new(&self.policy.integrity).unwrap_or_else(|e| {
            warnings.push(format!("integrity: {e}"));
            TestFiles::default()
        });
        let mut findings = text_findings(repo, stopped, &files, warnings);
        let green = self.green_counts().unwrap_or_else(|e| {
            warnings.push(format!("integrity: {e}"));
            GreenCounts::default()
        });
        findings.extend(green.drops(stopped.tests));
        findings.extend(self.unproven(repo, stopped, &files, warnings));
        findings.extend(self.old_tests_fail(repo, stopped, &files));
        if findings.is_empty() {
            return Integrity::default();
        }
        let acceptance = self.acceptance().unwrap_or_else(|e| {
            warnings.push(format!("integrity: {e}"));
            None
        });
        // Accepted while the agent's turn ran: from the next turn on (see `crate::trust`).
        let deferred = acceptance
            .as_ref()
            .is_some_and(|a| (self.host.turn_began).is_some_and(|began| a.accepted_at > began));
        let Some(acceptance) = acceptance.filter(|_| !deferred) else {
            let root = self.workdir.display().to_string();
            return Integrity {
                findings,
                notice: deferred.then(|| render::given_during_the_turn_notice(&root, true)),
                ..Integrity::default()
            };
        };
        let (accepted, findings): (Vec<Finding>, Vec<Finding>) = findings
            .into_iter()
            .partition(|f| acceptance.covers(f, digest_of(&repo.workdir, f).as_deref()));
        Integrity {
            notice: (!accepted.is_empty())
                .then(|| render::acceptance_notice(&acceptance, &accepted)),
            findings,
            accepted,
        }
    }

    /// The integrity of the worktree's change set as the last stop saw it, running nothing:
    /// the planned commands' counts are their cached outcomes for these changes, if any.
    pub fn current_integrity(&self, warnings: &mut Vec<String>) -> Result<Integrity, ProjectError> {
        let repo = self.git()?;
        let (facts, mut fingerprints) = self.read_changes()?;
        let changes = match facts {
            RepoFacts::Changes(changes) => changes,
            RepoFacts::Unreadable { reason } => return Err(ProjectError::RepoUnreadable(reason)),
            RepoFacts::NoRepository => return Ok(Integrity::default()),
        };
        let fingerprint = fingerprints.fingerprint(&changes);
        fingerprints.keep();
        let plan = decide::plan(
            Stop {
                repeated: false,
                subagent: false,
            },
            &changes,
            &SessionFacts::default(),
            &self.policy,
        );
        let cache = self.test_cache();
        let timeout = self.policy.tests.timeout;
        let tests: Vec<TestRun> = (plan.tests.into_iter())
            .filter_map(|p| {
                // Only a whole run's count is compared (see `GreenCounts`): a narrowed one is
                // not looked for, and no selection is made (it may ask `cargo metadata`).
                let key = cache::test_fingerprint(&fingerprint, &p.command, timeout);
                let outcome = cache.lookup(&p.command, &key)?;
                Some(TestRun::new(p.command, p.rules, outcome))
            })
            .collect();
        let stopped = Stopped {
            changes: &changes,
            fingerprint: &fingerprint,
            tests: &tests,
            may_run: false,
            base: changes.head.commit(),
        };
        Ok(self.integrity(repo, &stopped, warnings))
    }

    /// What one edit did to the tests, judged alone ([`integrity::weakened_by_edit`]): the file
    /// `path` (repository-relative) as it is now against its text at `base` (the turn's base,
    /// else `HEAD`), less what the user accepted. Empty when the integrity check is not
    /// blocking, the file is no test, Rust source, runner configuration or protected file, a
    /// side is missing, too big or not UTF-8, or anything cannot be read: a note, never a
    /// verdict.
    pub fn edit_findings(&self, base: Option<&str>, path: &str) -> Vec<Finding> {
        if self.policy.integrity.mode != IntegrityMode::Block {
            return Vec::new();
        }
        let Ok(files) = TestFiles::new(&self.policy.integrity) else {
            return Vec::new();
        };
        let relevant = files.is_test(path)
            || files.is_protected(path)
            || integrity::is_runner_config(path)
            || path.ends_with(".rs");
        let Some(new) = relevant
            .then(|| read_bounded(&self.workdir.join(path)))
            .flatten()
        else {
            return Vec::new();
        };
        let Ok(repo) = self.git() else {
            return Vec::new();
        };
        let Some(base) = base
            .map(str::to_owned)
            .or_else(|| git::base::head_commit(repo))
        else {
            return Vec::new();
        };
        let wanted = BTreeSet::from([path.to_owned()]);
        let old = git::small_blobs(repo, &base, &wanted, MAX_INTEGRITY_BYTES)
            .ok()
            .and_then(|mut blobs| blobs.remove(path))
            .and_then(|blob| String::from_utf8(blob).ok());
        let Some(old) = old else {
            return Vec::new();
        };
        let findings = integrity::weakened_by_edit(path, &old, &new, &files);
        match self.acceptance() {
            Ok(Some(acceptance)) if !findings.is_empty() => (findings.into_iter())
                .filter(|f| !acceptance.covers(f, digest_of(&repo.workdir, f).as_deref()))
                .collect(),
            _ => findings,
        }
    }

    /// Accepts `findings` (the user's `checkpoint integrity accept`): each stands while its file
    /// keeps its current content, or its count stays the same. Replaces an earlier acceptance.
    pub fn accept_integrity(&self, findings: &[Finding]) -> Result<Acceptance, ProjectError> {
        let store = self.trust_store().ok_or(ProjectError::NoConfigDir)?;
        let files = (findings.iter())
            .filter_map(|f| Some((f.file.clone(), digest_of(&self.workdir, f)?)))
            .collect();
        let acceptance = Acceptance {
            accepted_at: self.host.now,
            findings: findings.to_vec(),
            files,
        };
        store.accept(&self.workdir, acceptance.clone())?;
        Ok(acceptance)
    }

    /// Makes the counts of `tests`' passing runs the baseline later green runs are held to;
    /// called after a stop with no integrity finding.
    pub fn advance_green_counts(&self, tests: &[TestRun]) -> Result<(), ProjectError> {
        if tests.is_empty() {
            return Ok(());
        }
        store::update_json(&self.green_counts_path(), |green: &mut GreenCounts| {
            green.advance(tests)
        })?;
        Ok(())
    }

    fn green_counts(&self) -> Result<GreenCounts, ProjectError> {
        Ok(store::read_json(&self.green_counts_path())?.unwrap_or_default())
    }

    fn green_counts_path(&self) -> PathBuf {
        self.state_dir.join(GREEN_COUNTS_FILE)
    }

    fn acceptance(&self) -> Result<Option<Acceptance>, ProjectError> {
        match self.trust_store() {
            Some(store) => Ok(store.acceptance(&self.workdir)?),
            None => Ok(None),
        }
    }
}

/// The content digest of the file `finding` concerns ([`ABSENT`] when it does not exist);
/// `None` for a finding about a command, or a file that cannot be read.
fn digest_of(workdir: &Path, finding: &Finding) -> Option<String> {
    if finding.kind.is_about_a_command() {
        return None;
    }
    let path = workdir.join(&finding.file);
    match crate::bounded::open_regular(&path).and_then(digest::hash_reader) {
        Ok(digest) => Some(digest),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(ABSENT.to_owned()),
        Err(_) => None,
    }
}

/// The text findings of the stopped change set: the sides of the files [`integrity::wanted`]
/// names, read at the turn's base (sized, then read, in-process) and in the worktree, analysed.
/// A side bigger than [`MAX_INTEGRITY_BYTES`], or not UTF-8, is left out; failing to read the
/// base (or a bad glob in the settings) is a warning and leaves the checks that need no text (or
/// the default test files).
fn text_findings(
    repo: &Repo,
    stopped: &Stopped<'_>,
    files: &TestFiles,
    warnings: &mut Vec<String>,
) -> Vec<Finding> {
    let changes = stopped.changes;
    let wanted = integrity::wanted(changes, files);
    let at_head: BTreeSet<String> = (wanted.iter())
        .filter(|(_, sides)| sides.old)
        .map(|(path, _)| (*path).to_owned())
        .collect();
    let mut old = match stopped.base {
        Some(commit) if !at_head.is_empty() => {
            git::small_blobs(repo, commit, &at_head, MAX_INTEGRITY_BYTES).unwrap_or_else(|e| {
                warnings.push(format!("integrity: {e}"));
                BTreeMap::new()
            })
        }
        _ => BTreeMap::new(),
    };
    let texts = wanted
        .into_iter()
        .map(|(path, sides)| {
            let read = Sides {
                old: old
                    .remove(path)
                    .and_then(|blob| String::from_utf8(blob).ok()),
                new: sides
                    .new
                    .then(|| read_bounded(&repo.workdir.join(path)))
                    .flatten(),
            };
            (path.to_owned(), read)
        })
        .collect();
    integrity::analyze(changes, &texts, files)
}

/// The UTF-8 text of the file at `path` when it is at most [`MAX_INTEGRITY_BYTES`] long.
fn read_bounded(path: &Path) -> Option<String> {
    crate::bounded::read_regular_text(path, MAX_INTEGRITY_BYTES as u64).ok()
}
