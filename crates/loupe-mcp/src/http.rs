//! Streamable HTTP (§11): `loupe serve --http ADDR:PORT`, on rmcp's Streamable HTTP service.
//!
//! One engine and one root serve every HTTP session; each `Mcp-Session-Id` is a connection for
//! the session layer (§9.1), as one stdio process is. A 2026-07-28 request has no
//! `Mcp-Session-Id` (rmcp serves it statelessly, on a fresh `for_new_connection`); its session
//! is derived in `server.rs` from the token and its `clientInfo`. Loopback by default: a bind to any other
//! address refuses to start without `LOUPE_TOKEN`, and with a token every request needs
//! `Authorization: Bearer TOKEN`. `Host` and `Origin` are checked against DNS rebinding: loopback
//! names, the bind address and the names given with `--allow-host`. SIGTERM or SIGINT stops
//! taking requests, ends the sessions, and lets a running first index build persist.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::LoupeServer;

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
}

impl HttpOptions {
    /// Refuses what must not start: a bind beyond loopback without a token.
    pub fn check(&self) -> Result<(), String> {
        if !self.addr.ip().is_loopback() && self.token.as_deref().is_none_or(str::is_empty) {
            return Err(format!(
                "refusing to serve {} beyond loopback without a token: set LOUPE_TOKEN (clients then send \
                 `Authorization: Bearer $LOUPE_TOKEN`), or bind 127.0.0.1",
                self.addr
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
pub async fn serve_http(server: LoupeServer, options: HttpOptions) -> Result<(), String> {
    options.check()?;
    let stop = crate::server::termination();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_hosts(options.hosts())
        .with_allowed_origins(options.origins());
    let base = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(base.for_new_connection()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token = options.token.clone().filter(|token| !token.is_empty()).map(Arc::new);
    let router = axum::Router::new().nest_service(HTTP_PATH, service).layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let token = token.clone();
            async move { bearer(token.as_deref().map(String::as_str), request, next).await }
        },
    ));
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|error| format!("cannot listen on {}: {error}", options.addr))?;
    let local = listener.local_addr().map_err(|error| format!("cannot read the bound address: {error}"))?;
    // The one line a launcher or a test reads to find the endpoint (port 0 picks a free one).
    eprintln!("loupe: serving MCP at http://{local}{HTTP_PATH}");
    let stopping = stop.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stopping.cancelled().await })
        .await
        .map_err(|error| format!("the HTTP server failed: {error}"))?;
    server.wind_down(&stop).await;
    Ok(())
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
        HttpOptions { addr: addr.parse().unwrap(), token: token.map(str::to_owned), allowed_hosts: Vec::new() }
    }

    #[test]
    fn a_bind_beyond_loopback_needs_a_token() {
        assert!(options("127.0.0.1:8765", None).check().is_ok());
        assert!(options("[::1]:8765", None).check().is_ok());
        let refused = options("0.0.0.0:8765", None).check().unwrap_err();
        assert!(refused.contains("LOUPE_TOKEN"), "{refused}");
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
