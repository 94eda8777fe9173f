//! `.checkpoint/allowed_signers`: the master public keys, committed with the project, whose
//! receipts a teammate or CI trusts.
//!
//! One `<name> <key>` per line, the key as 64 lowercase hex digits (what `checkpoint keys export`
//! prints); `#` starts a comment line, blank lines are skipped, and any other line is an error
//! naming `file:line`. The file comes from the repository, so it is read defensively: at most
//! [`MAX_SIZE`] bytes, only a regular file, and never through a symlink that leaves the
//! repository.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;

use crate::git::{self, Repo};
use checkpoint_core::hex::{hex, unhex};
use checkpoint_core::journal::signing::TrustedKey;

/// The file, relative to the project's root.
pub const ALLOWED_SIGNERS: &str = ".checkpoint/allowed_signers";

/// The largest file read.
pub const MAX_SIZE: u64 = 64 * 1024;

/// Why `.checkpoint/allowed_signers` could not be used. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignersError {
    /// Reading it failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// It is larger than [`MAX_SIZE`].
    #[error("{}: larger than {} KiB; refusing to read it", path.display(), MAX_SIZE / 1024)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// It is not a regular file (a FIFO, a device, a directory).
    #[error("{}: not a regular file; refusing to read it", path.display())]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// It is a symlink to somewhere outside the repository.
    #[error("{}: points outside the repository (to {}); refusing to read it", path.display(), target.display())]
    Outside {
        /// The file.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// A line is not `<name> <key>`.
    #[error("{}:{line}: {reason}", path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// The line `checkpoint keys export` prints: `<name> <key>`.
pub fn line(name: &str, key: &[u8; 32]) -> String {
    format!("{name} {}", hex(key))
}

/// Whether `name` can be a signer's name: non-empty, no whitespace, not starting with `#`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('#') && !name.chars().any(char::is_whitespace)
}

/// The signers `<root>/.checkpoint/allowed_signers` lists; none when the file does not exist.
pub fn read(root: &Path) -> Result<Vec<TrustedKey>, SignersError> {
    let path = root.join(ALLOWED_SIGNERS);
    let io_err = |source| SignersError::Io {
        path: path.clone(),
        source,
    };
    match fs::symlink_metadata(&path) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(e)),
    }
    let target = fs::canonicalize(&path).map_err(io_err)?;
    if !target.starts_with(fs::canonicalize(root).map_err(io_err)?) {
        return Err(SignersError::Outside { path, target });
    }
    // Non-blocking, so that opening a FIFO returns at once and is refused below; the resolved
    // path has no symlinks left, and none may appear in its place.
    let nonblock_nofollow = (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW).bits();
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nonblock_nofollow as i32)
        .open(&target)
        .map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(SignersError::NotAFile { path });
    }
    let mut text = String::new();
    file.take(MAX_SIZE + 1)
        .read_to_string(&mut text)
        .map_err(io_err)?;
    if meta.len() > MAX_SIZE || text.len() as u64 > MAX_SIZE {
        return Err(SignersError::TooLarge { path });
    }
    parse(&path, &text)
}

/// The signers `.checkpoint/allowed_signers` lists as committed in `commit` (a full id), read
/// from git; none when the commit has no such file (or one over [`MAX_SIZE`]: nothing is
/// trusted rather than a part of it).
pub fn at_commit(repo: &Repo, commit: &str) -> Result<Vec<TrustedKey>, SignersError> {
    let wanted = BTreeSet::from([ALLOWED_SIGNERS.to_owned()]);
    let max = usize::try_from(MAX_SIZE).unwrap_or(usize::MAX);
    let short = commit.get(..12).unwrap_or(commit);
    let path = PathBuf::from(format!("{short}:{ALLOWED_SIGNERS}"));
    let blobs = git::small_blobs(repo, commit, &wanted, max).map_err(|e| SignersError::Io {
        path: path.clone(),
        source: io::Error::other(e.to_string()),
    })?;
    match blobs.get(ALLOWED_SIGNERS) {
        Some(bytes) => parse(&path, &String::from_utf8_lossy(bytes)),
        None => Ok(Vec::new()),
    }
}

