//! `analyze_bench`: the latency of `analyze` on real corpora: `impact` of a central file and
//! `calls` (depth 3, both directions) of a central function, through the engine as a server
//! runs it (index built and loaded first). The first query of each kind pays for building the
//! import graph and parsing the files it touches; the rest are the steady state an agent sees.
//!
//! The peer, measured in the same run, is what an agent without loupe would run to approximate
//! the same answer: `rg -l -w <module>` for the files that may import the file, and
//! `rg -n -w <function>` for the places that may call the function.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;
use loupe_core::Config;
use loupe_core::config::GateMode;
use loupe_engine::Engine;
use serde_json::{Value, json};

// The same allocator as the `loupe` binary.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Debug, Parser)]
#[command(about = "p50/p95 of analyze impact and calls on real corpora, next to rg in the same run")]
struct Options {
    /// Corpora to run, by name (django, linux, rxjs).
    #[arg(default_values_t = ["django".to_owned(), "rxjs".to_owned(), "linux".to_owned()])]
    corpora: Vec<String>,
    /// Where the corpora live.
    #[arg(long, default_value = "bench/corpora/index")]
    base: PathBuf,
    /// Timed repetitions of each query after the first.
    #[arg(long, default_value_t = 30)]
    runs: usize,
}

/// A corpus and the central file and function its queries start from.
struct Case {
    name: &'static str,
    impact_file: &'static str,
    module_word: &'static str,
    function: &'static str,
    function_file: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "django",
        impact_file: "django/utils/functional.py",
        module_word: "functional",
        function: "reverse",
        function_file: "django/urls/base.py",
    },
    Case {
        name: "linux",
        impact_file: "include/linux/list.h",
        module_word: "list",
        function: "ext4_fill_super",
        function_file: "fs/ext4/super.c",
    },
    Case {
        name: "rxjs",
        impact_file: "src/internal/Observable.ts",
        module_word: "Observable",
        function: "isFunction",
        function_file: "src/internal/util/isFunction.ts",
    },
];

fn main() {
    let options = Options::parse();
    println!(
        "| corpus | files | index build | first analyze (graph build) | query | nodes | first | p50 | p95 | rg peer p50 | p50 / rg |"
    );
    println!("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut after_edits = Vec::new();
    for name in &options.corpora {
        let Some(case) = CASES.iter().find(|case| case.name == name) else {
            eprintln!("unknown corpus {name}");
            continue;
        };
        after_edits.push(run(case, &options.base.join(case.name), options.runs));
    }
    println!();
    println!(
        "After an edit through `edit` (a blank line inserted at the top of the function's file, then undone): the next `analyze dependencies` of the central file, which brings the graphs up to date first (the goal: ≤ 50 ms), next to the graph build of the first analyze."
    );
    println!();
    println!("| corpus | first analyze (graph build) | after an edit: p50 | max | steady `dependencies` p50 |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for line in after_edits {
        println!("{line}");
    }
}

/// Edits made (and undone) to time the graphs' update after an edit.
const EDITS: usize = 5;

/// Runs the queries of `case`, printing their rows, and returns its after-an-edit row.
fn run(case: &Case, root: &Path, runs: usize) -> String {
    assert!(root.is_dir(), "{} is missing: run bash bench/index/fetch-corpora.sh {}", root.display(), case.name);
    let state = tempfile::tempdir().unwrap();
    let engine = Engine::new(Config {
        root: Some(root.to_path_buf()),
        index_dir: Some(state.path().to_path_buf()),
        gate_mode: GateMode::Off,
        analytics: false,
        ..Config::default()
    })
    .unwrap();
    let started = Instant::now();
    let stats = engine.refresh_index(&|_, _| {}).unwrap();
    let index_build = started.elapsed();

    let impact = json!({"mode": "impact", "target": case.impact_file});
    let calls = json!({"mode": "calls", "target": case.function, "path": case.function_file, "max_depth": 3});
    // The first analyze call builds the import graph: time a cheap one for that alone.
    let started = Instant::now();
    let first = engine.call("analyze", json!({"mode": "dependencies", "target": case.impact_file}));
    assert!(first.ok, "{}", first.face);
    let graph_build = started.elapsed();

    let rg_impact = peer(root, &["-l", "-w", case.module_word], runs.min(10));
    let rg_calls = peer(root, &["-n", "-w", case.function], runs.min(10));
    let mut impact_all = impact.clone();
    impact_all["max_nodes"] = json!(500);
    let mut calls_all = calls.clone();
    calls_all["max_nodes"] = json!(500);
    let queries = [
        ("impact", &impact, rg_impact),
        ("impact, max_nodes 500", &impact_all, rg_impact),
        ("calls depth 3", &calls, rg_calls),
        ("calls depth 3, max_nodes 500", &calls_all, rg_calls),
    ];
    for (label, arguments, rg) in queries {
        let (first, nodes) = timed(&engine, arguments);
        let mut times: Vec<Duration> = (0..runs).map(|_| timed(&engine, arguments).0).collect();
        times.sort();
        let p50 = times[times.len() / 2];
        let p95 = times[(times.len() * 95 / 100).min(times.len() - 1)];
        println!(
            "| {} | {} | {:.1} s | {} | {label} | {nodes} | {} | {} | {} | {} | {:.2}× |",
            case.name,
            stats.walked,
            index_build.as_secs_f64(),
            ms(graph_build),
            ms(first),
            ms(p50),
            ms(p95),
            ms(rg),
            p50.as_secs_f64() / rg.as_secs_f64().max(1e-9)
        );
    }
    let dependencies = json!({"mode": "dependencies", "target": case.impact_file});
    let mut steady: Vec<Duration> = (0..runs).map(|_| timed(&engine, &dependencies).0).collect();
    steady.sort();
    let mut after_edit = Vec::new();
    for _ in 0..EDITS {
        let insert =
            json!({"edits": [{"path": case.function_file, "operation": "insert", "line": 0, "new_string": "\n"}]});
        let edit = engine.call("edit", insert);
        assert!(edit.ok, "{}", edit.face);
        after_edit.push(timed(&engine, &dependencies).0);
        let undo = engine.call("manage", json!({"command": "undo"}));
        assert!(undo.ok, "{}", undo.face);
        timed(&engine, &dependencies);
    }
    after_edit.sort();
    format!(
        "| {} | {} | {} | {} | {} |",
        case.name,
        ms(graph_build),
        ms(after_edit[after_edit.len() / 2]),
        ms(after_edit[after_edit.len() - 1]),
        ms(steady[steady.len() / 2])
    )
}

fn timed(engine: &Engine, arguments: &Value) -> (Duration, usize) {
    let started = Instant::now();
    let response = engine.call("analyze", arguments.clone());
    let elapsed = started.elapsed();
    assert!(response.ok, "{arguments}: {}", response.face);
    (elapsed, response.meta["nodes"].as_array().map_or(0, Vec::len))
}

/// The p50 of `rg ARGS .` in `root`.
fn peer(root: &Path, args: &[&str], runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let started = Instant::now();
            let status = Command::new("rg")
                .args(args)
                .arg("--no-ignore-parent")
                .arg(".")
                .current_dir(root)
                .stdout(std::process::Stdio::null())
                .status()
                .expect("rg is installed by bench/index/fetch-corpora.sh");
            assert!(status.code().is_some_and(|code| code <= 1), "rg failed");
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}
