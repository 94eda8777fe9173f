//! Pushing our refs to a remote within a time budget: what `checkpoint install git`'s `pre-push`
//! step and `checkpoint push` do. What does not make it (a timeout, an unreachable remote, a ref
//! the remote rejects) is queued in the state file and goes with the next push.

use std::path::Path;
use std::time::Duration;

use super::{REFSPEC, TravelError, failed, local_refs, names, queue, reason, refs_count};
use crate::git::Repo;
use crate::git::call;
use checkpoint_core::sanitize;

/// How one push of our refs to one remote went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// The remote, as given (a name or a URL).
    pub remote: String,
    /// Refs the remote took in this push (new ones and fast-forwards).
    pub pushed: Vec<String>,
    /// Refs the remote already had as they are.
    pub up_to_date: Vec<String>,
    /// Refs the remote refused: it holds a commit ours does not descend from (two machines
    /// diverged), or its hooks declined them. Never forced.
    pub rejected: Vec<String>,
    /// Why the push did not happen at all (a timeout, an unreachable remote), on one line.
    pub failure: Option<String>,
    /// Every ref of ours whose commit the remote does not have after this push.
    pub queued: Vec<String>,
}

impl PushReport {
    /// Whether everything is on the remote.
    pub fn complete(&self) -> bool {
        self.queued.is_empty()
    }

    /// The one line for the user when something did not make it; `None` when all did.
    pub fn note(&self) -> Option<String> {
        if self.complete() {
            return None;
        }
        let count = refs_count(self.queued.len());
        let remote = sanitize::name(&self.remote);
        Some(match &self.failure {
            Some(failure) => format!(
                "checkpoint: {count} not pushed to {remote} ({failure}); they go with the next push"
            ),
            None => format!(
                "checkpoint: {count} not pushed to {remote}: the remote's has diverged (not a \
                 fast-forward; never forced): {}",
                names(&self.rejected)
            ),
        })
    }

    /// One line of what went, for `checkpoint push`.
    pub fn summary(&self) -> String {
        format!(
            "{} pushed to {}, {} already there",
            refs_count(self.pushed.len()),
            sanitize::name(&self.remote),
            self.up_to_date.len()
        )
    }
}

/// Pushes every ref of ours to `remote` (a remote's name or a URL) as fast-forwards, within
/// `budget` (then git's whole process group is killed), and records in `state_dir` what did not
/// make it. Spawns nothing when there is no ref of ours. `Err` only when our refs cannot be
/// listed or the state file cannot be written; a failed push is in the report.
pub fn push(
    repo: &Repo,
    state_dir: &Path,
    remote: &str,
    budget: Duration,
) -> Result<PushReport, TravelError> {
    let local = local_refs(repo)?;
    let mut report = PushReport {
        remote: remote.to_owned(),
        ..PushReport::default()
    };
    if !local.is_empty() {
        let args = ["push", "--no-verify", "--porcelain", "--", remote, REFSPEC];
        match call::run_remote(call::git(repo, &args, None), "push", budget) {
            Ok(out) => {
                read_porcelain(&String::from_utf8_lossy(&out.stdout), &mut report);
                let listed = report.pushed.len() + report.up_to_date.len() + report.rejected.len();
                if listed == 0 && !out.status.success() {
                    report.failure = Some(failed(&out));
                }
            }
            Err(err) => report.failure = Some(reason(&err)),
        }
    }
    let taken: Vec<String> = report
        .pushed
        .iter()
        .chain(&report.up_to_date)
        .cloned()
        .collect();
    report.queued = queue::record(state_dir, remote, &local, &taken, report.failure.as_deref())?;
    Ok(report)
}

/// The remotes that refs are queued for (a push that did not make it), for `checkpoint push`.
pub fn waiting(state_dir: &Path) -> Result<Vec<String>, TravelError> {
    Ok(queue::waiting(state_dir)?)
}

/// Sorts the lines of `git push --porcelain` (`<flag>\t<from>:<to>\t<summary>`) into `report`.
fn read_porcelain(stdout: &str, report: &mut PushReport) {
    for line in stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(flag), Some(refs)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((_, to)) = refs.split_once(':') else {
            continue;
        };
        let to = to.to_owned();
        match flag {
            "=" => report.up_to_date.push(to),
            "!" => report.rejected.push(to),
            " " | "*" | "+" | "-" => report.pushed.push(to),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_lines_are_sorted_by_what_happened() {
        let mut report = PushReport::default();
        read_porcelain(
            "To ../remote.git\n\
             =\trefs/checkpoint/sessions/main:refs/checkpoint/sessions/main\t[up to date]\n\
             *\trefs/checkpoint/tasks/b:refs/checkpoint/tasks/b\t[new reference]\n\
             \x20\trefs/checkpoint/tasks/c:refs/checkpoint/tasks/c\t1111111..2222222\n\
             !\trefs/checkpoint/tasks/a:refs/checkpoint/tasks/a\t[rejected] (non-fast-forward)\n\
             Done\n",
            &mut report,
        );
        assert_eq!(report.up_to_date, ["refs/checkpoint/sessions/main"]);
        assert_eq!(
            report.pushed,
            ["refs/checkpoint/tasks/b", "refs/checkpoint/tasks/c"]
        );
        assert_eq!(report.rejected, ["refs/checkpoint/tasks/a"]);
    }

    #[test]
    fn the_notes_name_the_remote_the_count_and_the_diverged_refs() {
        let timed_out = PushReport {
            remote: "origin".into(),
            failure: Some("timed out after 3 s".into()),
            queued: vec!["a".into(), "b".into(), "c".into()],
            ..PushReport::default()
        };
        insta::assert_snapshot!(timed_out.note().unwrap(), @"checkpoint: 3 checkpoint refs not pushed to origin (timed out after 3 s); they go with the next push");
        let diverged = PushReport {
            remote: "evil\u{1b}[31m\nname".into(),
            rejected: vec!["refs/checkpoint/tasks/a".into()],
            queued: vec!["refs/checkpoint/tasks/a".into()],
            ..PushReport::default()
        };
        insta::assert_snapshot!(diverged.note().unwrap(), @r"checkpoint: 1 checkpoint ref not pushed to evil[31m\nname: the remote's has diverged (not a fast-forward; never forced): refs/checkpoint/tasks/a");
        assert_eq!(PushReport::default().note(), None);
    }
}
