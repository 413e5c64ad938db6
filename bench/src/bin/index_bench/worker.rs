//! One corpus, measured in a process of its own (so that `VmHWM` read right after the cold
//! build is the build's peak RSS and nothing else's). The steps, in order:
//!
//! 1. facts about the corpus on disk, and one `rg` pass over it so the page cache is warm for
//!    every later step (cold means "no index", not "disk cache empty");
//! 2. cold build in process: `Engine::new` on a fresh index dir, `refresh_index`; wall time,
//!    CPU time, `RefreshStats` phases, `VmHWM`, size of the index dir;
//! 3. `loupe index` on the built index (nothing changed), as a process;
//! 4. warm starts: `loupe serve`, `initialize` and a `search` written at once, time from spawn
//!    to the answer; then the same search again every 10 ms until one is answered from the
//!    loaded index (`meta.index_state == "ready"`);
//! 5. a second in-process engine on the persisted index (open and reconcile, timed), and on it:
//!    search latency per query next to `rg` on the same query, symbol lookups, outline ratios,
//!    symbol recall against ctags;
//! 6. touch-to-searchable with `loupe_index::watch` on that engine: append a unique token to a
//!    file, poll `search` for it every 5 ms; then restore the file;
//! 7. the same through the CLI: after a touch, one `loupe search` process (open, reconcile,
//!    persist, search).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use loupe_core::Config;
use loupe_engine::Engine;
use loupe_index::{Index, trigram};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::mcp::{self, Server};
use crate::mcp_search::{self, McpSearch};
use crate::queries::{self, Kind};
use crate::recall::{self, Recall};
use crate::stats::millis;

/// What the worker is told.
#[derive(Debug, Clone)]
pub(crate) struct WorkerOptions {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    pub(crate) loupe: PathBuf,
    pub(crate) work: PathBuf,
    pub(crate) search_runs: usize,
    pub(crate) rg_runs: usize,
    pub(crate) warm_starts: usize,
    pub(crate) touch_runs: usize,
    pub(crate) cli_touch_runs: usize,
    pub(crate) outline_files: usize,
    /// Only the cold build and the outline ratios (`--only outline`).
    pub(crate) only_outline: bool,
    /// Only the cold build and search through MCP (`--only mcp`).
    pub(crate) only_mcp: bool,
    /// `--only mcp`, then the watcher's touch-to-searchable (`--only scale`).
    pub(crate) only_scale: bool,
    /// Only `ctags -R` and the cold build (`--only cold`): the scale bench's second round.
    pub(crate) only_cold: bool,
}

