//! Conformance: every message the real `loupe serve` writes, checked against the official MCP JSON
//! schemas of the revisions it negotiates (2025-06-18, draft-07 `definitions`; 2025-11-25, JSON
//! Schema 2020-12 `$defs`), vendored verbatim under `tests/mcp-schema/` so CI needs no network.
//!
//! Strict clients validate what a server sends — the JSON-RPC envelope, each result against its
//! method's result type, and a tool's `structuredContent` against the `outputSchema` it declared —
//! and refuse what does not match, so a schema slip is a broken server for them even when rmcp's
//! own client is happy. Per revision this drives one raw stdio session (`initialize`,
//! `notifications/initialized`, `tools/list`, `tools/call` on `read` for success, a cut read, a
//! tool error and no arguments, an unknown method, `ping`) and checks:
//! - every stdout line is a `JSONRPCMessage`, and also the specific result / error / request /
//!   notification shape it claims to be (so a failure names the exact field, not just `anyOf`);
//! - each result matches `InitializeResult`, `ListToolsResult`, `CallToolResult` or `EmptyResult`;
//! - each tool's `inputSchema` and `outputSchema` are valid JSON Schemas, every `structuredContent`
//!   of that tool (success and error alike) validates against its `outputSchema`, and every tool
//!   declares all four behaviour hints in `annotations`;
//! - the `tools/list` result stays small, because it sits in every prompt of every session.
//!
//! Failures are collected and reported together, each with the offending message and the
//! validator's instance and schema paths.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

/// How long any one answer (or the server's exit after stdin closes) may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A proxy for "under about 3,000 tokens": tokenizers average roughly four bytes of JSON per token,
/// so 12,000 bytes of compact `tools/list` result is about 3,000 tokens. Bytes keep the test free
/// of a tokenizer and of its model files.
const TOOLS_LIST_MAX_BYTES: usize = 12_000;

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
    validator: Validator,
}

/// The definitions of one revision that the session is checked against.
struct Schema {
    revision: &'static str,
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
        // Draft-07 keeps its definitions in `definitions`, 2020-12 in `$defs`.
        let defs_key = if document.get("$defs").is_some() { "$defs" } else { "definitions" };
        let defs = document[defs_key].as_object().unwrap_or_else(|| panic!("{revision}: no `{defs_key}` object"));
        let pick = |names: &[&str]| -> String {
            let name = names.iter().find(|name| defs.contains_key(**name));
            name.unwrap_or_else(|| panic!("{revision}: none of {names:?} is defined")).to_string()
        };
        let compile = |name: String| -> Definition {
            // The definition referenced from a document that keeps the file's `$schema` (so the
            // right draft applies) and all of its definitions (so every `$ref` resolves offline).
            let mut wrapper = Map::new();
            wrapper.insert("$schema".into(), document["$schema"].clone());
            wrapper.insert("$ref".into(), json!(format!("#/{defs_key}/{name}")));
            wrapper.insert(defs_key.into(), Value::Object(defs.clone()));
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&Value::Object(wrapper))
                .unwrap_or_else(|error| panic!("{revision}: {name} does not compile: {error}"));
            // Guard against a vacuous validator (a `$ref` that silently resolved to `{}`).
            assert!(!validator.is_valid(&json!("not a message")), "{revision}: {name} accepts a bare string");
            Definition { name, validator }
        };
        Schema {
            revision,
            message: compile(pick(&["JSONRPCMessage"])),
            result_response: compile(pick(&["JSONRPCResultResponse", "JSONRPCResponse"])),
            error_response: compile(pick(&["JSONRPCErrorResponse", "JSONRPCError"])),
            server_request: compile(pick(&["ServerRequest"])),
            server_notification: compile(pick(&["ServerNotification"])),
            initialize: compile(pick(&["InitializeResult"])),
            list_tools: compile(pick(&["ListToolsResult"])),
            call_tool: compile(pick(&["CallToolResult"])),
            empty: compile(pick(&["EmptyResult"])),
        }
    }
}

/// Every validator complaint about `instance`, one line each with both paths.
fn errors_of(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| {
            format!(
                "at instance `{}` (schema `{}`, via `{}`): {error}",
                error.instance_path(),
                error.schema_path(),
                error.evaluation_path()
            )
        })
        .collect()
}

/// A test workspace with one small file.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    dir
}

/// A raw stdio session whose every received line is checked before it is looked at.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    schema: Schema,
    failures: Vec<String>,
}

