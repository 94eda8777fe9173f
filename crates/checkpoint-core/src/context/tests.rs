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
    assert_eq!(window(&PLAIN, Some("big"), &usage, None), 1_000);
    assert_eq!(window(&PLAIN, None, &usage, None), 100);
    assert_eq!(window(&PLAIN, None, &usage, Some(180_000)), 180_000);
    let stated = ContextUsage {
        window: Some(5_000),
        ..usage.clone()
    };
    assert_eq!(window(&PLAIN, Some("big"), &stated, None), 5_000);
    assert_eq!(window(&PLAIN, None, &stated, Some(180_000)), 180_000);
    assert_eq!(usage.percent_of(200_000), 85);
    assert_eq!(usage.percent_of(100_000), 100);
    assert_eq!(usage.percent_of(0), 100);
}
