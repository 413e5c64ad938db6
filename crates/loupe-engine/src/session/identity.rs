//! Session identity (§9.1): which session a call belongs to.
//!
//! The key is `ws:<workspace_hash>:sid:<session_id>` when the call names a session, else
//! `ws:<workspace_hash>:conn:<connection_id>`, where the connection id is issued by the
//! server for each connection. A connection id a client sends is telemetry only: it is
//! logged with analytics and never part of a key.

use loupe_core::path::{UserPath, parse_user_path};
use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use serde_json::{Map, Value};

/// Who is calling: the server-issued connection id (one per MCP connection: per stdio
/// process, per `Mcp-Session-Id` over HTTP), and what the client said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    pub connection_id: String,
    /// A connection id the client sent (telemetry only; never used for policy).
    pub client_connection_id: Option<String>,
}

impl CallContext {
    pub fn new(connection_id: impl Into<String>) -> CallContext {
        CallContext { connection_id: connection_id.into(), client_connection_id: None }
    }

    /// The connection of an in-process caller (`Engine::call`): the CLI and tests.
    pub fn local() -> CallContext {
        CallContext::new("local")
    }
}

/// The session key for a call.
pub(crate) fn session_key(workspace_hash: &str, session_id: Option<&str>, context: &CallContext) -> String {
    match session_id {
        Some(id) => format!("ws:{workspace_hash}:sid:{id}"),
        None => format!("ws:{workspace_hash}:conn:{}", context.connection_id),
    }
}

/// The `session_id` argument, when it is a non-empty string.
pub(crate) fn session_id(given: Option<&str>) -> Option<&str> {
    given.map(str::trim).filter(|id| !id.is_empty())
}

/// `strict_session_id`: the refusal of a call without `session_id`, with the same call
/// carrying one as its next call.
pub(crate) fn session_id_required(tool: &str, arguments: &Map<String, Value>) -> ToolError {
    let mut retry = arguments.clone();
    retry.insert("session_id".into(), Value::from("main"));
    ToolError::new(
        ErrorCode::SessionIdRequired,
        format!("this server requires `session_id` on every `{tool}` call (strict_session_id)"),
        "add a `session_id` that stays the same for the whole task, e.g. \"main\"",
    )
    .with_next_call(NextCall { tool: tool.to_owned(), arguments: retry })
}

/// A caller's path as a root-relative path, lexically (no file system access): relative
/// spellings are normalised, absolute ones inside `root` are made relative.
pub(crate) fn normalize_lexically(root: &str, path: &str) -> Option<String> {
    let relative = match parse_user_path(path) {
        UserPath::Relative(relative) => relative,
        UserPath::Absolute(absolute) => {
            let rest = absolute.strip_prefix(root)?;
            if !rest.is_empty() && !rest.starts_with('/') {
                return None;
            }
            rest.trim_start_matches('/').to_owned()
        }
    };
    RepoPath::normalize(&relative).map(|path| path.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_prefer_the_session_id_and_never_use_the_client_connection_id() {
        let mut context = CallContext::new("7f3e");
        context.client_connection_id = Some("client-says".into());
        assert_eq!(session_key("83630750896a", Some("s1"), &context), "ws:83630750896a:sid:s1");
        assert_eq!(session_key("83630750896a", None, &context), "ws:83630750896a:conn:7f3e");
    }

    #[test]
    fn paths_are_normalised_lexically() {
        assert_eq!(normalize_lexically("/repo", "./src//a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(normalize_lexically("/repo", "src\\a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(normalize_lexically("/repo", "/repo/src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(normalize_lexically("/repo", "file:///repo/src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(normalize_lexically("/repo", "/repository/a.rs"), None);
    }
}
