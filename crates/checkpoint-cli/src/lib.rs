//! The `checkpoint` command (in progress).
