//! Streamable HTTP (§11): `loupe serve --http ADDR:PORT`, on rmcp's Streamable HTTP service.
//!
//! One engine and one root serve every HTTP session; each `Mcp-Session-Id` is a connection for
//! the session layer (§9.1), as one stdio process is. A 2026-07-28 request has no
//! `Mcp-Session-Id` (rmcp serves it statelessly, on a fresh `for_new_connection`); its session
//! is derived in `server.rs` from a per-server secret, the token (or, without one, the TCP
//! connection) and its `clientInfo`. Loopback by default: a bind to any other address refuses
//! to start without `LOUPE_TOKEN`, and with a token every request needs
//! `Authorization: Bearer TOKEN`.
//!
//! Every request passes, in order: the connection layer (`connections.rs`: a cap on
//! connections, a time limit on request heads), the strict `Host`/`Origin` check against DNS
//! rebinding (`authority.rs`), the bearer token, and the body reader (the whole body within
//! `body_timeout` and under `max_body_bytes`, and a refused `initialize` when the sessions are
//! at their cap, `sessions.rs`); then rmcp. SIGTERM or SIGINT stops taking requests, ends the
//! sessions, and lets a running first index build persist.

mod authority;
mod connections;
mod sessions;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::server::{LoupeServer, ServeError};
use authority::AllowedHosts;
pub(crate) use connections::ConnectionTag;
use connections::{Busy, ConnectionLimits, serve_connections};
use sessions::{BoundedSessions, FULL_HINT};

/// The path the MCP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// How `loupe serve --http` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// `LOUPE_TOKEN`: required on every request when set; required to bind beyond loopback.
    pub token: Option<String>,
    /// Host names (beside loopback and the bind address) a request may name in `Host`/`Origin`.
    pub allowed_hosts: Vec<String>,
    /// What one server holds at most, and for how long (§11).
    pub limits: HttpLimits,
}

/// The bounds that keep a server answering under a flood of handshakes or of idle connections
/// (§11, SECURITY.md).
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// Live `Mcp-Session-Id` sessions; an `initialize` beyond them is refused (503).
    pub max_sessions: usize,
    /// A session nothing was sent to for this long is ended.
    pub session_idle: Duration,
    /// Open TCP connections; at the cap a new one replaces the one idle the longest.
    pub max_connections: usize,
    /// A request head (and the wait for the next one on a kept-alive connection) must arrive
    /// within this; else the connection is closed.
    pub header_timeout: Duration,
    /// A request body must arrive whole within this (408 otherwise).
    pub body_timeout: Duration,
    /// The largest request body read (413 beyond it): an `edit` of 8 MiB of text, escaped.
    pub max_body_bytes: usize,
    /// Request bodies being read or handed on, all connections together: a request whose body
    /// does not fit beside the others is answered 503 at once.
    pub max_body_bytes_in_flight: usize,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            max_sessions: 256,
            session_idle: Duration::from_secs(30 * 60),
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 32 << 20,
            max_body_bytes_in_flight: 256 << 20,
        }
    }
}

impl HttpOptions {
    /// Refuses what must not start: a bind beyond loopback without a token, a cap of zero.
    pub fn check(&self) -> Result<(), ServeError> {
        if !self.addr.ip().is_loopback() && self.token.as_deref().is_none_or(str::is_empty) {
            return Err(ServeError::Options(format!(
                "refusing to serve {} beyond loopback without a token: set LOUPE_TOKEN (clients then send \
                 `Authorization: Bearer $LOUPE_TOKEN`), or bind 127.0.0.1",
                self.addr
            )));
        }
        if self.limits.max_sessions == 0 || self.limits.max_connections == 0 || self.limits.session_idle.is_zero() {
            return Err(ServeError::Options(
                "--http-max-sessions, --http-max-connections and --http-session-idle must be at least 1".to_owned(),
            ));
        }
        if self.limits.max_body_bytes > self.limits.max_body_bytes_in_flight
            || self.limits.max_body_bytes_in_flight >> 10 > tokio::sync::Semaphore::MAX_PERMITS
        {
            return Err(ServeError::Options(
                "the request body limits are inconsistent: one body may not exceed the bodies in flight".to_owned(),
            ));
        }
        Ok(())
    }

