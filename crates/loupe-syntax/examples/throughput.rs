//! Throughput of `loupe_syntax::parse` over every recognised file under a directory.
//!
//! Owns the measurement only: files are read into memory first, so the time printed is parse
//! plus extraction, not IO. Must not be used as a test.
//!
//! ```text
//! cargo run --release -p loupe-syntax --example throughput -- DIR [--threads N] [--max-bytes N] [--lang NAME] [--declarations] [--digest]
//! ```
//!
//! `--digest` also prints a hash of every file's facts (path and facts, summed over the files,
//! so the order the threads took them in does not matter): two builds that print the same
//! digest found the same facts in every file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use loupe_syntax::{Extract, Lang, parse_with};

struct Options {
    root: PathBuf,
    threads: usize,
    max_bytes: u64,
    lang: Option<String>,
    extract: Extract,
    digest: bool,
}

fn main() {
    let Some(options) = options() else {
        eprintln!("usage: throughput DIR [--threads N] [--max-bytes N] [--lang NAME] [--declarations] [--digest]");
        std::process::exit(2);
    };
    let mut paths = Vec::new();
    collect(&options.root, &mut paths);
    paths.sort();
    let mut files: Vec<(Lang, String, String)> = Vec::new();
    for path in paths {
        let Some(lang) = Lang::from_path(&path.to_string_lossy()) else { continue };
        if options.lang.as_deref().is_some_and(|wanted| wanted != lang.name()) {
            continue;
        }
        let Ok(metadata) = std::fs::metadata(&path) else { continue };
        if metadata.len() > options.max_bytes {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        files.push((lang, path.to_string_lossy().into_owned(), String::from_utf8_lossy(&bytes).into_owned()));
    }
    let bytes: usize = files.iter().map(|(_, _, text)| text.len()).sum();

    // Largest first, handed out one at a time, so threads finish together.
    files.sort_by_key(|(_, _, text)| std::cmp::Reverse(text.len()));
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let totals: Vec<[usize; 7]> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..options.threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut totals = [0usize; 7];
                    while let Some((lang, path, text)) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let facts = parse_with(*lang, text, options.extract);
                        if options.digest {
                            use std::hash::{Hash, Hasher};
                            let mut hasher = std::collections::hash_map::DefaultHasher::new();
                            path.hash(&mut hasher);
                            format!("{facts:?}").hash(&mut hasher);
                            totals[6] = totals[6].wrapping_add(hasher.finish() as usize);
                        }
                        totals[0] += facts.definitions.len();
                        totals[1] += facts.calls.len();
                        totals[2] += facts.references.len();
                        totals[3] += facts.imports.len();
                        totals[4] += facts.type_relations.len();
                        totals[5] += usize::from(facts.error_nodes > 0);
                    }
                    totals
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap_or_default()).collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let sum = |index: usize| totals.iter().map(|t| t[index]).sum::<usize>();
    let megabytes = bytes as f64 / 1_000_000.0;
    println!(
        "files {}  MB {:.2}  seconds {:.3}  MB/s {:.2}  threads {}",
        files.len(),
        megabytes,
        seconds,
        megabytes / seconds.max(1e-9),
        options.threads
    );
    println!(
        "definitions {}  calls {}  references {}  imports {}  type_relations {}  files_with_errors {}",
        sum(0),
        sum(1),
        sum(2),
        sum(3),
        sum(4),
        sum(5)
    );
    if options.digest {
        let digest = totals.iter().fold(0usize, |sum, t| sum.wrapping_add(t[6]));
        println!("digest {digest:016x}");
    }
}

fn options() -> Option<Options> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        root: PathBuf::new(),
        threads: 1,
        max_bytes: u64::MAX,
        lang: None,
        extract: Extract::All,
        digest: false,
    };
    let mut root = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => options.threads = args.next()?.parse().ok()?,
            "--max-bytes" => options.max_bytes = args.next()?.parse().ok()?,
            "--lang" => options.lang = Some(args.next()?),
            "--declarations" => options.extract = Extract::Declarations,
            "--digest" => options.digest = true,
            _ => root = Some(PathBuf::from(arg)),
        }
    }
    options.root = root?;
    Some(options)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            collect(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}
