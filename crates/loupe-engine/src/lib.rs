//! The API boundary: typed tool calls in, budgeted two-faced responses out.
//!
//! `Engine::call_in(connection, tool, arguments)` is the one entry point every adapter uses
//! (MCP with its connection id, the CLI through `Engine::call`); `read` and `search` pass
//! through the session layer (`session/`, §9) there. The engine is synchronous; async stops
//! at the MCP layer, which calls it through `spawn_blocking`. It owns argument validation,
//! budgets and rendering; it reads the repository only through `loupe-vfs`.

mod analyze;
mod args;
pub mod config;
mod cursor;
mod diff_preview;
mod dispatch;
mod edit;
mod engine;
mod manage;
pub mod params;
mod read;
mod response;
mod search;
mod session;
mod suggest;
mod symbols;

pub use engine::{Engine, default_index_dir};
/// The index's state as the engine reports it (plain data; adapters need not know the index).
pub use loupe_index::{IndexState, IndexStatus, RefreshStats};
pub use response::{Location, MetadataLevel, Response};
pub use session::CallContext;
