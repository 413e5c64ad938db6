//! Bytes to lines (§3.2): BOMs, UTF-8 with a lossless Latin-1 fallback, binary detection and
//! line endings.
//!
//! Lines end at `\n`, `\r\n` or a lone `\r`, the way editors count them, so a CR-only file is
//! not one giant line. Line numbers are 1-based everywhere outside this module's internals.

use serde::Serialize;

/// How many leading bytes are inspected for NUL when deciding that a file is binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Encoding {
    #[serde(rename = "utf-8")]
    Utf8,
    #[serde(rename = "utf-16le")]
    Utf16Le,
    #[serde(rename = "utf-16be")]
    Utf16Be,
    /// Invalid UTF-8 decoded byte-for-byte as ISO-8859-1, which is lossless.
    #[serde(rename = "latin-1")]
    Latin1,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
            Encoding::Latin1 => "latin-1",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineEnding {
    Lf,
    Crlf,
    Cr,
    Mixed,
    /// No line break at all (empty or single unterminated line).
    None,
}

impl LineEnding {
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "lf",
            LineEnding::Crlf => "crlf",
            LineEnding::Cr => "cr",
            LineEnding::Mixed => "mixed",
            LineEnding::None => "none",
        }
    }
}

/// One line of the decoded text: `start..end` is the content, `end..next` the terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    pub start: usize,
    pub end: usize,
    pub next: usize,
}

/// A decoded text file.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub text: String,
    pub encoding: Encoding,
    pub bom: bool,
    pub line_ending: LineEnding,
    pub lines: Vec<LineSpan>,
}

/// The file is binary: NUL bytes near its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryContent;

impl Decoded {
    pub fn total_lines(&self) -> usize {
        self.lines.len()
    }

    /// The content of 1-based line `number`, without its terminator.
    pub fn line(&self, number: usize) -> &str {
        let span = self.lines[number - 1];
        &self.text[span.start..span.end]
    }

    /// Lines `first..=last` (1-based) exactly as in the file, terminators included.
    pub fn raw_range(&self, first: usize, last: usize) -> &str {
        let start = self.lines[first - 1].start;
        let end = self.lines[last - 1].next;
        &self.text[start..end]
    }

    pub fn has_final_newline(&self) -> bool {
        self.lines.last().is_some_and(|span| span.next > span.end)
    }
}

/// Decodes file bytes. Fails only for binary content.
pub fn decode(bytes: &[u8]) -> Result<Decoded, BinaryContent> {
    let (text, encoding, bom) = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        decode_utf8_or_latin1(rest, true)?
    } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        (decode_utf16(rest, u16::from_le_bytes), Encoding::Utf16Le, true)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        (decode_utf16(rest, u16::from_be_bytes), Encoding::Utf16Be, true)
    } else {
        decode_utf8_or_latin1(bytes, false)?
    };
    let (lines, line_ending) = split_lines(&text);
    Ok(Decoded { text, encoding, bom, line_ending, lines })
}

/// `decode` for bytes the caller no longer needs: valid UTF-8 without a BOM (the common
/// case) becomes the text without a copy.
pub fn decode_owned(bytes: Vec<u8>) -> Result<Decoded, BinaryContent> {
    if bytes.starts_with(b"\xEF\xBB\xBF") || bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return decode(&bytes);
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(BinaryContent);
    }
    match String::from_utf8(bytes) {
        Ok(text) => {
            let (lines, line_ending) = split_lines(&text);
            Ok(Decoded { text, encoding: Encoding::Utf8, bom: false, line_ending, lines })
        }
        Err(error) => decode(error.as_bytes()),
    }
}

/// `bytes` as text when they are valid UTF-8: the check every search verification and decode
/// makes of a whole file, with SIMD where the CPU has it (several times core's speed).
pub fn as_utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// `bytes` as text when they are plain UTF-8 with `\n` line ends (no BOM, no NUL near the start,
/// no `\r`): their own decoded text, scanned in place by a search, where only the lines a match
/// starts on are located. Anything else is decoded first.
pub fn plain_text(bytes: &[u8]) -> Option<&str> {
    (!bytes.starts_with(b"\xEF\xBB\xBF")
        && !bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
        && memchr::memchr(b'\r', bytes).is_none())
    .then(|| as_utf8(bytes))
    .flatten()
}

/// True when the first 8 KiB hold a NUL byte (and no UTF-16 BOM explains it).
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return false;
    }
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

fn decode_utf8_or_latin1(bytes: &[u8], bom: bool) -> Result<(String, Encoding, bool), BinaryContent> {
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(BinaryContent);
    }
    match as_utf8(bytes) {
        Some(text) => Ok((text.to_owned(), Encoding::Utf8, bom)),
        None => Ok((bytes.iter().map(|&byte| char::from(byte)).collect(), Encoding::Latin1, bom)),
    }
}

fn decode_utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
}

