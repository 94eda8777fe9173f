//! The journal against real files and a real git repository.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use jiff::Timestamp;

use super::*;
use crate::git;
use crate::runner;
use checkpoint_core::journal::receipt::NO_TASK;
use checkpoint_core::journal::{
    CrashKind, Current, HistoryEntry, HistoryKind, ReceiptCheck, ReceiptSource, RecoveryAction,
    Removal, StepSpec, StepStatus, Trigger, TrustedKeys, checkpoint, current,
};
use checkpoint_core::policy::Policy;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_767_225_600 + secs).unwrap()
}

/// A journal over a fresh `python-passing` repository, with state and keys in temp dirs.
struct Fixture {
    repo: tempfile::TempDir,
    _home: tempfile::TempDir,
    journal: Journal,
}

fn fixture_with(policy: Policy) -> Fixture {
    let repo = checkpoint_testkit::repo("python-passing");
    let home = tempfile::tempdir().unwrap();
    let found = git::discover(repo.path()).unwrap().unwrap();
    let keys = FileKeyManager::new(home.path().join("keys"));
    let journal = Journal::new(
        home.path().join("state"),
        found.workdir.clone(),
        Some(found),
        policy,
        Some(Box::new(keys)),
    );
    Fixture {
        repo,
        _home: home,
        journal,
    }
}

fn fixture() -> Fixture {
    fixture_with(Policy::builtin())
}

fn steps(list: &[(&str, Option<&str>)]) -> Vec<StepSpec> {
    list.iter()
        .map(|(name, validate)| StepSpec {
            name: (*name).into(),
            validate: validate.map(str::to_owned),
        })
        .collect()
}

const LONG: Duration = Duration::from_secs(60);

#[test]
fn updates_are_transactions_that_keep_the_previous_copy() {
    let f = fixture();
    let j = &f.journal;
    let task = j
        .start_task("Add login!", steps(&[("a", None)]), at(0))
        .unwrap();
    assert!(
        task.id.starts_with("add-login-20260101T000000-"),
        "{}",
        task.id
    );
    assert_eq!(j.active_id().unwrap().as_deref(), Some(task.id.as_str()));
    let json = j.hook_json(&task.id).unwrap();
    let first = fs::read(&json).unwrap();

    let (_, after) = j
        .update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    assert_eq!(after.revision, 2);
    assert_eq!(
        fs::read(json.with_file_name("hook.json.prev")).unwrap(),
        first
    );
    assert_eq!(j.load(&task.id).unwrap(), after);
    let md = fs::read_to_string(j.hook_md(&task.id).unwrap()).unwrap();
    assert_eq!(md, j.markdown(&after));

    // A refused operation writes nothing; a no-op writes nothing.
    let err = j.update(&task.id, |t| Ok(t.complete(at(2))?)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot complete the task while the task is step_running"
    );
    j.update(&task.id, |_| Ok(())).unwrap();
    assert_eq!(j.load(&task.id).unwrap().revision, 2);

    // Only one unfinished task at a time.
    let again = j
        .start_task("other", steps(&[("x", None)]), at(3))
        .unwrap_err();
    assert!(matches!(again, JournalError::Unfinished { .. }), "{again}");
    assert!(matches!(
        j.update("../x", |_| Ok(())).unwrap_err(),
        JournalError::Store(StoreError::InvalidId(_))
    ));
}

/// `n` history entries recorded in task `t`, detailed `e<from>`, `e<from + 1>`, ….
fn record_entries(t: &mut Task, from: u64, n: u64) {
    for i in from..from + n {
        t.record(HistoryKind::Checkpoint, None, Some(format!("e{i}")), at(5));
    }
}

fn details(entries: &[HistoryEntry]) -> Vec<String> {
    (entries.iter())
        .map(|h| h.detail.clone().unwrap_or_default())
        .collect()
}

