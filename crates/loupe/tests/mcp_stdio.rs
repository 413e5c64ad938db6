//! End to end: the real `loupe` binary driven over stdio, by rmcp's own client and by raw
//! JSON-RPC lines for the inputs a well-behaved client never sends.

// Roots are deprecated from protocol 2026-07-28 on; loupe still honours them (§2).
#![allow(deprecated)]

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ListRootsResult, ProtocolVersion, Root,
};
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

/// Index directories of test servers go here, not into the user's cache.
fn test_cache() -> std::path::PathBuf {
    std::env::temp_dir().join("loupe-test-cache")
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let body: String = (1..=40).map(|n| format!("fn f{n}() -> u32 {{ {n} }}\n")).collect();
    std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
    std::fs::write(dir.path().join(".env"), "TOKEN=secret\n").unwrap();
    dir
}

fn serve_command(root: &std::path::Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(LOUPE);
    command
        .arg("serve")
        .arg("--root")
        .arg(root)
        .env("LOUPE_TEST_HOOKS", "1")
        .env("XDG_CACHE_HOME", test_cache())
        .stderr(Stdio::null());
    command
}

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.clone()).collect()
}

#[tokio::test]
async fn rmcp_client_reads_and_recovers_from_bad_calls() {
    let dir = workspace();
    let client = ().serve(TokioChildProcess::new(serve_command(dir.path())).unwrap()).await.unwrap();

    // rmcp's client offers a newer revision than loupe speaks; loupe answers with its newest.
    let info = client.peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(info.server_info.as_ref().unwrap().name, "loupe");

    let tools = client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["read", "search", "analyze", "edit", "manage"]);

    // The workflows as prompts: listed, expanded with their arguments, a bad one refused.
    let prompts = client.list_prompts(None).await.unwrap().prompts;
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert_eq!(names, ["review", "explain", "impact", "rename"]);
    let explain = client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("explain").with_arguments(arguments(json!({"symbol": "add"}))),
        )
        .await
        .unwrap();
    let guidance = serde_json::to_value(&explain.messages[0].content).unwrap()["text"].as_str().unwrap().to_owned();
    assert!(guidance.contains(r#"search {"query":"add","type":"symbol"}"#), "{guidance}");
    let refused = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("rename").with_arguments(arguments(json!({"old": "add"}))))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("needs `new`"), "{refused}");
    let read = &tools[0];
    let annotations = read.annotations.as_ref().unwrap();
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.open_world_hint, Some(false));
    assert!(read.output_schema.is_some());

    // A snippet: line-numbered text face, and the envelope as structured content.
    let result = client
        .call_tool(CallToolRequestParams::new("read").with_arguments(arguments(
            json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 3, "end_line": 4}),
        )))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let text = text_of(&result);
    assert!(text.starts_with("src/lib.rs · lines 3–4 of 40 · hash "), "{text}");
    assert!(text.contains("3 fn f3() -> u32 { 3 }\n4 fn f4() -> u32 { 4 }\n"), "{text}");
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["ok"], json!(true));
    // The structured face carries the text face, the header's hash as `file_hash`.
    let hash = structured["file_hash"].as_str().expect("a read has file_hash");
    assert_eq!(structured["text"], json!(text.replacen(&format!(" · hash {hash}"), "", 1)));

    // No `arguments` at all: a tool error, not a protocol error.
    let result = client.call_tool(CallToolRequestParams::new("read")).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.structured_content.unwrap()["error"]["code"], json!("INVALID_ARGS"));

    // Secrets are refused by code.
    let result = client
        .call_tool(
            CallToolRequestParams::new("read")
                .with_arguments(arguments(json!({"mode": "snippet", "target": ".env", "start_line": 1}))),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["error"]["code"], json!("PATH_EXCLUDED"));

    // An unknown tool is a JSON-RPC error.
    let error = client.call_tool(CallToolRequestParams::new("no_such_tool")).await.unwrap_err();
    assert!(error.to_string().contains("unknown tool"), "{error}");

    // A panic inside a tool fails that call with INTERNAL; the next call is served.
    let result = client
        .call_tool(
            CallToolRequestParams::new("read")
                .with_arguments(arguments(json!({"mode": "file", "target": "__loupe_test_panic__"}))),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["error"]["code"], json!("INTERNAL"));
    let result = client
        .call_tool(
            CallToolRequestParams::new("read")
                .with_arguments(arguments(json!({"mode": "file", "target": "src/lib.rs", "offset": 1, "limit": 1}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert!(text_of(&result).contains("→ next: read {\"cursor\":"));

    client.cancel().await.unwrap();
}

/// A client that offers roots: loupe started without `--root` opens the client's first root.
#[derive(Clone)]
struct RootsClient {
    root_uri: String,
}

impl ClientHandler for RootsClient {
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(self.root_uri.clone())]))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::builder().enable_roots().build(), Implementation::new("roots-test", "1"))
    }
}

