//! Protocol 2026-07-28 beside the handshake revisions (§11), end to end through the binary:
//! `server/discover` and the per-request `_meta` lifecycle over stdio and over stateless HTTP,
//! the session a stateless HTTP client lands in (§9.1) and the gate's replayed `next_calls`
//! there, the root when the client has no roots (§2), and rmcp's own client in each of its
//! lifecycle modes.

use crate::common;
use crate::mcp_http::Server as HttpServer;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");
const MODERN: &str = "2026-07-28";
const SERVED: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

fn test_cache() -> std::path::PathBuf {
    std::env::temp_dir().join("loupe-test-cache")
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let body: String = (1..=300).map(|n| format!("fn f{n}() -> u32 {{ {n} }}\n")).collect();
    std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
    dir
}

/// The per-request `_meta` of a 2026-07-28 request from client `name`.
fn meta(name: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1.0"},
    })
}

fn call_params(tool: &str, arguments: Value, meta: Value) -> Value {
    json!({"name": tool, "arguments": arguments, "_meta": meta})
}

/// A tool result's structured content, failing on a protocol error.
fn envelope(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "protocol error: {answer}");
    &answer["result"]["structuredContent"]
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"].as_bool().unwrap_or(false)
}

fn face(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

fn next_calls(answer: &Value) -> Vec<Value> {
    envelope(answer)["meta"]["next_calls"].as_array().cloned().unwrap_or_default()
}

fn check_discovered(answer: &Value) {
    let result = &answer["result"];
    assert_eq!(result["supportedVersions"], json!(SERVED), "{answer}");
    assert!(result["capabilities"]["tools"].is_object(), "{answer}");
    assert!(result["instructions"].as_str().is_some_and(|text| text.contains("Search first")), "{answer}");
}

/// A raw stdio connection that checks every line is the answer to the request just sent (so a
/// server-to-client request, such as `roots/list`, fails the test).
struct Stdio2026 {
    io: common::Lines,
    next_id: u64,
}

impl Stdio2026 {
    fn spawn(command: Command) -> Stdio2026 {
        Stdio2026 { io: common::Lines::spawn(command), next_id: 1 }
    }

    fn serve(root: &std::path::Path) -> Stdio2026 {
        let mut command = Command::new(LOUPE);
        command
            .arg("serve")
            .arg("--root")
            .arg(root)
            .env("XDG_CACHE_HOME", test_cache())
            .env("LOUPE_STRUCTURED_CONTENT", "full")
            .env_remove("LOUPE_GATE_MODE");
        Stdio2026::spawn(command)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let started = Instant::now();
        self.io.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self.io.receive(Duration::from_secs(20)).expect("an answer within 20 s");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], json!(id), "the next line answers {method}: {answer}");
        assert!(started.elapsed() < Duration::from_secs(4), "{method} took {:?}", started.elapsed());
        answer
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", call_params(tool, arguments, meta("raw-2026", json!({}))))
    }
}

/// Over stdio, a 2026-07-28 client discovers, then calls with per-request `_meta` and no
/// `initialize`: the gate holds, a search's ref reads, and every refusal's `next_calls` replay.
#[test]
fn stdio_discover_then_per_request_calls_without_initialize() {
    let dir = workspace();
    let mut server = Stdio2026::serve(dir.path());
    let discovered = server.request("server/discover", json!({"_meta": meta("raw-2026", json!({}))}));
    check_discovered(&discovered);
    let listed = server.request("tools/list", json!({"_meta": meta("raw-2026", json!({}))}));
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert_eq!(names, ["read", "search", "analyze", "edit", "manage"], "{listed}");

    let refused = server.call("read", json!({"mode": "file", "target": "src/lib.rs"}));
    assert!(is_error(&refused), "{refused}");
    assert_eq!(envelope(&refused)["error"]["code"], "SEARCH_FIRST_REQUIRED", "{refused}");
    let replays = next_calls(&refused);
    assert!(!replays.is_empty(), "{refused}");
    for call in replays {
        let replay = server.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(!is_error(&replay), "replaying {call}: {}", face(&replay));
    }
    // Far from the lines the replays read, so the read is not elided as already sent (§9.6).
    let search = server.call("search", json!({"query": "fn f207()", "type": "text"}));
    let candidate = envelope(&search)["meta"]["results"][0]["candidate_id"].clone();
    assert!(candidate.is_string(), "{search}");
    let read = server.call("read", json!({"candidate_id": candidate}));
    assert!(!is_error(&read) && face(&read).contains("fn f207()"), "{read}");
    // One process is one connection, whatever the revision: no session id is made up.
    assert!(read["result"]["_meta"].is_null(), "{read}");
}

