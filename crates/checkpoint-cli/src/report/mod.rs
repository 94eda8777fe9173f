//! `checkpoint report`: what happened in a worktree, as one page or as JSON. [`gather`] reads
//! the records into the data [`model`]; [`html`] (with [`chart`] for the drawings) renders the
//! page from it, and `--json` prints it.

pub(crate) mod chart;
pub(crate) mod gather;
pub(crate) mod html;
pub(crate) mod model;
