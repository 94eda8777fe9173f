//! `checkpoint history`: how many past completion claims had a passing test behind them, from the
//! agents' transcripts already on this machine — per agent, per [`Verification`] and per what the
//! gate said at those turns (from this worktree's session records). Counts only: no text of a
//! transcript is printed. `checkpoint report` shows the same counts ([`gather`]).

use std::fmt::Write as _;
use std::process::ExitCode;

use checkpoint_core::claim_history::{ByGate, ByVerification, History, Tally};
use checkpoint_core::claims::default_claims;
use checkpoint_core::home::AgentHome;
use checkpoint_core::policy::Interval;
use checkpoint_engine::claim_history::{self, Only, Source};
use checkpoint_engine::project::Project;
use clap::builder::PossibleValuesParser;
use jiff::Timestamp;
use serde::Serialize;

use crate::error::CliError;
use crate::install::AgentSpec;
use crate::schema::SCHEMA_VERSION;
use crate::{agents, output, project};

/// Options of `checkpoint history`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only turns that ended in the last DURATION (`90m`, `2h`, `30d`).
    #[arg(long, value_name = "DURATION")]
    since: Option<Interval>,
    /// Only this agent's transcripts.
    #[arg(long, value_parser = PossibleValuesParser::new(agents::possible_values()))]
    agent: Option<String>,
    /// Print the counts as JSON (with its `schema_version`).
    #[arg(long)]
    json: bool,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Printed<'a> {
    schema_version: u32,
    #[serde(flatten)]
    history: &'a History,
}

/// `checkpoint history`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    // Outside a project the transcripts are still read; only the gate's records are missing.
    let project = project::open().ok();
    let now = project.as_ref().map_or_else(Timestamp::now, |p| p.host.now);
    let since = (args.since)
        .map(|Interval(back)| now.saturating_sub(back))
        .transpose()
        .map_err(|e| CliError::usage(format!("--since: {e}"), "give a shorter duration"))?;
    let homes: Vec<&'static dyn AgentHome> = match args.agent.as_deref() {
        Some(name) => agents::named(name).into_iter().collect(),
        None => agents::HOMES.to_vec(),
    };
    let history = gather(project.as_ref(), &homes, since, None);
    if args.json {
        output::json(&Printed {
            schema_version: SCHEMA_VERSION,
            history: &history,
        })?;
    } else {
        output::bytes(text(&history).as_bytes());
    }
    Ok(ExitCode::SUCCESS)
}

/// The counts over the transcripts of `homes`' agents written since `since` (of the sessions in
/// `only`, when given), joined to the stops `project` recorded (none outside a project), with
/// its completion phrases (`stop.claims`, else the defaults). An agent whose directory cannot be found (no home directory) is left out with a
/// warning; an agent that keeps no transcript the gate reads (OpenCode) is not listed.
pub(crate) fn gather(
    project: Option<&Project>,
    homes: &[&'static dyn AgentHome],
    since: Option<Timestamp>,
    only: Only<'_>,
) -> History {
    let phrases = project.map_or_else(default_claims, |p| p.policy.stop.claims.clone());
    let stops = project
        .map(|p| claim_history::recorded_stops(&p.sessions()))
        .transpose()
        .unwrap_or_else(|e| {
            output::warning(&format!("the session records: {e}"));
            None
        })
        .unwrap_or_default();
    let sources: Vec<Source<'_>> = (homes.iter())
        .filter_map(|home| {
            let format = home.transcript()?;
            let files = format.files()?;
            let spec = AgentSpec::of(*home)?;
            let dir = spec
                .user_config_dir()
                .map_err(|e| output::warning(&format!("{}: {}", spec.name(), e.message)))
                .ok()?;
            Some(Source {
                agent: home.agent(),
                format,
                files,
                dir: dir.join(files.dir),
            })
        })
        .collect();
    claim_history::history(&sources, &stops, &phrases, since, only)
}

/// The share of `part` in `whole`, in whole percent ("–" of nothing).
fn percent(part: u64, whole: u64) -> String {
    match (part * 100 + whole / 2).checked_div(whole) {
        Some(share) => format!("{share} %"),
        None => "–".to_owned(),
    }
}

/// Claims without a passing test after their last edit.
fn unverified(v: &ByVerification) -> u64 {
    v.stale + v.failed + v.never_ran
}

/// The counts as `checkpoint history` prints them: two tables (the claims by how tests backed
/// them, then by what the gate said), each with a row per agent and the total.
pub(crate) fn text(history: &History) -> String {
    let mut out = String::new();
    let period = match history.since {
        Some(since) => format!(
            "turns that ended since {}",
            since.strftime("%Y-%m-%d %H:%M UTC")
        ),
        None => "every turn on record".to_owned(),
    };
    let _ = writeln!(
        out,
        "Completion claims after an edit, from the agents' transcripts ({period}):"
    );
    let rows: Vec<(&str, &Tally)> = (history.agents.iter())
        .map(|a| (a.agent.name(), &a.tally))
        .chain([("total", &history.total)])
        .collect();
    let _ = writeln!(
        out,
        "\n{:<9} {:>8} {:>6} {:>6} {:>8} {:>5} {:>6} {:>9} {:>10}",
        "agent",
        "sessions",
        "turns",
        "claims",
        "verified",
        "stale",
        "failed",
        "never ran",
        "unverified"
    );
    for (name, t) in &rows {
        let v = &t.verification;
        let _ = writeln!(
            out,
            "{name:<9} {:>8} {:>6} {:>6} {:>8} {:>5} {:>6} {:>9} {:>10}",
            t.sessions,
            t.turns,
            t.claims,
            v.verified,
            v.stale,
            v.failed,
            v.never_ran,
            percent(unverified(v), t.claims)
        );
    }
    let _ = writeln!(
        out,
        "\n{:<9} {:>9} {:>7} {:>7} {:>5} {:>6}",
        "the gate", "not gated", "allowed", "blocked", "fixed", "capped"
    );
    for (name, t) in &rows {
        let ByGate {
            not_gated,
            allowed,
            blocked,
            fixed,
            capped,
        } = t.gate;
        let _ = writeln!(
            out,
            "{name:<9} {not_gated:>9} {allowed:>7} {blocked:>7} {fixed:>5} {capped:>6}"
        );
    }
    out.push_str(
        "\nverified: a test command passed after the last edit; stale: one passed only before it;\n\
         failed: the last one after it failed; never ran: none ran after it. fixed: blocked, then\n\
         allowed; capped: let through by stop.max_blocks; not gated: no stop of the turn is in\n\
         this worktree's records.\n",
    );
    let read: u64 = history.agents.iter().map(|a| a.transcripts).sum();
    let unreadable: u64 = history.agents.iter().map(|a| a.unreadable).sum();
    let _ = write!(out, "{read} transcripts read");
    if unreadable > 0 {
        let _ = write!(out, ", {unreadable} could not be");
    }
    out.push_str(".\n");
    out
}
