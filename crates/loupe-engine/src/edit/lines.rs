//! A text's lines as byte spans (`\n`, `\r\n` and lone `\r` all end one), and lines shown
//! numbered: what the text operations and the failures count by.

/// One line of a text: its bytes `start..end`, and where the next line starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) next: usize,
}

pub(super) fn line_spans(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut spans = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                spans.push(Span { start, end: at, next: at + 1 });
                start = at + 1;
            }
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                spans.push(Span { start, end: at, next: at + 2 });
                at += 1;
                start = at + 1;
            }
            b'\r' => {
                spans.push(Span { start, end: at, next: at + 1 });
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    if start < bytes.len() {
        spans.push(Span { start, end: bytes.len(), next: bytes.len() });
    }
    spans
}

/// The 1-based line holding byte `offset`.
pub(super) fn line_of(spans: &[Span], offset: usize) -> usize {
    spans.partition_point(|span| span.next <= offset) + 1
}

/// `text` with each line numbered from `first`, as a failure quotes the current text.
pub(super) fn numbered(text: &str, first: usize) -> String {
    let mut out = String::new();
    for (offset, span) in line_spans(text).iter().enumerate() {
        out.push_str(&loupe_core::text::numbered_line(first + offset, &text[span.start..span.end]));
        out.push('\n');
    }
    out.trim_end_matches('\n').to_owned()
}
