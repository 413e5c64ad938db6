//! H5, `serve_http` under abuse, through the real code: `serve_http_on` in process on a
//! loopback port, with small limits, spoken to in raw HTTP/1.1 over `std::net::TcpStream` as
//! another program on the machine would. A flood of handshakes meets the session cap, an idle
//! session ends, slow heads and bodies are timed out, idle connections at the connection cap
//! give way to a real client, the stateless 2026-07-28 key cannot be reproduced from another
//! connection without a token, and malformed `Host`/`Origin` headers are refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use loupe_engine::config::Sources;
use loupe_mcp::{HttpLimits, HttpOptions, LoupeServer, serve_http_on};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// One in-process server on `127.0.0.1:0`.
struct Served {
    port: u16,
    stop: CancellationToken,
    runtime: Option<tokio::runtime::Runtime>,
    _root: tempfile::TempDir,
    _index: tempfile::TempDir,
}

impl Served {
    fn start(limits: HttpLimits, token: Option<&str>) -> Served {
        let root = tempfile::tempdir().unwrap();
        let index = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("src")).unwrap();
        std::fs::write(
            root.path().join("src/lib.rs"),
            "pub fn parse_config(text: &str) -> usize {\n    text.len()\n}\n",
        )
        .unwrap();
        let sources = Sources {
            flags: vec![
                ("root".into(), Value::from(root.path().to_str().unwrap())),
                ("index_dir".into(), Value::from(index.path().to_str().unwrap())),
            ],
            env: Vec::new(),
            client_roots: Vec::new(),
            current_dir: root.path().to_path_buf(),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let options = HttpOptions {
            addr: listener.local_addr().unwrap(),
            token: token.map(str::to_owned),
            allowed_hosts: Vec::new(),
            limits,
        };
        let stop = CancellationToken::new();
        runtime.spawn(serve_http_on(listener, LoupeServer::new(sources), options, stop.clone()));
        Served { port, stop, runtime: Some(runtime), _root: root, _index: index }
    }

    fn connect(&self) -> Client {
        Client::open(self.port)
    }

    /// A handshake on a fresh connection: the session id, or the refusal.
    fn handshake(&self) -> Result<String, Answer> {
        let mut client = self.connect();
        let answer = client.post(&[], &initialize());
        let Some(id) = answer.header("mcp-session-id").map(str::to_owned) else { return Err(answer) };
        let initialized =
            client.post(&[("Mcp-Session-Id", &id)], &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(initialized.status, 202, "{}", initialized.body);
        Ok(id)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// A small limit set for tests: everything as shipped unless a test says otherwise.
fn limits() -> HttpLimits {
    HttpLimits::default()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "1"}}})
}

/// One answer: the status, the headers (lower-cased names) and the body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(known, _)| known == name).map(|(_, value)| value.as_str())
    }

    /// The JSON-RPC message in the body (an SSE `data:` line or plain JSON).
    fn message(&self) -> Value {
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .or_else(|| serde_json::from_str(&self.body).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {:?}", self.body))
    }
}

/// A keep-alive HTTP/1.1 connection.
struct Client {
    reader: BufReader<TcpStream>,
    port: u16,
}

impl Client {
    fn open(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Client { reader: BufReader::new(stream), port }
    }

    fn post(&mut self, headers: &[(&str, &str)], body: &Value) -> Answer {
        let body = body.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        self.send(request.as_bytes());
        self.answer()
    }