#[tokio::test]
async fn without_root_flag_the_clients_first_root_is_the_workspace() {
    let dir = workspace();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(LOUPE);
    command
        .arg("serve")
        .current_dir(elsewhere.path())
        .env_remove("LOUPE_ROOT")
        .env("XDG_CACHE_HOME", test_cache())
        .stderr(Stdio::null());
    let handler = RootsClient { root_uri: format!("file://{}", dir.path().display()) };
    let client = handler.serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let result = client
        .call_tool(
            CallToolRequestParams::new("read")
                .with_arguments(arguments(json!({"mode": "snippet", "target": "src/lib.rs", "line_range": "40-40"}))),
        )
        .await
        .unwrap();
    assert!(text_of(&result).contains("40 fn f40()"), "{}", text_of(&result));
    client.cancel().await.unwrap();
}

/// A raw line-level client for the inputs rmcp's client would never send.
struct RawServer {
    io: common::Lines,
}

impl RawServer {
    fn start(root: &std::path::Path) -> RawServer {
        RawServer::start_with(root, &[])
    }

    fn start_with(root: &std::path::Path, env: &[(&str, &str)]) -> RawServer {
        let mut command = Command::new(LOUPE);
        command.arg("serve").arg("--root").arg(root).env("XDG_CACHE_HOME", test_cache()).env("LOUPE_TEST_HOOKS", "1");
        for (key, value) in env {
            command.env(key, value);
        }
        RawServer { io: common::Lines::spawn(command) }
    }

    /// A server on an index dir of its own (kept while the returned dir lives), whose first
    /// build is held back `millis` (the `LOUPE_TEST_INDEX_DELAY_MS` hook).
    fn with_first_build_held(root: &std::path::Path, millis: u64) -> (RawServer, tempfile::TempDir) {
        let cache = tempfile::tempdir().unwrap();
        let delay = millis.to_string();
        let server = RawServer::start_with(
            root,
            &[("LOUPE_TEST_INDEX_DELAY_MS", delay.as_str()), ("XDG_CACHE_HOME", cache.path().to_str().unwrap())],
        );
        (server, cache)
    }

    fn send(&mut self, line: &str) {
        self.io.send(line);
    }

    /// The next line the server writes, as JSON; every line must be JSON.
    fn receive(&self) -> Value {
        let line = self.io.receive(Duration::from_secs(10)).expect("the server answered within 10 s");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("stdout carried a non-JSON line {line:?}: {error}"))
    }

    /// Sends a request and returns its answer, checking the id came back as sent.
    fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        let started = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        let answer = self.receive();
        assert_eq!(answer["id"], id, "answer to {method}: {answer}");
        assert!(started.elapsed() < Duration::from_secs(5), "{method} took {:?}", started.elapsed());
        answer
    }

    fn initialize(&mut self, version: &str) -> Value {
        let params =
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
        let answer = self.request(json!(0), "initialize", params);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        answer
    }
}

