//! Fingerprints of the worktree's changes and the test-result cache keyed by them.
//!
//! A change fingerprint covers `HEAD` and, for every changed path, its kind and current content,
//! so it moves whenever an edit could change a test's result, and stays put when the agent stops
//! again without touching anything. Files git ignores and unchanged tracked files are not part of
//! it. A test fingerprint adds the command. A file's content digest is read once and then taken
//! from [`DigestMemo`] while the file's stat data stays what it was, so an unchanged file costs
//! one `lstat`.
//!
//! The cache keeps, per command, only the last run: one small JSON file
//! `<state_dir>/cache/<16 hex of the command's hash>.json` with the command, the fingerprint and
//! the outcome, replaced atomically. A lookup hits only when that last run had the same
//! fingerprint. Concurrent stops of one change set run each test once: the first takes the
//! fingerprint's run lock ([`TestCache::run_lock`]) and runs, the others wait for it and then
//! find its outcome here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::file_content::FileContent;
use crate::git;
use crate::store::{self, Lock, StoreError};
use checkpoint_core::changes::{Change, ChangeKind, ChangeSet};
use checkpoint_core::hex::{hex, sha256_hex};
use checkpoint_core::outcome::{TestOutcome, TestStatus};
use checkpoint_core::policy::GitBackend;

mod memo;

use memo::DirStat;
pub use memo::{DigestMemo, SETTLED};

/// BLAKE3 (hex) over `HEAD`'s commit (or `unborn`) and, for each change in order, its path, its
/// kind and the SHA-256 of the file's current content under `workdir`. A file that is missing,
/// unreadable, a symlink (its target is hashed) or not a regular file gets a distinct marker
/// instead; the executable bit is included; a submodule counts with the fingerprint of its own
/// changes (its checked-out commit and what differs from it, read the same way). Reads never fail
/// the fingerprint. A regular file's digest comes from `memo` while its stat data is what it was
/// when the digest was taken (see [`DigestMemo`]).
///
/// When the change set is the one `memo` last took a fingerprint of and no file's stat data
/// moved, that fingerprint is taken as it is, with no digest read or hashed (see
/// [`DigestMemo`]; its version names this encoding).
pub fn change_fingerprint(workdir: &Path, changes: &ChangeSet, memo: &mut DigestMemo) -> String {
    if let Some(fingerprint) = memo.unchanged_fingerprint(workdir, changes) {
        return fingerprint;
    }
    let mut fields = Fields::new("checkpoint change fingerprint v2");
    fields.add(head_field(changes));
    let remembered = each_digest(workdir, changes, memo, |change, digest| {
        fields.add(&change.path);
        fields.add(kind_name(change.kind));
        fields.add(digest);
    });
    let fingerprint = fields.finish();
    let covered = remembered == changes.changes.len();
    memo.remember_fingerprint(changes, covered, &fingerprint);
    fingerprint
}

/// What a fingerprint says of `HEAD`: its commit, or `unborn`.
fn head_field(changes: &ChangeSet) -> &str {
    changes.head.commit().unwrap_or("unborn")
}

/// What each changed path holds now under `workdir`: its kind and content, as
/// [`change_fingerprint`] hashes them, by path. Two snapshots differ at a path exactly when that
/// path's part of the fingerprint changed.
pub fn change_digests(
    workdir: &Path,
    changes: &ChangeSet,
    memo: &mut DigestMemo,
) -> BTreeMap<String, String> {
    let mut digests = BTreeMap::new();
    each_digest(workdir, changes, memo, |change, digest| {
        let described = format!("{} {digest}", kind_name(change.kind));
        digests.insert(change.path.clone(), described);
    });
    digests
}

/// The fingerprint of running `command` with `timeout` on the change set with
/// `change_fingerprint`. The timeout is part of it so that raising it re-runs a timed-out suite.
pub fn test_fingerprint(change_fingerprint: &str, command: &str, timeout: Duration) -> String {
    let mut fields = Fields::new("checkpoint test fingerprint v3");
    fields.add(change_fingerprint);
    fields.add(command);
    fields.add(timeout.as_millis().to_string());
    fields.finish()
}

/// The last outcome of each test command, with the fingerprint it ran on.
#[derive(Debug, Clone)]
pub struct TestCache {
    dir: PathBuf,
}

/// One cache file.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The full command, to tell file-name collisions apart.
    command: String,
    fingerprint: String,
    outcome: TestOutcome,
}

impl TestCache {
    /// A cache stored under `<state_dir>/cache/` (created on the first record).
    pub fn new(state_dir: &Path) -> TestCache {
        TestCache {
            dir: state_dir.join("cache"),
        }
    }

