//! A task's whole history, append-only, beside `hook.json`: `history/<n>.jsonl` (`000001.jsonl`
//! holds entries 1 to 1,000, `000002.jsonl` the next 1,000, …), one JSON line per entry, oldest
//! first. A chunk that holds [`CHUNK_ENTRIES`] entries is closed and never written again; only
//! the last chunk changes, each time by atomic replace with fsync.
//!
//! `hook.json` is the commit point: its `history_len` counts the committed entries. A transaction
//! writes the chunks first and `hook.json` last, so a writer killed in between (kill -9) leaves
//! entries beyond `history_len`: readers ignore them and the next transaction replaces them. A
//! line that does not end in a newline (torn) or does not parse is skipped on read, never an
//! error: the task stays readable.

use std::io;
use std::path::Path;

use crate::bounded;
use crate::store::StoreError;
use checkpoint_core::journal::task::HistoryEntry;

/// The directory of the chunks, in the task's directory.
pub const DIR: &str = "history";

/// Entries per chunk.
pub const CHUNK_ENTRIES: u64 = 1_000;

/// The largest chunk read: 1,000 entries of 64 KiB each, far above a real one.
const MAX_CHUNK_BYTES: u64 = CHUNK_ENTRIES * 64 * 1024;

/// The name, relative to the task directory, of the chunk holding entry `index` (0-based).
pub fn chunk_name(index: u64) -> String {
    format!("{DIR}/{:06}.jsonl", index / CHUNK_ENTRIES + 1)
}

