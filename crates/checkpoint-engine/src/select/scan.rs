//! The source files of a worktree, each read into what the selection needs of it (its imports),
//! with a cache of those readings in the project's state directory.
//!
//! Every file the walk wants (at most [`MAX_FILES`], each a regular file of at most
//! [`MAX_FILE_BYTES`]; hidden directories, virtual environments and [`SKIPPED_DIRS`] are not
//! entered, symlinks not followed) is read and parsed once; the cache then keeps, per path, the
//! file's size, modification time and inode with the parse, and a later scan reuses a parse whose
//! file still has all three. A file modified within the last [`RACY`] is not cached (a same-size
//! edit within a coarse timestamp's tick would otherwise look unchanged), as git treats racily
//! clean index entries. The cache is one JSON file per language (at most [`MAX_CACHE_BYTES`]),
//! replaced atomically when a scan read anything new; an unreadable or damaged cache is ignored
//! and rewritten.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{bounded, store};

/// The most files scanned; a bigger tree runs the command as configured.
pub const MAX_FILES: usize = 20_000;
/// The largest file read; a bigger one runs the command as configured.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The largest cache file read; a bigger one is ignored.
pub const MAX_CACHE_BYTES: u64 = 64 * 1024 * 1024;
/// How recently modified a file may be and still be cached.
pub const RACY: Duration = Duration::from_secs(2);
/// Directories never entered (besides hidden ones and virtual environments).
pub const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    "site-packages",
];

/// What a scan reads, and how.
pub struct Walk<T> {
    /// The cache's name in the state directory's `select/` (one per language and parse).
    pub cache: &'static str,
    /// Whether a file of this name is read.
    pub wanted: fn(&str) -> bool,
    /// What is kept of a file's text.
    pub parse: fn(&str) -> T,
}

/// One cached parse, valid while its file keeps its size, modification time and inode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry<T> {
    size: u64,
    mtime_ns: i128,
    ino: u64,
    value: T,
}

impl<T> Entry<T> {
    fn stamp(&self) -> (u64, i128, u64) {
        (self.size, self.mtime_ns, self.ino)
    }
}

impl<T: Clone + Serialize + DeserializeOwned> Walk<T> {
    /// The parse of every wanted file under `workdir`, by `/`-separated relative path, reusing
    /// the cache in `state_dir` (when given) and updating it. `None` when there are too many
    /// files, or one cannot be read.
    pub fn scan(&self, workdir: &Path, state_dir: Option<&Path>) -> Option<BTreeMap<String, T>> {
        let cache_path = state_dir.map(|dir| self.cache_path(dir));
        let cached: BTreeMap<String, Entry<T>> =
            cache_path.as_deref().map(read_cache).unwrap_or_default();
        let racy_after = SystemTime::now()
            .checked_sub(RACY)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(i128::MAX, |d| d.as_nanos() as i128);
        let mut found: BTreeMap<String, Entry<T>> = BTreeMap::new();
        let mut pending = vec![String::new()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(workdir.join(&dir)).ok()? {
                let entry = entry.ok()?;
                let name = entry.file_name().into_string().ok()?;
                let path = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                let kind = entry.file_type().ok()?;
                if kind.is_dir() {
                    let skipped = name.starts_with('.')
                        || SKIPPED_DIRS.contains(&name.as_str())
                        || entry.path().join("pyvenv.cfg").exists();
                    if !skipped {
                        pending.push(path);
                    }
                    continue;
                }
                if !(kind.is_file() && (self.wanted)(&name)) {
                    continue;
                }
                if found.len() == MAX_FILES {
                    return None;
                }
                let meta = entry.metadata().ok()?;
                let stamp = (meta.size(), mtime_ns(&meta), meta.ino());
                let reused = cached.get(&path).filter(|e| e.stamp() == stamp);
                let value = match reused {
                    Some(entry) => entry.value.clone(),
                    None => {
                        let text = bounded::read_regular(&entry.path(), MAX_FILE_BYTES).ok()?;
                        (self.parse)(&String::from_utf8_lossy(&text))
                    }
                };
                let (size, mtime_ns, ino) = stamp;
                found.insert(
                    path,
                    Entry {
                        size,
                        mtime_ns,
                        ino,
                        value,
                    },
                );
            }
        }
        let mut keep: BTreeMap<String, Entry<T>> = found.clone();
        keep.retain(|_, entry| entry.mtime_ns < racy_after);
        let changed = keep.len() != cached.len()
            || keep
                .iter()
                .any(|(path, entry)| cached.get(path).map(Entry::stamp) != Some(entry.stamp()));
        if let (Some(path), true) = (cache_path, changed) {
            // A cache that cannot be written only costs the next scan its reads.
            let _ = store::write_json(&path, &keep);
        }
        Some(found.into_iter().map(|(k, e)| (k, e.value)).collect())
    }