    /// The outcome of `command`'s last recorded run, marked `cached`, if that run had
    /// `fingerprint`. A missing, unreadable or corrupt cache file is a miss.
    pub fn lookup(&self, command: &str, fingerprint: &str) -> Option<TestOutcome> {
        let entry: Entry = store::read_json(&self.path(command)).ok()??;
        (entry.command == command && entry.fingerprint == fingerprint).then_some(TestOutcome {
            cached: true,
            ..entry.outcome
        })
    }

    /// Makes `outcome` the last run of `command`, on `fingerprint`. [`TestStatus::Internal`] and
    /// [`TestStatus::NotRun`] say nothing about the code or the command and are not recorded (the
    /// previous entry stays). A [`TestStatus::Error`] is recorded for a stop past the block cap
    /// to report; a stop that may still run the tests runs them again (the missing program may
    /// be installed since, which the fingerprint does not see).
    pub fn record(
        &self,
        command: &str,
        fingerprint: &str,
        outcome: &TestOutcome,
    ) -> Result<(), StoreError> {
        if matches!(outcome.status, TestStatus::Internal | TestStatus::NotRun) {
            return Ok(());
        }
        let entry = Entry {
            command: command.to_owned(),
            fingerprint: fingerprint.to_owned(),
            outcome: outcome.clone(),
        };
        store::write_json(&self.path(command), &entry)
    }

    /// Waits, at most `wait`, until no other process runs a test with `fingerprint`, and holds
    /// the others off until the returned lock is dropped; the holder asks [`lookup`] again
    /// before running, since the run it waited for is now recorded. `None` when the wait ran
    /// out or the lock cannot be taken: the caller runs the test without it.
    ///
    /// The lock is a sidecar lock file (`cache/run-<2 hex>.lock`) chosen by the fingerprint's
    /// first byte: a fixed set of 256 files that nothing has to clean up; two change sets that
    /// share one (1 in 256) only wait for each other.
    ///
    /// [`lookup`]: TestCache::lookup
    pub fn run_lock(&self, fingerprint: &str, wait: Duration) -> Option<Lock> {
        let slot = fingerprint.get(..2).unwrap_or("00");
        Lock::acquire_within(&self.dir.join(format!("run-{slot}")), wait).ok()
    }

    fn path(&self, command: &str) -> PathBuf {
        let mut fields = Fields::new("checkpoint cache file v2");
        fields.add(command);
        let hash = fields.finish();
        self.dir.join(format!("{}.json", &hash[..16]))
    }
}

/// A BLAKE3 hash over length-prefixed fields, so that no two different field lists hash alike.
/// The fields are gathered in a buffer handed to the hasher [`Fields::FLUSH`] bytes at a time: a
/// change fingerprint adds three short fields per changed file, and BLAKE3 is fast on long
/// input (several chunks hashed at once), slow on many short ones.
struct Fields {
    hasher: blake3::Hasher,
    buffer: Vec<u8>,
}

impl Fields {
    /// How many bytes are gathered before they are hashed.
    const FLUSH: usize = 64 * 1024;

    /// Starts with a domain tag, so hashes made for different purposes never coincide.
    fn new(domain: &str) -> Fields {
        let mut fields = Fields {
            hasher: blake3::Hasher::new(),
            buffer: Vec::new(),
        };
        fields.add(domain);
        fields
    }

    fn add(&mut self, field: impl AsRef<[u8]>) {
        let field = field.as_ref();
        self.buffer
            .extend_from_slice(&(field.len() as u64).to_le_bytes());
        self.buffer.extend_from_slice(field);
        if self.buffer.len() >= Self::FLUSH {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }

    fn finish(mut self) -> String {
        self.hasher.update(&self.buffer);
        hex(self.hasher.finalize().as_bytes())
    }
}

/// Stable names: the fingerprint must not depend on `Debug` or serde output.
fn kind_name(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "deleted",
        ChangeKind::Untracked => "untracked",
    }
}

/// Calls `each` with each change of `changes` and the digest of what its path holds under
/// `workdir`, in order: a regular file's is remembered in `memo` while its stat data stays what
/// it was, else read (and remembered once the file has settled). Returns how many of the
/// digests `memo` now remembers (found there, or remembered anew).
fn each_digest(
    workdir: &Path,
    changes: &ChangeSet,
    memo: &mut DigestMemo,
    mut each: impl FnMut(&Change, &str),
) -> usize {
    memo.prestat_rest(workdir);
    let mut files = DirStat::new(workdir);
    let mut remembered = 0;
    for change in &changes.changes {
        let stat = match memo.lookup(&mut files, &change.path) {
            Ok(digest) => {
                each(change, digest);
                remembered += 1;
                continue;
            }
            Err(stat) => stat,
        };
        let full = workdir.join(&change.path);
        let content = FileContent::read(&full, 0);
        let rememberable = matches!(content, FileContent::File { .. });
        let digest = describe(&full, content);
        if let Some(stat) = stat.filter(|_| rememberable) {
            remembered += usize::from(memo.remember(&change.path, stat, &digest));
        }
        each(change, &digest);
    }
    remembered
}

