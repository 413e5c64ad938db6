//! Read cursors (§3.5): opaque strings that carry the file's hash, the path and the position.
//!
//! A cursor is only ever honoured for the same path and the same file content; anything else
//! is refused, never silently misapplied. The model pays for every character of a cursor it
//! copies, and a cut read shows its cursor three times (the text's next call, `next_cursor` and
//! `next_calls`), so the encoding is small: a version byte, the first 4 bytes of the file's
//! hash, a 2-byte tag of the path, and the position as two LEB128 numbers: 9 to 13 bytes, 12
//! to 18 characters of base64url. The hash prefix and the tag only have to tell this file as
//! it was from the same file changed, or from another file the caller mixed up (2^-32 and
//! 2^-16 chances of a miss, and a miss on the tag alone still needs identical content).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use loupe_core::{ContentHash, RepoPath};

const VERSION: u8 = 2;
/// An outline's cursor: the same layout, its two numbers an item and a sub-item (see
/// `ReadCursor::outline`), so a read's cursor is never taken for an outline's or back.
const OUTLINE_VERSION: u8 = 3;
/// The longest encoding: version, hash prefix, tag and two 5-byte numbers.
const MAX_BYTES: usize = 1 + 4 + 2 + 5 + 5;

/// Where a cut read continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadCursor {
    hash_prefix: [u8; 4],
    path_tag: [u8; 2],
    /// The 1-based line the next page starts at.
    pub(crate) next_line: usize,
    /// The last line of the window the caller asked for (snippet); 0 means the end of file.
    pub(crate) window_end: usize,
    /// An outline's cursor: `next_line` is the 1-based definition (file) or file (directory)
    /// the next page starts at, `window_end` the definition within that file (directory).
    pub(crate) outline: bool,
}

impl ReadCursor {
    pub(crate) fn new(file_hash: &ContentHash, path: &RepoPath, next_line: usize, window_end: usize) -> ReadCursor {
        ReadCursor {
            hash_prefix: hash_prefix(file_hash),
            path_tag: path_tag(path),
            next_line,
            window_end,
            outline: false,
        }
    }

    /// Where a cut outline continues: `hash` is the file's (a file outline) or the list of
    /// files' (a directory outline); `item` is 1-based, `sub_item` 0-based.
    pub(crate) fn outline(hash: &ContentHash, path: &RepoPath, item: usize, sub_item: usize) -> ReadCursor {
        ReadCursor { outline: true, ..ReadCursor::new(hash, path, item, sub_item) }
    }

    pub(crate) fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(MAX_BYTES);
        bytes.push(if self.outline { OUTLINE_VERSION } else { VERSION });
        bytes.extend_from_slice(&self.hash_prefix);
        bytes.extend_from_slice(&self.path_tag);
        push_number(&mut bytes, self.next_line as u64);
        push_number(&mut bytes, self.window_end as u64);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    pub(crate) fn decode(text: &str) -> Option<ReadCursor> {
        let text = text.trim();
        if text.len() > MAX_BYTES.div_ceil(3) * 4 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let (&version, rest) = bytes.split_first()?;
        if (version != VERSION && version != OUTLINE_VERSION) || rest.len() < 6 {
            return None;
        }
        let hash_prefix = rest[..4].try_into().ok()?;
        let path_tag = rest[4..6].try_into().ok()?;
        let mut numbers = &rest[6..];
        let next_line = usize::try_from(read_number(&mut numbers)?).ok()?;
        let window_end = usize::try_from(read_number(&mut numbers)?).ok()?;
        let outline = version == OUTLINE_VERSION;
        (next_line >= 1 && numbers.is_empty()).then_some(ReadCursor {
            hash_prefix,
            path_tag,
            next_line,
            window_end,
            outline,
        })
    }

    pub(crate) fn is_for(&self, path: &RepoPath) -> bool {
        self.path_tag == path_tag(path)
    }

    /// Whether the file still has the content the cursor was issued for.
    pub(crate) fn matches(&self, file_hash: &ContentHash) -> bool {
        self.hash_prefix == hash_prefix(file_hash)
    }

    /// The hash prefix, as the hex a conflict names.
    pub(crate) fn hash_hex(&self) -> String {
        self.hash_prefix.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

fn hash_prefix(file_hash: &ContentHash) -> [u8; 4] {
    let mut prefix = [0; 4];
    for (slot, pair) in prefix.iter_mut().zip(file_hash.as_str().as_bytes().chunks(2)) {
        *slot = std::str::from_utf8(pair).ok().and_then(|hex| u8::from_str_radix(hex, 16).ok()).unwrap_or(0);
    }
    prefix
}

fn path_tag(path: &RepoPath) -> [u8; 2] {
    let hash = blake3::hash(path.as_str().as_bytes());
    [hash.as_bytes()[0], hash.as_bytes()[1]]
}

/// LEB128: 7 bits a byte, low first, the high bit set on all but the last.
fn push_number(bytes: &mut Vec<u8>, mut number: u64) {
    loop {
        let low = (number & 0x7f) as u8;
        number >>= 7;
        if number == 0 {
            bytes.push(low);
            return;
        }
        bytes.push(low | 0x80);
    }
}

/// At most 5 bytes (35 bits): a position past that is no cursor loupe issued.
fn read_number(bytes: &mut &[u8]) -> Option<u64> {
    let mut number = 0u64;
    for (index, &byte) in bytes.iter().enumerate().take(5) {
        number |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            *bytes = &bytes[index + 1..];
            return Some(number);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let path = RepoPath::normalize("src/a.rs").unwrap();
        let hash = ContentHash::of(b"x");
        let cursor = ReadCursor::new(&hash, &path, 301, 0);
        let encoded = cursor.encode();
        assert_eq!(encoded.len(), 14, "{encoded}");
        let decoded = ReadCursor::decode(&encoded).unwrap();
        assert_eq!(decoded, cursor);
        assert!(decoded.is_for(&path));
        assert!(!decoded.is_for(&RepoPath::normalize("src/b.rs").unwrap()));
        assert!(decoded.matches(&hash) && !decoded.matches(&ContentHash::of(b"y")));
        let far = ReadCursor::new(&hash, &path, 4_000_000_000, 4_000_000_100);
        assert_eq!(ReadCursor::decode(&far.encode()), Some(far));
        assert!(cursor.encode().len() <= 18);
        // A 6-byte number, or bytes after the position, are no cursor.
        let mut long = URL_SAFE_NO_PAD.decode(&encoded).unwrap();
        long.push(0);
        assert_eq!(ReadCursor::decode(&URL_SAFE_NO_PAD.encode(&long)), None);
        assert_eq!(ReadCursor::decode("not-a-cursor"), None);
        let outline = ReadCursor::outline(&hash, &path, 12, 3);
        assert_eq!(ReadCursor::decode(&outline.encode()), Some(outline.clone()));
        assert_ne!(outline.encode(), ReadCursor::new(&hash, &path, 12, 3).encode());
        assert_eq!(ReadCursor::decode(""), None);
    }
}
