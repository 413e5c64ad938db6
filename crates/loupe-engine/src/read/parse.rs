//! Parsing a `read` call's arguments into its `ReadRequest`: the modes, the line-window grammar
//! (`start_line`/`end_line`, `line_range`, `offset`/`limit`, a cursor) and the caller's caps.

use loupe_core::{NextCall, ToolError};
use serde_json::{Map, Value, json};

use super::diff_preview::Compare;
use super::{Against, Caps, ReadMode, ReadRequest, Window};
use crate::args::{Args, Parsed, Rejected};
use crate::params;

/// Parses a `read` call's arguments into its request.
pub(crate) fn parse(arguments: Value) -> Parsed<ReadRequest> {
    Rejected::parsing("read", arguments, parse_request).map_err(|(mut rejected, original)| {
        // A refused read still names what it asked for in its header.
        let text = |key: &str| original.get(key).and_then(Value::as_str).map(str::to_owned);
        rejected.mode = text("mode");
        rejected.target = ["target", "file_path", "filePath", "path"].iter().find_map(|key| text(key));
        rejected
    })
}

fn parse_request(arguments: Value, original: Map<String, Value>) -> Result<ReadRequest, ToolError> {
    let mut args = Args::new(&params::READ, arguments)?;
    let Some(mode) = args.choice("mode")?.as_deref().and_then(ReadMode::parse) else {
        let mut error = ToolError::invalid_args(
            "`mode` is required for `read`",
            "add `mode`: one of file, snippet, symbol, outline, diff_preview",
        );
        if let Some(target) = original.get("target").filter(|target| target.is_string()) {
            error = error.with_next_call(NextCall::new("read", json!({"mode": "file", "target": target})));
        }
        return Err(error);
    };
    // `path` is the file of a symbol (mode symbol, and diff_preview's diff of one symbol);
    // without a target it is accepted as the target, because agents say `path` for files.
    if mode != ReadMode::Symbol && args.has("path") && !args.has("target") {
        args.alias("path", "target")?;
    }
    args.refuse_other_modes(mode.as_str())?;
    let target = args.required_string("target", "\"target\": \"src/main.rs\"")?;
    let offset = args.integer("offset")?;
    let limit = args.integer("limit")?;
    let caps = Caps {
        max_tokens: args.integer("max_tokens")?.map(|v| v as usize),
        max_bytes: args.integer("max_bytes")?.map(|v| v as usize),
        max_lines: args.integer("max_lines")?.map(|v| v as usize),
        max_preview_chars: args.integer("max_preview_chars")?.map(|v| v as usize),
    };
    for (name, value) in [
        ("max_tokens", caps.max_tokens),
        ("max_bytes", caps.max_bytes),
        ("max_lines", caps.max_lines),
        ("max_preview_chars", caps.max_preview_chars),
    ] {
        if value == Some(0) {
            return Err(ToolError::invalid_args(
                format!("`{name}` must be at least 1"),
                format!("remove `{name}` or pass a positive number"),
            ));
        }
    }
    let preview_none = args.choice("preview_mode")?.as_deref() == Some("none");
    let cursor = args.string("cursor")?;
    let metadata = args.metadata()?;
    // The session layer gives these meaning.
    let candidate_id = args.string("candidate_id")?;
    let bundle_id = args.string("bundle_id")?;
    let session_id = args.string("session_id")?;
    let fresh = args.boolean("fresh")?.unwrap_or(false);

    let window = match mode {
        ReadMode::Snippet => parse_snippet_window(&mut args, offset, limit, cursor.is_some())?,
        ReadMode::File => {
            if cursor.is_some() && offset.is_some() {
                return Err(position_twice("offset"));
            }
            if limit == Some(0) {
                return Err(ToolError::invalid_args(
                    "`limit` must be at least 1",
                    "remove `limit` or pass a positive number",
                ));
            }
            Window::File { first: offset.unwrap_or(1).max(1) as usize, count: limit.map(|v| v as usize) }
        }
        ReadMode::Symbol => Window::Symbol {
            path: args.string("path")?,
            include_context: args.integer("include_context")?.unwrap_or(0) as usize,
            body: args.boolean("body")?.unwrap_or(true),
        },
        ReadMode::Outline => {
            if offset.is_some() {
                return Err(ToolError::invalid_args(
                    "an outline is not paged by line; `offset` does not apply (a cut outline continues by `cursor`)",
                    "remove `offset`; narrow with `depth` or `max_tokens`, or pass the `next_cursor` of a cut outline",
                ));
            }
            Window::Outline {
                depth: args.integer("depth")?.unwrap_or(2).max(1) as usize,
                include_docs: args.boolean("include_docs")?.unwrap_or(false),
                signatures: args.boolean("signatures")?,
            }
        }
        ReadMode::DiffPreview => {
            let against = args.string("against")?.unwrap_or_else(|| "HEAD".into());
            let against = match Against::parse(&against) {
                Some(keyword) => Compare::Keyword(keyword),
                None if Compare::is_revision_text(&against) => Compare::Revision(against.trim().to_owned()),
                None => {
                    return Err(ToolError::invalid_args(
                        format!(
                            "`against` must be {} or a revision (a branch, tag, commit id, `HEAD~2`, `main...`), got `{}`",
                            Against::CHOICES.join(", "),
                            crate::errors::quoted(&against)
                        ),
                        "set `against` to HEAD, INDEX, WORKTREE or a revision git can resolve",
                    ));
                }
            };
            if limit.is_some() {
                return Err(ToolError::invalid_args(
                    "a diff preview is paged by `cursor` (or `offset`, a line of the diff); `limit` does not apply",
                    "remove `limit`; narrow with a file target, `context_lines` or `max_tokens`",
                ));
            }
            if cursor.is_some() && offset.is_some() {
                return Err(position_twice("offset"));
            }
            Window::DiffPreview {
                path: args.string("path")?,
                offset: offset.unwrap_or(1).max(1) as usize,
                content: args.string("content")?,
                context: args.integer("context_lines")?.unwrap_or(3).min(1000) as usize,
                against,
            }
        }
    };
    let revision = match args.string("revision")? {
        Some(spec) if Compare::is_revision_text(&spec) && !spec.contains("..") => Some(spec.trim().to_owned()),
        Some(spec) => {
            return Err(ToolError::invalid_args(
                format!(
                    "`revision` names one commit (a branch, tag or commit id, `HEAD~N`, `REV^`), got `{}`",
                    crate::errors::quoted(&spec)
                ),
                "name one commit; a range (`A..B`, `A...B`) is for diff_preview's `against`",
            ));
        }
        None => None,
    };
    args.finish()?;
    Ok(ReadRequest {
        mode,
        target,
        window,
        revision,
        cursor,
        caps,
        preview_none,
        metadata,
        candidate_id,
        bundle_id,
        session_id,
        fresh,
        offset,
        original,
        label: None,
    })
}