#[test]
fn every_supported_revision_is_negotiated_and_newer_ones_get_the_newest() {
    let dir = workspace();
    for (offered, expected) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut server = RawServer::start(dir.path());
        let answer = server.initialize(offered);
        assert_eq!(answer["result"]["protocolVersion"], json!(expected), "offered {offered}: {answer}");
        let tools = server.request(json!(1), "tools/list", json!({}));
        assert_eq!(tools["result"]["tools"][0]["name"], json!("read"));
    }
}

#[test]
fn bad_input_gets_an_answer_and_the_server_keeps_serving() {
    let dir = workspace();
    let mut server = RawServer::start(dir.path());
    // A notification before initialize must not end the session.
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    server.initialize("2025-06-18");

    server.send("{this is not json");
    let answer = server.receive();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32700)));

    // `server/discover` is served in a handshake session too; without the per-request `_meta`
    // it names what is missing.
    let answer = server.request(json!("discover-1"), "server/discover", json!({}));
    assert_eq!(answer["error"]["code"], json!(-32602));
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("io.modelcontextprotocol/protocolVersion"),
        "{answer}"
    );
    let answer = server.request(json!(0), "resources/list", json!({}));
    assert_eq!(answer["error"]["code"], json!(-32601));
    let answer = server.request(json!(7), "tools/call", json!({}));
    assert_eq!(answer["error"]["code"], json!(-32602));

    // String ids and id 0, a progress token, no `arguments`.
    let answer = server.request(
        json!("call-a"),
        "tools/call",
        json!({"name": "read", "arguments": {"mode": "file", "target": "src/lib.rs", "offset": 1, "limit": 2}, "_meta": {"progressToken": "p-1"}}),
    );
    assert_eq!(answer["result"]["isError"], json!(false));
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("1 fn f1()"));
    let answer = server.request(json!(0), "tools/call", json!({"name": "read"}));
    assert_eq!(answer["result"]["isError"], json!(true));
    assert_eq!(answer["result"]["structuredContent"]["error"]["code"], json!("INVALID_ARGS"));

    // Every read error code reachable from a path, and unknown parameters by name.
    for (id, target, code) in [
        (11, "../outside.txt", "PATH_OUTSIDE_ROOT"),
        (12, ".env", "PATH_EXCLUDED"),
        (13, "src/missing.rs", "FILE_NOT_FOUND"),
    ] {
        let answer = server.request(
            json!(id),
            "tools/call",
            json!({"name": "read", "arguments": {"mode": "snippet", "target": target, "start_line": 1}}),
        );
        assert_eq!(answer["result"]["structuredContent"]["error"]["code"], json!(code), "{target}");
    }
    let answer = server.request(
        json!(14),
        "tools/call",
        json!({"name": "read", "arguments": {"mode": "file", "target": "src/lib.rs", "colour": "red"}}),
    );
    let message = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("`colour`"), "{message}");

    let answer = server.request(json!(99), "ping", json!({}));
    assert_eq!(answer["result"], json!({}));
}

/// §7: a call that needs the index (`analyze`; a search does not wait, below) never answers from
/// half a build: it waits (bounded) for the first build; a client that sent a progress token is
/// told how it goes meanwhile.
#[test]
fn a_progress_token_gets_index_progress_and_a_complete_answer() {
    let dir = workspace();
    let start = || RawServer::with_first_build_held(dir.path(), 700);
    // Without a token: the complete answer once the build is done, and no notifications.
    let (mut server, _cache) = start();
    server.initialize("2025-11-25");
    let answer = server.request(
        json!(1),
        "tools/call",
        json!({"name": "analyze", "arguments": {"mode": "calls", "target": "f17", "metadata": "full"}}),
    );
    let meta = &answer["result"]["structuredContent"]["meta"];
    assert_eq!(meta["index_state"], json!("ready"), "{answer}");
    // With a token: progress notifications while it builds, then the complete answer.
    let (mut server, _cache) = start();
    server.initialize("2025-11-25");
    server.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "analyze", "arguments": {"mode": "calls", "target": "f17", "metadata": "full"}, "_meta": {"progressToken": "build-1"}}})
        .to_string(),
    );
    let mut progress = 0;
    let answer = loop {
        let message = server.receive();
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], json!("build-1"));
            progress += 1;
            continue;
        }
        break message;
    };
    assert_eq!(answer["id"], json!(2));
    assert!(progress >= 1, "no progress notification arrived");
    let meta = &answer["result"]["structuredContent"]["meta"];
    assert_eq!(meta["index_state"], json!("ready"), "{answer}");
}

