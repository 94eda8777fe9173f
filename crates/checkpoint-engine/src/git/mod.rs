//! Reading what changed from git: finding the repository around a working directory and listing
//! every path that differs from `HEAD` (staged, unstaged and untracked, ignored files excluded).
//!
//! Two backends produce the same [`ChangeSet`]:
//!
//! - [`GitBackend::Cli`] spawns `git status --porcelain=v2 -z` once and parses its records; with
//!   [`start`], the caller works on while git runs and gathers its output as it comes.
//! - [`GitBackend::Gix`] runs gitoxide's status in-process and needs no `git` binary.
//!
//! [`GitBackend::Auto`] picks the CLI whenever a `git` executable is on `PATH`: on the reference
//! machine it is about twice as fast as gitoxide on a 20k-file repository (see `bench/README.md`).
//!
//! Both backends report paths without rename detection (a rename is a delete plus an add), list
//! every untracked file rather than collapsed directories, and report a submodule as one path
//! when its checked-out commit moved or it has changes of its own (its files are not listed; see
//! [`crate::cache::change_fingerprint`] for how its content counts). Neither takes
//! `index.lock` while it reads: the CLI runs with `--no-optional-locks` and gitoxide never writes
//! the index. After a CLI read that found many stale entries, the index is refreshed when its
//! lock is free (`refresh`).
//!
//! [`discover`] uses gitoxide in both cases (about 0.2 ms, the repository's own configuration
//! only); the [`Repo`] it returns keeps that handle for every later read of our refs and objects.
//! A `.git` that discovery would pass over because it is damaged (for example a corrupt `HEAD`)
//! is reported as [`GitError::Invalid`] instead of silently falling through to a parent
//! repository or to "no repository".

pub mod base;
pub mod call;
mod cli;
mod gitoxide;
mod refresh;
pub mod tree;

pub(crate) use gitoxide::{file_names, small_blobs};
#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, OnceLock};

use checkpoint_core::changes::{Change, ChangeKind, ChangeSet, Head, RepoFacts};
use checkpoint_core::policy::GitBackend;
use checkpoint_core::sanitize;

/// A repository found around a working directory.
#[derive(Clone)]
pub struct Repo {
    /// The root of the working tree.
    pub workdir: PathBuf,
    /// The git directory of this worktree: `<workdir>/.git` for a main worktree,
    /// `<common>/worktrees/<name>` for a linked one.
    pub git_dir: PathBuf,
    /// The repository as gitoxide opened it, shared by every clone: opened once per process.
    opened: Arc<OnceLock<gix::ThreadSafeRepository>>,
}

impl Repo {
    /// The repository with this worktree and git directory, not opened yet.
    pub fn new(workdir: PathBuf, git_dir: PathBuf) -> Repo {
        Repo {
            workdir,
            git_dir,
            opened: Arc::default(),
        }
    }

    /// The root of the repository's main worktree when this is a linked one (`git worktree
    /// add`): its git directory is `<main>/.git/worktrees/<name>`. `None` for a main worktree
    /// and for a bare repository's worktrees.
    pub fn main_workdir(&self) -> Option<PathBuf> {
        let worktrees = self.git_dir.parent()?;
        if worktrees.file_name()? != "worktrees" {
            return None;
        }
        let common = worktrees.parent()?;
        (common.file_name()? == ".git").then(|| common.parent().map(Path::to_path_buf))?
    }

    /// The repository opened with no configuration from outside it (the user's and the
    /// system's git configuration say nothing about reading and writing our refs and objects):
    /// by [`discover`], or by the first call on this repository or a clone of it.
    pub(crate) fn isolated(&self) -> Result<gix::Repository, gix::Error> {
        if let Some(opened) = self.opened.get() {
            return Ok(opened.to_thread_local());
        }
        let opened = gix::ThreadSafeRepository::open_opts(&self.git_dir, isolated())?;
        Ok(self.opened.get_or_init(|| opened).to_thread_local())
    }
}

impl PartialEq for Repo {
    fn eq(&self, other: &Repo) -> bool {
        (self.workdir == other.workdir) && (self.git_dir == other.git_dir)
    }
}

impl Eq for Repo {}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("Repo"))
            .field("workdir", &self.workdir)
            .field("git_dir", &self.git_dir)
            .finish_non_exhaustive()
    }
}

/// How checkpoint opens a repository: with its own configuration only.
fn isolated() -> gix::open::Options {
    gix::open::Options::isolated()
}

