//! The CLI backend: one `git status --porcelain=v2 -z` call, parsed.
//!
//! Porcelain v2 with `--branch` carries `HEAD` in `# branch.oid` / `# branch.head` headers, so one
//! process answers everything. With `-z`, paths are raw bytes, unquoted, each record ending in NUL.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;

use super::refresh::{self, REFRESH_AFTER};
use super::{Collector, Diff, GitError, Repo};
use checkpoint_core::changes::{ChangeSet, Head};
use checkpoint_core::sanitize;

/// The status invocation: no optional locks (no `index.lock`; a stale index is refreshed
/// afterwards, see [`refresh`]), every untracked file, no rename
/// pairs, no ahead/behind count (it walks history and is not needed); a submodule whose checked
/// out commit moved, or that has changes of its own (untracked files included), is one changed
/// path, whatever its `ignore` setting says.
const STATUS_ARGS: &[&str] = &[
    "--no-optional-locks",
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--no-ahead-behind",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=none",
];

/// How much of git's standard error goes into [`GitError::Status`].
const MAX_STDERR_CHARS: usize = 300;

/// `git status` running in a repository, its output gathered as it comes (so that git never
/// waits on a full pipe) by whichever thread started it: no thread of ours is needed to wait
/// for it, nor competes with it for the process's memory map.
#[derive(Debug)]
pub(super) struct Running {
    child: Child,
    /// The repository and the git that reads it, for a refresh of its index.
    repo: Repo,
    program: PathBuf,
    /// Standard output, then standard error, while git keeps them open.
    pipes: [Option<File>; 2],
    /// What each pipe gave so far.
    gathered: [Vec<u8>; 2],
    /// Room for one read.
    chunk: Vec<u8>,
}