    fn send(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).unwrap();
    }

    fn answer(&mut self) -> Answer {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).and_then(|status| status.parse().ok()).unwrap_or(0);
        let mut headers = Vec::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line).unwrap() == 0 {
                break;
            }
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            headers.push((name.trim().to_lowercase(), value.trim().to_owned()));
        }
        let header = |name: &str| headers.iter().find(|(known, _)| known == name).map(|(_, value)| value.clone());
        let mut body = Vec::new();
        if status == 204 || status == 304 {
            // No body, whatever the headers say.
        } else if let Some(length) = header("content-length").and_then(|length| length.parse::<usize>().ok()) {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).unwrap();
        } else if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let _ = self.reader.read_to_end(&mut body);
        }
        Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() }
    }

    /// Whether the server closed the connection within `within` (a read returns end of file, or
    /// an answer it sent before closing, then end of file).
    fn closed_within(&mut self, within: Duration) -> bool {
        self.reader.get_mut().set_read_timeout(Some(within)).unwrap();
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => true,
            Err(error) => error.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

fn tools_list(served: &Served, session: &str) -> Answer {
    served.connect().post(&[("Mcp-Session-Id", session)], &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
}

#[test]
fn h5_sessions_beyond_the_cap_are_refused_with_a_clear_error() {
    let served = Served::start(HttpLimits { max_sessions: 3, ..limits() }, None);
    let sessions: Vec<String> = (0..3).map(|_| served.handshake().expect("under the cap")).collect();
    let refused = served.handshake().expect_err("a fourth session is over the cap");
    assert_eq!(refused.status, 503, "{refused:?}");
    let error = &refused.message()["error"];
    assert_eq!(error["data"]["reason"], "SESSIONS_FULL", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("3 HTTP sessions") && message.contains("DELETE") && message.contains("--http-max-sessions"),
        "{message}"
    );
    // The sessions held keep working, and closing one makes room.
    assert_eq!(tools_list(&served, &sessions[0]).status, 200);
    let mut client = served.connect();
    let deleted = {
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMcp-Session-Id: {}\r\nContent-Length: 0\r\n\r\n",
            served.port, sessions[1]
        );
        client.send(request.as_bytes());
        client.answer()
    };
    assert_eq!(deleted.status, 204, "{deleted:?}");
    served.handshake().expect("a closed session's place is free");
}

#[test]
fn h5_a_session_idle_past_its_time_is_ended_and_its_place_freed() {
    let served =
        Served::start(HttpLimits { max_sessions: 1, session_idle: Duration::from_millis(300), ..limits() }, None);
    let session = served.handshake().unwrap();
    assert_eq!(tools_list(&served, &session).status, 200);
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(tools_list(&served, &session).status, 404, "the idle session is gone");
    served.handshake().expect("its place is free");
}

#[test]
fn h5_a_slow_header_is_timed_out() {
    let served = Served::start(HttpLimits { header_timeout: Duration::from_millis(300), ..limits() }, None);
    let mut slow = served.connect();
    slow.send(format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", served.port).as_bytes());
    let started = Instant::now();
    assert!(slow.closed_within(Duration::from_secs(5)), "the half-sent head is still held after 5 s");
    assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());
    // Saying nothing at all is timed out the same way.
    let mut silent = served.connect();
    assert!(silent.closed_within(Duration::from_secs(5)));
    served.handshake().expect("a real client is served");
}

#[test]
fn h5_a_slow_body_is_timed_out() {
    let served = Served::start(HttpLimits { body_timeout: Duration::from_millis(300), ..limits() }, None);
    let mut slow = served.connect();
    slow.send(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
            served.port
        )
        .as_bytes(),
    );
    let started = Instant::now();
    let answer = slow.answer();
    assert_eq!(answer.status, 408, "{answer:?}");
    assert!(answer.body.contains("did not arrive within"), "{}", answer.body);
    assert!(started.elapsed() < Duration::from_secs(3), "answered after {:?}", started.elapsed());
}

#[test]
fn h5_a_body_over_the_limit_is_refused_before_it_is_read() {
    let served = Served::start(HttpLimits { max_body_bytes: 1024, ..limits() }, None);
    let mut client = served.connect();
    let answer =
        client.post(&[], &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(2000)}}));
    assert_eq!(answer.status, 413, "{answer:?}");
}

/// H7: a body of more JSON values than any call needs is refused by its id before it is parsed.
#[test]
fn h7_a_body_of_too_many_values_is_refused_before_it_is_parsed() {
    let served = Served::start(limits(), None);
    let mut client = served.connect();
    let edits: Vec<Value> = (0..100_000).map(|n| json!({"path": format!("f{n}"), "operation": "delete"})).collect();
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "edit", "arguments": {"edits": edits}}});
    let answer = client.post(&[], &call);
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(answer.body.contains("JSON values") && answer.body.contains("\"id\":9"), "{}", answer.body);
}

