//! The walk and the bounded reader against hostile files, with a line format of the tests' own
//! (the agents' formats are tested in their adapters, on their real shapes).

use std::io::Write;
use std::os::unix::fs::symlink;

use checkpoint_core::agent::LineUsage;
use checkpoint_core::claim_history::Step;
use checkpoint_core::turn_event::TurnEvent;

use super::*;

/// `prompt`, `edit`, `test ok` / `test fail`, or a reply.
struct Lines;

impl TranscriptFormat for Lines {
    fn line_usage(&self, _line: &str) -> Option<LineUsage> {
        None
    }
    fn reply_text(&self, _line: &str) -> Option<String> {
        None
    }
    fn default_window(&self, _model: Option<&str>) -> u64 {
        0
    }
    fn turn_events(&self, line: &str, out: &mut Vec<TurnEvent>) {
        let id = out.len().to_string() + line;
        match line {
            "prompt" => out.push(TurnEvent::Prompt("go".into())),
            "edit" => out.push(TurnEvent::Edit),
            "test ok" | "test fail" => out.extend([
                TurnEvent::Shell {
                    id: id.clone(),
                    command: "cargo test".into(),
                },
                TurnEvent::Result {
                    id,
                    ok: Some(line == "test ok"),
                },
            ]),
            "" => {}
            reply => out.push(TurnEvent::Reply(reply.into())),
        }
    }
}

fn files() -> TranscriptFiles {
    TranscriptFiles {
        dir: "projects",
        depth: 2,
        is_transcript: |p| p.extension().is_some_and(|e| e == "jsonl" || e == "zst"),
    }
}

#[test]
fn a_transcript_reads_into_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    fs::write(
        &path,
        "prompt\nedit\ntest fail\nedit\ntest ok\nDone.\nprompt\nedit\nDone.",
    )
    .unwrap();
    let turns = read_turns(&Lines, &path).unwrap().turns;
    assert_eq!(turns.len(), 2);
    assert_eq!(
        turns[0].steps,
        [
            Step::Edit,
            Step::Test(Some(false)),
            Step::Edit,
            Step::Test(Some(true))
        ]
    );
    assert_eq!(turns[1].reply.as_deref(), Some("Done."));
}

#[test]
fn hostile_lines_are_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut file = File::create(&path).unwrap();
    file.write_all(b"prompt\nedit\n").unwrap();
    // A line longer than the cap, one that is not UTF-8, then the rest.
    file.write_all(&vec![b'x'; MAX_LINE_BYTES + 10]).unwrap();
    file.write_all(b"\n\xff\xfe\ntest ok\nDone.\n").unwrap();
    drop(file);
    let turns = read_turns(&Lines, &path).unwrap().turns;
    assert_eq!(turns[0].steps, [Step::Edit, Step::Test(Some(true))]);
    assert_eq!(turns[0].reply.as_deref(), Some("Done."));
}

#[test]
fn compressed_rollouts_of_several_frames_are_read_and_a_cut_one_keeps_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    let frame = |text: &str| {
        ruzstd::encoding::compress_to_vec(
            text.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        )
    };
    let mut bytes = frame("prompt\nedit\n");
    bytes.extend(frame("test ok\nDone.\n"));
    fs::write(&path, &bytes).unwrap();
    let turns = read_turns(&Lines, &path).unwrap().turns;
    assert_eq!(turns[0].steps, [Step::Edit, Step::Test(Some(true))]);

    let first = frame("prompt\nedit\n").len();
    fs::write(&path, &bytes[..first + 5]).unwrap();
    let turns = read_turns(&Lines, &path).unwrap().turns;
    assert_eq!(turns[0].steps, [Step::Edit]);

    fs::write(&path, b"not zstd at all").unwrap();
    assert!(read_turns(&Lines, &path).is_err());
}

#[test]
fn the_walk_follows_no_link_and_opens_no_fifo() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.jsonl"), "prompt\nedit\nDone.\n").unwrap();
    let dir = home.path().join("projects");
    fs::create_dir_all(dir.join("p/deeper/too-deep")).unwrap();
    fs::write(dir.join("p/a.jsonl"), "prompt\nedit\nDone.\n").unwrap();
    fs::write(dir.join("p/notes.txt"), "prompt\n").unwrap();
    fs::write(dir.join("p/deeper/too-deep/b.jsonl"), "").unwrap();
    symlink(outside.path(), dir.join("linked-dir")).unwrap();
    symlink(
        outside.path().join("secret.jsonl"),
        dir.join("p/linked.jsonl"),
    )
    .unwrap();
    let fifo = dir.join("p/fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());

    let found = transcripts(&dir, &files(), None);
    assert_eq!(found, [dir.join("p/a.jsonl")]);
    // Named directly, a FIFO is refused at once rather than waited on.
    assert_eq!(
        read_turns(&Lines, &fifo).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    // Nothing modified since a moment ahead.
    let later = Timestamp::now() + jiff::SignedDuration::from_secs(3600);
    assert!(transcripts(&dir, &files(), Some(later)).is_empty());
    assert!(transcripts(&home.path().join("none"), &files(), None).is_empty());
}

#[test]
fn history_counts_each_file_and_the_unreadable_ones() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("projects");
    fs::create_dir_all(dir.join("p")).unwrap();
    fs::write(dir.join("p/a.jsonl"), "prompt\nedit\nDone.\n").unwrap();
    fs::write(dir.join("p/b.jsonl"), "prompt\nedit\ntest ok\nDone.\n").unwrap();
    fs::write(dir.join("p/c.jsonl.zst"), "not zstd").unwrap();
    let source = Source {
        agent: Agent::Claude,
        format: &Lines,
        files: files(),
        dir,
    };
    let phrases = checkpoint_core::claims::default_claims();
    let all = history(
        std::slice::from_ref(&source),
        &Stops::new(),
        &phrases,
        None,
        None,
    );
    let claude = &all.agents[0];
    assert_eq!((claude.transcripts, claude.unreadable), (2, 1));
    assert_eq!(claude.tally.verification.never_ran, 1);
    assert_eq!(claude.tally.verification.verified, 1);
    // Only named sessions: these transcripts name none.
    let only = HashSet::from([(Agent::Claude, "s".to_owned())]);
    let none = history(&[source], &Stops::new(), &phrases, None, Some(&only));
    assert_eq!(none.agents[0].transcripts + none.agents[0].unreadable, 0);
    assert_eq!(none.total.claims, 0);
}