#[test]
fn the_history_goes_to_chunks_and_hook_json_keeps_the_latest() {
    let f = fixture();
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    let dir = j.task_dir(&task.id).unwrap();
    assert_eq!(task.history_len, 2);
    // 2,600 entries in batches, one of them spanning two chunk boundaries.
    for (from, n) in [(0, 500), (500, 1), (501, 1_600), (2_101, 499)] {
        j.update(&task.id, |t| {
            record_entries(t, from, n);
            Ok(())
        })
        .unwrap();
    }
    let task = j.load(&task.id).unwrap();
    assert_eq!(task.schema, task::SCHEMA_VERSION);
    assert_eq!(task.history_len, 2_602);
    assert_eq!(task.history.len(), task::RECENT_HISTORY);
    let all = j.history(&task, 0).unwrap();
    let want: Vec<String> = ["", ""]
        .into_iter()
        .map(str::to_owned)
        .chain((0..2_600).map(|i| format!("e{i}")))
        .collect();
    assert_eq!(details(&all), want);
    assert_eq!(all[2_602 - task::RECENT_HISTORY..], task.history[..]);
    assert_eq!(j.history(&task, 2_600).unwrap(), all[2_600..]);
    let chunk = |n: u32| fs::read(dir.join(format!("history/{n:06}.jsonl"))).unwrap();
    let closed = (chunk(1), chunk(2));
    assert_eq!(closed.0.iter().filter(|b| **b == b'\n').count(), 1_000);

    // What one transaction wrote: the last chunk (all of it), hook.json, hook.md, and
    // current.json only when it changed; each as it is on disk.
    let before = task.clone();
    let mut after = task.clone();
    record_entries(&mut after, 2_600, 1);
    after.revision += 1;
    let lock = store::Lock::acquire(&j.hook_json(&task.id).unwrap()).unwrap();
    let written = j.write_task(Some(&before), &mut after, None).unwrap();
    drop(lock);
    let names: Vec<&str> = written.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["history/000003.jsonl", "hook.json", "hook.md"]);
    for w in &written {
        assert_eq!(fs::read(dir.join(&w.name)).unwrap(), w.bytes, "{}", w.name);
    }
    assert_eq!(
        (chunk(1), chunk(2)),
        closed,
        "closed chunks are never rewritten"
    );
    let (_, started) = j
        .update(&task.id, |t| Ok(t.start_step(None, at(6))?))
        .unwrap();
    assert_eq!(j.current(&task.id).unwrap(), Current::of(&started));
    assert_eq!(details(&j.history(&started, 2_602).unwrap()), ["e2600", ""]);
}

#[test]
fn a_version_1_hook_json_loads_and_moves_its_history_out_on_the_next_write() {
    let f = fixture();
    let j = &f.journal;
    let task = j
        .start_task("t", steps(&[("a", Some("make test"))]), at(0))
        .unwrap();
    let (_, mut task) = j
        .update(&task.id, |t| {
            t.start_step(None, at(1))?;
            t.start_validation("make test", at(2))?;
            Ok(())
        })
        .unwrap();
    // The same task as version 1 wrote it: its whole history inside, no count, no
    // `validating`, no history/ or current.json beside it.
    task.history = j.history(&task, 0).unwrap();
    record_entries(&mut task, 0, 1_500);
    let mut v1 = serde_json::to_value(&task).unwrap();
    let object = v1.as_object_mut().unwrap();
    object.insert("schema".into(), 1.into());
    let history = object.remove("recent_history").unwrap();
    object.insert("history".into(), history);
    object.remove("history_len");
    object.remove("validating");
    let dir = j.task_dir(&task.id).unwrap();
    fs::remove_dir_all(dir.join("history")).unwrap();
    fs::remove_file(dir.join(current::FILE)).unwrap();
    fs::write(dir.join("hook.json"), serde_json::to_vec(&v1).unwrap()).unwrap();

    let old = j.load(&task.id).unwrap();
    assert_eq!(old.schema, 1);
    assert_eq!(old.history_len, 1_504);
    assert_eq!(old.validating.as_deref(), Some("make test"));
    assert!(
        j.markdown(&old).contains("`make test`"),
        "{}",
        j.markdown(&old)
    );
    assert_eq!(j.history(&old, 1_503).unwrap().len(), 1);
    assert_eq!(j.current(&task.id).unwrap(), Current::of(&old));
    let all = j.history(&old, 0).unwrap();
    assert_eq!(all.len(), 1_504);

    let (_, new) = j
        .update(&task.id, |t| {
            t.note(Some("migrated".into()));
            Ok(())
        })
        .unwrap();
    assert_eq!(new.schema, task::SCHEMA_VERSION);
    assert_eq!(new.history.len(), task::RECENT_HISTORY);
    let stored: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("hook.json")).unwrap()).unwrap();
    assert_eq!(stored["schema"], 2);
    assert_eq!(stored["history_len"], 1_504);
    assert!(stored.get("history").is_none());
    assert_eq!(j.load(&task.id).unwrap(), new);
    assert_eq!(j.history(&new, 0).unwrap(), all);
    assert!(dir.join("history/000002.jsonl").is_file());
    assert_eq!(j.current(&task.id).unwrap(), Current::of(&new));
}

