//! The exit statuses of `checkpoint`, one named constant each: what a script or CI job can rely
//! on, as cargo-nextest's `NextestExitCode` and jj's `command_error` document theirs.
//!
//! | status | constant | meaning |
//! |---|---|---|
//! | 0 | [`OK`] | done; `check`: the stop is allowed; `ci`: the pull request passed |
//! | 1 | [`NO`] | a "no", not an error: `check` blocks (a test command that cannot run too), `ci` fails the pull request, `validate` or `step done` did not pass, `receipts verify` or `verify` found something unverified, `diff --exit-code` found changed work, `doctor` found a problem, `push` left something off the remote, a `trust` or `integrity accept` prompt was declined |
//! | 2 | [`USAGE`] | the request is wrong: an argument (clap's own errors), a value, a payload, a task or step the journal refuses as asked |
//! | 2 | [`DEGRADED`] | `check` and `ci` only: the gate could not check everything (its own failure to run a test command); the decision is printed |
//! | 3 | [`SETUP`] | the project or the machine: no repository, a broken setting, state that cannot be read or written, git missing or stuck |
//! | 4 | [`BUG`] | checkpoint itself |
//!
//! An error (2 [`USAGE`], 3 [`SETUP`], 4 [`BUG`]) prints `error:` on stderr (checkpoint's own
//! add a `hint:`) and nothing on stdout; its status is its [`ErrorKind`](crate::ErrorKind)'s.
//! The hidden `git-hook` and `statusline` commands always exit 0: they run inside git and Claude
//! Code, which must not see them fail.
//!
//! Why these numbers: 0 and 1 are the shell's yes and no. 2 is clap's usage error, so a bad
//! argument gets one status whether clap or checkpoint finds it. 3 and 4 are the next free ones,
//! ordered from the user's problem to ours; they stay below the codes the shell gives meanings of
//! its own (126 cannot execute, 127 not found, 128 + N killed by signal N, 255 out of range) so a
//! script never mistakes one for the other. They are not the `sysexits.h` codes (64 to 78): with
//! the usage error at clap's 2, borrowing the others from there would mix two conventions.
//!
//! The JSON outputs' version is [`SCHEMA_VERSION`](crate::schema::SCHEMA_VERSION).

/// Done; `checkpoint check`: the stop is allowed. The commands return it as
/// [`ExitCode::SUCCESS`](std::process::ExitCode::SUCCESS).
pub const OK: u8 = 0;

/// A "no", not an error: the command worked and its answer is no (a block, a validation that did
/// not pass, a receipt or commit that does not verify, changed work under `diff --exit-code`, a
/// `doctor` problem, a push that left something behind, a declined prompt).
pub const NO: u8 = 1;

/// A usage error ([`ErrorKind::Usage`](crate::ErrorKind::Usage)): the request is wrong and asking
/// differently fixes it. 2 because clap exits 2 on the usage errors it finds itself.
pub const USAGE: u8 = 2;

/// `checkpoint check` and `checkpoint ci` only: the gate could not check everything (it
/// failed to run a test command: its own failure, not the project's — a test command that
/// cannot run blocks, [`NO`]); the decision is printed and a hint says what to do. Not an error, so not
/// an [`ErrorKind`](crate::ErrorKind): it keeps the 2 it always had (the gate's own docs say
/// so), and a script tells it from [`USAGE`] by its stdout, which holds the decision.
pub const DEGRADED: u8 = 2;

/// A setup error ([`ErrorKind::Setup`](crate::ErrorKind::Setup)): the project or the machine
/// keeps the command from working, and a person fixes it as the hint says.
pub const SETUP: u8 = 3;

/// A bug ([`ErrorKind::Bug`](crate::ErrorKind::Bug)): checkpoint itself went wrong.
pub const BUG: u8 = 4;

/// The table, as `checkpoint --help` (and the manual page) ends with it.
pub(crate) const HELP: &str = "\
Exit status:
  0  done; check: the stop is allowed; ci: the pull request passed
  1  a \"no\": check blocks, ci fails, a validation or verification did not pass, diff --exit-code
     found changed work, doctor found a problem, push left something behind
  2  a usage error; check, ci: not everything could be checked
  3  a setup problem of the project or the machine (e.g. not in a git repository)
  4  a bug in checkpoint";
