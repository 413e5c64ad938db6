//! The `read` tool (§5): argument validation for every mode, and the `file` and `snippet`
//! modes with their budgets (§3.5).
//!
//! Reads always come from the disk, never from an index. A window is chosen from the
//! arguments (or a cursor), then cut by the binding budget at line boundaries; whatever was
//! cut is named in the footer with the exact call that continues.

pub(crate) mod cursor;
pub(crate) mod diff_preview;
mod outline;
mod parse;
mod revision;
mod window;

pub(crate) use parse::parse;
use window::read_window;

use serde_json::{Map, Value};

pub(crate) use crate::params::{Against, ReadMode};
use crate::response::{MetadataLevel, Outcome};
use crate::work::Work;
use crate::workspace::Workspace;

/// A caller's budget caps, before server ceilings.
#[derive(Debug, Clone, Copy, Default)]
struct Caps {
    max_tokens: Option<usize>,
    max_bytes: Option<usize>,
    max_lines: Option<usize>,
    max_preview_chars: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Window {
    /// `file`: from `first`, up to `count` lines (None: the default page).
    File { first: usize, count: Option<usize> },
    /// `snippet`: lines `start..=end` plus `context` on each side.
    Snippet { start: usize, end: usize, context: usize },
    /// `symbol`: resolved through the index, then read like a snippet of its span.
    Symbol { path: Option<String>, include_context: usize, body: bool },
    /// `outline`: the skeleton of a file or a directory.
    Outline { depth: usize, include_docs: bool, signatures: Option<bool> },
    /// `diff_preview`: answered by `read/diff_preview.rs`.
    /// With `path`, `target` is a symbol of that file: its diff alone.
    DiffPreview {
        against: diff_preview::Compare,
        content: Option<String>,
        context: usize,
        offset: usize,
        path: Option<String>,
    },
}

/// A `read` call, parsed once: what the tool, the gate, the budget and aggregation work from.
#[derive(Debug, Clone)]
pub(crate) struct ReadRequest {
    pub(crate) mode: ReadMode,
    pub(crate) target: String,
    window: Window,
    /// The commit the read is made at (`revision`), as named; `None`: the file on disk.
    revision: Option<String>,
    pub(crate) cursor: Option<String>,
    caps: Caps,
    pub(crate) preview_none: bool,
    pub(crate) metadata: Option<MetadataLevel>,
    pub(crate) candidate_id: Option<String>,
    pub(crate) bundle_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) fresh: bool,
    /// `offset` as given (a `file` read is a precision read only with both offset and limit).
    offset: Option<u64>,
    /// The arguments as given, to build ready-to-run follow-up calls from.
    pub(crate) original: Map<String, Value>,
    /// What the header names before the path (a resolved symbol).
    label: Option<String>,
}

/// What a read is about, without how it is presented (caps, `metadata`, `fresh`, `preview_mode`) or which
/// session or ref it names: a call the session was issued replays when the keys are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadKey {
    mode: ReadMode,
    target: String,
    window: Window,
    revision: Option<String>,
    cursor: Option<String>,
}

impl ReadKey {
    /// This call carries `cursor` for `target` (a continuation the session was issued).
    pub(crate) fn carries_cursor(&self, target: &str, cursor: &str) -> bool {
        self.target == target && self.cursor.as_deref() == Some(cursor)
    }

    /// The bytes the key holds on the heap (a `diff_preview`'s proposed content among them),
    /// for the session store's memory budget.
    pub(crate) fn heap_bytes(&self) -> usize {
        let window = match &self.window {
            Window::Symbol { path, .. } => path.as_ref().map_or(0, String::capacity),
            Window::DiffPreview { content, .. } => content.as_ref().map_or(0, String::capacity),
            Window::File { .. } | Window::Snippet { .. } | Window::Outline { .. } => 0,
        };
        self.target.capacity()
            + self.cursor.as_ref().map_or(0, String::capacity)
            + self.revision.as_ref().map_or(0, String::capacity)
            + window
    }
}

