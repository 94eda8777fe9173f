use std::cell::Cell;
use std::fs;

use proptest::prelude::*;

use super::*;
use crate::cache::change_fingerprint;
use checkpoint_core::changes::{Change, ChangeKind, ChangeSet, Head};

/// Later than any file a test writes by more than [`SETTLED`]: every file counts as settled.
fn later() -> Timestamp {
    Timestamp::now() + Duration::from_secs(60)
}

/// The digest of `path` in `dir` through `memo`, counting the reads in `reads`.
fn digest(memo: &mut DigestMemo, dir: &Path, path: &str, reads: &Cell<u32>) -> String {
    let stat = match memo.lookup(&mut DirStat::new(dir), path) {
        Ok(digest) => return digest.to_owned(),
        Err(stat) => stat.unwrap(),
    };
    reads.set(reads.get() + 1);
    let digest = checkpoint_core::hex::sha256_hex(&fs::read(dir.join(path)).unwrap());
    memo.remember(path, stat, &digest);
    digest
}

/// A worktree holding a file named after each of `names`, its name as content, and a state
/// directory for the memo.
fn worktree(names: &[&str]) -> (tempfile::TempDir, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    for name in names {
        fs::write(work.path().join(name), name).unwrap();
    }
    (work, tempfile::tempdir().unwrap())
}

fn untracked(paths: &[&str]) -> ChangeSet {
    ChangeSet {
        head: Head::Unborn {
            name: "main".to_owned(),
        },
        changes: (paths.iter())
            .map(|path| Change {
                path: (*path).to_owned(),
                kind: ChangeKind::Untracked,
                staged: false,
                committed: false,
            })
            .collect(),
        non_utf8_paths: 0,
    }
}

/// The paths the memo kept in `state_dir` remembers, each with a usable digest.
fn remembered(state_dir: &Path) -> Vec<String> {
    let mut memo = DigestMemo::load(state_dir, later());
    memo.digests.read(memo.entries.starts.len());
    (0..memo.entries.starts.len())
        .filter(|&at| memo.digests.get(at).is_some())
        .filter_map(|at| Some(memo.entries.entry(at)?.0.to_owned()))
        .collect()
}

fn ino(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(path).unwrap().ino()
}

#[test]
fn a_settled_file_is_read_once_until_it_changes() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(work.path().join("a.py"), "x = 1\n").unwrap();
    let reads = Cell::new(0);

    let mut memo = DigestMemo::load(state.path(), later());
    let first = digest(&mut memo, work.path(), "a.py", &reads);
    memo.save().unwrap();
    let mut memo = DigestMemo::load(state.path(), later());
    assert_eq!(digest(&mut memo, work.path(), "a.py", &reads), first);
    assert_eq!(reads.get(), 1, "the second digest is the remembered one");
    memo.save().unwrap();

    fs::write(work.path().join("a.py"), "x = 22\n").unwrap();
    let mut memo = DigestMemo::load(state.path(), later());
    let edited = digest(&mut memo, work.path(), "a.py", &reads);
    assert_eq!(reads.get(), 2, "an edited file is read again");
    assert_ne!(edited, first);
}

#[test]
fn a_file_written_within_the_margin_is_not_remembered() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(work.path().join("a.py"), "x = 1\n").unwrap();
    let reads = Cell::new(0);
    for _ in 0..2 {
        let mut memo = DigestMemo::load(state.path(), Timestamp::now());
        digest(&mut memo, work.path(), "a.py", &reads);
        memo.save().unwrap();
    }
    assert_eq!(reads.get(), 2);
    assert!(!state.path().join("cache/digests.bin").exists());
}

