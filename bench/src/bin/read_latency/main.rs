//! `read_latency`: the first loupe benchmark. Latency of `read(mode=snippet)` for 300-line
//! windows of a real 10,000-line C file, in process through the engine and over MCP stdio
//! through `loupe serve`, plus the time from spawning `loupe serve` to its first answered
//! `tools/call`. `sed -n 'A,Bp'` over the same windows (one process each) and a plain
//! in-process read-and-slice are measured in the same run as references. Prints one markdown
//! table, then the notes that explain it (response size, MCP overhead, where the time goes).

mod mcp;
mod phases;
mod stats;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use loupe_engine::Engine;
use loupe_engine::config::{Sources, load};
use serde_json::{Value, json};

use crate::stats::{Samples, ms};

/// The steady-state rows take turns in blocks of this many windows.
const BLOCK: usize = 50;
/// Untimed calls at the start of each block (page cache, allocator, branch caches).
const BLOCK_WARMUP: usize = 3;

#[derive(Debug, Parser)]
#[command(
    name = "read_latency",
    about = "read latency of loupe (engine, MCP) against sed, and loupe serve's time to first answer"
)]
struct Args {
    /// The corpus: a text file of at least `--window` lines (bench/fetch-corpus.sh writes one).
    #[arg(long, default_value_os_t = default_corpus())]
    corpus: PathBuf,
    /// The `loupe` binary to serve MCP with (build it with `cargo build --release -p loupe`).
    #[arg(long, default_value_os_t = default_loupe())]
    loupe: PathBuf,
    /// Timed reads per steady-state row (engine, MCP, sed, plain read).
    #[arg(long, default_value_t = 2000)]
    iterations: usize,
    /// Fresh `loupe serve` processes for the time-to-first-answer row.
    #[arg(long, default_value_t = 20)]
    cold_starts: usize,
    /// Lines per window.
    #[arg(long, default_value_t = 300)]
    window: usize,
    /// The server's `max_preview_chars` ceiling. The default lets a whole 300-line window of
    /// the corpus through (the shipped 12,000 would cut it); `0` keeps the shipped default.
    #[arg(long, default_value_t = 100_000)]
    max_preview_chars: usize,
    /// Internal: load the tokenizer, count one window twice, print the three times in
    /// nanoseconds and exit (the parent runs this once per tokenizer-load sample).
    #[arg(long, hide = true)]
    tokenizer_probe: Option<String>,
}

fn default_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/read/big.c")
}

/// `loupe` next to this binary (both live in target/release after `bench/run.sh` builds
/// them), else target/release/loupe of this workspace.
fn default_loupe() -> PathBuf {
    let name = format!("loupe{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    beside
        .filter(|path| path.is_file())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release").join(&name))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let outcome = match &args.tokenizer_probe {
        Some(window) => probe(&args.corpus, window),
        None => run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("read_latency: {error}");
            ExitCode::FAILURE
        }
    }
}

/// One row of the table.
struct Row {
    label: &'static str,
    samples: Samples,
    target: &'static str,
    verdict: String,
}

