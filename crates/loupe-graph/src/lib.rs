//! Relationships between files and symbols, computed from the per-file facts of
//! `loupe-syntax`: import resolution to workspace files, the import graph (dependencies and
//! impact), call resolution with confidence, the type hierarchy and data flow.
//!
//! This crate does no IO: callers hand it paths, facts and the text of the few configuration
//! files resolution needs (`Cargo.toml`, `tsconfig.json`, `package.json`, `go.mod`).

pub mod calls;
pub mod imports;
mod resolve;
pub mod types;

pub use calls::{Confidence, ResolvedImports, SymbolRef, Workspace, local_names, reference_confidence, resolve_call};
pub use imports::{ImportGraph, Step, Walk};
pub use resolve::{Layout, Resolved};
pub use types::{RelationAt, TypeGraph};
