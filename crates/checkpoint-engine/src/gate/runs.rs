//! The test runs of a change set, as a stop makes them and as the background run of warm
//! results makes them ahead of it: the project with its approved commands only, and each planned
//! command looked up in the cache or run (narrowed as selected, once per fingerprint, with a
//! receipt).

use jiff::Timestamp;

use crate::cache::{self, TestCache};
use crate::git::Repo;
use crate::host::{Host, STATE_DIR_VAR};
use crate::journal::Journal;
use crate::project::{Project, ProjectError};
use crate::project_env::ProjectVar;
use crate::runner::{self, RunWatch};
use crate::select::Narrowing;
use crate::store;
use crate::trust::Approval;
use checkpoint_core::checks::PlannedCheck;
use checkpoint_core::decide::PlannedTest;
use checkpoint_core::outcome::{TestOutcome, TestRun, TestStatus};
use checkpoint_core::policy::config::{KEYS, ProjectCommand};

/// Whether a run ended saying no test ran — exit 5, pytest's "no tests collected" (its filters
/// `-k`/`-m` may leave out every test of a narrowed run's modules) and unittest's "no tests
/// ran" — with no test reported. A narrowed run that did says nothing of the change: the whole
/// command runs in its place.
fn ran_no_test(outcome: &TestOutcome) -> bool {
    outcome.status == TestStatus::Failed
        && outcome.exit_code == Some(5)
        && outcome.passed.unwrap_or(0) == 0
        && outcome.failed.unwrap_or(0) == 0
}

/// The project of `repo` with only the commands and guarded values the user approved for it, for
/// everything a stop does with it (its test runs' timeout, its checkpoints); and the notice for
/// the user when some are not approved.
pub(super) fn approved_project(
    host: &Host,
    repo: Repo,
    warnings: &mut Vec<String>,
) -> Result<(Project, Option<String>), ProjectError> {
    let (project, notice) = host.approved_project(repo, warnings)?;
    if host.project_env.is_empty() {
        return Ok((project, notice));
    }
    let approval = project.approval().unwrap_or_else(|e| {
        warnings.push(format!("trust: {e}"));
        None
    });
    let held = project_env_notice(&project, approval.as_ref());
    let notices: Vec<String> = notice.into_iter().chain(held).collect();
    Ok((project, (!notices.is_empty()).then(|| notices.join("\n"))))
}

/// What the user is told about the `CHECKPOINT_*` variables the agent's project configuration
/// set ([`Host::project_env`](crate::host::Host::project_env)) whose values the gate holds back:
/// a guarded setting's value not approved, and the state directory (never the project's to
/// move). `None` when none is.
fn project_env_notice(project: &Project, approval: Option<&Approval>) -> Option<String> {
    let approved = |c: &ProjectCommand| approval.is_some_and(|a| a.commands.contains(c));
    let held: Vec<&ProjectVar> = (project.host.project_env.iter())
        .filter(|set| {
            let var = set.var.as_str();
            match KEYS
                .iter()
                .find(|k| k.env == var || k.aliases.contains(&var))
            {
                Some(key) => (project.commands.iter()).any(|c| c.slot == key.name && !approved(c)),
                None => var == STATE_DIR_VAR,
            }
        })
        .collect();
    if held.is_empty() {
        return None;
    }
    let mut text = "Checkpoint: the agent's project configuration sets these variables in the \
                    hook's environment; they are the project's values, not yours, and the stop \
                    gate holds them back until you approve them:"
        .to_owned();
    for set in held {
        text.push_str(&format!("\n- {} (from {})", set.var, set.file.display()));
    }
    text.push_str(
        "\nTo use such a value, write it in checkpoint.toml and approve it with `checkpoint \
         trust`, or in your own config file.",
    );
    Some(text)
}

/// How a stop (or the background run) runs its planned test commands.
pub(super) struct TestRuns<'a> {
    pub(super) journal: &'a Journal,
    /// Told about each fresh run.
    pub(super) watch: &'a dyn RunWatch,
    pub(super) cache: TestCache,
    pub(super) fingerprint: &'a str,
    /// False once the block cap is reached: only cached outcomes are used.
    pub(super) may_run: bool,
    /// The commit the stop judges its change set from, for the receipts of its fresh runs;
    /// `None` ahead of a stop.
    pub(super) base: Option<&'a str>,
}

