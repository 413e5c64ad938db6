//! The MCP surface (rmcp): schemas, annotations, transports; the only crate that knows MCP.
//!
//! `serve_stdio` runs a `LoupeServer` (the rmcp handler over the engine) on the guarded
//! stdio transport. Nothing here trims or rewrites what the engine rendered.

mod server;
mod tools;
pub mod transport;

pub use server::{LoupeServer, NEWEST_PROTOCOL, serve_stdio, to_call_tool_result};
pub use tools::tools;