#[test]
fn corrupt_hook_json_is_reported_and_left_alone() {
    let f = fixture();
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    let json = j.hook_json(&task.id).unwrap();
    fs::write(&json, "{\"schema\": 1, \"id\": ").unwrap();
    let err = j
        .update(&task.id, |t| Ok(t.fail_step(None, at(2))?))
        .unwrap_err();
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("hook.json.prev"));
    assert_eq!(
        fs::read_to_string(&json).unwrap(),
        "{\"schema\": 1, \"id\": "
    );
    let prev: Task = store::read_json(&json.with_file_name("hook.json.prev"))
        .unwrap()
        .unwrap();
    assert_eq!(prev.revision, 1);

    let newer = serde_json::to_string(&Task { schema: 99, ..prev }).unwrap();
    fs::write(&json, newer).unwrap();
    assert!(matches!(
        j.load(&task.id).unwrap_err(),
        JournalError::NewerSchema { found: 99, .. }
    ));
}

#[test]
fn missing_or_corrupt_hook_md_is_regenerated() {
    let f = fixture();
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    let md = j.hook_md(&task.id).unwrap();
    assert!(!j.refresh_markdown(&task).unwrap());
    fs::remove_file(&md).unwrap();
    assert!(j.refresh_markdown(&task).unwrap());
    fs::write(&md, "garbage").unwrap();
    assert!(j.refresh_markdown(&task).unwrap());
    assert_eq!(fs::read_to_string(&md).unwrap(), j.markdown(&task));
}

#[test]
fn validations_leave_verified_receipts_and_gate_step_done() {
    let f = fixture();
    let j = &f.journal;
    let task = j
        .start_task(
            "t",
            steps(&[("impl", Some("python3 -m unittest -q")), ("docs", None)]),
            at(0),
        )
        .unwrap();
    let id = &task.id;
    j.update(id, |t| Ok(t.start_step(None, at(1))?)).unwrap();

    let failing = j
        .validate(id, Some("impl"), "echo out; echo err >&2; exit 3", LONG)
        .unwrap();
    assert!(!failing.passed);
    let payload = failing.receipt.parsed().unwrap();
    assert_eq!(payload.exit_code, Some(3));
    assert_eq!(
        payload.stdout_sha256,
        Some(checkpoint_core::hex::sha256_hex(b"out\n"))
    );
    assert_eq!(
        payload.stderr_sha256,
        Some(checkpoint_core::hex::sha256_hex(b"err\n"))
    );
    assert_eq!(payload.step.unwrap().name, "impl");
    assert!(matches!(
        j.validate(id, Some("docs"), "true", LONG).unwrap_err(),
        JournalError::Task(TaskError::NotCurrent { .. })
    ));

    // `step done` runs the step's own validation first.
    let finished = j.finish_step(id, Some("done".into()), LONG, at(5)).unwrap();
    assert!(finished.done);
    let validation = finished.validation.unwrap();
    assert!(validation.passed);
    assert_eq!(validation.unsigned_because, None);
    let task = finished.task;
    assert_eq!(
        task.steps[0].validated_by.as_deref(),
        Some(validation.receipt.id.as_str())
    );
    let (trusted, warning) = j.trusted_keys().unwrap();
    assert_eq!(warning, None);
    for receipt in &task.receipts {
        assert!(receipt.check(&task, &trusted).is_verified());
    }
    let triggers: Vec<Trigger> = task.checkpoints.iter().map(|c| c.trigger).collect();
    assert_eq!(triggers, [Trigger::Validation, Trigger::StepDone]);
    let md = fs::read_to_string(j.hook_md(id).unwrap()).unwrap();
    assert!(
        md.contains("`python3 -m unittest -q` passed; verified"),
        "{md}"
    );
}

