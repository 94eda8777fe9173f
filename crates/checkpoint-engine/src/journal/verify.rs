//! `checkpoint verify`: for each commit, whether a passing receipt whose tested tree is exactly
//! that commit's tree (see [`checkpoint_core::journal::ReceiptPayload::tree`]) verifies against
//! the keys the verifier trusts, and is the stop gate's run of the project's test command as
//! that commit configures it ([`crate::config::at_commit`]): the gate runs only commands its
//! user approved, while a validation runs any command (`checkpoint validate -- true`), and
//! another command passing proves nothing of the tests. Which keys are trusted is the caller's to say — never the commit's own
//! `.checkpoint/allowed_signers` alone, which whoever made the commit could have edited.
//!
//! The receipts read are those of this state directory's tasks (every task's, finished ones
//! too), gate runs and validations alike, and those of the stop gate's runs without a task in
//! the session log of every worktree ([`crate::continuity::logs_of_every_worktree`]).

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use serde::Serialize;

use super::{Journal, JournalError};
use crate::config::at_commit;
use crate::continuity;
use crate::git::call::{self, GitCallError};
use crate::git::{Repo, base};
use crate::travel;
use checkpoint_core::journal::receipt::NO_TASK;
use checkpoint_core::journal::{KeyCertificate, Receipt, ReceiptCheck, ReceiptSource, TrustedKeys};
use checkpoint_core::sanitize;

/// The most commits one `verify` looks at.
pub const MAX_COMMITS: usize = 1000;
/// How long listing the commits may take.
const LOG_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of a subject or command shown on a line.
const SHOWN_CHARS: usize = 72;

/// A commit to verify.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commit {
    /// Its id, lowercase hex.
    pub commit: String,
    /// Its tree's id.
    pub tree: String,
    /// The first line of its message, sanitized.
    pub subject: String,
}

/// The commits `spec` names, newest first: one commit for a revision (`HEAD`, a branch, an id),
/// every commit of a range (`main..HEAD`, anything holding `..`), at most [`MAX_COMMITS`].
pub fn commits(repo: &Repo, spec: &str) -> Result<Vec<Commit>, GitCallError> {
    let count = format!("--max-count={MAX_COMMITS}");
    let mut args = vec!["log", "-z", "--format=%H %T %s", count.as_str()];
    if !spec.contains("..") {
        args.push("--no-walk");
    }
    args.extend(["--end-of-options", spec, "--"]);
    let out = call::output(call::git(repo, &args, None), "log", LOG_TIMEOUT)?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter_map(|record| {
            let record = String::from_utf8_lossy(record);
            let mut fields = record.trim_start_matches('\n').splitn(3, ' ');
            let (commit, tree) = (fields.next()?, fields.next()?);
            Some(Commit {
                commit: commit.to_owned(),
                tree: tree.to_owned(),
                subject: sanitize::line(fields.next().unwrap_or(""), SHOWN_CHARS),
            })
        })
        .filter(|c| !c.commit.is_empty())
        .collect())
}

/// Where `verify` reads the project's signers when the caller names none: a commit before
/// the ones it verifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anchor {
    /// The commit whose `.checkpoint/allowed_signers` is read.
    pub commit: String,
    /// What that commit is, for the user (`the merge base with origin/HEAD`).
    pub what: String,
}

/// The commit whose `.checkpoint/allowed_signers` `verify` trusts for `spec` by default —
/// never one of those it verifies: for a range `A..B` its start `A` (for `A...B`, the merge
/// base of the two); for one commit, its merge base with the default remote's default branch
/// (`<remote>/HEAD`) when the commit is not on that branch, else its first parent. `None`
/// for a commit with nothing before it.
pub fn default_anchor(repo: &Repo, spec: &str) -> Result<Option<Anchor>, GitCallError> {
    let resolved = |rev: &str| match base::resolve(repo, rev) {
        Ok(id) => Ok(Some(id)),
        Err(GitCallError::Failed { .. }) => Ok(None),
        Err(e) => Err(e),
    };
    let anchor =
        |commit: Option<String>, what: String| commit.map(|commit| Anchor { commit, what });
    if let Some((a, b)) = spec.split_once("...") {
        let (a, b) = (or_head(a), or_head(b));
        let merge_base = base::merge_base(repo, a, b)?;
        return Ok(anchor(merge_base, format!("the merge base of {a} and {b}")));
    }
    if let Some((a, _)) = spec.split_once("..") {
        let a = or_head(a);
        return Ok(anchor(resolved(a)?, a.to_owned()));
    }
    let target = travel::default_remote(repo).map(|remote| format!("{remote}/HEAD"));
    if let Some(target) = target
        && let Some(tip) = resolved(&target)?
        && let Some(commit) = resolved(spec)?
        && let Some(merge_base) = base::merge_base(repo, &commit, &tip)?
        && merge_base != commit
    {
        return Ok(anchor(
            Some(merge_base),
            format!("the merge base with {target}"),
        ));
    }
    let parent = format!("{spec}^");
    Ok(anchor(resolved(&parent)?, format!("the parent of {spec}")))
}

