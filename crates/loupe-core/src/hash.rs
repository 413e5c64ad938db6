//! Content hashes: what a file (or a range of it) contained when it was read.
//!
//! A hash is the first 16 hex digits of BLAKE3 over the raw bytes on disk. 64 bits are ample
//! for detecting that a file changed between a read and an edit, and cost few tokens.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContentHash(String);

impl ContentHash {
    pub const HEX_LEN: usize = 16;

    pub fn of(bytes: &[u8]) -> ContentHash {
        let full = blake3::hash(bytes).to_hex();
        ContentHash(full.as_str()[..Self::HEX_LEN].to_owned())
    }

    /// Accepts a hash string from a caller (a cursor or a precondition).
    pub fn parse(text: &str) -> Option<ContentHash> {
        let valid = text.len() == Self::HEX_LEN && text.bytes().all(|b| b.is_ascii_hexdigit());
        valid.then(|| ContentHash(text.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_short() {
        let hash = ContentHash::of(b"fn main() {}\n");
        assert_eq!(hash.as_str().len(), 16);
        assert_eq!(hash, ContentHash::of(b"fn main() {}\n"));
        assert_ne!(hash, ContentHash::of(b"fn main() {}\r\n"));
        assert_eq!(ContentHash::parse(hash.as_str()), Some(hash));
        assert_eq!(ContentHash::parse("xyz"), None);
    }
}