fn run(args: &Args) -> Result<(), String> {
    if args.iterations == 0 || args.cold_starts == 0 || args.window == 0 {
        return Err("--iterations, --cold-starts and --window must be at least 1".into());
    }
    let corpus = loupe_vfs::canonical_path(&args.corpus).map_err(|error| {
        format!("corpus `{}`: {error} (run `bash bench/fetch-corpus.sh` first)", args.corpus.display())
    })?;
    if !args.loupe.is_file() {
        return Err(format!(
            "no loupe binary at `{}` (run `cargo build --release -p loupe` or pass --loupe)",
            args.loupe.display()
        ));
    }
    let root = corpus.parent().ok_or("the corpus has no parent directory")?.to_path_buf();
    let target = corpus.file_name().ok_or("the corpus has no file name")?.to_string_lossy().into_owned();
    let bytes = std::fs::read(&corpus).map_err(|error| format!("reading the corpus: {error}"))?;
    let total_lines = bytes.iter().filter(|&&byte| byte == b'\n').count();
    if total_lines < args.window {
        return Err(format!("the corpus has {total_lines} lines, fewer than the {}-line window", args.window));
    }
    let windows = windows(total_lines, args.window, args.iterations);
    // `fresh`: every window is sent whole, as if each were the first read of its lines; the
    // session layer's de-duplication is measured by bench/session instead.
    let snippet = |&(first, last): &(usize, usize)| json!({"mode": "snippet", "target": target, "start_line": first, "end_line": last, "fresh": true});

    // Loading the tokenizer happens once per process, so each sample is a fresh process: this
    // binary again, in `--tokenizer-probe` mode.
    eprintln!("· tokenizer load and engine open ({} samples each)", args.cold_starts);
    let mut tokenizer_load = Samples::with_capacity(args.cold_starts);
    let mut first_count = Samples::with_capacity(args.cold_starts);
    let mut warm_count = Samples::with_capacity(args.cold_starts);
    for _ in 0..args.cold_starts {
        let [load, first, warm] = tokenizer_probe(&corpus, windows[0])?;
        tokenizer_load.push(load);
        first_count.push(first);
        warm_count.push(warm);
    }
    let engine_open = time_each(args.cold_starts, || open_engine(&root, args.max_preview_chars).map(drop))?;

    // The four steady-state rows take turns, a block of windows at a time in an order that
    // rotates, so a slow spell of the (shared) machine hits every row alike while each block
    // still runs back to back, as a hot loop would.
    eprintln!("· engine, MCP, sed and plain reads ×{}, in turns of {BLOCK}", args.iterations);
    let engine = open_engine(&root, args.max_preview_chars)?;
    let command = mcp::serve_command(&args.loupe, &root, args.max_preview_chars);
    let mut server = mcp::Server::spawn(command).map_err(|error| format!("spawning loupe serve: {error}"))?;
    server.initialize()?;
    let mut engine_read = Samples::with_capacity(windows.len());
    let mut mcp_read = Samples::with_capacity(windows.len());
    let mut sed = Samples::with_capacity(windows.len());
    let mut plain = Samples::with_capacity(windows.len());
    let mut shown_lines: Vec<usize> = Vec::with_capacity(windows.len());
    let mut cut = 0usize;
    let mut mcp_line_bytes = 0;
    let mut id = 0u64;
    for (block_index, block) in windows.chunks(BLOCK).enumerate() {
        for turn in 0..4 {
            let warmup = std::iter::repeat_n((&block[0], false), BLOCK_WARMUP);
            for (window, timed) in warmup.chain(block.iter().map(|window| (window, true))) {
                match (block_index + turn) % 4 {
                    0 => {
                        let arguments = snippet(window);
                        let start = Instant::now();
                        let response = engine.call("read", arguments);
                        let elapsed = start.elapsed();
                        let whole = check_engine(&response, args.window)?;
                        if timed {
                            engine_read.push(elapsed);
                            cut += usize::from(!whole);
                            shown_lines.push(response.content.as_deref().map_or(0, |text| text.lines().count()));
                        }
                    }
                    1 => {
                        id += 1;
                        let (elapsed, size) = mcp_call(&mut server, id, &snippet(window))?;
                        if timed {
                            mcp_read.push(elapsed);
                            mcp_line_bytes = size;
                        }
                    }
                    2 => {
                        let elapsed = sed_once(&corpus, *window)?;
                        if timed {
                            sed.push(elapsed);
                        }
                    }
                    _ => {
                        let elapsed = plain_once(&corpus, *window)?;
                        if timed {
                            plain.push(elapsed);
                        }
                    }
                }
            }
        }
    }
    server.close()?;
    let sample = engine.call("read", snippet(&windows[0]));
    let face_bytes = sample.face.len();
    let token_estimate = sample.meta.get("token_estimate").and_then(Value::as_u64).unwrap_or(0);
    let first_face_line = sample.face.lines().next().unwrap_or("").to_owned();

    eprintln!("· engine steps (replica) ×{}", args.iterations);
    let steps = phases::measure(engine.config(), &root, &target, &windows)?;

    eprintln!("· MCP first answer ×{}", args.cold_starts);
    let cold = cold_starts(args, &root, &snippet(&windows[0]))?;

    eprintln!("· loupe --version ×{}", args.cold_starts);
    let exec = time_each(args.cold_starts, || {
        let output = Command::new(&args.loupe)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("running loupe --version: {error}"))?;
        output.status.success().then_some(()).ok_or_else(|| "loupe --version failed".to_owned())
    })?;

    let mcp_p50 = mcp_read.p50();
    let first_answer = &cold.first_answer;
    let rows = [
        Row {
            label: "engine `read` (in-process `Engine::call`)",
            samples: engine_read.clone(),
            target: "—",
            verdict: "—".into(),
        },
        Row {
            label: "MCP `read` (`tools/call` round trip over stdio)",
            verdict: verdict(mcp_p50 <= Duration::from_millis(2), &mcp_read, Duration::from_millis(2)),
            samples: mcp_read.clone(),
            target: "p50 ≤ 2 ms",
        },
        Row {
            label: "MCP first answer after start (spawn → first `tools/call` answered)",
            verdict: verdict(first_answer.p50() <= Duration::from_millis(50), first_answer, Duration::from_millis(50)),
            samples: first_answer.clone(),
            target: "p50 ≤ 50 ms",
        },
        Row {
            label: "`sed -n 'A,Bp'` (process spawn, reference)",
            samples: sed,
            target: "—",
            verdict: "reference".into(),
        },
        Row {
            label: "plain `fs::read` + line slice (in-process, floor)",
            samples: plain,
            target: "—",
            verdict: "reference".into(),
        },
    ];

    println!("### read latency: {}-line windows of a {total_lines}-line file", args.window);
    println!();
    println!(
        "Corpus `{}`: {total_lines} lines, {} bytes, hash {}. {} windows at deterministic offsets \
         (start = 1 + (i·7919 + 13) mod {}). The four steady-state rows take turns in blocks of \
         {BLOCK} windows, in an order that rotates from block to block, each block after {BLOCK_WARMUP} untimed calls. Server ceiling `max_preview_chars` = {}.",
        target,
        bytes.len(),
        loupe_core::ContentHash::of(&bytes),
        windows.len(),
        total_lines - args.window + 1,
        preview_label(args.max_preview_chars),
    );
    println!();
    println!("| measurement | n | p50 | p99 | mean | target | verdict |");
    println!("|---|---:|---:|---:|---:|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            row.label,
            row.samples.len(),
            ms(row.samples.p50()),
            ms(row.samples.p99()),
            ms(row.samples.mean()),
            row.target,
            row.verdict
        );
    }
    println!();
    println!("Notes (same run):");
    println!();
    println!(
        "- One response: text face {face_bytes} bytes, `meta.token_estimate` {token_estimate} tokens (o200k_base); \
         the MCP answer line is {mcp_line_bytes} bytes (the face plus `structuredContent`, which repeats the raw text). \
         Header: `{first_face_line}`. Lines shown per call: min {}, max {}{}.",
        shown_lines.iter().min().unwrap_or(&0),
        shown_lines.iter().max().unwrap_or(&0),
        if cut > 0 { format!("; {cut} of {} calls were cut by a budget", windows.len()) } else { String::new() },
    );
    let overhead = mcp_p50.saturating_sub(engine_read.p50());
    println!(
        "- MCP overhead over the engine: p50 {} − {} = {} per call ({:.1}× the engine); \
         this is JSON-RPC framing, rmcp dispatch, `spawn_blocking`, serialising both faces and two pipe hops.",
        ms(mcp_p50),
        ms(engine_read.p50()),
        ms(overhead),
        mcp_p50.as_secs_f64() / engine_read.p50().as_secs_f64().max(1e-9),
    );
    let step_list: Vec<String> =
        phases::STEPS.iter().zip(&steps).map(|(name, samples)| format!("{name} {}", ms(samples.p50()))).collect();
    let step_sum: Duration = steps.iter().map(Samples::p50).sum();
    println!(
        "- Engine steps, p50 each (replayed through the same public functions, not the engine itself): {}; sum {}. \
         The count-tokens step counts one whole window; the engine counts the payload once and adds the \
         header and footer counts.",
        step_list.join(", "),
        ms(step_sum),
    );
    println!(
        "- Start-up, p50: `loupe --version` spawn → exit {}; `loupe serve` spawn → `initialize` answered {}; \
         `initialize` answered → first `tools/call` answered {}. In a fresh process: loading the o200k_base tokenizer {}, then its first count \
         of one window {} ({} once warm), opening the engine {}. The tokenizer builds on its own thread while the \
         process starts and answers `initialize`; the first read waits for it.",
        ms(exec.p50()),
        ms(cold.initialized.p50()),
        ms(cold.first_call.p50()),
        ms(tokenizer_load.p50()),
        ms(first_count.p50()),
        ms(warm_count.p50()),
        ms(engine_open.p50()),
    );
    Ok(())
}

