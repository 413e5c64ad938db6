//! The text operations on one file's working text: exact, ranged and fuzzy replacement, inserts and
//! deletes by line, the checks of `expected_text`, and keeping the file's encoding and line endings.

use loupe_core::text::{self, Encoding, LineEnding};
use loupe_core::{ContentHash, ErrorCode, NextCall, ToolError};
use serde_json::{Value, json};

use super::failures::{ambiguous, conflict, missing, no_match, past_end};
use super::lines::{line_of, line_spans};
use super::{EditSpec, FileState, Operation};

/// Applies one edit to the file's working text.
pub(super) fn apply_one(state: &mut FileState, spec: &EditSpec, fuzzy: bool) -> Result<(), ToolError> {
    if let Some(expected) = &spec.expected_hash
        && state.hash.as_ref() != Some(expected)
    {
        return Err(conflict(state, expected, None, "the file changed since it was read"));
    }
    match &spec.operation {
        Operation::Create { content, overwrite } => {
            if state.exists_after && state.original.is_some() && !overwrite {
                let mut error = ToolError::new(
                    ErrorCode::Conflict,
                    format!("`{}` already exists; operation='create' does not overwrite", state.path),
                    "pass \"overwrite\": true to replace it, or edit it with replace/replace_lines",
                )
                .with_next_call(NextCall::new("read", json!({"mode": "file", "target": state.path.as_str()})))
                .with_detail("path", Value::from(state.path.as_str()));
                if let Some(hash) = &state.hash {
                    error = error.with_detail("actual_hash", Value::from(hash.as_str()));
                }
                return Err(error);
            }
            state.text = Some(content.clone());
            state.encoding = Encoding::Utf8;
            state.bom = false;
            state.exists_after = true;
            state.touched = Some((1, line_spans(content).len().max(1)));
            Ok(())
        }
        Operation::Delete => {
            if !state.exists_after {
                return Err(missing(state));
            }
            state.exists_after = false;
            state.text = None;
            Ok(())
        }
        _ => {
            if !state.exists_after {
                return Err(missing(state));
            }
            ensure_text(state)?;
            let ending = state.ending;
            let text = state.text.take().unwrap_or_default();
            let result = edit_text(state, &text, spec, fuzzy, ending);
            match result {
                Ok((new_text, touched)) => {
                    state.text = Some(new_text);
                    state.touched = Some(match state.touched {
                        Some((first, last)) => (first.min(touched.0), last.max(touched.1)),
                        None => touched,
                    });
                    Ok(())
                }
                Err(error) => {
                    state.text = Some(text);
                    Err(error)
                }
            }
        }
    }
}

/// The text operations. Returns the new text and the changed lines (1-based).
fn edit_text(
    state: &mut FileState,
    text: &str,
    spec: &EditSpec,
    fuzzy: bool,
    ending: &str,
) -> Result<(String, (usize, usize)), ToolError> {
    let spans = line_spans(text);
    let total = spans.len();
    match &spec.operation {
        Operation::Replace { old, new, replace_all, expected_count } => {
            let old = adapt_endings(old, ending);
            let new = adapt_endings(new, ending);
            let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(at, _)| at).collect();
            if starts.is_empty() {
                if fuzzy && let Some((start, end, replacement)) = fuzzy_match(text, &old, &new)? {
                    state.fuzzy_used = true;
                    let new_text = format!("{}{replacement}{}", &text[..start], &text[end..]);
                    let first = line_of(&spans, start);
                    return Ok((new_text, (first, first + replacement.matches('\n').count())));
                }
                return Err(no_match(state, text, &spans, &old, fuzzy));
            }
            let wanted = match (replace_all, expected_count) {
                (true, _) => starts.len(),
                (false, Some(count)) => *count,
                (false, None) => 1,
            };
            if starts.len() != wanted {
                return Err(ambiguous(state, text, &spans, &starts, wanted, expected_count.is_some()));
            }
            let first = line_of(&spans, starts[0]);
            let last = line_of(&spans, *starts.last().unwrap_or(&0)) + new.matches('\n').count();
            Ok((text.replace(old.as_str(), &new), (first, last)))
        }
        Operation::ReplaceLines { start, end, new } => {
            if *end > total {
                return Err(past_end(state, *end, total));
            }
            let region = &text[spans[start - 1].start..spans[end - 1].next];
            check_expected_text(state, spec, region, *start, *end)?;
            let mut replacement = adapt_endings(new, ending);
            let region_terminated = spans[end - 1].next > spans[end - 1].end;
            if !replacement.is_empty() && region_terminated && !ends_with_break(&replacement) {
                replacement.push_str(ending);
            }
            let new_text = format!("{}{replacement}{}", &text[..spans[start - 1].start], &text[spans[end - 1].next..]);
            let added = line_spans(&replacement).len();
            Ok((new_text, (*start, (*start + added).saturating_sub(1).max(*start))))
        }
        Operation::Insert { line, new } => {
            if *line > total {
                return Err(past_end(state, *line, total));
            }
            if *line > 0 {
                let span = spans[line - 1];
                check_expected_text(state, spec, &text[span.start..span.next], *line, *line)?;
            } else if spec.expected_text.is_some() {
                return Err(ToolError::invalid_args(
                    "`expected_text` with line=0 has no line to check",
                    "remove `expected_text`, or insert after a line and pass that line's text",
                ));
            }
            let mut insertion = adapt_endings(new, ending);
            if !insertion.is_empty() && !ends_with_break(&insertion) {
                insertion.push_str(ending);
            }
            let at = if *line == 0 { 0 } else { spans[line - 1].next };
            let mut new_text = String::with_capacity(text.len() + insertion.len() + 2);
            new_text.push_str(&text[..at]);
            if *line == total && total > 0 && spans[total - 1].next == spans[total - 1].end {
                // The file has no final newline: the last line needs one before the insertion.
                new_text.push_str(ending);
            }
            new_text.push_str(&insertion);
            new_text.push_str(&text[at..]);
            let added = line_spans(&insertion).len().max(1);
            Ok((new_text, (line + 1, line + added)))
        }
        Operation::Create { .. } | Operation::Delete | Operation::Symbol { .. } => Ok((text.to_owned(), (1, 1))),
    }
}