/// Everything measured on one corpus; the worker prints it as one JSON line.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CorpusReport {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) disk_files: u64,
    pub(crate) disk_bytes: u64,
    pub(crate) rg_files: u64,
    pub(crate) indexed_files: u64,
    pub(crate) indexed_bytes: u64,
    pub(crate) parsed_files: u64,
    pub(crate) symbols: u64,
    pub(crate) distinct_symbol_names: u64,
    pub(crate) by_language: BTreeMap<String, usize>,
    pub(crate) cold: Cold,
    /// Later cold builds of the same tree (`--only scale`'s second round, filled by the parent).
    pub(crate) cold_repeats: Vec<Cold>,
    pub(crate) noop_index_cli_millis: Option<f64>,
    pub(crate) warm: Warm,
    /// Search through `loupe serve`, next to `rg -m 20`, and the server's stage figures.
    pub(crate) mcp_search: McpSearch,
    /// A second engine on the persisted index: `Engine::new`, `load_snapshot`, `refresh_index`.
    pub(crate) reopen_open_millis: f64,
    pub(crate) reopen_load_millis: f64,
    pub(crate) reopen_reconcile_millis: f64,
    pub(crate) reopen_stats: Value,
    pub(crate) queries: Vec<QueryResult>,
    pub(crate) symbol_lookups: Vec<SymbolResult>,
    pub(crate) outline: Outline,
    pub(crate) recall: Recall,
    pub(crate) touch: Touch,
    /// 1-minute load average when the worker started and when it finished: other work on the
    /// machine shows here (and in cold-index wall time against CPU time).
    pub(crate) load_start: String,
    pub(crate) load_end: String,
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Cold {
    pub(crate) millis: f64,
    pub(crate) cpu_millis: f64,
    pub(crate) walk_millis: f64,
    pub(crate) process_millis: f64,
    pub(crate) persist_millis: f64,
    /// Where reading and parsing went (`RefreshStats::stages`).
    pub(crate) stages: loupe_index::BuildStages,
    pub(crate) peak_rss_bytes: u64,
    pub(crate) index_bytes: u64,
    pub(crate) index_files: BTreeMap<String, u64>,
    /// Plain `ctags -R -f FILE DIR`, every language it knows: the peer the cold-index goal names.
    pub(crate) ctags_all_millis: Option<f64>,
    /// A cold `loupe serve` (empty index dir): spawn → `initialize` + a text search → answer,
    /// while its first build runs.
    pub(crate) first_answer_millis: Option<f64>,
    /// That answer's first line and whether it says it came from a direct scan.
    pub(crate) first_answer_head: String,
    pub(crate) first_answer_scanned: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Warm {
    pub(crate) query: String,
    /// Spawn to the first `search` answer.
    pub(crate) first_answer_millis: Vec<f64>,
    /// `meta.index_state` of that answer.
    pub(crate) first_answer_states: Vec<String>,
    /// Spawn to the first answer served from the loaded index.
    pub(crate) ready_answer_millis: Vec<f64>,
    pub(crate) totals: Vec<u64>,
    pub(crate) serve_peak_rss_bytes: Vec<u64>,
    /// `VmRSS` of `loupe serve` once it answered from the loaded index: the index at rest.
    pub(crate) serve_rss_bytes: Vec<u64>,
    pub(crate) errors: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct QueryResult {
    pub(crate) class: String,
    pub(crate) regex: bool,
    pub(crate) text: String,
    pub(crate) loupe_millis: Vec<f64>,
    pub(crate) loupe_total: u64,
    pub(crate) loupe_lower_bound: bool,
    pub(crate) rg_millis: Vec<f64>,
    pub(crate) rg_total: u64,
    /// Files the trigram index proposes for verification, and how long asking it takes (p50).
    pub(crate) candidate_files: u64,
    pub(crate) candidate_millis: f64,
    pub(crate) error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SymbolResult {
    pub(crate) name: String,
    pub(crate) millis: Vec<f64>,
    pub(crate) total: u64,
    pub(crate) error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Outline {
    /// (path, outline tokens, full-file tokens)
    pub(crate) files: Vec<(String, u64, u64)>,
    pub(crate) millis: Vec<f64>,
    pub(crate) errors: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Touch {
    pub(crate) watcher_setup_millis: f64,
    pub(crate) watcher_millis: Vec<f64>,
    pub(crate) watcher_timeouts: u64,
    pub(crate) cli_millis: Vec<f64>,
    pub(crate) cli_errors: Vec<String>,
    pub(crate) files: Vec<String>,
    pub(crate) error: Option<String>,
}

/// How long a poll for a touched file waits before it counts as a timeout.
const TOUCH_TIMEOUT: Duration = Duration::from_secs(10);

fn log(options: &WorkerOptions, message: &str) {
    eprintln!("[{}] {message}", options.name);
}

/// Runs every step on one corpus.
pub(crate) fn run(options: &WorkerOptions) -> Result<CorpusReport, String> {
    let root =
        loupe_vfs::canonical_path(&options.dir).map_err(|error| format!("{}: {error}", options.dir.display()))?;
    let index_dir = options.work.join(&options.name).join("index");
    if index_dir.exists() {
        std::fs::remove_dir_all(&index_dir).map_err(|error| format!("clearing {}: {error}", index_dir.display()))?;
    }
    std::fs::create_dir_all(&index_dir).map_err(|error| format!("creating {}: {error}", index_dir.display()))?;
    let set = queries::for_corpus(&options.name);
    let mut report = CorpusReport { name: options.name.clone(), load_start: load_1min(), ..CorpusReport::default() };

    // 1. The corpus on disk, and a warm page cache.
    if options.only_outline {
        return outline_only(options, &root, &index_dir, report);
    }
    log(options, "scanning the corpus");
    let (files, bytes) = disk_usage(&root);
    report.disk_files = files;
    report.disk_bytes = bytes;
    report.rg_files = rg_file_count(&root);
    rg_search(&root, "zqx_no_such_token_qxz", false).map_err(|error| format!("rg: {error}"))?;

    // 2. The first answer of a cold server (its own empty index dir), then plain `ctags -R`, then
    // the cold build in process.
    if !options.only_cold {
        log(options, "first answer of a cold loupe serve");
        cold_first_answer(options, &root, set.warm_start_query, &mut report.cold);
    }
    log(options, "ctags -R (every language)");
    report.cold.ctags_all_millis = ctags_all(options, &root);
    log(options, "cold index");
    // The benchmark measures the index and the tools, not the session layer's policy: no
    // gate (outlines are read without a search first), no relevance warnings (they would be
    // counted in the outline's tokens) and no session budget.
    let config = bench_config(&root, &index_dir);
    let cpu_before = cpu_millis();
    let started = Instant::now();
    let engine = Engine::new(config.clone()).map_err(|error| error.to_string())?;
    let stats = engine.refresh_index(&|_, _| {}).ok_or("the engine has no index")?;
    report.cold.millis = millis(started.elapsed());
    report.cold.cpu_millis = cpu_millis() - cpu_before;
    report.cold.peak_rss_bytes = proc_status_kb(None, "VmHWM:") * 1024;
    report.cold.walk_millis = stats.walk_millis as f64;
    report.cold.process_millis = stats.process_millis as f64;
    report.cold.persist_millis = stats.persist_millis as f64;
    report.cold.stages = stats.stages;
    let index = Arc::clone(engine.index().ok_or("the engine has no index")?);
    let status = index.status();
    report.indexed_files = status.files as u64;
    report.symbols = status.symbols as u64;
    report.by_language = status.by_language.clone();
    let records = index.files();
    report.indexed_bytes = records.iter().map(|record| record.size).sum();
    report.parsed_files = records.iter().filter(|record| record.lang.is_some()).count() as u64;
    drop(index);
    drop(engine);
    for (name, size) in dir_files(&index_dir) {
        report.cold.index_bytes += size;
        report.cold.index_files.insert(name, size);
    }
    log(options, &format!("cold index: {:.0} ms, {} files", report.cold.millis, report.indexed_files));
    if options.only_cold {
        report.load_end = load_1min();
        return Ok(report);
    }

    // 3. `loupe index` with nothing changed.
    let started = Instant::now();
    let output = Command::new(&options.loupe)
        .arg("index")
        .arg("--root")
        .arg(&root)
        .arg("--index-dir")
        .arg(&index_dir)
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => report.noop_index_cli_millis = Some(millis(started.elapsed())),
        Ok(output) => report
            .notes
            .push(format!("`loupe index` (no change) failed: {}", String::from_utf8_lossy(&output.stderr).trim())),
        Err(error) => report.notes.push(format!("`loupe index` could not start: {error}")),
    }

    // 4. Warm starts, and search through MCP.
    log(options, "warm starts");
    report.warm = warm_starts(options, &root, &index_dir, set.warm_start_query);
    log(options, "search through MCP (loupe serve and rg -m 20)");
    report.mcp_search = mcp_search::measure(options, &root, &index_dir, &set);
    if options.only_mcp {
        report.load_end = load_1min();
        return Ok(report);
    }
    if options.only_scale {
        return scale_rest(options, &root, bench_config(&root, &index_dir), report);
    }

    // 5. A second engine on the persisted index.
    log(options, "reopen");
    let started = Instant::now();
    let engine = Engine::new(config).map_err(|error| error.to_string())?;
    report.reopen_open_millis = millis(started.elapsed());
    let index = Arc::clone(engine.index().ok_or("the engine has no index")?);
    let started = Instant::now();
    if !index.load_snapshot() {
        report.notes.push("the second engine found no valid snapshot to load".into());
    }
    report.reopen_load_millis = millis(started.elapsed());
    let started = Instant::now();
    let stats = engine.refresh_index(&|_, _| {}).ok_or("the engine has no index")?;
    report.reopen_reconcile_millis = millis(started.elapsed());
    report.reopen_stats = serde_json::to_value(&stats).unwrap_or_default();
    report.distinct_symbol_names = index.symbol_names_where(&|_| true).len() as u64;

    log(options, "search latency (loupe and rg)");
    for query in set.queries {
        report.queries.push(measure_query(options, &engine, &index, &root, query));
    }
    log(options, "symbol lookups");
    for name in set.symbols {
        report.symbol_lookups.push(measure_symbol(options, &engine, name));
    }
    log(options, "outline ratios");
    let sample = outline_sample(&engine, options.outline_files);
    report.outline = measure_outline(&engine, &sample);
    log(options, "symbol recall against ctags");
    report.recall = recall::measure(&root, &index);

    // 6. and 7. Touch to searchable.
    log(options, "touch to searchable");
    let touch_files: Vec<String> = spread(&sample, 10).into_iter().cloned().collect();
    report.touch.files = touch_files.clone();
    if touch_files.is_empty() {
        report.touch.error = Some("no file to touch".into());
    } else {
        let started = Instant::now();
        match loupe_index::watch(Arc::clone(&index)) {
            Ok(watcher) => {
                report.touch.watcher_setup_millis = millis(started.elapsed());
                std::thread::sleep(Duration::from_millis(200));
                touch_with_watcher(options, &engine, &root, &touch_files, &mut report.touch);
                drop(watcher);
            }
            Err(error) => report.touch.error = Some(error.to_string()),
        }
        drop(index);
        drop(engine);
        // The watcher thread lets go of the index (and its writer lock) once its channel closes.
        std::thread::sleep(Duration::from_millis(300));
        touch_with_cli(options, &root, &index_dir, &touch_files, &mut report.touch);
    }
    log(options, "done");
    report.load_end = load_1min();
    Ok(report)
}

/// Spawns `loupe serve` on an empty index dir and times spawn → `initialize` + one text search →
/// its answer, then kills the server (its build is not waited for).
fn cold_first_answer(options: &WorkerOptions, root: &Path, query: &str, cold: &mut Cold) {
    let index_dir = options.work.join(&options.name).join("cold-serve");
    let _ = std::fs::remove_dir_all(&index_dir);
    let started = Instant::now();
    let Ok(mut server) = Server::spawn(&options.loupe, root, &index_dir) else { return };
    let asked = server.send(&(mcp::handshake() + &mcp::search_call(1, query))).is_ok();
    let answer = if asked { server.answer(0).and_then(|_| server.answer(1)).ok() } else { None };
    let elapsed = millis(started.elapsed());
    server.kill();
    let _ = std::fs::remove_dir_all(&index_dir);
    let Some(answer) = answer else { return };
    let face = answer.pointer("/content/0/text").and_then(Value::as_str).unwrap_or_default();
    cold.first_answer_millis = Some(elapsed);
    cold.first_answer_head = face.lines().next().unwrap_or_default().to_owned();
    cold.first_answer_scanned = face.contains("answered by a direct scan");
}

/// `ctags -R -f FILE DIR` with every language ctags knows, timed; `None` when ctags fails.
fn ctags_all(options: &WorkerOptions, root: &Path) -> Option<f64> {
    let tags = options.work.join(&options.name).join("tags");
    let started = Instant::now();
    let status = Command::new("ctags")
        .arg("-R")
        .arg("-f")
        .arg(&tags)
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let elapsed = millis(started.elapsed());
    let _ = std::fs::remove_file(&tags);
    status.ok().filter(|status| status.success()).map(|_| elapsed)
}

/// `--only scale`, after search through MCP: an engine on the persisted index and the watcher's
/// touch-to-searchable on files spread over the tree.
fn scale_rest(
    options: &WorkerOptions,
    root: &Path,
    config: Config,
    mut report: CorpusReport,
) -> Result<CorpusReport, String> {
    log(options, "touch to searchable");
    let engine = Engine::new(config).map_err(|error| error.to_string())?;
    let index = Arc::clone(engine.index().ok_or("the engine has no index")?);
    index.load_snapshot();
    engine.refresh_index(&|_, _| {}).ok_or("the engine has no index")?;
    let files = outline_sample(&engine, 10);
    report.touch.files = files.clone();
    let started = Instant::now();
    match loupe_index::watch(Arc::clone(&index)) {
        Ok(watcher) => {
            report.touch.watcher_setup_millis = millis(started.elapsed());
            std::thread::sleep(Duration::from_millis(200));
            touch_with_watcher(options, &engine, root, &files, &mut report.touch);
            drop(watcher);
        }
        Err(error) => report.touch.error = Some(error.to_string()),
    }
    report.load_end = load_1min();
    Ok(report)
}

/// `--only outline`: the build the sample comes from, then the outline ratios on that engine.
fn outline_only(
    options: &WorkerOptions,
    root: &Path,
    index_dir: &Path,
    mut report: CorpusReport,
) -> Result<CorpusReport, String> {
    log(options, "index (for the file list)");
    let config = bench_config(root, index_dir);
    let engine = Engine::new(config).map_err(|error| error.to_string())?;
    engine.refresh_index(&|_, _| {}).ok_or("the engine has no index")?;
    log(options, "outline ratios");
    let sample = outline_sample(&engine, options.outline_files);
    report.outline = measure_outline(&engine, &sample);
    report.load_end = load_1min();
    Ok(report)
}

/// Spawn `loupe serve`, ask one search, keep asking until the index answers.
fn warm_starts(options: &WorkerOptions, root: &Path, index_dir: &Path, query: &str) -> Warm {
    let mut warm = Warm { query: query.to_owned(), ..Warm::default() };
    for _ in 0..options.warm_starts {
        match warm_start(&options.loupe, root, index_dir, query) {
            Ok(WarmRun { first, state, ready, total, peak_rss, rss }) => {
                warm.first_answer_millis.push(first);
                warm.first_answer_states.push(state);
                if let Some(ready) = ready {
                    warm.ready_answer_millis.push(ready);
                }
                warm.totals.push(total);
                warm.serve_peak_rss_bytes.push(peak_rss);
                warm.serve_rss_bytes.push(rss);
            }
            Err(error) => warm.errors.push(error),
        }
    }
    warm
}

/// One `loupe serve` start.
struct WarmRun {
    first: f64,
    state: String,
    ready: Option<f64>,
    total: u64,
    peak_rss: u64,
    rss: u64,
}

fn warm_start(loupe: &Path, root: &Path, index_dir: &Path, query: &str) -> Result<WarmRun, String> {
    let started = Instant::now();
    let mut server = Server::spawn(loupe, root, index_dir).map_err(|error| format!("spawning loupe serve: {error}"))?;
    server.send(&(mcp::handshake() + &mcp::search_call(1, query))).map_err(|error| error.to_string())?;
    server.answer(0)?;
    let first = mcp::parse_search(&server.answer(1)?)?;
    let first_millis = millis(started.elapsed());
    let mut ready = (first.index_state == "ready").then_some(first_millis);
    let mut total = first.total;
    let mut id = 2;
    while ready.is_none() && started.elapsed() < Duration::from_secs(600) {
        std::thread::sleep(Duration::from_millis(10));
        server.send(&mcp::search_call(id, query)).map_err(|error| error.to_string())?;
        let answer = mcp::parse_search(&server.answer(id)?)?;
        if answer.index_state == "ready" {
            ready = Some(millis(started.elapsed()));
            total = answer.total;
        }
        id += 1;
    }
    let peak_rss = proc_status_kb(Some(server.pid()), "VmHWM:") * 1024;
    let rss = proc_status_kb(Some(server.pid()), "VmRSS:") * 1024;
    server.close(Duration::from_secs(120))?;
    Ok(WarmRun { first: first_millis, state: first.index_state, ready, total, peak_rss, rss })
}

fn measure_query(
    options: &WorkerOptions,
    engine: &Engine,
    index: &Index,
    root: &Path,
    query: &queries::Query,
) -> QueryResult {
    let regex = query.kind == Kind::Regex;
    let mut result =
        QueryResult { class: query.class.to_owned(), regex, text: query.text.to_owned(), ..QueryResult::default() };
    let arguments = json!({"query": query.text, "type": if regex { "regex" } else { "text" }});
    for run in 0..options.search_runs + 2 {
        let arguments = arguments.clone();
        let started = Instant::now();
        let response = engine.call("search", arguments);
        let elapsed = millis(started.elapsed());
        if !response.ok {
            result.error = Some(response.face.lines().next().unwrap_or("").to_owned());
            break;
        }
        // Two untimed calls first.
        if run >= 2 {
            result.loupe_millis.push(elapsed);
        }
        result.loupe_total = response.meta.get("total").and_then(Value::as_u64).unwrap_or(0);
        result.loupe_lower_bound = response.meta.get("total_is_lower_bound").and_then(Value::as_bool).unwrap_or(false);
    }
    // The trigram step alone, planned as the engine plans it (smart case: a query without
    // upper case is case-insensitive and goes through the regex planner).
    let case_insensitive = !query.text.chars().any(char::is_uppercase);
    let plan = if regex || case_insensitive {
        let pattern = if regex { query.text.to_owned() } else { regex::escape(query.text) };
        trigram::plan_regex(&pattern, case_insensitive)
    } else {
        Ok(trigram::plan_literal(query.text))
    };
    if let Ok(plan) = plan {
        let mut samples = Vec::new();
        for _ in 0..3 {
            let started = Instant::now();
            result.candidate_files = index.text_candidates(&plan).len() as u64;
            samples.push(millis(started.elapsed()));
        }
        result.candidate_millis = crate::stats::p50(&samples).unwrap_or(0.0);
    }
    for run in 0..options.rg_runs + 1 {
        let started = Instant::now();
        match rg_search(root, query.text, regex) {
            Ok(total) => {
                if run >= 1 {
                    result.rg_millis.push(millis(started.elapsed()));
                }
                result.rg_total = total;
            }
            Err(error) => {
                result.error.get_or_insert(format!("rg: {error}"));
                break;
            }
        }
    }
    result
}

fn measure_symbol(options: &WorkerOptions, engine: &Engine, name: &str) -> SymbolResult {
    let mut result = SymbolResult { name: name.to_owned(), ..SymbolResult::default() };
    let arguments = json!({"query": name, "type": "symbol"});
    for run in 0..options.search_runs + 1 {
        let arguments = arguments.clone();
        let started = Instant::now();
        let response = engine.call("search", arguments);
        let elapsed = millis(started.elapsed());
        if !response.ok {
            result.error = Some(response.face.lines().next().unwrap_or("").to_owned());
            break;
        }
        if run >= 1 {
            result.millis.push(elapsed);
        }
        result.total = response.meta.get("total").and_then(Value::as_u64).unwrap_or(0);
    }
    result
}

/// `count` paths spread evenly over the parsed source files of 1 KiB to 256 KiB, in path order.
/// TypeScript declaration files (`.d.ts`, `.d.mts`, `.d.cts`) are left out: they are all
/// signatures, so their outline is the file.
fn outline_sample(engine: &Engine, count: usize) -> Vec<String> {
    let Some(index) = engine.index() else { return Vec::new() };
    let declarations = |path: &str| [".d.ts", ".d.mts", ".d.cts"].iter().any(|suffix| path.ends_with(suffix));
    let candidates: Vec<String> = index
        .files()
        .into_iter()
        .filter(|record| record.lang.is_some() && record.text && (1024..=256 * 1024).contains(&record.size))
        .filter(|record| !declarations(record.path.as_str()))
        .map(|record| record.path.as_str().to_owned())
        .collect();
    spread(&candidates, count).into_iter().cloned().collect()
}

/// Up to `count` items spread evenly over `items`.
fn spread<T>(items: &[T], count: usize) -> Vec<&T> {
    if items.len() <= count {
        return items.iter().collect();
    }
    (0..count).map(|i| &items[i * items.len() / count]).collect()
}

fn measure_outline(engine: &Engine, sample: &[String]) -> Outline {
    let mut outline = Outline::default();
    for path in sample {
        let started = Instant::now();
        let response = engine.call("read", json!({"mode": "outline", "target": path}));
        let elapsed = millis(started.elapsed());
        if !response.ok {
            outline.errors.push(format!("{path}: {}", response.face.lines().next().unwrap_or("")));
            continue;
        }
        outline.millis.push(elapsed);
        let tokens = response.meta.get("token_estimate").and_then(Value::as_u64).unwrap_or(0);
        let full = response.meta.get("full_file_tokens").and_then(Value::as_u64).unwrap_or(0);
        outline.files.push((path.clone(), tokens, full));
    }
    outline
}

fn search_total(engine: &Engine, token: &str) -> u64 {
    let response = engine.call("search", json!({"query": token, "type": "text"}));
    response.meta.get("total").and_then(Value::as_u64).unwrap_or(0)
}

fn append_token(path: &Path, token: &str) -> std::io::Result<Vec<u8>> {
    let original = std::fs::read(path)?;
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(format!("\n{token}\n").as_bytes())?;
    file.sync_data()?;
    Ok(original)
}

fn touch_with_watcher(options: &WorkerOptions, engine: &Engine, root: &Path, files: &[String], touch: &mut Touch) {
    for run in 0..options.touch_runs {
        let path = root.join(&files[run % files.len()]);
        let token = format!("zqxloupetouch{run}x{}", std::process::id());
        let original = match append_token(&path, &token) {
            Ok(original) => original,
            Err(error) => {
                touch.error = Some(format!("{}: {error}", path.display()));
                return;
            }
        };
        let started = Instant::now();
        let mut found = None;
        while started.elapsed() < TOUCH_TIMEOUT {
            if search_total(engine, &token) > 0 {
                found = Some(millis(started.elapsed()));
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        match found {
            Some(latency) => touch.watcher_millis.push(latency),
            None => touch.watcher_timeouts += 1,
        }
        if let Err(error) = std::fs::write(&path, &original) {
            touch.error = Some(format!("restoring {}: {error}", path.display()));
            return;
        }
        // Wait for the restore to land before the next run.
        let restored = Instant::now();
        while restored.elapsed() < TOUCH_TIMEOUT && search_total(engine, &token) > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn touch_with_cli(options: &WorkerOptions, root: &Path, index_dir: &Path, files: &[String], touch: &mut Touch) {
    for run in 0..options.cli_touch_runs {
        let path = root.join(&files[run % files.len()]);
        let token = format!("zqxloupeclitouch{run}x{}", std::process::id());
        let original = match append_token(&path, &token) {
            Ok(original) => original,
            Err(error) => {
                touch.cli_errors.push(format!("{}: {error}", path.display()));
                return;
            }
        };
        let started = Instant::now();
        let output = Command::new(&options.loupe)
            .args(["search", &token, "--type", "text", "--json", "--metadata", "full", "--root"])
            .arg(root)
            .arg("--index-dir")
            .arg(index_dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let elapsed = millis(started.elapsed());
        let total = output.as_ref().ok().and_then(|output| {
            serde_json::from_slice::<Value>(&output.stdout).ok()?.pointer("/meta/total").and_then(Value::as_u64)
        });
        match (output, total) {
            (Ok(_), Some(total)) if total > 0 => touch.cli_millis.push(elapsed),
            (Ok(output), _) => touch
                .cli_errors
                .push(format!("`loupe search {token}` did not find the touched file (exit {})", output.status)),
            (Err(error), _) => touch.cli_errors.push(format!("`loupe search` could not start: {error}")),
        }
        if let Err(error) = std::fs::write(&path, &original) {
            touch.cli_errors.push(format!("restoring {}: {error}", path.display()));
            return;
        }
    }
    log(options, &format!("CLI touch runs: {}", touch.cli_millis.len()));
}

/// Regular files under `root` and their total size (symlinks not followed).
fn disk_usage(root: &Path) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                files += 1;
                bytes += entry.metadata().map_or(0, |metadata| metadata.len());
            }
        }
    }
    (files, bytes)
}

/// Files of the index dir (recursively) with their sizes.
fn dir_files(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(metadata) = entry.metadata() {
                let name = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
                out.push((name, metadata.len()));
            }
        }
    }
    out.sort();
    out
}

/// The file set loupe walks, as rg sees it: hidden files in, over 1 MiB out, and no ignore
/// files from above the corpus (loupe reads none; the loupe checkout's own `.gitignore`, with
/// `target/`, would otherwise hide parts of a corpus from rg).
pub(crate) fn rg_base(root: &Path) -> Command {
    let mut command = Command::new("rg");
    command.current_dir(root).args(["--hidden", "--no-ignore-parent", "--max-filesize", "1M", "--no-messages"]);
    command.stdin(Stdio::null()).stderr(Stdio::null());
    command
}

fn rg_file_count(root: &Path) -> u64 {
    let output = rg_base(root).args(["--files", "."]).output();
    output.map_or(0, |output| output.stdout.iter().filter(|&&byte| byte == b'\n').count() as u64)
}

/// `rg -c -S [-F] -e QUERY .` in `root`: the number of matching lines.
pub(crate) fn rg_search(root: &Path, query: &str, regex: bool) -> Result<u64, String> {
    let mut command = rg_base(root);
    command.args(["-c", "--smart-case"]);
    if !regex {
        command.arg("-F");
    }
    command.arg("-e").arg(query).arg(".").stdout(Stdio::piped());
    let mut child = command.spawn().map_err(|error| format!("cannot run rg ({error}); install ripgrep"))?;
    let mut output = String::new();
    child
        .stdout
        .take()
        .ok_or("rg has no stdout")?
        .read_to_string(&mut output)
        .map_err(|error| format!("reading rg's output: {error}"))?;
    let status = child.wait().map_err(|error| error.to_string())?;
    if status.code().is_some_and(|code| code > 1) {
        return Err(format!("rg exited with {status}"));
    }
    Ok(output.lines().filter_map(|line| line.rsplit_once(':')?.1.parse::<u64>().ok()).sum())
}

fn load_1min() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// A `kB` field of `/proc/<pid>/status` (`None`: this process), in kB; 0 when unknown.
pub(crate) fn proc_status_kb(pid: Option<u32>, field: &str) -> u64 {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let Ok(status) = std::fs::read_to_string(path) else { return 0 };
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// User plus system CPU time of this process (all threads, finished ones included), in ms.
/// `/proc/self/stat` counts in clock ticks of 1/100 s on Linux.
fn cpu_millis() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    let ticks = |index: usize| fields.get(index).and_then(|value| value.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0
}

/// The engine configuration of every step: the benchmark measures the index and the tools,
/// not the session layer's policy, so no gate, no relevance warnings, no session budget.
fn bench_config(root: &Path, index_dir: &Path) -> Config {
    Config {
        root: Some(root.to_path_buf()),
        index_dir: Some(index_dir.to_path_buf()),
        gate_mode: loupe_core::config::GateMode::Off,
        relevance: loupe_core::config::RelevanceMode::Off,
        max_reads_per_session: usize::MAX,
        max_total_read_lines: usize::MAX,
        analytics: false,
        ..Config::default()
    }
}
