/// `checkpoint diff`: the text it prints and the comparison on real repositories.
mod diff_tests {
    use std::fs;
    use std::path::Path;
    use std::process::Command;

    use jiff::Timestamp;

    use crate::continuity::diff::{FileDelta, WorkDiff, diff};
    use crate::continuity::text::{diff_line, file_delta_line};
    use crate::continuity::{Continuity, MAX_BLOB_BYTES, SessionCheckpoint, SessionRef};
    use crate::git::{self, Repo};
    use checkpoint_core::event::Agent;
    use checkpoint_core::journal::Trigger;
    use checkpoint_core::policy::GitBackend;

    const NOW: i64 = 1_800_000_000;

    fn delta(path: &str, added: u64, removed: u64, binary: bool) -> FileDelta {
        FileDelta {
            path: path.to_owned(),
            added,
            removed,
            binary,
        }
    }

    fn work(minutes_ago: i64, files: Vec<FileDelta>) -> WorkDiff {
        WorkDiff {
            checkpoint: 7,
            at: Timestamp::from_second(NOW - minutes_ago * 60).unwrap(),
            files,
        }
    }

    fn now() -> Timestamp {
        Timestamp::from_second(NOW).unwrap()
    }

    #[test]
    fn a_restore_patch_is_unified_bounded_and_never_of_binary_content() {
        use crate::continuity::diff::{PATCH_LINES, Side, patch};
        let now = Side::Content(b"one\ntwo\n".to_vec());
        let then = Side::Content(b"one\nTWO\n".to_vec());
        insta::assert_snapshot!(patch(&now, &then, "a.txt").unwrap(), @r"
        --- a/a.txt
        +++ b/a.txt
        @@ -1,2 +1,2 @@
         one
        -two
        +TWO
        ");
        assert_eq!(patch(&now, &now.clone(), "a.txt"), None);
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let cut = patch(&Side::Absent, &Side::Content(long.into_bytes()), "long.txt").unwrap();
        assert_eq!(cut.lines().count(), PATCH_LINES + 1);
        assert!(
            cut.ends_with(
                "… 43 more lines (`checkpoint restore --files long.txt` restores this file alone)"
            ),
            "{cut}"
        );
        let binary = Side::Content(b"\0\x01".to_vec());
        assert_eq!(patch(&now, &binary, "b.bin"), None);
        assert_eq!(patch(&now, &Side::Hashed("ab".repeat(32)), "big"), None);
    }

    #[test]
    fn the_summary_line_counts_files_and_lines() {
        let three = work(
            45,
            vec![
                delta("src/db.rs", 120, 3, false),
                delta("src/lib.rs", 7, 1, false),
                delta("logo.png", 0, 0, true),
            ],
        );
        insta::assert_snapshot!(diff_line(&three, now()), @"Work changed since last checkpoint: 3 files, +127 −4 lines, last checkpoint 45 min ago");
        let one = work(2, vec![delta("a.txt", 1, 0, false)]);
        insta::assert_snapshot!(diff_line(&one, now()), @"Work changed since last checkpoint: 1 file, +1 −0 line, last checkpoint 2 min ago");
        let removed_one = work(0, vec![delta("a.txt", 0, 1, false)]);
        insta::assert_snapshot!(diff_line(&removed_one, now()), @"Work changed since last checkpoint: 1 file, +0 −1 line, last checkpoint just now");
        let replaced = work(180, vec![delta("a.txt", 1, 1, false)]);
        insta::assert_snapshot!(diff_line(&replaced, now()), @"Work changed since last checkpoint: 1 file, +1 −1 lines, last checkpoint 3 h ago");
        insta::assert_snapshot!(diff_line(&work(45, Vec::new()), now()), @"No work changed since the last checkpoint (45 min ago).");
    }

    #[test]
    fn file_lines_show_counts_binary_and_uncounted_changes() {
        insta::assert_snapshot!(file_delta_line(&delta("src/db.rs", 120, 3, false)), @"  src/db.rs  +120 −3");
        insta::assert_snapshot!(file_delta_line(&delta("logo.png", 0, 0, true)), @"  logo.png  binary");
        insta::assert_snapshot!(file_delta_line(&delta("big.log", 0, 0, false)), @"  big.log  changed, no lines counted");
    }

    #[test]
    fn totals_add_up() {
        let w = work(1, vec![delta("a", 2, 1, false), delta("b", 3, 4, false)]);
        assert!(w.changed());
        assert_eq!((w.added(), w.removed()), (5, 5));
        assert!(!work(1, Vec::new()).changed());
    }

    /// A fixture repository with its continuity log in a separate state directory.
    struct Fixture {
        dir: tempfile::TempDir,
        state: tempfile::TempDir,
        repo: Repo,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = checkpoint_testkit::repo("python-passing");
            let repo = git::discover(dir.path()).unwrap().unwrap();
            Fixture {
                dir,
                state: tempfile::tempdir().unwrap(),
                repo,
            }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        fn continuity(&self) -> Continuity {
            Continuity::new(self.state.path())
        }

        fn write(&self, path: &str, content: impl AsRef<[u8]>) {
            fs::write(self.path().join(path), content).unwrap();
        }

        fn git(&self, args: &[&str]) {
            let status = Command::new("git")
                .args(args)
                .current_dir(self.path())
                .envs(checkpoint_testkit::git_env())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        }

        /// Saves a checkpoint of the worktree as it is now.
        fn checkpoint(&self) -> SessionCheckpoint {
            let continuity = self.continuity();
            let changes = git::changes(&self.repo, GitBackend::Auto).unwrap();
            let (files, more_files) = continuity.capture(self.path(), &changes).unwrap();
            let draft = SessionCheckpoint {
                id: 0,
                trigger: Trigger::Manual,
                at: Timestamp::from_second(NOW).unwrap(),
                session: SessionRef {
                    agent: Agent::Claude,
                    id: "s1".to_owned(),
                },
                detail: None,
                context: None,
                summary: None,
                head: changes.head.commit().map(str::to_owned),
                files,
                more_files,
                task: None,
                progress: Vec::new(),
                unresolved: None,
                signature: None,
            };
            continuity.save(draft).unwrap()
        }

        fn diff(&self, from: &SessionCheckpoint) -> WorkDiff {
            diff(&self.continuity(), &self.repo, GitBackend::Auto, from).unwrap()
        }
    }

    #[test]
    fn nothing_changed_since_the_checkpoint() {
        let f = Fixture::new();
        f.write("calc.py", "changed before the checkpoint\n");
        let from = f.checkpoint();
        let d = f.diff(&from);
        assert_eq!(d.checkpoint, from.id);
        assert_eq!(d.at, from.at);
        assert!(!d.changed(), "{d:?}");
        // The same with gitoxide reading the change set.
        let gix = diff(&f.continuity(), &f.repo, GitBackend::Gix, &from).unwrap();
        assert!(!gix.changed(), "{gix:?}");
    }

    #[test]
    fn edits_additions_and_deletions_are_counted_exactly() {
        let f = Fixture::new();
        // Recorded by the checkpoint: an edited file and a new one.
        f.write("calc.py", "a\nb\nc\n");
        f.write("notes.txt", "one\n");
        let from = f.checkpoint();
        f.write("calc.py", "a\nB\nc\nd\ne\n");
        f.write("notes.txt", "one\ntwo\n");
        // Not recorded: changed only after the checkpoint, compared with its HEAD.
        let readme = fs::read_to_string(f.path().join("README.md")).unwrap();
        f.write("README.md", format!("{readme}More.\n"));
        f.write("new.txt", "x\ny\nz\n");
        fs::remove_file(f.path().join("test_calc.py")).unwrap();
        let d = f.diff(&from);
        assert_eq!(
            d.files,
            [
                delta("README.md", 1, 0, false),
                delta("calc.py", 3, 1, false),
                delta("new.txt", 3, 0, false),
                delta("notes.txt", 1, 0, false),
                delta("test_calc.py", 0, 15, false),
            ]
        );
        assert_eq!((d.added(), d.removed()), (8, 16));
    }

    #[test]
    fn reverting_a_recorded_change_and_deleting_recorded_files_count() {
        let f = Fixture::new();
        f.write("calc.py", "x = 1\n");
        f.write("scratch.txt", "a\nb\n");
        fs::remove_file(f.path().join("README.md")).unwrap();
        let from = f.checkpoint();
        // Back to HEAD's version: a change since the checkpoint although git shows none.
        f.git(&["checkout", "--", "calc.py"]);
        fs::remove_file(f.path().join("scratch.txt")).unwrap();
        // Still deleted, as recorded: no change.
        let d = f.diff(&from);
        assert_eq!(
            d.files,
            [
                delta("calc.py", 9, 1, false),
                delta("scratch.txt", 0, 2, false)
            ]
        );
    }

    #[test]
    fn work_committed_after_the_checkpoint_still_counts() {
        let f = Fixture::new();
        f.write("calc.py", "one\n");
        let from = f.checkpoint();
        f.write("calc.py", "one\ntwo\n");
        f.write("extra.py", "e = 1\n");
        f.git(&["add", "-A"]);
        f.git(&["commit", "-q", "-m", "more"]);
        let d = f.diff(&from);
        assert_eq!(
            d.files,
            [
                delta("calc.py", 1, 0, false),
                delta("extra.py", 1, 0, false)
            ]
        );
        // A second commit touching a file the checkpoint did not record.
        f.write("README.md", "# new readme\n");
        f.git(&["commit", "-q", "-am", "readme"]);
        let d = f.diff(&from);
        assert_eq!(
            d.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["README.md", "calc.py", "extra.py"]
        );
        assert_eq!(d.files[0], delta("README.md", 1, 3, false));
    }

    #[test]
    fn a_checkpoint_before_the_first_commit_compares_with_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .envs(checkpoint_testkit::git_env())
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        run(&["init", "-q", "-b", "main"]);
        let f = Fixture {
            repo: git::discover(dir.path()).unwrap().unwrap(),
            dir,
            state: tempfile::tempdir().unwrap(),
        };
        f.write("a.txt", "1\n");
        let from = f.checkpoint();
        assert_eq!(from.head, None);
        f.write("a.txt", "1\n2\n");
        f.write("b.txt", "b\n");
        f.git(&["add", "-A"]);
        f.git(&["commit", "-q", "-m", "first"]);
        let d = f.diff(&from);
        assert_eq!(
            d.files,
            [delta("a.txt", 1, 0, false), delta("b.txt", 1, 0, false)]
        );
    }

