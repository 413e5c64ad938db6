//! Relationships between files and symbols, computed from the per-file facts of
//! `loupe-syntax`: import resolution to workspace files, the import graph (dependencies and
//! impact), call resolution with confidence, the type hierarchy and data flow.
//!
//! This crate does no IO: callers hand it paths, facts and the text of the few configuration
//! files resolution needs (`Cargo.toml`, `tsconfig.json`, `package.json`, `go.mod`).
//!
//! Where things are: `resolve.rs` with `resolve/` (per-language import rules over a `Layout` of the
//! file list), `imports.rs` (the import graph, forward and reverse, breadth-first walks bounded by
//! depth and node count, nearest first), `types.rs` (the type hierarchy by simple name, both ways)
//! and `calls.rs` (call and reference resolution). A resolved call has a `Confidence`: `exact` (the
//! file itself, an import naming it with aliases and one re-export hop followed, a module
//! qualifier, the enclosing type for `self`/`this`), `scoped` (a glob, module or include import,
//! the package, an inherited method, a receiver named after its type, the one non-static C
//! definition behind a header prototype) or `name_only` (at most 5 name matches). Constructors
//! (`__init__`, `constructor`, `super(…)`) resolve to their type. Symbols, imports and packages are
//! asked through the `Workspace` trait the caller implements.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod calls;
pub mod imports;
mod resolve;
pub mod types;

pub use calls::{Confidence, ResolvedImports, SymbolRef, Workspace, local_names, reference_confidence, resolve_call};
pub use imports::{ImportGraph, Step, Walk};
pub use resolve::{Layout, Resolved};
pub use types::{RelationAt, TypeGraph};
