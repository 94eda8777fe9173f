//! Affected-test selection backed by evidence, interpreted languages (issue 33): Python and JS.
