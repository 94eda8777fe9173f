//! `checkpoint verify`: for each commit, whether a passing receipt whose tested tree is exactly
//! that commit's tree (see [`checkpoint_core::journal::ReceiptPayload::tree`]) verifies against the trusted keys —
//! this user's own and the project's `.checkpoint/allowed_signers`.
//!
//! The receipts read are those of this state directory's tasks (every task's, finished ones
//! too), gate runs and validations alike.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use serde::Serialize;

use super::{Journal, JournalError};
use crate::git::Repo;
use crate::git::call::{self, GitCallError};
use checkpoint_core::journal::ReceiptCheck;
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

/// What was found for one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum CommitResult {
    /// A passing receipt of its tree verifies.
    Verified {
        /// The task holding the receipt.
        task: String,
        /// The receipt's id.
        receipt: String,
        /// The command that passed.
        command: String,
        /// Who signed it: `you`, or a name from `allowed_signers`.
        signer: String,
    },
    /// Passing receipts of its tree exist, but none verifies; the first one's check says why.
    Unverified {
        /// The task holding the receipt.
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
        let verdict = match &self.result {
            CommitResult::Verified {
                task,
                receipt,
                command,
                signer,
            } => format!(
                "verified: `{}` passed on its tree (receipt {} of task {}, signed by {})",
                shown(command),
                shown(receipt),
                shown(task),
                shown(signer)
            ),
            CommitResult::Unverified {
                task,
                receipt,
                check,
            } => format!(
                "NOT VERIFIED: receipt {} of task {} tested its tree but is {}",
                shown(receipt),
                shown(task),
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

impl Journal {
    /// Checks each of `commits` against every passing receipt of this journal's tasks.
    pub fn verify_commits(&self, commits: Vec<Commit>) -> Result<Vec<CommitCheck>, JournalError> {
        let (trusted, _) = self.trusted_keys()?;
        // Per tree: the first verified receipt, else the first that tested it.
        let mut by_tree: HashMap<String, CommitResult> = HashMap::new();
        let mut without_tree = 0;
        for id in self.task_ids()? {
            let Ok(task) = self.load(&id) else {
                continue;
            };
            for receipt in &task.receipts {
                let Some(payload) = receipt.parsed().ok().filter(|p| p.passed()) else {
                    continue;
                };
                let Some(tree) = payload.tree.clone() else {
                    without_tree += 1;
                    continue;
                };
                let check = receipt.check(&task, &trusted);
                let result = match check {
                    ReceiptCheck::Verified { signer } => CommitResult::Verified {
                        task: task.id.clone(),
                        receipt: receipt.id.clone(),
                        command: payload.command.clone(),
                        signer,
                    },
                    check => CommitResult::Unverified {
                        task: task.id.clone(),
                        receipt: receipt.id.clone(),
                        check,
                    },
                };
                let known = by_tree.get(&tree);
                if known.is_none_or(|k| {
                    !matches!(k, CommitResult::Verified { .. })
                        && matches!(result, CommitResult::Verified { .. })
                }) {
                    by_tree.insert(tree, result);
                }
            }
        }
        Ok(commits
            .into_iter()
            .map(|commit| {
                let result = by_tree
                    .get(&commit.tree)
                    .cloned()
                    .unwrap_or(CommitResult::NoReceipt { without_tree });
                CommitCheck {
                    verified: matches!(result, CommitResult::Verified { .. }),
                    commit,
                    result,
                }
            })
            .collect())
    }
}
