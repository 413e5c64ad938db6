//! loupe's vocabulary: the plain data every other crate speaks.
//!
//! Owns repository-relative paths, line ranges, content hashes, text decoding, the token
//! counter, the error-code enum, the configuration struct and the in-order work scheduler
//! (`parallel`). It performs no IO: callers hand it bytes and strings. Nothing here knows about MCP, the CLI or the index.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod config;
pub mod error;
pub mod hash;
pub mod parallel;
pub mod path;
pub mod text;
pub mod tokens;

pub use config::Config;
pub use error::{ArgumentRule, ErrorCode, NextCall, ToolError};
pub use hash::ContentHash;
pub use path::RepoPath;
pub use text::{Decoded, Encoding, LineEnding};
