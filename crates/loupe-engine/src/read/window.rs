//! Modes `file` and `snippet`: the window chosen from the arguments or a cursor, cut by the
//! binding budget at line boundaries, with the cut named in the footer and the call that continues.

use loupe_core::text::{self, Decoded};
use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError, tokens};
use loupe_vfs::VfsError;
use serde_json::{Map, Value, json};

use super::{ReadMode, ReadRequest, Window};
use crate::errors::Access;
use crate::read::cursor::ReadCursor;
use crate::reasons::ReasonCode;
use crate::response::{Face, Lines, Location, Outcome, Part, next_line};
use crate::suggest::closest;
use crate::workspace::Workspace;

pub(super) fn read_window(workspace: &Workspace, request: &ReadRequest) -> Result<Outcome, ToolError> {
    let config = workspace.config();
    let resolved = workspace.root().resolve(&request.target).map_err(|error| vfs_error(workspace, request, error))?;
    // At a revision, the commit's blob of the same (checked) path; else the file on disk.
    let (bytes, at) = match &request.revision {
        Some(spec) => {
            let at = super::revision::AtRevision::open(workspace, spec, &request.original)?;
            (at.bytes(&resolved.path, config.max_file_bytes)?, Some(at.label))
        }
        None => {
            let file = workspace
                .root()
                .read(&resolved, config.max_file_bytes)
                .map_err(|error| vfs_error(workspace, request, error))?;
            (file.bytes, None)
        }
    };
    let size = bytes.len();
    let file_hash = ContentHash::of(&bytes);
    let decoded = text::decode_owned(bytes).map_err(|_| {
        ToolError::new(
            ErrorCode::BinaryFile,
            format!("`{}` is a binary file ({size} bytes)", resolved.path),
            "binary files are not read; read a text file instead",
        )
        .with_detail("size", Value::from(size))
    })?;
    let total = decoded.total_lines();
    let path = resolved.path.clone();

    // The window asked for, as (first, last) before budgets; a cursor overrides it.
    let (first, window_last) = match (&request.cursor, &request.window) {
        (Some(cursor), _) => cursor_window(request, &path, cursor, &file_hash, total)?,
        (None, Window::File { first, .. }) => (*first, total),
        (None, Window::Snippet { start, end, context }) => {
            if *start > total.max(1) {
                return Err(past_end(request, "start_line", *start, total));
            }
            (start.saturating_sub(*context).max(1), (end + context).min(total))
        }
        (None, Window::Symbol { .. } | Window::Outline { .. } | Window::DiffPreview { .. }) => (1, total),
    };
    if first > total && total > 0 {
        return Err(past_end(request, "offset", first, total));
    }

    let budget = Budget::new(config, request, first, window_last);
    let mut reason_codes = budget.reason_codes.clone();
    let ignored = workspace.root().is_ignored(&path, false);
    let face_parts = FaceParts {
        label: request.label.as_deref(),
        path: &path,
        revision: at.as_deref(),
        decoded: &decoded,
        file_hash: &file_hash,
        total,
        first,
        window_last,
        ignored,
    };

    // What the header and a worst-case footer cost, so the payload gets the rest of
    // `max_tokens`. The cursor has a fixed length, so a placeholder costs the same.
    let placeholder = with_args(request, &[("cursor", Value::from("A".repeat(28)))], CURSOR_REPLACES);
    let overhead = tokens::count(&face_parts.header(window_last, request.preview_none))
        + face_parts.hash().tokens()
        + 1
        + tokens::count(&face_parts.footer(
            window_last,
            Some(budget.token_limit),
            &[ReasonCode::BudgetSoftLimit, ReasonCode::PreviewDegraded],
            true,
            &[placeholder],
        ));
    let needed = overhead + MIN_PAYLOAD_TOKENS;
    if budget.token_limit.value < needed {
        let suggested = needed.div_ceil(50) * 50;
        return Err(ToolError::new(
            ErrorCode::TokenLimitExceeded,
            format!(
                "max_tokens={} is too small: the header and continuation of this read alone take {overhead} tokens",
                budget.token_limit.value
            ),
            format!("raise max_tokens to at least {needed}"),
        )
        .with_next_call(with_args(request, &[("max_tokens", json!(suggested))], &[]))
        .with_detail("needed_tokens", Value::from(needed)));
    }

    let (payload, last_shown, payload_cut, line_kept, payload_tokens) = if request.preview_none || total == 0 {
        (String::new(), first.saturating_sub(1), None, None, Some(0))
    } else {
        cut_payload(&decoded, (first, budget.last_by_lines), &budget, budget.token_limit.value - overhead)
    };
    let cut_by = if request.preview_none { None } else { payload_cut.or(budget.line_cut) };
    let truncated = !request.preview_none && total > 0 && last_shown < window_last;
    if let Some(limit) = cut_by
        && limit.from_server
        && matches!(limit.name, "max_preview_chars" | "max_response_tokens")
        && !reason_codes.contains(&ReasonCode::PreviewDegraded)
    {
        reason_codes.push(ReasonCode::PreviewDegraded);
    }
    let degraded = !reason_codes.is_empty();

    let next_cursor = truncated.then(|| {
        let window_end =
            if matches!(request.window, Window::Snippet { .. }) || (request.cursor.is_some() && window_last < total) {
                window_last
            } else {
                0
            };
        ReadCursor::new(&file_hash, &path, last_shown + 1, window_end).encode()
    });
    let next_calls: Vec<NextCall> = next_cursor
        .iter()
        .map(|cursor| with_args(request, &[("cursor", Value::from(cursor.as_str()))], CURSOR_REPLACES))
        .collect();

    let shown_cut = cut_by.filter(|_| truncated);
    let header = face_parts.header(last_shown, request.preview_none);
    let footer = face_parts.footer(last_shown, shown_cut, &reason_codes, line_kept.is_some(), &next_calls);
    let shown_any = !request.preview_none && total > 0 && last_shown >= first;
    let mut face = Face::text(header);
    face.parts.push(face_parts.hash());
    face.push("\n");
    if shown_any {
        face.parts.push(Part::Lines(Lines {
            first,
            rendered: payload,
            tokens: payload_tokens,
            last_cut: line_kept.is_some(),
        }));
    }
    face.push(footer);

    let mut applied = Map::new();
    for limit in &budget.limits {
        applied.insert(limit.name.to_owned(), Value::from(limit.value));
    }
    // `content` carries what the face shows, cut where the face was cut: a line cut mid-line
    // is its kept start, never the whole line.
    let content = match line_kept {
        _ if !shown_any => String::new(),
        Some(kept) => text::truncate_at_char_boundary(decoded.line(first), kept).to_owned(),
        None => decoded.raw_range(first, last_shown).to_owned(),
    };
    let mut outcome = Outcome::success("read", Some(request.mode.as_str().into()), Some(path.to_string()), face)
        .with_metadata(request.metadata);
    outcome.act.truncated = truncated;
    outcome.act.preview_degraded = degraded;
    outcome.act.next_cursor = next_cursor;
    outcome.act.file_hash = Some(file_hash.to_string());
    outcome.act.language = loupe_index::Lang::from_path(path.as_str()).map(|lang| lang.name());
    outcome.act.reason_codes = reason_codes;
    outcome.act.next_calls = next_calls;
    outcome.content = Some(content);
    outcome.location = Some(Location {
        file: path.to_string(),
        line: shown_any.then_some(first),
        end_line: shown_any.then_some(last_shown),
    });
    let detail = &mut outcome.detail;
    detail.insert("applied_limits".into(), Value::Object(applied));
    if let Some(limit) = shown_cut {
        detail.insert("truncated_by".into(), Value::from(limit.name));
    }
    detail.insert("total_lines".into(), Value::from(total));
    detail.insert("size_bytes".into(), Value::from(size));
    detail.insert("encoding".into(), Value::from(decoded.encoding.as_str()));
    detail.insert("line_ending".into(), Value::from(decoded.line_ending.as_str()));
    if decoded.bom {
        detail.insert("bom".into(), Value::Bool(true));
    }
    detail.insert("ignored".into(), Value::Bool(ignored));
    Ok(outcome)
}

