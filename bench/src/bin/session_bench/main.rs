//! `session_bench`: what the session layer (§9) costs and what it saves.
//!
//! 1. Overhead: the same `read` (and `search`) calls through `Engine::call_in` (the session
//!    layer: identity, gate, budget, relevance, aggregation, metrics, stabilization,
//!    analytics) and through `Engine::call_raw` (the tool alone), interleaved call by call;
//!    the layer's cost is the difference of the medians. Target: ≤ 50 µs p50 per call.
//! 2. Tokens: a scripted sequence of overlapping and repeated reads, sent with aggregation on
//!    (the default) and off (`fresh: true` on every read), counted with the one tokenizer.
//!
//! The workspace is generated (deterministic Rust source), so the run needs no download.
//! Prints two markdown tables.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use loupe_engine::{CallContext, Engine};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(name = "session_bench", about = "the session layer's overhead per call and the tokens aggregation saves")]
struct Args {
    /// Timed calls per row (each row's calls interleave with its peer's).
    #[arg(long, default_value_t = 3000)]
    iterations: usize,
    /// Lines per read window in the overhead rows.
    #[arg(long, default_value_t = 40)]
    window: usize,
}

/// Lines of the generated source file.
const FILE_LINES: usize = 3000;

/// The scripted reads (first, last) of the token row: an agent orienting in a file, going
/// back to what it saw, widening windows around it, and moving on.
const SCRIPT: &[(usize, usize)] = &[
    (1, 120),
    (100, 220),
    (1, 120),
    (200, 320),
    (150, 260),
    (1, 60),
    (300, 420),
    (410, 530),
    (100, 220),
    (520, 640),
    (600, 700),
    (1, 120),
];

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("session_bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let root = tempdir("workspace")?;
    let index_dir = tempdir("index")?;
    write_workspace(&root)?;
    let config = loupe_core::Config {
        root: Some(root.clone()),
        index_dir: Some(index_dir),
        // The budgets would refuse the thousands of reads of one timed session.
        max_reads_per_session: usize::MAX / 2,
        max_total_read_lines: usize::MAX / 2,
        ..loupe_core::Config::default()
    };
    let engine = Engine::new(config).map_err(|error| error.to_string())?;
    loupe_core::tokens::warm_up();
    engine.refresh_index(&|_, _| {});

    // Overhead rows.
    let session = CallContext::new("bench");
    let warm = engine.call_in(&session, "search", json!({"query": "handler_7"}));
    check(&warm)?;
    let window = |i: usize| {
        let first = 1 + (i * 37) % (FILE_LINES - args.window);
        json!({"mode": "snippet", "target": "src/handlers.rs", "start_line": first, "end_line": first + args.window - 1, "fresh": true})
    };
    let (read_in, read_raw) =
        interleave(args.iterations, |i, through_layer| call(&engine, &session, through_layer, "read", window(i)))?;
    let repeat = json!({"mode": "snippet", "target": "src/handlers.rs", "start_line": 1, "end_line": args.window});
    let (elided_in, elided_raw) =
        interleave(args.iterations, |_, through_layer| call(&engine, &session, through_layer, "read", repeat.clone()))?;
    let search_iterations = (args.iterations / 5).max(50);
    let (search_in, search_raw) = interleave(search_iterations, |i, through_layer| {
        call(&engine, &session, through_layer, "search", json!({"query": format!("handler_{}", i % 200)}))
    })?;

    println!("| call | through the session layer p50 | tool alone p50 | layer overhead (p50 difference) | target |");
    println!("| --- | ---: | ---: | ---: | --- |");
    let row = |name: &str, within: &mut Vec<Duration>, alone: &mut Vec<Duration>, target: &str| {
        let (a, b) = (p50(within), p50(alone));
        let overhead = a.as_secs_f64() - b.as_secs_f64();
        println!("| {name} | {} | {} | {:+.1} µs | {target} |", us(a), us(b), overhead * 1e6);
    };
    let (mut read_in, mut read_raw) = (read_in, read_raw);
    row(
        &format!("read, new {}-line window (×{})", args.window, args.iterations),
        &mut read_in,
        &mut read_raw,
        "≤ 50 µs",
    );
    let (mut elided_in, mut elided_raw) = (elided_in, elided_raw);
    row(
        &format!("read, repeated {}-line window: elided (×{})", args.window, args.iterations),
        &mut elided_in,
        &mut elided_raw,
        "—",
    );
    let (mut search_in, mut search_raw) = (search_in, search_raw);
    row(&format!("search, symbol (×{search_iterations})"), &mut search_in, &mut search_raw, "≤ 50 µs");

    // Token rows.
    let on = script(&engine, "aggregation-on", false)?;
    let off = script(&engine, "aggregation-off", true)?;
    println!();
    println!("| scripted reads ({} windows, {} lines asked) | tokens sent | lines sent |", SCRIPT.len(), asked_lines());
    println!("| --- | ---: | ---: |");
    println!("| aggregation off (`fresh: true` on every read) | {} | {} |", off.0, off.1);
    println!("| aggregation on (default) | {} | {} |", on.0, on.1);
    let saved = off.0.saturating_sub(on.0);
    println!(
        "| saved | {saved} ({:.0}%) | {} |",
        saved as f64 * 100.0 / off.0.max(1) as f64,
        off.1.saturating_sub(on.1)
    );
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(engine.config().index_dir.as_deref().unwrap_or(&root));
    Ok(())
}

