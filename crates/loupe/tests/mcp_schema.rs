//! Conformance: every message the real `loupe serve` writes, checked against the official MCP JSON
//! schemas of the revisions it negotiates (2025-06-18, draft-07 `definitions`; 2025-11-25, JSON
//! Schema 2020-12 `$defs`), vendored verbatim under `tests/mcp-schema/` so CI needs no network.
//!
//! Strict clients validate what a server sends — the JSON-RPC envelope, each result against its
//! method's result type, and a tool's `structuredContent` against the `outputSchema` it declared —
//! and refuse what does not match, so a schema slip is a broken server for them even when rmcp's
//! own client is happy. Per revision this drives one raw stdio session (`initialize`,
//! `notifications/initialized`, `tools/list`, `tools/call` on `read` for success, a cut read, a
//! tool error and no arguments; `edit` applied and refused; `manage` history, undo and a command
//! not built yet; an unknown method, `ping`) and checks:
//! - every stdout line is a `JSONRPCMessage`, and also the specific result / error / request /
//!   notification shape it claims to be (so a failure names the exact field, not just `anyOf`);
//! - each result matches `InitializeResult`, `ListToolsResult`, `CallToolResult` or `EmptyResult`;
//! - each tool's `inputSchema` and `outputSchema` are valid JSON Schemas, every `structuredContent`
//!   of that tool (success and error alike) validates against its `outputSchema`, and every tool
//!   declares all four behaviour hints in `annotations`;
//! - the `tools/list` result stays small, because it sits in every prompt of every session.
//!
//! A third session lists the legacy names (`--legacy-tools listed`, §12) and calls them.
//!
//! Failures are collected and reported together, each with the offending message and the
//! validator's instance and schema paths.

use crate::common;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::Path;
use std::process::Command;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

/// How long any one answer (or the server's exit after stdin closes) may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A proxy for §4's 2,450 tokens: o200k averages about 4.2 bytes of this JSON per token, so
/// 10,400 bytes of compact `tools/list` result is about 2,450 tokens (the exact count is
/// `loupe-mcp`'s `tools_list_stays_under_its_token_budget`). Bytes keep this test free of a
/// tokenizer.
const TOOLS_LIST_MAX_BYTES: usize = 10_400;

const SCHEMA_2025_06_18: &str = include_str!("mcp-schema/2025-06-18/schema.json");
const SCHEMA_2025_11_25: &str = include_str!("mcp-schema/2025-11-25/schema.json");

#[test]
fn every_message_of_a_2025_06_18_session_matches_the_schema() {
    run_session("2025-06-18", SCHEMA_2025_06_18);
}

#[test]
fn every_message_of_a_2025_11_25_session_matches_the_schema() {
    run_session("2025-11-25", SCHEMA_2025_11_25);
}

/// One compiled definition of a schema revision.
struct Definition {
    name: String,
    index: SchemaIndex,
}

/// The definitions of one revision that the session is checked against.
struct Schema {
    revision: &'static str,
    compiled: Schemas,
    message: Definition,
    result_response: Definition,
    error_response: Definition,
    server_request: Definition,
    server_notification: Definition,
    initialize: Definition,
    list_tools: Definition,
    call_tool: Definition,
    empty: Definition,
}