#[test]
fn a_failing_step_validation_keeps_the_step_running() {
    let f = fixture();
    let j = &f.journal;
    let task = j
        .start_task("t", steps(&[("a", Some("exit 1"))]), at(0))
        .unwrap();
    j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    let finished = j.finish_step(&task.id, None, LONG, at(2)).unwrap();
    assert!(!finished.done);
    assert_eq!(finished.task.state, TaskState::StepRunning);
    assert_eq!(finished.task.steps[0].status, StepStatus::Running);
}

#[test]
fn checkpoints_snapshot_the_steps_files_and_are_pruned() {
    let mut policy = Policy::builtin();
    policy.journal.max_checkpoints = 3;
    let f = fixture_with(policy);
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    fs::write(f.repo.path().join("new.py"), "x = 1\n").unwrap();
    let c = j
        .checkpoint(&task.id, Trigger::Manual, Some("halfway".into()), at(2))
        .unwrap();
    assert_eq!(c.id, 1);
    assert_eq!(c.message.as_deref(), Some("halfway"));
    assert!(c.vcs.as_ref().unwrap().dirty);
    assert_eq!(c.files.len(), 1);
    assert_eq!(c.files[0].path, "new.py");
    assert_eq!(c.files[0].size, Some(6));
    // A commit checkpoint also covers what the commit took out of the change set.
    fs::write(f.repo.path().join("committed.py"), "y = 2\n").unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(f.repo.path())
            .envs(checkpoint_testkit::git_env())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["add", "committed.py"]);
    git(&["commit", "-qm", "c"]);
    let c = j
        .checkpoint(&task.id, Trigger::Commit, None, at(3))
        .unwrap();
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["committed.py", "new.py"]);
    for i in 0..3 {
        j.checkpoint_active(Trigger::Commit, None, at(3 + i), None)
            .unwrap()
            .unwrap();
    }
    let task = j.load(&task.id).unwrap();
    let ids: Vec<u64> = task.checkpoints.iter().map(|c| c.id).collect();
    assert_eq!(ids, [3, 4, 5]);

    j.update(&task.id, |t| Ok(t.abandon(None, at(10))?))
        .unwrap();
    assert!(
        j.checkpoint_active(Trigger::Stop, None, at(11), None)
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        j.checkpoint(&task.id, Trigger::Manual, None, at(11))
            .unwrap_err(),
        JournalError::Finished { .. }
    ));
}

#[test]
fn checkpoints_snapshot_at_most_max_files_and_count_the_rest() {
    let f = fixture();
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    let dir = f.repo.path().join("many");
    fs::create_dir(&dir).unwrap();
    for i in 0..checkpoint::MAX_FILES + 5 {
        fs::write(dir.join(format!("f{i:04}.txt")), "x").unwrap();
    }
    let c = j
        .checkpoint(&task.id, Trigger::Manual, None, at(2))
        .unwrap();
    assert_eq!(c.files.len(), checkpoint::MAX_FILES);
    assert_eq!(c.more_files, 5);
    assert_eq!(c.files[0].path, "many/f0000.txt");
    let md = fs::read_to_string(j.hook_md(&task.id).unwrap()).unwrap();
    assert!(md.contains("- `many/f0199.txt`\n"), "{md}");
    assert!(!md.contains("many/f0200.txt"), "{md}");
    assert!(
        md.contains("- … and 5 more (`checkpoint status --json` lists all 205)"),
        "{md}"
    );
}

