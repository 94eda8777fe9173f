//! Context usage from real transcript excerpts and generated large transcripts.

use std::io::Write;

use super::*;

fn excerpt(agent: &str) -> String {
    let path = format!(
        "{}/../../tests/payloads/{agent}/transcript-excerpt.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn written(text: &str, name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn claude_compaction_boundary_after_the_last_usage_wins() {
    let text = excerpt("claude");
    let (_d, path) = written(&text, "t.jsonl");
    assert_eq!(
        read_usage(Agent::Claude, &path).unwrap(),
        Some(ContextUsage {
            used: 2616,
            window: None,
            model: None,
        })
    );
    // Without the boundary, the last main-thread assistant usage counts: 2200 + 100 + 32500.
    let before: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("compact_boundary"))
        .collect();
    let (_d, path) = written(&before.join("\n"), "t.jsonl");
    assert_eq!(
        read_usage(Agent::Claude, &path).unwrap().unwrap().used,
        34_800
    );
}

#[test]
fn claude_sidechains_and_synthetic_messages_are_skipped() {
    let main = r#"{"type":"assistant","isSidechain":false,"message":{"model":"claude-opus-5-5","usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30}}}"#;
    let side = r#"{"type":"assistant","isSidechain":true,"message":{"model":"claude-opus-5-5","usage":{"input_tokens":99999}}}"#;
    let synthetic = r#"{"type":"assistant","isSidechain":false,"message":{"model":"<synthetic>","usage":{"input_tokens":0}}}"#;
    let (_d, path) = written(&[main, side, synthetic].join("\n"), "t.jsonl");
    assert_eq!(read_usage(Agent::Claude, &path).unwrap().unwrap().used, 60);
}

#[test]
fn gemini_last_record_input_tokens() {
    let (_d, path) = written(&excerpt("gemini"), "session.jsonl");
    assert_eq!(
        read_usage(Agent::Gemini, &path).unwrap(),
        Some(ContextUsage {
            used: 35_500,
            window: None,
            model: Some("gemini-3.8-flash".into()),
        })
    );
}

#[test]
fn codex_token_count_with_window() {
    let (_d, path) = written(&excerpt("codex"), "rollout.jsonl");
    let usage = read_usage(Agent::Codex, &path).unwrap().unwrap();
    assert_eq!(
        usage,
        ContextUsage {
            used: 34_800,
            window: Some(258_400),
            model: None,
        }
    );
    assert_eq!(
        usage.percent_of(window(Agent::Codex, None, &usage, None)),
        13
    );
}

#[test]
fn codex_compressed_rollouts_are_read() {
    let text = excerpt("codex");
    let packed = ruzstd::encoding::compress_to_vec(
        text.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl.zst");
    std::fs::write(&path, packed).unwrap();
    assert_eq!(
        read_usage(Agent::Codex, &path).unwrap().unwrap().used,
        34_800
    );
}

#[test]
fn usage_far_back_in_a_big_tail_is_found_and_missing_usage_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, r#"{{"type":"gemini","tokens":{{"input":777}}}}"#).unwrap();
    let filler = format!(r#"{{"type":"user","content":"{}"}}"#, "x".repeat(1000));
    for _ in 0..500 {
        writeln!(file, "{filler}").unwrap();
    }
    drop(file);
    // ~500 KB of lines without usage after the record: found by widening the tail.
    assert_eq!(read_usage(Agent::Gemini, &path).unwrap().unwrap().used, 777);
    let (_d, empty) = written("", "empty.jsonl");
    assert_eq!(read_usage(Agent::Gemini, &empty).unwrap(), None);
    assert!(read_usage(Agent::Gemini, &dir.path().join("missing.jsonl")).is_err());
}

#[test]
fn windows_and_percentages() {
    let usage = ContextUsage {
        used: 170_000,
        window: None,
        model: None,
    };
    assert_eq!(
        window(Agent::Claude, Some("claude-sonnet-4"), &usage, None),
        200_000
    );
    assert_eq!(
        window(Agent::Claude, Some("claude-opus-5-5"), &usage, None),
        1_000_000
    );
    assert_eq!(
        window(Agent::Claude, Some("claude-sonnet-4[1m]"), &usage, None),
        1_000_000
    );
    assert_eq!(window(Agent::Gemini, None, &usage, None), 1_048_576);
    assert_eq!(window(Agent::Claude, None, &usage, Some(180_000)), 180_000);
    assert_eq!(usage.percent_of(200_000), 85);
    assert_eq!(usage.percent_of(100_000), 100);
    assert_eq!(usage.percent_of(0), 100);
}

#[test]
fn codex_usage_record_before_its_token_count_keeps_the_earlier_window() {
    let mut text = excerpt("codex");
    // The next reply's record is written before its token_count event.
    text.push_str(
        r#"{"type":"token_usage_record","payload":{"usage":{"input_tokens":170000,"output_tokens":5}}}"#,
    );
    text.push('\n');
    let (_d, path) = written(&text, "rollout.jsonl");
    let usage = read_usage(Agent::Codex, &path).unwrap().unwrap();
    assert_eq!((usage.used, usage.window), (170_000, Some(258_400)));
}

#[test]
fn last_replies_from_each_agents_transcript() {
    let (_d, path) = written(&excerpt("claude"), "t.jsonl");
    assert_eq!(
        last_reply(Agent::Claude, &path).unwrap().as_deref(),
        Some("Tests pass now. Done.")
    );
    let (_d, path) = written(&excerpt("gemini"), "t.jsonl");
    assert_eq!(
        last_reply(Agent::Gemini, &path).unwrap().as_deref(),
        Some("Resumed.")
    );
    let codex = [
        r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Schema created."}]}}"#,
        r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}"#,
        r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command"}}"#,
    ];
    let (_d, path) = written(&codex.join("\n"), "rollout.jsonl");
    assert_eq!(
        last_reply(Agent::Codex, &path).unwrap().as_deref(),
        Some("Schema created.")
    );
    // A tool call without text, a sidechain, nothing at all.
    let claude = [
        r#"{"type":"assistant","isSidechain":false,"message":{"content":[{"type":"text","text":"Main."}]}}"#,
        r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"Side."}]}}"#,
        r#"{"type":"assistant","isSidechain":false,"message":{"content":[{"type":"tool_use","id":"t"}]}}"#,
    ];
    let (_d, path) = written(&claude.join("\n"), "t.jsonl");
    assert_eq!(
        last_reply(Agent::Claude, &path).unwrap().as_deref(),
        Some("Main.")
    );
    let (_d, path) = written("", "t.jsonl");
    assert_eq!(last_reply(Agent::Gemini, &path).unwrap(), None);
}
