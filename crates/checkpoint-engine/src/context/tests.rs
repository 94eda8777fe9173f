//! The tail reader with a made-up format; each agent's own format is tested in its adapter crate.

use std::io::Write;

use serde_json::Value;

use super::*;
use checkpoint_testkit::written;

/// Lines `{"used": N, "window": W?}` are usage, `{"compacted": N}` a boundary, `{"reply": T}` a
/// reply.
struct Plain {
    carry: bool,
}

impl TranscriptFormat for Plain {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        let v: Value = serde_json::from_str(line).ok()?;
        if let Some(post) = v.get("compacted") {
            return Some(LineUsage::Compacted(post.as_u64()));
        }
        Some(LineUsage::Usage {
            used: v["used"].as_u64()?,
            window: v["window"].as_u64(),
            model: None,
        })
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        let v: Value = serde_json::from_str(line).ok()?;
        v["reply"].as_str().map(str::to_owned)
    }

    fn default_window(&self, model: Option<&str>) -> u64 {
        if model == Some("big") { 1_000 } else { 100 }
    }

    fn window_from_earlier_record(&self) -> bool {
        self.carry
    }
}

const PLAIN: Plain = Plain { carry: false };
const CARRY: Plain = Plain { carry: true };

#[test]
fn the_last_record_wins_and_a_boundary_after_it_counts() {
    let text = "{\"used\":1}\n{\"reply\":\"a\"}\n{\"used\":2}\n{\"reply\":\"b\"}\nnot json\n";
    let (_d, path) = written(text, "t.jsonl");
    assert_eq!(read_usage(&PLAIN, &path).unwrap().unwrap().used, 2);
    assert_eq!(last_reply(&PLAIN, &path).unwrap().as_deref(), Some("b"));
    let (_d, path) = written(&format!("{text}{{\"compacted\":7}}\n"), "t.jsonl");
    assert_eq!(
        read_usage(&PLAIN, &path).unwrap(),
        Some(ContextUsage {
            used: 7,
            window: None,
            model: None,
        })
    );
}

#[test]
fn a_window_is_carried_from_an_earlier_record_only_when_the_format_says() {
    let text = "{\"used\":1,\"window\":50}\n{\"used\":2}\n";
    let (_d, path) = written(text, "t.jsonl");
    let carried = read_usage(&CARRY, &path).unwrap().unwrap();
    assert_eq!((carried.used, carried.window), (2, Some(50)));
    let plain = read_usage(&PLAIN, &path).unwrap().unwrap();
    assert_eq!((plain.used, plain.window), (2, None));
}

#[test]
fn compressed_transcripts_are_streamed() {
    let text = "{\"used\":1,\"window\":50}\n{\"reply\":\"r\"}\n{\"used\":2}\n";
    let packed = ruzstd::encoding::compress_to_vec(
        text.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    std::fs::write(&path, packed).unwrap();
    let usage = read_usage(&CARRY, &path).unwrap().unwrap();
    assert_eq!((usage.used, usage.window), (2, Some(50)));
    assert_eq!(last_reply(&CARRY, &path).unwrap().as_deref(), Some("r"));
}

#[test]
fn usage_far_back_in_a_big_tail_is_found_and_missing_usage_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, r#"{{"used":777}}"#).unwrap();
    let filler = format!(r#"{{"content":"{}"}}"#, "x".repeat(1000));
    for _ in 0..500 {
        writeln!(file, "{filler}").unwrap();
    }
    drop(file);
    // ~500 KB of lines without usage after the record: found by widening the tail.
    assert_eq!(read_usage(&PLAIN, &path).unwrap().unwrap().used, 777);
    let (_d, empty) = written("", "empty.jsonl");
    assert_eq!(read_usage(&PLAIN, &empty).unwrap(), None);
    assert!(read_usage(&PLAIN, &dir.path().join("missing.jsonl")).is_err());
}

#[test]
fn windows_and_percentages() {
    let usage = ContextUsage {
        used: 170_000,
        window: None,
        model: None,
    };
    assert_eq!(window(Some(&PLAIN), Some("big"), &usage, None), Some(1_000));
    assert_eq!(window(Some(&PLAIN), None, &usage, None), Some(100));
    assert_eq!(
        window(Some(&PLAIN), None, &usage, Some(180_000)),
        Some(180_000)
    );
    let stated = ContextUsage {
        window: Some(5_000),
        ..usage.clone()
    };
    assert_eq!(
        window(Some(&PLAIN), Some("big"), &stated, None),
        Some(5_000)
    );
    assert_eq!(
        window(Some(&PLAIN), None, &stated, Some(180_000)),
        Some(180_000)
    );
    // Usage from a payload, with no transcript format for a default.
    assert_eq!(window(None, None, &usage, None), None);
    assert_eq!(window(None, None, &usage, Some(180_000)), Some(180_000));
    assert_eq!(window(None, None, &stated, None), Some(5_000));
    assert_eq!(usage.percent_of(200_000), 85);
    assert_eq!(usage.percent_of(100_000), 100);
    assert_eq!(usage.percent_of(0), 100);
}

fn zst(text: &str) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(text.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
}

fn used(path: &Path, memo: &Path) -> Option<(u64, Option<u64>)> {
    read_tail(&CARRY, path, Some(memo))
        .unwrap()
        .usage
        .map(|u| (u.used, u.window))
}

/// The memo's entry for the one transcript: (the end of its last complete frame, its length).
fn remembered(memo: &Path) -> (u64, u64) {
    let memo: Value = serde_json::from_slice(&std::fs::read(memo).unwrap()).unwrap();
    let entry = &memo["entries"][0];
    (
        entry["offset"].as_u64().unwrap(),
        entry["len"].as_u64().unwrap(),
    )
}

#[test]
fn compressed_transcripts_are_read_frame_by_frame_and_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    let memo = dir.path().join("memo.json");
    // The second frame starts in the middle of a line.
    let first = zst("{\"used\":1,\"window\":50}\n{\"reply\":\"a\"}\n{\"us");
    let second = zst("ed\":2}\n");
    std::fs::write(&path, [first.clone(), second.clone()].concat()).unwrap();
    assert_eq!(used(&path, &memo), Some((2, Some(50))));
    assert_eq!(
        remembered(&memo),
        (
            first.len() as u64 + second.len() as u64,
            first.len() as u64 + second.len() as u64
        )
    );
    assert_eq!(
        used(&path, &memo),
        Some((2, Some(50))),
        "unchanged: from the memo"
    );

    // A frame appended: only it is read (the memo's state carries the window).
    let third = zst("{\"used\":3}\n{\"used\":4}");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&third).unwrap();
    drop(file);
    assert_eq!(used(&path, &memo), Some((4, Some(50))));
    let total = (first.len() + second.len() + third.len()) as u64;
    assert_eq!(remembered(&memo), (total, total));

    // A frame still being written counts now, and is read again next time.
    let fourth = zst("{\"used\":5}\n{\"used\":6}\n");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let cut = fourth.len() / 2;
    file.write_all(&fourth[..cut]).unwrap();
    drop(file);
    assert_eq!(
        used(&path, &memo).map(|u| u.0),
        Some(4),
        "its block is not complete"
    );
    assert_eq!(remembered(&memo).0, total);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&fourth[cut..]).unwrap();
    drop(file);
    assert_eq!(used(&path, &memo), Some((6, Some(50))));

    // Rewritten in place, shorter, with other content: read again from the start.
    std::fs::write(&path, zst("{\"used\":9}\n")).unwrap();
    assert_eq!(used(&path, &memo), Some((9, None)));
    assert_eq!(
        read_usage(&CARRY, &path).unwrap().map(|u| u.used),
        Some(9),
        "without a memo"
    );
}

