//! The live `Mcp-Session-Id` sessions of `serve_http`, bounded in number and idle time.
//!
//! rmcp's `LocalSessionManager` holds each session (a worker task, its channels, a
//! `LoupeServer` for the connection); `BoundedSessions` wraps it and refuses a new session once
//! `max` are live, so a flood of handshakes costs a bounded amount of memory. A session nobody
//! sends anything to for `idle` is ended by rmcp's keep-alive (its worker quits and closes it
//! here). A full server refuses rather than evicting: a client at work never loses its session
//! to a newcomer, and the refusal says what to do (`FULL_HINT`).

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, ServerSseMessage, SessionId, SessionManager};

/// What a refused client is told to do.
pub(crate) const FULL_HINT: &str = "close sessions you no longer use (HTTP DELETE /mcp with their Mcp-Session-Id), \
wait for idle ones to expire, or restart loupe with a higher --http-max-sessions";

/// `LocalSessionManager` with a cap on live sessions.
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    idle: Duration,
    state: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    ids: HashSet<SessionId>,
    /// Sessions being created: counted against the cap before they exist.
    pending: usize,
}

impl BoundedSessions {
    pub(crate) fn new(max: usize, idle: Duration) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        BoundedSessions { inner, max, idle, state: Mutex::default() }
    }

    /// Whether a new session would be refused now.
    pub(crate) fn is_full(&self) -> bool {
        let live = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        live.ids.len() + live.pending >= self.max
    }

    /// The refusal's sentence.
    pub(crate) fn full_message(&self) -> String {
        format!(
            "loupe holds {} HTTP sessions, the most it keeps (a session idle for {} min ends)",
            self.max,
            self.idle.as_secs() / 60
        )
    }

    /// Live sessions.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).ids.len()
    }
}

/// Why a session operation failed.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The cap was reached: the message and `FULL_HINT`.
    Full(String),
    Local(LocalSessionManagerError),
}

impl fmt::Display for SessionsError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionsError::Full(message) => write!(formatter, "{message}; {FULL_HINT}"),
            SessionsError::Local(error) => error.fmt(formatter),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> SessionsError {
        SessionsError::Local(error)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        {
            let mut live = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if live.ids.len() + live.pending >= self.max {
                return Err(SessionsError::Full(self.full_message()));
            }
            live.pending += 1;
        }
        let created = self.inner.create_session().await;
        let mut live = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        live.pending -= 1;
        let (id, transport) = created?;
        live.ids.insert(id.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.state.lock().unwrap_or_else(PoisonError::into_inner).ids.remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(&self, _id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No session store is configured: an unknown id is unknown (404), never re-created
        // past the cap.
        Ok(RestoreOutcome::NotSupported)
    }
}
