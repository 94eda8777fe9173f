//! How the gate answered one stop: what a session's record keeps of each, and what `history`
//! joins to the turns it reads from transcripts.

use serde::{Deserialize, Serialize};

/// How the gate answered a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopVerdict {
    /// Let through.
    Allowed,
    /// Kept working.
    Blocked,
    /// Let through because the block cap was reached, with something unresolved.
    AllowedByCap,
}