impl Schema {
    fn load(revision: &'static str, text: &str) -> Schema {
        let document: Value = serde_json::from_str(text).unwrap();
        // Draft-07 keeps its definitions in `definitions`, 2020-12 in `$defs`; the file's own
        // `$schema` picks the draft, and every `$ref` resolves inside the file, offline.
        let defs_key = if document.get("$defs").is_some() { "$defs" } else { "definitions" };
        let defs = document[defs_key].as_object().unwrap_or_else(|| panic!("{revision}: no `{defs_key}` object"));
        let pick = |names: &[&str]| -> String {
            let name = names.iter().find(|name| defs.contains_key(**name));
            name.unwrap_or_else(|| panic!("{revision}: none of {names:?} is defined")).to_string()
        };
        let names = [
            pick(&["JSONRPCMessage"]),
            pick(&["JSONRPCResultResponse", "JSONRPCResponse"]),
            pick(&["JSONRPCErrorResponse", "JSONRPCError"]),
            pick(&["ServerRequest"]),
            pick(&["ServerNotification"]),
            pick(&["InitializeResult"]),
            pick(&["ListToolsResult"]),
            pick(&["CallToolResult"]),
            pick(&["EmptyResult"]),
        ];
        let location = format!("urn:mcp-schema:{revision}");
        let mut compiler = Compiler::new();
        compiler.enable_format_assertions();
        compiler.add_resource(&location, document.clone()).unwrap();
        let mut compiled = Schemas::new();
        let [
            message,
            result_response,
            error_response,
            server_request,
            server_notification,
            initialize,
            list_tools,
            call_tool,
            empty,
        ] = names.map(|name| {
            let index = compiler
                .compile(&format!("{location}#/{defs_key}/{name}"), &mut compiled)
                .unwrap_or_else(|error| panic!("{revision}: {name} does not compile: {error:#}"));
            // Guard against a vacuous validator (a definition that accepts anything).
            let bare = json!("not a message");
            assert!(compiled.validate(&bare, index).is_err(), "{revision}: {name} accepts a bare string");
            Definition { name, index }
        });
        Schema {
            revision,
            compiled,
            message,
            result_response,
            error_response,
            server_request,
            server_notification,
            initialize,
            list_tools,
            call_tool,
            empty,
        }
    }

    fn errors(&self, definition: &Definition, instance: &Value) -> Option<String> {
        errors_of(&self.compiled, definition.index, instance)
    }
}

/// The validator's complaint about `instance`, if any: the tree of failed keywords, each line with
/// its instance location and its absolute schema location (an `anyOf` that no branch matched lists
/// why each branch failed).
fn errors_of(compiled: &Schemas, index: SchemaIndex, instance: &Value) -> Option<String> {
    let error = compiled.validate(instance, index).err()?;
    Some(format!("{error:#}").replace('\n', "\n    "))
}

/// A test workspace with one small file.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    dir
}

/// A raw stdio session whose every received line is checked before it is looked at.
struct Session {
    io: common::Lines,
    schema: Schema,
    failures: Vec<String>,
    /// The notifications checked, by method.
    notified: BTreeMap<String, usize>,
}

impl Session {
    fn start(root: &Path, schema: Schema) -> Session {
        Session::start_with(root, schema, &[])
    }

    /// `start` with more flags for `loupe serve`.
    fn start_with(root: &Path, schema: Schema, args: &[&str]) -> Session {
        let mut command = Command::new(LOUPE);
        command
            .env("XDG_CACHE_HOME", std::env::temp_dir().join("loupe-test-cache"))
            .arg("serve")
            .arg("--root")
            .arg(root)
            .args(args)
            .env_remove("LOUPE_TEST_HOOKS")
            .env_remove("LOUPE_DISABLE_LEGACY")
            .env_remove("LOUPE_LEGACY_TOOLS");
        Session { io: common::Lines::spawn(command), schema, failures: Vec::new(), notified: BTreeMap::new() }
    }

    fn send(&mut self, message: &Value) {
        self.io.send(message);
    }

    /// Records a failure if `instance` does not match `definition`.
    fn check(&mut self, definition_of: fn(&Schema) -> &Definition, instance: &Value, what: &str, message: &Value) {
        let definition = definition_of(&self.schema);
        if let Some(errors) = self.schema.errors(definition, instance) {
            let failure = format!(
                "[{}] {what} is not a valid `{}`:\n    {errors}\n  message: {message}",
                self.schema.revision, definition.name
            );
            self.failures.push(failure);
        }
    }

