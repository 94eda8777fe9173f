//! Reading a small file that someone else may control (a committed `checkpoint.toml`, a
//! `package.json`, a task template): only a regular file, after following links, and only up to a
//! size cap. A `checkpoint.toml` that is a symlink to `/dev/zero`, a FIFO or a multi-gigabyte file
//! is an error at once, never a hang or an allocation that grows until memory runs out.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

/// The cap for configuration and manifest files: far above any real one.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The content of `path` when it is a regular file (links followed) of at most `cap` bytes.
/// Anything else is an error: `NotFound` as the OS says, `InvalidInput` for what is not a regular
/// file, `FileTooLarge` above the cap.
pub fn read_regular(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {cap} bytes"),
        )
    };
    let len = file.metadata()?.len();
    if len > cap {
        return Err(too_large());
    }
    // Room for the whole file and the read that finds its end (it may have grown since).
    let mut bytes = Vec::with_capacity(usize::try_from(len).map_or(0, |len| len + 1));
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// `path` opened for reading when it is a regular file (links followed); `InvalidInput` for
/// anything else, without opening it (opening a FIFO would wait for a writer).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, "not a regular file");
    if !fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    // What was checked by name must be what was opened: a swap in between is refused.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// [`read_regular`] as UTF-8 text (`InvalidData` when it is not).
pub fn read_regular_text(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, cap)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        fs::write(&small, "x = 1\n").unwrap();
        assert_eq!(read_regular_text(&small, 64).unwrap(), "x = 1\n");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&small, &link).unwrap();
        assert_eq!(read_regular_text(&link, 64).unwrap(), "x = 1\n");

        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(
            read_regular(&zero, 64).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(
            read_regular(&small, 3).unwrap_err().kind(),
            io::ErrorKind::FileTooLarge
        );
        assert_eq!(
            read_regular(dir.path(), 64).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(
            read_regular(&dir.path().join("none"), 64)
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }
}