/// A budget in force and where it came from.
#[derive(Debug, Clone, Copy)]
struct Limit {
    name: &'static str,
    value: usize,
    /// True when the server's ceiling, not the caller, set this value.
    from_server: bool,
}

/// Arguments a cursor replaces in a continuation call.
const CURSOR_REPLACES: &[&str] = &["offset", "start_line", "end_line", "line_range", "context_lines", "limit"];

/// The least payload a read must be able to carry for `max_tokens` to make sense.
const MIN_PAYLOAD_TOKENS: usize = 16;

/// The budgets in force for one read: caller caps clamped to the server ceilings.
#[derive(Debug)]
struct Budget {
    limits: Vec<Limit>,
    chars: Limit,
    bytes: Option<Limit>,
    token_limit: Limit,
    /// The last line the line caps allow, and the cap that set it when it cut the window.
    last_by_lines: usize,
    line_cut: Option<Limit>,
    /// `BUDGET_SOFT_LIMIT` when the caller asked above a ceiling.
    reason_codes: Vec<ReasonCode>,
}

impl Budget {
    fn new(config: &loupe_core::Config, request: &ReadRequest, first: usize, window_last: usize) -> Budget {
        let mut soft_limited = false;
        let mut clamp = |name: &'static str, asked: Option<usize>, ceiling: usize| -> Limit {
            match asked {
                Some(value) if value > ceiling => {
                    soft_limited = true;
                    Limit { name, value: ceiling, from_server: true }
                }
                Some(value) => Limit { name, value, from_server: false },
                None => Limit { name, value: ceiling, from_server: true },
            }
        };
        // Lines: the window's own size, the caller's `limit`/`max_lines`, the per-read ceiling.
        let (window_name, asked_lines) = match &request.window {
            _ if request.cursor.is_some() => ("max_single_read_lines", None),
            Window::File { count, .. } => ("limit", *count),
            Window::Snippet { .. } => ("snippet_lines", Some((window_last + 1).saturating_sub(first))),
            Window::Symbol { .. } | Window::Outline { .. } | Window::DiffPreview { .. } => {
                ("max_single_read_lines", None)
            }
        };
        let window = clamp(window_name, asked_lines, config.max_single_read_lines);
        let window = Limit { name: if window.from_server { "max_single_read_lines" } else { window_name }, ..window };
        let max_lines =
            request.caps.max_lines.map(|asked| clamp("max_lines", Some(asked), config.max_single_read_lines));
        let chars = clamp("max_preview_chars", request.caps.max_preview_chars, config.max_preview_chars);
        let token_limit = clamp("max_tokens", request.caps.max_tokens, config.max_response_tokens);
        let token_limit = Limit {
            name: if request.caps.max_tokens.is_some() { "max_tokens" } else { "max_response_tokens" },
            ..token_limit
        };
        let bytes = request.caps.max_bytes.map(|value| Limit { name: "max_bytes", value, from_server: false });