/// §7, on a cold start: a search does not wait for the first build; it is answered at once by a
/// direct scan (of every file of this small tree, so complete), and says so. (The hook holds the
/// build back 5 s; the wait a read by symbol makes is 10 s.)
#[test]
fn a_search_during_the_first_build_is_answered_at_once_by_a_direct_scan() {
    let dir = workspace();
    let (mut server, _cache) = RawServer::with_first_build_held(dir.path(), 5000);
    server.initialize("2025-11-25");
    for (id, kind, query) in [(1, "text", "-> u32 { 3"), (2, "regex", r"-> u32 \{ 3")] {
        let asked = Instant::now();
        let answer = server.request(
            json!(id),
            "tools/call",
            json!({"name": "search", "arguments": {"query": query, "type": kind, "metadata": "full"}}),
        );
        assert!(asked.elapsed() < Duration::from_secs(4), "{kind} search waited {:?}", asked.elapsed());
        let meta = &answer["result"]["structuredContent"]["meta"];
        // f3 and f30..f39: every match, from the scan.
        assert_eq!((meta["index_state"].clone(), meta["total"].clone()), (json!("building"), json!(11)), "{answer}");
        let face = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(face.contains("(index still building: answered by a direct scan of the files)"), "{face}");
    }
    let asked = Instant::now();
    let answer = server.request(
        json!(3),
        "tools/call",
        json!({"name": "search", "arguments": {"query": "f3", "type": "symbol", "metadata": "full"}}),
    );
    assert!(asked.elapsed() < Duration::from_secs(4), "a symbol search waited {:?}", asked.elapsed());
    let meta = &answer["result"]["structuredContent"]["meta"];
    assert_eq!(meta["index_state"], json!("building"), "{answer}");
    let rows = answer["result"]["structuredContent"]["results"].as_array().cloned().unwrap_or_default();
    assert!(rows.iter().any(|row| row[0] == json!("src/lib.rs")), "{answer}");
}

/// `notifications/cancelled` stops the work of the request it names: its progress reports stop
/// at once (the index wait polls every 250 ms; the hook holds the build for 5 s), no answer is
/// sent for it, and the server goes on serving.
#[test]
fn a_cancelled_call_stops_reporting_progress_and_the_server_keeps_serving() {
    let dir = workspace();
    let (mut server, _cache) = RawServer::with_first_build_held(dir.path(), 5000);
    server.initialize("2025-11-25");
    server.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "analyze", "arguments": {"mode": "calls", "target": "f3"}, "_meta": {"progressToken": "p7"}}})
        .to_string(),
    );
    let first = server.receive();
    assert_eq!(first["method"], json!("notifications/progress"), "{first}");
    assert!(first["params"].get("total").is_none() || first["params"]["total"].as_f64() > Some(0.0), "{first}");
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#);
    let cancelled_at = Instant::now();
    // A report already on its way may still arrive; then nothing more for request 7.
    let mut late = 0;
    while let Ok(line) = server.io.receive(Duration::from_millis(1200)) {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(message["id"], json!(7), "a cancelled request was answered: {message}");
        late += 1;
        assert!(late <= 1, "progress went on after the cancellation: {message}");
    }
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    let pong = server.request(json!(8), "ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
}