    /// The `Host` names accepted: loopback, the bind address, and the names given.
    fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].iter().map(|host| (*host).to_owned()).collect();
        let ip = self.addr.ip();
        if !ip.is_unspecified() {
            hosts.push(ip.to_string());
        }
        hosts.extend(self.allowed_hosts.iter().cloned());
        hosts.sort();
        hosts.dedup();
        hosts
    }

    /// The browser origins accepted: the same hosts, on any port, over http or https.
    fn origins(&self) -> Vec<String> {
        self.hosts()
            .iter()
            .flat_map(|host| {
                let host = if host.contains(':') { format!("[{host}]") } else { host.clone() };
                [format!("http://{host}:*"), format!("https://{host}:*")]
            })
            .collect()
    }
}

/// Serves MCP over Streamable HTTP until SIGTERM or SIGINT.
pub async fn serve_http(server: LoupeServer, options: HttpOptions) -> Result<(), ServeError> {
    options.check()?;
    let stop = crate::server::termination();
    let listen = |source| ServeError::Listen { addr: options.addr, source };
    let listener = tokio::net::TcpListener::bind(options.addr).await.map_err(listen)?;
    let local = listener.local_addr().map_err(listen)?;
    // The one line a launcher or a test reads to find the endpoint (port 0 picks a free one).
    eprintln!("loupe: serving MCP at http://{local}{HTTP_PATH}");
    serve_http_on(listener, server, options, stop).await
}

/// Serves MCP over Streamable HTTP on `listener` until `stop` is cancelled, then winds the
/// server down (`serve_http` with the listener and the stop signal chosen by the caller).
pub async fn serve_http_on(
    listener: tokio::net::TcpListener,
    server: LoupeServer,
    options: HttpOptions,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    options.check()?;
    let limits = options.limits;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_hosts(options.hosts())
        .with_allowed_origins(options.origins());
    let sessions = Arc::new(BoundedSessions::new(limits.max_sessions, limits.session_idle));
    let budget = Arc::new(tokio::sync::Semaphore::new(limits.max_body_bytes_in_flight >> 10));
    let base = server.clone();
    let service = StreamableHttpService::new(move || Ok(base.for_new_connection()), Arc::clone(&sessions), config);
    let token = options.token.clone().filter(|token| !token.is_empty()).map(Arc::new);
    let allowed = Arc::new(AllowedHosts::new(options.hosts()));
    // Layers run outermost last-added first: Host/Origin, then the token, then the body.
    let router = axum::Router::new()
        .nest_service(HTTP_PATH, service)
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            let (sessions, budget) = (Arc::clone(&sessions), Arc::clone(&budget));
            async move { whole_body(limits, &budget, &sessions, request, next).await }
        }))
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            let token = token.clone();
            async move { bearer(token.as_deref().map(String::as_str), request, next).await }
        }))
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            let allowed = Arc::clone(&allowed);
            async move {
                match allowed.check(request.uri(), request.headers()) {
                    Ok(()) => next.run(request).await,
                    Err(refusal) => (StatusCode::FORBIDDEN, refusal).into_response(),
                }
            }
        }));
    let connection_limits =
        ConnectionLimits { max_connections: limits.max_connections, header_timeout: limits.header_timeout };
    serve_connections(listener, router, connection_limits, stop.clone()).await;
    server.wind_down(&stop).await;
    Ok(())
}

/// Reads the request body whole (within `body_timeout`, at most `max_body_bytes`, and when it
/// fits in `budget`, the KiB of bodies in flight) before anything else looks at it; refuses an
/// `initialize` when the sessions are at their cap; and marks the connection busy until the
/// response has been sent.
async fn whole_body(
    limits: HttpLimits,
    budget: &tokio::sync::Semaphore,
    sessions: &BoundedSessions,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let too_large = || {
        let message = format!(
            "the request body is over {} MiB, the most loupe reads; send a smaller call (an edit's text in parts)\n",
            limits.max_body_bytes >> 20
        );
        (StatusCode::PAYLOAD_TOO_LARGE, message).into_response()
    };
    if declared.is_some_and(|length| length > limits.max_body_bytes as u64) {
        return too_large();
    }
    // A body of unknown length is counted at the most it may be.
    let kib = declared.unwrap_or(limits.max_body_bytes as u64).div_ceil(1024).max(1) as u32;
    let Ok(_permit) = budget.try_acquire_many(kib) else {
        let message = format!(
            "loupe is reading {} MiB of request bodies at once, the most it holds; retry in a moment\n",
            limits.max_body_bytes_in_flight >> 20
        );
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    let bytes = match tokio::time::timeout(limits.body_timeout, axum::body::to_bytes(body, limits.max_body_bytes)).await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) if declared.is_none() => return too_large(),
        Ok(Err(error)) => {
            let message = format!("the request body could not be read whole ({error}); send it again\n");
            return (StatusCode::BAD_REQUEST, message).into_response();
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s; send the whole request at once\n",
                limits.body_timeout.as_secs_f64()
            );
            return (StatusCode::REQUEST_TIMEOUT, message).into_response();
        }
    };
    if crate::message_size::holds_more_values_than(&bytes, crate::message_size::MAX_JSON_VALUES) {
        let id = crate::message_size::request_id(&bytes).unwrap_or(Value::Null);
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32600,
            "message": crate::message_size::too_many_values_message(),
        }});
        let mut response = (StatusCode::BAD_REQUEST, error.to_string()).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return response;
    }
    if parts.method == Method::POST
        && !parts.headers.contains_key("mcp-session-id")
        && sessions.is_full()
        && let Some(id) = initialize_id(&bytes)
    {
        tracing::warn!(sessions = sessions.len(), "refused a new HTTP session: at the cap");
        return sessions_full(id, sessions);
    }
    let busy = parts.extensions.get::<ConnectionTag>().map(ConnectionTag::busy);
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    match busy {
        Some(busy) => response.map(|body| Body::new(Guarded { body, _busy: busy })),
        None => response,
    }
}

