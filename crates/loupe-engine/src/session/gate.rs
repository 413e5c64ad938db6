//! The search → ref → read gate (§9.7).
//!
//! A whole-file `read` (mode `file`) passes when it carries a ref this session was issued (a
//! `candidate_id` or `bundle_id` from one of its last 20 searches) that names its target, when
//! one of those searches returned its file, or when it copies the arguments of a `read`
//! next_calls entry the session was given. Without a ref pass: reads by an exact name
//! (`symbol`) or of an `outline`, precision reads (a `snippet` window or a `file`
//! `offset`+`limit`) of at most `max_range_lines`, cursor continuations, and `diff_preview`. A
//! `symbol` or `outline` read that carries a ref is still checked against it. Every refusal carries
//! next_calls that pass when replayed as they are.

use loupe_core::{ErrorCode, NextCall, ToolError};
use serde_json::{Map, Value, json};

use super::store::{Candidate, Session};
use crate::read::{ReadMode, ReadRequest};
use crate::reasons::ReasonCode;

/// What the gate decided for one read.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Passes; `by_ref` when a ref or an issued call (not an exception) let it through.
    Pass {
        by_ref: bool,
    },
    Refuse {
        reason: ReasonCode,
        error: ToolError,
    },
}

/// The read as the gate sees it: the request and its target as a root-relative path.
#[derive(Debug)]
pub(crate) struct ReadShape<'a> {
    pub(crate) request: &'a ReadRequest,
    /// The target as a root-relative path (a symbol read: its `path`, when given).
    pub(crate) target_path: Option<String>,
    pub(crate) max_range_lines: usize,
    /// The canonical root, `/`-separated, for absolute paths among the arguments.
    pub(crate) root: String,
    /// The target file is not there: the read answers that, not the gate.
    pub(crate) missing: bool,
}

pub(crate) fn check(shape: &ReadShape<'_>, session: Option<&Session>) -> Verdict {
    let request = shape.request;
    let max_range_lines = shape.max_range_lines;
    if request.mode == ReadMode::DiffPreview {
        return Verdict::Pass { by_ref: false };
    }
    // A cursor continues a read this session was answered (a hand-made cursor once read 300
    // lines of any file without a search): it passes when a next call issued to this session
    // carries it for the same target, whatever else the caller changed.
    if let Some(cursor) = &request.cursor
        && session.is_some_and(|session| issued_cursor(session, &request.target, cursor))
    {
        return Verdict::Pass { by_ref: false };
    }
    let window = request.precision_window();
    if let Some((first, last)) = window
        && last + 1 - first <= max_range_lines
    {
        return Verdict::Pass { by_ref: false };
    }
    let searches = session.map_or(0, |session| session.searches.len());
    if let Some(session) = session
        && issued(session, request)
    {
        return Verdict::Pass { by_ref: true };
    }
    let candidate_id = request.candidate_id.as_deref();
    let bundle_id = request.bundle_id.as_deref();
    // An exact name or path is not an aimless read: a symbol read answers one definition (or
    // names the candidates), an outline has no bodies. The gate is for whole files (§9.7).
    if candidate_id.is_none() && bundle_id.is_none() && matches!(request.mode, ReadMode::Symbol | ReadMode::Outline) {
        return Verdict::Pass { by_ref: false };
    }
    let windowed = match window {
        Some((first, _)) => Some(windowed_call(shape, first, max_range_lines)),
        None => window_instead(shape, max_range_lines.min(WINDOW_LINES)),
    };
    if candidate_id.is_none() && bundle_id.is_none() {
        // A file one of the session's searches returned was searched for: its path is its ref
        // (a file list shows paths, not ids).
        if candidate_for(shape, session).is_some() {
            return Verdict::Pass { by_ref: true };
        }
        return refuse_without_ref(shape, session, searches, windowed, None);
    }
    let session_searches = session.map(|session| session.searches.iter()).into_iter().flatten();
    if let Some(id) = candidate_id {
        let found = session_searches
            .clone()
            .flat_map(|search| search.candidates.iter())
            .find(|c| !c.id.is_empty() && c.id == id);
        let Some(candidate) = found else {
            return refuse_without_ref(shape, session, searches, windowed, Some(("candidate_id", id)));
        };
        if matches(shape, candidate) {
            return Verdict::Pass { by_ref: true };
        }
        return refuse_mismatch(shape, session, &[candidate], "candidate_id", id, windowed);
    }
    let id = bundle_id.unwrap_or_default();
    let Some(bundle) = session_searches.clone().find(|search| search.bundle_id == id) else {
        return refuse_without_ref(shape, session, searches, windowed, Some(("bundle_id", id)));
    };
    if bundle.candidates.iter().any(|candidate| matches(shape, candidate)) {
        return Verdict::Pass { by_ref: true };
    }
    let members: Vec<&Candidate> = bundle.candidates.iter().collect();
    refuse_mismatch(shape, session, &members, "bundle_id", id, windowed)
}