        let line_cap = max_lines.filter(|cap| cap.value < window.value).unwrap_or(window);
        let last_by_lines = if window_last == 0 { 0 } else { window_last.min(first + line_cap.value - 1) };
        let line_cut = (last_by_lines < window_last).then_some(line_cap);
        let mut limits = vec![window];
        limits.extend(max_lines);
        limits.push(chars);
        limits.extend(bytes);
        limits.push(token_limit);
        let reason_codes = if soft_limited { vec![ReasonCode::BudgetSoftLimit] } else { Vec::new() };
        Budget { limits, chars, bytes, token_limit, last_by_lines, line_cut, reason_codes }
    }
}

/// What the header and footer of a read are made of.
struct FaceParts<'a> {
    label: Option<&'a str>,
    path: &'a RepoPath,
    /// The commit read at (`main (1a2b3c4)`), named after the path.
    revision: Option<&'a str>,
    decoded: &'a Decoded,
    file_hash: &'a ContentHash,
    total: usize,
    first: usize,
    window_last: usize,
    ignored: bool,
}

impl FaceParts<'_> {
    /// `path · [at rev (id) ·] lines a–b of n · [encoding · line ending · gitignored ·] hash h`
    fn header(&self, last_shown: usize, preview_none: bool) -> String {
        let (first, total) = (self.first, self.total);
        let mut header = match self.label {
            Some(label) => format!("{label} · {} · ", self.path),
            None => format!("{} · ", self.path),
        };
        if let Some(revision) = self.revision {
            header.push_str(&format!("at {revision} · "));
        }
        if total == 0 {
            header.push_str("empty file");
        } else if preview_none {
            header.push_str(&format!("{total} lines"));
        } else if last_shown == first {
            header.push_str(&format!("line {first} of {total}"));
        } else {
            header.push_str(&format!("lines {first}–{last_shown} of {total}"));
        }
        if self.decoded.encoding != text::Encoding::Utf8 {
            header.push_str(&format!(" · {}", self.decoded.encoding.as_str()));
        }
        if matches!(self.decoded.line_ending, text::LineEnding::Crlf | text::LineEnding::Cr | text::LineEnding::Mixed) {
            header.push_str(&format!(" · {}", self.decoded.line_ending.as_str()));
        }
        if self.ignored {
            header.push_str(" · gitignored");
        }
        header
    }

    /// The header's end, the hash edits are guarded by: the structured face carries it as
    /// `file_hash`, so its `text` leaves it out (`Part::Carried`).
    fn hash(&self) -> Part {
        Part::Carried(Box::new(Part::text(format!(" · hash {}", self.file_hash))))
    }

    /// The cut, the reason codes, a mid-line cut, and the calls that continue.
    fn footer(
        &self,
        last_shown: usize,
        cut_by: Option<Limit>,
        reason_codes: &[ReasonCode],
        line_truncated: bool,
        next_calls: &[NextCall],
    ) -> String {
        let codes = if reason_codes.is_empty() {
            String::new()
        } else {
            format!(" [{}]", crate::reasons::joined(reason_codes))
        };
        let mut footer = String::new();
        if let Some(limit) = cut_by {
            footer.push_str(&format!(
                "── cut after line {last_shown} of {} by {}={}{codes}\n",
                self.window_last, limit.name, limit.value
            ));
        } else if !reason_codes.is_empty() {
            footer.push_str(&format!("── asked above a server ceiling, clamped (see applied_limits){codes}\n"));
        }
        if line_truncated {
            footer.push_str(&format!("── line {last_shown} was cut mid-line to fit the budget\n"));
        }
        for call in next_calls {
            footer.push_str(&next_line(call));
        }
        footer
    }
}

