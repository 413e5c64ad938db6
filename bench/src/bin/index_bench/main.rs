//! `index_bench`: loupe's index on real corpora, next to ripgrep and universal-ctags in the
//! same run. Per corpus: files and MB, cold index time, index size, peak RSS, warm start to the
//! first answer, touch-to-searchable latency, search latency p50/p95 against `rg` on a fixed
//! query set, symbol lookup latency, outline cost, and symbol recall against ctags.
//!
//! ```text
//! index_bench --loupe target/release/loupe [--out bench/results/index.md] NAME=DIR...
//! ```
//!
//! Each corpus is measured by a child process of this binary (`--worker`), so that the peak
//! RSS read from `/proc/self/status` (`VmHWM`) right after the in-process cold build belongs to
//! that build alone. The children print one JSON line each; this process renders the tables.
//! No assertion on time anywhere: a missed target is a table cell.

// The same allocator as the `loupe` binary, so that the in-process build measures what it runs.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod mcp;
mod mcp_search;
mod queries;
mod recall;
mod report;
mod stats;
mod worker;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::Parser;

use crate::worker::{CorpusReport, WorkerOptions};

#[derive(Debug, Parser)]
#[command(name = "index_bench", about = "loupe's index on real corpora, next to rg and ctags in the same run.")]
struct Cli {
    /// Corpora as NAME=DIR (names with a query set: linux, django, rust-src, zod, rxjs).
    #[arg(required = true)]
    corpora: Vec<String>,
    /// The `loupe` binary (for `loupe serve`, `loupe index` and `loupe search`).
    #[arg(long, default_value = "target/release/loupe")]
    loupe: PathBuf,
    /// Where the index dirs go (one per corpus, cleared first).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Also write the tables, under a header saying where and how they were measured, here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The command to record in the header (default: this process's arguments).
    #[arg(long)]
    command: Option<String>,
    /// Timed `search` calls per query (after two untimed ones) and per symbol lookup.
    #[arg(long, default_value_t = 10)]
    search_runs: usize,
    /// Timed `rg` runs per query (after one untimed one).
    #[arg(long, default_value_t = 5)]
    rg_runs: usize,
    /// `loupe serve` starts.
    #[arg(long, default_value_t = 5)]
    warm_starts: usize,
    /// Touches measured through the watcher.
    #[arg(long, default_value_t = 10)]
    touch_runs: usize,
    /// Touches measured through one `loupe search` process each.
    #[arg(long, default_value_t = 3)]
    cli_touch_runs: usize,
    /// Files sampled for the outline ratio.
    #[arg(long, default_value_t = 50)]
    outline_files: usize,
    /// Run one step only (after the cold build it needs): `outline` prints the outline table
    /// and every sampled file's ratio; `mcp` the cold and warm starts and search through
    /// `loupe serve` next to `rg -m 20`; `scale` that and the watcher, as a table of cost
    /// against tree size (list the corpora smallest first), whose cold builds and `ctags -R`
    /// run a second time after the rest, largest tree first (the table takes each tree's best,
    /// so that the machine's drift over the run does not pass for the cost of a larger tree);
    /// `cold` only `ctags -R` and the cold build.
    #[arg(long, value_parser = ["outline", "mcp", "scale", "cold"])]
    only: Option<String>,
    /// Internal: measure the single corpus given and print its report as JSON.
    #[arg(long, hide = true)]
    worker: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("index_bench: {error}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let corpora: Vec<(String, PathBuf)> = cli
        .corpora
        .iter()
        .map(|spec| match spec.split_once('=') {
            Some((name, dir)) if !name.is_empty() && !dir.is_empty() => Ok((name.to_owned(), PathBuf::from(dir))),
            _ => Err(format!("expected NAME=DIR, got `{spec}`")),
        })
        .collect::<Result<_, _>>()?;
    let work = cli.work.clone().unwrap_or_else(|| std::env::temp_dir().join("loupe-index-bench"));
    let loupe =
        loupe_vfs::canonical_path(&cli.loupe).map_err(|error| format!("--loupe {}: {error}", cli.loupe.display()))?;
    if cli.worker {
        let [(name, dir)] = corpora.as_slice() else { return Err("--worker takes exactly one corpus".into()) };
        let options = WorkerOptions {
            name: name.clone(),
            dir: dir.clone(),
            loupe,
            work,
            search_runs: cli.search_runs,
            rg_runs: cli.rg_runs,
            warm_starts: cli.warm_starts,
            touch_runs: cli.touch_runs,
            cli_touch_runs: cli.cli_touch_runs,
            outline_files: cli.outline_files,
            only_outline: cli.only.as_deref() == Some("outline"),
            only_mcp: cli.only.as_deref() == Some("mcp"),
            only_scale: cli.only.as_deref() == Some("scale"),
            only_cold: cli.only.as_deref() == Some("cold"),
        };
        let report = worker::run(&options)?;
        println!("{}", serde_json::to_string(&report).map_err(|error| error.to_string())?);
        return Ok(());
    }

    let load_start = load_average();
    let mut reports = Vec::new();
    for (name, dir) in &corpora {
        let mut report = spawn_worker(cli, cli.only.as_deref(), &loupe, &work, name, dir)?;
        report.version = corpus_version(name, dir);
        reports.push(report);
    }
    if matches!(cli.only.as_deref(), Some("scale" | "mcp")) {
        // The second round, in the reverse order: a tree measured early in the first round is
        // measured late in this one (this machine's speed drifts by 15-25 % within an hour, so
        // one round compares a tree measured at one moment with a peer measured at another).
        for ((name, dir), report) in corpora.iter().zip(reports.iter_mut()).rev() {
            let again = spawn_worker(cli, Some("cold"), &loupe, &work, name, dir)?;
            report.cold_repeats.push(again.cold);
        }
    }
    let tables = match cli.only.as_deref() {
        Some("outline") => report::render_outline_only(&reports),
        Some("scale") => report::render_scale(&reports),
        Some("cold") => report::render_cold_only(&reports),
        Some(_) => report::render_mcp_only(&reports),
        None => report::render(&reports),
    };
    print!("{tables}");
    if let Some(out) = &cli.out {
        let header = header(cli, &load_start);
        let text = format!("{header}{tables}- load average at end: {}\n", load_average());
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|error| format!("{}: {error}", parent.display()))?;
        }
        std::fs::write(out, text).map_err(|error| format!("writing {}: {error}", out.display()))?;
        eprintln!("written: {}", out.display());
    }
    Ok(())
}

