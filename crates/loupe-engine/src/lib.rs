//! The API boundary: typed tool calls in, budgeted two-faced responses out.
//!
//! `Engine::call_in(connection, tool, arguments)` is the one entry point every adapter uses
//! (MCP with its connection id, the CLI through `Engine::call`); `read` and `search` pass
//! through the session layer (`session/`, §9) there. The engine is synchronous; async stops
//! at the MCP layer, which calls it through `spawn_blocking`. It owns argument validation,
//! budgets and rendering; it reads the repository only through `loupe-vfs`.
//!
//! A call flows down, each room entered once: `dispatch.rs` parses the arguments into a typed
//! request (`ToolCall`), the session layer checks it (gate, budget, relevance), the tool runs,
//! the session layer post-processes its answer (aggregation, metrics, stabilization).
//!
//! Where things are:
//! - `params.rs`: the parameter table (plain data): every tool's parameters with type, modes,
//!   aliases and description. The parser, the MCP schema (`loupe-mcp`) and the CLI derive from it.
//! - `dispatch.rs`: `ToolCall::parse` and `Engine::call_in`; `engine.rs`: the `Engine` (root,
//!   index, journal, session layer, graphs) that the tools take; `legacy.rs`: the legacy names
//!   (§12) as a table (old name → tool, implied arguments, renames, old result fields), which
//!   `dispatch.rs` applies before parsing.
//! - `args.rs`: the shared argument checks from the table (aliases, unknown names refused by name,
//!   a parameter of another mode refused with the §3.4 message, numbers given as numbers or
//!   numeric strings) and `Rejected`, a call whose arguments did not parse; `errors.rs`: one
//!   vocabulary for what `loupe-vfs` refuses, worded for a read or a write.
//! - `read.rs` and `read/`: the request and its modes; `parse.rs` (the line-window grammar, the
//!   caller's caps), `window.rs` (modes `file` and `snippet`: windows, the caller's caps and the
//!   server's ceilings, cuts at line boundaries), `cursor.rs` (file hash, path tag, position),
//!   `symbol.rs` (mode `symbol`, also `analyze`'s target resolution), `outline.rs` (an
//!   `outline · N lines` header, then one `line<TAB>indent signature` per definition, with
//!   `start-end` only on definitions whose nested definitions are listed, fields inline on their
//!   type's line and runs of values by name, so that it costs ≤ 15 % of the file's tokens at the
//!   median: `index_bench --only outline`), `diff_preview.rs` (a directory lists modified (M),
//!   added to the index (A), untracked (?), deleted (D) and renamed (R: a deleted and a new file
//!   sharing at least half their lines) files, then diffs while the budget lasts).
//! - `search.rs` and `search/`: `parse.rs` (filters, `auto` inference), `hits.rs` (the index's
//!   symbols, names, and text verified on disk: files verified on every core but consumed in
//!   candidate order, so the 2,000-match cut is deterministic), `oversized.rs` (the gram sets
//!   of the files over the index's size limit, which let a text search skip them), `render.rs`
//!   (ranking, paging, candidate and bundle ids, both faces).
//! - `analyze.rs` and `analyze/`: target resolution and the six modes; `workspace.rs` keeps the
//!   import and type graphs of the index's generation (updated in place when only edited files
//!   changed, `Index::modified_since`; rebuilt otherwise) and caches parsed facts by content
//!   hash; callers and references are read in path-order chunks of 64 files parsed on every core
//!   and stop once `max_nodes` is full; `graph.rs` renders the tree; `flow.rs` follows data flow
//!   into callees.
//! - `edit.rs` and `edit/`: a plan per call (see below), with `parse.rs`, `text_ops.rs` (the text
//!   operations and encodings), `failures.rs` (why an edit failed, worded for the model) and
//!   `render.rs` (the bounded reply); `manage.rs` and `manage/`: one function per command.
//! - `session/`: the session layer (§9); `response.rs`: `Outcome` (what a tool returns: face parts,
//!   typed act fields, detail) and its one renderer (the text face, `token_estimate`, the
//!   structured face at each `metadata` level); `work.rs`: the progress-and-cancel handle a caller
//!   passes with a call (`Engine::call_with`); `latency.rs`: each stage's recent durations, for
//!   `manage metrics`; `heap.rs`: the allocator's counts, read through a probe the binary registers;
//!   `config.rs`: loading and layering the configuration; `suggest.rs`: "did you mean";
//!   `reasons.rs`: the reason-code enum in its fixed order and the registry (`reason_registry.json`),
//!   below both the session layer and the renderer.
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
pub use response::{Location, MetadataLevel, Response};
pub use session::CallContext;
pub use work::{Progress, Work};
pub use workspace::{OpenError, default_index_dir};
