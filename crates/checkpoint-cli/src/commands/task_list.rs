//! `checkpoint task list`: every task of the project with its id (what `--task` takes), newest
//! update first, the active one marked.

use std::process::ExitCode;

use checkpoint_core::journal::Task;
use checkpoint_engine::continuity::text;
use checkpoint_engine::journal::Journal;
use jiff::Timestamp;
use serde::Serialize;

use crate::error::CliError;
use crate::{output, schema};

/// Options of `checkpoint task list`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print JSON: {schema_version, tasks: [{id, name, state, active, current_step?,
    /// updated_at}], unreadable: [{id, error}]}.
    #[arg(long)]
    json: bool,
}

/// `task list --json`.
#[derive(Debug, Serialize)]
struct Listing {
    schema_version: u32,
    tasks: Vec<Entry>,
    unreadable: Vec<Unreadable>,
}

/// One task in the list.
#[derive(Debug, Serialize)]
struct Entry {
    id: String,
    name: String,
    state: &'static str,
    /// Whether it is the active task (the one commands use without `--task`).
    active: bool,
    current_step: Option<CurrentStep>,
    updated_at: Timestamp,
}

/// The step a task is at: its name and place (1-based) among the task's steps.
#[derive(Debug, Serialize)]
struct CurrentStep {
    name: String,
    number: usize,
    of: usize,
}

/// A task directory whose record cannot be read.
#[derive(Debug, Serialize)]
struct Unreadable {
    id: String,
    error: String,
}

impl Entry {
    fn new(task: &Task, active: bool) -> Entry {
        let current_step = task
            .current_step
            .zip(task.current())
            .map(|(index, step)| CurrentStep {
                name: step.name.clone(),
                number: index + 1,
                of: task.steps.len(),
            });
        Entry {
            id: task.id.clone(),
            name: task.name.clone(),
            state: task.state.name(),
            active,
            current_step,
            updated_at: task.updated_at,
        }
    }

    /// The text row's cells: marker and id, state, step, age, name.
    fn cells(&self, now: Timestamp) -> [String; 5] {
        let marker = if self.active { '*' } else { ' ' };
        let step = self.current_step.as_ref().map_or_else(
            || "-".to_owned(),
            |s| format!("{} ({} of {})", s.name, s.number, s.of),
        );
        [
            format!("{marker} {}", self.id),
            self.state.to_owned(),
            step,
            format!("updated {}", text::ago(self.updated_at, now)),
            self.name.clone(),
        ]
    }
}

impl Unreadable {
    /// The text row's cells: the id, `unreadable`, no step or age, and why in the name's place.
    fn cells(&self) -> [String; 5] {
        [
            format!("  {}", self.id),
            "unreadable".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
            output::one_line(&self.error),
        ]
    }
}

/// `checkpoint task list [--json]`, of the tasks in `journal` at `now`.
pub(crate) fn run(journal: &Journal, now: Timestamp, args: &Args) -> Result<ExitCode, CliError> {
    let listing = list(journal)?;
    if args.json {
        output::json(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 5]> = (listing.tasks.iter().map(|t| t.cells(now)))
        .chain(listing.unreadable.iter().map(Unreadable::cells))
        .collect();
    let mut lines = table(&rows);
    if lines.is_empty() {
        lines.push("No tasks. Start one with `checkpoint task start NAME --steps a,b,c`.".into());
    } else if listing.tasks.iter().any(|t| t.active) {
        lines.push("(* the active task)".into());
    }
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// Every task, newest update first; the active one is the unfinished task `active.json` names.
fn list(journal: &Journal) -> Result<Listing, CliError> {
    let active = journal.active()?.map(|t| t.id);
    let mut tasks = Vec::new();
    let mut unreadable = Vec::new();
    for id in journal.task_ids()? {
        match journal.load(&id) {
            Ok(task) => tasks.push(Entry::new(&task, active.as_deref() == Some(id.as_str()))),
            Err(e) => unreadable.push(Unreadable {
                id,
                error: e.to_string(),
            }),
        }
    }
    tasks.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
    Ok(Listing {
        schema_version: schema::SCHEMA_VERSION,
        tasks,
        unreadable,
    })
}

/// The rows as lines of columns padded to their widest cell (the last, the name, is not padded).
fn table(rows: &[[String; 5]]) -> Vec<String> {
    let mut widths = [0; 5];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    line.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
                }
            }
            line
        })
        .collect()
}
