//! `checkpoint cleanup`: remove finished tasks and session files past their retention and the
//! leftovers of interrupted writes; with `--remote`, the removed tasks' refs on the remote too.

use std::process::ExitCode;

use checkpoint_core::journal::Removal;
use checkpoint_core::sanitize;
use checkpoint_engine::project::{Project, ProjectError};
use checkpoint_engine::travel::fetch::{self, FetchOutcome};
use checkpoint_engine::travel::prune::{self, Pruned};
use checkpoint_engine::travel::{Refs, TravelError, default_remote, local_refs, task_ref};
use serde_json::json;

use crate::error::CliError;
use crate::{output, project};

/// Options of `checkpoint cleanup`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// List what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also delete on the remote (`--remote=NAME`; default: the current branch's upstream remote,
    /// else `origin`, else the only one) the refs of the tasks removed here. Only refs the remote had, that were
    /// fetched in this run and are gone here are deleted, and only while the remote still holds
    /// what was seen.
    #[arg(
        long,
        value_name = "REMOTE",
        num_args = 0..=1,
        default_missing_value = "",
        require_equals = true
    )]
    remote: Option<String>,
}

/// The remote side of a cleanup: what the remote had and what was here after the fetch.
struct Seen {
    remote: String,
    on_remote: Refs,
    fetched: Refs,
}

/// `checkpoint cleanup [--dry-run] [--remote [REMOTE]]`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let project = project::open()?;
    let seen = match &args.remote {
        Some(remote) => Some(see(&project, remote)?),
        None => None,
    };
    let cleanup = project.cleanup(args.dry_run)?;
    let remote = match &seen {
        Some(seen) => Some(prune_remote(&project, seen, &cleanup.tasks, args.dry_run)?),
        None => None,
    };
    if args.json {
        match (&seen, &remote) {
            (Some(seen), Some((planned, pruned))) => output::json(&json!({
                "tasks": cleanup.tasks,
                "sessions": cleanup.sessions,
                "remote": {
                    "name": seen.remote,
                    "planned": planned.keys().collect::<Vec<_>>(),
                    "deleted": pruned.deleted,
                    "refused": pruned.refused,
                }
            }))?,
            _ => output::json(&cleanup)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut lines: Vec<String> = (cleanup.tasks.iter())
        .map(|r| {
            format!(
                "{verb} {} ({}, ended {})",
                r.task_id,
                r.state.name(),
                r.ended_at
            )
        })
        .collect();
    if !cleanup.sessions.is_empty() {
        lines.push(format!(
            "{verb} {} session file(s) past their retention",
            cleanup.sessions.len()
        ));
    }
    if let (Some(seen), Some((planned, pruned))) = (&seen, &remote) {
        let name = sanitize::name(&seen.remote);
        if args.dry_run {
            lines.extend(
                (planned.keys()).map(|r| format!("would delete {} on {name}", sanitize::name(r))),
            );
        }
        lines.extend(
            (pruned.deleted.iter()).map(|r| format!("deleted {} on {name}", sanitize::name(r))),
        );
        lines.extend(pruned.refused.iter().map(|r| {
            format!(
                "left {} on {name}: it moved there since it was fetched",
                sanitize::name(r)
            )
        }));
    }
    if lines.is_empty() {
        lines.push("Nothing to clean up.".into());
    }
    output::out(&lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// Lists our refs on `remote` (default: the one to fetch from) and fetches them, so that
/// retention sees every task; an error when the remote cannot be reached.
fn see(project: &Project, remote: &str) -> Result<Seen, CliError> {
    let repo = project.git()?;
    let remote = match remote {
        "" => default_remote(repo).ok_or_else(|| {
            CliError::usage(
                "this repository has no remote to clean up",
                "name one: `checkpoint cleanup --remote REMOTE`",
            )
        })?,
        named => named.to_owned(),
    };
    let budget = project.policy.travel.fetch_budget;
    let unreachable = |reason: String| {
        CliError::new(
            format!(
                "cannot reach {} to clean up its checkpoint refs: {reason}",
                sanitize::name(&remote)
            ),
            "check the remote (`git ls-remote REMOTE`) or run `checkpoint cleanup` without --remote",
        )
    };
    let on_remote = prune::remote_refs(repo, &remote, budget)
        .map_err(|e| unreachable(CliError::from(ProjectError::from(e)).message))?;
    let outcome = fetch::fetch(repo, &remote, budget);
    if let FetchOutcome::Failed { reason, .. } = &outcome {
        return Err(unreachable(reason.clone()));
    }
    if let Some(note) = outcome.note() {
        output::note(&note);
    }
    let fetched = local_refs(repo).map_err(|e| ProjectError::from(TravelError::from(e)))?;
    Ok(Seen {
        remote,
        on_remote,
        fetched,
    })
}

/// Deletes here the refs of the tasks retention `removed` (what the store keeps of them), then on
/// the remote what [`prune::plan`] allows; with `dry_run`, only plans. Returns the plan and what
/// the remote did.
fn prune_remote(
    project: &Project,
    seen: &Seen,
    removed: &[Removal],
    dry_run: bool,
) -> Result<(Refs, Pruned), CliError> {
    let repo = project.git()?;
    let travel = |e: TravelError| CliError::from(ProjectError::from(e));
    let mut now = local_refs(repo).map_err(|e| travel(e.into()))?;
    // The store deleted the removed tasks' refs with them; a dry run left them here.
    for removal in removed {
        now.remove(&task_ref(&removal.task_id));
    }
    let planned = prune::plan(&seen.on_remote, &seen.fetched, &now);
    if dry_run {
        return Ok((planned, Pruned::default()));
    }
    let budget = project.policy.travel.fetch_budget;
    let pruned = prune::delete_remote(repo, &seen.remote, &planned, budget).map_err(|e| {
        CliError::new(
            format!(
                "cannot delete the checkpoint refs on {}: {}",
                sanitize::name(&seen.remote),
                travel(e).message
            ),
            "run `checkpoint cleanup --remote` again when the remote is reachable",
        )
    })?;
    Ok((planned, pruned))
}
