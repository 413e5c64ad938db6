//! What a declarations parse of Python may leave unparsed: most of a function body that can
//! hold nothing the index keeps.
//!
//! The walk does not enter such a body (`languages::python::skippable_body`), yet tree-sitter
//! spent most of django's cold build parsing them (56 % of its Python bytes are inside them).
//! A lexical scan splits the text into logical lines (strings, brackets, comments and
//! backslash continuations followed), finds each `def` whose body is on lines of its own and
//! holds no declaration word, and hands the parser the text without the body's logical lines
//! up to its last statement at the body's own indentation (its docstring, when it starts with
//! one, stays too): the parser sees `def f(x):\n        return y\n`, a complete block, whose
//! indentation stack is the one a whole parse has there, and every node keeps its position in
//! the whole text, so the function's span is unchanged. A clause that continues a statement
//! (`else:`, `except:`, `finally:`) is never where the parse resumes, nor is a string (it would
//! become the docstring). The last statement kept is left out inside the same way: each of its
//! clauses' blocks but its own last statement, and the inside of its brackets that span lines
//! (`return render(…)` is parsed as `return render()`, ending where it ends). With those, 46 %
//! of django's Python bytes are left out (37 % with bodies alone).
//!
//! The result is checked, not trusted: any error in the tree, or a left-out body whose function
//! does not come back starting on its `def` and ending between the body's last line and the
//! next logical line, has the gap parsed in the next attempt; the third parses everything. The
//! scan gives up on text it cannot follow (a tab or form feed in indentation, an unclosed string
//! or bracket). `examples/skim_check.rs` compares the facts with a whole parse's, field by
//! field: on 35,362 files (django, flask, the libraries and site-packages of CPython 2.7, 3.11,
//! 3.12 and 3.13) the same, but for 7 files whose whole parse has errors inside a left-out body
//! (Python 2 syntax, `test_compile.py`'s deliberate oddities), which the declarations parse does
//! not see; 16 files took a second parse.

use tree_sitter::{Node, Range, Tree};

use super::{MIN_GAP, parse_leaving_out};

/// Parses Python `text` for its declarations through `parse` (given the included ranges, or
/// `None` for the whole text), leaving out the function bodies it can.
pub(crate) fn parse_python_declarations(
    text: &str,
    mut parse: impl FnMut(Option<&[Range]>) -> Option<Tree>,
) -> Option<Tree> {
    let Some(gaps) = body_gaps(text.as_bytes()) else { return parse(None) };
    // An error anywhere is not placed: every gap is suspect, and the next parse is whole.
    let checked = |root: Node<'_>, gap: &Gap| !root.has_error() && came_back(root, gap);
    parse_leaving_out(text, gaps, |gap| (gap.start, gap.end), checked, parse)
}

/// A left-out part of one function's body: `start..end`, whole logical lines; the function's
/// `def` line starts at `def` (its first token); the body's last line, right after the gap,
/// has its first token at `resume` and ends on `last_row`, and the next logical line (if any)
/// starts on `next_row`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gap {
    start: usize,
    end: usize,
    def: usize,
    resume: usize,
    last_row: usize,
    next_row: usize,
}

/// Whether the function around the first token after `gap` was parsed as the scan saw it:
/// starting at its `def` and ending after the body's last line but before the next logical
/// line (comments between them may be its), with that token in its body.
fn came_back(root: Node<'_>, gap: &Gap) -> bool {
    let Some(mut node) = root.descendant_for_byte_range(gap.resume, gap.resume + 1) else { return false };
    loop {
        if node.kind() == "function_definition" {
            return node.start_byte() == gap.def
                && (gap.last_row..gap.next_row).contains(&node.end_position().row)
                && node.child_by_field_name("body").is_some_and(|body| body.start_byte() <= gap.resume);
        }
        let Some(parent) = node.parent() else { return false };
        node = parent;
    }
}

/// One logical line: `start` is its first physical line's first byte, `first` its first
/// token's, `end` the byte after its last newline; `indent` is in bytes (spaces only);
/// `first_row` and `row` are its first and last physical lines' 0-based numbers.
#[derive(Debug, Clone, Copy)]
struct Logical {
    start: usize,
    first: usize,
    end: usize,
    indent: usize,
    first_row: usize,
    row: usize,
    /// Its last token is `:` (a block opener whose block is on the lines after it).
    opens_block: bool,
}