/// The signers the file `path` lists: a file the verifier names (`checkpoint verify --signers`),
/// read as the project's is, at most [`MAX_SIZE`] bytes of a regular file.
pub fn from_file(path: &Path) -> Result<Vec<TrustedKey>, SignersError> {
    let text = crate::bounded::read_regular_text(path, MAX_SIZE).map_err(|source| {
        if source.kind() == io::ErrorKind::FileTooLarge {
            SignersError::TooLarge {
                path: path.to_owned(),
            }
        } else {
            SignersError::Io {
                path: path.to_owned(),
                source,
            }
        }
    })?;
    parse(path, &text)
}

/// The signers listed in `text`, the content of `path`.
pub fn parse(path: &Path, text: &str) -> Result<Vec<TrustedKey>, SignersError> {
    let mut signers = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let bad = |reason: &str| SignersError::BadLine {
            path: path.to_owned(),
            line: i + 1,
            reason: reason.to_owned(),
        };
        let fields: Vec<&str> = content.split_whitespace().collect();
        let [name, key] = fields[..] else {
            return Err(bad("expected `<name> <key>`"));
        };
        let key = unhex::<32>(key)
            .filter(|key| VerifyingKey::from_bytes(key).is_ok())
            .ok_or_else(|| bad("the key is not an Ed25519 public key (64 lowercase hex digits)"))?;
        signers.push(TrustedKey {
            name: name.to_owned(),
            key,
        });
    }
    Ok(signers)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const KEY: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

    fn project(content: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".checkpoint")).unwrap();
        if let Some(content) = content {
            fs::write(dir.path().join(ALLOWED_SIGNERS), content).unwrap();
        }
        dir
    }

    #[test]
    fn lines_comments_and_blanks() {
        let dir = project(Some(&format!(
            "# the team\n\nalice@laptop {KEY}\n  ci {}  \n",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
        )));
        let signers = read(dir.path()).unwrap();
        let names: Vec<&str> = signers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alice@laptop", "ci"]);
        assert_eq!(hex(&signers[0].key), KEY);
        assert_eq!(
            line("alice@laptop", &signers[0].key),
            format!("alice@laptop {KEY}")
        );
        assert!(read(project(None).path()).unwrap().is_empty());
        assert!(valid_name("bob@ci") && !valid_name("#x") && !valid_name("a b") && !valid_name(""));
    }

    #[test]
    fn a_bad_line_names_file_and_line() {
        for (text, reason) in [
            (
                format!("# ok\nalice {KEY} extra\n"),
                "expected `<name> <key>`",
            ),
            ("# ok\nalice\n".to_owned(), "expected `<name> <key>`"),
            (
                format!("# ok\nalice {}\n", KEY.to_uppercase()),
                "the key is not an Ed25519",
            ),
            ("# ok\nalice abcd\n".to_owned(), "the key is not an Ed25519"),
        ] {
            let dir = project(Some(&text));
            let err = read(dir.path()).unwrap_err().to_string();
            assert!(
                err.contains(&format!("allowed_signers:2: {reason}")),
                "{err}"
            );
        }
    }

    #[test]
    fn large_files_fifos_and_symlinks_out_are_refused() {
        let dir = project(Some(&format!("# {}\n", "x".repeat(MAX_SIZE as usize))));
        assert!(matches!(
            read(dir.path()),
            Err(SignersError::TooLarge { .. })
        ));

        let dir = project(None);
        let fifo = dir.path().join(ALLOWED_SIGNERS);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert!(matches!(
            read(dir.path()),
            Err(SignersError::NotAFile { .. })
        ));

        let outside = project(Some(&format!("eve {KEY}\n")));
        let dir = project(None);
        symlink(
            outside.path().join(ALLOWED_SIGNERS),
            dir.path().join(ALLOWED_SIGNERS),
        )
        .unwrap();
        assert!(matches!(
            read(dir.path()),
            Err(SignersError::Outside { .. })
        ));

        // A symlink within the repository is followed.
        let dir = project(None);
        fs::write(dir.path().join("signers.txt"), format!("alice {KEY}\n")).unwrap();
        symlink("../signers.txt", dir.path().join(ALLOWED_SIGNERS)).unwrap();
        assert_eq!(read(dir.path()).unwrap().len(), 1);
    }
}