    /// Checks one stdout line: JSON, a `JSONRPCMessage`, and the specific shape it claims.
    fn accept(&mut self, line: &str) -> Value {
        let message: Value = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                self.failures
                    .push(format!("[{}] stdout carried a non-JSON line ({error}): {line}", self.schema.revision));
                return Value::Null;
            }
        };
        self.check(|schema| &schema.message, &message, "a line", &message);
        if message.get("method").is_some() {
            if message.get("id").is_some() {
                self.check(|schema| &schema.server_request, &message, "a server request", &message);
            } else {
                self.check(|schema| &schema.server_notification, &message, "a server notification", &message);
                *self.notified.entry(message["method"].as_str().unwrap_or_default().to_owned()).or_default() += 1;
            }
        } else if message.get("error").is_some() {
            self.check(|schema| &schema.error_response, &message, "an error response", &message);
        } else {
            self.check(|schema| &schema.result_response, &message, "a result response", &message);
        }
        message
    }

    /// Sends a request and returns its response; other lines on the way are checked as well, and
    /// a request from the server is refused so it never waits on us.
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.io.receive(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("[{}] no answer to {method} within {TIMEOUT:?}", self.schema.revision)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("[{}] the server closed stdout before answering {method}", self.schema.revision)
                }
            };
            let message = self.accept(&line);
            if message.get("method").is_some() {
                if let Some(server_id) = message.get("id") {
                    let refusal = json!({"jsonrpc": "2.0", "id": server_id, "error": {"code": -32601, "message": "not supported by this test"}});
                    self.send(&refusal);
                }
                continue;
            }
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            self.failures.push(format!(
                "[{}] unexpected line while waiting for {method} (id {id}): {line}",
                self.schema.revision
            ));
        }
    }

    /// A request that must succeed: its `result` is checked against `definition` and returned.
    fn call(&mut self, id: i64, method: &str, params: Value, definition: fn(&Schema) -> &Definition) -> Value {
        let response = self.request(id, method, params);
        let Some(result) = response.get("result").cloned() else {
            self.failures.push(format!("[{}] {method} was answered with an error: {response}", self.schema.revision));
            return Value::Null;
        };
        self.check(definition, &result, &format!("the result of {method}"), &response);
        result
    }

    /// Waits until at least one notification of `method` has been checked, reading (and checking)
    /// whatever comes first. A log message is sent by its own task after the event that made it,
    /// so it may trail the answer of the request that caused it.
    fn await_notification(&mut self, method: &str) {
        let deadline = Instant::now() + TIMEOUT;
        while !self.notified.contains_key(method) {
            match self.io.receive(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    self.accept(&line);
                }
                Err(_) => {
                    let failure = format!("[{}] no {method} arrived within {TIMEOUT:?}", self.schema.revision);
                    self.failures.push(failure);
                    return;
                }
            }
        }
    }

    /// Closes stdin and checks whatever the server still writes until it exits.
    fn finish(mut self) -> Vec<String> {
        self.io.close_stdin();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.io.receive(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    self.accept(&line);
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.failures.push(format!(
                        "[{}] the server did not close stdout within {TIMEOUT:?} of stdin closing",
                        self.schema.revision
                    ));
                    break;
                }
            }
        }
        std::mem::take(&mut self.failures)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A hang or a failed assertion ends the session early: show what was collected until then.
        if std::thread::panicking() && !self.failures.is_empty() {
            eprintln!("failures collected before the session ended:\n{}", report(&self.failures));
        }
    }
}

/// What a strict client derives from `tools/list` for each tool: its compiled `outputSchema`.
struct ToolContract {
    output: Option<(Schemas, SchemaIndex)>,
}

/// Compiles a schema the server declared, as a strict client does: its own `$schema` if it names
/// one, else JSON Schema 2020-12 (the MCP default for `inputSchema` and `outputSchema`). Compiling
/// also checks it against its draft's meta-schema.
fn compile_declared(location: &str, schema: &Value) -> Result<(Schemas, SchemaIndex), String> {
    let mut compiler = Compiler::new();
    compiler.set_default_draft(Draft::V2020_12);
    compiler.enable_format_assertions();
    compiler.add_resource(location, schema.clone()).map_err(|error| format!("{error:#}"))?;
    let mut compiled = Schemas::new();
    let index = compiler
        .compile(location, &mut compiled)
        .map_err(|error| format!("is not a valid schema: {error:#}").replace('\n', "\n    "))?;
    Ok((compiled, index))
}

