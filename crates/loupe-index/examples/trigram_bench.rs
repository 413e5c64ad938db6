//! Benchmark of the trigram index on a real tree: walk, read and extract trigrams on two
//! threads feeding one builder in order, write, reopen, then time candidate evaluation for a
//! fixed query set (and the verification a caller would do on top, for an end-to-end figure).
//!
//! Owns nothing the library uses; it is a measuring tool. Must not write anywhere but the index
//! path it is given (default: a temporary directory).
//!
//! ```text
//! cargo run --release -p loupe-index --example trigram_bench -- /tmp/linux/linux-source-6.12 [--index PATH] [--compare-extract]
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use loupe_index::trigram::{
    Candidates, IndexBuilder, LayeredIndex, Plan, TrigramIndex, plan_literal, plan_regex, trigrams_of,
};

const MAX_FILE_BYTES: u64 = 1 << 20;
const THREADS: usize = 2;
const RUNS: usize = 15;

/// (query, is_regex): identifiers of different frequencies, a rare string, regexes.
const QUERIES: &[(&str, bool)] = &[
    ("return", false),
    ("struct", false),
    ("static int", false),
    ("EXPORT_SYMBOL_GPL", false),
    ("kmalloc", false),
    ("mutex_lock", false),
    ("spin_lock_irqsave", false),
    ("copy_from_user", false),
    ("rcu_read_lock", false),
    ("MODULE_LICENSE", false),
    ("netif_receive_skb", false),
    ("sched_setattr_nocheck", false),
    ("Linus Torvalds", false),
    ("xyzzy_not_there", false),
    (r"(kmalloc|kzalloc)\(", true),
    (r"spin_(lock|unlock)_irq", true),
    (r"struct\s+file_operations", true),
    (r"EXPORT_SYMBOL(_GPL)?\(usb_", true),
    (r"\bdev_(err|warn|info)\b", true),
    (r"u(8|16|32|64) \w+_count", true),
];

struct Loaded {
    index: usize,
    /// The text's length; `None` for a binary or unreadable file.
    text_len: Option<usize>,
    trigrams: Vec<u32>,
    read: Duration,
    extract: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first().map(PathBuf::from) else {
        eprintln!("usage: trigram_bench DIR [--index PATH] [--compare-extract]");
        std::process::exit(2);
    };
    let temp = tempfile::tempdir().expect("temporary directory");
    let index_path = args
        .iter()
        .position(|arg| arg == "--index")
        .and_then(|at| args.get(at + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().join("text.idx"));
    let compare_extract = args.iter().any(|arg| arg == "--compare-extract");

    // Walk.
    let started = Instant::now();
    let mut paths = Vec::new();
    for entry in ignore::WalkBuilder::new(&root).build().flatten() {
        if entry.file_type().is_some_and(|kind| kind.is_file())
            && entry.metadata().is_ok_and(|meta| meta.len() <= MAX_FILE_BYTES)
        {
            paths.push(entry.into_path());
        }
    }
    let walk = started.elapsed();

    // Read + trigrams on THREADS workers, one builder fed in order.
    let build_started = Instant::now();
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::sync_channel::<Loaded>(256);
    let mut builder = IndexBuilder::new();
    let mut doc_paths: Vec<PathBuf> = Vec::new();
    let (mut read_total, mut extract_total, mut add_total) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut bytes_total, mut skipped_binary) = (0u64, 0usize);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            let sender = sender.clone();
            let (next, paths) = (&next, &paths);
            scope.spawn(move || {
                let mut trigrams = Vec::new();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = paths.get(index) else { break };
                    let read_started = Instant::now();
                    let text = read_text(path);
                    let read = read_started.elapsed();
                    let extract_started = Instant::now();
                    if let Some(text) = &text {
                        trigrams_of(text, &mut trigrams);
                    } else {
                        trigrams.clear();
                    }
                    let extract = extract_started.elapsed();
                    let loaded = Loaded {
                        index,
                        text_len: text.map(|text| text.len()),
                        trigrams: trigrams.clone(),
                        read,
                        extract,
                    };
                    if sender.send(loaded).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut pending: BTreeMap<usize, Loaded> = BTreeMap::new();
        let mut expected = 0;
        for loaded in receiver {
            pending.insert(loaded.index, loaded);
            while let Some(loaded) = pending.remove(&expected) {
                expected += 1;
                read_total += loaded.read;
                extract_total += loaded.extract;
                let Some(text_len) = loaded.text_len else {
                    skipped_binary += 1;
                    continue;
                };
                let add_started = Instant::now();
                builder.add(doc_paths.len() as u32, &loaded.trigrams);
                add_total += add_started.elapsed();
                bytes_total += text_len as u64;
                doc_paths.push(paths[loaded.index].clone());
            }
        }
    });
    let pipeline = build_started.elapsed();
    let trigram_count = builder.trigram_count();
    let builder_memory = builder.memory_bytes();
    let write_started = Instant::now();
    builder.write(&index_path).expect("write index");
    let write = write_started.elapsed();
    let build_total = build_started.elapsed();
    let peak_build = status_kib("VmHWM");

