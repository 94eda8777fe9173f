//! One output stream of a test run, read from a pipe on its own thread: hashed whole, but only its
//! first [`HEAD_BYTES`] and last [`TAIL_BYTES`] kept, so a test that prints gigabytes costs neither
//! disk nor memory.

use std::io::{self, Read};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The most bytes kept from the start of a stream.
pub(super) const HEAD_BYTES: usize = 16 * 1024;
/// The most bytes kept from the end of a stream.
pub(super) const TAIL_BYTES: usize = 256 * 1024;
/// How often a reader is checked while waiting for it to finish.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// What a stream delivered so far.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    /// The end of the stream; trimmed to [`TAIL_BYTES`] whenever it reaches twice that.
    tail: Vec<u8>,
    total: u64,
    hasher: Sha256,
}

impl Kept {
    fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        self.hasher.update(chunk);
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        let (into_head, rest) = chunk.split_at(room.min(chunk.len()));
        self.head.extend_from_slice(into_head);
        chunk = rest;
        self.tail.extend_from_slice(chunk);
        if self.tail.len() >= 2 * TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
    }
}

/// A stream, read to its end in the background.
pub(super) struct Capture {
    kept: Arc<Mutex<Kept>>,
    reader: JoinHandle<()>,
}

/// What a finished (or abandoned) [`Capture`] holds.
pub(super) struct Captured {
    /// The head, a `… N bytes of output dropped …` line when the middle was cut, and the tail (the
    /// tail from a line start when it was cut).
    pub(super) bytes: Vec<u8>,
    /// Lowercase hex SHA-256 of everything the stream delivered.
    pub(super) sha256: String,
}

impl Capture {
    /// Starts reading `source` until its end.
    pub(super) fn start(mut source: impl Read + Send + 'static) -> io::Result<Capture> {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let shared = Arc::clone(&kept);
        let reader = thread::Builder::new()
            .name("test-output".to_owned())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match source.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => shared
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(&buf[..n]),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => return,
                    }
                }
            })?;
        Ok(Capture { kept, reader })
    }

    /// Waits until the stream ends or `deadline` passes (a process that escaped the group may
    /// hold it open), and returns what was read by then.
    pub(super) fn finish(self, deadline: Instant) -> Captured {
        while !self.reader.is_finished() && Instant::now() < deadline {
            thread::sleep(POLL_INTERVAL);
        }
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let sha256 = checkpoint_core::hex::hex(&kept.hasher.clone().finalize());
        let mut bytes = kept.head.clone();
        let mut tail = &kept.tail[kept.tail.len().saturating_sub(TAIL_BYTES)..];
        if kept.total > (kept.head.len() + tail.len()) as u64 {
            // Resume at a line start, so no half line reaches the summary.
            if let Some(newline) = tail.iter().position(|&b| b == b'\n') {
                tail = &tail[newline + 1..];
            }
            let dropped = kept.total - (kept.head.len() + tail.len()) as u64;
            if !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            bytes.extend(format!("… {dropped} bytes of output dropped …\n").as_bytes());
        }
        bytes.extend_from_slice(tail);
        Captured { bytes, sha256 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(input: Vec<u8>) -> Captured {
        Capture::start(io::Cursor::new(input))
            .unwrap()
            .finish(Instant::now() + Duration::from_secs(60))
    }

    #[test]
    fn a_short_stream_is_kept_whole() {
        let got = captured(b"one\ntwo\n".to_vec());
        assert_eq!(got.bytes, b"one\ntwo\n");
        assert_eq!(got.sha256, checkpoint_core::hex::sha256_hex(b"one\ntwo\n"));
    }

    #[test]
    fn a_long_stream_keeps_head_and_tail_and_says_what_was_dropped() {
        let line = "x".repeat(99) + "\n";
        let input = (line.repeat(20_000) + "last\n").into_bytes();
        let got = captured(input.clone());
        assert_eq!(got.sha256, checkpoint_core::hex::sha256_hex(&input));
        assert!(got.bytes.len() <= HEAD_BYTES + TAIL_BYTES + 64);
        assert!(got.bytes.starts_with(line.as_bytes()));
        assert!(got.bytes.ends_with(format!("{line}last\n").as_bytes()));
        let text = String::from_utf8_lossy(&got.bytes);
        let marker = text
            .lines()
            .find(|l| l.starts_with("… "))
            .expect("a dropped-bytes line");
        let dropped: usize = marker
            .trim_start_matches("… ")
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // The head ends inside a line, which gets its own newline before the marker.
        assert_eq!(dropped + got.bytes.len() - marker.len() - 2, input.len());
    }
}