/// True when the read repeats a `read` call the session was issued: the same target and window,
/// however it is presented (`max_tokens`, `metadata`, `fresh`…) and whichever ref it carries.
fn issued(session: &Session, request: &ReadRequest) -> bool {
    let key = request.key();
    issued_calls(session).any(|call| *call == key)
}

/// Every read call issued to the session: by its searches and by its reads.
fn issued_calls(session: &Session) -> impl Iterator<Item = &crate::read::ReadKey> {
    session.searches.iter().flat_map(|search| search.read_calls.iter()).chain(&session.read_calls)
}

fn issued_cursor(session: &Session, target: &str, cursor: &str) -> bool {
    issued_calls(session).any(|call| call.carries_cursor(target, cursor))
}

/// Does `candidate` name what this read targets?
pub(crate) fn matches(shape: &ReadShape<'_>, candidate: &Candidate) -> bool {
    let request = shape.request;
    if request.mode == ReadMode::Symbol {
        let path_ok = request.symbol_path().is_none_or(|path| {
            super::normalize_lexically(&shape.root, path).is_some_and(|path| path == candidate.path)
        });
        return match &candidate.symbol {
            Some(name) => path_ok && last_segment(&request.target) == name,
            None => request.symbol_path().is_some() && path_ok,
        };
    }
    let Some(path) = &shape.target_path else { return false };
    if candidate.path == *path {
        return true;
    }
    // An outline of a directory is about every hit under it.
    request.mode == ReadMode::Outline && (path.is_empty() || candidate.path.starts_with(&format!("{path}/")))
}

/// The last name of a qualified symbol: `Type::method`, `Type.method`, `Type/method`.
fn last_segment(target: &str) -> &str {
    target.rsplit([':', '.', '/', '#']).next().unwrap_or(target)
}

/// A candidate from the session's recent searches that names this target, newest first.
fn candidate_for<'s>(shape: &ReadShape<'_>, session: Option<&'s Session>) -> Option<&'s Candidate> {
    session?.searches.iter().flat_map(|search| search.candidates.iter()).find(|candidate| matches(shape, candidate))
}

fn refuse_without_ref(
    shape: &ReadShape<'_>,
    session: Option<&Session>,
    searches: usize,
    windowed: Option<NextCall>,
    unknown_ref: Option<(&str, &str)>,
) -> Verdict {
    let mut next_calls = Vec::new();
    if searches == 0 {
        next_calls.push(search_for(shape));
    }
    if let Some(candidate) = candidate_for(shape, session) {
        next_calls.push(with_ref(shape, &candidate.id));
    }
    next_calls.extend(windowed);
    if searches > 0 {
        next_calls.push(search_for(shape));
    }
    let stale = unknown_ref.map(|(key, id)| {
        format!("{key} `{id}` was not issued to this session (or is older than its last 20 searches); ")
    });
    let (reason, code, message) = if searches == 0 {
        (
            ReasonCode::SearchFirstRequired,
            ErrorCode::SearchFirstRequired,
            format!(
                "{}search first: mode='{}' needs a ref from a search in this session",
                stale.unwrap_or_default(),
                shape.request.mode.as_str()
            ),
        )
    } else {
        (
            ReasonCode::SearchRefRequired,
            ErrorCode::SearchRefRequired,
            format!(
                "{}mode='{}' needs a ref: pass a candidate_id or bundle_id from a search, or copy a next_calls entry",
                stale.unwrap_or_default(),
                shape.request.mode.as_str()
            ),
        )
    };
    let hint = format!(
        "use a search result's candidate_id (or copy its next_calls), or read an exact window of at most {} lines (snippet start_line..end_line, or file offset+limit)",
        shape.max_range_lines
    );
    let mut error = ToolError::new(code, message, hint);
    error.next_calls = next_calls;
    Verdict::Refuse { reason, error }
}

