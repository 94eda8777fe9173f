//! One file per `checkpoint` subcommand, named for it (`git-hook` is `git_hook.rs`, `task list` is
//! `task_list.rs`; `install` and
//! `uninstall` live in [`crate::install`]). Each holds the command's options (`Args`; `Command`
//! for `task` and `step`, whose subcommands are an enum; `ConfigArgs` for `config`) and its
//! `run`, which returns the exit status or a [`crate::CliError`]. A command may call another's
//! `run` or helper (`task status` is `status`, `step done` reports like `validate`); none calls
//! back.

pub(crate) mod check;
pub(crate) mod ci;
pub(crate) mod cleanup;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod explain;
pub(crate) mod git_hook;
pub(crate) mod history;
pub(crate) mod integrity;
pub(crate) mod keys;
pub(crate) mod log;
pub(crate) mod man;
pub(crate) mod mcp;
pub(crate) mod progress;
pub(crate) mod push;
pub(crate) mod receipts;
pub(crate) mod recover;
pub(crate) mod report;
pub(crate) mod restore;
pub(crate) mod resume;
pub(crate) mod save;
pub(crate) mod status;
pub(crate) mod statusline;
pub(crate) mod step;
pub(crate) mod task;
pub(crate) mod task_list;
pub(crate) mod trust;
pub(crate) mod validate;
pub(crate) mod verify;