/// Runs `body` `count` times through the layer and `count` times without, alternating which
/// goes first, and returns both sets of durations.
fn interleave(
    count: usize,
    mut body: impl FnMut(usize, bool) -> Result<Duration, String>,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let (mut within, mut alone) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for i in 0..count + 20 {
        let layer_first = i % 2 == 0;
        let first = body(i, layer_first)?;
        let second = body(i, !layer_first)?;
        if i < 20 {
            continue; // warm-up
        }
        let (layer, raw) = if layer_first { (first, second) } else { (second, first) };
        within.push(layer);
        alone.push(raw);
    }
    Ok((within, alone))
}

fn call(
    engine: &Engine,
    session: &CallContext,
    through_layer: bool,
    tool: &str,
    arguments: Value,
) -> Result<Duration, String> {
    let start = Instant::now();
    let response =
        if through_layer { engine.call_in(session, tool, arguments) } else { engine.call_raw(tool, arguments) };
    let elapsed = start.elapsed();
    check(&response)?;
    Ok(elapsed)
}

fn check(response: &loupe_engine::Response) -> Result<(), String> {
    if response.ok { Ok(()) } else { Err(format!("a call failed:\n{}", response.face)) }
}

/// Runs the script in a fresh session; returns (tokens of all faces, lines sent).
fn script(engine: &Engine, name: &str, fresh: bool) -> Result<(u64, u64), String> {
    let session = CallContext::new(name);
    let mut tokens = 0;
    let mut lines = 0;
    for (first, last) in SCRIPT {
        let response = engine.call_in(
            &session,
            "read",
            json!({"mode": "snippet", "target": "src/handlers.rs", "start_line": first, "end_line": last, "fresh": fresh}),
        );
        check(&response)?;
        tokens += response.meta.get("token_estimate").and_then(Value::as_u64).unwrap_or(0);
        lines += response.content.as_deref().map_or(0, |text| text.lines().count() as u64);
        let counted = loupe_core::tokens::count(&response.face) as u64;
        if Some(counted) != response.meta.get("token_estimate").and_then(Value::as_u64) {
            return Err(format!("token_estimate is not the face's count:\n{}", response.face));
        }
    }
    Ok((tokens, lines))
}

fn asked_lines() -> usize {
    SCRIPT.iter().map(|(first, last)| last + 1 - first).sum()
}

fn p50(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len().saturating_sub(1) / 2).copied().unwrap_or_default()
}

fn us(value: Duration) -> String {
    format!("{:.1} µs", value.as_secs_f64() * 1e6)
}

/// Deterministic Rust-like source: `FILE_LINES` lines of small handler functions.
fn write_workspace(root: &Path) -> Result<(), String> {
    let mut source = String::new();
    let mut number = 0;
    while source.lines().count() + 6 <= FILE_LINES {
        source.push_str(&format!(
            "/// Handles request kind {number}.\npub fn handler_{number}(input: &str) -> Result<usize, String> {{\n    let trimmed = input.trim();\n    if trimmed.is_empty() {{ return Err(\"empty input for {number}\".into()); }}\n    Ok(trimmed.len() * {number} + {})\n}}\n",
            number * 7 % 13
        ));
        number += 1;
    }
    while source.lines().count() < FILE_LINES {
        source.push('\n');
    }
    let src = root.join("src");
    std::fs::create_dir_all(&src).map_err(|error| error.to_string())?;
    std::fs::write(src.join("handlers.rs"), source).map_err(|error| error.to_string())?;
    std::fs::write(src.join("main.rs"), "fn main() {\n    println!(\"{:?}\", handlers::handler_7(\"x\"));\n}\n")
        .map_err(|error| error.to_string())
}

fn tempdir(what: &str) -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("loupe-session-bench-{}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|error| error.to_string())?;
    loupe_vfs::canonical_path(&dir).map_err(|error| error.to_string())
}
