//! Checks the index's declarations parse (which leaves C and Python bodies out) against a
//! parse of the whole text, file by file, over every C or Python file under the directories
//! given: the facts must be the same. Where they are not, it prints the file, both error
//! counts and the definitions only one side has. A file whose whole parse has errors may
//! differ by design: an error inside a left-out body is not seen, and the declarations around
//! it come out as they would without it. Must not be used as a test.
//!
//! ```text
//! cargo run --release -p loupe-syntax --example skim_check -- [--lang python|c] DIR...
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loupe_syntax::{Extract, Lang, declarations_of_whole_parse, parse_with};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let lang = match args.iter().position(|arg| arg == "--lang") {
        Some(at) if at + 1 < args.len() => {
            let name = args.remove(at + 1);
            args.remove(at);
            Some(name)
        }
        _ => None,
    };
    if args.is_empty() {
        eprintln!("usage: skim_check [--lang python|c] DIR...");
        std::process::exit(2);
    }
    let mut paths = Vec::new();
    for dir in &args {
        collect(Path::new(dir), &mut paths);
    }
    paths.sort();
    let (mut files, mut bytes, mut same, mut differ_clean, mut differ_errors) = (0, 0, 0, 0, 0);
    let (mut skim_time, mut whole_time) = (Duration::ZERO, Duration::ZERO);
    for path in paths {
        let Some(file_lang) = Lang::from_path(&path.to_string_lossy()) else { continue };
        if !matches!(file_lang, Lang::C | Lang::Python) || lang.as_deref().is_some_and(|name| name != file_lang.name())
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if text.len() > 1 << 20 {
            continue;
        }
        files += 1;
        bytes += text.len();
        let started = Instant::now();
        let skimmed = parse_with(file_lang, &text, Extract::Declarations);
        skim_time += started.elapsed();
        let started = Instant::now();
        let whole = declarations_of_whole_parse(file_lang, &text);
        whole_time += started.elapsed();
        if skimmed == whole {
            same += 1;
            continue;
        }
        if whole.error_nodes == 0 {
            differ_clean += 1
        } else {
            differ_errors += 1
        }
        let only = |left: &loupe_syntax::FileFacts, right: &loupe_syntax::FileFacts| -> Vec<String> {
            left.definitions
                .iter()
                .filter(|definition| !right.definitions.contains(definition))
                .take(3)
                .map(|d| format!("{} {}-{}", d.name, d.span.start_line, d.span.end_line))
                .collect()
        };
        println!(
            "differs: {} (errors: skim {}, whole {}); only skim {:?}; only whole {:?}",
            path.display(),
            skimmed.error_nodes,
            whole.error_nodes,
            only(&skimmed, &whole),
            only(&whole, &skimmed)
        );
    }
    println!(
        "files {files} ({:.1} MB): same {same}, differ {differ_clean} with a whole parse without errors, \
         {differ_errors} with errors; declarations parse {:.2} s, whole parse {:.2} s",
        bytes as f64 / 1e6,
        skim_time.as_secs_f64(),
        whole_time.as_secs_f64()
    );
    if differ_clean > 0 {
        std::process::exit(1);
    }
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
