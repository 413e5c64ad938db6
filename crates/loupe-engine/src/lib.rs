//! The API boundary: typed tool calls in, budgeted two-faced responses out.
//!
//! `Engine::call_with(connection, tool, arguments, work)` is the one entry point every adapter
//! uses (MCP with its connection id and a progress-and-cancel handle; the CLI and tests through
//! `Engine::call` and `call_in`); `read` and `search` pass through the session layer
//! (`session/`, §9) there. The engine is synchronous; async stops at the MCP layer, which calls
//! it through `spawn_blocking`. It owns argument validation, budgets and rendering; it reads the
//! repository only through `loupe-vfs`.
//!
//! A call flows down, each room entered once: `dispatch.rs` parses the arguments into a typed
//! request (`ToolCall`), the session layer checks it (gate, budget, relevance), the tool runs,
//! the session layer post-processes its answer (aggregation, metrics, stabilization), and
//! `dispatch.rs` renders it once.
//!
//! Where things are, top to bottom (`crates/loupe/tests/layering.rs` checks the arrows of the
//! workspace and the tools, and that no import goes in a circle):
//! - `engine.rs`: the `Engine` (the workspace, the session layer, the latency log, the legacy
//!   names' counters). `dispatch.rs`: `ToolCall::parse` and `Engine::call_with`: parses every
//!   call, waits (bounded) for a first index build when the answer needs the index, runs the
//!   call, renders it once and files the session's analytics event. `legacy.rs`: the legacy
//!   names (§12) as a table (old name → tool, implied arguments, renames, old result fields); a
//!   legacy call is translated before parsing and decorates the `Outcome` before rendering.
//!   `manage.rs` and `manage/` (`journal.rs`: undo, redo, history): one function per command,
//!   engine-level: they take the `Engine`.
//! - `session.rs` and `session/`: the session layer (§9): identity, the gate, the budget,
//!   relevance, aggregation, metrics, stabilization, analytics. It runs `read` and `search` with
//!   the workspace and returns their answer unrendered (`Answered`).
//! - The tools, each taking the `&Workspace`, its typed request and the `&Work` handle, and
//!   returning an `Outcome`; none names another tool or a layer above it, but for `edit` →
//!   `read` (a cut edit diff continues as a `read diff_preview` cursor):
//!   - `read.rs` and `read/`: the request and its modes (mode `symbol` resolves through
//!     `workspace/symbols.rs`); `parse.rs` (the line-window grammar, the caller's caps),
//!     `window.rs` (modes `file` and `snippet`: windows cut by the binding budget at line
//!     boundaries), `cursor.rs` (file hash, path tag, position), `outline.rs` (mode `outline`: a
//!     file's or a directory's definitions, one line each, within the budget), `diff_preview.rs`
//!     (a file on disk, or proposed `content`, against `HEAD`, the git index or the disk; a
//!     directory as a status list, then diffs while the budget lasts).
//!   - `search.rs` and `search/`: `parse.rs` (filters, `auto` inference), `hits.rs` (the index's
//!     symbols, names, and text verified on disk: files verified on every core but consumed in
//!     candidate order, so the 2,000-match cut is deterministic), `render.rs` (ranking, paging,
//!     candidate and bundle ids, both faces).
//!   - `analyze.rs` and `analyze/`: target resolution and the six modes; callers and references
//!     are read in path-order chunks of 64 files parsed on every core and stop once `max_nodes`
//!     is full; `graph.rs` renders the tree; `flow.rs` follows data flow into callees.
//!   - `edit.rs` and `edit/`: a plan per call (see below), with `parse.rs`, `text_ops.rs` (the
//!     text operations and encodings), `lines.rs`, `failures.rs` (why an edit failed, worded for
//!     the model) and `render.rs` (the bounded reply).
//! - `workspace.rs` and `workspace/`: the `Workspace` the tools share (configuration, root,
//!   index and watcher, journal and edit lock, caches); it names no tool, no session layer and
//!   no engine. `relations.rs` (the import and type graphs of the index's generation, updated in
//!   place when only edited files changed, and parsed facts cached by content hash),
//!   `symbols.rs` (symbol resolution for `read` and `analyze`), `oversized.rs` (the filters of
//!   the files over the index's size limit, which let a text search skip them), `proposals.rs`
//!   (the proposed texts of cut edit diffs), `git.rs` (the repository, opened with the
//!   exclusions applied).
//! - Below all: `params.rs` (the parameter table, plain data: every tool's parameters with type,
//!   modes, aliases and description, and the choice enums, each choice written once; the parser,
//!   the MCP schema and the CLI derive from it); `args.rs` (the shared argument checks from the
//!   table: aliases, unknown names refused by name, a parameter of another mode refused with the
//!   §3.4 message; a refusal carries its `ArgumentRule`); `response.rs` (`Outcome`: face parts,
//!   typed act fields, detail; and its one renderer: the text face, `token_estimate`, the
//!   structured face at each `metadata` level); `reasons.rs` (the reason-code enum in its fixed
//!   order and the registry, `reason_registry.json`); `errors.rs` (one vocabulary for what
//!   `loupe-vfs` refuses, worded for a read or a write); `work.rs` (the progress-and-cancel
//!   handle); `latency.rs` (each stage's recent durations, for `manage metrics`); `heap.rs` (the
//!   allocator's counts, read through a probe the binary registers); `config.rs` (loading and
//!   layering the configuration); `suggest.rs` ("did you mean").
//!
//! Edits keep a file's shape: line endings (`\n`, `\r\n`, lone `\r`) of text typed with `\n`
//! follow the file; a missing final newline stays missing unless a line is added after it; a UTF-8
//! BOM is kept; Latin-1 files round-trip byte for byte (a character outside Latin-1 is refused);
//! UTF-16 and binary files are refused. A mutex holds for a whole edit, undo or redo call, so
//! validation and apply see one disk state; `read_only` refuses all three with `READ_ONLY`, while
//! `dry_run` still answers. The index is updated for the touched paths before the call returns.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod analyze;
mod args;
pub mod config;
mod dispatch;
mod edit;
mod engine;
mod errors;
#[cfg(test)]
mod fuzz;
pub mod heap;
pub mod latency;
pub mod legacy;
mod manage;
pub mod params;
mod read;
mod reasons;
mod response;
mod search;
mod session;
mod suggest;
mod work;
mod workspace;

pub use engine::Engine;
/// The index cache (every root's index directory): listing and pruning, for `loupe cache`.
pub use loupe_index::cache as index_cache;
/// The index's state as the engine reports it (plain data; adapters need not know the index).
pub use loupe_index::{IndexState, IndexStatus, RefreshStats};
pub use response::{Location, MetadataLevel, Response, STRUCTURED_FIELDS, StructuredField};
pub use session::CallContext;
pub use work::{Progress, Work};
pub use workspace::{OpenError, default_index_dir};
