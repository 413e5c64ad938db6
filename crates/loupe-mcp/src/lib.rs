//! The MCP surface (rmcp): schemas, annotations, transports; the only crate that knows MCP.

pub mod transport;
