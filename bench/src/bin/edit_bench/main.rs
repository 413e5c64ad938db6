//! `edit_bench`: the latency of a 3-file `edit` call and of `manage undo`, through the engine
//! (validation, syntax check, journal with fsync, atomic renames, index update), on C files of
//! 1k and 20k lines cut from the SQLite amalgamation of `bench/corpora/read/big.c`.
//!
//! The peer, measured in the same run, is the floor of any durable write: the same three files
//! written with a temporary file, fsync and rename each, and nothing else. Each iteration edits
//! one marker line in each file, then undoes it, so the files return to their original bytes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use loupe_core::Config;
use loupe_engine::Engine;
use serde_json::json;

#[derive(Debug, Parser)]
#[command(about = "p50/p95 of a 3-file edit and of undo, against a bare atomic write of the same files")]
struct Options {
    /// The C source to cut the files from (10,000 lines; the 20k-line files repeat it).
    #[arg(long, default_value = "bench/corpora/read/big.c")]
    corpus: PathBuf,
    /// Edit + undo pairs per file size.
    #[arg(long, default_value_t = 60)]
    iterations: usize,
}

const MARKER: &str = "/* loupe-bench marker */";
const EDITED: &str = "/* loupe-bench marker, edited */";

fn main() {
    let options = Options::parse();
    let corpus = std::fs::read_to_string(&options.corpus).unwrap_or_else(|error| {
        panic!("cannot read {}: {error} (run bench/fetch-corpus.sh)", options.corpus.display())
    });
    let lines: Vec<&str> = corpus.lines().collect();
    println!(
        "| file size | 3-file edit p50 | p95 | same, check_syntax off, p50 | undo p50 | p95 | bare atomic write of 3 files p50 | edit / bare |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for size in [1_000usize, 20_000] {
        let row = measure(&lines, size, options.iterations);
        println!(
            "| {size} lines | {} | {} | {} | {} | {} | {} | {:.1}× |",
            ms(row.edit.0),
            ms(row.edit.1),
            ms(row.edit_unchecked),
            ms(row.undo.0),
            ms(row.undo.1),
            ms(row.bare),
            row.edit.0.as_secs_f64() / row.bare.as_secs_f64().max(1e-9)
        );
    }
}

struct Row {
    edit: (Duration, Duration),
    edit_unchecked: Duration,
    undo: (Duration, Duration),
    bare: Duration,
}

fn measure(lines: &[&str], size: usize, iterations: usize) -> Row {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let names = ["a.c", "b.c", "c.c"];
    for (offset, name) in names.iter().enumerate() {
        write_fixture(root.path(), name, lines, size, offset * 1000);
    }
    let engine = Engine::new(Config {
        root: Some(root.path().to_path_buf()),
        index_dir: Some(state.path().to_path_buf()),
        ..Config::default()
    })
    .unwrap();
    engine.refresh_index(&|_, _| {});
    let arguments = json!({"edits": names.iter().map(|name| json!({"path": name, "old_string": MARKER, "new_string": EDITED})).collect::<Vec<_>>()});
    let mut edits = Vec::with_capacity(iterations);
    let mut undos = Vec::with_capacity(iterations);
    for round in 0..iterations + 3 {
        let started = Instant::now();
        let response = engine.call("edit", arguments.clone());
        let edit = started.elapsed();
        assert!(response.ok, "{}", response.face);
        let started = Instant::now();
        let response = engine.call("manage", json!({"command": "undo"}));
        let undo = started.elapsed();
        assert!(response.ok, "{}", response.face);
        if round >= 3 {
            edits.push(edit);
            undos.push(undo);
        }
    }
    let mut unchecked_arguments = arguments.clone();
    unchecked_arguments["check_syntax"] = json!("off");
    let mut unchecked = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let response = engine.call("edit", unchecked_arguments.clone());
        unchecked.push(started.elapsed());
        assert!(response.ok, "{}", response.face);
        assert!(engine.call("manage", json!({"command": "undo"})).ok);
    }
    let contents: Vec<Vec<u8>> = names.iter().map(|name| std::fs::read(root.path().join(name)).unwrap()).collect();
    let mut bare = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        for (name, bytes) in names.iter().zip(&contents) {
            atomic_write(&root.path().join(name), bytes);
        }
        bare.push(started.elapsed());
    }
    Row {
        edit_unchecked: percentile(&mut unchecked, 0.5),
        edit: (percentile(&mut edits, 0.5), percentile(&mut edits, 0.95)),
        undo: (percentile(&mut undos, 0.5), percentile(&mut undos, 0.95)),
        bare: percentile(&mut bare, 0.5),
    }
}

/// `size` lines of the corpus from `start` (wrapping), with the marker in the middle.
fn write_fixture(dir: &Path, name: &str, lines: &[&str], size: usize, start: usize) {
    let mut text = String::new();
    for index in 0..size {
        if index == size / 2 {
            text.push_str(MARKER);
            text.push('\n');
        }
        text.push_str(lines[(start + index) % lines.len()]);
        text.push('\n');
    }
    std::fs::write(dir.join(name), text).unwrap();
}

fn atomic_write(target: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut temporary = tempfile::NamedTempFile::new_in(target.parent().unwrap()).unwrap();
    temporary.write_all(bytes).unwrap();
    temporary.as_file().sync_all().unwrap();
    temporary.persist(target).unwrap();
    std::fs::File::open(target.parent().unwrap()).unwrap().sync_all().unwrap();
}

fn percentile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort_unstable();
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}