#[test]
fn interval_checkpoints_come_only_when_due() {
    let mut policy = Policy::builtin();
    policy.journal.checkpoint_interval = Duration::from_secs(300);
    let f = fixture_with(policy);
    let j = &f.journal;
    assert!(j.maybe_interval_checkpoint(at(0), None).unwrap().is_none());
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    assert!(
        j.maybe_interval_checkpoint(at(1000), None)
            .unwrap()
            .is_none(),
        "no step running"
    );
    j.update(&task.id, |t| Ok(t.start_step(None, at(100))?))
        .unwrap();
    assert!(
        j.maybe_interval_checkpoint(at(399), None)
            .unwrap()
            .is_none()
    );
    let first = j.maybe_interval_checkpoint(at(400), None).unwrap().unwrap();
    assert_eq!(first.trigger, Trigger::Interval);
    assert!(
        j.maybe_interval_checkpoint(at(699), None)
            .unwrap()
            .is_none()
    );
    assert!(
        j.maybe_interval_checkpoint(at(700), None)
            .unwrap()
            .is_some()
    );
    // Deciding reads current.json, never hook.json: a task record it cannot parse does not
    // matter until a checkpoint is due (then the transaction reports it).
    let json = j.hook_json(&task.id).unwrap();
    let good = fs::read(&json).unwrap();
    fs::write(&json, "not json").unwrap();
    assert!(
        j.maybe_interval_checkpoint(at(999), None)
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        j.maybe_interval_checkpoint(at(1000), None),
        Err(JournalError::Corrupt { .. })
    ));
    // A record a killed writer left behind is at worst early: checked again on the task.
    fs::write(&json, good).unwrap();
    let current = j.task_dir(&task.id).unwrap().join(current::FILE);
    let stale = Current {
        state: TaskState::StepRunning,
        since: Some(at(0)),
        passes: Vec::new(),
        certificates: Vec::new(),
    };
    store::write_json(&current, &stale).unwrap();
    assert!(
        j.maybe_interval_checkpoint(at(999), None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn recovery_is_recorded_once() {
    let mut policy = Policy::builtin();
    policy.journal.stale_threshold = Duration::from_secs(60);
    let f = fixture_with(policy);
    let j = &f.journal;
    let task = j
        .start_task("t", steps(&[("a", None), ("b", None)]), at(0))
        .unwrap();
    let id = &task.id;
    j.update(id, |t| Ok(t.start_step(None, at(1))?)).unwrap();
    fs::write(f.repo.path().join("work.py"), "v = 1\n").unwrap();
    j.checkpoint(id, Trigger::Manual, None, at(2)).unwrap();
    fs::write(f.repo.path().join("work.py"), "v = 2\n").unwrap();

    let fresh = j.recover(id, at(30)).unwrap();
    assert!(fresh.recorded.is_none(), "not stale yet");
    assert_eq!(fresh.task.state, TaskState::StepRunning);

    let first = j.recover(id, at(100)).unwrap();
    let recovery = first.recorded.unwrap();
    assert_eq!(recovery.kind, CrashKind::InStep);
    assert_eq!(
        recovery.action,
        RecoveryAction::ResumeFromCheckpoint {
            step: "a".into(),
            checkpoint: 1
        }
    );
    assert_eq!(recovery.changed_since_checkpoint, ["work.py"]);
    assert_eq!(first.task.state, TaskState::Recovering);
    let second = j.recover(id, at(5000)).unwrap();
    assert!(second.recorded.is_none());
    assert_eq!(second.task, first.task, "running recover twice = once");
    let md = fs::read_to_string(j.hook_md(id).unwrap()).unwrap();
    assert!(
        md.contains("WARNING: changed since the last checkpoint (#1)"),
        "{md}"
    );
    assert!(md.contains("Resume step **a** from checkpoint #1"), "{md}");

    // Resuming keeps the attempt: the step was never finished.
    let (_, resumed) = j.update(id, |t| Ok(t.start_step(None, at(6000))?)).unwrap();
    assert_eq!(resumed.steps[0].attempt, 1);
    assert_eq!(resumed.recovery, None);
}

#[test]
fn missing_key_warns_and_recovery_still_works() {
    let repo = checkpoint_testkit::repo("python-passing");
    let state = tempfile::tempdir().unwrap();
    let mut policy = Policy::builtin();
    policy.journal.stale_threshold = Duration::from_secs(1);
    let j = Journal::new(state.path().into(), repo.path().into(), None, policy, None);
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    let validated = j.validate(&task.id, None, "true", LONG).unwrap();
    assert!(validated.unsigned_because.is_some());
    let task = j.load(&task.id).unwrap();
    assert_eq!(
        validated.receipt.check(&task, &TrustedKeys::default()),
        ReceiptCheck::Unsigned
    );
    assert!(task.certificates.is_empty());
    assert!(j.trusted_keys().unwrap().1.is_some());
    let recovered = j
        .recover(
            &task.id,
            Timestamp::now() + jiff::SignedDuration::from_secs(10),
        )
        .unwrap();
    assert!(recovered.recorded.is_some());
}

#[test]
fn gate_runs_leave_receipts_the_cache_may_trust() {
    let f = fixture();
    let j = &f.journal;
    let run = runner::run_recorded("true", f.repo.path(), LONG);
    // No task: the cache is trusted only with the receipt the session log keeps of a pass.
    assert!(!j.trusts_cached_pass("true", "fp"));
    let kept = j
        .receipt_for_gate_run("true", &run, ("fp", None), at(0), at(1), None)
        .unwrap()
        .unwrap();
    assert_eq!(kept.parsed().unwrap().task_id, NO_TASK);
    assert!(j.trusts_cached_pass("true", "fp"));
    assert!(!j.trusts_cached_pass("true", "other"));
    let failed = runner::run_recorded("false", f.repo.path(), LONG);
    assert!(
        j.receipt_for_gate_run("false", &failed, ("fp", None), at(0), at(1), None)
            .unwrap()
            .is_none(),
        "a failed run without a task leaves no receipt"
    );
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    assert!(
        !j.trusts_cached_pass("true", "fp"),
        "a task trusts its own receipts only"
    );
    let receipt = j
        .receipt_for_gate_run("true", &run, ("fp", None), at(0), at(1), None)
        .unwrap()
        .unwrap();
    let payload = receipt.parsed().unwrap();
    assert_eq!(payload.source, ReceiptSource::Gate);
    assert_eq!(payload.fingerprint.as_deref(), Some("fp"));
    assert!(j.trusts_cached_pass("true", "fp"));
    assert!(!j.trusts_cached_pass("true", "other"));
    assert!(!j.trusts_cached_pass("false", "fp"));
    let task = j.load(&task.id).unwrap();
    assert_eq!(task.history.last().unwrap().kind, HistoryKind::GateRun);
}

#[test]
fn a_cached_pass_is_trusted_from_current_json_without_reading_hook_json() {
    let f = fixture();
    let j = &f.journal;
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    let run = runner::run_recorded("true", f.repo.path(), LONG);
    for fingerprint in ["old", "new"] {
        j.receipt_for_gate_run("true", &run, (fingerprint, None), at(0), at(1), None)
            .unwrap()
            .unwrap();
    }
    let current = j.current(&task.id).unwrap();
    let held: Vec<Option<String>> = (current.passes.iter())
        .map(|r| r.parsed().unwrap().fingerprint)
        .collect();
    assert_eq!(
        held,
        [Some("new".to_owned())],
        "the latest pass of each command"
    );
    assert_eq!(current.certificates.len(), 1);

    // hook.json unreadable: what current.json holds is still trusted, nothing else is.
    let json = j.task_dir(&task.id).unwrap().join("hook.json");
    let good = fs::read(&json).unwrap();
    fs::write(&json, "not json").unwrap();
    assert!(j.trusts_cached_pass("true", "new"));
    assert!(!j.trusts_cached_pass("true", "old"));
    // An older pass is found in hook.json.
    fs::write(&json, &good).unwrap();
    assert!(j.trusts_cached_pass("true", "old"));

    // A pass whose payload was edited in current.json proves nothing.
    let path = j.task_dir(&task.id).unwrap().join(current::FILE);
    let mut forged = current.clone();
    forged.passes[0].payload = forged.passes[0].payload.replace("\"new\"", "\"forged\"");
    store::write_json(&path, &forged).unwrap();
    fs::write(&json, "not json").unwrap();
    assert!(!j.trusts_cached_pass("true", "forged"));
}

#[test]
fn cleanup_removes_only_expired_finished_tasks() {
    let f = fixture();
    let j = &f.journal;
    let mut ids = Vec::new();
    for (name, end) in [
        ("done", Some(true)),
        ("gave-up", Some(false)),
        ("open", None),
    ] {
        let task = j.start_task(name, steps(&[("a", None)]), at(0)).unwrap();
        j.update(&task.id, |t| {
            match end {
                Some(true) => {
                    t.start_step(None, at(1))?;
                    t.finish_step(None, at(1))?;
                    t.complete(at(1))?;
                }
                Some(false) => t.abandon(None, at(1))?,
                None => {}
            }
            Ok(())
        })
        .unwrap();
        ids.push(task.id);
    }
    let day = 86_400;
    let names =
        |removals: &[Removal]| -> Vec<String> { removals.iter().map(|r| r.name.clone()).collect() };
    assert!(j.cleanup(at(6 * day), false).unwrap().is_empty());
    assert_eq!(names(&j.cleanup(at(8 * day), true).unwrap()), ["gave-up"]);
    assert_eq!(j.task_ids().unwrap().len(), 3, "dry run removes nothing");
    assert_eq!(
        names(&j.cleanup(at(31 * day), false).unwrap()),
        ["done", "gave-up"]
    );
    assert_eq!(j.task_ids().unwrap(), [ids[2].clone()]);
    assert_eq!(j.active_id().unwrap().as_deref(), Some(ids[2].as_str()));
    assert!(j.cleanup(at(10_000 * day), false).unwrap().is_empty());
}

/// The child half of [`sigkill_never_tears_hook_json`]: updates the task named by the
/// environment until it is killed.
#[test]
#[ignore = "helper process of sigkill_never_tears_hook_json"]
fn sigkill_writer_child() {
    let state = PathBuf::from(std::env::var("JOURNAL_TEST_STATE").unwrap());
    let id = std::env::var("JOURNAL_TEST_TASK").unwrap();
    let j = repo_journal(&state);
    loop {
        j.update(&id, |t| {
            // Each version names its own revision (bumped on commit), in the step and in the
            // history entry it appends.
            let revision = format!("revision {}", t.revision + 1);
            t.note(Some(revision.clone()));
            t.record(HistoryKind::Checkpoint, None, Some(revision), at(2));
            Ok(())
        })
        .unwrap();
    }
}

/// A journal with no keys over the git repository at `dir` (made when missing), its state in
/// `<dir>/.git/checkpoint`.
fn repo_journal(dir: &Path) -> Journal {
    if !dir.join(".git").exists() {
        let init = Command::new("git").args(["init", "-q"]).arg(dir).status();
        assert!(init.unwrap().success());
    }
    let found = git::discover(dir).unwrap().unwrap();
    Journal::new(
        found.git_dir.join("checkpoint"),
        found.workdir.clone(),
        Some(found),
        Policy::builtin(),
        None,
    )
}

/// The task record `commit` of its ref holds, read by git itself.
fn task_at(repo: &Path, commit: &str) -> Task {
    let show = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["show", &format!("{commit}:hook.json")])
        .output()
        .unwrap();
    assert!(show.status.success(), "{show:?}");
    serde_json::from_slice(&show.stdout).expect("the ref's hook.json parses")
}

/// Kills a writer with SIGKILL at pseudo-random moments until at least 1,000 updates have been
/// committed: after every kill `hook.json` parses, and it is a committed version — it names its
/// own revision, and a revision seen before has the same bytes; its history (past the first
/// chunk by then) reads back whole: one entry per committed update, in order, nothing more. The
/// task's ref, which commits first, is at that revision or one ahead, and a read brings the
/// directory up to it.
#[test]
#[allow(clippy::print_stderr)] // the figures go in the test output
fn sigkill_never_tears_hook_json() {
    let state = tempfile::tempdir().unwrap();
    let j = repo_journal(state.path());
    let task = j.start_task("t", steps(&[("a", None)]), at(0)).unwrap();
    let (_, task) = j
        .update(&task.id, |t| Ok(t.start_step(None, at(1))?))
        .unwrap();
    let json = j.hook_json(&task.id).unwrap();
    let mut seen: std::collections::HashMap<u64, Vec<u8>> = std::collections::HashMap::new();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut kills, mut revision) = (0, task.revision);
    while revision < 1_000 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "journal::tests::sigkill_writer_child",
                "--ignored",
                "--nocapture",
            ])
            .env("JOURNAL_TEST_STATE", state.path())
            .env("JOURNAL_TEST_TASK", &task.id)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the writer is committing, then kill it at a pseudo-random moment.
        let stamp = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        let before = stamp(&json);
        while stamp(&json) == before {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the writer failed on its own ({status}) after {kills} kills");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % 10_000));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(9));
        kills += 1;
        let bytes = fs::read(&json).unwrap();
        let now: Task = serde_json::from_slice(&bytes).expect("hook.json parses after SIGKILL");
        let doing = now.steps[0].doing.clone().unwrap_or_default();
        if now.revision > task.revision {
            assert_eq!(
                doing,
                format!("revision {}", now.revision),
                "a committed version"
            );
        }
        let history = j.history(&now, 0).unwrap();
        assert_eq!(
            history.len() as u64,
            now.history_len,
            "every committed entry"
        );
        let updates: Vec<String> = (task.revision + 1..=now.revision)
            .map(|r| format!("revision {r}"))
            .collect();
        assert_eq!(details(&history[task.history.len()..]), updates);
        assert!(now.revision >= revision, "revisions never go back");
        if let Some(earlier) = seen.insert(now.revision, bytes.clone()) {
            assert_eq!(earlier, bytes, "revision {} changed", now.revision);
        }
        let ref_name = format!("refs/checkpoint/tasks/{}", task.id);
        let committed = task_at(state.path(), &ref_name);
        assert!(
            committed.revision == now.revision || committed.revision == now.revision + 1,
            "the ref is at revision {}, the directory at {}",
            committed.revision,
            now.revision
        );
        assert_eq!(
            j.load(&task.id).unwrap(),
            committed,
            "a read imports the ref"
        );
        revision = committed.revision;
    }
    assert!(kills > 0);
    eprintln!("sigkill: {kills} kills over {revision} committed updates");
}