/// Why the repository could not be found or read. Every message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// The working directory could not be made absolute.
    #[error("{}: {source}", path.display())]
    Cwd {
        /// The directory as given.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A `.git` exists but is not a usable repository, e.g. its `HEAD` is corrupt.
    #[error("{}: not a valid git repository: {reason}", path.display())]
    Invalid {
        /// The `.git` directory or file.
        path: PathBuf,
        /// What gitoxide said, on one line.
        reason: String,
    },
    /// The repository is bare: there is no working tree to compare with `HEAD`.
    #[error("{}: bare repository, no working tree to check", git_dir.display())]
    Bare {
        /// The repository's git directory.
        git_dir: PathBuf,
    },
    /// A gitoxide operation failed.
    #[error("cannot {action}: {reason}")]
    Gix {
        /// What was being done, e.g. `read the index`.
        action: &'static str,
        /// What gitoxide said, on one line.
        reason: String,
    },
    /// The `git` executable could not be started.
    #[error("cannot run git: {0}")]
    Spawn(#[source] io::Error),
    /// `git status` exited unsuccessfully.
    #[error("git status failed ({status}): {stderr}")]
    Status {
        /// How it exited.
        status: ExitStatus,
        /// Its standard error, on one line.
        stderr: String,
    },
    /// `git status` printed something that is not porcelain v2 as requested.
    #[error("unexpected git status output: {0}")]
    Parse(String),
}

/// Finds the repository whose working tree contains `cwd`.
///
/// Returns `Ok(None)` when `cwd` is not inside any repository. A bare repository is an error
/// ([`GitError::Bare`]): it has no working tree whose changes could be checked. So is a damaged
/// `.git` between `cwd` and the repository discovery settled on ([`GitError::Invalid`]).
///
/// The working tree is the directory the `.git` was found in (a linked worktree's own), never
/// one the repository's configuration names instead (`core.worktree`), nor none because it says
/// `core.bare`: whoever can write `.git/config` could otherwise point the gate at a clean copy
/// of the project, and every stop would find nothing changed.
pub fn discover(cwd: &Path) -> Result<Option<Repo>, GitError> {
    let cwd = std::path::absolute(cwd).map_err(|source| GitError::Cwd {
        path: cwd.to_owned(),
        source,
    })?;
    // Found by the layout alone; the configuration is read by the open.
    let found = match gix::discover::upwards_opts(&cwd, Default::default()) {
        Ok((path, trust)) => Some((path.into_repository_and_work_tree_directories(), trust)),
        Err(err) if is_no_repository(&err) => None,
        Err(err) => return Err(gix_error("discover the repository")(err)),
    };
    let (repo, workdir) = match (found, nearest_dot_git(&cwd)) {
        (Some((found, _)), Some(dot_git)) if passed_over(&found, &dot_git) => {
            open_dot_git(dot_git)?
        }
        (Some(((git_dir, workdir), trust)), _) => {
            // Discovery reads the repository's own configuration only, as every later open
            // does; the ownership it judged is not judged again.
            let repo = gix::ThreadSafeRepository::open_opts(&git_dir, isolated().with(trust))
                .map_err(gix_error("discover the repository"))?;
            (repo, workdir)
        }
        (None, Some(dot_git)) => open_dot_git(dot_git)?,
        (None, None) => return Ok(None),
    };
    let Some(workdir) = workdir else {
        return Err(GitError::Bare {
            git_dir: repo.git_dir().to_owned(),
        });
    };
    Ok(Some(Repo {
        workdir,
        git_dir: repo.git_dir().to_owned(),
        opened: Arc::new(OnceLock::from(repo)),
    }))
}

/// Lists every path of `repo` that differs from `HEAD`, with the given backend.
pub fn changes(repo: &Repo, backend: GitBackend) -> Result<ChangeSet, GitError> {
    start(repo, backend).changes()
}

/// Starts listing the paths of `repo` that differ from `HEAD`: with the CLI backend, `git
/// status` runs from here on, and the caller may do other work before it waits for the list
/// on any thread ([`Started::changes`]).
pub fn start(repo: &Repo, backend: GitBackend) -> Started<'_> {
    let found = find_git(&std::env::var_os("PATH").unwrap_or_default());
    let use_cli = match backend {
        GitBackend::Cli => true,
        GitBackend::Gix => false,
        GitBackend::Auto => found.is_some(),
    };
    Started(if use_cli {
        // Run as found here, not searched for again by the exec (a relative directory on `PATH`
        // is left to the exec).
        let program = (found.filter(|git| git.is_absolute())).unwrap_or_else(|| GIT_EXE.into());
        Backend::Cli(cli::start(repo, &program))
    } else {
        Backend::Gix(repo)
    })
}

