//! What a changed path in the worktree holds, read within bounds: the one place the fingerprint,
//! the continuity capture, `checkpoint diff` and task snapshots look at a file's content.
//!
//! - A symbolic link is its target path (as git stores it), never followed: a link to a secret
//!   outside the repository does not bring the secret into the state directory.
//! - Anything but a regular file or a link (a FIFO, a device, a directory) is never opened.
//! - A regular file is hashed by streaming, and its bytes are kept only below the caller's cap.
//!   Past [`MAX_HASHED_BYTES`] it is not read at all: its id is a digest of its size, times and
//!   inode, which any write changes (as git's index trusts the stat data). A 4 GiB untracked file
//!   thus costs one `stat`, not a read of 4 GiB.

use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::bounded;
use crate::digest;

/// The largest file whose content is hashed; larger ones are told apart by their stat data.
pub(crate) const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// What is at a path now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileContent {
    /// Nothing.
    Missing,
    /// A symbolic link, with its target.
    Link(Vec<u8>),
    /// A regular file.
    File {
        /// Whether any execute bit is set.
        executable: bool,
        /// Lowercase hex SHA-256 of the content, or of the stat data past [`MAX_HASHED_BYTES`].
        id: String,
        /// The content, when it is at most the cap the caller gave.
        bytes: Option<Vec<u8>>,
    },
    /// Something that is neither (a directory, a FIFO, a device, a socket), or unreadable.
    Other,
}

impl FileContent {
    /// What is at `path`, keeping the bytes of a regular file of at most `keep` bytes.
    pub(crate) fn read(path: &Path, keep: u64) -> FileContent {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return FileContent::Missing,
            Err(_) => return FileContent::Other,
        };
        if meta.is_symlink() {
            return fs::read_link(path).map_or(FileContent::Other, |target| {
                FileContent::Link(target.as_os_str().as_bytes().to_vec())
            });
        }
        if !meta.is_file() {
            return FileContent::Other;
        }
        regular(path, &meta, keep).unwrap_or(FileContent::Other)
    }

    /// A digest naming this content: the file's id, the hash of a link's target; `None` for
    /// nothing or something else.
    pub(crate) fn id(&self) -> Option<String> {
        match self {
            FileContent::File { id, .. } => Some(id.clone()),
            FileContent::Link(target) => Some(checkpoint_core::hex::sha256_hex(target)),
            FileContent::Missing | FileContent::Other => None,
        }
    }
}

/// The regular file at `path` (whose metadata is `meta`), hashed or stat-identified.
fn regular(path: &Path, meta: &Metadata, keep: u64) -> io::Result<FileContent> {
    let executable = meta.permissions().mode() & 0o111 != 0;
    let len = meta.len();
    if len > MAX_HASHED_BYTES {
        let stat = format!(
            "unhashed size {len} mtime {}.{} ctime {}.{} inode {}:{}",
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.dev(),
            meta.ino()
        );
        let id = checkpoint_core::hex::sha256_hex(stat.as_bytes());
        return Ok(FileContent::File {
            executable,
            id,
            bytes: None,
        });
    }
    // Opened as a regular file only: it may have been swapped since the `lstat`.
    let file = bounded::open_regular(path)?;
    if len <= keep {
        let mut bytes = Vec::new();
        file.take(keep.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 <= keep {
            let id = checkpoint_core::hex::sha256_hex(&bytes);
            return Ok(FileContent::File {
                executable,
                id,
                bytes: Some(bytes),
            });
        }
        // It grew past the cap meanwhile: hash it from the start.
        return regular(path, &fs::symlink_metadata(path)?, 0);
    }
    let id = digest::hash_reader(file.take(MAX_HASHED_BYTES))?;
    Ok(FileContent::File {
        executable,
        id,
        bytes: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_targets_and_special_files_are_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        fs::write(&secret, "hunter2").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let got = FileContent::read(&link, 1024);
        assert_eq!(
            got,
            FileContent::Link(secret.as_os_str().as_bytes().to_vec())
        );
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(FileContent::read(&fifo, 1024), FileContent::Other);
        assert_eq!(
            FileContent::read(&dir.path().join("none"), 1024),
            FileContent::Missing
        );
    }

    #[test]
    fn small_files_are_kept_larger_ones_hashed_huge_ones_stat_identified() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, "abc").unwrap();
        let small = FileContent::read(&path, 3);
        assert_eq!(small.id(), Some(checkpoint_core::hex::sha256_hex(b"abc")));
        assert!(matches!(small, FileContent::File { bytes: Some(_), .. }));
        let hashed = FileContent::read(&path, 2);
        assert_eq!(hashed.id(), small.id());
        assert!(matches!(hashed, FileContent::File { bytes: None, .. }));

        // A sparse file past the hashing cap: identified without reading it.
        let huge = fs::File::create(&path).unwrap();
        huge.set_len(MAX_HASHED_BYTES + 1).unwrap();
        let first = FileContent::read(&path, 1024).id().unwrap();
        assert_eq!(FileContent::read(&path, 1024).id().unwrap(), first);
        std::thread::sleep(std::time::Duration::from_millis(20));
        huge.set_len(MAX_HASHED_BYTES + 2).unwrap();
        huge.set_len(MAX_HASHED_BYTES + 1).unwrap();
        assert_ne!(FileContent::read(&path, 1024).id().unwrap(), first);
    }
}
