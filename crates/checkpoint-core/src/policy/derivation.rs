//! The `[journal] key_derivation` setting: the path along which a task's receipt-signing key is
//! derived from the master key.
//!
//! A template is written like a SLIP-0010 path, `m/7466'/{task}'`: `m`, then segments separated
//! by `/`, each a number below 2³¹ or `{task}`, each hardened (`'`) — Ed25519 has no other kind
//! of child key. Exactly one segment is `{task}`: it stands for the task's index, the first 31
//! bits of SHA-256 of the task id, so the same task id always gets the same key and two tasks
//! almost never share one (the chance is 2⁻³¹ per pair).

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use sha2::{Digest, Sha256};

use super::value::Kind;

/// The placeholder for the task's index.
const TASK: &str = "{task}";

/// The flag that makes a SLIP-0010 index hardened.
pub const HARDENED: u32 = 1 << 31;

/// The most segments a template may have.
const MAX_DEPTH: usize = 16;

/// One segment of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    /// A fixed index (below 2³¹).
    Fixed(u32),
    /// The task's index.
    Task,
}

/// A validated key-derivation template such as `m/7466'/{task}'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDerivation {
    text: String,
    segments: Vec<Segment>,
}

impl KeyDerivation {
    /// The task's index: the first 31 bits of SHA-256 of `task_id`.
    pub fn task_index(task_id: &str) -> u32 {
        let hash = Sha256::digest(task_id.as_bytes());
        u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]]) >> 1
    }

    /// The hardened SLIP-0010 indices (each with [`HARDENED`] set) of `task_id`'s key.
    pub fn indices(&self, task_id: &str) -> Vec<u32> {
        let task = KeyDerivation::task_index(task_id);
        self.segments
            .iter()
            .map(|segment| match segment {
                Segment::Fixed(index) => index | HARDENED,
                Segment::Task => task | HARDENED,
            })
            .collect()
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl Default for KeyDerivation {
    fn default() -> Self {
        "m/7466'/{task}'"
            .parse()
            .expect("the default template is valid")
    }
}

impl fmt::Display for KeyDerivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for KeyDerivation {
    type Err = String;

    fn from_str(text: &str) -> Result<KeyDerivation, String> {
        let bad = |why: &str| Err(format!("bad key derivation {text:?}: {why}"));
        let Some(rest) = text.strip_prefix("m/") else {
            return bad("it must start with `m/`");
        };
        let mut segments = Vec::new();
        for part in rest.split('/') {
            let Some(body) = part.strip_suffix('\'') else {
                return bad(&format!(
                    "segment {part:?} is not hardened (end it with `'`)"
                ));
            };
            let segment = match body {
                TASK => Segment::Task,
                digits if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    match digits.parse::<u32>() {
                        Ok(index) if index < HARDENED => Segment::Fixed(index),
                        _ => return bad(&format!("index {digits} is not below 2^31")),
                    }
                }
                _ => {
                    return bad(&format!(
                        "segment {part:?} is neither a number nor `{TASK}'`"
                    ));
                }
            };
            segments.push(segment);
        }
        match segments.iter().filter(|s| **s == Segment::Task).count() {
            1 => {}
            _ => return bad(&format!("it needs exactly one `{TASK}'` segment")),
        }
        if segments.len() > MAX_DEPTH {
            return bad(&format!("more than {MAX_DEPTH} segments"));
        }
        Ok(KeyDerivation {
            text: text.to_owned(),
            segments,
        })
    }
}

impl Serialize for KeyDerivation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for KeyDerivation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyDerivation, D::Error> {
        String::deserialize(d)?.parse().map_err(de::Error::custom)
    }
}

impl Kind for KeyDerivation {
    type Field = KeyDerivation;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<KeyDerivation, D::Error> {
        <KeyDerivation as Deserialize>::deserialize(d)
    }

    fn parse(text: &str) -> Result<KeyDerivation, String> {
        text.trim().parse()
    }

    fn to_toml(field: &KeyDerivation) -> Option<toml::Value> {
        Some(toml::Value::String(field.text.clone()))
    }

    fn values() -> String {
        "a path of hardened indices with one `{task}'`, e.g. `\"m/7466'/0'/{task}'\"`".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_hardened_with_exactly_one_task() {
        let default = KeyDerivation::default();
        let index = KeyDerivation::task_index("t-1");
        assert!(index < HARDENED);
        assert_eq!(default.indices("t-1"), [7466 | HARDENED, index | HARDENED]);
        assert_eq!(default.indices("t-1"), default.indices("t-1"));
        assert_ne!(default.indices("t-1"), default.indices("t-2"));
        let deep: KeyDerivation = "m/44'/{task}'/0'".parse().unwrap();
        assert_eq!(
            deep.indices("t-1"),
            [44 | HARDENED, index | HARDENED, HARDENED]
        );
        for (bad, why) in [
            ("7466'/{task}'", "must start with `m/`"),
            ("m/7466/{task}'", "\"7466\" is not hardened"),
            ("m/7466'/{task}", "\"{task}\" is not hardened"),
            ("m/7466'", "exactly one"),
            ("m/{task}'/{task}'", "exactly one"),
            ("m/2147483648'/{task}'", "not below 2^31"),
            ("m/-1'/{task}'", "neither a number"),
            ("m/'/{task}'", "neither a number"),
            ("m/{job}'", "neither a number"),
            ("m/", "not hardened"),
        ] {
            let err = bad.parse::<KeyDerivation>().unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn the_task_index_is_the_first_31_bits_of_sha256() {
        // SHA-256("abc") = ba7816bf…
        assert_eq!(KeyDerivation::task_index("abc"), 0xba78_16bf >> 1);
    }
}