fn refuse_mismatch(
    shape: &ReadShape<'_>,
    session: Option<&Session>,
    named: &[&Candidate],
    key: &str,
    id: &str,
    windowed: Option<NextCall>,
) -> Verdict {
    let expected = named.first().map(|candidate| described(candidate)).unwrap_or_default();
    let mut next_calls = Vec::new();
    if let Some(candidate) = candidate_for(shape, session) {
        next_calls.push(with_ref(shape, &candidate.id));
    }
    if let Some(first) = named.first() {
        next_calls.push(read_candidate(first));
    }
    next_calls.extend(windowed);
    next_calls.push(search_for(shape));
    let mut error = ToolError::new(
        ErrorCode::CandidateRefRequired,
        format!("{key} `{id}` names `{expected}`, not `{}`", shape.request.target),
        format!(
            "this ref reads `{expected}`; to read `{}`, pass a ref of its own (the next calls do either)",
            shape.request.target
        ),
    );
    error.next_calls = next_calls;
    let mut context = Map::new();
    context.insert("expected_target".into(), named.first().map_or(Value::Null, |candidate| expected_target(candidate)));
    context.insert("provided_target".into(), Value::from(shape.request.target.as_str()));
    if key == "bundle_id" {
        let targets: Vec<Value> = named.iter().take(10).map(|candidate| expected_target(candidate)).collect();
        context.insert("bundle_targets".into(), Value::from(targets));
    }
    let error = error.with_detail("gate_context", Value::Object(context));
    Verdict::Refuse { reason: ReasonCode::CandidateRefRequired, error }
}

/// A candidate's target as a program acts on it (`gate_context.expected_target`): its path, and
/// its symbol and line where the hit has them.
pub(crate) fn expected_target(candidate: &Candidate) -> Value {
    let mut target = Map::new();
    target.insert("path".into(), Value::from(candidate.path.as_str()));
    if let Some(symbol) = &candidate.symbol {
        target.insert("symbol".into(), Value::from(symbol.as_str()));
    }
    if let Some(line) = candidate.line {
        target.insert("line".into(), Value::from(line));
    }
    Value::Object(target)
}

/// A candidate's target as the message names it.
fn described(candidate: &Candidate) -> String {
    match &candidate.symbol {
        Some(name) => format!("{name} in {}", candidate.path),
        None => candidate.path.clone(),
    }
}

/// A read of a candidate's own target with its id: passes the gate.
pub(crate) fn read_candidate(candidate: &Candidate) -> NextCall {
    match &candidate.symbol {
        Some(name) => NextCall::new(
            "read",
            json!({"mode": "symbol", "target": name, "path": candidate.path, "candidate_id": candidate.id}),
        ),
        None => NextCall::new("read", json!({"mode": "file", "target": candidate.path, "candidate_id": candidate.id})),
    }
}

/// The caller's read with `candidate_id` set (and `bundle_id` dropped).
fn with_ref(shape: &ReadShape<'_>, id: &str) -> NextCall {
    let mut arguments = shape.request.original.clone();
    arguments.remove("bundle_id");
    arguments.insert("candidate_id".into(), Value::from(id));
    NextCall { tool: "read".into(), arguments }
}

/// The caller's over-long precision read cut to `max_range_lines` from where it starts.
fn windowed_call(shape: &ReadShape<'_>, first: usize, max_range_lines: usize) -> NextCall {
    let mut arguments = shape.request.original.clone();
    for key in ["candidate_id", "bundle_id"] {
        arguments.remove(key);
    }
    if shape.request.mode == ReadMode::File {
        arguments.insert("offset".into(), Value::from(first));
        arguments.insert("limit".into(), Value::from(max_range_lines));
    } else {
        for key in ["line_range", "offset", "limit", "context_lines"] {
            arguments.remove(key);
        }
        arguments.insert("start_line".into(), Value::from(first));
        arguments.insert("end_line".into(), Value::from(first + max_range_lines - 1));
    }
    NextCall { tool: "read".into(), arguments }
}

/// For a whole-file read: the same file as a window of its first lines (a precision read).
fn window_instead(shape: &ReadShape<'_>, lines: usize) -> Option<NextCall> {
    if shape.request.mode != ReadMode::File {
        return None;
    }
    let mut arguments = shape.request.original.clone();
    for key in ["candidate_id", "bundle_id"] {
        arguments.remove(key);
    }
    let first = shape.request.offset().unwrap_or(1).max(1);
    arguments.insert("offset".into(), Value::from(first));
    arguments.insert("limit".into(), Value::from(lines));
    Some(NextCall { tool: "read".into(), arguments })
}

/// The window offered instead of a whole file: small enough to pass any sane
/// `max_range_lines`, large enough to orient.
const WINDOW_LINES: usize = 100;

/// A search that finds this target: its symbol name, or its whole path (a base name alone,
/// `__init__.py`, matched 643 files of django, and the first hit's read was another file's).
pub(crate) fn search_for(shape: &ReadShape<'_>) -> NextCall {
    if shape.request.mode == ReadMode::Symbol {
        return NextCall::new("search", json!({"query": last_segment(&shape.request.target), "type": "symbol"}));
    }
    let path = shape.target_path.as_deref().unwrap_or(&shape.request.target);
    let path = if path.is_empty() { "." } else { path };
    NextCall::new("search", json!({"query": path, "type": "file"}))
}
