//! The one integration-test binary of `loupe`: every file beside this one is a module of it,
//! so the crate is linked once and its tests run in one process (ripgrep's `tests/tests.rs`).
//! A module's insta snapshots are named after its path in this binary (`tests__<module>__…`)
//! unless it names its own snapshot directory.

// Tests write their fixtures (clippy.toml forbids writes in production code).
#![allow(clippy::disallowed_methods)]

mod common;

mod analyze_mcp;
mod cli;
mod edit_e2e;
mod install_cli;
mod journal_read_only;
mod launcher;
mod layering;
mod legacy_mcp;
mod mcp_http;
mod mcp_schema;
mod mcp_stdio;
mod protocol_2026;
mod session_mcp;
mod tidy;