/// Runs `--tokenizer-probe FIRST-LAST` in a fresh process and reads its three timings.
fn tokenizer_probe(corpus: &Path, (first, last): (usize, usize)) -> Result<[Duration; 3], String> {
    let exe = std::env::current_exe().map_err(|error| format!("locating this binary: {error}"))?;
    let output = Command::new(exe)
        .arg("--corpus")
        .arg(corpus)
        .arg("--tokenizer-probe")
        .arg(format!("{first}-{last}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("running the tokenizer probe: {error}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let nanos: Vec<u64> = stdout.split_whitespace().filter_map(|word| word.parse().ok()).collect();
    match (output.status.success(), nanos.as_slice()) {
        (true, &[load, first, warm]) => {
            Ok([Duration::from_nanos(load), Duration::from_nanos(first), Duration::from_nanos(warm)])
        }
        _ => Err(format!("the tokenizer probe failed: {stdout}{}", String::from_utf8_lossy(&output.stderr))),
    }
}

/// `--tokenizer-probe`: in this fresh process, time loading the tokenizer, then two counts of
/// the window's text; prints the three times in nanoseconds.
fn probe(corpus: &Path, window: &str) -> Result<(), String> {
    let (first, last) = window
        .split_once('-')
        .and_then(|(first, last)| Some((first.parse::<usize>().ok()?, last.parse::<usize>().ok()?)))
        .filter(|&(first, last)| first >= 1 && last >= first)
        .ok_or_else(|| format!("--tokenizer-probe takes FIRST-LAST, got `{window}`"))?;
    let text = std::fs::read_to_string(corpus).map_err(|error| format!("reading the corpus: {error}"))?;
    let window_text: String = text.split_inclusive('\n').skip(first - 1).take(last + 1 - first).collect();
    let start = Instant::now();
    loupe_core::tokens::warm_up();
    let load = start.elapsed();
    let mut counts = [Duration::ZERO; 2];
    for count in &mut counts {
        let start = Instant::now();
        black_box(loupe_core::tokens::count(black_box(&window_text)));
        *count = start.elapsed();
    }
    println!("{} {} {}", load.as_nanos(), counts[0].as_nanos(), counts[1].as_nanos());
    Ok(())
}

/// `pass`/`MISS` on p50, with a remark when p99 misses the same bound.
fn verdict(pass: bool, samples: &Samples, bound: Duration) -> String {
    let mut verdict = if pass { "pass".to_owned() } else { "**MISS**".to_owned() };
    if pass && samples.p99() > bound {
        verdict.push_str(" (p99 over)");
    }
    verdict
}

fn preview_label(max_preview_chars: usize) -> String {
    if max_preview_chars == 0 { "12000 (shipped default)".into() } else { max_preview_chars.to_string() }
}

/// `count` windows of `window` lines, spread over the file by a fixed stride.
fn windows(total_lines: usize, window: usize, count: usize) -> Vec<(usize, usize)> {
    let span = total_lines - window + 1;
    (0..count)
        .map(|i| {
            let first = 1 + (i * 7_919 + 13) % span;
            (first, first + window - 1)
        })
        .collect()
}

/// The engine as `loupe serve --root <root> --max-preview-chars N` plus `mcp::SESSION_FLAGS`
/// opens it, with no `LOUPE_*` variable.
fn open_engine(root: &Path, max_preview_chars: usize) -> Result<Engine, String> {
    let mut flags = vec![("root".to_owned(), Value::from(root.display().to_string()))];
    for pair in mcp::SESSION_FLAGS.chunks(2) {
        let key = pair[0].trim_start_matches("--").replace('-', "_");
        let value = pair[1].parse::<u64>().map_or_else(|_| Value::from(pair[1]), Value::from);
        flags.push((key, value));
    }
    if max_preview_chars > 0 {
        flags.push(("max_preview_chars".to_owned(), Value::from(max_preview_chars)));
    }
    let sources = Sources { flags, env: Vec::new(), client_roots: Vec::new(), current_dir: root.to_path_buf() };
    let (config, _warnings) = load(&sources)?;
    Engine::new(config).map_err(|error| error.to_string())
}

/// Fails on an error response; returns whether the whole window came back.
fn check_engine(response: &loupe_engine::Response, window: usize) -> Result<bool, String> {
    if !response.ok {
        return Err(format!("engine read failed: {}", response.face));
    }
    let truncated = response.meta.get("truncated").and_then(Value::as_bool).unwrap_or(false);
    let shown = response.content.as_deref().map_or(0, |text| text.lines().count());
    Ok(!truncated && shown == window)
}

/// Times `count` runs of `body`.
fn time_each(count: usize, mut body: impl FnMut() -> Result<(), String>) -> Result<Samples, String> {
    let mut samples = Samples::with_capacity(count);
    for _ in 0..count {
        let start = Instant::now();
        body()?;
        samples.push(start.elapsed());
    }
    Ok(samples)
}

/// The floor: read the file and copy out the window's lines, nothing else.
fn plain_once(corpus: &Path, (first, last): (usize, usize)) -> Result<Duration, String> {
    let start = Instant::now();
    let text = std::fs::read_to_string(corpus).map_err(|error| format!("reading the corpus: {error}"))?;
    let window: String = text.split_inclusive('\n').skip(first - 1).take(last + 1 - first).collect();
    black_box(window);
    Ok(start.elapsed())
}

/// `sed -n 'A,Bp' file`, spawn to exit with its output read.
fn sed_once(corpus: &Path, (first, last): (usize, usize)) -> Result<Duration, String> {
    let start = Instant::now();
    let output = Command::new("sed")
        .arg("-n")
        .arg(format!("{first},{last}p"))
        .arg(corpus)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("running sed: {error}"))?;
    let elapsed = start.elapsed();
    let lines = output.stdout.iter().filter(|&&byte| byte == b'\n').count();
    if !output.status.success() || lines != last + 1 - first {
        return Err(format!("sed printed {lines} lines for {first}..{last}"));
    }
    Ok(elapsed)
}

/// One `tools/call` round trip: write the request line, read the answer line. Returns the
/// time and the answer's size; the answer is checked after the clock stops.
fn mcp_call(server: &mut mcp::Server, id: u64, arguments: &Value) -> Result<(Duration, usize), String> {
    let line = mcp::read_call(id, arguments);
    let start = Instant::now();
    server.send(&line).map_err(|error| format!("sending tools/call: {error}"))?;
    let answer = server.receive().map_err(|error| format!("reading the tools/call answer: {error}"))?;
    let elapsed = start.elapsed();
    let size = answer.len();
    mcp::check_result(answer, id)?;
    Ok((elapsed, size))
}

/// Time to first answer, split at the `initialize` answer.
struct ColdStarts {
    /// Spawn → `tools/call` answered.
    first_answer: Samples,
    /// Spawn → `initialize` answered.
    initialized: Samples,
    /// `initialize` answered → `tools/call` answered.
    first_call: Samples,
}

/// Fresh `loupe serve` processes, each sent `initialize`, `initialized` and one `tools/call`
/// at once, the way a client that does not wait would.
fn cold_starts(args: &Args, root: &Path, arguments: &Value) -> Result<ColdStarts, String> {
    let burst = format!("{}{}", mcp::handshake(), mcp::read_call(1, arguments));
    let mut cold = ColdStarts {
        first_answer: Samples::with_capacity(args.cold_starts),
        initialized: Samples::with_capacity(args.cold_starts),
        first_call: Samples::with_capacity(args.cold_starts),
    };
    for _ in 0..args.cold_starts {
        let command = mcp::serve_command(&args.loupe, root, args.max_preview_chars);
        let start = Instant::now();
        let mut server = mcp::Server::spawn(command).map_err(|error| format!("spawning loupe serve: {error}"))?;
        server.send(&burst).map_err(|error| format!("writing to loupe serve: {error}"))?;
        let init_answer = server.receive().map_err(|error| format!("reading the initialize answer: {error}"))?;
        let initialized = start.elapsed();
        mcp::check_result(init_answer, 0)?;
        let call_answer = server.receive().map_err(|error| format!("reading the tools/call answer: {error}"))?;
        let answered = start.elapsed();
        mcp::check_result(call_answer, 1)?;
        server.close()?;
        cold.first_answer.push(answered);
        cold.initialized.push(initialized);
        cold.first_call.push(answered - initialized);
    }
    Ok(cold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_deterministic_and_inside_the_file() {
        let all = windows(10_000, 300, 2000);
        assert_eq!(all, windows(10_000, 300, 2000));
        assert!(all.iter().all(|&(first, last)| first >= 1 && last <= 10_000 && last + 1 - first == 300));
        assert!(all.iter().any(|&(first, _)| first < 100) && all.iter().any(|&(_, last)| last > 9_900));
        assert_eq!(windows(300, 300, 3), vec![(1, 300); 3]);
    }
}