/// Checks the tools of a `tools/list` result and returns what their calls are checked against.
fn tool_contracts(revision: &str, tools: &Value, failures: &mut Vec<String>) -> BTreeMap<String, ToolContract> {
    let mut contracts = BTreeMap::new();
    for tool in tools.as_array().map(Vec::as_slice).unwrap_or_default() {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        if let Err(error) = compile_declared(&format!("urn:loupe-tool:{name}:input"), &tool["inputSchema"]) {
            failures.push(format!("[{revision}] tool `{name}`: inputSchema {error}\n  tool: {tool}"));
        }
        let annotations = &tool["annotations"];
        for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
            if !annotations[hint].is_boolean() {
                failures.push(format!(
                    "[{revision}] tool `{name}`: annotations.{hint} is not declared as a boolean\n  annotations: {annotations}"
                ));
            }
        }
        let output = match tool.get("outputSchema") {
            None => None,
            Some(schema) => match compile_declared(&format!("urn:loupe-tool:{name}:output"), schema) {
                Ok(validator) => Some(validator),
                Err(error) => {
                    failures.push(format!("[{revision}] tool `{name}`: outputSchema {error}\n  tool: {tool}"));
                    None
                }
            },
        };
        contracts.insert(name, ToolContract { output });
    }
    contracts
}