/// A listing of changes that [`start`] started.
#[derive(Debug)]
pub struct Started<'a>(Backend<'a>);

/// How a [`Started`] listing runs.
#[derive(Debug)]
enum Backend<'a> {
    /// `git status` runs, or could not be started.
    Cli(Result<cli::Running, GitError>),
    /// gitoxide reads the status when asked.
    Gix(&'a Repo),
}

impl Started<'_> {
    /// Whether the listing is done, or could be done now without waiting: the output `git
    /// status` wrote so far is gathered (call this every so often while doing other work). A
    /// gitoxide listing runs only when asked for the changes, so it is always ready.
    pub fn done(&mut self) -> bool {
        match &mut self.0 {
            Backend::Cli(Ok(running)) => running.done(),
            Backend::Cli(Err(_)) | Backend::Gix(_) => true,
        }
    }

    /// The paths that differ from `HEAD`, once the listing is done.
    pub fn changes(self) -> Result<ChangeSet, GitError> {
        match self.0 {
            Backend::Cli(running) => running?.finish(),
            Backend::Gix(repo) => gitoxide::changes(repo),
        }
    }

    /// The change set as the gate's facts: any error becomes [`RepoFacts::Unreadable`] with a
    /// one-line reason.
    pub fn facts(self) -> RepoFacts {
        self.changes()
            .map_or_else(|err| unreadable(&err), RepoFacts::Changes)
    }
}

/// A git error as the gate's facts: the repository is there but cannot be judged.
pub fn unreadable(err: &GitError) -> RepoFacts {
    RepoFacts::Unreadable {
        reason: sanitize::line(&err.to_string(), sanitize::ERROR_CHARS),
    }
}

/// Whether a discovery error only says that no repository exists.
fn is_no_repository(err: &gix::Error) -> bool {
    use gix::discover::upwards::Error;
    err.downcast_any_ref::<Error>().is_some_and(|err| {
        matches!(
            err,
            Error::NoGitRepository { .. }
                | Error::NoGitRepositoryWithinCeiling { .. }
                | Error::NoGitRepositoryWithinFs { .. }
        )
    })
}

/// The `.git` (directory or file) closest to `cwd`, if any.
fn nearest_dot_git(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .map(|dir| dir.join(".git"))
        .find(|dot_git| dot_git.symlink_metadata().is_ok())
}

/// Whether discovery settled on a repository (its git directory and working tree, as
/// [`discover`] found them) above `dot_git`, i.e. skipped it as invalid.
fn passed_over((git_dir, workdir): &(PathBuf, Option<PathBuf>), dot_git: &Path) -> bool {
    let root = workdir.as_deref().unwrap_or(git_dir);
    match (
        dot_git.parent().map(Path::canonicalize),
        root.canonicalize(),
    ) {
        (Some(Ok(dir)), Ok(root)) => dir != root && dir.starts_with(&root),
        _ => false,
    }
}

/// Opens the repository at `dot_git` directly, so that its error says what is wrong with it;
/// its working tree is the directory that holds `dot_git`.
fn open_dot_git(
    dot_git: PathBuf,
) -> Result<(gix::ThreadSafeRepository, Option<PathBuf>), GitError> {
    match gix::ThreadSafeRepository::open_opts(&dot_git, isolated()) {
        Ok(repo) => Ok((repo, dot_git.parent().map(Path::to_path_buf))),
        Err(err) => Err(GitError::Invalid {
            reason: describe(&err),
            path: dot_git,
        }),
    }
}

/// Options every git process checkpoint starts gets before its subcommand, so that the
/// repository's own configuration cannot make a read run a program: `core.fsmonitor` names a
/// hook that `git status` (and other index reads) would run as the user. Diffs are taken with
/// `--no-ext-diff --no-textconv` and list names only.
///
/// The gix backend never runs an fsmonitor: gitoxide reads no `core.fsmonitor` and decodes the
/// index's fsmonitor extension as data only. Neither backend can switch off a clean filter
/// (`filter.<driver>.clean` named in `.git/config` and `.gitattributes`), which git and gix run
/// on a file whose stat data changed; only whoever can write `.git/config` can set one.
pub const SAFE_CONFIG: [&str; 2] = ["-c", "core.fsmonitor=false"];

