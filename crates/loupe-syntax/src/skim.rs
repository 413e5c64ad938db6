//! What a declarations parse of C may leave unparsed: the insides of function bodies and of
//! file-scope initializers (Python's: `python.rs`).
//!
//! The index's parse (`Extract::Declarations`) does not walk a C function body that defines
//! no macro, yet tree-sitter still spends most of a `.c` file's parse time inside them. A
//! lexical scan finds the bodies first (a `{` at file scope right after a `)`, up to its
//! matching `}`, skipping comments, string and character literals and preprocessor lines),
//! and the parser is handed the text around them as included ranges: it sees `f(void) {}`,
//! while every node keeps its position in the whole text, so spans are unchanged. A `{` at
//! file scope right after `=` opens an initializer, left out the same way (`x[] = {}`): on
//! Linux's `fs/` and `sound/soc/` that took a third off the parse (error recovery around
//! macros in drivers' tables was most of it), and found 60 variables that recovery had lost.
//!
//! The scan gives up (the file is parsed whole) when braces do not balance, when a
//! conditional branch (`#else`, `#elif`, `#endif`) is reached at another brace depth than
//! its `#if` (two branches each opening a block), or when a comment does not end. A body
//! containing `define` is kept whole, as the walk would look inside it.

pub(crate) mod python;

use memchr::memmem;
use tree_sitter::{Node, Point, Range, Tree};

/// Words whose parenthesised group before a `{` makes it something else than a function body.
const ATTRIBUTES: &[&[u8]] = &[b"__attribute__", b"__attribute", b"__declspec", b"_Alignas", b"alignas", b"__aligned"];

/// `last` after an identifier or a number.
const WORD: u8 = b'a';

/// Bodies shorter than this are parsed: a range switch costs more than they do.
const MIN_GAP: usize = 64;

/// Parses C `text` for its declarations through `parse` (given the included ranges, or
/// `None` for the whole text), leaving out the function bodies it can. A left-out body that
/// did not come back as a block (the scan took a struct's or an initializer's `{` for a
/// body's) is parsed in the next attempt; the third attempt parses everything.
pub(crate) fn parse_c_declarations(
    text: &str,
    mut parse: impl FnMut(Option<&[Range]>) -> Option<Tree>,
) -> Option<Tree> {
    let Some(gaps) = body_gaps(text.as_bytes()) else { return parse(None) };
    parse_leaving_out(
        text,
        gaps,
        |&(start, end, _)| (start, end),
        |root, &(start, _, kind)| parsed_as(root, start, kind),
        parse,
    )
}

/// Parses `text` through `parse` with `gaps` left out (`span`: a gap's byte range), and keeps
/// the tree once every gap `came_back` as the scan saw it; the gaps that did not are parsed in
/// the next attempt, and the third attempt parses everything, as does a refused range list.
/// What C's and Python's scans share.
fn parse_leaving_out<G>(
    text: &str,
    mut gaps: Vec<G>,
    span: impl Fn(&G) -> (usize, usize),
    came_back: impl Fn(Node<'_>, &G) -> bool,
    mut parse: impl FnMut(Option<&[Range]>) -> Option<Tree>,
) -> Option<Tree> {
    for _ in 0..2 {
        if gaps.is_empty() {
            break;
        }
        let spans: Vec<(usize, usize)> = gaps.iter().map(&span).collect();
        let Some(tree) = parse(Some(&included_ranges(text, &spans))) else { break };
        let before = gaps.len();
        let root = tree.root_node();
        gaps.retain(|gap| came_back(root, gap));
        if gaps.len() == before {
            return Some(tree);
        }
    }
    parse(None)
}

/// Whether the `{` before `start` opens a `kind`: a block (`f(void) {}`, or a block after a
/// macro call at file scope, which C's grammar also accepts), or an initializer list.
fn parsed_as(root: Node<'_>, start: usize, kind: &str) -> bool {
    root.descendant_for_byte_range(start - 1, start)
        .is_some_and(|brace| brace.kind() == "{" && brace.parent().is_some_and(|parent| parent.kind() == kind))
}

/// What a `{` the scan leaves the inside of out opens: a function body, or the initializer of a
/// file-scope variable (Linux's drivers hold tables of thousands of lines; the walk keeps
/// nothing from inside either).
const BODY: &str = "compound_statement";
const INITIALIZER: &str = "initializer_list";

/// The text around `gaps` as included ranges, positions those of the whole text.
fn included_ranges(text: &str, gaps: &[(usize, usize)]) -> Vec<Range> {
    let mut points = Points::new(text.as_bytes());
    let mut ranges = Vec::with_capacity(gaps.len() + 1);
    let mut start = (0, Point::new(0, 0));
    for &(gap_start, gap_end) in gaps {
        let end_point = points.at(gap_start);
        ranges.push(Range { start_byte: start.0, end_byte: gap_start, start_point: start.1, end_point });
        start = (gap_end, points.at(gap_end));
    }
    let end = points.at(text.len());
    ranges.push(Range { start_byte: start.0, end_byte: text.len(), start_point: start.1, end_point: end });
    ranges
}

/// Row and column of ascending byte offsets, counting newlines once.
struct Points<'a> {
    bytes: &'a [u8],
    offset: usize,
    row: usize,
    line_start: usize,
}