/// The side of a range git reads as `HEAD` when it is left empty.
fn or_head(rev: &str) -> &str {
    if rev.is_empty() { "HEAD" } else { rev }
}

/// What was found for one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum CommitResult {
    /// A passing receipt of its tree verifies, of a test command the commit configures.
    Verified {
        /// The task holding the receipt (empty for a gate run without a task).
        task: String,
        /// The receipt's id.
        receipt: String,
        /// The command that passed.
        command: String,
        /// Who signed it: `you`, or a name from `allowed_signers`.
        signer: String,
    },
    /// A passing receipt of its tree verifies, but none of those is the gate's run of a test
    /// command the commit configures: the first one, and why it does not count.
    NotTheTests {
        /// The task holding the receipt (empty for a gate run without a task).
        task: String,
        /// The receipt's id.
        receipt: String,
        /// The command that passed.
        command: String,
        /// Who signed it.
        signer: String,
        /// Why it does not count, in one line.
        why: String,
    },
    /// Receipts of its tree exist, but the commit configures no test command to judge them
    /// by: none is set or detected, or its `checkpoint.toml` cannot be read.
    Untestable {
        /// Why, in one line.
        reason: String,
    },
    /// Passing receipts of its tree exist, but none verifies; the first one's check says why.
    Unverified {
        /// The task holding the receipt (empty for a gate run without a task).
        task: String,
        /// The receipt's id.
        receipt: String,
        /// Its check.
        check: ReceiptCheck,
    },
    /// No passing receipt names its tree.
    NoReceipt {
        /// Passing receipts that record no tree (made before receipts recorded one), which may
        /// or may not have tested it.
        without_tree: usize,
    },
}

/// One commit and what was found for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitCheck {
    /// The commit.
    #[serde(flatten)]
    pub commit: Commit,
    /// Whether a trusted passing receipt covers it.
    pub verified: bool,
    /// What was found.
    #[serde(flatten)]
    pub result: CommitResult,
}

impl fmt::Display for CommitCheck {
    /// `<commit> <verdict>  <subject>`, on one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = self.commit.commit.get(..12).unwrap_or(&self.commit.commit);
        let shown = |text: &str| sanitize::line(text, SHOWN_CHARS);
        let of = |receipt: &str, task: &str| match task {
            NO_TASK => format!("receipt {} of a stop", shown(receipt)),
            task => format!("receipt {} of task {}", shown(receipt), shown(task)),
        };
        let verdict = match &self.result {
            CommitResult::Verified {
                task,
                receipt,
                command,
                signer,
            } => format!(
                "verified: `{}` passed on its tree ({}, signed by {})",
                shown(command),
                of(receipt, task),
                shown(signer)
            ),
            CommitResult::NotTheTests {
                task,
                receipt,
                command,
                signer,
                why,
            } => format!(
                "NOT VERIFIED: `{}` passed on its tree ({}, signed by {}), but {}",
                shown(command),
                of(receipt, task),
                shown(signer),
                sanitize::line(why, SHOWN_CHARS * 2)
            ),
            CommitResult::Untestable { reason } => format!(
                "NOT VERIFIED: no test command to judge its receipts by: {}",
                sanitize::line(reason, SHOWN_CHARS * 2)
            ),
            CommitResult::Unverified {
                task,
                receipt,
                check,
            } => format!(
                "NOT VERIFIED: {} tested its tree but is {}",
                of(receipt, task),
                sanitize::line(&check.to_string(), SHOWN_CHARS * 2)
            ),
            CommitResult::NoReceipt { without_tree: 0 } => {
                "NOT VERIFIED: no passing receipt of its tree".to_owned()
            }
            CommitResult::NoReceipt { without_tree } => format!(
                "NOT VERIFIED: no passing receipt of its tree ({without_tree} passing \
                 receipt(s) have no tree recorded: made before receipts recorded one)"
            ),
        };
        write!(f, "{short}  {verdict}  {}", self.commit.subject)
    }
}