/// Whether `path` (relative to a task's directory) names a history chunk: `history/` and six
/// digits, `.jsonl`.
pub fn is_chunk(path: &str) -> bool {
    path.strip_prefix(DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|name| name.strip_suffix(".jsonl"))
        .is_some_and(|n| n.len() == 6 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The chunks to write so that the store, holding `committed` entries, holds `fresh` after them:
/// each chunk that changes, by name relative to `task_dir`, with its full new content. Reads only
/// the last chunk, and of it only its committed lines.
pub fn appended(
    task_dir: &Path,
    committed: u64,
    fresh: &[HistoryEntry],
) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let mut chunks: Vec<(String, Vec<u8>)> = Vec::new();
    for (next, entry) in (committed..).zip(fresh) {
        let name = chunk_name(next);
        if chunks.last().is_none_or(|(last, _)| *last != name) {
            let kept = match next % CHUNK_ENTRIES {
                0 => Vec::new(),
                lines => committed_lines(&read_chunk(task_dir, &name)?, lines).to_vec(),
            };
            chunks.push((name, kept));
        }
        let (name, bytes) = chunks.last_mut().expect("pushed above");
        serde_json::to_writer(&mut *bytes, entry).map_err(|source| StoreError::Corrupt {
            path: task_dir.join(&*name),
            source,
        })?;
        bytes.push(b'\n');
    }
    Ok(chunks)
}

/// The committed entries `from..len` (0-based, `len` being `hook.json`'s `history_len`), oldest
/// first: reads only the chunks that hold them. A missing chunk gives nothing.
pub fn read(task_dir: &Path, from: u64, len: u64) -> Result<Vec<HistoryEntry>, StoreError> {
    let mut entries = Vec::new();
    let mut index = from - from % CHUNK_ENTRIES;
    while index < len {
        let bytes = match read_chunk(task_dir, &chunk_name(index)) {
            Ok(bytes) => bytes,
            Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        let in_chunk = (len - index).min(CHUNK_ENTRIES);
        let skip = from.saturating_sub(index);
        let lines = committed_lines(&bytes, in_chunk).split_inclusive(|b| *b == b'\n');
        let lines = lines.skip(usize::try_from(skip).unwrap_or(usize::MAX));
        entries.extend(lines.filter_map(|line| serde_json::from_slice(line).ok()));
        index += CHUNK_ENTRIES;
    }
    Ok(entries)
}

/// The first `count` complete lines of `bytes` (fewer when it has fewer): what a chunk holds of
/// the committed history. What follows — entries of a transaction that never committed, or a
/// torn line — is left out.
fn committed_lines(bytes: &[u8], count: u64) -> &[u8] {
    let mut end = 0;
    for (n, (i, _)) in (bytes.iter().enumerate())
        .filter(|(_, b)| **b == b'\n')
        .enumerate()
    {
        if n as u64 == count {
            break;
        }
        end = i + 1;
    }
    &bytes[..end]
}

fn read_chunk(task_dir: &Path, name: &str) -> Result<Vec<u8>, StoreError> {
    let path = task_dir.join(name);
    bounded::read_regular(&path, MAX_CHUNK_BYTES).map_err(|source| StoreError::Io { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_core::journal::state::TaskState;
    use checkpoint_core::journal::task::HistoryKind;
    use jiff::Timestamp;
    use proptest::prelude::*;
    use std::fs;

    fn entry(n: u64) -> HistoryEntry {
        HistoryEntry {
            at: Timestamp::from_second(1_767_225_600 + n as i64).unwrap(),
            kind: HistoryKind::Checkpoint,
            state: TaskState::StepRunning,
            step: Some("a".into()),
            detail: Some(format!("#{n}\nmanual")),
        }
    }

    /// Appends `fresh` after `committed` entries as a transaction does, returning the new count.
    fn append(dir: &Path, committed: u64, fresh: &[HistoryEntry]) -> u64 {
        for (name, bytes) in appended(dir, committed, fresh).unwrap() {
            crate::store::write_atomic(&dir.join(name), &bytes).unwrap();
        }
        committed + fresh.len() as u64
    }

    #[test]
    fn chunks_hold_a_thousand_entries_and_closed_ones_are_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<HistoryEntry> = (0..2_500).map(entry).collect();
        let mut len = append(dir.path(), 0, &all[..999]);
        assert_eq!(chunk_name(999), "history/000001.jsonl");
        assert_eq!(chunk_name(1_000), "history/000002.jsonl");
        // One entry closes the first chunk, the next opens the second alone.
        let written = appended(dir.path(), len, &all[999..1_001]).unwrap();
        let names: Vec<&str> = written.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["history/000001.jsonl", "history/000002.jsonl"]);
        len = append(dir.path(), len, &all[999..1_001]);
        let closed = fs::read(dir.path().join("history/000001.jsonl")).unwrap();
        assert_eq!(closed.iter().filter(|b| **b == b'\n').count(), 1_000);
        let written = appended(dir.path(), len, &all[1_001..1_002]).unwrap();
        assert_eq!(written.len(), 1);
        assert_eq!(written[0].0, "history/000002.jsonl");
        assert_eq!(written[0].1, {
            let mut want = fs::read(dir.path().join("history/000002.jsonl")).unwrap();
            want.extend(serde_json::to_vec(&all[1_001]).unwrap());
            want.push(b'\n');
            want
        });
        len = append(dir.path(), len, &all[1_001..]);
        assert_eq!(
            fs::read(dir.path().join("history/000001.jsonl")).unwrap(),
            closed
        );
        assert_eq!(read(dir.path(), 0, len).unwrap(), all);
        assert_eq!(read(dir.path(), 2_495, len).unwrap(), &all[2_495..]);
        assert!(read(dir.path(), len, len).unwrap().is_empty());
        // A chunk that disappeared gives nothing; the others still read.
        fs::remove_file(dir.path().join("history/000002.jsonl")).unwrap();
        let left = read(dir.path(), 0, len).unwrap();
        assert_eq!(left[..1_000], all[..1_000]);
        assert_eq!(left[1_000..], all[2_000..]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the batches, and whatever a killed writer left after the committed entries
        /// (an uncommitted line, a torn one, a chunk of its own), the store reads back exactly
        /// the committed entries, from any point on, and the next append replaces the leftovers.
        #[test]
        fn the_committed_entries_and_only_they_read_back(
            batches in prop::collection::vec(0..1_300usize, 1..5),
            leftovers in prop::collection::vec(0..4u8, 1..5),
            from in 0..5_000u64,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut all = Vec::new();
            let mut len = 0;
            for (batch, leftover) in batches.iter().zip(leftovers.iter().cycle()) {
                let fresh: Vec<HistoryEntry> =
                    (len..len + *batch as u64).map(entry).collect();
                len = append(dir.path(), len, &fresh);
                all.extend(fresh);
                let last = dir.path().join(chunk_name(len));
                let mut garbage = match leftover {
                    0 => Vec::new(),
                    1 => serde_json::to_vec(&entry(999_999)).unwrap(),
                    _ => b"{\"at\": \"20".to_vec(),
                };
                if *leftover == 1 {
                    garbage.push(b'\n');
                }
                if *leftover == 3 {
                    // A whole chunk of a transaction that never committed.
                    let next = dir.path().join(chunk_name(len + CHUNK_ENTRIES));
                    let mut bytes = serde_json::to_vec(&entry(999_998)).unwrap();
                    bytes.push(b'\n');
                    crate::store::write_atomic(&next, &bytes).unwrap();
                }
                let mut bytes = fs::read(&last).unwrap_or_default();
                bytes.extend(garbage);
                fs::create_dir_all(last.parent().unwrap()).unwrap();
                fs::write(&last, bytes).unwrap();
                prop_assert_eq!(&read(dir.path(), 0, len).unwrap(), &all);
            }
            let from = from.min(len);
            let tail = read(dir.path(), from, len).unwrap();
            prop_assert_eq!(&tail[..], &all[usize::try_from(from).unwrap()..]);
        }
    }
}