/// A journal on `f`'s state and repository with its own key directory: a teammate's machine.
fn teammate(f: &Fixture, home: &Path) -> Journal {
    let found = git::discover(f.repo.path()).unwrap().unwrap();
    Journal::new(
        f.journal.state_dir().to_owned(),
        found.workdir.clone(),
        Some(found),
        Policy::builtin(),
        Some(Box::new(FileKeyManager::new(home.join("keys")))),
    )
}

#[test]
fn each_task_signs_with_its_own_certified_key_and_teammates_verify_through_allowed_signers() {
    let f = fixture();
    let j = &f.journal;
    let mut keys = Vec::new();
    for name in ["one", "two"] {
        let task = j.start_task(name, steps(&[("a", None)]), at(0)).unwrap();
        j.update(&task.id, |t| Ok(t.start_step(None, at(1))?))
            .unwrap();
        let first = j.validate(&task.id, None, "true", LONG).unwrap().receipt;
        let run = runner::run_recorded("true", f.repo.path(), LONG);
        let gate = j
            .receipt_for_gate_run("true", &run, ("fp", None), at(2), at(3), None)
            .unwrap()
            .unwrap();
        // Every receipt of a task shares the task key; the task holds one certificate of it.
        assert_eq!(first.public_key, gate.public_key);
        let task = j.load(&task.id).unwrap();
        assert_eq!(task.certificates.len(), 1);
        assert_eq!(
            Some(&task.certificates[0].task_key),
            first.public_key.as_ref()
        );
        let (trusted, _) = j.trusted_keys().unwrap();
        assert!(
            task.receipts
                .iter()
                .all(|r| r.check(&task, &trusted).is_verified())
        );
        keys.push((task, first.public_key.unwrap()));
        j.update(&keys.last().unwrap().0.id, |t| {
            t.finish_step(None, at(4))?;
            Ok(t.complete(at(5))?)
        })
        .unwrap();
    }
    assert_ne!(keys[0].1, keys[1].1);
    // Neither is the master key, which certified both.
    assert_eq!(
        keys[0].0.certificates[0].master_key,
        keys[1].0.certificates[0].master_key
    );
    assert!(keys.iter().all(|(t, k)| t.certificates[0].master_key != *k));

    // A teammate with other keys trusts nothing until the project lists this user's key.
    let home = tempfile::tempdir().unwrap();
    let other = teammate(&f, home.path());
    let (trusted, _) = other.trusted_keys().unwrap();
    let task = &keys[0].0;
    assert!(matches!(
        task.receipts[0].check(task, &trusted),
        ReceiptCheck::UnknownKey { .. }
    ));
    let own = FileKeyManager::new(f._home.path().join("keys"))
        .master_public_key()
        .unwrap()
        .unwrap();
    fs::create_dir_all(f.repo.path().join(".checkpoint")).unwrap();
    fs::write(
        f.repo.path().join(allowed_signers::ALLOWED_SIGNERS),
        format!(
            "# the team\n{}\n",
            allowed_signers::line("alice@laptop", &own)
        ),
    )
    .unwrap();
    let (trusted, warning) = other.trusted_keys().unwrap();
    assert_eq!(warning, None);
    assert_eq!(
        task.receipts[0].check(task, &trusted),
        ReceiptCheck::Verified {
            signer: "alice@laptop".into()
        }
    );
}