    #[test]
    fn big_files_are_compared_by_hash() {
        let f = Fixture::new();
        let big = "line of a big log file\n".repeat((MAX_BLOB_BYTES / 20) as usize);
        assert!(big.len() as u64 > MAX_BLOB_BYTES);
        f.write("big.log", &big);
        f.write("same.log", &big);
        let from = f.checkpoint();
        assert!(from.files.iter().all(|file| file.sha256.is_some()));
        f.write("big.log", format!("{big}one more\n"));
        let d = f.diff(&from);
        assert_eq!(d.files, [delta("big.log", 0, 0, false)]);
        fs::remove_file(f.path().join("big.log")).unwrap();
        assert_eq!(f.diff(&from).files, [delta("big.log", 0, 0, false)]);
    }

    #[test]
    fn binary_files_count_without_lines() {
        let f = Fixture::new();
        f.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        let from = f.checkpoint();
        f.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01");
        f.write("latin1.txt", b"caf\xe9\n");
        let d = f.diff(&from);
        assert_eq!(
            d.files,
            [
                delta("latin1.txt", 0, 0, true),
                delta("logo.png", 0, 0, true)
            ]
        );
        assert_eq!((d.added(), d.removed()), (0, 0));
    }

    #[test]
    fn a_vanished_head_commit_is_an_error_not_a_panic() {
        let f = Fixture::new();
        let mut from = f.checkpoint();
        from.head = Some("0123456789012345678901234567890123456789".to_owned());
        let err = diff(&f.continuity(), &f.repo, GitBackend::Auto, &from).unwrap_err();
        assert!(err.to_string().starts_with("git diff-tree failed"), "{err}");
    }
}
