//! Search through MCP: what a user waits for. One `loupe serve` child on the built index is sent
//! the corpus's query set as raw `tools/call` lines over its stdin (the server's whole path:
//! transport, handler, session layer, engine, render, serialisation and the pipes; no client
//! library), next to `rg -m 20` on the same queries in the same run. Then the server's own figures
//! per stage (`manage metrics`, `latency.rs` in the engine), so a slower answer shows where the
//! time went.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::mcp::{self, Server};
use crate::queries::{Kind, QuerySet};
use crate::stats::millis;
use crate::worker::{WorkerOptions, proc_status_kb, rg_base};

/// One query, through MCP and through `rg -m 20`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct McpQuery {
    pub(crate) class: String,
    pub(crate) regex: bool,
    pub(crate) text: String,
    /// Client round trips: the line written to the answer line read.
    pub(crate) millis: Vec<f64>,
    /// `rg -m 20` spawn to exit, its output read.
    pub(crate) rg_millis: Vec<f64>,
    /// Bytes of the answer line.
    pub(crate) answer_bytes: usize,
    pub(crate) error: Option<String>,
}

/// One stage of the server's path, from `manage metrics`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct StageFigure {
    pub(crate) stage: String,
    pub(crate) count: u64,
    pub(crate) p50_ms: f64,
    pub(crate) p95_ms: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct McpSearch {
    pub(crate) queries: Vec<McpQuery>,
    pub(crate) stages: Vec<StageFigure>,
    /// `VmRSS` of the server after the queries.
    pub(crate) serve_rss_bytes: u64,
    /// How long after the untimed calls the server was settled (index ready, its start-up
    /// reconcile over, every file over the index's size limit summarised), when the timed calls
    /// began.
    #[serde(default)]
    pub(crate) settle_millis: f64,
    pub(crate) error: Option<String>,
}

/// Calls before the timed ones, per query (the server reconciles its index at start; these
/// also let it finish).
const UNTIMED: usize = 2;

/// The longest the bench waits for a server to settle before its timed calls.
const SETTLE_LIMIT: Duration = Duration::from_secs(600);

pub(crate) fn measure(options: &WorkerOptions, root: &Path, index_dir: &Path, set: &QuerySet) -> McpSearch {
    let mut result = McpSearch::default();
    if let Err(error) = run(options, root, index_dir, set, &mut result) {
        result.error = Some(error);
    }
    result
}

