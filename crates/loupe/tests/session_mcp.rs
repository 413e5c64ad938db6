//! The session layer (§9) end to end: the real `loupe serve` over stdio, one process per
//! test (one process is one MCP connection), driven with raw JSON-RPC lines. One test per
//! group of the must-have list; the engine-boundary details live in
//! `crates/loupe-engine/tests/session_cases.rs`.

use crate::common;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let body: String = (1..=300).map(|n| format!("fn f{n}() -> u32 {{ {n} }}\n")).collect();
    std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
    std::fs::write(dir.path().join("src/other.rs"), "pub fn unrelated() {}\n").unwrap();
    dir
}

struct Server {
    io: common::Lines,
    next_id: i64,
}

impl Server {
    fn start(root: &std::path::Path, flags: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(LOUPE);
        command
            .arg("serve")
            .arg("--root")
            .arg(root)
            .args(flags)
            .env("XDG_CACHE_HOME", std::env::temp_dir().join("loupe-test-cache"))
            .env_remove("LOUPE_GATE_MODE")
            // These tests read the session layer's bookkeeping, which the full envelope shows.
            .env("LOUPE_STRUCTURED_CONTENT", "full");
        for (key, value) in env {
            command.env(key, value);
        }
        let mut server = Server { io: common::Lines::spawn(command), next_id: 1 };
        let init =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        server.request("initialize", init);
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        self.io.send(message);
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self.io.receive(Duration::from_secs(20)).expect("an answer within 20 s");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer["result"].clone()
    }

    /// A tool call: (isError, text face, structuredContent).
    fn call(&mut self, tool: &str, arguments: Value) -> Call {
        self.call_with_meta(tool, arguments, json!({}))
    }

    fn call_with_meta(&mut self, tool: &str, arguments: Value, meta: Value) -> Call {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments, "_meta": meta}));
        Call {
            is_error: result["isError"].as_bool().unwrap_or(false),
            face: result["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
            envelope: result["structuredContent"].clone(),
        }
    }
}

struct Call {
    is_error: bool,
    face: String,
    envelope: Value,
}

impl Call {
    fn code(&self) -> &str {
        self.envelope["error"]["code"].as_str().unwrap_or("")
    }

    fn reasons(&self) -> Value {
        self.envelope["meta"]["stabilization"]["reason_codes"].clone()
    }

    fn next_calls(&self) -> Vec<Value> {
        self.envelope["meta"]["next_calls"].as_array().cloned().unwrap_or_default()
    }
}