/// Renders lines `first..=last` under the character, byte and token caps. Returns the
/// payload, the last line shown, the cap that cut it (if any) and, when that last line was
/// itself cut mid-line (only ever the first line of a page, so paging always advances), how
/// many bytes of it were kept.
fn cut_payload(
    decoded: &Decoded,
    (first, last): (usize, usize),
    budget: &Budget,
    token_budget: usize,
) -> (String, usize, Option<Limit>, Option<usize>, Option<usize>) {
    let (chars, bytes, token_limit) = (budget.chars, budget.bytes, budget.token_limit);
    let byte_budget = bytes.map_or(usize::MAX, |limit| limit.value);
    let prefix_len = text::numbered_line(first, "").len();
    let first_line = || text::numbered_line(first, decoded.line(first)) + "\n";
    let mut payload = String::new();
    let mut used_chars = 0;
    let mut line_ends: Vec<usize> = Vec::new(); // payload length after each line
    let mut cut_by = None;
    for number in first..=last {
        let line = text::numbered_line(number, decoded.line(number)) + "\n";
        let line_chars = line.chars().count();
        let over = if used_chars + line_chars > chars.value {
            Some(chars)
        } else if payload.len() + line.len() > byte_budget {
            bytes
        } else {
            None
        };
        if over.is_some() {
            cut_by = over;
            break;
        }
        used_chars += line_chars;
        payload.push_str(&line);
        line_ends.push(payload.len());
    }
    if line_ends.is_empty() {
        let (cut, kept) = cut_line(&first_line(), chars.value, byte_budget, token_budget);
        return (cut, first, cut_by, Some(kept.saturating_sub(prefix_len)), None);
    }
    // Tokens: one count when everything fits (the common case); otherwise drop lines from
    // the end, re-counting exactly whenever the running estimate says it fits.
    let mut estimate = tokens::count(&payload);
    if estimate <= token_budget {
        return (payload, first + line_ends.len() - 1, cut_by, None, Some(estimate));
    }
    while line_ends.len() > 1 {
        line_ends.pop();
        let keep = *line_ends.last().unwrap_or(&0);
        estimate = estimate.saturating_sub(tokens::count(&payload[keep..]));
        payload.truncate(keep);
        if estimate <= token_budget {
            estimate = tokens::count(&payload);
            if estimate <= token_budget {
                return (payload, first + line_ends.len() - 1, Some(token_limit), None, Some(estimate));
            }
        }
    }
    let (cut, kept) = cut_line(&first_line(), chars.value, byte_budget, token_budget);
    (cut, first, Some(token_limit), Some(kept.saturating_sub(prefix_len)), None)
}

