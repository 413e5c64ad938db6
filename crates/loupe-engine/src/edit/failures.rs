//! Why an edit failed, worded for the model: the file missing or changed, no match (with the
//! closest lines), an ambiguous match (with each place), one error for every failing edit, and
//! what the apply step and `loupe-vfs` refuse.

use loupe_core::text::{self};
use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError};
use loupe_syntax::Lang;
use loupe_vfs::{ApplyError, VfsError};
use serde_json::{Map, Value, json};

use super::lines::{Span, line_of, line_spans, numbered};
use super::{Failure, FileState, REGION_PREVIEW_CHARS, SyntaxCheck};
use crate::errors::{Access, quoted};
use crate::reasons::ReasonCode;
use crate::response::Outcome;

pub(super) fn missing(state: &FileState) -> ToolError {
    ToolError::new(
        ErrorCode::FileNotFound,
        format!("`{}` does not exist", state.path),
        "create it with operation='create' (and create_missing_dirs for new directories)",
    )
}

pub(super) fn past_end(state: &FileState, asked: usize, total: usize) -> ToolError {
    ToolError::invalid_args(
        format!("line {asked} is past the end of `{}` ({total} lines)", state.path),
        format!("lines are 1-based; the file has {total} lines"),
    )
    .with_next_call(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": state.path.as_str(), "start_line": total.saturating_sub(9).max(1), "end_line": total.max(1)}),
    ))
    .with_detail("total_lines", Value::from(total))
}

pub(super) fn conflict(
    state: &FileState,
    expected: &ContentHash,
    region: Option<(usize, usize, &str)>,
    why: &str,
) -> ToolError {
    let actual = state.hash.as_ref().map_or_else(|| "missing".to_owned(), ToString::to_string);
    let (start, end, current) = match region {
        Some((start, end, text)) => (start, end, text.to_owned()),
        None => {
            let text = state.original.as_deref().map(decode_for_diff).unwrap_or_default();
            let spans = line_spans(&text);
            let last = spans.len().min(20);
            let current = if last == 0 { String::new() } else { text[..spans[last - 1].next].to_owned() };
            (1, last.max(1), current)
        }
    };
    let shown = loupe_core::text::truncate_at_char_boundary(&current, REGION_PREVIEW_CHARS);
    let mut error = ToolError::new(
        ErrorCode::Conflict,
        format!("`{}`: {why} (expected hash {expected}, actual {actual})", state.path),
        "re-read the region, then retry the edit with the new file_hash",
    )
    .with_next_call(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": state.path.as_str(), "start_line": start, "end_line": end}),
    ))
    .with_detail("path", Value::from(state.path.as_str()))
    .with_detail("expected_hash", Value::from(expected.as_str()))
    .with_detail("actual_hash", Value::from(actual))
    .with_detail(
        "region",
        json!({"start_line": start, "end_line": end, "current_text": shown, "truncated": shown.len() < current.len()}),
    );
    error.message.push_str(&format!("\ncurrent text of lines {start}–{end}:\n{}", numbered(shown, start)));
    error
}

pub(super) fn no_match(state: &FileState, text: &str, spans: &[Span], old: &str, fuzzy: bool) -> ToolError {
    let wanted = old.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let mut scored: Vec<(f64, usize)> = spans
        .iter()
        .enumerate()
        .filter_map(|(number, span)| {
            let line = text[span.start..span.end].trim();
            (!line.is_empty()).then(|| (similarity(wanted, line), number + 1))
        })
        .filter(|(score, _)| *score > 0.3)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(3);
    let mut closest = Vec::new();
    let mut listing = String::new();
    for (score, number) in &scored {
        let span = spans[number - 1];
        let line = &text[span.start..span.end];
        listing.push('\n');
        listing.push_str(&text::numbered_line(*number, text::truncate_at_char_boundary(line, 200)));
        closest.push(json!({"line": number, "text": quoted(line), "similarity": (score * 100.0).round() / 100.0}));
    }
    // The two ways a model miscopies a numbered read (§3.2): the prefixes themselves, or the
    // separator's space taken for indentation. Named only when the corrected text is there.
    let carried = carried_line_numbers(old)
        .map(|(first, stripped)| (format!("its lines start with a read's line numbers ({first}, …)"), stripped))
        .or_else(|| {
            let shifted: Option<String> = old.split_inclusive('\n').map(|line| line.strip_prefix(' ')).collect();
            shifted.map(|stripped| ("each line has one leading space more than the file".to_owned(), stripped))
        })
        .filter(|(_, stripped)| !stripped.trim().is_empty() && text.contains(stripped.as_str()));
    let mut message = format!("`old_string` was not found in `{}`", state.path);
    if let Some((why, _)) = &carried {
        message.push_str(&format!(" as sent: {why}, and without that it is there"));
    }
    if listing.is_empty() {
        message.push_str(" (no similar line)");
    } else {
        message.push_str(&format!("; closest lines:{listing}"));
    }
    let hint = if carried.is_some() {
        "a read's `N ` prefix (the number and one space) is not content: send the text after it"
    } else if fuzzy {
        "no unique whitespace-tolerant match either; copy the exact text from a fresh read"
    } else {
        "copy the exact text from a fresh read (whitespace counts), or pass fuzzy=true to tolerate whitespace and indentation"
    };
    let mut error = ToolError::new(ErrorCode::NoMatch, message, hint).with_detail("closest", Value::from(closest));
    if let Some((_, number)) = scored.first() {
        error = error.with_next_call(NextCall::new(
            "read",
            json!({"mode": "snippet", "target": state.path.as_str(), "start_line": number.saturating_sub(5).max(1), "end_line": (number + 5).min(spans.len())}),
        ));
    }
    error
}

