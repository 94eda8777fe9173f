//! `checkpoint ci`: the stop gate on a pull request, for a CI job. The change set from the merge
//! base of the base branch and `HEAD` is judged on the clean checkout under the configuration
//! the base carries (see [`checkpoint_engine::gate::ci`]): the base's test commands run (never a
//! local receipt or cache), with the test-integrity analysis, the old tests on the new code
//! included. It prints a Markdown summary, and writes the findings as SARIF 2.1.0 (`--sarif`)
//! and the verdict as JSON (`--json`).
//!
//! [`verdict`] says what a decision means for a pull request, [`markdown`] writes the summary,
//! [`sarif`] the code-scanning file.

mod markdown;
mod sarif;
mod verdict;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use checkpoint_core::answer::HookAnswer;
use checkpoint_core::event::HookEvent;
use checkpoint_engine::gate::ci::{self, CiError, CiJudgement};
use checkpoint_engine::host::STATE_DIR_VAR;
use checkpoint_engine::runner::Unwatched;
use serde::Serialize;

use crate::commands::check::{self, CheckJson};
use crate::error::CliError;
use crate::{exit_codes, output, project, schema};

pub(crate) use verdict::Verdict;

/// Options of `checkpoint ci`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The branch or commit the pull request is merged into; the change set is judged from its
    /// merge base with HEAD, under that merge base's configuration. Default: `origin/` +
    /// `$GITHUB_BASE_REF` (GitHub Actions), else `$CI_MERGE_REQUEST_DIFF_BASE_SHA` (GitLab CI).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Write the test-integrity findings as SARIF 2.1.0 to FILE (for code scanning).
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
    /// Write the verdict as JSON to FILE (the `checkpoint check --json` fields, with `result`,
    /// `base` and `head`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// What `--json` writes.
#[derive(Serialize)]
struct CiJson<'a> {
    /// `passed`, `failed` or `unchecked`.
    result: Verdict,
    head: &'a str,
    #[serde(flatten)]
    check: CheckJson<'a>,
    /// The message an agent would get.
    message: &'a str,
}

/// `checkpoint ci`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let base = base_rev(args.base.as_deref(), |name| std::env::var(name).ok())?;
    // The approval of the base's configuration lives in a trust store of this run's own, never
    // in the machine user's.
    let scratch = tempfile::tempdir()
        .map_err(|e| CliError::new(format!("a temporary directory: {e}"), "check TMPDIR"))?;
    let mut host = project::host();
    host.user_config = Some(scratch.path().join("checkpoint").join("config.toml"));
    // Nothing an earlier run left in the checkout (a cached outcome) is reused: the state is
    // the run's own as well.
    let state = scratch.path().join("state");
    host.env.push((
        STATE_DIR_VAR.to_owned(),
        state.to_string_lossy().into_owned(),
    ));
    let judged = ci::judge(&host, &project::cwd()?, &base, &Unwatched).map_err(ci_error)?;
    let CiJudgement {
        base,
        head,
        outcome,
    } = &judged;
    for warning in &outcome.warnings {
        output::warning(warning);
    }
    let HookAnswer::Stop(answer) = &outcome.answer else {
        return Err(CliError::bug("the gate gave no verdict on a stop"));
    };
    let decision = &answer.decision;
    if let Some(err) = check::unchecked(decision, &HookEvent::manual_stop(project::cwd()?)) {
        return Err(err);
    }
    let verdict = Verdict::of(decision);
    output::out(&markdown::summary(
        verdict,
        decision,
        &answer.message,
        base,
        head,
    ));
    if let Some(path) = &args.sarif {
        write(path, &sarif::log(decision)?)?;
    }
    if let Some(path) = &args.json {
        let json = CiJson {
            result: verdict,
            head,
            check: CheckJson {
                schema_version: schema::SCHEMA_VERSION,
                event: "Stop",
                base: Some(base),
                decision: Some(decision),
            },
            message: &answer.message,
        };
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| CliError::bug(format!("the verdict as JSON: {e}")))?;
        write(path, &text)?;
    }
    Ok(ExitCode::from(match verdict {
        Verdict::Passed => exit_codes::OK,
        Verdict::Failed => exit_codes::NO,
        Verdict::Unchecked => exit_codes::DEGRADED,
    }))
}

/// The base revision: the one given, else the CI system's (`env` reads a variable).
fn base_rev(given: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<String, CliError> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if let Some(rev) = given {
        return Ok(rev.to_owned());
    }
    if let Some(branch) = set("GITHUB_BASE_REF") {
        return Ok(format!("origin/{branch}"));
    }
    if let Some(sha) = set("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
        return Ok(sha);
    }
    Err(CliError::usage(
        "no base to judge the change set from",
        "give --base REV (the branch the change is merged into, e.g. origin/main)",
    ))
}

fn ci_error(err: CiError) -> CliError {
    let message = err.to_string();
    match err {
        CiError::Project(inner) => CliError::from(inner),
        CiError::Git(inner) => CliError::from(inner),
        CiError::GitCall(inner) => CliError::from(inner),
        CiError::Dirty(_) => CliError::usage(
            message,
            "run it on a clean checkout of the pull request: it judges commits",
        ),
        CiError::UnknownBase { .. } | CiError::Unrelated(_) => CliError::usage(
            message,
            "fetch the base branch with its history (actions/checkout: fetch-depth: 0)",
        ),
        _ => CliError::new(message, "run it in a clone of the repository with a commit"),
    }
}

/// Writes `text` to `path` (a report file: replaced whole).
fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| {
        CliError::new(
            format!("writing {}: {e}", path.display()),
            "give a file in a writable directory",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_is_the_one_given_else_the_ci_systems() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                (vars.iter())
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let github = env(&[
            ("GITHUB_BASE_REF", "main"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "abc"),
        ]);
        assert_eq!(base_rev(Some("v1"), github).unwrap(), "v1");
        assert_eq!(base_rev(None, github).unwrap(), "origin/main");
        let gitlab = env(&[
            ("GITHUB_BASE_REF", ""),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "abc"),
        ]);
        assert_eq!(base_rev(None, gitlab).unwrap(), "abc");
        let none = base_rev(None, env(&[])).unwrap_err();
        assert_eq!(none.message, "no base to judge the change set from");
    }
}
