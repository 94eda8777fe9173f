//! The version of `checkpoint`'s JSON outputs, the other half (with
//! [`exit_codes`](crate::exit_codes)) of what a script can rely on.

/// The version every versioned JSON output carries as its `schema_version` field: `checkpoint
/// check --json` (the event and the typed decision), `checkpoint doctor --json` (the report) and
/// `checkpoint task list --json` (the tasks). One number for all of them, so a script checks one
/// value whichever it reads.
///
/// It goes up by one on a breaking change to any of them: a field removed, renamed or changing
/// meaning or type. Adding a field is not breaking; a reader ignores the fields it does not know.
pub const SCHEMA_VERSION: u32 = 1;