#[test]
fn the_memo_keeps_the_last_fingerprints_files_and_is_rewritten_only_when_they_change() {
    let (work, state) = worktree(&["a", "b"]);
    let file = state.path().join("cache/digests.bin");
    let reads = Cell::new(0);
    let round = |paths: &[&str]| {
        let mut memo = DigestMemo::load(state.path(), later());
        for path in paths {
            digest(&mut memo, work.path(), path, &reads);
        }
        memo.save().unwrap();
    };
    round(&["a", "b"]);
    let written = ino(&file);
    round(&["a", "b"]);
    assert_eq!(ino(&file), written, "not rewritten");
    round(&["b"]);
    assert_eq!(remembered(state.path()), ["b"]);
    assert_eq!(reads.get(), 2);
}

#[test]
fn a_lookup_out_of_the_saved_order_still_finds_its_entry() {
    let (work, state) = worktree(&["a", "b", "c", "d"]);
    let reads = Cell::new(0);
    let round = |paths: &[&str]| {
        let mut memo = DigestMemo::load(state.path(), later());
        let digests: Vec<String> = (paths.iter())
            .map(|path| digest(&mut memo, work.path(), path, &reads))
            .collect();
        memo.save().unwrap();
        digests
    };
    let first = round(&["d", "b", "a", "c"]);
    let again = round(&["c", "a", "d", "b"]);
    assert_eq!(again, [3, 2, 0, 1].map(|i| first[i].clone()));
    assert_eq!(reads.get(), 4, "the second round read nothing");
}

#[test]
fn a_corrupt_or_foreign_memo_is_empty() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(work.path().join("a"), "a").unwrap();
    let file = state.path().join("cache/digests.bin");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let reads = Cell::new(0);
    // A memo that remembers `a`, as another version would have written it (the version is the
    // first byte).
    let mut memo = DigestMemo::load(state.path(), later());
    digest(&mut memo, work.path(), "a", &reads);
    memo.save().unwrap();
    let mut other_version = fs::read(&file).unwrap();
    assert_eq!(other_version[0], MEMO_VERSION as u8);
    other_version[0] += 1;
    for junk in [
        &b"{not postcard"[..],
        &[1, 200, 200, 200],
        b"",
        &other_version,
    ] {
        fs::write(&file, junk).unwrap();
        let mut memo = DigestMemo::load(state.path(), later());
        digest(&mut memo, work.path(), "a", &reads);
    }
    // A FIFO in its place is not opened (that would wait for a writer).
    fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    let mut memo = DigestMemo::load(state.path(), later());
    digest(&mut memo, work.path(), "a", &reads);
    assert_eq!(reads.get(), 6, "read at every round");
}

#[test]
fn a_remembered_digest_is_for_one_inode_only() {
    // Another worktree sharing the state directory, or a file replaced by a rename: same
    // path, same size and times to the tick maybe, another inode.
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(work.path().join("a"), "one").unwrap();
    let reads = Cell::new(0);
    let mut memo = DigestMemo::load(state.path(), later());
    let first = digest(&mut memo, work.path(), "a", &reads);
    memo.save().unwrap();
    fs::write(work.path().join("b"), "two").unwrap();
    fs::rename(work.path().join("b"), work.path().join("a")).unwrap();
    let mut memo = DigestMemo::load(state.path(), later());
    assert_ne!(digest(&mut memo, work.path(), "a", &reads), first);
    assert_eq!(reads.get(), 2);
}