/// The gate: a read without a ref is refused, precision reads pass, refs from a search pass,
/// refs of another session or target are refused, and every refusal's next_calls replay.
#[test]
fn gate_refs_and_replayed_next_calls() {
    let dir = workspace();
    let mut server = Server::start(dir.path(), &[], &[]);
    let refused = server.call("read", json!({"mode": "file", "target": "src/lib.rs"}));
    assert!(refused.is_error);
    assert_eq!(refused.code(), "SEARCH_FIRST_REQUIRED");
    assert_eq!(refused.reasons(), json!(["SEARCH_FIRST_REQUIRED"]));
    let precise =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 50, "end_line": 249}));
    assert!(!precise.is_error, "200 lines pass: {}", precise.face);
    let wide =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 50, "end_line": 250}));
    assert!(wide.is_error, "201 lines do not");
    // The refusal's next calls pass as they are (its search returns the file: the path is then
    // a ref, so the whole file reads too).
    for call in refused.next_calls() {
        let replay = server.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(!replay.is_error, "replaying {call}: {}", replay.face);
    }
    let whole = server.call("read", json!({"mode": "file", "target": "src/lib.rs"}));
    assert!(!whole.is_error, "a file a search returned reads whole: {}", whole.face);

    let search = server.call("search", json!({"query": "fn f7()", "type": "text", "session_id": "task"}));
    assert!(!search.is_error, "{}", search.face);
    let candidate = search.envelope["meta"]["results"][0]["candidate_id"].clone();
    let bundle = search.envelope["meta"]["bundle_id"].clone();
    let read = server.call(
        "read",
        json!({"mode": "file", "target": "src/lib.rs", "candidate_id": candidate, "session_id": "task", "limit": 20}),
    );
    assert!(!read.is_error, "{}", read.face);
    let outline = server
        .call("read", json!({"mode": "outline", "target": "src/lib.rs", "bundle_id": bundle, "session_id": "task"}));
    assert!(!outline.is_error, "{}", outline.face);
    let again = server.call("search", json!({"query": "fn f7()", "type": "text", "session_id": "task"}));
    assert_eq!(again.envelope["meta"]["results"][0]["candidate_id"], candidate, "candidate ids are deterministic");
    assert_eq!(again.envelope["meta"]["bundle_id"], bundle, "bundle ids are deterministic");
    let mut second = Server::start(dir.path(), &[], &[]);
    let same = second.call("search", json!({"query": "fn f7()", "type": "text"}));
    assert_eq!(same.envelope["meta"]["bundle_id"], bundle, "and the same in another server");
    let other_connection =
        second.call("read", json!({"mode": "file", "target": "src/lib.rs", "candidate_id": candidate}));
    assert!(!other_connection.is_error, "this connection was issued the same id by its own search");
    let mut third = Server::start(dir.path(), &[], &[]);
    let unissued = third.call("read", json!({"mode": "file", "target": "src/lib.rs", "candidate_id": candidate}));
    assert_eq!(unissued.code(), "SEARCH_FIRST_REQUIRED", "ids from another connection are refused: {}", unissued.face);
    let elsewhere = server.call(
        "read",
        json!({"mode": "file", "target": "src/lib.rs", "candidate_id": candidate, "session_id": "other"}),
    );
    assert_eq!(elsewhere.code(), "SEARCH_FIRST_REQUIRED", "refs are per session: {}", elsewhere.face);
    let mismatch = server.call(
        "read",
        json!({"mode": "file", "target": "src/other.rs", "candidate_id": candidate, "session_id": "task"}),
    );
    assert_eq!(mismatch.code(), "CANDIDATE_REF_REQUIRED");
    assert_eq!(mismatch.envelope["error"]["gate_context"]["provided_target"], json!("src/other.rs"));
    for call in mismatch.next_calls() {
        let replay = server.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(!replay.is_error, "replaying {call}: {}", replay.face);
    }
}