/// A passing receipt of a tree, checked, with what it ran.
struct Tested {
    task: String,
    receipt: String,
    command: String,
    source: ReceiptSource,
    check: ReceiptCheck,
}

impl Journal {
    /// Checks each of `commits` against every passing receipt this repository holds (see the
    /// module's documentation), trusting the master keys `trusted`.
    pub fn verify_commits(
        &self,
        commits: Vec<Commit>,
        trusted: &TrustedKeys,
    ) -> Result<Vec<CommitCheck>, JournalError> {
        let mut held: Vec<(String, Vec<Receipt>, Vec<KeyCertificate>)> = Vec::new();
        for id in self.task_ids()? {
            if let Ok(task) = self.load(&id) {
                held.push((task.id, task.receipts, task.certificates));
            }
        }
        if let Some(repo) = &self.repo {
            for log in continuity::logs_of_every_worktree(repo)? {
                held.push((NO_TASK.to_owned(), log.receipts, log.certificates));
            }
        }
        let mut by_tree: HashMap<String, Vec<Tested>> = HashMap::new();
        let mut without_tree = 0;
        for (task, receipts, certificates) in &held {
            for receipt in receipts {
                let Some(payload) = receipt.parsed().ok().filter(|p| p.passed()) else {
                    continue;
                };
                let Some(tree) = payload.tree else {
                    without_tree += 1;
                    continue;
                };
                by_tree.entry(tree).or_default().push(Tested {
                    task: task.clone(),
                    receipt: receipt.id.clone(),
                    command: payload.command,
                    source: payload.source,
                    check: receipt.check_in(task, certificates, trusted),
                });
            }
        }
        Ok(commits
            .into_iter()
            .map(|commit| {
                let result = match by_tree.get(&commit.tree) {
                    None => CommitResult::NoReceipt { without_tree },
                    Some(tested) => self.judge(&commit.commit, tested),
                };
                CommitCheck {
                    verified: matches!(result, CommitResult::Verified { .. }),
                    commit,
                    result,
                }
            })
            .collect())
    }

    /// What the passing receipts `tested` of `commit`'s tree say of it: verified by the first
    /// that verifies and is the gate's run of a test command the commit configures; else the
    /// closest that verifies, and why it does not count; else the first one's check.
    fn judge(&self, commit: &str, tested: &[Tested]) -> CommitResult {
        let verified = || tested.iter().filter(|t| t.check.is_verified());
        let expected = match &self.repo {
            Some(repo) => at_commit::test_commands_at(repo, commit).map_err(|e| e.to_string()),
            None => Err("not a git repository".to_owned()),
        };
        let signer = |t: &Tested| match &t.check {
            ReceiptCheck::Verified { signer } => signer.clone(),
            _ => String::new(),
        };
        let Some(first) = verified().next() else {
            return CommitResult::Unverified {
                task: tested[0].task.clone(),
                receipt: tested[0].receipt.clone(),
                check: tested[0].check.clone(),
            };
        };
        let expected = match expected {
            Err(reason) => return CommitResult::Untestable { reason },
            Ok(expected) if expected.is_empty() => {
                return CommitResult::Untestable {
                    reason: "its configuration sets no test command and none is detected".into(),
                };
            }
            Ok(expected) => expected,
        };
        let counts = |t: &&Tested| t.source == ReceiptSource::Gate && expected.contains(&t.command);
        if let Some(t) = verified().find(counts) {
            return CommitResult::Verified {
                task: t.task.clone(),
                receipt: t.receipt.clone(),
                command: t.command.clone(),
                signer: signer(t),
            };
        }
        // The closest miss: a verified receipt of a configured command (a validation of it).
        let first = verified()
            .find(|t| expected.contains(&t.command))
            .unwrap_or(first);
        let tests = (expected.iter())
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let why = if expected.contains(&first.command) {
            format!(
                "a validation is not the stop gate's run of the approved tests ({tests}): \
                 run `checkpoint check --all`"
            )
        } else if first.source == ReceiptSource::Gate {
            format!(
                "the tests the commit configures are {tests}; a narrowed run does not vouch for \
                 a whole commit (`checkpoint check --all` does)"
            )
        } else {
            format!("the tests the commit configures are {tests}")
        };
        CommitResult::NotTheTests {
            task: first.task.clone(),
            receipt: first.receipt.clone(),
            command: first.command.clone(),
            signer: signer(first),
            why,
        }
    }
}
