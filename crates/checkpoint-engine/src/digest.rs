//! SHA-256 digests in lowercase hex: of bytes, of a file, of a stream. Fingerprints, the
//! continuity blob store, receipts and snapshots all name content this way.

use std::cell::RefCell;
use std::io::{self, Read};

use sha2::{Digest, Sha256};

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
        .map(char::from)
        .collect()
}

/// Decodes exactly `N` bytes of strict lowercase hex.
pub(crate) fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

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

    #[test]
    fn hex_is_lowercase_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_reused_buffer_carries_nothing_from_one_stream_to_the_next() {
        let long = vec![7u8; 200 * 1024];
        assert_eq!(hash_reader(long.as_slice()).unwrap(), sha256_hex(&long));
        assert_eq!(hash_reader(&b"abc"[..]).unwrap(), sha256_hex(b"abc"));
        assert_eq!(hash_reader(&b""[..]).unwrap(), sha256_hex(b""));
    }

    #[test]
    fn hex_decoding_is_strict() {
        assert_eq!(unhex::<2>("0aff"), Some([0x0a, 0xff]));
        assert_eq!(unhex::<2>("0AFF"), None);
        assert_eq!(unhex::<2>("0af"), None);
        assert_eq!(unhex::<2>("0afg"), None);
    }
}