/// Budgets: a per-read ceiling clamps softly; the session limit refuses with a search;
/// metrics count exactly; `manage metrics` always reports `drop_count_by_type`.
#[test]
fn budget_limits_and_exact_metrics() {
    let dir = workspace();
    let mut server = Server::start(dir.path(), &["--max-reads-per-session", "3"], &[]);
    let soft = server.call(
        "read",
        json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 10, "max_lines": 5000}),
    );
    assert_eq!(soft.envelope["meta"]["stabilization"]["budget_state"], json!("SOFT_LIMIT"), "{}", soft.face);
    assert_eq!(soft.reasons(), json!(["BUDGET_SOFT_LIMIT"]));
    server.call("search", json!({"query": "fn f20()", "type": "text"}));
    // The search had hits: the allowance starts again (§9.4).
    let second =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 20, "end_line": 24}));
    assert!(!second.face.contains("── session"), "1 of 3 reads since the search: {}", second.face);
    server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 25, "end_line": 26}));
    let fourth =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 25, "end_line": 27}));
    assert!(
        fourth.face.contains("── session [BUDGET_NEAR_LIMIT]: read allowance used up (3/3 reads"),
        "{}",
        fourth.face
    );
    assert_eq!(fourth.reasons(), json!(["DUPLICATE_READ_ELIDED", "BUDGET_NEAR_LIMIT"]), "{}", fourth.face);
    let hard =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 30, "end_line": 31}));
    assert_eq!(hard.code(), "BUDGET_EXCEEDED");
    assert_eq!(hard.reasons(), json!(["BUDGET_HARD_LIMIT"]));
    // Its next calls, replayed in order: a search for the file, then the read, served.
    let calls = hard.next_calls();
    assert_eq!((calls[0]["tool"].clone(), calls[1]["tool"].clone()), (json!("search"), json!("read")), "{}", hard.face);
    for call in &calls {
        let replay = server.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(!replay.is_error, "replaying {call}: {}", replay.face);
    }
    let metrics = server.call("manage", json!({"command": "metrics"}));
    assert!(!metrics.is_error, "{}", metrics.face);
    let counted = &metrics.envelope["meta"]["metrics"]["session"]["metrics"];
    assert_eq!(counted["reads_count"], json!(5), "totals since the session began stay");
    assert_eq!(counted["reads_lines_total"], json!(10 + 5 + 2 + 1 + 2), "lines 25–26 are not sent twice");
    assert_eq!(counted["search_count"], json!(2));
    assert_eq!(counted["max_read_span"], json!(10));
    assert!(metrics.envelope["meta"]["metrics"]["analytics"]["drop_count_by_type"].is_object());
    // The binary's allocator counts its heap: held bytes within what it keeps resident.
    let heap = &metrics.envelope["meta"]["metrics"]["heap"];
    assert_eq!(heap["allocator"], json!("jemalloc"), "{}", metrics.envelope);
    let (allocated, resident) = (heap["allocated_bytes"].as_u64().unwrap(), heap["resident_bytes"].as_u64().unwrap());
    assert!(allocated > 0 && allocated <= resident, "allocated {allocated}, resident {resident}");
}

/// Relevance warns outside the last searches' results; aggregation does not resend lines;
/// reason codes come in the fixed order.
#[test]
fn relevance_aggregation_and_reason_codes() {
    let dir = workspace();
    let mut server = Server::start(dir.path(), &[], &[]);
    server.call("search", json!({"query": "fn f7()", "type": "text"}));
    let miss = server.call("read", json!({"mode": "snippet", "target": "src/other.rs", "start_line": 1}));
    assert!(!miss.is_error);
    assert_eq!(miss.reasons(), json!(["LOW_RELEVANCE_OUTSIDE_TOPK", "LOW_RELEVANCE"]));
    assert!(
        miss.face.contains("── session [LOW_RELEVANCE_OUTSIDE_TOPK, LOW_RELEVANCE]: this target seems unrelated"),
        "{}",
        miss.face
    );
    assert_eq!(miss.envelope["meta"]["stabilization"]["alternatives"][0]["path"], json!("src/lib.rs"));
    let hit = server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 10}));
    assert_eq!(hit.reasons(), json!([]), "{}", hit.face);
    let again =
        server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 5, "end_line": 12}));
    assert!(again.face.contains("── lines 5–10 unchanged since read #2"), "{}", again.face);
    assert!(again.face.contains("11 fn f11()"), "{}", again.face);
    assert_eq!(again.envelope["content"], json!("fn f11() -> u32 { 11 }\nfn f12() -> u32 { 12 }\n"));
    let degraded =
        server.call("read", json!({"mode": "snippet", "target": "src/other.rs", "start_line": 1, "max_lines": 900}));
    assert_eq!(
        degraded.reasons(),
        json!(["BUDGET_SOFT_LIMIT", "LOW_RELEVANCE_OUTSIDE_TOPK", "DUPLICATE_READ_ELIDED", "LOW_RELEVANCE"]),
        "{}",
        degraded.face
    );
}

