//! Loading the [`Policy`](super::Policy) from its layers, lowest to highest:
//!
//! 1. built-in defaults;
//! 2. the user file, `$XDG_CONFIG_HOME/checkpoint/config.toml` (else
//!    `$HOME/.config/checkpoint/config.toml`);
//! 3. the project file, `<root>/checkpoint.toml`;
//! 4. `CHECKPOINT_*` environment variables.
//!
//! A later layer wins per key; `[[rule]]`s are concatenated (the user file's, then the project
//! file's). A missing file is simply absent.
//!
//! # Keys
//!
//! Every scalar key is a row of [`KEYS`]: its name (`section.key`), its variable
//! (`CHECKPOINT_<SECTION>_<KEY>`, plus any older alias, which the newer name overrides), its
//! value type, its default and what it does. [`reference()`] renders the table; the book's
//! *Settings* section is that text, and a test keeps the two equal. Values in a file are TOML:
//! durations are strings like `"90s"`, `"2m"`, `"1h30m"`, `"500ms"`, `"7d"` (positive); a flag is
//! `true` or `false`; a switch is `true`, `false` or `"prompt"`. A variable's value is text: flags
//! and switches also take `1`/`0` and `yes`/`no`, in any case.
//!
//! Rules are tables of their own:
//!
//! ```toml
//! [[rule]]
//! name = "daemon"                      # required, unique across both files
//! include = ["src/**/*.py"]            # required, non-empty
//! exclude = ["src/hooks/**"]           # default: none
//! tests = true                         # default true = the project command; false = none;
//!                                      # a string = the rule's own command
//! action = "Run `make restart`"        # optional instruction for the agent
//! gate = true                          # default: true unless `tests = false`
//! ```
//!
//! Unknown keys and sections are errors.
//!
//! # Errors
//!
//! Every [`ConfigError`] is one line that says where the problem is:
//!
//! ```text
//! /repo/checkpoint.toml: Permission denied (os error 13)
//! /repo/checkpoint.toml:3: syntax error: unclosed table, expected `]`
//! /repo/checkpoint.toml:7: clear.auto_checkpoint: invalid type: integer `1`, expected true, false or "prompt"
//! /repo/checkpoint.toml:12: rule[1].include: bad glob "src/[a": unclosed character class; missing ']'
//! CHECKPOINT_GIT_BACKEND: unknown variant `svn`, expected one of `auto`, `cli`, `gix`
//! ```
//!
//! Rules are numbered from 0 within their file. A key the table orders below another (the
//! context watch's warning level below its critical level) must stay below it after merging; the
//! error names whichever of the two the higher layer set.
//!
//! # Provenance
//!
//! [`Effective`] is the merged configuration: the policy, and where each key's value came from
//! ([`Origin`]); `explain` lists it. [`check_text`] validates a file's new text before a writer
//! replaces the file.
//!
//! # The pure half and the I/O half
//!
//! Parsing a text ([`ConfigFile::parse`]), merging ([`Effective::merge`]), explaining and checking
//! work on given texts and variables and touch nothing. Reading the files and this process's
//! variables, and detecting the test command in a project, is the engine's (`checkpoint-engine`'s
//! `config` module).

pub use super::error::ConfigError;
pub use super::explain::{
    Effective, LowerValue, Origin, ProjectCommand, Setting, check_text, line_of, set_slot,
};
pub use super::layer::ConfigFile;
pub use super::settings::{KEYS, Key, closest, reference};