/// `content`, found at `path`, as one short string.
fn describe(path: &Path, content: FileContent) -> String {
    match content {
        FileContent::Missing => "missing".to_owned(),
        FileContent::Link(target) => format!("symlink {}", sha256_hex(&target)),
        FileContent::File { executable, id, .. } => {
            let mode = if executable { "executable" } else { "file" };
            format!("{mode} {id}")
        }
        FileContent::Other => match submodule_fingerprint(path) {
            Some(fingerprint) => format!("submodule {fingerprint}"),
            None => "not a file".to_owned(),
        },
    }
}

/// The [`change_fingerprint`] of the submodule checked out at `path`; `None` for anything else,
/// or when its changes cannot be read.
fn submodule_fingerprint(path: &Path) -> Option<String> {
    if !path.join(".git").exists() {
        return None;
    }
    let repo = git::discover(path).ok()??;
    let changes = git::changes(&repo, GitBackend::Auto).ok()?;
    Some(change_fingerprint(
        &repo.workdir,
        &changes,
        &mut DigestMemo::forgetting(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::hash_reader;
    use checkpoint_core::changes::{Change, Head};
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn change(path: &str, kind: ChangeKind) -> Change {
        Change {
            path: path.to_owned(),
            kind,
            staged: false,
            committed: false,
        }
    }

    fn changes(head: Head, list: Vec<Change>) -> ChangeSet {
        ChangeSet {
            head,
            changes: list,
            non_utf8_paths: 0,
        }
    }

    fn branch(commit: &str) -> Head {
        Head::Branch {
            name: "main".to_owned(),
            commit: commit.to_owned(),
        }
    }

    /// The fingerprint read with a memo that remembers nothing.
    fn fingerprint(workdir: &Path, changes: &ChangeSet) -> String {
        change_fingerprint(workdir, changes, &mut DigestMemo::forgetting())
    }

    fn outcome(status: TestStatus) -> TestOutcome {
        TestOutcome {
            status,
            exit_code: Some(1),
            passed: Some(3),
            failed: Some(1),
            duration_ms: 42,
            failing: vec!["tests::bad".to_owned()],
            tail: "test result: FAILED".to_owned(),
            ..TestOutcome::not_run()
        }
    }

    #[test]
    fn a_submodule_counts_with_its_own_content() {
        let dir = checkpoint_testkit::repo("submodule-changes");
        let repo = git::discover(dir.path()).unwrap().unwrap();
        let current = || {
            let changes = git::changes(&repo, GitBackend::Auto).unwrap();
            fingerprint(&repo.workdir, &changes)
        };
        let base = current();
        assert_eq!(current(), base);
        // The same file edited again: the status reads as before, the content does not.
        fs::write(dir.path().join("dirty/lib.txt"), "dirty\nedited again\n").unwrap();
        let edited = current();
        assert_ne!(edited, base);
        fs::write(dir.path().join("moved/new.txt"), "new\n").unwrap();
        assert_ne!(current(), edited);
    }

    #[test]
    fn fingerprint_is_stable_and_follows_content_path_kind_and_head() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.rs"), "fn a() {}").unwrap();
        fs::write(dir.path().join("b.rs"), "fn a() {}").unwrap();
        let set = changes(branch("aaaa"), vec![change("a.rs", ChangeKind::Modified)]);
        let base = fingerprint(dir.path(), &set);
        assert_eq!(base.len(), 64);
        assert_eq!(fingerprint(dir.path(), &set), base);

        let other_path = changes(branch("aaaa"), vec![change("b.rs", ChangeKind::Modified)]);
        assert_ne!(fingerprint(dir.path(), &other_path), base);
        let other_kind = changes(branch("aaaa"), vec![change("a.rs", ChangeKind::Untracked)]);
        assert_ne!(fingerprint(dir.path(), &other_kind), base);
        let other_head = changes(branch("bbbb"), vec![change("a.rs", ChangeKind::Modified)]);
        assert_ne!(fingerprint(dir.path(), &other_head), base);
        let unborn = changes(
            Head::Unborn {
                name: "main".to_owned(),
            },
            vec![change("a.rs", ChangeKind::Modified)],
        );
        assert_ne!(fingerprint(dir.path(), &unborn), base);

        // A same-size edit.
        fs::write(dir.path().join("a.rs"), "fn b() {}").unwrap();
        assert_ne!(fingerprint(dir.path(), &set), base);
    }

    #[test]
    fn missing_empty_executable_and_symlinked_files_differ() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let set = changes(branch("aaaa"), vec![change("f", ChangeKind::Deleted)]);
        let missing = fingerprint(dir.path(), &set);
        fs::write(&path, "").unwrap();
        let empty = fingerprint(dir.path(), &set);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        let executable = fingerprint(dir.path(), &set);
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("target", &path).unwrap();
        let symlink = fingerprint(dir.path(), &set);
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        let directory = fingerprint(dir.path(), &set);
        let all = [missing, empty, executable, symlink, directory];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn large_files_are_hashed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut content = vec![b'x'; 1024 * 1024];
        fs::write(dir.path().join("big"), &content).unwrap();
        let set = changes(branch("aaaa"), vec![change("big", ChangeKind::Added)]);
        let before = fingerprint(dir.path(), &set);
        // A change past the first read chunk.
        *content.last_mut().unwrap() = b'y';
        fs::write(dir.path().join("big"), &content).unwrap();
        assert_ne!(fingerprint(dir.path(), &set), before);
        assert_eq!(
            hash_reader(fs::File::open(dir.path().join("big")).unwrap()).unwrap(),
            sha256_hex(&content)
        );
    }

    #[test]
    fn test_fingerprint_follows_the_command_and_fields_do_not_run_together() {
        let t = Duration::from_secs(120);
        let base = test_fingerprint("abc", "cargo test", t);
        assert_eq!(test_fingerprint("abc", "cargo test", t), base);
        assert_ne!(test_fingerprint("abc", "cargo nextest run", t), base);
        assert_ne!(test_fingerprint("abd", "cargo test", t), base);
        assert_ne!(test_fingerprint("ab", "ccargo test", t), base);
        assert_ne!(test_fingerprint("abc", "cargo test", t * 2), base);
    }

    #[test]
    fn hit_after_record_is_marked_cached() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(dir.path());
        let ran = outcome(TestStatus::Failed);
        cache.record("cargo test", "fp1", &ran).unwrap();
        let hit = cache.lookup("cargo test", "fp1").unwrap();
        assert!(hit.cached);
        assert_eq!(
            TestOutcome {
                cached: false,
                ..hit
            },
            ran
        );
        assert!(dir.path().join("cache").is_dir());
    }

    #[test]
    fn other_fingerprint_or_command_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(dir.path());
        cache
            .record("cargo test", "fp1", &outcome(TestStatus::Passed))
            .unwrap();
        assert_eq!(cache.lookup("cargo test", "fp2"), None);
        assert_eq!(cache.lookup("pytest", "fp1"), None);
    }

    #[test]
    fn only_the_last_run_counts() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(dir.path());
        cache
            .record("cargo test", "fp1", &outcome(TestStatus::Failed))
            .unwrap();
        cache
            .record("cargo test", "fp2", &outcome(TestStatus::Passed))
            .unwrap();
        assert_eq!(cache.lookup("cargo test", "fp1"), None);
        let hit = cache.lookup("cargo test", "fp2").unwrap();
        assert_eq!(hit.status, TestStatus::Passed);
    }

    #[test]
    fn errors_and_skips_are_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(dir.path());
        cache
            .record("cargo test", "fp1", &outcome(TestStatus::TimedOut))
            .unwrap();
        for status in [TestStatus::Internal, TestStatus::NotRun] {
            cache.record("cargo test", "fp2", &outcome(status)).unwrap();
            assert_eq!(cache.lookup("cargo test", "fp2"), None);
        }
        assert_eq!(
            cache.lookup("cargo test", "fp1").unwrap().status,
            TestStatus::TimedOut
        );
    }

    #[test]
    fn corrupt_cache_file_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(dir.path());
        cache
            .record("cargo test", "fp1", &outcome(TestStatus::Passed))
            .unwrap();
        let files: Vec<PathBuf> = fs::read_dir(dir.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1);
        fs::write(&files[0], "{\"command\": \"cargo test\", \"fingerpr").unwrap();
        assert_eq!(cache.lookup("cargo test", "fp1"), None);
        // Recording again repairs it.
        cache
            .record("cargo test", "fp1", &outcome(TestStatus::Passed))
            .unwrap();
        assert!(cache.lookup("cargo test", "fp1").is_some());
    }

    #[test]
    fn missing_cache_dir_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TestCache::new(&dir.path().join("never-created"));
        assert_eq!(cache.lookup("cargo test", "fp1"), None);
    }
}
