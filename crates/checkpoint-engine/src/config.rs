//! The configuration as a process reads it: where the files are, reading them (bounded) and this
//! process's `CHECKPOINT_*` variables ([`ConfigSources`]), and detecting the test command in the
//! project ([`detect`]). Parsing, merging and explaining the texts is `checkpoint-core`'s
//! [`policy::config`](checkpoint_core::policy::config).

pub mod at_commit;
pub mod detect;
mod load;

pub use load::{
    ConfigSources, PROJECT_FILE, effective, effective_with, explain, load, read_project,
};