/// The gaps of `b`, ascending; `None` when the scan cannot follow the text.
fn body_gaps(b: &[u8]) -> Option<Vec<Gap>> {
    let lines = logical_lines(b)?;
    let mut gaps = Vec::new();
    let mut next = 0;
    for (index, line) in lines.iter().enumerate() {
        if index < next || !line.opens_block || !starts_def(&b[line.first..]) {
            continue;
        }
        let body_end = block_end(&lines, index);
        let body = &lines[index + 1..body_end];
        let (Some(first), Some(last)) = (body.first(), body.last()) else { continue };
        if crate::languages::python::holds_declaration_words(&b[first.start..last.end]) {
            continue;
        }
        let function = Function {
            def: line.first,
            last_row: last.row,
            next_row: lines.get(body_end).map_or(usize::MAX, |next| next.first_row),
        };
        leave_out_block(b, &lines, index + 1..body_end, true, &function, &mut gaps);
        // The body holds no `def`: no function starts inside it.
        next = body_end;
    }
    Some(gaps)
}

/// The function a gap is in: where its `def` is, the row of its body's last line, and the row
/// the next logical line after it starts on.
struct Function {
    def: usize,
    last_row: usize,
    next_row: usize,
}

/// The index after the block that the line at `opener` opens: the next line at the opener's
/// indentation or less.
fn block_end(lines: &[Logical], opener: usize) -> usize {
    let indent = lines[opener].indent;
    lines[opener + 1..].iter().position(|line| line.indent <= indent).map_or(lines.len(), |at| opener + 1 + at)
}

/// Leaves out the block `lines[block]` (a function's body when `body`) but its last statement
/// at its own indentation, and does the same inside the blocks of that statement's clauses
/// (`if`/`elif`/`else`, `try`/`except`/`finally`, `for`/`else`, `with`, `match`'s cases):
/// the parse resumes at a line at its block's own indentation, where the scanner's indentation
/// stack is the same as a whole parse's, so what comes after (comments the block ends with,
/// dedents) is read as it would be.
fn leave_out_block(
    b: &[u8],
    lines: &[Logical],
    block: std::ops::Range<usize>,
    body: bool,
    function: &Function,
    gaps: &mut Vec<Gap>,
) {
    let Some(first) = lines.get(block.start) else { return };
    // A function's docstring stays: the walk reads it, and a string is what it starts with.
    // In a function's body the parse never resumes at another string (it would become the
    // docstring); in a nested block a string is a statement like any other.
    let is_string = |line: &Logical| matches!(b[line.first], b'"' | b'\'') || string_prefix(&b[line.first..]);
    let kept_first = body && is_string(first);
    let start = if kept_first {
        lines[block.start + 1..block.end].first().map_or(usize::MAX, |second| second.start)
    } else {
        first.start
    };
    let Some(tail) = block.clone().rev().find(|&at| {
        let line = &lines[at];
        line.indent == first.indent
            && !continues_statement(&b[line.first..])
            && (!body || kept_first || !is_string(line))
    }) else {
        return;
    };
    if lines[tail].start.saturating_sub(start) >= MIN_GAP {
        gaps.push(Gap {
            start,
            end: lines[tail].start,
            def: function.def,
            resume: lines[tail].first,
            last_row: function.last_row,
            next_row: function.next_row,
        });
    }
    // The tail and the clauses after it, each with its own block.
    let mut at = tail;
    while at < block.end {
        let end = block_end(lines, at).min(block.end);
        for (open, close) in bracket_gaps(b, &lines[at]) {
            gaps.push(Gap {
                start: open,
                end: close,
                def: function.def,
                resume: close,
                last_row: function.last_row,
                next_row: function.next_row,
            });
        }
        if lines[at].opens_block && end > at + 1 {
            leave_out_block(b, lines, at + 1..end, false, function, gaps);
        }
        at = end;
    }
}