impl ReadRequest {
    pub(crate) fn key(&self) -> ReadKey {
        ReadKey {
            mode: self.mode,
            target: self.target.clone(),
            window: self.window.clone(),
            revision: self.revision.clone(),
            cursor: self.cursor.clone(),
        }
    }

    /// The lines a precision read asks for, first and last (context included), when it is one
    /// (§9.7): a `snippet` window, or a `file` read with both `offset` and `limit`.
    pub(crate) fn precision_window(&self) -> Option<(usize, usize)> {
        match &self.window {
            Window::File { first, count: Some(count) } if self.offset.is_some() => Some((*first, first + count - 1)),
            Window::Snippet { start, end, context } if self.cursor.is_none() => {
                Some((start.saturating_sub(*context).max(1), end.max(start) + context))
            }
            _ => None,
        }
    }

    /// The file a symbol read is limited to (`path`).
    pub(crate) fn symbol_path(&self) -> Option<&str> {
        match &self.window {
            Window::Symbol { path, .. } => path.as_deref(),
            _ => None,
        }
    }

    /// The `max_tokens` the caller set.
    pub(crate) fn max_tokens(&self) -> Option<usize> {
        self.caps.max_tokens
    }

    /// The first line asked for (`offset`), for a window offered instead of a whole file.
    pub(crate) fn offset(&self) -> Option<u64> {
        self.offset
    }
}

/// Runs a parsed read.
pub(crate) fn run(workspace: &Workspace, request: &ReadRequest, work: &Work) -> Outcome {
    let metadata = request.metadata;
    let result = match &request.window {
        Window::Outline { depth, include_docs, signatures } => outline::outline(
            workspace,
            &outline::OutlineRequest {
                target: &request.target,
                revision: request.revision.as_deref(),
                depth: *depth,
                include_docs: *include_docs,
                signatures: *signatures,
                max_tokens: request.caps.max_tokens,
                cursor: request.cursor.as_deref(),
                original: &request.original,
                metadata: request.metadata,
            },
        ),
        Window::DiffPreview { against, content, context, offset, path } => {
            let diff_request = diff_preview::DiffRequest {
                offset: *offset,
                cursor: request.cursor.clone(),
                original: request.original.clone(),
                target: path.clone().unwrap_or_else(|| request.target.clone()),
                symbol: path.as_ref().map(|_| request.target.clone()),
                against: against.clone(),
                content: content.clone(),
                context: *context,
                max_tokens: request.caps.max_tokens,
                max_chars: request.caps.max_preview_chars,
                metadata,
            };
            diff_preview::run(workspace, &diff_request, work)
        }
        Window::Symbol { path, include_context, body } => {
            let resolved = match &request.revision {
                Some(spec) => revision::symbol_at(workspace, spec, &request.target, path.as_deref(), &request.original),
                None => crate::workspace::symbols::resolve(
                    workspace,
                    "read",
                    &request.target,
                    path.as_deref(),
                    &request.original,
                ),
            };
            resolved.and_then(|resolved| {
                let (start, end) = resolved.window(*include_context, *body);
                let derived = ReadRequest {
                    target: resolved.path.to_string(),
                    window: Window::Snippet { start, end, context: 0 },
                    label: Some(resolved.label()),
                    ..request.clone()
                };
                read_window(workspace, &derived).map(|mut outcome| {
                    outcome.detail.insert("resolved_symbol".into(), resolved.to_json());
                    // The bare name named members too: say so, with the read of each.
                    for (shown, call) in &resolved.others {
                        outcome.face.push(format!("also `{}`: {shown}\n", resolved.name));
                        outcome.face.push(crate::response::next_line(call));
                        outcome.act.next_calls.push(call.clone());
                    }
                    outcome
                })
            })
        }
        _ => read_window(workspace, request),
    };
    result
        .unwrap_or_else(|error| {
            Outcome::failure("read", Some(request.mode.as_str().into()), Some(request.target.clone()), error)
        })
        .with_metadata(metadata)
}
