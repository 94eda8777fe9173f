//! Times what keeping state in our refs costs: each operation runs alternately against a state
//! directory alone (the baseline) and against the same kind of directory cached from a ref of
//! the repository (see `checkpoint_engine::travel`), and the medians are printed with their ratio.
//! Used by `bench/travel.sh`.
//!
//! ```text
//! cargo run --release -p checkpoint-engine --example travel -- [DIR] [ROUNDS]
//! ```
//!
//! The operations: a session checkpoint saved (the worktree's changes were captured before, their
//! contents kept), a task update (a note: `hook.json` and `hook.md` rewritten), and a read of the latest
//! checkpoint (what every hook that looks at the log pays: the ref is looked up to see whether
//! the cache holds it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use checkpoint_core::event::Agent;
use checkpoint_core::journal::{StepSpec, Trigger};
use checkpoint_core::policy::{GitBackend, Policy};
use checkpoint_engine::continuity::{Continuity, SessionCheckpoint, SessionRef};
use checkpoint_engine::git::{self, Repo};
use checkpoint_engine::journal::Journal;

/// One way of keeping the state: with or without the repository's refs.
struct Side {
    continuity: Continuity,
    journal: Journal,
    task: String,
    times: [Vec<Duration>; 3],
}

impl Side {
    fn new(repo: &Repo, state: &Path, refs: bool) -> Result<Side, String> {
        let in_repo = refs.then(|| repo.clone());
        let journal = Journal::new(
            state.to_owned(),
            repo.workdir.clone(),
            in_repo.clone(),
            Policy::builtin(),
            None,
        );
        let steps = vec![StepSpec {
            name: "a".to_owned(),
            validate: None,
        }];
        let task = journal
            .start_task("bench", steps, jiff::Timestamp::now())
            .map_err(|e| e.to_string())?;
        Ok(Side {
            continuity: Continuity::new(state).in_repo(in_repo),
            journal,
            task: task.id,
            times: Default::default(),
        })
    }

    fn round(&mut self, repo: &Repo, n: usize) -> Result<(), String> {
        let changes = git::changes(repo, GitBackend::Auto).map_err(|e| e.to_string())?;
        let (files, more_files) = (self.continuity)
            .capture(&repo.workdir, &changes)
            .map_err(|e| e.to_string())?;
        let draft = SessionCheckpoint {
            id: 0,
            trigger: Trigger::Manual,
            at: jiff::Timestamp::now(),
            session: SessionRef {
                agent: Agent::Claude,
                id: "bench".to_owned(),
            },
            detail: Some(format!("round {n}")),
            context: None,
            summary: None,
            head: changes.head.commit().map(str::to_owned),
            files,
            more_files,
            task: None,
            progress: Vec::new(),
            unresolved: None,
            signature: None,
        };
        let started = Instant::now();
        self.continuity.save(draft).map_err(|e| e.to_string())?;
        self.times[0].push(started.elapsed());

        let started = Instant::now();
        (self.journal)
            .update(&self.task, |t| {
                t.note(Some(format!("round {n}")));
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        self.times[1].push(started.elapsed());

        let started = Instant::now();
        self.continuity.latest(None).map_err(|e| e.to_string())?;
        self.times[2].push(started.elapsed());
        Ok(())
    }
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn run(dir: &Path, rounds: usize) -> Result<String, String> {
    let repo = git::discover(dir)
        .map_err(|e| e.to_string())?
        .ok_or("not inside a git repository")?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut local = Side::new(&repo, &scratch.path().join("local"), false)?;
    let mut refs = Side::new(&repo, &scratch.path().join("refs"), true)?;
    for n in 0..rounds {
        local.round(&repo, n)?;
        refs.round(&repo, n)?;
    }
    let mut out = String::from(
        "| operation | state dir alone, ms | with refs, ms | × |\n|---|---:|---:|---:|\n",
    );
    let names = [
        "session checkpoint saved",
        "task updated",
        "latest checkpoint read",
    ];
    for (i, name) in names.iter().enumerate() {
        let (a, b) = (median(&mut local.times[i]), median(&mut refs.times[i]));
        out.push_str(&format!("| {name} | {a:.2} | {b:.2} | {:.2} |\n", b / a));
    }
    // The bench's task refs are not the user's: remove them again.
    let stream = checkpoint_engine::travel::stream::Stream::task(&repo, &refs.task)
        .map_err(|e| e.to_string())?;
    if let Some(head) = stream.head().map_err(|e| e.to_string())? {
        stream.delete(head).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    match run(&dir, rounds) {
        Ok(table) => {
            // Printing is best effort; the exit code carries a failure either way.
            let _ = write!(std::io::stdout(), "{table}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "travel: {err}");
            ExitCode::FAILURE
        }
    }
}