/// strict_session_id: a call without one is refused, and the call it offers passes.
#[test]
fn strict_session_ids() {
    let dir = workspace();
    let mut server = Server::start(dir.path(), &[], &[("LOUPE_STRICT_SESSION_ID", "true")]);
    let refused = server.call("search", json!({"query": "fn f7()", "type": "text"}));
    assert_eq!(refused.code(), "SESSION_ID_REQUIRED");
    assert_eq!(refused.reasons(), json!(["SESSION_ID_REQUIRED"]));
    let retry = refused.next_calls()[0].clone();
    assert_eq!(retry["arguments"]["session_id"], json!("main"));
    let passed = server.call("search", retry["arguments"].clone());
    assert!(!passed.is_error, "{}", passed.face);
    let status = server.call("manage", json!({"command": "status", "session_id": "main"}));
    assert_eq!(status.envelope["meta"]["status"]["session"]["metrics"]["search_count"], json!(1), "{}", status.face);
    assert_eq!(status.envelope["meta"]["status"]["policy"]["strict_session_id"], json!(true));
}

/// A connection id the client sends is telemetry only: it lands in the analytics log and never
/// joins two connections into one session.
#[test]
fn a_client_connection_id_is_telemetry_only() {
    let dir = workspace();
    let cache = tempfile::tempdir().unwrap();
    let env = [("XDG_CACHE_HOME", cache.path().to_str().unwrap())];
    let claimed = json!({"connection_id": "same-client"});
    let mut first = Server::start(dir.path(), &[], &env);
    let search = first.call_with_meta("search", json!({"query": "fn f7()", "type": "text"}), claimed.clone());
    let candidate = search.envelope["meta"]["results"][0]["candidate_id"].clone();
    let mut second = Server::start(dir.path(), &[], &env);
    let read = second.call_with_meta(
        "read",
        json!({"mode": "file", "target": "src/lib.rs", "candidate_id": candidate}),
        claimed,
    );
    assert_eq!(read.code(), "SEARCH_FIRST_REQUIRED", "{}", read.face);
    // The writer appends in batches every 25 ms, off the hot path; give it time before the kill.
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(first);
    drop(second);
    let log = walk_for(cache.path(), "analytics.jsonl").expect("an analytics log under the index dir");
    let text = std::fs::read_to_string(log).unwrap();
    let events: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert!(events.iter().any(|event| event["type"] == "search" && event["client_connection_id"] == "same-client"));
    assert!(events.iter().any(|event| event["type"] == "refusal" && event["code"] == "SEARCH_FIRST_REQUIRED"));
    let sessions: std::collections::BTreeSet<&str> =
        events.iter().filter_map(|event| event["session"].as_str()).filter(|key| !key.is_empty()).collect();
    assert_eq!(sessions.len(), 2, "two connections, two sessions: {sessions:?}");
}

/// A full analytics queue drops the newest events and counts them by type, the same way in
/// every run, and the calls are served regardless.
#[test]
fn analytics_overflow_is_counted_by_type() {
    let run = || {
        let dir = workspace();
        let env = [("LOUPE_TEST_HOOKS", "1"), ("LOUPE_TEST_ANALYTICS_CAPACITY", "2")];
        let mut server = Server::start(dir.path(), &[], &env);
        assert!(!server.call("search", json!({"query": "fn f7()", "type": "text"})).is_error);
        for line in 1..=3 {
            assert!(
                !server.call("read", json!({"mode": "snippet", "target": "src/lib.rs", "start_line": line})).is_error
            );
        }
        assert!(server.call("read", json!({"mode": "file", "target": "src/other.rs"})).is_error);
        let metrics = server.call("manage", json!({"command": "metrics"}));
        metrics.envelope["meta"]["metrics"]["analytics"].clone()
    };
    let counters = run();
    assert_eq!(counters["enqueued"], json!(2));
    assert_eq!(counters["drop_count_by_type"], json!({"read": 2, "refusal": 1}));
    assert_eq!(counters, run());
}

fn walk_for(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = walk_for(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|file| file == name) {
            return Some(path);
        }
    }
    None
}