fn spawn_worker(
    cli: &Cli,
    only: Option<&str>,
    loupe: &Path,
    work: &Path,
    name: &str,
    dir: &Path,
) -> Result<CorpusReport, String> {
    let exe = std::env::current_exe().map_err(|error| format!("cannot find this binary: {error}"))?;
    let output = Command::new(exe)
        .arg("--worker")
        .arg("--loupe")
        .arg(loupe)
        .arg("--work")
        .arg(work)
        .args(["--search-runs", &cli.search_runs.to_string()])
        .args(["--rg-runs", &cli.rg_runs.to_string()])
        .args(["--warm-starts", &cli.warm_starts.to_string()])
        .args(["--touch-runs", &cli.touch_runs.to_string()])
        .args(["--cli-touch-runs", &cli.cli_touch_runs.to_string()])
        .args(["--outline-files", &cli.outline_files.to_string()])
        .args(only.iter().flat_map(|step| ["--only", step]))
        .arg(format!("{name}={}", dir.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("starting the worker for {name}: {error}"))?;
    if !output.status.success() {
        return Err(format!("the worker for {name} failed ({})", output.status));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|line| !line.trim().is_empty()).ok_or("the worker printed nothing")?;
    serde_json::from_str(line).map_err(|error| format!("the worker for {name} printed bad JSON: {error}"))
}

/// The version `fetch-corpora.sh` stamped, when the corpus came from it.
fn corpus_version(name: &str, dir: &Path) -> String {
    let stamp = dir.parent().map(|parent| parent.join(".stamps").join(name));
    stamp
        .and_then(|stamp| std::fs::read_to_string(stamp).ok())
        .map_or_else(|| "—".to_owned(), |text| text.trim().to_owned())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

/// First line of `program args...`'s standard output, or "?".
fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|output| String::from_utf8_lossy(&output.stdout).lines().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn header(cli: &Cli, load_start: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_default();
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| info.lines().next().map(|line| line.split_whitespace().nth(1).unwrap_or("0").to_owned()))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or_else(String::new, |kb| format!(", {:.0} GB RAM", kb as f64 / 1e6));
    let mut commit = first_line("git", &["rev-parse", "--short", "HEAD"]);
    // "?" is also what an empty output gives: a clean tree.
    if first_line("git", &["status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench"]) != "?" {
        commit.push_str(" (with uncommitted changes outside bench/)");
    }
    let command = cli.command.clone().unwrap_or_else(|| std::env::args().collect::<Vec<_>>().join(" "));
    format!(
        "# index benchmark\n\n\
         - date: {}\n\
         - machine: nproc {cores}{}{memory}, {}; load average at start: {load_start}\n\
         - toolchain: {}; release profile\n\
         - commit: {commit}\n\
         - peers: {}; {}\n\
         - command: `{command}`\n\n",
        first_line("date", &["-u", "+%Y-%m-%d %H:%M:%S UTC"]),
        if cpu.is_empty() { String::new() } else { format!(" ({cpu})") },
        first_line("uname", &["-sr"]),
        first_line("rustc", &["--version"]),
        first_line("rg", &["--version"]),
        first_line("ctags", &["--version"]).split(',').next().unwrap_or("?"),
    )
}
