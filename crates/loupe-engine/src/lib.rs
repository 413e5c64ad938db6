//! The API boundary: typed tool calls in, budgeted two-faced responses out.
//!
//! `Engine::call(tool, arguments)` is the one entry point every adapter uses (MCP, CLI).
//! The engine is synchronous; async stops at the MCP layer, which calls it through
//! `spawn_blocking`. It owns argument validation, budgets and rendering; it reads the
//! repository only through `loupe-vfs`.

mod args;
pub mod config;
mod cursor;
mod read;
mod response;
mod suggest;

use std::path::Path;

use loupe_core::{Config, ErrorCode, ToolError};
use loupe_vfs::{Exclusions, Root};
use serde_json::Value;

pub use response::{Location, MetadataLevel, Response};

/// The tools this build serves, in the order `tools/list` shows them.
pub const TOOLS: &[&str] = &["read"];

/// loupe's engine for one workspace root.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    root: Root,
}

impl Engine {
    /// Opens the engine on `config.root` (which `config::load` always sets).
    pub fn new(config: Config) -> Result<Engine, String> {
        let root_path = match &config.root {
            Some(root) => root.clone(),
            None => {
                std::env::current_dir().map_err(|error| format!("cannot determine the current directory: {error}"))?
            }
        };
        let exclusions = Exclusions::new(&config.exclude, &config.allow)
            .map_err(|error| format!("configuration key `exclude`/`allow`: {error}"))?;
        let root = Root::open(&root_path, exclusions)
            .map_err(|error| format!("cannot open workspace root `{}`: {error}", root_path.display()))?;
        Ok(Engine { config, root })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn root(&self) -> &Root {
        &self.root
    }

    /// The canonical workspace root.
    pub fn root_path(&self) -> &Path {
        self.root.canonical()
    }

    /// Runs one tool call. Never panics on bad input: every failure is a `Response` with
    /// `ok = false` and a typed error.
    pub fn call(&self, tool: &str, arguments: Value) -> Response {
        match tool {
            "read" => read::run(self, arguments),
            other => Response::failure(
                "unknown",
                None,
                None,
                ToolError::new(
                    ErrorCode::InvalidArgs,
                    format!("unknown tool `{other}`"),
                    format!("available tools: {}", TOOLS.join(", ")),
                ),
            ),
        }
    }
}