/// Before any lifecycle, a request that opens none is told how to open one, and the handshake
/// still works afterwards; a discover after `initialize` is served too.
#[test]
fn stdio_request_before_a_lifecycle_is_told_how_to_open_one() {
    let dir = workspace();
    let mut server = Stdio2026::serve(dir.path());
    let early = server.request("tools/list", json!({}));
    assert_eq!(early["error"]["code"], json!(-32602), "{early}");
    let message = early["error"]["message"].as_str().unwrap();
    assert!(message.contains("send `initialize` first"), "{message}");
    assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");

    let unserved = server.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(unserved["error"]["code"], json!(-32022), "{unserved}");
    assert_eq!(unserved["error"]["data"]["requested"], "2099-01-01", "{unserved}");
    assert_eq!(unserved["error"]["data"]["supported"], json!(SERVED), "{unserved}");

    let answer = server.request(
        "initialize",
        json!({"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}),
    );
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
    server.io.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let discovered = server.request("server/discover", json!({"_meta": meta("old", json!({}))}));
    check_discovered(&discovered);
    let listed = server.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["name"], "read", "{listed}");
}

/// §2: a 2026-07-28 request has no roots (even one declaring the capability is never asked),
/// so with no `--root` the root is `LOUPE_ROOT`, else the working directory's repository.
#[test]
fn a_2026_client_gets_the_root_from_loupe_root_or_the_working_directory() {
    let repository = workspace();
    std::fs::create_dir_all(repository.path().join(".git")).unwrap();
    std::fs::create_dir_all(repository.path().join("src/deep")).unwrap();
    let other = workspace();
    let canonical = |path: &std::path::Path| path.canonicalize().unwrap().display().to_string();
    for (loupe_root, expected) in [(None, canonical(repository.path())), (Some(other.path()), canonical(other.path()))]
    {
        let mut command = Command::new(LOUPE);
        command
            .arg("serve")
            .current_dir(repository.path().join("src/deep"))
            .env_remove("LOUPE_ROOT")
            .env("XDG_CACHE_HOME", test_cache())
            .stderr(Stdio::null());
        if let Some(root) = loupe_root {
            command.env("LOUPE_ROOT", root);
        }
        let mut server = Stdio2026::spawn(command);
        let status = server.request(
            "tools/call",
            call_params("manage", json!({"command": "status"}), meta("rootless", json!({"roots": {}}))),
        );
        assert!(!is_error(&status), "{status}");
        let root_line = face(&status).lines().find(|line| line.contains(" · root ")).unwrap_or_default().to_owned();
        assert!(root_line.contains(&expected), "{root_line} names {expected}: {}", face(&status));
        let why = if loupe_root.is_some() { "chosen by LOUPE_ROOT" } else { "repository around the working directory" };
        assert!(root_line.contains(why), "{root_line} says why ({why})");
    }
}

/// Headers of a 2026-07-28 HTTP request (SEP-2243 standard headers included).
fn modern_headers<'a>(method: &'a str, name: Option<&'a str>, token: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method), ("Authorization", token)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

/// Over HTTP, 2026-07-28 is stateless: no `Mcp-Session-Id`, each request on its own. loupe keys
/// the session on the bearer token and the client's `clientInfo` (§9.1), states it in every
/// result's `_meta`, and carries it in `next_calls`: a ref from one request reads in the next,
/// replayed refusals pass, and another client (or token) is another session.
#[test]
fn http_stateless_requests_of_one_client_share_a_session() {
    let root = workspace();
    let index = tempfile::tempdir().unwrap();
    let server = HttpServer::start_with(
        root.path(),
        index.path(),
        "127.0.0.1:0",
        Some("s3cret"),
        &[("LOUPE_STRUCTURED_CONTENT", "full")],
    );
    let bearer = "Bearer s3cret";
    let post = |client: &str, id: u64, method: &str, params: Value| -> Value {
        let mut params = params;
        params["_meta"] = meta(client, json!({}));
        let name = params["name"].as_str().map(str::to_owned);
        let headers = modern_headers(method, name.as_deref(), bearer);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, headers, body) = server.post(&headers, &request);
        assert_eq!(status, 200, "{method}: {body}");
        assert!(!headers.iter().any(|(name, _)| name == "mcp-session-id"), "stateless: {headers:?}");
        HttpServer::answer(&body)
    };
    let call = |client: &str, id: u64, tool: &str, arguments: Value| -> Value {
        post(client, id, "tools/call", json!({"name": tool, "arguments": arguments}))
    };

    check_discovered(&post("agent", 1, "server/discover", json!({})));
    let listed = post("agent", 2, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(5), "{listed}");

    let refused = call("agent", 3, "read", json!({"mode": "file", "target": "src/lib.rs"}));
    assert_eq!(envelope(&refused)["error"]["code"], "SEARCH_FIRST_REQUIRED", "{refused}");
    let session = refused["result"]["_meta"]["loupe/session_id"].as_str().expect("the session is stated").to_owned();
    assert!(session.starts_with("client-"), "{session}");
    for (n, replay) in next_calls(&refused).into_iter().enumerate() {
        assert_eq!(replay["arguments"]["session_id"], json!(session), "{replay}");
        let answer = call("agent", 10 + n as u64, replay["tool"].as_str().unwrap(), replay["arguments"].clone());
        assert!(!is_error(&answer), "replaying {replay}: {}", face(&answer));
    }

    let search = call("agent", 20, "search", json!({"query": "fn f207()", "type": "text"}));
    assert_eq!(search["result"]["_meta"]["loupe/session_id"], json!(session), "{search}");
    let candidate = envelope(&search)["meta"]["results"][0]["candidate_id"].clone();
    // A ref from the last request reads in this one: the same client is the same session.
    let read = call("agent", 21, "read", json!({"candidate_id": candidate}));
    assert!(!is_error(&read) && face(&read).contains("fn f207()"), "{read}");
    let bundle = envelope(&search)["meta"]["bundle_id"].clone();
    let outline = call("agent", 22, "read", json!({"mode": "outline", "target": "src/lib.rs", "bundle_id": bundle}));
    assert!(!is_error(&outline), "the search's bundle, two requests later: {}", face(&outline));

    // Another client is another session: the ref is not its own.
    let elsewhere = call("other-agent", 23, "read", json!({"candidate_id": candidate}));
    assert!(is_error(&elsewhere), "{elsewhere}");
    let theirs = elsewhere["result"]["_meta"]["loupe/session_id"].as_str().unwrap();
    assert_ne!(theirs, session);
    // A client that names its session keeps it.
    let pinned = call("agent", 24, "manage", json!({"command": "status", "session_id": "mine"}));
    assert_eq!(pinned["result"]["_meta"]["loupe/session_id"], "mine", "{pinned}");

    // The handshake lifecycle is untouched beside it: its session is its connection.
    let legacy = server.session(&[("Authorization", bearer)]);
    let status = server.call(&legacy, &[("Authorization", bearer)], 2, "manage", json!({"command": "status"}));
    assert!(status["_meta"].is_null(), "{status}");
}