/// §2: without `--root`, `LOUPE_ROOT` or client roots, a server started in a subdirectory serves
/// the repository around it (and says so), and one started in `/` serves nothing: every call
/// answers how to name a root, and the server keeps running.
#[test]
fn without_a_named_root_the_repository_around_the_working_directory_is_served() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let spawn = |current_dir: &std::path::Path| {
        let mut command = Command::new(LOUPE);
        command
            .arg("serve")
            .current_dir(current_dir)
            .env_remove("LOUPE_ROOT")
            .env("XDG_CACHE_HOME", test_cache())
            .env("HOME", home.path());
        RawServer { io: common::Lines::spawn(command) }
    };
    let mut server = spawn(&dir.path().join("src"));
    server.initialize("2025-11-25");
    let status = server.request(json!(1), "tools/call", json!({"name": "manage", "arguments": {"command": "status"}}));
    let face = status["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    let root = dir.path().canonicalize().unwrap();
    assert!(face.contains(&format!("root {} (chosen by the repository around", root.display())), "{face}");
    let read = server.request(
        json!(2),
        "tools/call",
        json!({"name": "read", "arguments": {"mode": "snippet", "target": "src/lib.rs", "start_line": 2, "end_line": 2}}),
    );
    assert_eq!(read["result"]["isError"], json!(false), "{read}");

    let mut server = spawn(std::path::Path::new("/"));
    server.initialize("2025-11-25");
    for id in [3, 4] {
        let answer = server.request(
            json!(id),
            "tools/call",
            json!({"name": "read", "arguments": {"mode": "file", "target": "etc/hostname"}}),
        );
        assert_eq!(answer["result"]["structuredContent"]["error"]["code"], json!("INVALID_ARGS"), "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("--root") && text.contains("LOUPE_ROOT"), "{text}");
    }
}

/// The first minute: a client that closes stdin right after its call (a script, a one-shot
/// run) does not lose the index build it started. The server finishes and persists it before
/// exiting, so the next run starts warm.
#[test]
fn a_build_running_when_the_client_leaves_is_finished_and_persisted() {
    let dir = workspace();
    let cache = tempfile::tempdir().unwrap();
    let mut child = Command::new(LOUPE)
        .arg("serve")
        .arg("--root")
        .arg(dir.path())
        .env("XDG_CACHE_HOME", cache.path())
        .env("LOUPE_TEST_HOOKS", "1")
        .env("LOUPE_TEST_INDEX_DELAY_MS", "800")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    send_one_shot_call(&mut stdin);
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(started.elapsed() >= Duration::from_millis(300), "the server left before the build ran");
    let persisted: Vec<_> =
        walkdir_files(cache.path()).into_iter().filter(|path| path.ends_with("tables.bin")).collect();
    assert_eq!(persisted.len(), 1, "the index was not persisted: {:?}", walkdir_files(cache.path()));
    let temporaries: Vec<_> =
        walkdir_files(cache.path()).into_iter().filter(|path| path.to_string_lossy().ends_with(".tmp")).collect();
    assert!(temporaries.is_empty(), "{temporaries:?}");
}

/// The first minute: the SDKs end a stdio server by closing stdin, then SIGTERM about 2 s later,
/// then SIGKILL. A build longer than that grace is interrupted by the SIGTERM and kept as a
/// checkpoint before a SIGKILL would come, leaving no temporaries; the next session resumes
/// from it instead of parsing those files again.
#[test]
fn a_build_cut_short_by_sigterm_is_kept_and_the_next_session_resumes_from_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    for n in 0..60 {
        std::fs::write(dir.path().join(format!("src/m{n:02}.py")), format!("def func_{n:02}():\n    return {n}\n"))
            .unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let session = |file_delay_ms: Option<u64>| {
        let mut command = Command::new(LOUPE);
        command
            .arg("serve")
            .arg("--root")
            .arg(dir.path())
            .env("XDG_CACHE_HOME", cache.path())
            .env("LOUPE_LOG", "loupe_index=info,loupe_engine=info,loupe_mcp=info")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(delay) = file_delay_ms {
            command.env("LOUPE_TEST_HOOKS", "1").env("LOUPE_TEST_INDEX_FILE_DELAY_MS", delay.to_string());
        }
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        send_one_shot_call(&mut stdin);
        (child, stdin)
    };
    let stderr_of = |child: std::process::Child| {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };

    // 60 files at 100 ms each: several seconds of build. The client leaves after a second,
    // and terminates the server half a second later.
    let (child, stdin) = session(Some(100));
    std::thread::sleep(Duration::from_millis(1000));
    drop(stdin);
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(killed.success());
    let terminated = Instant::now();
    let log = stderr_of(child);
    assert!(terminated.elapsed() < Duration::from_millis(1900), "the server took {:?} to exit", terminated.elapsed());
    assert!(log.contains("kept as a checkpoint"), "{log}");
    let files = walkdir_files(cache.path());
    assert!(files.iter().any(|path| path.ends_with("tables.bin")), "no checkpoint: {files:?}");
    assert!(!files.iter().any(|path| path.to_string_lossy().ends_with(".tmp")), "{files:?}");

    // The next session resumes: the checkpoint's files are copied, not parsed again.
    let (child, stdin) = session(None);
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    let log = stderr_of(child);
    let ready = log.lines().find(|line| line.contains("index ready")).unwrap_or_else(|| panic!("{log}"));
    let reused: usize = ready
        .split("reused: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("{ready}"));
    assert!(reused > 0 && reused < 60, "{ready}");
    assert!(ready.contains("interrupted: false") && ready.contains("walked: 60"), "{ready}");
}

/// What a one-shot client writes before it closes stdin: the handshake and one call.
fn send_one_shot_call(stdin: &mut std::process::ChildStdin) {
    use std::io::Write as _;
    let messages = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "one-shot", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "manage", "arguments": {"command": "status"}}}),
    ];
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
}