#[test]
fn h5_bodies_in_flight_are_bounded_in_total() {
    let limits = HttpLimits { max_body_bytes: 1024, max_body_bytes_in_flight: 2048, ..limits() };
    let served = Served::start(limits, None);
    // Two slow bodies of 1,000 bytes each take the whole budget while they trickle in.
    let slow: Vec<Client> = (0..2)
        .map(|_| {
            let mut client = served.connect();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
                served.port
            );
            client.send(head.as_bytes());
            client
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let refused = served.connect().post(&[], &initialize());
    assert_eq!(refused.status, 503, "no room for a third body: {refused:?}");
    assert!(refused.body.contains("request bodies at once"), "{}", refused.body);
    drop(slow);
    std::thread::sleep(Duration::from_millis(200));
    served.handshake().expect("the budget is free again");
}

#[test]
fn h5_idle_connections_at_the_cap_do_not_starve_a_real_client() {
    // The head timeout alone would take a minute: the cap is what lets the client in.
    let served =
        Served::start(HttpLimits { max_connections: 8, header_timeout: Duration::from_secs(60), ..limits() }, None);
    let idle: Vec<Client> = (0..40)
        .map(|_| {
            let mut client = served.connect();
            client.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            client
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    served.handshake().expect("the real client is served");
    assert!(started.elapsed() < Duration::from_secs(5), "served after {:?}", started.elapsed());
    let mut idle = idle;
    let closed =
        idle.iter_mut().map(|client| client.closed_within(Duration::from_millis(100))).filter(|closed| *closed).count();
    assert!(closed >= 33, "at most 8 connections are held: {closed} of 40 idle ones closed");
}

/// A 2026-07-28 `manage status` from `client` on `connection`; the session stated.
fn stateless_session(connection: &mut Client, client: &str, arguments: Value, token: Option<&str>) -> String {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers =
        vec![("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "manage")];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "manage", "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "2.0"}}}});
    let answer = connection.post(&headers, &request);
    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.message();
    message["result"]["_meta"]["loupe/session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session stated: {message}"))
        .to_owned()
}

#[test]
fn h5_the_stateless_key_of_one_client_info_differs_across_connections_without_token() {
    let served = Served::start(limits(), None);
    let status = json!({"command": "status"});
    let mut mine = served.connect();
    let first = stateless_session(&mut mine, "claude-code", status.clone(), None);
    assert_eq!(stateless_session(&mut mine, "claude-code", status.clone(), None), first, "one connection, one session");
    assert!(first.len() >= "client-".len() + 32, "{first}");
    // Another program naming the same client lands elsewhere, on its own connection.
    let mut theirs = served.connect();
    let other = stateless_session(&mut theirs, "claude-code", status, None);
    assert_ne!(other, first, "another connection computed the session of the first");
    // The client itself keeps its session on a new connection by sending the stated id back.
    let kept = stateless_session(
        &mut served.connect(),
        "claude-code",
        json!({"command": "status", "session_id": first}),
        None,
    );
    assert_eq!(kept, first);
}

#[test]
fn h5_the_stateless_key_with_a_token_is_the_token_holders_and_this_servers() {
    let served = Served::start(limits(), Some("s3cret"));
    let status = json!({"command": "status"});
    let first = stateless_session(&mut served.connect(), "claude-code", status.clone(), Some("s3cret"));
    let second = stateless_session(&mut served.connect(), "claude-code", status.clone(), Some("s3cret"));
    assert_eq!(first, second, "with a token, one client is one session across connections");
    // The key is this server's: a hash another process cannot compute from the token and the
    // client's name alone.
    let elsewhere = Served::start(limits(), Some("s3cret"));
    assert_ne!(stateless_session(&mut elsewhere.connect(), "claude-code", status, Some("s3cret")), first);
}

/// The status of an `initialize` sent with `headers`; asserts a refusal's body explains it.
fn initialize_status(served: &Served, headers: &[(&str, &str)]) -> u16 {
    let answer = served.connect().post(headers, &initialize());
    if answer.status == 403 {
        assert!(answer.body.contains("loupe refused this request"), "{}", answer.body);
        assert!(!answer.body.contains("evil"), "a refusal never echoes the header: {}", answer.body);
    }
    answer.status
}

#[test]
fn h5_host_with_userinfo_is_refused() {
    let served = Served::start(limits(), None);
    let host = format!("evil.com@localhost:{}", served.port);
    assert_eq!(initialize_status(&served, &[("Host", &host)]), 403);
    assert_eq!(initialize_status(&served, &[("Host", &format!("localhost:{}", served.port))]), 200);
}

#[test]
fn h5_two_host_headers_are_refused() {
    let served = Served::start(limits(), None);
    let host = format!("127.0.0.1:{}", served.port);
    assert_eq!(initialize_status(&served, &[("Host", &host), ("Host", &host)]), 403);
    assert_eq!(initialize_status(&served, &[("Host", &host), ("Host", "evil.com")]), 403);
}

#[test]
fn h5_origin_with_an_impossible_port_is_refused() {
    let served = Served::start(limits(), None);
    for origin in
        ["http://localhost:99999", "http://localhost:0", "http://evil.com@localhost:3000", "file://localhost", "null"]
    {
        assert_eq!(initialize_status(&served, &[("Origin", origin)]), 403, "{origin}");
    }
    assert_eq!(initialize_status(&served, &[("Origin", "http://localhost:3000")]), 200);
}