#[test]
fn only_regular_files_have_stat_data_and_paths_are_looked_up_in_their_directory() {
    let work = tempfile::tempdir().unwrap();
    fs::create_dir_all(work.path().join("a/b")).unwrap();
    fs::write(work.path().join("a/b/f"), "f").unwrap();
    fs::write(work.path().join("top"), "t").unwrap();
    std::os::unix::fs::symlink("top", work.path().join("a/link")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(work.path().join("a/fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut files = DirStat::new(work.path());
    let size = |stat: Option<Stat>| stat.map(|stat| stat[2]);
    assert_eq!(size(files.regular("a/b/f")), Some(1));
    assert_eq!(files.regular("a/b"), None, "a directory");
    assert_eq!(files.regular("a/fifo"), None);
    assert_eq!(files.regular("a/link"), None, "a link is not followed");
    assert_eq!(files.regular("a/missing"), None);
    assert_eq!(files.regular("gone/f"), None);
    assert_eq!(size(files.regular("top")), Some(1));
    assert_eq!(
        size(files.regular("a/b/f")),
        Some(1),
        "a directory opened again"
    );
}

#[test]
fn many_files_are_stated_on_threads_and_each_checked_against_its_entry() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for i in 0..1500 {
        let dir = ["a", "b/c", "d"][i % 3];
        fs::create_dir_all(work.path().join(dir)).unwrap();
        let path = format!("{dir}/{i}");
        fs::write(work.path().join(&path), "x".repeat(i)).unwrap();
        paths.push(path);
    }
    paths.sort();
    let listed: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut memo = DigestMemo::load(state.path(), later());
    change_fingerprint(work.path(), &untracked(&listed), &mut memo);
    memo.save().unwrap();
    // Some rewritten (another size), one removed, one replaced by a directory.
    for path in &listed[..40] {
        fs::write(work.path().join(path), "y").unwrap();
    }
    fs::remove_file(work.path().join(listed[700])).unwrap();
    fs::remove_file(work.path().join(listed[900])).unwrap();
    fs::create_dir(work.path().join(listed[900])).unwrap();

    let mut memo = DigestMemo::load(state.path(), later());
    memo.prestat(work.path(), || true);
    assert_eq!(memo.stated, 0, "told to stop before the first batch");
    memo.prestat_rest(work.path());
    assert_eq!(memo.stated, listed.len());
    let unchanged: Vec<bool> = (memo.marks.iter()).map(|&mark| mark == UNCHANGED).collect();
    let expected: Vec<bool> = (0..listed.len())
        .map(|i| i >= 40 && i != 700 && i != 900)
        .collect();
    assert_eq!(unchanged, expected);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Whatever is written, in whatever quick succession (same sizes, the same clock tick), a
    /// fingerprint through the memo is the one read from the files.
    #[test]
    fn the_memo_never_changes_a_fingerprint(
        writes in prop::collection::vec((0usize..3, prop::sample::select(vec!["a", "b", "ab"])), 1..12),
    ) {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let paths = ["f0", "f1", "f2"];
        for path in paths {
            fs::write(work.path().join(path), "a").unwrap();
        }
        let changes = untracked(&paths);
        for (file, content) in writes {
            fs::write(work.path().join(paths[file]), content).unwrap();
            let mut memo = DigestMemo::load(state.path(), Timestamp::now());
            let remembered = change_fingerprint(work.path(), &changes, &mut memo);
            memo.save().unwrap();
            let read = change_fingerprint(work.path(), &changes, &mut DigestMemo::forgetting());
            prop_assert_eq!(remembered, read);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Remembered files `lstat`ed ahead of the fingerprint, all of them or the first batches
    /// only, give the fingerprint read from the files: the change set may differ from the
    /// remembered one, and files may have been rewritten (to another size) or removed since.
    #[test]
    fn a_prestat_never_changes_a_fingerprint(
        rounds in prop::collection::vec(
            (prop::collection::vec(0usize..150, 0..20), 0usize..4, 100usize..150),
            1..4,
        ),
    ) {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let paths: Vec<String> = (0..150).map(|i| format!("d{}/f{i:03}", i % 4)).collect();
        for (i, path) in paths.iter().enumerate() {
            fs::create_dir_all(work.path().join(path).parent().unwrap()).unwrap();
            fs::write(work.path().join(path), "x".repeat(i)).unwrap();
        }
        let mut size = 150;
        for (edits, batches, listed) in rounds {
            for file in edits {
                size += 1;
                let path = work.path().join(&paths[file]);
                if size % 7 == 0 {
                    let _ = fs::remove_file(path);
                } else {
                    fs::write(path, "y".repeat(size)).unwrap();
                }
            }
            let mut listed: Vec<&str> = paths[..listed].iter().map(String::as_str).collect();
            listed.sort_unstable();
            let changes = untracked(&listed);
            let mut memo = DigestMemo::load(state.path(), later());
            let asked = Cell::new(0);
            memo.prestat(work.path(), || {
                asked.set(asked.get() + 1);
                asked.get() > batches
            });
            let remembered = change_fingerprint(work.path(), &changes, &mut memo);
            memo.save().unwrap();
            let read = change_fingerprint(work.path(), &changes, &mut DigestMemo::forgetting());
            prop_assert_eq!(remembered, read);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A fingerprint taken again as it is equals the one read from the files, whatever moved
    /// since the last one, one thing at a time: `HEAD`, a change's kind, how many paths are
    /// listed, a file's content (to another size: the memo trusts a file only once it has
    /// settled), or nothing.
    #[test]
    fn a_fingerprint_taken_again_is_the_one_read_from_the_files(
        steps in prop::collection::vec((0usize..5, 0usize..6, 0usize..4), 1..12),
    ) {
        let names = ["f0", "f1", "f2", "f3", "f4", "f5"];
        let all = [
            ChangeKind::Added,
            ChangeKind::Modified,
            ChangeKind::Deleted,
            ChangeKind::Untracked,
        ];
        let (work, state) = worktree(&names);
        let (mut head, mut kinds, mut listed, mut size) = (0, [3; 6], 6, 0);
        for (what, at, value) in steps {
            match what {
                0 => head = value,
                1 => kinds[at] = value,
                2 => listed = at + 1,
                3 => {
                    size += 1;
                    fs::write(work.path().join(names[at]), "y".repeat(size)).unwrap();
                }
                _ => {}
            }
            let mut changes = untracked(&names[..listed]);
            for (change, &kind) in changes.changes.iter_mut().zip(&kinds) {
                change.kind = all[kind];
            }
            if head > 0 {
                changes.head = Head::Detached { commit: head.to_string().repeat(40) };
            }
            let mut memo = DigestMemo::load(state.path(), later());
            let remembered = change_fingerprint(work.path(), &changes, &mut memo);
            memo.save().unwrap();
            let read = change_fingerprint(work.path(), &changes, &mut DigestMemo::forgetting());
            prop_assert_eq!(remembered, read);
        }
    }
}

#[test]
fn a_prestat_stops_when_told_and_the_rest_is_stated_by_the_lookups() {
    let paths: Vec<String> = (0..200).map(|i| format!("f{i:03}")).collect();
    let listed: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (work, state) = worktree(&listed);
    let changes = untracked(&listed);
    let mut memo = DigestMemo::load(state.path(), later());
    let first = change_fingerprint(work.path(), &changes, &mut memo);
    memo.save().unwrap();

    let mut memo = DigestMemo::load(state.path(), later());
    let asked = Cell::new(0);
    memo.prestat(work.path(), || {
        asked.set(asked.get() + 1);
        asked.get() > 1
    });
    assert_eq!(memo.stated, PRESTAT_BATCH, "one batch, then told to stop");
    // Too few left for threads: the lookups stat them.
    memo.prestat_rest(work.path());
    assert_eq!(memo.stated, PRESTAT_BATCH);
    assert_eq!(change_fingerprint(work.path(), &changes, &mut memo), first);
    assert!(memo.marks.iter().all(|&mark| mark & FOUND != 0));
}

#[test]
fn a_memo_cut_short_or_padded_is_empty() {
    let names = ["a", "b"];
    let (work, state) = worktree(&names);
    let changes = untracked(&names);
    let mut memo = DigestMemo::load(state.path(), later());
    let first = change_fingerprint(work.path(), &changes, &mut memo);
    memo.save().unwrap();
    let file = state.path().join("cache").join(MEMO_FILE);
    let bytes = fs::read(&file).unwrap();
    assert_eq!(remembered(state.path()), names);
    // Cut in the entries' part (the prefix says more than there is), or in the digests'.
    let part = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let cut_entries = &bytes[..PREFIX + part - 1];
    let cut_digests = &bytes[..bytes.len() - 1];
    let padded = &[&bytes[..], b"x"].concat()[..];
    for broken in [cut_entries, cut_digests, padded] {
        fs::write(&file, broken).unwrap();
        assert!(remembered(state.path()).is_empty());
        let mut memo = DigestMemo::load(state.path(), later());
        assert_eq!(change_fingerprint(work.path(), &changes, &mut memo), first);
    }
}

#[test]
fn an_entry_whose_text_is_not_utf8_is_not_used() {
    let names = ["aaaa", "bbbb", "cccc"];
    let (work, state) = worktree(&names);
    let changes = untracked(&names);
    let mut memo = DigestMemo::load(state.path(), later());
    let first = change_fingerprint(work.path(), &changes, &mut memo);
    memo.save().unwrap();
    let file = state.path().join("cache").join(MEMO_FILE);
    let mut bytes = fs::read(&file).unwrap();
    // A byte of one path and one of another's digest (the second in the digests' part) that no
    // UTF-8 text holds.
    let at = |bytes: &[u8], needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle);
    let path = at(&bytes, b"aaaa").unwrap();
    bytes[path] = 0xff;
    let first_digest = at(&bytes, b"file ").unwrap() + 1;
    let digest = first_digest + at(&bytes[first_digest..], b"file ").unwrap() + 7;
    bytes[digest] = 0xff;
    fs::write(&file, &bytes).unwrap();

    let mut memo = DigestMemo::load(state.path(), later());
    assert_eq!(memo.entries.starts.len(), 3, "the entries are still found");
    assert_eq!(remembered(state.path()), ["cccc"]);
    assert_eq!(change_fingerprint(work.path(), &changes, &mut memo), first);
    memo.save().unwrap();
    // Those two files were read again, and are remembered as they are.
    assert_eq!(remembered(state.path()), names);
}

#[test]
fn an_unchanged_change_set_takes_its_last_fingerprint_as_it_is() {
    let names: Vec<String> = (0..1200).map(|i| format!("d{}/f{i:04}", i % 3)).collect();
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    names.sort_unstable();
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    for name in &names {
        fs::create_dir_all(work.path().join(name).parent().unwrap()).unwrap();
        fs::write(work.path().join(name), name).unwrap();
    }
    let changes = untracked(&names);
    let file = state.path().join("cache").join(MEMO_FILE);
    let mut memo = DigestMemo::load(state.path(), later());
    let first = change_fingerprint(work.path(), &changes, &mut memo);
    memo.save().unwrap();
    let written = ino(&file);

    for stated in [true, false] {
        let mut memo = DigestMemo::load(state.path(), later());
        if stated {
            memo.prestat(work.path(), || false);
        }
        assert_eq!(change_fingerprint(work.path(), &changes, &mut memo), first);
        assert!(
            matches!(memo.digests, Digests::Unread(_)),
            "no digest was read"
        );
        assert!(memo.marks.iter().all(|&mark| mark & FOUND != 0));
        memo.save().unwrap();
        assert_eq!(ino(&file), written, "not rewritten");
    }
    // One file edited: its digest read again, the fingerprint taken anew and kept.
    fs::write(work.path().join(names[7]), "edited").unwrap();
    let mut memo = DigestMemo::load(state.path(), later());
    let edited = change_fingerprint(work.path(), &changes, &mut memo);
    assert_ne!(edited, first);
    memo.save().unwrap();
    let mut memo = DigestMemo::load(state.path(), later());
    assert_eq!(change_fingerprint(work.path(), &changes, &mut memo), edited);
    assert!(matches!(memo.digests, Digests::Unread(_)));
}

#[test]
fn only_a_memo_of_many_files_is_large() {
    let names: Vec<String> = (0..2000).map(|i| format!("f{i:05}.py")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for (count, large) in [(0, false), (20, false), (2000, true)] {
        let (work, state) = worktree(&names[..count]);
        let mut memo = DigestMemo::load(state.path(), later());
        change_fingerprint(work.path(), &untracked(&names[..count]), &mut memo);
        memo.save().unwrap();
        assert_eq!(DigestMemo::is_large(state.path()), large, "{count} files");
    }
}