fn parse_snippet_window(
    args: &mut Args,
    offset: Option<u64>,
    limit: Option<u64>,
    has_cursor: bool,
) -> Result<Window, ToolError> {
    let mut start = args.integer("start_line")?;
    let mut end = args.integer("end_line")?;
    let context = args.integer("context_lines")?.unwrap_or(0) as usize;
    if let Some(range) = args.string("line_range")? {
        if start.is_some() || end.is_some() {
            return Err(ToolError::invalid_args(
                "`line_range` and `start_line`/`end_line` both set the window; pass one",
                "remove `line_range`, or remove `start_line` and `end_line`",
            ));
        }
        let (first, last) = parse_line_range(&range)?;
        start = Some(first);
        end = Some(last);
    }
    if let Some(offset) = offset {
        if start.is_some() {
            return Err(ToolError::invalid_args(
                "`offset` and `start_line` both set where the snippet starts; pass one",
                "remove `offset` (snippet windows are start_line..end_line)",
            ));
        }
        start = Some(offset.max(1));
        if let Some(limit) = limit.filter(|limit| *limit > 0) {
            end = Some(offset.max(1) + limit - 1);
        }
    } else if let (Some(first), None, Some(limit)) = (start, end, limit) {
        end = Some(first + limit.max(1) - 1);
    }
    if has_cursor && start.is_some() {
        return Err(position_twice("start_line"));
    }
    if has_cursor {
        // The cursor carries the window; these values are placeholders.
        return Ok(Window::Snippet { start: 1, end: 1, context: 0 });
    }
    let Some(start) = start else {
        return Err(ToolError::invalid_args(
            "`start_line` (or `line_range`) is required for mode='snippet'",
            "add `start_line` and `end_line`, e.g. \"start_line\": 10, \"end_line\": 30",
        ));
    };
    let start = start.max(1);
    let end = end.unwrap_or(start);
    if end < start {
        return Err(ToolError::invalid_args(
            format!("`end_line` {end} is before `start_line` {start}"),
            "lines are 1-based and inclusive: end_line must be >= start_line",
        ));
    }
    Ok(Window::Snippet { start: start as usize, end: end as usize, context })
}

fn parse_line_range(range: &str) -> Result<(u64, u64), ToolError> {
    let bad = || {
        ToolError::invalid_args(
            format!(
                "`line_range` must look like \"10-20\" (1-based, inclusive), got `{}`",
                crate::errors::quoted(range)
            ),
            "pass \"line_range\": \"10-20\", or start_line and end_line",
        )
    };
    let trimmed = range.trim();
    let (first, last) = match trimmed.split_once(['-', ':', ',']) {
        Some((first, last)) => (first.trim(), last.trim()),
        None => (trimmed, trimmed),
    };
    let first: u64 = first.parse().map_err(|_| bad())?;
    let last: u64 = last.parse().map_err(|_| bad())?;
    Ok((first, last))
}

fn position_twice(name: &str) -> ToolError {
    ToolError::invalid_args(
        format!("`cursor` already encodes the position; `{name}` cannot be combined with it"),
        format!("remove `{name}` to continue from the cursor, or remove `cursor` to start over"),
    )
}
