//! The processes of a process group, read from `/proc`: what an orphan test counts.

use std::fs;
use std::time::{Duration, Instant};

/// `/proc/<pid>/stat` fields after the command name: state and process group.
fn stat(pid: &str) -> Option<(char, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Pids of the live (not zombie, not dead) processes in process group `pgid`.
pub fn live_members(pgid: i32) -> Vec<String> {
    fs::read_dir("/proc")
        .expect("read /proc")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            stat(pid).is_some_and(|(state, pgrp)| pgrp == pgid && !matches!(state, 'Z' | 'X'))
        })
        .collect()
}

/// The live members of `pgid` left once it emptied or `patience` ran out.
pub fn survivors_after(pgid: i32, patience: Duration) -> Vec<String> {
    let end = Instant::now() + patience;
    loop {
        let live = live_members(pgid);
        if live.is_empty() || Instant::now() >= end {
            return live;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