fn run_session(revision: &'static str, schema_text: &str) {
    let schema = Schema::load(revision, schema_text);
    let dir = workspace();
    let mut session = Session::start(dir.path(), schema);

    let initialize = session.call(
        0,
        "initialize",
        json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "mcp-schema-test", "version": "1"}}),
        |schema| &schema.initialize,
    );
    assert_eq!(initialize["protocolVersion"], json!(revision), "the server must agree to {revision}: {initialize}");
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // Log messages at every level and progress for every call: their notifications are checked too.
    session.call(30, "logging/setLevel", json!({"level": "debug"}), |schema| &schema.empty);

    let tools = session.call(1, "tools/list", json!({}), |schema| &schema.list_tools);
    let bytes = serde_json::to_string(&tools).unwrap().len();
    if bytes >= TOOLS_LIST_MAX_BYTES {
        session.failures.push(format!(
            "[{revision}] the tools/list result is {bytes} bytes, over the {TOOLS_LIST_MAX_BYTES}-byte (~3,000-token) budget"
        ));
    }
    let contracts = tool_contracts(revision, &tools["tools"], &mut session.failures);
    assert!(contracts.contains_key("read"), "[{revision}] tools/list has no `read`: {tools}");

    // (tool, arguments, expected isError); `None` sends no `arguments` member at all. The
    // sequence walks the session layer too: a read refused by the gate, a search, a read with
    // the search's ref, an edit and its undo, and `manage`.
    let calls = [
        ("read", Some(json!({"mode": "snippet", "target": "a.txt", "start_line": 1, "end_line": 2})), false),
        ("read", Some(json!({"mode": "file", "target": "a.txt", "offset": 1, "limit": 1})), false),
        ("read", Some(json!({"mode": "snippet", "target": "missing.txt", "start_line": 1})), true),
        ("read", None, true),
        ("read", Some(json!({"mode": "file", "target": "a.txt"})), true),
        ("search", Some(json!({"query": "gamma", "type": "text"})), false),
        ("read", Some(json!({"mode": "file", "target": "a.txt", "candidate_id": "<from the search>"})), false),
        ("read", Some(json!({"mode": "snippet", "target": "a.txt", "start_line": 1, "end_line": 2})), false),
        ("edit", Some(json!({"edits": [{"path": "a.txt", "old_string": "beta", "new_string": "BETA"}]})), false),
        ("edit", Some(json!({"edits": [{"path": "a.txt", "old_string": "nowhere", "new_string": "x"}]})), true),
        ("manage", Some(json!({"command": "history"})), false),
        ("manage", Some(json!({"command": "undo"})), false),
        ("manage", Some(json!({"command": "metrics"})), false),
        ("manage", Some(json!({"command": "reindex"})), false),
    ];
    let mut checked_structured = [0usize; 2];
    let mut candidate_id = Value::Null;
    for (id, (tool, arguments, expect_error)) in (2..).zip(calls) {
        let mut params = json!({"name": tool, "_meta": {"progressToken": format!("p{id}")}});
        if let Some(mut arguments) = arguments {
            if arguments.get("candidate_id").is_some() {
                arguments["candidate_id"] = candidate_id.clone();
            }
            params["arguments"] = arguments;
        }
        let arguments = params.get("arguments").cloned();
        let result = session.call(id, "tools/call", params.clone(), |schema| &schema.call_tool);
        let is_error = result["isError"].as_bool().unwrap_or(false);
        assert_eq!(is_error, expect_error, "[{revision}] isError of {tool} {params}: {result}");
        if tool == "search" {
            // The top hit's read, by its id (a text hit's row is `[path, line, shown]`).
            candidate_id = result["structuredContent"]["next_calls"][0]["arguments"]["candidate_id"].clone();
        }
        if arguments.as_ref().is_some_and(|arguments| arguments.get("limit").is_some()) {
            // The cut read must really be cut, or its shape goes unchecked.
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(text.contains("→ next:"), "[{revision}] read {params} was not cut: {result}");
        }
        let Some(contract) = contracts.get(tool) else {
            session.failures.push(format!("[{revision}] tools/list has no `{tool}`"));
            continue;
        };
        let Some((compiled, index)) = contract.output.as_ref() else { continue };
        match result.get("structuredContent") {
            Some(structured) => {
                checked_structured[usize::from(is_error)] += 1;
                if let Some(errors) = errors_of(compiled, *index, structured) {
                    session.failures.push(format!(
                        "[{revision}] structuredContent of {tool} {params} does not match the tool's outputSchema:\n    {errors}\n  result: {result}"
                    ));
                }
            }
            // Strict clients (the TypeScript SDK among them) reject a successful result without it.
            None if !is_error => session.failures.push(format!(
                "[{revision}] {tool} {params} declares an outputSchema but returned no structuredContent: {result}"
            )),
            None => {}
        }
    }
    if contracts["read"].output.is_some() {
        assert!(
            checked_structured.iter().all(|&count| count > 0),
            "[{revision}] structuredContent was checked on {checked_structured:?} (success, error) results; both paths must be covered"
        );
    }

    let unknown = session.request(20, "no/such_method", json!({}));
    assert_eq!(unknown["error"]["code"], json!(-32601), "[{revision}] an unknown method is -32601: {unknown}");

    session.call(21, "ping", json!({}), |schema| &schema.empty);
    // The unknown method was logged at debug level; its message may trail the answers.
    session.await_notification("notifications/message");
    let notified = session.notified.clone();
    let failures = session.finish();
    for method in ["notifications/progress", "notifications/message"] {
        assert!(
            notified.get(method).is_some_and(|&count| count > 0),
            "[{revision}] no {method} was checked: {notified:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} message(s) of the {revision} session break the MCP schema:\n{}",
        failures.len(),
        report(&failures)
    );
}