fn check_expected_text(
    state: &FileState,
    spec: &EditSpec,
    region: &str,
    start: usize,
    end: usize,
) -> Result<(), ToolError> {
    let Some(expected) = &spec.expected_text else { return Ok(()) };
    if normalize_region(expected) == normalize_region(region) {
        return Ok(());
    }
    let hash = state.hash.clone().unwrap_or_else(|| ContentHash::of(b""));
    Err(conflict(state, &hash, Some((start, end, region)), "the text of the range is not `expected_text`"))
}

/// Text compared for `expected_text`: line endings unified, trailing line breaks ignored.
fn normalize_region(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").trim_end_matches('\n').to_owned()
}

/// Decodes the file for text edits; refuses what cannot be written back byte-exactly.
pub(super) fn ensure_text(state: &mut FileState) -> Result<(), ToolError> {
    if state.text.is_some() {
        return Ok(());
    }
    let bytes = state.original.clone().unwrap_or_default();
    let size = bytes.len();
    let decoded = text::decode_owned(bytes).map_err(|_| {
        ToolError::new(
            ErrorCode::BinaryFile,
            format!("`{}` is a binary file ({size} bytes); text edits do not apply", state.path),
            "binary files can only be replaced whole (create with overwrite) or deleted",
        )
        .with_detail("size", Value::from(size))
    })?;
    if matches!(decoded.encoding, Encoding::Utf16Le | Encoding::Utf16Be) {
        return Err(ToolError::invalid_args(
            format!("`{}` is {}; loupe edits UTF-8 and Latin-1 files only", state.path, decoded.encoding.as_str()),
            "convert the file to UTF-8 first, or edit it with another tool",
        ));
    }
    state.ending = match decoded.line_ending {
        LineEnding::Crlf => "\r\n",
        LineEnding::Cr => "\r",
        LineEnding::Mixed => {
            let first = decoded.lines.first().map(|span| &decoded.text[span.end..span.next]).unwrap_or("\n");
            if first == "\r\n" {
                "\r\n"
            } else if first == "\r" {
                "\r"
            } else {
                "\n"
            }
        }
        LineEnding::Lf | LineEnding::None => "\n",
    };
    state.encoding = decoded.encoding;
    state.bom = decoded.bom;
    state.text = Some(decoded.text);
    Ok(())
}

/// The file's bytes for its working text, in its own encoding.
pub(super) fn encode(state: &FileState) -> Result<Vec<u8>, ToolError> {
    let Some(text) = &state.text else { return Ok(state.original.clone().unwrap_or_default()) };
    let mut bytes = Vec::with_capacity(text.len() + 3);
    if state.bom {
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
    }
    match state.encoding {
        Encoding::Latin1 => {
            for character in text.chars() {
                let Ok(byte) = u8::try_from(u32::from(character)) else {
                    return Err(ToolError::invalid_args(
                        format!("`{}` is Latin-1 and `{character}` cannot be written in Latin-1", state.path),
                        "use only characters U+0000–U+00FF in this file, or convert it to UTF-8 first",
                    ));
                };
                bytes.push(byte);
            }
        }
        _ => bytes.extend_from_slice(text.as_bytes()),
    }
    Ok(bytes)
}

/// New text typed with `\n` takes the file's line ending (CRLF and CR files stay so).
fn adapt_endings(text: &str, ending: &str) -> String {
    if ending == "\n" {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n").replace('\n', ending)
}

fn ends_with_break(text: &str) -> bool {
    text.ends_with('\n') || text.ends_with('\r')
}

/// Whitespace- and indentation-tolerant match: the non-blank tokens of `old` in order, with
/// any run of whitespace between them. Used only when exactly one place matches; the
/// replacement is re-indented from `old`'s indentation to the file's.
fn fuzzy_match(text: &str, old: &str, new: &str) -> Result<Option<(usize, usize, String)>, ToolError> {
    let words: Vec<String> = old.split_whitespace().map(regex::escape).collect();
    if words.is_empty() {
        return Ok(None);
    }
    let Ok(pattern) = regex::Regex::new(&words.join(r"\s+")) else { return Ok(None) };
    let found: Vec<(usize, usize)> = pattern.find_iter(text).map(|m| (m.start(), m.end())).take(2).collect();
    if found.len() != 1 {
        return Ok(None);
    }
    let (start, end) = found[0];
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |at| at + 1);
    let file_indent: String = text[line_start..start].chars().take_while(|c| c.is_whitespace()).collect();
    let old_indent: String =
        old.trim_start_matches(['\n', '\r']).chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let mut replacement = String::new();
    for (number, line) in new.split_inclusive('\n').enumerate() {
        if number == 0 {
            replacement.push_str(line.trim_start_matches([' ', '\t']));
        } else if let Some(rest) = line.strip_prefix(old_indent.as_str()) {
            replacement.push_str(&file_indent);
            replacement.push_str(rest);
        } else {
            replacement.push_str(line);
        }
    }
    // The match ends at `old`'s last token, before any trailing whitespace: the file keeps
    // its own, so the replacement drops `new`'s.
    Ok(Some((start, end, replacement.trim_end_matches([' ', '\t', '\n', '\r']).to_owned())))
}