fn walkdir_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walkdir_files(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Two servers on one root share one index directory: one persists, both answer.
#[test]
fn two_servers_on_one_root_both_serve_search() {
    let dir = workspace();
    let cache = tempfile::tempdir().unwrap();
    let env = [("XDG_CACHE_HOME", cache.path().to_str().unwrap())];
    let mut first = RawServer::start_with(dir.path(), &env);
    let mut second = RawServer::start_with(dir.path(), &env);
    for server in [&mut first, &mut second] {
        server.initialize("2025-11-25");
    }
    for (id, server) in [&mut first, &mut second].into_iter().enumerate() {
        let arguments = json!({"query": "f23", "type": "symbol", "metadata": "full"});
        let params = json!({"name": "search", "arguments": arguments, "_meta": {"progressToken": id}});
        server.send(&json!({"jsonrpc": "2.0", "id": 10 + id, "method": "tools/call", "params": params}).to_string());
        let answer = loop {
            let message = server.receive();
            if message["method"] != "notifications/progress" {
                break message;
            }
        };
        assert_eq!(answer["result"]["structuredContent"]["meta"]["total"], json!(1), "{answer}");
    }
    let index_dirs: Vec<_> = std::fs::read_dir(cache.path().join("loupe")).unwrap().collect();
    assert_eq!(index_dirs.len(), 1, "one index directory per root");
}

/// A `diff_preview` of proposed content cut by the server's ceiling, over the wire: the answer
/// says `PREVIEW_DEGRADED`, and its `next_cursor` continues in the same server without the
/// content being sent again, page after page, to the end of the diff.
#[tokio::test]
async fn a_cut_diff_preview_continues_by_cursor_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=loupe", "-c", "user.email=loupe@example.invalid", "-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(dir.path())
            .env_remove("GIT_DIR")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("base.txt"), "base\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    let mut command = serve_command(dir.path());
    command.env("LOUPE_MAX_PREVIEW_CHARS", "1500");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let proposed: String = (1..=300).map(|number| format!("proposed line {number}\n")).collect();
    let mut call = json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": proposed});
    let mut pages = 0;
    let last_text = loop {
        pages += 1;
        assert!(pages < 40, "the diff does not advance");
        let result =
            client.call_tool(CallToolRequestParams::new("read").with_arguments(arguments(call.clone()))).await.unwrap();
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let structured = result.structured_content.clone().unwrap();
        let text = text_of(&result);
        let Some(cursor) = structured["next_cursor"].as_str() else { break text };
        let codes = structured["reason_codes"].as_array().unwrap();
        assert!(codes.contains(&json!("PREVIEW_DEGRADED")), "{structured}");
        assert!(text.contains("[PREVIEW_DEGRADED, DIFF_TRUNCATED]"), "{text}");
        let next = structured["next_calls"][0]["arguments"].clone();
        assert_eq!(next["cursor"], json!(cursor));
        assert!(next.get("content").is_none(), "the continuation repeats the content: {next}");
        call = next;
    };
    assert!(pages > 2, "the ceiling cut the diff into pages");
    assert!(last_text.contains("+proposed line 300"), "{last_text}");
    client.cancel().await.unwrap();
}