impl Session {
    fn start(root: &Path, schema: Schema) -> Session {
        let mut child = Command::new(LOUPE)
            .arg("serve")
            .arg("--root")
            .arg(root)
            .env_remove("LOUPE_TEST_HOOKS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Session { child, stdin, lines, schema, failures: Vec::new() }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Records a failure if `instance` does not match `definition`.
    fn check(&mut self, definition_of: fn(&Schema) -> &Definition, instance: &Value, what: &str, message: &Value) {
        let definition = definition_of(&self.schema);
        let errors = errors_of(&definition.validator, instance);
        if !errors.is_empty() {
            let failure = format!(
                "[{}] {what} is not a valid `{}`:\n    {}\n  message: {message}",
                self.schema.revision,
                definition.name,
                errors.join("\n    ")
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
            let line = match self.lines.recv_timeout(left) {
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

    /// Closes stdin and checks whatever the server still writes until it exits.
    fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a strict client derives from `tools/list` for each tool.
struct ToolContract {
    output: Option<Validator>,
}

/// Compiles a schema the server declared: its own `$schema` if it names one, else JSON Schema
/// 2020-12 (the MCP default for `inputSchema` and `outputSchema`). It must also be a valid schema.
fn compile_declared(schema: &Value) -> Result<Validator, String> {
    let mut options = jsonschema::options().should_validate_formats(true);
    if schema.get("$schema").is_none() {
        options = options.with_draft(Draft::Draft202012);
        let meta = jsonschema::draft202012::meta::validate(schema);
        meta.map_err(|error| format!("not a valid 2020-12 schema at `{}`: {error}", error.instance_path()))?;
    } else {
        let meta = jsonschema::meta::validate(schema);
        meta.map_err(|error| format!("not a valid schema at `{}`: {error}", error.instance_path()))?;
    }
    options.build(schema).map_err(|error| format!("does not compile: {error}"))
}

/// Checks the tools of a `tools/list` result and returns what their calls are checked against.
fn tool_contracts(revision: &str, tools: &Value, failures: &mut Vec<String>) -> BTreeMap<String, ToolContract> {
    let mut contracts = BTreeMap::new();
    for tool in tools.as_array().map(Vec::as_slice).unwrap_or_default() {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        if let Err(error) = compile_declared(&tool["inputSchema"]) {
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
            Some(schema) => match compile_declared(schema) {
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

    let tools = session.call(1, "tools/list", json!({}), |schema| &schema.list_tools);
    let bytes = serde_json::to_string(&tools).unwrap().len();
    if bytes >= TOOLS_LIST_MAX_BYTES {
        session.failures.push(format!(
            "[{revision}] the tools/list result is {bytes} bytes, over the {TOOLS_LIST_MAX_BYTES}-byte (~3,000-token) budget"
        ));
    }
    let contracts = tool_contracts(revision, &tools["tools"], &mut session.failures);
    assert!(contracts.contains_key("read"), "[{revision}] tools/list has no `read`: {tools}");

    // (arguments, expected isError); `None` sends no `arguments` member at all.
    let calls = [
        (Some(json!({"mode": "snippet", "target": "a.txt", "start_line": 1, "end_line": 2})), false),
        (Some(json!({"mode": "file", "target": "a.txt", "limit": 1})), false),
        (Some(json!({"mode": "file", "target": "missing.txt"})), true),
        (None, true),
    ];
    let mut checked_structured = [0usize; 2];
    for (id, (arguments, expect_error)) in (2..).zip(calls) {
        let mut params = json!({"name": "read"});
        if let Some(arguments) = &arguments {
            params["arguments"] = arguments.clone();
        }
        let result = session.call(id, "tools/call", params.clone(), |schema| &schema.call_tool);
        let is_error = result["isError"].as_bool().unwrap_or(false);
        assert_eq!(is_error, expect_error, "[{revision}] isError of read {params}: {result}");
        let Some(output) = contracts["read"].output.as_ref() else { continue };
        match result.get("structuredContent") {
            Some(structured) => {
                checked_structured[usize::from(is_error)] += 1;
                let errors = errors_of(output, structured);
                if !errors.is_empty() {
                    session.failures.push(format!(
                        "[{revision}] structuredContent of read {params} does not match the tool's outputSchema:\n    {}\n  result: {result}",
                        errors.join("\n    ")
                    ));
                }
            }
            // Strict clients (the TypeScript SDK among them) reject a successful result without it.
            None if !is_error => session.failures.push(format!(
                "[{revision}] read {params} declares an outputSchema but returned no structuredContent: {result}"
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

    let failures = session.finish();
    let mut report = String::new();
    for failure in &failures {
        writeln!(report, "- {failure}").unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} message(s) of the {revision} session break the MCP schema:\n{report}",
        failures.len()
    );
}