    fn cache_path(&self, state_dir: &Path) -> PathBuf {
        state_dir
            .join("select")
            .join(format!("{}.json", self.cache))
    }
}

/// The cache at `path`; empty when missing, too big or damaged.
fn read_cache<T: DeserializeOwned>(path: &Path) -> BTreeMap<String, Entry<T>> {
    bounded::read_regular(path, MAX_CACHE_BYTES)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The modification time in nanoseconds since the epoch.
fn mtime_ns(meta: &fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static PARSES: Cell<usize> = const { Cell::new(0) };
    }

    fn lines(text: &str) -> Vec<String> {
        PARSES.with(|p| p.set(p.get() + 1));
        text.lines().map(str::to_owned).collect()
    }

    const WALK: Walk<Vec<String>> = Walk {
        cache: "test-lines",
        wanted: |name| name.ends_with(".txt"),
        parse: lines,
    };

    fn set_mtime(path: &Path, ago: Duration) {
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - ago).unwrap();
    }

    #[test]
    fn a_file_is_read_again_only_when_its_stamp_moved() {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let root = work.path();
        fs::create_dir_all(root.join("a/node_modules")).unwrap();
        fs::create_dir_all(root.join(".hidden")).unwrap();
        fs::write(root.join("a/one.txt"), "x\ny").unwrap();
        fs::write(root.join("two.txt"), "z").unwrap();
        fs::write(root.join("skip.md"), "no").unwrap();
        fs::write(root.join("a/node_modules/dep.txt"), "no").unwrap();
        fs::write(root.join(".hidden/h.txt"), "no").unwrap();
        let old = Duration::from_secs(60);
        set_mtime(&root.join("a/one.txt"), old);
        set_mtime(&root.join("two.txt"), old);
        let scan = || {
            PARSES.with(|p| p.set(0));
            let found = WALK.scan(root, Some(state.path())).unwrap();
            (found, PARSES.with(Cell::get))
        };

        let (found, parsed) = scan();
        assert_eq!(parsed, 2);
        assert_eq!(found["a/one.txt"], ["x", "y"]);
        assert_eq!(found.keys().collect::<Vec<_>>(), ["a/one.txt", "two.txt"]);
        assert_eq!(scan().1, 0, "everything cached");

        // Same size, new time: read again.
        fs::write(root.join("two.txt"), "w").unwrap();
        set_mtime(&root.join("two.txt"), Duration::from_secs(30));
        let (found, parsed) = scan();
        assert_eq!(
            (parsed, found["two.txt"].clone()),
            (1, vec!["w".to_owned()])
        );

        // A file modified just now is read every time until it is old enough.
        fs::write(root.join("two.txt"), "v").unwrap();
        assert_eq!(scan().1, 1);
        assert_eq!(scan().1, 1);
    }

    #[test]
    fn a_damaged_cache_is_ignored() {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        fs::write(work.path().join("a.txt"), "line").unwrap();
        let cache = WALK.cache_path(state.path());
        fs::create_dir_all(cache.parent().unwrap()).unwrap();
        fs::write(&cache, "{not json").unwrap();
        let found = WALK.scan(work.path(), Some(state.path())).unwrap();
        assert_eq!(found["a.txt"], ["line"]);
        assert_eq!(WALK.scan(work.path(), None).unwrap(), found);
    }
}