/// `old_string` as a model sometimes sends it: each line still carrying a read's numbered-line
/// prefix (§3.2, or `cat -n`'s and older faces' forms), numbers consecutive. Returns the first
/// number and the text without the prefixes.
fn carried_line_numbers(old: &str) -> Option<(usize, String)> {
    let mut first = None;
    let mut stripped = String::new();
    for (offset, line) in old.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        let number: usize = trimmed[..digits].parse().ok()?;
        let rest = &trimmed[digits..];
        let text = [" ", "\t", "│", "→", ":"].iter().find_map(|separator| rest.strip_prefix(separator))?;
        let first = *first.get_or_insert(number);
        if number != first + offset {
            return None;
        }
        stripped.push_str(text);
    }
    Some((first?, stripped))
}

pub(super) fn ambiguous(
    state: &FileState,
    text: &str,
    spans: &[Span],
    starts: &[usize],
    wanted: usize,
    counted: bool,
) -> ToolError {
    let mut listing = String::new();
    let mut matches = Vec::new();
    for start in starts.iter().take(20) {
        let number = line_of(spans, *start);
        let span = spans[number - 1];
        let line = &text[span.start..span.end];
        listing.push('\n');
        listing.push_str(&text::numbered_line(number, text::truncate_at_char_boundary(line, 200)));
        let neighbour = |at: usize| spans.get(at).map(|span| quoted(&text[span.start..span.end]));
        let before = number.checked_sub(2).and_then(neighbour);
        matches.push(json!({"line": number, "text": quoted(line), "before": before, "after": neighbour(number)}));
    }
    if starts.len() > 20 {
        listing.push_str(&format!("\n  … and {} more", starts.len() - 20));
    }
    let message = if counted {
        format!("`old_string` matches {} times in `{}`, expected_count is {wanted}:{listing}", starts.len(), state.path)
    } else {
        format!("`old_string` matches {} times in `{}`:{listing}", starts.len(), state.path)
    };
    ToolError::new(
        ErrorCode::AmbiguousMatch,
        message,
        "add surrounding lines to `old_string` to make it unique, or pass replace_all=true / expected_count",
    )
    .with_detail("matches", Value::from(matches))
    .with_detail("count", Value::from(starts.len()))
}