    // Reopen (warm: the file was just written).
    let read_started = Instant::now();
    let raw = std::fs::read(&index_path).expect("read index");
    let raw_read = read_started.elapsed();
    drop(raw);
    let open_started = Instant::now();
    let index = TrigramIndex::open(&index_path).expect("open index");
    let open = open_started.elapsed();

    println!("corpus            {}", root.display());
    println!(
        "files             {} indexed ({} binary skipped, walk {:.2} s)",
        doc_paths.len(),
        skipped_binary,
        walk.as_secs_f64()
    );
    println!("text              {:.1} MB", bytes_total as f64 / 1e6);
    println!(
        "build             {:.2} s wall (pipeline {:.2} s + write {:.2} s)",
        build_total.as_secs_f64(),
        pipeline.as_secs_f64(),
        write.as_secs_f64()
    );
    println!(
        "  split           read {:.2} s, trigrams {:.2} s (CPU summed over {THREADS} threads), posting build {:.2} s, write {:.2} s",
        read_total.as_secs_f64(),
        extract_total.as_secs_f64(),
        add_total.as_secs_f64(),
        write.as_secs_f64()
    );
    println!("trigrams          {trigram_count} distinct; builder held {:.0} MB", builder_memory as f64 / 1e6);
    println!(
        "index file        {:.1} MB ({:.1}% of text)",
        index.file_len() as f64 / 1e6,
        100.0 * index.file_len() as f64 / bytes_total.max(1) as f64
    );
    println!("peak RSS (build)  {:.0} MB", peak_build as f64 / 1024.0);
    println!(
        "open (warm)       {:.0} ms (of which fs::read {:.0} ms)",
        open.as_secs_f64() * 1e3,
        raw_read.as_secs_f64() * 1e3
    );
    println!("RSS after open    {:.0} MB", status_kib("VmRSS") as f64 / 1024.0);

    // Queries.
    println!();
    println!(
        "{:<32} {:>9} {:>9} {:>9} {:>11} {:>9}",
        "query", "plan µs", "p50 µs", "p95 µs", "candidates", "verify ms"
    );
    let mut all_runs = Vec::new();
    let mut end_to_end = Vec::new();
    for &(query, is_regex) in QUERIES {
        let plan_started = Instant::now();
        let plan = if is_regex { plan_regex(query, false).expect("valid regex") } else { plan_literal(query) };
        let plan_time = plan_started.elapsed();
        let mut runs = Vec::with_capacity(RUNS);
        let mut candidates = Candidates::All;
        for _ in 0..RUNS {
            let started = Instant::now();
            candidates = index.candidates(&plan);
            runs.push(started.elapsed());
        }
        runs.sort();
        all_runs.extend_from_slice(&runs);
        let pattern = if is_regex { query.to_string() } else { regex::escape(query) };
        let verify = verify(&candidates, &doc_paths, &pattern);
        end_to_end.push(plan_time + runs[RUNS / 2] + verify.1);
        let count = candidates.len().map_or("all".to_string(), |n| n.to_string());
        println!(
            "{:<32} {:>9.0} {:>9.0} {:>9.0} {:>11} {:>9.1}   ({} files match)",
            if is_regex { format!("/{query}/") } else { query.to_string() },
            plan_time.as_secs_f64() * 1e6,
            micros(runs[RUNS / 2]),
            micros(runs[RUNS * 95 / 100]),
            count,
            verify.1.as_secs_f64() * 1e3,
            verify.0
        );
        debug_assert!(!matches!(plan, Plan::Nothing));
    }
    all_runs.sort();
    end_to_end.sort();
    println!();
    println!(
        "candidate evaluation over all queries: p50 {:.0} µs, p95 {:.0} µs, max {:.0} µs",
        micros(all_runs[all_runs.len() / 2]),
        micros(all_runs[all_runs.len() * 95 / 100]),
        micros(all_runs[all_runs.len() - 1])
    );
    println!(
        "plan + candidates + verification (one thread, page cache warm): p50 {:.1} ms, p95 {:.1} ms",
        end_to_end[end_to_end.len() / 2].as_secs_f64() * 1e3,
        end_to_end[end_to_end.len() * 95 / 100].as_secs_f64() * 1e3
    );

    overlay_and_compaction(index, &doc_paths, &index_path);

    if compare_extract {
        compare_extraction(&doc_paths);
    }
}

