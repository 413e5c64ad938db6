//! Import resolution over a real tree: how long `Layout::new` and resolving every import
//! take, and what share of each language's imports lands on a workspace file.
//!
//! Owns the measurement only: files are parsed first (not timed), then the layout is built
//! and every import resolved (timed). Must not be used as a test.
//!
//! ```text
//! cargo run --release -p loupe-graph --example resolve_corpus -- DIR [--top N] [--dump LANG]
//! ```
//!
//! `--dump LANG` prints every import of that language with what it resolved to, the ones
//! that reached no workspace file marked `external`:
//!
//! ```text
//! resolved src/lib.rs:3 "crate::config" ["Config"] level=0 -> src/config.rs
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use loupe_core::RepoPath;
use loupe_graph::{Layout, Resolved};
use loupe_syntax::{Extract, Import, Lang, parse_with};

/// Files larger than this are skipped, as the index does.
const MAX_BYTES: u64 = 2 << 20;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next().map(PathBuf::from) else {
        eprintln!("usage: resolve_corpus DIR [--top N] [--dump LANG]");
        std::process::exit(2);
    };
    let mut top = 8;
    let mut dump_lang: Option<String> = None;
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--top" => top = args.next().and_then(|n| n.parse().ok()).unwrap_or(top),
            "--dump" => dump_lang = args.next(),
            _ => {}
        }
    }
    let mut paths = Vec::new();
    collect(&root, &root, &mut paths);
    paths.sort();
    let repo_paths: Vec<RepoPath> = paths.iter().filter_map(|path| RepoPath::normalize(path)).collect();

    let parse_start = Instant::now();
    let mut sources: Vec<(RepoPath, Lang, Vec<Import>)> = Vec::new();
    for path in &repo_paths {
        let Some(lang) = Lang::from_path(path.as_str()) else { continue };
        let full = root.join(path.as_str());
        if std::fs::metadata(&full).map_or(true, |metadata| metadata.len() > MAX_BYTES) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let imports = parse_with(lang, &text, Extract::Declarations).imports;
        sources.push((path.clone(), lang, imports));
    }
    let parse_time = parse_start.elapsed();

    let read_root = root.clone();
    let read = move |path: &RepoPath| std::fs::read_to_string(read_root.join(path.as_str())).ok();
    let layout_start = Instant::now();
    let layout = Layout::new(&repo_paths, &read);
    let layout_time = layout_start.elapsed();

    let resolve_start = Instant::now();
    let mut results: Vec<Vec<Resolved>> = Vec::new();
    for (from, lang, imports) in &sources {
        for import in imports {
            results.push(layout.resolve(from, *lang, import));
        }
    }
    let resolve_time = resolve_start.elapsed();

    struct Tally {
        imports: usize,
        to_files: usize,
        externals: BTreeMap<String, usize>,
    }
    let mut by_lang: BTreeMap<Lang, Tally> = BTreeMap::new();
    let mut results = results.into_iter();
    for (from, lang, imports) in &sources {
        for import in imports {
            let resolved = results.next().unwrap_or_default();
            let tally =
                by_lang.entry(*lang).or_insert_with(|| Tally { imports: 0, to_files: 0, externals: BTreeMap::new() });
            tally.imports += 1;
            let to_file = resolved.iter().any(|target| matches!(target, Resolved::File(_)));
            if dump_lang.as_deref() == Some(lang.name()) {
                let targets: Vec<&str> = resolved
                    .iter()
                    .map(|target| match target {
                        Resolved::File(path) => path.as_str(),
                        Resolved::External(name) => name.as_str(),
                    })
                    .collect();
                let (module, names, level) = (&import.module, &import.names, import.relative_level);
                let status = if to_file { "resolved" } else { "external" };
                println!(
                    "{status} {from}:{} {module:?} {names:?} level={level} -> {}",
                    import.line,
                    targets.join(", ")
                );
            }
            if to_file {
                tally.to_files += 1;
                continue;
            }
            for target in &resolved {
                if let Resolved::External(name) = target {
                    *tally.externals.entry(name.clone()).or_default() += 1;
                }
            }
        }
    }
    let total: usize = by_lang.values().map(|tally| tally.imports).sum();
    println!("{}: {} files, {} parsed in {:.1?}", root.display(), repo_paths.len(), sources.len(), parse_time);
    println!(
        "Layout::new {:.1?}; resolve {} imports in {:.1?} ({:.2} µs each)",
        layout_time,
        total,
        resolve_time,
        resolve_time.as_secs_f64() * 1e6 / total.max(1) as f64
    );
    for (lang, tally) in &by_lang {
        let mut externals: Vec<(&String, &usize)> = tally.externals.iter().collect();
        externals.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = externals.iter().take(top).map(|(name, count)| format!("{name} {count}")).collect();
        println!(
            "  {:<10} {:>8} imports, {:>5.1}% to files; top externals: {}",
            lang.name(),
            tally.imports,
            100.0 * tally.to_files as f64 / tally.imports.max(1) as f64,
            shown.join(", ")
        );
    }
}

/// Every file under `dir` as a root-relative `/` path, skipping VCS and build directories.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            let name = entry.file_name();
            if matches!(name.to_str(), Some(".git" | "node_modules" | "target")) {
                continue;
            }
            collect(root, &path, out);
        } else if kind.is_file()
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}