/// The file name of the git executable.
const GIT_EXE: &str = if cfg!(windows) { "git.exe" } else { "git" };

/// The executable `git` in the first of the directories of `path` (a `PATH` value) that has one.
/// Looks at the file system only; spawns nothing.
fn find_git(path: &OsStr) -> Option<PathBuf> {
    crate::runner::on_path(GIT_EXE, path)
}

/// Maps a gitoxide error to [`GitError::Gix`] for `action`.
fn gix_error(action: &'static str) -> impl FnOnce(gix::Error) -> GitError {
    move |err| GitError::Gix {
        action,
        reason: describe(&err),
    }
}

/// A gitoxide error and its causes on one line, outermost first, without repeats.
fn describe(err: &gix::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.iter_errors() {
        let text = sanitize::line(&cause.to_string(), sanitize::ERROR_CHARS);
        if !text.is_empty() && !parts.contains(&text) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// How one side of a comparison differs for a path: `HEAD` against the index, or the index
/// against the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Diff {
    /// Present on the right side only (an intent-to-add entry, on the worktree side).
    Added,
    /// Present on both sides with different content, mode or type.
    Modified,
    /// Present on the left side only.
    Deleted,
}

/// What the backends report about one path, before it becomes a [`Change`]. A path with no
/// difference recorded on either side was reported as untracked.
#[derive(Debug, Default, Clone, Copy)]
struct PathState {
    /// `HEAD` against the index: the staged part.
    staged: Option<Diff>,
    /// The index against the worktree: the unstaged part.
    unstaged: Option<Diff>,
    /// The path has unresolved merge conflicts.
    conflict: bool,
}

impl PathState {
    fn change(self, path: String) -> Change {
        let Self {
            staged,
            unstaged,
            conflict,
        } = self;
        let either = |diff| staged == Some(diff) || unstaged == Some(diff);
        let kind = if conflict {
            ChangeKind::Modified
        } else if staged.is_none() && unstaged.is_none() {
            ChangeKind::Untracked
        } else if either(Diff::Added) {
            ChangeKind::Added
        } else if either(Diff::Deleted) {
            ChangeKind::Deleted
        } else {
            ChangeKind::Modified
        };
        Change {
            path,
            kind,
            staged: conflict || staged.is_some(),
            committed: false,
        }
    }
}

/// Gathers the per-path reports of a backend, keyed by the raw path bytes, and turns them into
/// one [`Change`] per path. Reports are appended as they come (a change set may hold tens of
/// thousands of paths, git lists them sorted) and put in order once, at the end.
#[derive(Debug, Default)]
struct Collector {
    paths: Vec<(Vec<u8>, PathState)>,
}

impl Collector {
    /// The state of `path`, to be filled in: a new report, merged at the end with any other of
    /// the same path (a state with no difference recorded is an untracked path).
    fn path(&mut self, path: &[u8]) -> &mut PathState {
        self.paths.push((path.to_vec(), PathState::default()));
        &mut self.paths.last_mut().expect("just pushed").1
    }

    /// The finished change set, sorted by path; non-UTF-8 paths are converted lossily and
    /// counted. A path reported more than once has what each report recorded, the later one
    /// winning where both did.
    fn finish(mut self, head: Head) -> ChangeSet {
        // Stable: reports of one path stay in the order they came.
        self.paths.sort_by(|(a, _), (b, _)| a.cmp(b));
        self.paths.dedup_by(|(path, later), (kept, was)| {
            let same = path == kept;
            if same {
                was.staged = later.staged.or(was.staged);
                was.unstaged = later.unstaged.or(was.unstaged);
                was.conflict |= later.conflict;
            }
            same
        });
        let mut non_utf8_paths = 0;
        let mut changes: Vec<Change> = (self.paths.into_iter())
            .map(|(bytes, state)| {
                let path = String::from_utf8(bytes).unwrap_or_else(|err| {
                    non_utf8_paths += 1;
                    String::from_utf8_lossy(err.as_bytes()).into_owned()
                });
                state.change(path)
            })
            .collect();
        changes.sort();
        ChangeSet {
            head,
            changes,
            non_utf8_paths,
        }
    }
}