/// §12: with `--legacy-tools listed`, the deprecated names in `tools/list` (titles, `_meta`, their
/// old parameters) and what they answer (the old result fields beside loupe's own) match the
/// schema and the output schemas the names declare. This list may exceed the default's budget.
#[test]
fn a_session_with_the_legacy_names_listed_matches_the_schema() {
    let revision = "2025-11-25";
    let dir = workspace();
    let mut session =
        Session::start_with(dir.path(), Schema::load(revision, SCHEMA_2025_11_25), &["--legacy-tools", "listed"]);
    let initialize =
        json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}});
    session.call(0, "initialize", initialize, |schema| &schema.initialize);
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = session.call(1, "tools/list", json!({}), |schema| &schema.list_tools);
    let contracts = tool_contracts(revision, &tools["tools"], &mut session.failures);
    let legacy = loupe_engine::legacy::LEGACY_TOOLS.iter().map(|legacy| legacy.name);
    assert!(legacy.clone().all(|name| contracts.contains_key(name)), "{tools}");
    assert_eq!(contracts.len(), 5 + legacy.count());

    let calls = [
        ("read_code", json!({"filePath": "a.txt", "view": "fragment", "lineRange": "1-2"}), false),
        ("get_snippet", json!({"path": "a.txt", "start_line": 2, "end_line": 3}), false),
        ("read_file", json!({"path": "a.txt"}), true),
        ("search_project", json!({"query": "gamma", "maxResults": 2}), false),
        (
            "edit_code",
            json!({"edits": [{"filePath": "a.txt", "operation": "replace", "targetString": "beta", "replacementString": "BETA"}], "dryRun": true}),
            false,
        ),
        (
            "edit_code",
            json!({"edits": [{"filePath": "a.txt", "operation": "replace", "targetString": "nowhere", "replacementString": "x"}]}),
            true,
        ),
        ("manage_project", json!({"command": "history"}), false),
    ];
    for (id, (tool, arguments, expect_error)) in (2..).zip(calls) {
        let params = json!({"name": tool, "arguments": arguments});
        let result = session.call(id, "tools/call", params.clone(), |schema| &schema.call_tool);
        assert_eq!(result["isError"].as_bool().unwrap_or(false), expect_error, "{tool} {params}: {result}");
        let structured = &result["structuredContent"];
        assert_eq!(
            structured["reason_codes"].as_array().and_then(|codes| codes.last()),
            Some(&json!("LEGACY_TOOL_DEPRECATED"))
        );
        let Some((compiled, index)) = contracts[tool].output.as_ref() else {
            session.failures.push(format!("[{revision}] `{tool}` declares no outputSchema"));
            continue;
        };
        if let Some(errors) = errors_of(compiled, *index, structured) {
            session.failures.push(format!(
                "[{revision}] structuredContent of {tool} {params} does not match its outputSchema:\n    {errors}\n  result: {result}"
            ));
        }
    }
    let failures = session.finish();
    assert!(failures.is_empty(), "the legacy session breaks the MCP schema:\n{}", report(&failures));
}

fn report(failures: &[String]) -> String {
    let mut report = String::new();
    for failure in failures {
        writeln!(report, "- {failure}").unwrap();
    }
    report
}

/// The validators are not vacuous: for each revision, known-good shapes pass and known-bad ones
/// fail, deep inside `$ref`s too (a bad hint inside a tool's annotations is three `$ref`s down).
#[test]
fn the_validators_accept_good_and_reject_bad_messages() {
    for (revision, text) in [("2025-06-18", SCHEMA_2025_06_18), ("2025-11-25", SCHEMA_2025_11_25)] {
        let schema = Schema::load(revision, text);
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
        let cases: [(&Definition, Value, bool); 14] = [
            (&schema.message, json!({"jsonrpc": "2.0", "id": 1, "result": {}}), true),
            (&schema.message, json!({"jsonrpc": "1.0", "id": 1, "result": {}}), false),
            (&schema.result_response, json!({"jsonrpc": "2.0", "id": "a", "result": {}}), true),
            (&schema.result_response, json!({"jsonrpc": "2.0", "id": 1.5, "result": {}}), false),
            (
                &schema.error_response,
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "m"}}),
                true,
            ),
            (&schema.error_response, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "E", "message": "m"}}), false),
            (
                &schema.initialize,
                json!({"protocolVersion": revision, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
                true,
            ),
            (&schema.initialize, json!({"protocolVersion": revision, "capabilities": {}}), false),
            (&schema.list_tools, json!({"tools": [tool]}), true),
            (
                &schema.list_tools,
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}]}),
                false,
            ),
            (&schema.call_tool, json!({"content": [{"type": "text", "text": "x"}], "isError": false}), true),
            (&schema.call_tool, json!({"content": [{"type": "text"}]}), false),
            (&schema.empty, json!({}), true),
            (&schema.empty, json!([]), false),
        ];
        for (definition, instance, valid) in cases {
            let errors = schema.errors(definition, &instance);
            assert_eq!(errors.is_none(), valid, "[{revision}] {} on {instance}: {errors:?}", definition.name);
        }
    }
}