/// A git repository of 80 Python files that call one function, half of them changed since the
/// commit: enough work for `reindex`, `analyze` and a directory `diff_preview` to report.
fn busy_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=loupe", "-c", "user.email=loupe@example.invalid", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(root)
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.py"), "def target():\n    return 1\n").unwrap();
    let module =
        |n: usize, body: &str| format!("from lib import target\n\ndef caller_{n}():\n    return target(){body}\n");
    for n in 0..80 {
        std::fs::write(root.join(format!("src/m{n:02}.py")), module(n, "")).unwrap();
    }
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    for n in (0..80).step_by(2) {
        std::fs::write(root.join(format!("src/m{n:02}.py")), module(n, " + 1")).unwrap();
    }
    dir
}

/// Sends a `tools/call` with a progress token; returns the progress notifications for that token
/// (every other message is refused) and the answer.
fn call_with_progress(
    server: &mut RawServer,
    id: u64,
    token: &str,
    name: &str,
    arguments: Value,
) -> (Vec<Value>, Value) {
    server.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": token}}})
        .to_string(),
    );
    let mut progress = Vec::new();
    loop {
        let message = server.receive();
        if message["id"] == json!(id) {
            return (progress, message);
        }
        assert_eq!(message["method"], json!("notifications/progress"), "{message}");
        assert_eq!(message["params"]["progressToken"], json!(token), "{message}");
        progress.push(message["params"].clone());
    }
}