impl<'a> Points<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Points { bytes, offset: 0, row: 0, line_start: 0 }
    }

    fn at(&mut self, offset: usize) -> Point {
        for newline in memchr::memchr_iter(b'\n', &self.bytes[self.offset..offset]) {
            self.row += 1;
            self.line_start = self.offset + newline + 1;
        }
        self.offset = offset;
        Point::new(self.row, offset - self.line_start)
    }
}

/// The byte ranges strictly inside the function bodies and file-scope initializers worth
/// leaving out, ascending, each with what its `{` opens (`BODY` or `INITIALIZER`).
fn body_gaps(b: &[u8]) -> Option<Vec<(usize, usize, &'static str)>> {
    let mut gaps = Vec::new();
    let mut depth = 0usize;
    // The depth at each open `#if`, which every branch must reach its end at.
    let mut conditionals: Vec<usize> = Vec::new();
    // Only whitespace (or comments) since the line began: a `#` here starts a directive.
    let mut line_start = true;
    // The last byte of code seen outside comments; a directive resets it.
    let mut last = b'\n';
    let mut body: Option<(usize, &'static str)> = None;
    // Parenthesis depth, the last word (`last == WORD`) and whether the outermost group
    // open now (or last closed) is an attribute's.
    let mut parens = 0usize;
    let mut word = (0, 0);
    let mut group_is_attribute = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i)?,
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'#' if line_start => {
                let (name, after) = directive_name(b, i + 1);
                let balanced = match name {
                    b"if" | b"ifdef" | b"ifndef" => {
                        conditionals.push(depth);
                        true
                    }
                    b"elif" | b"else" | b"elifdef" | b"elifndef" => conditionals.last() == Some(&depth),
                    b"endif" => conditionals.pop() == Some(depth),
                    _ => true,
                };
                if !balanced {
                    return None;
                }
                i = directive_end(b, after)?;
                last = b'#';
            }
            quote @ (b'"' | b'\'') => {
                i = literal_end(b, i + 1, quote);
                line_start = false;
                last = quote;
            }
            b'{' => {
                if depth == 0 && last == b')' {
                    body = Some((i + 1, BODY));
                } else if depth == 0 && last == b'=' {
                    body = Some((i + 1, INITIALIZER));
                }
                depth += 1;
                i += 1;
                line_start = false;
                last = b'{';
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0
                    && let Some((start, kind)) = body.take()
                    && i - start >= MIN_GAP
                    && memmem::find(&b[start..i], b"define").is_none()
                {
                    gaps.push((start, i, kind));
                }
                i += 1;
                line_start = false;
                last = b'}';
            }
            b'(' => {
                if parens == 0 {
                    // The word right before the group: `__attribute__` in
                    // `struct __attribute__((packed)) {` makes the `{` a struct's.
                    group_is_attribute = last == WORD && ATTRIBUTES.contains(&&b[word.0..word.1]);
                }
                parens += 1;
                i += 1;
                line_start = false;
                last = b'(';
            }
            b')' => {
                parens = parens.saturating_sub(1);
                i += 1;
                line_start = false;
                last = if parens == 0 && group_is_attribute { WORD } else { b')' };
            }
            c if c == b'_' || c.is_ascii_alphanumeric() => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                word = (start, i);
                line_start = false;
                last = WORD;
            }
            other => {
                if other == b';' && depth == 0 {
                    parens = 0;
                }
                i += 1;
                line_start = false;
                last = other;
            }
        }
    }
    (depth == 0 && conditionals.is_empty()).then_some(gaps)
}

/// The offset just past the `*/` closing the comment opened at `start`.
fn block_comment_end(b: &[u8], start: usize) -> Option<usize> {
    memmem::find(&b[start + 2..], b"*/").map(|at| start + 2 + at + 2)
}

/// The offset of the newline ending the line comment at `start` (a backslash continues it).
fn line_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    loop {
        match memchr::memchr(b'\n', &b[i..]) {
            None => return b.len(),
            Some(at) => {
                let newline = i + at;
                let continued = b[..newline].ends_with(b"\\") || b[..newline].ends_with(b"\\\r");
                if !continued {
                    return newline;
                }
                i = newline + 1;
            }
        }
    }
}

/// A directive's name (`if`, `define`, …) after its `#`, and the offset after it.
fn directive_name(b: &[u8], start: usize) -> (&[u8], usize) {
    let mut i = start;
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    let name_start = i;
    while i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    (&b[name_start..i], i)
}

/// The offset of the newline ending a directive: backslash continuations and block comments
/// carry it over lines.
fn directive_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\n' => return Some(i),
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => i += 3,
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i)?,
            b'/' if b.get(i + 1) == Some(&b'/') => return Some(line_end(b, i)),
            _ => i += 1,
        }
    }
    Some(b.len())
}