/// Cuts one rendered line to fit every cap, at a UTF-8 boundary, and marks the cut.
fn cut_line(line: &str, max_chars: usize, max_bytes: usize, max_tokens: usize) -> (String, usize) {
    let marker_room = 40;
    let body = line.trim_end_matches('\n');
    let char_bytes =
        body.char_indices().nth(max_chars.saturating_sub(marker_room)).map_or(body.len(), |(index, _)| index);
    let mut end = char_bytes.min(max_bytes.saturating_sub(marker_room));
    let mut kept = text::truncate_at_char_boundary(body, end);
    // Shrink by halves until the token cap holds.
    while tokens::count(kept) > max_tokens.saturating_sub(16) && !kept.is_empty() {
        end = kept.len() / 2;
        kept = text::truncate_at_char_boundary(body, end);
    }
    let dropped = body.len() - kept.len();
    (format!("{kept}…[line cut: {dropped} more bytes]\n"), kept.len())
}

/// The window a cursor continues, after checking it belongs to this file as it is now.
fn cursor_window(
    request: &ReadRequest,
    path: &RepoPath,
    cursor: &str,
    file_hash: &ContentHash,
    total: usize,
) -> Result<(usize, usize), ToolError> {
    let Some(decoded) = ReadCursor::decode(cursor).filter(|cursor| !cursor.outline) else {
        return Err(ToolError::invalid_args(
            "`cursor` is not a cursor issued by loupe",
            "pass the `next_cursor` value exactly as returned, or drop `cursor` to start over",
        )
        .with_next_call(with_args(request, &[], &["cursor"])));
    };
    if !decoded.is_for(path) {
        return Err(ToolError::invalid_args(
            format!("this cursor was issued for another file, not `{}`", crate::errors::quoted(path.as_str())),
            "use a cursor with the target it came from, or drop `cursor`",
        )
        .with_next_call(with_args(request, &[], &["cursor"])));
    }
    if !decoded.matches(file_hash) {
        let restart_line = decoded.next_line.min(total.max(1));
        let restart = if request.mode == ReadMode::Snippet {
            let end = if decoded.window_end == 0 { total } else { decoded.window_end.min(total) }.max(restart_line);
            with_args(request, &[("start_line", json!(restart_line)), ("end_line", json!(end))], &["cursor"])
        } else {
            with_args(request, &[("offset", json!(restart_line))], &["cursor"])
        };
        return Err(ToolError::new(
            ErrorCode::Conflict,
            format!(
                "`{path}` changed since this cursor was issued (hash {}… then, {file_hash} now)",
                decoded.hash_hex()
            ),
            "the file changed: read it again from the same line without the cursor",
        )
        .with_next_call(restart)
        .with_detail("path", Value::from(path.as_str()))
        .with_detail("expected_hash_prefix", Value::from(decoded.hash_hex()))
        .with_detail("actual_hash", Value::from(file_hash.as_str())));
    }
    let last = if decoded.window_end == 0 { total } else { decoded.window_end.min(total) };
    Ok((decoded.next_line, last))
}