/// The insides of `line`'s outermost brackets that span lines (`return render(request, {` …
/// `})`), each as the byte after the opening bracket and the closing bracket's: the parser sees
/// `render()`, `{}` or `[]`, an expression as good as the whole one for a walk that keeps
/// nothing from a function's statements, ending where the whole one ends. A `[` after a name,
/// a closing bracket or a string is a subscript, which `[]` is not: it stays.
fn bracket_gaps(b: &[u8], line: &Logical) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let (mut i, mut depth, mut open, mut before) = (line.first, 0usize, None, b' ');
    while i < line.end {
        let byte = b[i];
        match byte {
            b'#' => {
                i = memchr::memchr(b'\n', &b[i..line.end]).map_or(line.end, |at| i + at);
                continue;
            }
            b'"' | b'\'' => {
                let Some((end, _)) = string_end(b, i) else { return found };
                i = end;
                before = byte;
                continue;
            }
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    let subscript = byte == b'['
                        && (before.is_ascii_alphanumeric()
                            || matches!(before, b'_' | b')' | b']' | b'}' | b'"' | b'\''));
                    open = (!subscript).then_some(i);
                }
                depth += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(at) = open.take()
                    && i - at > MIN_GAP
                    && memchr::memchr(b'\n', &b[at..i]).is_some()
                {
                    found.push((at + 1, i));
                }
            }
            _ => {}
        }
        if !byte.is_ascii_whitespace() && byte != b'\\' {
            before = byte;
        }
        i += 1;
    }
    found
}

/// `def ` or `async def ` (any blanks between).
fn starts_def(rest: &[u8]) -> bool {
    let word = |rest: &[u8], word: &[u8]| {
        rest.starts_with(word) && rest.get(word.len()).is_some_and(|&byte| byte == b' ' || byte == b'\t')
    };
    if word(rest, b"def") {
        return true;
    }
    word(rest, b"async") && {
        let after = &rest[5..];
        let blanks = after.iter().take_while(|&&byte| byte == b' ' || byte == b'\t').count();
        word(&after[blanks..], b"def")
    }
}

/// A clause that continues the compound statement before it (`else:`, `except E:`, …), rather
/// than starting one.
fn continues_statement(rest: &[u8]) -> bool {
    [&b"else"[..], b"elif", b"except", b"finally"].iter().any(|word| {
        rest.starts_with(word)
            && !rest.get(word.len()).is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
    })
}

/// A string's prefix (`r`, `b`, `f`, `u`, `rb`, …) right before its quote.
fn string_prefix(rest: &[u8]) -> bool {
    let letters = rest.iter().take(2).take_while(|byte| b"rRbBfFuU".contains(byte)).count();
    letters > 0 && matches!(rest.get(letters), Some(b'"' | b'\''))
}

/// The logical lines of `b` (blank and comment-only lines are none), or `None` when the text
/// has a tab or form feed in indentation, a string or bracket left open, or a bracket closed
/// that was not open.
fn logical_lines(b: &[u8]) -> Option<Vec<Logical>> {
    let mut lines = Vec::new();
    let (mut i, mut row) = (0, 0);
    while i < b.len() {
        // A physical line that may start a logical one.
        let start = i;
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        match b.get(i) {
            None => break,
            Some(b'\t' | b'\x0c') => return None,
            Some(b'\n') => {
                i += 1;
                row += 1;
                continue;
            }
            Some(b'\r') if b.get(i + 1) == Some(&b'\n') => {
                i += 2;
                row += 1;
                continue;
            }
            Some(b'#') => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |at| i + at + 1);
                row += 1;
                continue;
            }
            Some(_) => {}
        }
        let (first, indent, first_row) = (i, i - start, row);
        let (mut depth, mut last) = (0usize, 0u8);
        while let Some(&byte) = b.get(i) {
            match byte {
                b'\n' => {
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                    row += 1;
                }
                b'#' => i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |at| i + at),
                b'\\' if b.get(i + 1) == Some(&b'\n') => {
                    i += 2;
                    row += 1;
                }
                b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => {
                    i += 3;
                    row += 1;
                }
                b'"' | b'\'' => {
                    let (end, newlines) = string_end(b, i)?;
                    i = end;
                    row += newlines;
                    last = byte;
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    last = byte;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    depth = depth.checked_sub(1)?;
                    last = byte;
                    i += 1;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' => i += 1,
                _ => {
                    last = byte;
                    i += 1;
                }
            }
        }
        if depth > 0 {
            return None;
        }
        lines.push(Logical { start, first, end: i, indent, first_row, row, opens_block: last == b':' });
        if b.get(i.wrapping_sub(1)) == Some(&b'\n') {
            row += 1;
        }
    }
    Some(lines)
}