/// Starts `git status` in `repo` with the `git` executable `program`.
///
/// `GIT_DIR` and `GIT_WORK_TREE` point at `repo` explicitly, so git reads the repository that
/// discovery found even if the caller's environment names another one; `GIT_INDEX_FILE` is
/// dropped for the same reason. git changes to the worktree itself (`-C`): a working directory
/// set for the child would make std fork this process where it can otherwise `posix_spawn` it
/// (a statically linked binary cannot look up glibc's `posix_spawn_file_actions_addchdir_np`),
/// and a fork copies the whole memory map, then faults on every page either side writes.
pub(super) fn start(repo: &Repo, program: &Path) -> Result<Running, GitError> {
    let mut child = Command::new(program)
        .arg("-C")
        .arg(&repo.workdir)
        .args(super::SAFE_CONFIG)
        .args(STATUS_ARGS)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_DIR", &repo.git_dir)
        .env("GIT_WORK_TREE", &repo.workdir)
        .env_remove("GIT_INDEX_FILE")
        .envs(refresh::TRACE_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let stdout = child
        .stdout
        .take()
        .map(|pipe| File::from(OwnedFd::from(pipe)));
    let stderr = child
        .stderr
        .take()
        .map(|pipe| File::from(OwnedFd::from(pipe)));
    Ok(Running {
        child,
        repo: repo.clone(),
        program: program.to_owned(),
        pipes: [stdout, stderr],
        gathered: Default::default(),
        chunk: vec![0; 64 * 1024],
    })
}

impl Running {
    /// Gathers what git wrote so far without waiting; true once it closed its output (or the
    /// output cannot be read: [`Running::finish`] says why).
    pub(super) fn done(&mut self) -> bool {
        self.gather(Some(&Timespec::default())).unwrap_or(true)
    }

    /// Waits for git to close its output and exit, and parses what it wrote; then refreshes the
    /// index when git re-read more than [`REFRESH_AFTER`] of its entries (see [`refresh`]).
    pub(super) fn finish(mut self) -> Result<ChangeSet, GitError> {
        let gathered = self.gather(None);
        // git is waited for even when its output could not be read: no zombie is left.
        let status = self.child.wait().map_err(GitError::Spawn)?;
        gathered.map_err(GitError::Spawn)?;
        let [out, err] = &self.gathered;
        if !status.success() {
            return Err(GitError::Status {
                status,
                stderr: sanitize::line(&refresh::messages(err), MAX_STDERR_CHARS),
            });
        }
        let changes = parse(out)?;
        if refresh::stale_entries(err) >= REFRESH_AFTER {
            refresh::refresh(&self.repo, &self.program);
        }
        Ok(changes)
    }

    /// Reads the pipes as they become readable, until both are closed (true) or, with a
    /// timeout, until none is readable within it (false).
    fn gather(&mut self, timeout: Option<&Timespec>) -> io::Result<bool> {
        loop {
            // Which of the open pipes (in order) are readable, closed or in error.
            let mut ready = [false; 2];
            let mut fds: Vec<PollFd> = (self.pipes.iter().flatten())
                .map(|pipe| PollFd::new(pipe, PollFlags::IN))
                .collect();
            if fds.is_empty() {
                return Ok(true);
            }
            match poll(&mut fds, timeout) {
                Ok(0) => return Ok(false),
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            for (ready, fd) in ready.iter_mut().zip(&fds) {
                *ready = !fd.revents().is_empty();
            }
            let open =
                (self.pipes.iter_mut().zip(&mut self.gathered)).filter(|(pipe, _)| pipe.is_some());
            for ((pipe, gathered), _) in open.zip(ready).filter(|(_, ready)| *ready) {
                let Some(file) = pipe.as_mut() else {
                    continue;
                };
                match file.read(&mut self.chunk) {
                    Ok(0) => *pipe = None,
                    Ok(n) => gathered.extend_from_slice(&self.chunk[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
}

/// Parses `git status --porcelain=v2 -z --branch` output.
fn parse(output: &[u8]) -> Result<ChangeSet, GitError> {
    let mut oid: Option<Option<String>> = None;
    let mut branch: Option<Option<String>> = None;
    let mut collector = Collector::default();
    for record in output.split(|&b| b == 0) {
        let Some((&kind, rest)) = record.split_first() else {
            continue; // after the final NUL
        };
        match kind {
            b'#' => {
                let header = String::from_utf8_lossy(rest);
                let header = header.trim_start();
                if let Some(value) = header.strip_prefix("branch.oid ") {
                    oid = Some((value != "(initial)").then(|| value.to_owned()));
                } else if let Some(value) = header.strip_prefix("branch.head ") {
                    branch = Some((value != "(detached)").then(|| value.to_owned()));
                }
                // Other headers (upstream, ahead/behind, stash) carry nothing needed here.
            }
            b'1' => {
                let (xy, path) = fields(rest, 8, record)?;
                record_xy(&mut collector, xy, path, record)?;
            }
            b'u' => {
                let (_, path) = fields(rest, 10, record)?;
                collector.path(path).conflict = true;
            }
            b'?' => {
                // A nested repository is listed as `dir/`; gitoxide and every other record
                // spell paths without the slash.
                let (path, _) = fields(rest, 1, record)?;
                collector.path(path.strip_suffix(b"/").unwrap_or(path));
            }
            _ => return Err(unexpected("record", record)),
        }
    }
    let head = match (oid, branch) {
        (Some(None), Some(Some(name))) => Head::Unborn { name },
        (Some(Some(commit)), Some(Some(name))) => Head::Branch { name, commit },
        (Some(Some(commit)), Some(None)) => Head::Detached { commit },
        _ => {
            return Err(GitError::Parse(
                "missing or contradictory `# branch.oid` and `# branch.head` headers".to_owned(),
            ));
        }
    };
    Ok(collector.finish(head))
}

/// The first and the last of the `count` space-separated fields in `rest`, the part of `record`
/// after its type character. The last field is the path, which may itself contain spaces.
fn fields<'a>(
    rest: &'a [u8],
    count: usize,
    record: &[u8],
) -> Result<(&'a [u8], &'a [u8]), GitError> {
    let malformed = || unexpected("record", record);
    let rest = rest.strip_prefix(b" ").ok_or_else(malformed)?;
    // Counted as they come, not gathered: a change set may have tens of thousands of records.
    let mut parts = rest.splitn(count, |&b| b == b' ');
    let first = parts.next().ok_or_else(malformed)?;
    let (seen, last) = parts.fold((1, first), |(seen, _), part| (seen + 1, part));
    if seen == count && !last.is_empty() {
        Ok((first, last))
    } else {
        Err(malformed())
    }
}

/// Records the `XY` status of a tracked path: `X` is `HEAD` against the index, `Y` the index
/// against the worktree.
fn record_xy(
    collector: &mut Collector,
    xy: &[u8],
    path: &[u8],
    record: &[u8],
) -> Result<(), GitError> {
    let diff = |code: u8| match code {
        b'.' => Ok(None),
        b'A' => Ok(Some(Diff::Added)),
        b'M' | b'T' => Ok(Some(Diff::Modified)),
        b'D' => Ok(Some(Diff::Deleted)),
        _ => Err(unexpected("status code", record)),
    };
    let &[x, y] = xy else {
        return Err(unexpected("status code", record));
    };
    let state = collector.path(path);
    state.staged = diff(x)?;
    state.unstaged = diff(y)?;
    Ok(())
}

/// A [`GitError::Parse`] quoting (the start of) the offending record.
fn unexpected(what: &str, record: &[u8]) -> GitError {
    let shown: String = String::from_utf8_lossy(record).chars().take(80).collect();
    GitError::Parse(format!("unexpected {what} in {shown:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_core::changes::{Change, ChangeKind};

    const OID: &str = "0123456789abcdef0123456789abcdef01234567";

    fn change(path: &str, kind: ChangeKind, staged: bool) -> Change {
        Change {
            path: path.to_owned(),
            kind,
            staged,
            committed: false,
        }
    }

    fn parse_err(output: &[u8]) -> String {
        match parse(output) {
            Ok(set) => panic!("expected an error, parsed {set:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn parses_every_record_kind() {
        let mut out = Vec::new();
        for record in [
            format!("# branch.oid {OID}").as_bytes(),
            b"# branch.head main",
            b"# branch.upstream origin/main",
            b"# branch.ab +1 -0",
            b"1 MM N... 100644 100644 100644 aaaa bbbb src/both.rs",
            b"1 .M N... 100644 100644 100755 aaaa aaaa with space.sh",
            b"1 D. N... 100644 000000 000000 aaaa 0000 gone.txt",
            b"1 .D N... 100644 100644 000000 aaaa aaaa removed.txt",
            b"1 AD N... 000000 100644 000000 0000 aaaa added-then-removed",
            b"1 .A N... 000000 000000 100644 0000 0000 intent",
            b"1 .T N... 100644 100644 120000 aaaa aaaa now-a-link",
            b"u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflicted.txt",
            b"? caf\xe9.txt",
            b"? nested/",
            b"? new dir/file.txt",
        ] {
            out.extend_from_slice(record);
            out.push(0);
        }
        let set = parse(&out).expect("valid output");
        assert_eq!(
            set.head,
            Head::Branch {
                name: "main".to_owned(),
                commit: OID.to_owned()
            }
        );
        assert_eq!(
            set.changes,
            vec![
                change("added-then-removed", ChangeKind::Added, true),
                change("caf\u{fffd}.txt", ChangeKind::Untracked, false),
                change("conflicted.txt", ChangeKind::Modified, true),
                change("gone.txt", ChangeKind::Deleted, true),
                change("intent", ChangeKind::Added, false),
                change("nested", ChangeKind::Untracked, false),
                change("new dir/file.txt", ChangeKind::Untracked, false),
                change("now-a-link", ChangeKind::Modified, false),
                change("removed.txt", ChangeKind::Deleted, false),
                change("src/both.rs", ChangeKind::Modified, true),
                change("with space.sh", ChangeKind::Modified, false),
            ]
        );
        assert_eq!(set.non_utf8_paths, 1);
    }

    #[test]
    fn parses_unborn_and_detached_heads() {
        let unborn =
            parse(b"# branch.oid (initial)\0# branch.head main\0? a.txt\0").expect("unborn");
        assert_eq!(
            unborn.head,
            Head::Unborn {
                name: "main".to_owned()
            }
        );
        assert_eq!(
            unborn.changes,
            vec![change("a.txt", ChangeKind::Untracked, false)]
        );

        let detached = format!("# branch.oid {OID}\0# branch.head (detached)\0");
        let detached = parse(detached.as_bytes()).expect("detached");
        assert_eq!(
            detached.head,
            Head::Detached {
                commit: OID.to_owned()
            }
        );
        assert!(detached.is_empty());
    }

    #[test]
    fn rejects_malformed_output() {
        let head = format!("# branch.oid {OID}\0# branch.head main\0");
        for (output, needle) in [
            (String::new(), "headers"),
            ("# branch.head main\0".to_owned(), "headers"),
            (
                "# branch.oid (initial)\0# branch.head (detached)\0".to_owned(),
                "headers",
            ),
            (
                format!("{head}2 R. N... 100644 100644 100644 a b R100 new\0old\0"),
                "record",
            ),
            (
                format!("{head}1 XY N... 100644 100644 100644 a b path\0"),
                "status code",
            ),
            (
                format!("{head}1 M N... 100644 100644 100644 a b path\0"),
                "status code",
            ),
            (format!("{head}1 .M N... 100644\0"), "record"),
            (format!("{head}?\0"), "record"),
            (format!("{head}? \0"), "record"),
        ] {
            let message = parse_err(output.as_bytes());
            assert!(message.contains(needle), "{message:?} lacks {needle:?}");
            assert!(!message.contains('\n'), "{message:?} spans lines");
        }
    }
}