fn run(
    options: &WorkerOptions,
    root: &Path,
    index_dir: &Path,
    set: &QuerySet,
    result: &mut McpSearch,
) -> Result<(), String> {
    let mut server = Server::spawn(&options.loupe, root, index_dir).map_err(|error| format!("spawning: {error}"))?;
    server.send(&mcp::handshake()).map_err(|error| error.to_string())?;
    server.answer(0)?;
    let mut id = 1;
    let mut call = |server: &mut Server, arguments: Value| -> Result<(f64, Value, usize), String> {
        id += 1;
        let line = mcp::tool_call(id, "search", arguments);
        let started = Instant::now();
        server.send(&line).map_err(|error| error.to_string())?;
        let (answer, bytes) = server.answer_sized(id)?;
        Ok((millis(started.elapsed()), answer, bytes))
    };
    // Every query untimed first, so the start-up reconcile is over before the timed rounds.
    for _ in 0..UNTIMED {
        for query in set.queries {
            call(&mut server, arguments(query.text, query.kind))?;
        }
    }
    // A settled server, as a user meets it after the first session on a tree: the index
    // ready, its start-up reconcile over (the watcher on), and the files over its size limit
    // summarised (`oversized.rs`; the summaries are kept beside the index, so only a tree's
    // first server makes them). Until then a search also scans those files (424 MB on Linux).
    let settling = Instant::now();
    let mut probe = 1_000_000;
    loop {
        probe += 1;
        let (_, answer, _) =
            call(&mut server, json!({"query": set.warm_start_query, "type": "text", "metadata": "full"}))?;
        let ready = answer.pointer("/structuredContent/meta/index_state").and_then(Value::as_str) == Some("ready");
        let metrics = server.manage(probe, "metrics")?;
        let pending = find_key(&metrics, "oversized_filter_pending").and_then(Value::as_u64).unwrap_or(0);
        // The watcher starts once the server's first reconcile is over: until then a loaded
        // index answers while that walk competes for the cores.
        probe += 1;
        let status = server.manage(probe, "status")?;
        let watching = find_key(&status, "watcher").and_then(Value::as_bool) == Some(true);
        if ready && watching && pending == 0 {
            break;
        }
        if settling.elapsed() > SETTLE_LIMIT {
            return Err(format!(
                "not settled after {SETTLE_LIMIT:?}: index ready {ready}, watcher on {watching}, {pending} files to summarise"
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    result.settle_millis = millis(settling.elapsed());
    for query in set.queries {
        let mut measured = McpQuery {
            class: query.class.to_owned(),
            regex: query.kind == Kind::Regex,
            text: query.text.to_owned(),
            ..McpQuery::default()
        };
        for _ in 0..options.search_runs {
            match call(&mut server, arguments(query.text, query.kind)) {
                Ok((elapsed, answer, bytes)) if answer.get("isError") != Some(&Value::Bool(true)) => {
                    measured.millis.push(elapsed);
                    measured.answer_bytes = bytes;
                }
                Ok((_, answer, _)) => {
                    measured.error = Some(answer.to_string().chars().take(200).collect());
                    break;
                }
                Err(error) => {
                    measured.error = Some(error);
                    break;
                }
            }
        }
        for run in 0..options.rg_runs + 1 {
            match rg_first_matches(root, query.text, query.kind == Kind::Regex) {
                Ok(elapsed) if run > 0 => measured.rg_millis.push(elapsed),
                Ok(_) => {}
                Err(error) => {
                    measured.error.get_or_insert(error);
                    break;
                }
            }
        }
        result.queries.push(measured);
    }
    result.serve_rss_bytes = proc_status_kb(Some(server.pid()), "VmRSS:") * 1024;
    // The server's figures per stage, over the calls above (its window holds them all).
    let answer = server.manage(1, "metrics")?;
    let latency = find_key(&answer, "latency").ok_or("`manage metrics` has no latency figures")?;
    for (stage, figures) in latency.as_object().into_iter().flatten() {
        result.stages.push(StageFigure {
            stage: stage.clone(),
            count: figures["count"].as_u64().unwrap_or(0),
            p50_ms: figures["p50_ms"].as_f64().unwrap_or(0.0),
            p95_ms: figures["p95_ms"].as_f64().unwrap_or(0.0),
        });
    }
    server.close(Duration::from_secs(120))
}

fn arguments(query: &str, kind: Kind) -> Value {
    json!({"query": query, "type": if kind == Kind::Regex { "regex" } else { "text" }})
}

/// The first object under `value` (depth first) that has `key`, and its value there.
fn find_key<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    match value {
        Value::Object(object) => object.get(key).or_else(|| object.values().find_map(|inner| find_key(inner, key))),
        Value::Array(items) => items.iter().find_map(|inner| find_key(inner, key)),
        _ => None,
    }
}

/// `rg -m 20 [-F] -e QUERY .` over the file set loupe walks, its output read to the end: the
/// milliseconds it took.
fn rg_first_matches(root: &Path, query: &str, regex: bool) -> Result<f64, String> {
    let mut command = rg_base(root);
    command.args(["-m", "20", "--smart-case"]);
    if !regex {
        command.arg("-F");
    }
    command.arg("-e").arg(query).arg(".").stdout(Stdio::piped());
    let started = Instant::now();
    let output = command.output().map_err(|error| format!("rg: {error}"))?;
    let elapsed = millis(started.elapsed());
    match output.status.code() {
        Some(0 | 1) => Ok(elapsed),
        _ => Err(format!("rg failed: {}", String::from_utf8_lossy(&output.stderr).trim())),
    }
}