/// Dice coefficient over character bigrams: cheap, and good at "almost the same line".
fn similarity(left: &str, right: &str) -> f64 {
    let bigrams = |text: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut pairs: Vec<(char, char)> = chars.windows(2).map(|pair| (pair[0], pair[1])).collect();
        pairs.sort_unstable();
        pairs
    };
    let (a, b) = (bigrams(left), bigrams(right));
    if a.is_empty() || b.is_empty() {
        return if left.trim() == right.trim() { 1.0 } else { 0.0 };
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

pub(super) fn decode_for_diff(bytes: &[u8]) -> String {
    match text::decode(bytes) {
        Ok(decoded) => decoded.text,
        Err(_) => format!("(binary, {} bytes)\n", bytes.len()),
    }
}

pub(super) fn syntax_count(path: &RepoPath, text: &str) -> usize {
    Lang::from_path(path.as_str()).map_or(0, |lang| loupe_syntax::error_count(lang, text))
}

pub(super) fn syntax_status(
    check: SyntaxCheck,
    path: &RepoPath,
    exists_after: bool,
    new_text: &str,
) -> (&'static str, usize) {
    if check == SyntaxCheck::Off || !exists_after {
        return ("unchecked", 0);
    }
    let Some(lang) = Lang::from_path(path.as_str()) else { return ("unchecked", 0) };
    let errors = loupe_syntax::error_count(lang, new_text);
    if errors == 0 { ("ok", 0) } else { ("errors", errors) }
}

/// How many failing edits an error lists (the rest are counted): an answer stays bounded
/// however many edits a call sends.
const MAX_LISTED_FAILURES: usize = 20;

/// One error for every failing edit: the first one's code, each listed in the message.
pub(super) fn combine(mut failures: Vec<Failure>, total: usize) -> ToolError {
    if failures.len() == 1 {
        let failure = failures.remove(0);
        let mut error = failure.error;
        error.message.push_str("\nnothing was written");
        let code = error.code.as_str();
        return error.with_detail(
            "failures",
            json!([{"edit": failure.index.checked_add(1), "path": quoted(&failure.path), "code": code}]),
        );
    }
    let code = failures[0].error.code;
    let mut message = format!("{} edits failed (of {total}); nothing was written:", failures.len());
    let mut next_calls = Vec::new();
    let mut listed = Vec::new();
    for failure in failures.iter().take(MAX_LISTED_FAILURES) {
        let label =
            if failure.index == usize::MAX { "file".to_owned() } else { format!("edit #{}", failure.index + 1) };
        let path = if failure.path.is_empty() { String::new() } else { format!(" ({})", quoted(&failure.path)) };
        message.push_str(&format!(
            "\n· {label}{path}: {} {}",
            failure.error.code,
            failure.error.message.replace('\n', "\n  ")
        ));
        for call in &failure.error.next_calls {
            if !next_calls.contains(call) {
                next_calls.push(call.clone());
            }
        }
        let mut detail = Map::new();
        detail.insert("edit".into(), json!(failure.index.checked_add(1).filter(|_| failure.index != usize::MAX)));
        detail.insert("path".into(), Value::from(quoted(&failure.path)));
        detail.insert("code".into(), Value::from(failure.error.code.as_str()));
        detail.insert("message".into(), Value::from(failure.error.message.as_str()));
        detail.insert("hint".into(), Value::from(failure.error.hint.as_str()));
        for (key, value) in &failure.error.details {
            detail.insert(key.clone(), value.clone());
        }
        listed.push(Value::Object(detail));
    }
    if failures.len() > MAX_LISTED_FAILURES {
        message
            .push_str(&format!("\n· … and {} more failing edit(s), not listed", failures.len() - MAX_LISTED_FAILURES));
    }
    let mut error = ToolError::new(code, message, "fix each failing edit listed above and send the whole call again");
    error.next_calls = next_calls;
    error.next_calls.truncate(MAX_LISTED_FAILURES);
    error = error.with_detail("failures", Value::from(listed));
    if failures.len() > MAX_LISTED_FAILURES {
        error = error.with_detail("failures_total", Value::from(failures.len()));
    }
    error
}

pub(crate) fn apply_error(error: ApplyError) -> ToolError {
    match error {
        ApplyError::Stale(stale) => {
            let mut message = String::from("files changed on disk while the edit was being made; nothing was written:");
            let mut error = ToolError::new(ErrorCode::Conflict, "", "re-read the files, then retry with fresh hashes");
            let mut listed = Vec::new();
            for file in &stale {
                let expected = file.expected.as_ref().map_or("missing".into(), ToString::to_string);
                let actual = file.actual.as_ref().map_or("missing".into(), ToString::to_string);
                message.push_str(&format!("\n· {} (expected {expected}, now {actual})", file.path));
                listed.push(json!({"path": file.path.as_str(), "expected_hash": expected, "actual_hash": actual}));
                if file.actual.is_some() {
                    error = error
                        .with_next_call(NextCall::new("read", json!({"mode": "file", "target": file.path.as_str()})));
                }
            }
            if let Some(first) = stale.first() {
                let expected = first.expected.as_ref().map_or("missing".into(), ToString::to_string);
                let actual = first.actual.as_ref().map_or("missing".into(), ToString::to_string);
                let current = first.actual_bytes.as_deref().map(decode_for_diff).unwrap_or_default();
                let spans = line_spans(&current);
                let last = spans.len().min(20);
                let shown = if last == 0 { "" } else { &current[..spans[last - 1].next] };
                let shown = loupe_core::text::truncate_at_char_boundary(shown, REGION_PREVIEW_CHARS);
                error = error
                    .with_detail("path", Value::from(first.path.as_str()))
                    .with_detail("expected_hash", Value::from(expected))
                    .with_detail("actual_hash", Value::from(actual))
                    .with_detail("region", json!({"start_line": 1, "end_line": last.max(1), "current_text": shown}));
            }
            error.message = message;
            error.with_detail("files", Value::from(listed))
        }
        ApplyError::Vfs(error) => vfs_error(error),
        ApplyError::DuplicatePath(path) => ToolError::new(
            ErrorCode::Internal,
            format!("the edit plan named `{path}` twice"),
            "this is a bug in loupe; please report it",
        ),
        ApplyError::NothingToDo { command } => ToolError::invalid_args(
            format!("nothing to {command}: the journal has no transaction to {command}"),
            "see what the journal keeps with manage {\"command\":\"history\"}",
        )
        .with_next_call(NextCall::new("manage", json!({"command": "history"}))),
        ApplyError::UnknownTransaction { id, reason } => ToolError::invalid_args(
            format!("cannot use transaction `{id}`: {reason}"),
            "pick a transaction_id from manage history",
        )
        .with_next_call(NextCall::new("manage", json!({"command": "history"}))),
        ApplyError::RollbackIncomplete { cause, left } => {
            let mut error = apply_error(*cause);
            error.message.push_str(&format!(
                "\n{} file(s) it had written could not be rolled back and are as they are now:",
                left.len()
            ));
            for (path, reason) in left.iter().take(MAX_LISTED_FAILURES) {
                error.message.push_str(&format!("\n· {} ({reason})", quoted(path.as_str())));
            }
            if left.len() > MAX_LISTED_FAILURES {
                error
                    .message
                    .push_str(&format!("\n· and {} more (error.not_rolled_back)", left.len() - MAX_LISTED_FAILURES));
            }
            error.hint = format!("read the files named before editing them again; {}", error.hint);
            if let Some((path, _)) = left.first() {
                error.next_calls.insert(0, NextCall::new("read", json!({"mode": "file", "target": path.as_str()})));
            }
            let listed: Vec<Value> =
                left.iter().map(|(path, reason)| json!({"path": quoted(path.as_str()), "reason": reason})).collect();
            error.with_detail(NOT_ROLLED_BACK, Value::from(listed))
        }
    }
}

/// The error detail naming the files a failed transaction could not roll back.
pub(crate) const NOT_ROLLED_BACK: &str = "not_rolled_back";

/// The answer to an edit, undo or redo that failed with `error`: `ROLLBACK_INCOMPLETE` beside
/// its code when files it had written are left as they are.
pub(crate) fn failed(tool: &'static str, mode: Option<String>, error: ToolError) -> Outcome {
    let incomplete = error.details.contains_key(NOT_ROLLED_BACK);
    let mut outcome = Outcome::failure(tool, mode, None, error);
    if incomplete {
        outcome.act.reason_codes.push(ReasonCode::RollbackIncomplete);
    }
    outcome
}

pub(crate) fn vfs_error(error: VfsError) -> ToolError {
    crate::errors::vfs_error(error, Access::Write)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::MetadataLevel;

    /// H8: a transaction whose rollback left files gets `ROLLBACK_INCOMPLETE` beside its own
    /// code, each file named with why in the text and in `error.not_rolled_back`, and a read of
    /// the first as the next call.
    #[test]
    fn h8_an_incomplete_rollback_is_named_with_its_reason_code() {
        let path = |text: &str| RepoPath::normalize(text).unwrap();
        let cause = ApplyError::Vfs(VfsError::OutsideRoot { requested: "new/b.txt".into() });
        let left = vec![
            (path("new/a.txt"), "cannot read it to restore it (a link)".to_owned()),
            (path("c.txt"), "it changed after the edit wrote it".to_owned()),
        ];
        let error = apply_error(ApplyError::RollbackIncomplete { cause: Box::new(cause), left });
        let response = failed("edit", None, error).render(MetadataLevel::Full);
        assert_eq!(response.error_code(), Some("PATH_OUTSIDE_ROOT"), "{}", response.face);
        assert_eq!(response.reason_codes(), ["ROLLBACK_INCOMPLETE"]);
        assert!(
            response.face.contains(
                "2 file(s) it had written could not be rolled back and are as they are now:\n· new/a.txt (cannot read it to restore it (a link))\n· c.txt (it changed after the edit wrote it)"
            ),
            "{}",
            response.face
        );
        let structured = response.structured();
        assert_eq!(structured["error"]["not_rolled_back"][1]["path"], "c.txt", "{structured}");
        assert_eq!(
            structured["next_calls"][0],
            serde_json::json!({"tool": "read", "arguments": {"mode": "file", "target": "new/a.txt"}})
        );
        // Without files left, the same error has no such code.
        let plain = failed("edit", None, apply_error(ApplyError::Vfs(VfsError::OutsideRoot { requested: "x".into() })));
        assert!(plain.act.reason_codes.is_empty());
    }
}