/// §11: every call that can take long reports progress to a client that sent a progress token:
/// `reindex`, `analyze` (building the graphs, reading the files a walk touches) and a directory
/// `diff_preview`. The value grows with every notification, and `total` is sent only when known.
/// H7: an `edits` array of 10^5 entries is refused by its id before it is parsed into values
/// (10^6 entries reached 1.9 GB before `INVALID_ARGS`), and the server serves the next call.
#[test]
fn h7_a_message_of_too_many_values_is_refused_before_it_is_parsed() {
    let dir = workspace();
    let mut server = RawServer::start(dir.path());
    server.initialize("2025-06-18");
    let edits: Vec<Value> = (0..100_000).map(|n| json!({"path": format!("f{n}"), "operation": "delete"})).collect();
    let answer = server.request(json!("big"), "tools/call", json!({"name": "edit", "arguments": {"edits": edits}}));
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!("big"), json!(-32600)), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("JSON values"), "{answer}");
    let answer = server.request(
        json!(2),
        "tools/call",
        json!({"name": "read", "arguments": {"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 1}}),
    );
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

#[test]
fn reindex_analyze_and_diff_preview_report_progress_to_a_progress_token() {
    let dir = busy_workspace();
    let cache = tempfile::tempdir().unwrap();
    let mut server = RawServer::start_with(dir.path(), &[("XDG_CACHE_HOME", cache.path().to_str().unwrap())]);
    server.initialize("2025-11-25");
    // The first build is done before anything is measured (this call waits for it).
    let ready = server.request(json!(1), "tools/call", json!({"name": "search", "arguments": {"query": "caller_7"}}));
    assert_eq!(ready["result"]["isError"], json!(false), "{ready}");
    let calls = [
        ("reindex", "manage", json!({"command": "reindex"}), "reindex · "),
        ("analyze", "analyze", json!({"mode": "calls", "target": "target", "max_depth": 1}), "analyze"),
        ("diff", "read", json!({"mode": "diff_preview", "target": "src"}), "40 file(s) changed"),
    ];
    for (number, (token, name, arguments, answered)) in calls.into_iter().enumerate() {
        let (progress, answer) = call_with_progress(&mut server, 10 + number as u64, token, name, arguments);
        let face = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(face.contains(answered), "{token}: {answer}");
        assert!(!progress.is_empty(), "{token}: no progress notification");
        for pair in progress.windows(2) {
            assert!(pair[1]["progress"].as_f64() > pair[0]["progress"].as_f64(), "{token}: {progress:?}");
        }
        for params in &progress {
            assert!(params["message"].is_string(), "{token}: {params}");
            if let Some(total) = params.get("total") {
                assert!(total.as_f64().unwrap() >= params["progress"].as_f64().unwrap().max(1.0), "{token}: {params}");
            }
        }
    }
}

/// §11: `logging/setLevel` is answered and the logging capability advertised; the client is then
/// sent loupe's log events at its level and above as `notifications/message`, in order, and
/// nothing below it. (A malformed line is logged as a warning, an unserved method at debug.)
#[test]
fn logging_set_level_sends_messages_at_that_level_and_above() {
    let dir = workspace();
    let mut server = RawServer::start(dir.path());
    let answer = server.initialize("2025-11-25");
    assert_eq!(answer["result"]["capabilities"]["logging"], json!({}), "{answer}");
    let set = server.request(json!(1), "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(set["result"], json!({}), "{set}");
    // A level that is not one of MCP's is refused with -32602 (and logged at debug: not sent).
    let refused = server.request(json!(5), "logging/setLevel", json!({"level": "verbose"}));
    assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
    // A debug event first, then a warning: had the debug one been sent, it would come first.
    let unserved = server.request(json!(2), "resources/list", json!({}));
    assert_eq!(unserved["error"]["code"], json!(-32601));
    server.send("{this is not json");
    let warning = loop {
        let message = server.receive();
        if message["method"] != json!("notifications/message") {
            assert_eq!(message["error"]["code"], json!(-32700), "{message}");
            continue;
        }
        assert_eq!(message["params"]["level"], json!("warning"), "a message below the level was sent: {message}");
        break message;
    };
    let params = &warning["params"];
    assert!(params["data"].as_str().unwrap().starts_with("unparsable JSON line"), "{warning}");
    assert_eq!(params["logger"], json!("loupe_mcp::transport"), "{warning}");

    // At `debug`, the unserved method's event arrives too.
    let set = server.request(json!(3), "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(set["result"], json!({}), "{set}");
    server.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list", "params": {}}).to_string());
    let mut debug = None;
    while debug.is_none() {
        let message = server.receive();
        if message["method"] == json!("notifications/message") && message["params"]["level"] == json!("debug") {
            debug = Some(message["params"]["data"].as_str().unwrap_or_default().to_owned());
        }
    }
    let debug = debug.unwrap();
    assert!(debug.starts_with("answering unserved method with -32601 method=resources/list"), "{debug}");
}
