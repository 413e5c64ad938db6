//! Read cursors (§3.5): opaque strings that carry the file hash, the path and the position.
//!
//! A cursor is only ever honoured for the same path and the same file content; anything else
//! is refused, never silently misapplied. The encoding is 21 bytes of base64url (28
//! characters), because the model pays for every character of a cursor it copies.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use loupe_core::{ContentHash, RepoPath};

const VERSION: u8 = 1;
const ENCODED_BYTES: usize = 1 + 8 + 4 + 4 + 4;

/// Where a cut read continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadCursor {
    pub(crate) file_hash: ContentHash,
    path_tag: [u8; 4],
    /// The 1-based line the next page starts at.
    pub(crate) next_line: usize,
    /// The last line of the window the caller asked for (snippet); 0 means the end of file.
    pub(crate) window_end: usize,
}

impl ReadCursor {
    pub(crate) fn new(file_hash: ContentHash, path: &RepoPath, next_line: usize, window_end: usize) -> ReadCursor {
        ReadCursor { file_hash, path_tag: path_tag(path), next_line, window_end }
    }

    pub(crate) fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(ENCODED_BYTES);
        bytes.push(VERSION);
        for pair in self.file_hash.as_str().as_bytes().chunks(2) {
            let hex = std::str::from_utf8(pair).unwrap_or("00");
            bytes.push(u8::from_str_radix(hex, 16).unwrap_or(0));
        }
        bytes.extend_from_slice(&self.path_tag);
        bytes.extend_from_slice(&(self.next_line as u32).to_be_bytes());
        bytes.extend_from_slice(&(self.window_end as u32).to_be_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    pub(crate) fn decode(text: &str) -> Option<ReadCursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
        if bytes.len() != ENCODED_BYTES || bytes[0] != VERSION {
            return None;
        }
        let hex: String = bytes[1..9].iter().map(|byte| format!("{byte:02x}")).collect();
        let file_hash = ContentHash::parse(&hex)?;
        let path_tag = bytes[9..13].try_into().ok()?;
        let next_line = u32::from_be_bytes(bytes[13..17].try_into().ok()?) as usize;
        let window_end = u32::from_be_bytes(bytes[17..21].try_into().ok()?) as usize;
        (next_line >= 1).then_some(ReadCursor { file_hash, path_tag, next_line, window_end })
    }

    pub(crate) fn is_for(&self, path: &RepoPath) -> bool {
        self.path_tag == path_tag(path)
    }
}

fn path_tag(path: &RepoPath) -> [u8; 4] {
    let hash = blake3::hash(path.as_str().as_bytes());
    let mut tag = [0; 4];
    tag.copy_from_slice(&hash.as_bytes()[..4]);
    tag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let path = RepoPath::normalize("src/a.rs").unwrap();
        let cursor = ReadCursor::new(ContentHash::of(b"x"), &path, 301, 0);
        let encoded = cursor.encode();
        assert_eq!(encoded.len(), 28);
        let decoded = ReadCursor::decode(&encoded).unwrap();
        assert_eq!(decoded, cursor);
        assert!(decoded.is_for(&path));
        assert!(!decoded.is_for(&RepoPath::normalize("src/b.rs").unwrap()));
        assert_eq!(ReadCursor::decode("not-a-cursor"), None);
        assert_eq!(ReadCursor::decode(""), None);
    }
}
