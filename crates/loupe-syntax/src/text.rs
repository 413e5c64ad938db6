//! Text shaping for facts: one-line signatures, comment and docstring cleaning, short cuts.
//!
//! Owns pure string functions. Must not know tree-sitter or any language's grammar; callers
//! hand it the source slices.

/// Longest signature kept, in characters; a longer one is cut and ends with `…`.
pub(crate) const SIGNATURE_CHARS: usize = 200;
/// Longest receiver expression kept, in characters.
pub(crate) const RECEIVER_CHARS: usize = 60;

/// The text on one line: whitespace runs become one space, trimmed, trailing `{ ; , => =`
/// dropped, cut to `SIGNATURE_CHARS` characters. The padding a multi-line parameter list
/// leaves goes too, outside double quotes: `fn f(\n a: u32,\n)` → `fn f(a: u32)`.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(SIGNATURE_CHARS + 8));
    let mut chars = 0usize;
    let mut pending_space = false;
    let mut quoted = false;
    let mut cut = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if chars >= SIGNATURE_CHARS {
            cut = true;
            break;
        }
        if pending_space && !quoted {
            if out.ends_with(['(', '[']) {
                pending_space = false;
            } else if matches!(c, ')' | ']') {
                pending_space = false;
                if out.ends_with(',') {
                    out.pop();
                    chars -= 1;
                }
            }
        }
        if c == '"' {
            quoted = !quoted;
        }
        if pending_space {
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push(c);
        chars += 1;
    }
    if cut {
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('…');
        return out;
    }
    loop {
        let before = out.len();
        for tail in [";", ",", "{", "=>", "="] {
            if out.ends_with(tail) {
                out.truncate(out.len() - tail.len());
                let trimmed = out.trim_end().len();
                out.truncate(trimmed);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// At most `max` characters of `text`, whitespace runs collapsed to one space.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 2));
    let mut pending_space = false;
    for (count, c) in text.chars().filter(|c| *c != '\r').enumerate() {
        if count >= max {
            break;
        }
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// The text of a comment without its markers: `///`, `//!`, `//`, `#`, `/** */`, `/* */` and
/// the leading `*` of block-comment lines. Empty lines at both ends are dropped.
pub(crate) fn clean_comment(raw: &str) -> String {
    let raw = raw.trim_end();
    let mut lines: Vec<&str> = Vec::new();
    if let Some(body) = raw.strip_prefix("/*") {
        let body = body.strip_suffix("*/").unwrap_or(body);
        let body = body.strip_prefix(['*', '!']).unwrap_or(body);
        for line in body.lines() {
            let line = line.trim();
            let line = if line.starts_with('*') && !line.starts_with("*/") { &line[1..] } else { line };
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
        }
    } else {
        for line in raw.lines() {
            let line = line.trim_start();
            let line = ["///", "//!", "//", "#"].iter().find_map(|marker| line.strip_prefix(marker)).unwrap_or(line);
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
        }
    }
    trim_blank_lines(&lines)
}

/// The text of a Python docstring literal: prefix and quotes removed, indentation cleaned the
/// way `inspect.cleandoc` does.
pub(crate) fn clean_docstring(raw: &str) -> String {
    let raw = raw.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
    let body = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|quote| raw.strip_prefix(quote).map(|inner| inner.strip_suffix(quote).unwrap_or(inner)))
        .unwrap_or(raw);
    let mut lines = body.lines();
    let first = lines.next().unwrap_or("").trim();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut all = vec![first];
    all.extend(rest.iter().map(|line| line.get(indent..).unwrap_or("").trim_end()));
    trim_blank_lines(&all)
}

fn trim_blank_lines(lines: &[&str]) -> String {
    let first = lines.iter().position(|line| !line.trim().is_empty());
    let last = lines.iter().rposition(|line| !line.trim().is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join("\n"),
        _ => String::new(),
    }
}

/// `text` without generic arguments (`Base<T>` → `Base`, `Generic[T]` → `Generic`), without
/// leading `&`, `*`, `mut`, `dyn` and whitespace.
pub(crate) fn strip_generics(text: &str) -> &str {
    let text = text.trim_start_matches(['&', '*', ' ', '\n', '\t', '?']);
    let text = text.strip_prefix("mut ").unwrap_or(text);
    let text = text.strip_prefix("dyn ").unwrap_or(text);
    let end = text.find(['<', '[', '(', ' ', '\n', '\t', '{']).unwrap_or(text.len());
    text[..end].trim_end_matches([':', '.'])
}

/// The last segment of a path written with `::`, `.` or `\`, generic arguments dropped.
pub(crate) fn last_segment(text: &str) -> &str {
    let base = strip_generics(text);
    base.rsplit(['.', ':', '\\']).next().unwrap_or(base)
}

/// True for a name written in capitals, digits and underscores with at least one letter
/// (`MAX_SIZE`), the usual spelling of a constant.
pub(crate) fn is_constant_case(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_and_drops_trailing_punctuation() {
        assert_eq!(
            one_line("pub fn load(\n    path: &Path,\n) -> Result<Config> {"),
            "pub fn load(path: &Path) -> Result<Config>"
        );
        assert_eq!(one_line("int f(\n\tint a,\n\tint b\n)"), "int f(int a, int b)");
        assert_eq!(one_line("let t = [\n 1,\n 2,\n]"), "let t = [1, 2]");
        assert_eq!(one_line("fn g(s = \"( x, )\")"), "fn g(s = \"( x, )\")");
        assert_eq!(one_line("fn one() -> (u32,)"), "fn one() -> (u32,)");
        assert_eq!(one_line("int add(int a, int b);"), "int add(int a, int b)");
        assert_eq!(one_line("class Foo(Base):"), "class Foo(Base):");
        let long = "x".repeat(300);
        assert_eq!(one_line(&long).chars().count(), SIGNATURE_CHARS + 1);
    }

    #[test]
    fn comments_lose_their_markers() {
        assert_eq!(clean_comment("/// Loads it.\n"), "Loads it.");
        assert_eq!(clean_comment("/**\n * First.\n * Second.\n */"), "First.\nSecond.");
        assert_eq!(clean_comment("/* A point. */"), "A point.");
        assert_eq!(clean_comment("# A service."), "A service.");
        assert_eq!(clean_comment("//! Inner."), "Inner.");
    }

    #[test]
    fn docstrings_are_dedented() {
        assert_eq!(clean_docstring("\"\"\"Top.\n\n    Does things.\n    \"\"\""), "Top.\n\nDoes things.");
        assert_eq!(clean_docstring("r'''x'''"), "x");
    }

    #[test]
    fn generic_arguments_and_paths_are_dropped() {
        assert_eq!(strip_generics("Base<T>"), "Base");
        assert_eq!(strip_generics("&mut Foo<T>"), "Foo");
        assert_eq!(last_segment("fmt::Display"), "Display");
        assert_eq!(last_segment("Foo\\Bar"), "Bar");
        assert!(is_constant_case("MAX_SIZE"));
        assert!(!is_constant_case("Max"));
    }
}