/// The offset just past the literal's closing `quote`, or of the newline that ends an
/// unterminated one (an apostrophe in prose under `#if 0`).
fn literal_end(b: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(text: &str) -> Option<Vec<&str>> {
        let found = body_gaps(text.as_bytes())?;
        Some(found.into_iter().map(|(start, end, _)| &text[start..end]).collect())
    }

    fn body(lines: usize) -> String {
        (0..lines).map(|n| format!("\tcall_{n}(x, \"}}\", '{{');\n")).collect()
    }

    #[test]
    fn function_bodies_are_gaps_and_other_braces_are_not() {
        let inner = body(4);
        let text = format!(
            "struct s {{ int a; }};\nstatic int t[] = {{ 1, 2 }};\nint f(int x) /* c */\n{{\n{inner}}}\n\
             int g(void) {{ return 1; }}\n"
        );
        assert_eq!(gaps(&text), Some(vec![format!("\n{inner}").as_str()]));
    }

    #[test]
    fn literals_comments_and_directives_do_not_count_braces() {
        let inner = format!("{}\t/* }} */\n\t// }}\n#if X\n\tif (a) {{ b(); }}\n#endif\n", body(3));
        let text = format!("#define OPEN {{\nint f(void)\n{{{inner}}}\n");
        assert_eq!(gaps(&text), Some(vec![inner.as_str()]));
    }

    #[test]
    fn branches_opening_blocks_and_bodies_defining_macros_are_parsed() {
        let branches =
            format!("int f(void)\n{{\n#ifdef X\n\tif (a) {{\n#else\n\tif (b) {{\n#endif\n{}\t}}\n}}\n", body(3));
        assert_eq!(gaps(&branches), None);
        let defines = format!("int f(void)\n{{\n#define N 3\n{}}}\n", body(3));
        assert_eq!(gaps(&defines), Some(vec![]));
        assert_eq!(gaps("int f(void) {\n"), None);
        assert_eq!(gaps("}\n"), None);
        assert_eq!(gaps("/* open"), None);
    }

    #[test]
    fn ranges_carry_rows_and_columns() {
        let text = format!("int f(void) {{\n{}}}\nint g;\n", body(4));
        let gaps: Vec<(usize, usize)> =
            body_gaps(text.as_bytes()).expect("one body").iter().map(|&(start, end, _)| (start, end)).collect();
        let ranges = included_ranges(&text, &gaps);
        assert_eq!(ranges.len(), 2);
        assert_eq!((ranges[0].end_byte, ranges[0].end_point), (13, Point::new(0, 13)));
        let close = text.find("}\nint g").expect("closing brace");
        assert_eq!((ranges[1].start_byte, ranges[1].start_point), (close, Point::new(5, 0)));
        assert_eq!(ranges[1].end_byte, text.len());
    }

    /// The range counts of each parse `parse_c_declarations` asks for (`0`: the whole text).
    fn attempts(text: &str) -> Vec<usize> {
        let language = crate::languages::compiled(crate::Lang::C).language.clone();
        let mut asked = Vec::new();
        let tree = parse_c_declarations(text, |ranges| {
            asked.push(ranges.map_or(0, <[Range]>::len));
            crate::parse_tree(crate::Lang::C, &language, text, ranges)
        });
        assert!(tree.is_some());
        asked
    }

    #[test]
    fn a_brace_that_was_not_a_body_is_parsed_in_the_next_attempt() {
        let function = format!("int f(void)\n{{\n{}}}\n", body(3));
        assert_eq!(attempts(&function), [2]);
        let literal = "struct point origin = (struct point) { .x = 0, .y = 0, .label = \"the origin of the plane, where both axes cross\" };\n";
        let both = format!("{literal}{function}");
        assert_eq!(attempts(&both), [3, 2]);
        assert_eq!(attempts(literal), [2, 0]);
        assert_eq!(attempts("int x;\n"), [0]);
    }

    /// A file-scope initializer (a driver's table, with a conditional inside) is left out like
    /// a body: one parse, the variable keeps its span and what follows is read as before.
    #[test]
    fn file_scope_initializers_are_left_out_and_their_variables_keep_their_spans() {
        let table = "static const struct pci_device_id ids[] = {\n#ifdef CONFIG_X\n\t{ PCI_DEVICE(0x8086, 0x1234), .driver_data = 1 },\n#endif\n\t{ PCI_DEVICE(0x8086, 0x5678), .driver_data = 2 },\n\t{ 0 }\n};\nint after(void);\n";
        let found = body_gaps(table.as_bytes()).expect("scanned");
        assert_eq!(found.iter().map(|gap| gap.2).collect::<Vec<_>>(), [INITIALIZER]);
        assert_eq!(attempts(table), [2]);
        let facts = crate::parse_with(crate::Lang::C, table, crate::Extract::Declarations);
        let span = |name: &str| {
            let found = facts.definitions.iter().find(|definition| definition.name == name);
            found.map(|definition| (definition.span.start_line, definition.span.end_line))
        };
        assert_eq!((span("ids"), span("after")), (Some((1, 7)), Some((8, 8))), "{facts:?}");
        assert_eq!(facts.error_nodes, 0);
    }
}
