//! `loupe serve --http` end to end: the release of the real binary on a port of its choosing,
//! spoken to in plain HTTP/1.1 as any Streamable HTTP client would (initialize, the session id,
//! tools/call), two sessions as two connections of one engine, the DNS-rebinding checks, the
//! bearer token, the refusal to bind beyond loopback without one, and a clean stop on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

pub(crate) struct Server {
    child: Child,
    port: u16,
}

impl Server {
    pub(crate) fn start(root: &std::path::Path, index: &std::path::Path, bind: &str, token: Option<&str>) -> Server {
        Server::start_with(root, index, bind, token, &[])
    }

    /// `start` with more environment for the server.
    pub(crate) fn start_with(
        root: &std::path::Path,
        index: &std::path::Path,
        bind: &str,
        token: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        let mut command = Command::new(LOUPE);
        command
            .args(["serve", "--http", bind, "--root", root.to_str().unwrap(), "--index-dir", index.to_str().unwrap()])
            .env_remove("LOUPE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            command.env("LOUPE_TOKEN", token);
        }
        command.envs(env.iter().copied());
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("serving MCP at") {
            line.clear();
        }
        let port = line.rsplit(':').next().unwrap().trim_end_matches("/mcp\n").parse().expect(&line);
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Server { child, port }
    }

    /// One HTTP/1.1 request; the status, the headers (lower-cased names) and the body.
    pub(crate) fn post(&self, headers: &[(&str, &str)], body: &Value) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let body = body.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
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
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let mut lines = head.lines();
        let status = lines.next().unwrap_or_default().split(' ').nth(1).unwrap_or("0").parse().unwrap_or(0);
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_lowercase(), value.trim().to_owned()))
            .collect();
        (status, headers, body.to_owned())
    }

    /// The JSON-RPC answer in a response body (an SSE `data:` line, or plain JSON).
    pub(crate) fn answer(body: &str) -> Value {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .or_else(|| serde_json::from_str(body).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {body:?}"))
    }

    /// A session: initialize, then `notifications/initialized`; its `Mcp-Session-Id`.
    pub(crate) fn session(&self, extra: &[(&str, &str)]) -> String {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "1"}}});
        let (status, headers, body) = self.post(extra, &initialize);
        assert_eq!(status, 200, "{body}");
        assert_eq!(Server::answer(&body)["result"]["protocolVersion"], "2025-11-25", "{body}");
        let id = headers.iter().find(|(name, _)| name == "mcp-session-id").map(|(_, value)| value.clone()).unwrap();
        let mut with_id = extra.to_vec();
        with_id.push(("Mcp-Session-Id", &id));
        let (status, _, body) = self.post(&with_id, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(status, 202, "{body}");
        id
    }

    pub(crate) fn call(&self, session: &str, extra: &[(&str, &str)], id: u64, tool: &str, arguments: Value) -> Value {
        let mut headers = extra.to_vec();
        headers.push(("Mcp-Session-Id", session));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let (status, _, body) = self.post(&headers, &request);
        assert_eq!(status, 200, "{body}");
        Server::answer(&body)["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    std::fs::write(root.path().join("src/lib.rs"), "pub fn parse_config(text: &str) -> usize {\n    text.len()\n}\n")
        .unwrap();
    (root, tempfile::tempdir().unwrap())
}

#[test]
fn http_sessions_are_connections_of_one_engine() {
    let (root, index) = workspace();
    let server = Server::start(root.path(), index.path(), "127.0.0.1:0", None);
    let first = server.session(&[]);
    let second = server.session(&[]);
    assert_ne!(first, second);
    let found = server.call(&first, &[], 2, "search", json!({"query": "parse_config", "type": "symbol"}));
    let hit = &found["structuredContent"]["results"][0];
    assert_eq!(hit[0], "src/lib.rs", "{found}");
    // The hit's id is this session's: it reads here, and the other session never saw it.
    let read = server.call(&first, &[], 3, "read", json!({"candidate_id": hit[2]}));
    assert_eq!(read["isError"], false, "{read}");
    assert!(read["content"][0]["text"].as_str().unwrap().contains("1 pub fn parse_config"), "{read}");
    let elsewhere = server.call(&second, &[], 2, "read", json!({"candidate_id": hit[2]}));
    assert_eq!(elsewhere["isError"], true, "{elsewhere}");
    let status = |session: &str| {
        let answer = server.call(session, &[], 9, "manage", json!({"command": "status"}));
        let text = answer["content"][0]["text"].as_str().unwrap().to_owned();
        text.lines().find(|line| line.starts_with("session ")).unwrap().split(" · ").next().unwrap().to_owned()
    };
    assert_ne!(status(&first), status(&second), "each HTTP session is its own connection");
}

#[test]
fn http_checks_host_origin_and_the_bearer_token() {
    let (root, index) = workspace();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "1"}}});
    let open = Server::start(root.path(), index.path(), "127.0.0.1:0", None);
    let (status, _, _) = open.post(&[("Host", "attacker.example.com")], &initialize);
    assert_eq!(status, 403, "a rebinding Host is refused");
    let (status, _, _) = open.post(&[("Origin", "http://attacker.example.com")], &initialize);
    assert_eq!(status, 403, "a foreign Origin is refused");
    let (status, _, _) = open.post(&[("Origin", "http://localhost:3000")], &initialize);
    assert_eq!(status, 200, "a loopback Origin is served");
    drop(open);

    let guarded = Server::start(root.path(), index.path(), "127.0.0.1:0", Some("s3cret"));
    let (status, headers, _) = guarded.post(&[], &initialize);
    assert_eq!(status, 401);
    assert!(headers.iter().any(|(name, value)| name == "www-authenticate" && value == "Bearer"), "{headers:?}");
    let (status, _, _) = guarded.post(&[("Authorization", "Bearer wrong")], &initialize);
    assert_eq!(status, 401);
    let session = guarded.session(&[("Authorization", "Bearer s3cret")]);
    let answer =
        guarded.call(&session, &[("Authorization", "Bearer s3cret")], 2, "manage", json!({"command": "status"}));
    assert_eq!(answer["isError"], false, "{answer}");
}

