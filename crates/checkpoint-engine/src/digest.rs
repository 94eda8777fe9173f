//! SHA-256 digests in lowercase hex: of bytes ([`checkpoint_core::hex`]), of a file, of a stream. Fingerprints, the
//! continuity blob store, receipts and snapshots all name content this way.

use std::cell::RefCell;
use std::io::{self, Read};

use checkpoint_core::hex::hex;
use sha2::{Digest, Sha256};

thread_local! {
    /// The read buffer [`hash_reader`] reuses: allocated once per thread, not once per file.
    static HASH_BUFFER: RefCell<Box<[u8]>> = RefCell::new(vec![0u8; 64 * 1024].into_boxed_slice());
}

/// Streams everything `reader` yields through SHA-256 in 64 KiB chunks (lowercase hex), through
/// one buffer per thread.
pub(crate) fn hash_reader(mut reader: impl Read) -> io::Result<String> {
    HASH_BUFFER.with_borrow_mut(|buf| {
        let mut hasher = Sha256::new();
        loop {
            match reader.read(buf) {
                Ok(0) => return Ok(hex(&hasher.finalize())),
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_core::hex::sha256_hex;

    #[test]
    fn the_reused_buffer_carries_nothing_from_one_stream_to_the_next() {
        let long = vec![7u8; 200 * 1024];
        assert_eq!(hash_reader(long.as_slice()).unwrap(), sha256_hex(&long));
        assert_eq!(hash_reader(&b"abc"[..]).unwrap(), sha256_hex(b"abc"));
        assert_eq!(hash_reader(&b""[..]).unwrap(), sha256_hex(b""));
    }
}
