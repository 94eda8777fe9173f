//! This process's stdin as a hook reads it: with a deadline, so a writer that never writes or
//! closes cannot keep the hook waiting. The payload itself is read from it by
//! [`checkpoint_core::event::read_payload`].

use std::io::{self, Read};
use std::time::{Duration, Instant};

/// How long a hook waits for its payload on stdin before giving up (agents write it at once).
pub const LIMIT: Duration = Duration::from_secs(10);

/// This process's stdin, read with a deadline: a read that gets nothing for `limit` in total
/// fails with `TimedOut` instead of waiting for a writer that never writes or closes. Each read
/// waits in `poll(2)` on this thread, so no reader thread outlives the call.
pub fn within(limit: Duration) -> impl Read {
    Within {
        stdin: io::stdin(),
        deadline: Instant::now() + limit,
    }
}

/// The reader [`within`] returns: unbuffered reads of the stdin descriptor, each after a
/// wait for it to be readable (or closed) that ends at the deadline.
struct Within {
    stdin: io::Stdin,
    deadline: Instant,
}

impl Read for Within {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        use rustix::io::Errno;
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no complete payload on stdin in time",
                ));
            }
            let timeout = Timespec::try_from(left).map_err(io::Error::other)?;
            let mut fds = [PollFd::new(&self.stdin, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                // Readable, at its end, or in error: the read says which.
                Ok(ready) if ready > 0 => match rustix::io::read(&self.stdin, &mut *buf) {
                    Err(Errno::INTR | Errno::AGAIN) => {}
                    read => return read.map_err(io::Error::from),
                },
                Ok(_) | Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}