async fn rmcp_client(root: &std::path::Path, lifecycle: Option<ClientLifecycleMode>) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(LOUPE);
    command
        .arg("serve")
        .arg("--root")
        .arg(root)
        .env("XDG_CACHE_HOME", test_cache())
        .env("LOUPE_STRUCTURED_CONTENT", "full")
        .stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).unwrap();
    match lifecycle {
        Some(lifecycle) => ().serve_with_lifecycle(transport, lifecycle).await.unwrap(),
        None => ().serve(transport).await.unwrap(),
    }
}

/// rmcp 3.9's client in each lifecycle: `Discover` and `Auto` land on 2026-07-28 (discover
/// answered), `Initialize` on 2025-11-25; in each, a search's ref reads.
#[tokio::test]
async fn rmcp_client_in_every_lifecycle_mode() {
    let dir = workspace();
    let modes = [
        (Some(ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }), MODERN),
        (
            Some(ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            }),
            MODERN,
        ),
        (Some(ClientLifecycleMode::Initialize), "2025-11-25"),
        (None, "2025-11-25"),
    ];
    for (mode, expected) in modes {
        let label = format!("{mode:?}");
        let started = Instant::now();
        let client = rmcp_client(dir.path(), mode).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{label}: no discover timeout fallback");
        let info = client.peer_info().expect("the server is known");
        assert_eq!(info.protocol_version.as_str(), expected, "{label}");
        let tools = client.list_tools(None).await.unwrap().tools;
        assert_eq!(tools.len(), 5, "{label}");
        let search = client
            .call_tool(
                CallToolRequestParams::new("search")
                    .with_arguments(json!({"query": "fn f9()", "type": "text"}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        let candidate = search.structured_content.as_ref().unwrap()["meta"]["results"][0]["candidate_id"].clone();
        let read = client
            .call_tool(
                CallToolRequestParams::new("read")
                    .with_arguments(json!({"candidate_id": candidate}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_eq!(read.is_error, Some(false), "{label}: {read:?}");
        client.cancel().await.unwrap();
    }
}
