//! The MCP surface (rmcp): schemas, annotations, transports; the only crate that knows MCP.
//!
//! `serve_stdio` runs a `LoupeServer` (the rmcp handler over the engine) on the guarded
//! stdio transport, `serve_http` on rmcp's Streamable HTTP service (`http.rs`: one engine for
//! every HTTP session, bearer token; `http/`: strict Host/Origin checks, the connection cap and
//! timeouts, the session cap). Nothing here trims or rewrites what the engine rendered.
//!
//! Where things are: `server.rs` (`LoupeServer`: the handler, the root, the connection's UUID,
//! `Response` → `CallToolResult`; legacy names (§12) are passed to the engine, which translates
//! them), `tools.rs` (schemas and annotations from the parameter table, the legacy names from
//! the engine's legacy table when `legacy_tools = "listed"`) and
//! `transport.rs` (the guarded stdio transport), `logging.rs` (the `tracing` layer that sends
//! loupe's log events to the clients that asked, by `logging/setLevel`, as
//! `notifications/message`). Protocol revisions 2024-11-05, 2025-03-26, 2025-06-18 and
//! 2025-11-25 are negotiated over `initialize` (a newer offer there is answered with
//! 2025-11-25); 2026-07-28 is served beside them, with `server/discover` and per-request `_meta`
//! (stateless over HTTP: its sessions are keyed as §9.1 says, in `server.rs`).

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod http;
mod logging;
mod message_size;
mod prompts;
mod server;
mod tools;
pub mod transport;

pub use http::{HTTP_PATH, HttpLimits, HttpOptions, serve_http, serve_http_on};
pub use logging::client_log_layer;
pub use server::{
    LoupeServer, NEWEST_INLINE_PROTOCOL, NEWEST_PROTOCOL, SESSION_META_KEY, ServeError, serve_stdio, served_protocols,
    to_call_tool_result,
};
pub use tools::{tools, tools_for};
