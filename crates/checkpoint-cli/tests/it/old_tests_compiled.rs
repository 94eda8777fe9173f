//! The tests as they were, run on the new code (issue 32): compiled languages.