#[test]
fn http_beyond_loopback_needs_a_token_and_sigterm_stops_the_server() {
    let (root, index) = workspace();
    let refused = Command::new(LOUPE)
        .args(["serve", "--http", "0.0.0.0:0", "--root", root.path().to_str().unwrap()])
        .env_remove("LOUPE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("LOUPE_TOKEN"));

    let mut server = Server::start(root.path(), index.path(), "127.0.0.1:0", None);
    server.session(&[]);
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    for _ in 0..100 {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server did not stop within 10 s of SIGTERM");
}

/// A session's standalone SSE stream (`GET /mcp`): its `data:` messages, as they arrive.
fn listen(port: u16, session: &str) -> std::sync::mpsc::Receiver<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            let Some(data) = line.strip_prefix("data:") else { continue };
            if let Ok(message) = serde_json::from_str::<Value>(data.trim())
                && sender.send(message).is_err()
            {
                return;
            }
        }
    });
    receiver
}

/// §11 over Streamable HTTP: each session chooses its own level with `logging/setLevel`; log
/// messages reach the sessions that asked at that level (on their SSE stream) and no other, and a
/// call with a progress token gets its progress in its own response stream.
#[test]
fn http_sessions_get_log_messages_at_their_own_level_and_progress_with_their_calls() {
    let (root, index) = workspace();
    let server = Server::start(root.path(), index.path(), "127.0.0.1:0", None);
    let (debug, quiet) = (server.session(&[]), server.session(&[]));
    for (session, level) in [(&debug, "debug"), (&quiet, "error")] {
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": level}});
        let (status, _, body) = server.post(&[("Mcp-Session-Id", session)], &request);
        assert_eq!((status, Server::answer(&body)["result"].clone()), (200, json!({})), "{body}");
    }
    let (debug_stream, quiet_stream) = (listen(server.port, &debug), listen(server.port, &quiet));
    std::thread::sleep(Duration::from_millis(300));
    // The first analyze builds the graphs (a debug event) and reports it to its progress token.
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "analyze", "arguments": {"mode": "dependencies", "target": "src/lib.rs"}, "_meta": {"progressToken": "h-1"}}});
    let (status, _, body) = server.post(&[("Mcp-Session-Id", &debug)], &request);
    assert_eq!(status, 200, "{body}");
    let progress: Vec<Value> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|message| message["method"] == "notifications/progress")
        .collect();
    assert!(
        !progress.is_empty() && progress.iter().all(|message| message["params"]["progressToken"] == "h-1"),
        "{body}"
    );
    let logged = loop {
        let message = debug_stream.recv_timeout(Duration::from_secs(10)).expect("a log message on the debug session");
        if message["method"] == "notifications/message" && message["params"]["level"] == "debug" {
            break message;
        }
    };
    assert!(logged["params"]["data"].as_str().unwrap().starts_with("relationship graphs built"), "{logged}");
    while let Ok(message) = quiet_stream.recv_timeout(Duration::from_millis(500)) {
        assert_ne!(message["method"], "notifications/message", "a session at `error` got {message}");
    }
}
