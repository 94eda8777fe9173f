//! Affected-test selection backed by evidence, compiled languages (issue 33): Rust and Go.