/// The id of an `initialize` request, if `body` is one.
fn initialize_id(body: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Peek {
        method: Option<String>,
        id: Option<Value>,
    }
    let peek: Peek = serde_json::from_slice(body).ok()?;
    (peek.method.as_deref() == Some("initialize")).then(|| peek.id.unwrap_or(Value::Null))
}

/// The answer to an `initialize` beyond the session cap: 503 with a JSON-RPC error that says
/// what to do.
fn sessions_full(id: Value, sessions: &BoundedSessions) -> Response {
    let message = sessions.full_message();
    let error = json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32000,
        "message": format!("{message}; {FULL_HINT}"),
        "data": {"reason": "SESSIONS_FULL", "hint": FULL_HINT},
    }});
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    response
}

/// A response body that keeps its connection busy until it is dropped (sent or abandoned).
struct Guarded {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// With a token set, a request without `Authorization: Bearer TOKEN` is refused (401).
async fn bearer(token: Option<&str>, request: Request, next: Next) -> Response {
    let deleting = request.method() == Method::DELETE;
    let Some(token) = token else { return settled(deleting, next.run(request).await) };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    // Compared by hash, so the time taken says nothing about how much of the token matched.
    if given.is_some_and(|given| blake3::hash(given.as_bytes()) == blake3::hash(token.as_bytes())) {
        return settled(deleting, next.run(request).await);
    }
    let mut response = (StatusCode::UNAUTHORIZED, "missing or wrong bearer token (LOUPE_TOKEN)\n").into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// A session closed by `DELETE` is answered 204, not rmcp's 202: the Python SDK takes any other
/// status as a failed termination and says so on every close. (A notification's 202 stays.)
fn settled(deleting: bool, mut response: Response) -> Response {
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(addr: &str, token: Option<&str>) -> HttpOptions {
        HttpOptions {
            addr: addr.parse().unwrap(),
            token: token.map(str::to_owned),
            allowed_hosts: Vec::new(),
            limits: HttpLimits::default(),
        }
    }

    #[test]
    fn a_bind_beyond_loopback_needs_a_token() {
        assert!(options("127.0.0.1:8765", None).check().is_ok());
        assert!(options("[::1]:8765", None).check().is_ok());
        let refused = options("0.0.0.0:8765", None).check().unwrap_err();
        assert!(matches!(&refused, ServeError::Options(reason) if reason.contains("LOUPE_TOKEN")), "{refused}");
        assert!(options("192.168.1.5:8765", Some("")).check().is_err());
        assert!(options("0.0.0.0:8765", Some("s3cret")).check().is_ok());
    }

    #[test]
    fn hosts_are_loopback_the_bind_address_and_the_names_given() {
        let mut given = options("192.168.1.5:8765", Some("t"));
        given.allowed_hosts = vec!["dev.example.com".into()];
        let hosts = given.hosts();
        for host in ["localhost", "127.0.0.1", "::1", "192.168.1.5", "dev.example.com"] {
            assert!(hosts.iter().any(|known| known == host), "{host} in {hosts:?}");
        }
        assert!(!options("0.0.0.0:1", Some("t")).hosts().iter().any(|host| host == "0.0.0.0"));
        assert!(given.origins().contains(&"http://[::1]:*".to_owned()));
    }
}