fn split_lines(text: &str) -> (Vec<LineSpan>, LineEnding) {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
    let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
    let mut start = 0;
    for index in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if index < start {
            // The `\n` of a `\r\n` already consumed.
            continue;
        }
        if bytes[index] == b'\n' {
            lf += 1;
            lines.push(LineSpan { start, end: index, next: index + 1 });
            start = index + 1;
        } else if bytes.get(index + 1) == Some(&b'\n') {
            crlf += 1;
            lines.push(LineSpan { start, end: index, next: index + 2 });
            start = index + 2;
        } else {
            cr += 1;
            lines.push(LineSpan { start, end: index, next: index + 1 });
            start = index + 1;
        }
    }
    if start < bytes.len() {
        lines.push(LineSpan { start, end: bytes.len(), next: bytes.len() });
    }
    let ending = match (lf > 0, crlf > 0, cr > 0) {
        (false, false, false) => LineEnding::None,
        (true, false, false) => LineEnding::Lf,
        (false, true, false) => LineEnding::Crlf,
        (false, false, true) => LineEnding::Cr,
        _ => LineEnding::Mixed,
    };
    (lines, ending)
}

/// A character that could make text shown to a model look like something else: C0 and C1
/// controls (line breaks, carriage return, escape sequences), DEL, the Unicode line and
/// paragraph separators, and the bidirectional overrides, embeddings, isolates and marks
/// that reorder what a reader sees ("Trojan Source").
fn forges(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

fn escape_where(text: &str, escaped: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            _ if !escaped(character) => out.push(character),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(character))),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A name from the tree (a path, a symbol, a git path) as a face shows it: every character
/// `forges` would pass is written as an escape (`\n`, `\r`, `\t`, `\u{202e}`), so a file
/// named with a newline or a bidi override shows as one line that reads as what it is.
pub fn escape_name(name: &str) -> std::borrow::Cow<'_, str> {
    escape_where(name, forges)
}

/// The renderer's last pass over a face's own lines (everything but numbered content): the
/// same escapes as `escape_name`, except for the line feeds and tabs the face is laid out with.
pub fn escape_face_text(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |character| character != '\n' && character != '\t' && forges(character))
}

/// What separates a numbered line's number from its text (§3.2).
pub const LINE_NUMBER_SEPARATOR: char = ' ';

/// A numbered line as every face shows file lines (§3.2): the 1-based number, one
/// `LINE_NUMBER_SEPARATOR`, then the line verbatim (no line feed). The number ends at the
/// first separator, so the text is recovered exactly whatever it starts with.
pub fn numbered_line(number: usize, line: &str) -> String {
    format!("{number}{LINE_NUMBER_SEPARATOR}{line}")
}

/// Cuts `text` to at most `max_bytes` bytes at a UTF-8 boundary.
pub fn truncate_at_char_boundary(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A byte count for people: `812.0 kB`, `12.3 MB`, `1.34 GB` (decimal units).
pub fn human_bytes(bytes: u64) -> String {
    match bytes {
        0..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.2} GB", bytes as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_crlf_cr_and_mixed() {
        let lf = decode(b"a\nb\n").unwrap();
        assert_eq!((lf.total_lines(), lf.line_ending, lf.has_final_newline()), (2, LineEnding::Lf, true));
        let crlf = decode(b"a\r\nb").unwrap();
        assert_eq!((crlf.total_lines(), crlf.line_ending, crlf.has_final_newline()), (2, LineEnding::Crlf, false));
        assert_eq!(crlf.line(1), "a");
        assert_eq!(crlf.raw_range(1, 2), "a\r\nb");
        let cr = decode(b"a\rb\r").unwrap();
        assert_eq!((cr.total_lines(), cr.line_ending), (2, LineEnding::Cr));
        let mixed = decode(b"a\nb\r\nc").unwrap();
        assert_eq!(mixed.line_ending, LineEnding::Mixed);
        let empty = decode(b"").unwrap();
        assert_eq!((empty.total_lines(), empty.line_ending), (0, LineEnding::None));
    }

    #[test]
    fn bom_latin1_utf16_and_binary() {
        let bom = decode(b"\xEF\xBB\xBFhi\n").unwrap();
        assert_eq!((bom.text.as_str(), bom.bom, bom.encoding), ("hi\n", true, Encoding::Utf8));
        let latin = decode(b"caf\xE9\n").unwrap();
        assert_eq!((latin.line(1), latin.encoding), ("café", Encoding::Latin1));
        let utf16 = decode(b"\xFF\xFEh\x00i\x00\n\x00").unwrap();
        assert_eq!((utf16.line(1), utf16.encoding), ("hi", Encoding::Utf16Le));
        assert_eq!(decode(b"ELF\x00\x01").err(), Some(BinaryContent));
        assert!(looks_binary(b"ab\x00"));
        assert!(!looks_binary(b"\xFF\xFEa\x00"));
    }

    #[test]
    fn owned_decoding_agrees_with_borrowed() {
        for bytes in [&b"a\r\nb\rc\n\nd"[..], b"caf\xe9\n", b"\xEF\xBB\xBFx\n", b"", b"\r\n\r", b"no newline"] {
            let borrowed = decode(bytes).unwrap();
            let owned = decode_owned(bytes.to_vec()).unwrap();
            assert_eq!(
                (owned.text.as_str(), owned.lines.clone(), owned.line_ending),
                (borrowed.text.as_str(), borrowed.lines.clone(), borrowed.line_ending)
            );
        }
        assert_eq!(decode_owned(b"a\x00b".to_vec()).err(), Some(BinaryContent));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_at_char_boundary("héllo", 2), "h");
        assert_eq!(truncate_at_char_boundary("héllo", 3), "hé");
    }
}