#[test]
fn a_broken_memo_only_costs_a_full_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    let memo = dir.path().join("memo.json");
    std::fs::write(&path, zst("{\"used\":7,\"window\":9}\n")).unwrap();
    std::fs::write(&memo, "{ not json").unwrap();
    assert_eq!(used(&path, &memo), Some((7, Some(9))));
    // A memo that lies about the file (its check digest does not match) is not trusted.
    assert_eq!(used(&path, &memo), Some((7, Some(9))));
    let mut lie: Value = serde_json::from_slice(&std::fs::read(&memo).unwrap()).unwrap();
    lie["entries"][0]["check"] = "00".repeat(32).into();
    lie["entries"][0]["len"] = 0.into();
    lie["entries"][0]["state"] = serde_json::json!({"used": 1000, "window": 1, "model": null});
    std::fs::write(&memo, lie.to_string()).unwrap();
    assert_eq!(used(&path, &memo), Some((7, Some(9))));
}

/// Counts the lines it is asked about, as [`CARRY`] reads them.
struct Counting(std::sync::atomic::AtomicUsize);

impl TranscriptFormat for Counting {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CARRY.line_usage(line)
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        CARRY.reply_text(line)
    }

    fn default_window(&self, model: Option<&str>) -> u64 {
        CARRY.default_window(model)
    }

    fn window_from_earlier_record(&self) -> bool {
        true
    }
}

/// A long compressed transcript (one frame, as Codex writes a cold rollout): only the lines of
/// its last few MiB are read, and the usage and the reply come from one decompression, the
/// second call answered from the memo without reading the file.
#[test]
fn a_long_compressed_transcript_is_read_at_its_tail_once_for_usage_and_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    let memo = dir.path().join("memo.json");
    let mut text = String::from("{\"used\":1,\"window\":50}\n");
    let filler = format!("{{\"reply\":\"{}\"}}\n", "x".repeat(100));
    let lines = 4 * MAX_TAIL_BYTES as usize / filler.len();
    for _ in 0..lines {
        text.push_str(&filler);
    }
    text.push_str("{\"used\":2}\n{\"reply\":\"last\"}\n");
    std::fs::write(&path, zst(&text)).unwrap();
    let counting = Counting(0.into());
    let tail = read_tail(&counting, &path, Some(&memo)).unwrap();
    assert_eq!(tail.reply.as_deref(), Some("last"));
    let usage = tail.usage.unwrap();
    // The window is beyond the tail: not found there (the text before the tail is not read).
    assert_eq!((usage.used, usage.window), (2, None));
    let asked = counting.0.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        asked > 0 && asked < lines * 2 / 3,
        "{asked} of {lines} lines read"
    );

    // Answered from the memo: the file's bytes are not read again (changed in place, same
    // length and time, it still answers what it said).
    let meta = std::fs::metadata(&path).unwrap();
    let garbage = vec![0u8; usize::try_from(meta.len()).unwrap()];
    std::fs::write(&path, garbage).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(meta.modified().unwrap())
        .unwrap();
    assert_eq!(
        read_tail(&counting, &path, Some(&memo)).unwrap(),
        Tail {
            usage: Some(usage),
            reply: Some("last".into()),
        }
    );
    assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), asked);
}