fn past_end(request: &ReadRequest, name: &str, asked: usize, total: usize) -> ToolError {
    let tail_start = total.saturating_sub(29).max(1);
    let call = if request.mode == ReadMode::Snippet {
        with_args(
            request,
            &[("start_line", json!(tail_start)), ("end_line", json!(total.max(1)))],
            &["offset", "limit", "line_range", "context_lines"],
        )
    } else {
        with_args(request, &[("offset", json!(tail_start))], &[])
    };
    ToolError::invalid_args(
        format!("`{name}` {asked} is past the end of `{}` ({total} lines)", crate::errors::quoted(&request.target)),
        format!("lines are 1-based; the file has {total} lines"),
    )
    .with_next_call(call)
    .with_detail("total_lines", Value::from(total))
}

/// A follow-up `read` call: the caller's arguments with some set and some removed.
fn with_args(request: &ReadRequest, set: &[(&str, Value)], remove: &[&str]) -> NextCall {
    let mut arguments = request.original.clone();
    for key in ["file_path", "filePath"] {
        if let Some(value) = arguments.remove(key) {
            arguments.insert("target".into(), value);
        }
    }
    if request.mode != ReadMode::Symbol
        && let Some(value) = arguments.remove("path")
    {
        arguments.insert("target".into(), value);
    }
    for key in remove {
        arguments.remove(*key);
    }
    for (key, value) in set {
        arguments.insert((*key).to_owned(), value.clone());
    }
    NextCall { tool: "read".into(), arguments }
}

/// A read's refusal: a missing file or a directory get suggestions with calls that replay;
/// the rest has the one vocabulary of `errors.rs`.
fn vfs_error(workspace: &Workspace, request: &ReadRequest, error: VfsError) -> ToolError {
    match error {
        VfsError::NotFound { path } => not_found(workspace, request, &path),
        VfsError::IsDirectory { path } => {
            let (_, names) = workspace.root().sibling_names(&path.join("_"));
            let mut error = ToolError::invalid_args(
                format!(
                    "`{}` is a directory; mode='{}' reads a file",
                    crate::errors::quoted(path.as_str()),
                    request.mode.as_str()
                ),
                format!("read a file inside it: {}", preview_names(&names)),
            );
            for name in names.iter().filter(|name| name.contains('.')).take(3) {
                error = error.with_next_call(with_args(
                    request,
                    &[("target", Value::from(path.join(name).as_str()))],
                    &["cursor"],
                ));
            }
            error
        }
        other => crate::errors::vfs_error(other, Access::Read),
    }
}

fn not_found(workspace: &Workspace, request: &ReadRequest, path: &RepoPath) -> ToolError {
    let (dir, names) = workspace.root().sibling_names(path);
    let wanted = if dir == path.parent() {
        path.file_name().to_owned()
    } else {
        path.components().nth(dir.components().count()).unwrap_or("").to_owned()
    };
    let suggestions: Vec<RepoPath> = closest(&wanted, &names, 3).into_iter().map(|name| dir.join(name)).collect();
    let hint = if suggestions.is_empty() {
        format!("no similar name in `{dir}`; it contains: {}", preview_names(&names))
    } else {
        format!("did you mean {}?", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    };
    let shown = crate::errors::quoted(path.as_str());
    let mut error = ToolError::new(ErrorCode::FileNotFound, format!("`{shown}` does not exist"), hint);
    for suggestion in &suggestions {
        error = error.with_next_call(with_args(request, &[("target", Value::from(suggestion.as_str()))], &["cursor"]));
    }
    error
}

fn preview_names(names: &[String]) -> String {
    if names.is_empty() {
        return "(nothing)".into();
    }
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    let more = names.len().saturating_sub(shown.len());
    if more > 0 { format!("{} … and {more} more", shown.join(", ")) } else { shown.join(", ") }
}
