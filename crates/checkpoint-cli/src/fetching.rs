//! Fetch on demand: `resume`, `log`, `status`, `receipts` and `verify` read what is here, and when
//! what they need is missing (see each command) fetch the checkpoint refs from the remote and read
//! again; `--fetch` fetches first. A fetch that fails (offline, a timeout) is one line on stderr,
//! and the command goes on with what is here.

use checkpoint_core::journal::Task;
use checkpoint_engine::journal::JournalError;
use checkpoint_engine::project::Project;

use crate::args::{FetchArgs, ReadArgs};
use crate::error::CliError;
use crate::output;

/// `read()` of what is here; with `args.fetch`, after a fetch; else, when `missing` holds for
/// what it found, fetched and read again (when the fetch moved a ref).
pub(crate) fn read<T>(
    project: &Project,
    args: FetchArgs,
    read: impl Fn() -> Result<T, CliError>,
    missing: impl Fn(&T) -> bool,
) -> Result<T, CliError> {
    if args.fetch {
        fetch(project);
        return read();
    }
    let found = read()?;
    if missing(&found) && fetch(project) {
        return read();
    }
    Ok(found)
}

/// Fetches the checkpoint refs, telling the user on stderr what did not come; whether any moved.
fn fetch(project: &Project) -> bool {
    let outcome = project.fetch_checkpoints();
    if let Some(note) = outcome.note() {
        output::note(&note);
    }
    outcome.updated_any()
}

/// The task `args` names (default: the active one) as the journal resolves it; fetched (see
/// [`read`]) when it is not here: a named task that is not here, or no active task.
pub(crate) fn task(
    project: &Project,
    args: &ReadArgs,
) -> Result<Result<Task, JournalError>, CliError> {
    let journal = project.journal();
    read(
        project,
        args.fetch,
        || Ok(journal.resolve(args.task.as_deref())),
        |found| {
            matches!(
                found,
                Err(JournalError::NoSuchTask(_) | JournalError::NoActiveTask)
            )
        },
    )
}