/// Changes OVERLAY_DOCS documents through the overlay (every k-th one, re-extracted), times
/// queries over base + overlay, then compaction into a new base and its reopening.
fn overlay_and_compaction(index: TrigramIndex, paths: &[PathBuf], index_path: &Path) {
    const OVERLAY_DOCS: usize = 5_000;
    let mut layered = LayeredIndex::new(Some(index));
    let step = (paths.len() / OVERLAY_DOCS).max(1);
    let mut trigrams = Vec::new();
    let mut upsert_time = Duration::ZERO;
    let mut changed = 0;
    for (doc, path) in paths.iter().enumerate().step_by(step).take(OVERLAY_DOCS) {
        let Some(text) = read_text(path) else { continue };
        trigrams_of(&text, &mut trigrams);
        let started = Instant::now();
        layered.upsert(doc as u32, &trigrams);
        upsert_time += started.elapsed();
        changed += 1;
    }
    let mut runs = Vec::new();
    for &(query, is_regex) in QUERIES {
        let plan = if is_regex { plan_regex(query, false).expect("valid regex") } else { plan_literal(query) };
        for _ in 0..RUNS {
            let started = Instant::now();
            let _ = layered.candidates(&plan);
            runs.push(started.elapsed());
        }
    }
    runs.sort();
    let rss = status_kib("VmRSS");
    let compacted = index_path.with_extension("compacted");
    let started = Instant::now();
    layered.compact(&compacted).expect("compact");
    let compact_time = started.elapsed();
    let started = Instant::now();
    let reopened = TrigramIndex::open(&compacted).expect("reopen compacted");
    let reopen_time = started.elapsed();
    println!();
    println!(
        "overlay           {changed} docs upserted in {:.2} s ({:.0} µs each), {} postings, RSS {:.0} MB",
        upsert_time.as_secs_f64(),
        micros(upsert_time) / changed.max(1) as f64,
        layered.overlay().posting_count(),
        rss as f64 / 1024.0
    );
    println!(
        "layered queries   p50 {:.0} µs, p95 {:.0} µs over the query set",
        micros(runs[runs.len() / 2]),
        micros(runs[runs.len() * 95 / 100])
    );
    println!(
        "compaction        {:.2} s to write {:.1} MB, reopen {:.0} ms",
        compact_time.as_secs_f64(),
        reopened.file_len() as f64 / 1e6,
        reopen_time.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_file(&compacted);
}

/// The file's bytes, or `None` for a binary file (a NUL in the first 8 KiB) or a read error.
fn read_text(path: &Path) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let head = &bytes[..bytes.len().min(8192)];
    (!head.contains(&0)).then_some(bytes)
}

/// What a caller does with the candidates: read each and run the matcher. Returns the number
/// of files that really match and the time taken.
fn verify(candidates: &Candidates, paths: &[PathBuf], pattern: &str) -> (usize, Duration) {
    let started = Instant::now();
    let matcher = regex::bytes::Regex::new(pattern).expect("valid pattern");
    let check = |path: &PathBuf| std::fs::read(path).is_ok_and(|bytes| matcher.is_match(&bytes));
    let matching = match candidates {
        Candidates::All => paths.iter().filter(|path| check(path)).count(),
        Candidates::Docs(docs) => docs.iter().filter(|&&doc| check(&paths[doc as usize])).count(),
    };
    (matching, started.elapsed())
}

/// Times the bitset extraction against plain sort + dedup on the same texts, one thread.
fn compare_extraction(paths: &[PathBuf]) {
    let texts: Vec<Vec<u8>> = paths.iter().take(20_000).filter_map(|path| read_text(path)).collect();
    let megabytes = texts.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    let mut out = Vec::new();
    let started = Instant::now();
    let mut total = 0;
    for text in &texts {
        trigrams_of(text, &mut out);
        total += out.len();
    }
    let bitset = started.elapsed();
    let started = Instant::now();
    let mut check = 0;
    for text in &texts {
        out.clear();
        out.extend(text.windows(3).map(|w| {
            (u32::from(w[0].to_ascii_lowercase()) << 16)
                | (u32::from(w[1].to_ascii_lowercase()) << 8)
                | u32::from(w[2].to_ascii_lowercase())
        }));
        out.sort_unstable();
        out.dedup();
        check += out.len();
    }
    let sorting = started.elapsed();
    assert_eq!(total, check);
    println!();
    println!(
        "extraction on {megabytes:.0} MB, one thread: bitset {:.0} MB/s, sort+dedup {:.0} MB/s",
        megabytes / bitset.as_secs_f64(),
        megabytes / sorting.as_secs_f64()
    );
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// A field of /proc/self/status in KiB (0 where there is none).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1).and_then(|value| value.parse().ok()))
        })
        .unwrap_or(0)
}