/// The byte after the string whose quote is at `at`, and the newlines inside it; `None` when
/// it does not end (or a one-quote string meets a line end).
fn string_end(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let quote = b[at];
    let triple = b.get(at + 1) == Some(&quote) && b.get(at + 2) == Some(&quote);
    let mut i = if triple { at + 3 } else { at + 1 };
    let mut newlines = 0;
    while let Some(&byte) = b.get(i) {
        match byte {
            b'\\' => {
                if b.get(i + 1) == Some(&b'\n') {
                    newlines += 1;
                }
                i += 2;
            }
            b'\n' if !triple => return None,
            b'\n' => {
                newlines += 1;
                i += 1;
            }
            _ if byte == quote && (!triple || (b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote))) => {
                return Some((if triple { i + 3 } else { i + 1 }, newlines));
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(text: &str) -> Vec<(String, String)> {
        body_gaps(text.as_bytes())
            .unwrap()
            .iter()
            .map(|gap| (text[gap.start..gap.end].to_owned(), text[gap.end..].lines().next().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn a_clean_body_is_left_out_but_its_docstring_and_last_line() {
        let text = "class A:\n    def f(self, x):\n        \"\"\"Doc.\n\n        More.\"\"\"\n        y = [\n            x,\n        ]\n        z = 'a # b'  # c\n        return y\n\n    async  def g(self):\n        a = 1\n        b = 2\n        c = 3\n        d = 4\n        e = 5\n        return {a: (b, c)}\n";
        let found = gaps(text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].0.starts_with("        y = [") && found[0].0.ends_with("# c\n"), "{found:?}");
        assert_eq!(found[0].1, "        return y");
        assert!(found[1].0.starts_with("        a = 1"), "{found:?}");
        assert_eq!(found[1].1, "        return {a: (b, c)}");
    }

    #[test]
    fn bodies_that_may_declare_or_that_the_scan_cannot_follow_are_kept() {
        let declares =
            "def f():\n    x = 1111111111111111111111111111\n    import os\n    return os.path.join(x, x, x, x, x)\n";
        assert!(gaps(declares).is_empty());
        let nested =
            "def f():\n    x = 11111111111111111111111111111111\n    def g():\n        return 1\n    return g\n";
        let found = gaps(nested);
        assert_eq!(found.len(), 0, "{found:?}");
        let inline = "def f(): return 1111111111111111111111111111111111111111111111111111111111111\n";
        assert!(gaps(inline).is_empty());
        assert!(body_gaps(b"def f():\n\tx = 1\n\treturn x\n").is_none(), "tab");
        assert!(body_gaps(b"def f():\n    x = (1,\n").is_none(), "open bracket");
        assert!(body_gaps(b"def f():\n    x = '''abc\n").is_none(), "open string");
        assert!(body_gaps(b"def f():\n    x = 'abc\n    return x\n").is_none(), "one-quote string across a line");
    }

    /// A column-0 line inside a string is not a dedent: the string is one logical line.
    #[test]
    fn lines_inside_strings_and_brackets_are_not_logical_lines() {
        let text = "def f():\n    s = \"\"\"\nnot code\n\"\"\"\n    t = (\n1,\n)\n    u = 3333333333333333333333333333333333\n    return s\nx = 1\n";
        let lines = logical_lines(text.as_bytes()).unwrap();
        let firsts: Vec<&str> = lines.iter().map(|line| text[line.first..line.end].lines().next().unwrap()).collect();
        assert_eq!(
            firsts,
            ["def f():", "s = \"\"\"", "t = (", "u = 3333333333333333333333333333333333", "return s", "x = 1"]
        );
        assert_eq!(lines.iter().map(|line| line.row).collect::<Vec<_>>(), [0, 3, 6, 7, 8, 9]);
        let found = gaps(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "    return s");
    }

    /// Inside a body's last statement, each clause's block is left out but its own last
    /// statement, and a last statement's brackets that span lines are left out inside; a
    /// subscript's are not (`x[]` is no expression).
    #[test]
    fn last_statements_are_left_out_inside_their_blocks_and_brackets() {
        let text = "def f(rows):\n    total = 0000000000000000000000000000000000000000000000000000000000000000\n    if rows:\n        for row in rows:\n            total += row * 11111111111111111111111111111111111111111111111\n        total = total * 22222222222222222222222222222222222222222222222222\n        return total\n    else:\n        log(\"no rows, so the total stays where it started: at zero\")\n        return render(\"template.html\", {\n            \"total\": total, \"rows\": rows, \"note\": \"a long enough literal\",\n        })\n\n\ndef g(table):\n    return table[\n        \"a key long enough to be worth leaving out of the parse, if it could be\"\n    ]\n";
        let found = gaps(text);
        let resumes: Vec<&str> = found.iter().map(|(_, resume)| resume.trim()).collect();
        assert_eq!(resumes, ["if rows:", "return total", "return render(\"template.html\", {", ")"], "{found:?}");
        assert!(found[3].0.starts_with("\"template.html\", {\n"), "{found:?}");
        assert_one_parse_with_the_whole_parse_facts(text, found.len());
    }

    /// `text`'s declarations parse takes one parse around `gaps` gaps, and its facts are
    /// exactly a whole parse's.
    fn assert_one_parse_with_the_whole_parse_facts(text: &str, gaps: usize) {
        let compiled = crate::languages::compiled(crate::Lang::Python);
        let parse = |ranges: Option<&[Range]>| crate::parse_tree(crate::Lang::Python, &compiled.language, text, ranges);
        let whole = parse(None).unwrap();
        let expected = crate::walk::Walker::new(text, compiled, crate::Extract::Declarations).run(&whole);
        let mut attempts = Vec::new();
        let tree = parse_python_declarations(text, |ranges| {
            attempts.push(ranges.map(<[Range]>::len));
            parse(ranges)
        })
        .unwrap();
        assert_eq!(attempts, [Some(gaps + 1)], "one parse, around {gaps} gaps");
        let facts = crate::walk::Walker::new(text, compiled, crate::Extract::Declarations).run(&tree);
        assert_eq!(facts, expected);
        assert_eq!(crate::parse_with(crate::Lang::Python, text, crate::Extract::Declarations), expected);
    }

    /// Tricky bodies (attribute docstrings at a body's end, a comment block a body ends with at
    /// another indentation, `try`/`finally` and `if`/`else` tails, strings with code-like lines
    /// at column 0, a continued line, decorators, `async`): the parse leaves the gaps out at
    /// the first attempt, and the index's facts are exactly those of a whole parse.
    #[test]
    fn leaving_bodies_out_keeps_every_fact_of_the_whole_parse() {
        let text = r#"import os


class A:
    """Class doc."""

    def __init__(self, route, on_event=None):
        self._route = route
        self._on_event = on_event
        self.subscription_id = 1
        """An attribute's docstring, not the method's."""
        self.honored = True
        """Another."""

    @property
    def name(self):
        """Doc of name."""
        value = self._route
        value = value + "x" * 3
        text = """
not code, at column 0: fake():
"""
        return value

    async  def run(self, x):
        x = x + 111111111111111111111111111111111111111111111111111111111111111111
        while x:
            x -= 1
            if x == 5:
                return
            elif x:
                continue
            else:
                break

        # A comment block the body ends with,
        #   at another indentation.
        #
    def after(self):
        a = compute(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        b = [a,
  a]
        try:
            a = compute(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
        finally:
            print("done")
        if a:
            return b
        else:
            return a


def top(a, b=("x", "y")) -> dict[str, int]:  # note
    x = {"k": a, 'l': b}
    y = x \
        + x
    z = f"{x['k']} {y!r}"
    return {**x, **y, "z": z}
"#;
        let expected = crate::parse_with(crate::Lang::Python, text, crate::Extract::Definitions);
        assert!(expected.definitions.len() >= 6 && expected.definitions.iter().any(|d| d.doc.is_some()));
        assert_one_parse_with_the_whole_parse_facts(text, 5);
    }
}