impl TestRuns<'_> {
    /// Runs each planned command once (as its selection narrows it). With `[tests]
    /// full_before_commit`, a narrowed run that passes is followed by the whole command, whose
    /// outcome then stands: the stop is not allowed on a selection alone.
    pub(super) fn run(
        &self,
        planned: Vec<(Narrowing, PlannedTest)>,
        warnings: &mut Vec<String>,
    ) -> Vec<TestRun> {
        let full_before_commit = self.journal.policy().tests.full_before_commit;
        planned
            .into_iter()
            .map(|(narrowing, p)| {
                // An approved command whose definition changed runs only once that is approved.
                let changed = &self.journal.policy().tests.changed_definitions;
                if changed.iter().any(|c| c.command == p.command) {
                    return TestRun::new(p.command, p.rules, TestOutcome::not_run());
                }
                let (selection, whole_because) = match narrowing {
                    Ok(selection) => (Some(selection), None),
                    Err(whole) => (None, whole.because),
                };
                let command = selection.as_ref().map_or(&p.command, |s| &s.command);
                let outcome = self.outcome(command, self.tests_timeout(), warnings);
                let mut run = TestRun::new(p.command, p.rules, outcome);
                run.selection = selection;
                run.whole_because = whole_because;
                if let Some(selection) = &run.selection {
                    if ran_no_test(&run.outcome) {
                        run.whole_because = Some(format!("`{}` ran no test", selection.command));
                    }
                    if run.whole_because.is_some()
                        || (full_before_commit && run.outcome.status == TestStatus::Passed)
                    {
                        run.outcome = self.outcome(&run.command, self.tests_timeout(), warnings);
                        run.selection = None;
                    }
                }
                run
            })
            .collect()
    }

    /// Runs each of `checks` whole, as [`TestRuns::run`] runs a test command (cached, once per
    /// fingerprint, with a receipt; not while what it runs changed since its approval), under
    /// `[checks] timeout`.
    pub(super) fn run_checks(
        &self,
        checks: &[PlannedCheck],
        warnings: &mut Vec<String>,
    ) -> Vec<TestRun> {
        let policy = self.journal.policy();
        (checks.iter())
            .map(|check| {
                let changed = &policy.tests.changed_definitions;
                let outcome = if changed.iter().any(|c| c.command == check.command) {
                    TestOutcome::not_run()
                } else {
                    self.outcome(&check.command, policy.checks.timeout, warnings)
                };
                let mut run = TestRun::new(check.command.clone(), Vec::new(), outcome);
                run.check = Some(check.kind);
                run
            })
            .collect()
    }

    fn tests_timeout(&self) -> std::time::Duration {
        self.journal.policy().tests.timeout
    }

    /// The outcome of `command` on this change set: the last one when its fingerprint did not
    /// change, else a fresh run (none once the block cap is reached). A concurrent stop of the
    /// same change set may be running it: its outcome is waited for (at most the run's timeout
    /// and a lock's) and reused. While a task is active, a cached pass is trusted only with a
    /// verified signed receipt for the same fingerprint; every fresh run leaves a receipt in that
    /// task.
    fn outcome(
        &self,
        command: &str,
        timeout: std::time::Duration,
        warnings: &mut Vec<String>,
    ) -> TestOutcome {
        let key = cache::test_fingerprint(self.fingerprint, command, timeout);
        if let Some(cached) = self.cached(command, &key) {
            return cached;
        }
        if !self.may_run {
            return TestOutcome::not_run();
        }
        let _running = self.cache.run_lock(&key, timeout + store::LOCK_TIMEOUT);
        if let Some(cached) = self.cached(command, &key) {
            return cached;
        }
        let tree = self.journal.worktree_tree();
        let started = Timestamp::now();
        self.watch.started(command);
        let recorded = runner::run_recorded(command, self.journal.workdir(), timeout);
        self.watch.ended();
        let ended = Timestamp::now();
        // The cache only saves time; failing to write it must not fail the stop.
        let _ = self.cache.record(command, &key, &recorded.outcome);
        let tested = (key.as_str(), tree);
        let receipt = (self.journal)
            .receipt_for_gate_run(command, &recorded, tested, started, ended, self.base);
        if let Err(e) = receipt {
            warnings.push(format!("journal: {e}"));
        }
        recorded.outcome
    }

    /// The cached outcome of `command` on the test fingerprint `key`, if there is one this stop
    /// may trust: a cached pass only with a verified passing receipt; a command that could not run is run again, unless the block cap is
    /// reached (the stop then only reports it).
    fn cached(&self, command: &str, key: &str) -> Option<TestOutcome> {
        (self.cache.lookup(command, key)).filter(|o| match o.status {
            TestStatus::Passed => self.journal.trusts_cached_pass(command, key),
            TestStatus::Error => !self.may_run,
            _ => true,
        })
    }
}
