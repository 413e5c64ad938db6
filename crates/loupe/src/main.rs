//! The `loupe` binary: the command line and `loupe serve`. Glue only: every subcommand builds
//! the same JSON arguments an MCP client would send and hands them to the engine.
//!
//! Subcommands: `read`, `search`, `analyze`, `edit`, `undo`, `redo`, `history`, `manage`,
//! `index` (with a progress bar on a terminal) and `serve`. A one-shot command defaults to
//! `gate_mode = off` (§9.7 guards a session, and a command is a session of one call), unless
//! the configuration sets it. Logs go to stderr; stdout carries only the answer.

// mimalloc replaces `malloc` for the whole process, tree-sitter's C code included: parsing
// is allocation-heavy, and the Linux cold index needs less CPU with it (docs/decisions.md).
use mimalloc as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use loupe_engine::Engine;
use loupe_engine::config::{Sources, load};
use serde_json::{Map, Value};

#[derive(Debug, Parser)]
#[command(
    name = "loupe",
    version,
    about = "Exactly the code an agent needs: budgeted reads over MCP and the command line."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server over stdio.
    Serve {
        #[command(flatten)]
        config: ConfigFlags,
        /// Server ceiling on characters per response (`loupe read` takes it as a caller cap).
        #[arg(long)]
        max_preview_chars: Option<u64>,
    },
    /// Read a file or a window of it, printing what the model would see.
    Read(ReadArgs),
    /// Search the workspace (text, regex, symbol, file, directory; `auto` infers).
    Search(SearchArgs),
    /// Relationships of a file or symbol: dependencies, impact, calls, references, types,
    /// data_flow (e.g. `loupe analyze --mode calls --direction upstream parse_config`).
    Analyze(AnalyzeArgs),
    /// Show the session and server state: status | metrics | guidance.
    Manage {
        /// status | metrics | guidance
        command: String,
        #[arg(long)]
        session_id: Option<String>,
        /// Print the JSON envelope instead of the text face.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        config: ConfigFlags,
    },
    /// Apply edits: the `edit` tool's JSON arguments from a file or stdin (`-` or none).
    Edit(EditArgs),
    /// Undo the last edit transaction (or --transaction-id).
    Undo(UndoArgs),
    /// Redo the most recently undone transaction (or --transaction-id).
    Redo(UndoArgs),
    /// List recent edit transactions, newest first.
    History {
        #[arg(long)]
        limit: Option<u64>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        config: ConfigFlags,
    },
    /// Build or refresh the index, with a progress bar on a terminal.
    Index {
        #[command(flatten)]
        config: ConfigFlags,
    },
}

#[derive(Debug, Args)]
struct EditArgs {
    /// A JSON file with the arguments, e.g. {"edits": [...]}; `-` or nothing reads stdin.
    input: Option<PathBuf>,
    /// Show the diffs and write nothing (sets `dry_run`).
    #[arg(long)]
    dry_run: bool,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigFlags,
}

impl EditArgs {
    fn to_arguments(&self) -> anyhow::Result<Value> {
        let text = match &self.input {
            Some(path) if path.as_os_str() != "-" => {
                std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
            }
            _ => std::io::read_to_string(std::io::stdin()).context("reading the edit from stdin")?,
        };
        let mut arguments: Value = serde_json::from_str(&text).context("the edit input is not valid JSON")?;
        if let Value::Array(_) = arguments {
            arguments = serde_json::json!({ "edits": arguments });
        }
        if self.dry_run
            && let Value::Object(map) = &mut arguments
        {
            map.insert("dry_run".into(), Value::Bool(true));
        }
        Ok(arguments)
    }
}

#[derive(Debug, Args)]
struct UndoArgs {
    #[arg(long)]
    transaction_id: Option<String>,
    /// Restore even files that changed after the transaction.
    #[arg(long)]
    force: bool,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigFlags,
}

impl UndoArgs {
    fn to_arguments(&self, command: &str) -> Value {
        let mut map = Map::new();
        map.insert("command".into(), Value::from(command));
        if let Some(id) = &self.transaction_id {
            map.insert("transaction_id".into(), Value::from(id.as_str()));
        }
        if self.force {
            map.insert("force".into(), Value::Bool(true));
        }
        Value::Object(map)
    }
}

#[derive(Debug, Args)]
struct AnalyzeArgs {
    /// A file path, a symbol (`parse_config`, `Config::load`), or for data_flow
    /// `function.variable`.
    target: String,
    /// dependencies | impact | calls | references | types | data_flow
    #[arg(long)]
    mode: String,
    /// upstream | downstream | both
    #[arg(long)]
    direction: Option<String>,
    /// auto | file | symbol
    #[arg(long)]
    target_type: Option<String>,
    #[arg(long)]
    max_depth: Option<u64>,
    #[arg(long)]
    max_nodes: Option<u64>,
    /// The file that defines the target, when its name is ambiguous.
    #[arg(long)]
    path: Option<String>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigFlags,
}

impl AnalyzeArgs {
    fn to_arguments(&self) -> Value {
        let mut map = Map::new();
        map.insert("target".into(), Value::from(self.target.as_str()));
        map.insert("mode".into(), Value::from(self.mode.as_str()));
        for (key, value) in [("direction", &self.direction), ("target_type", &self.target_type), ("path", &self.path)] {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value.as_str()));
            }
        }
        for (key, value) in [("max_depth", self.max_depth), ("max_nodes", self.max_nodes)] {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value));
            }
        }
        Value::Object(map)
    }
}

#[derive(Debug, Args)]
struct SearchArgs {
    query: String,
    /// auto | text | regex | symbol | file | directory
    #[arg(long = "type")]
    kind: Option<String>,
    /// Subtree or glob to search under.
    #[arg(long)]
    path: Option<String>,
    #[arg(long)]
    glob: Option<String>,
    /// Comma-separated globs to leave out of this search.
    #[arg(long = "exclude-glob")]
    exclude_glob: Option<String>,
    /// Comma-separated extensions, e.g. rs,py
    #[arg(long)]
    file_types: Option<String>,
    /// Comma-separated symbol kinds, e.g. function,method
    #[arg(long)]
    kinds: Option<String>,
    #[arg(long)]
    case_sensitive: Option<bool>,
    #[arg(long)]
    whole_word: bool,
    #[arg(long)]
    max_results: Option<u64>,
    #[arg(long)]
    cursor: Option<String>,
    /// matches | files | count
    #[arg(long)]
    output: Option<String>,
    #[arg(long)]
    context_lines: Option<u64>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigFlags,
}

impl SearchArgs {
    fn to_arguments(&self) -> Value {
        let mut map = Map::new();
        map.insert("query".into(), Value::from(self.query.as_str()));
        let strings = [
            ("type", &self.kind),
            ("path", &self.path),
            ("glob", &self.glob),
            ("exclude", &self.exclude_glob),
            ("file_types", &self.file_types),
            ("kinds", &self.kinds),
            ("cursor", &self.cursor),
            ("output", &self.output),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value.as_str()));
            }
        }
        if let Some(flag) = self.case_sensitive {
            map.insert("case_sensitive".into(), Value::Bool(flag));
        }
        if self.whole_word {
            map.insert("whole_word".into(), Value::Bool(true));
        }
        for (key, value) in [("max_results", self.max_results), ("context_lines", self.context_lines)] {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value));
            }
        }
        Value::Object(map)
    }
}

/// Configuration flags (§14); each overrides loupe.toml and LOUPE_* variables.
#[derive(Debug, Args)]
struct ConfigFlags {
    /// Workspace root (default: LOUPE_ROOT, then the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Where the index lives (default: the user cache directory).
    #[arg(long)]
    index_dir: Option<PathBuf>,
    /// Log filter for stderr, e.g. `info` or `loupe=debug`.
    #[arg(long)]
    log: Option<String>,
    #[arg(long)]
    max_single_read_lines: Option<u64>,
    #[arg(long)]
    max_response_tokens: Option<u64>,
    #[arg(long)]
    max_index_file_bytes: Option<u64>,
    #[arg(long)]
    max_file_bytes: Option<u64>,
    /// Exclusion patterns, comma-separated (replaces the default list).
    #[arg(long)]
    exclude: Option<String>,
    /// Patterns that override `exclude`, comma-separated.
    #[arg(long)]
    allow: Option<String>,
    /// enforce | warn | off
    #[arg(long)]
    gate_mode: Option<String>,
    #[arg(long)]
    max_range_lines: Option<u64>,
    #[arg(long)]
    max_reads_per_session: Option<u64>,
    #[arg(long)]
    max_total_read_lines: Option<u64>,
    /// warn | block | off
    #[arg(long)]
    relevance: Option<String>,
    #[arg(long)]
    strict_session_id: bool,
    #[arg(long)]
    session_ttl_secs: Option<u64>,
    /// Turn the analytics log off.
    #[arg(long)]
    no_analytics: bool,
    /// Refuse edit, undo and redo.
    #[arg(long)]
    read_only: bool,
    /// hidden | listed | disabled
    #[arg(long)]
    legacy_tools: Option<String>,
}

impl ConfigFlags {
    fn to_pairs(&self) -> Vec<(String, Value)> {
        let mut pairs: Vec<(String, Value)> = Vec::new();
        let mut push = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                pairs.push((key.to_owned(), value));
            }
        };
        push("root", self.root.as_ref().map(|p| Value::from(p.display().to_string())));
        push("index_dir", self.index_dir.as_ref().map(|p| Value::from(p.display().to_string())));
        push("log", self.log.clone().map(Value::from));
        push("max_single_read_lines", self.max_single_read_lines.map(Value::from));
        push("max_response_tokens", self.max_response_tokens.map(Value::from));
        push("max_index_file_bytes", self.max_index_file_bytes.map(Value::from));
        push("max_file_bytes", self.max_file_bytes.map(Value::from));
        push("exclude", self.exclude.clone().map(Value::from));
        push("allow", self.allow.clone().map(Value::from));
        push("gate_mode", self.gate_mode.clone().map(Value::from));
        push("max_range_lines", self.max_range_lines.map(Value::from));
        push("max_reads_per_session", self.max_reads_per_session.map(Value::from));
        push("max_total_read_lines", self.max_total_read_lines.map(Value::from));
        push("relevance", self.relevance.clone().map(Value::from));
        push("strict_session_id", self.strict_session_id.then_some(Value::Bool(true)));
        push("session_ttl_secs", self.session_ttl_secs.map(Value::from));
        push("analytics", self.no_analytics.then_some(Value::Bool(false)));
        push("read_only", self.read_only.then_some(Value::Bool(true)));
        push("legacy_tools", self.legacy_tools.clone().map(Value::from));
        pairs
    }
}

#[derive(Debug, Args)]
struct ReadArgs {
    /// The file to read, relative to the root.
    target: String,
    /// file | snippet | symbol | outline | diff_preview (default: snippet when a line window is given, else file)
    #[arg(long)]
    mode: Option<String>,
    #[arg(long)]
    offset: Option<u64>,
    #[arg(long)]
    limit: Option<u64>,
    #[arg(long)]
    start_line: Option<u64>,
    #[arg(long)]
    end_line: Option<u64>,
    #[arg(long)]
    context_lines: Option<u64>,
    /// "10-20"
    #[arg(long)]
    line_range: Option<String>,
    #[arg(long)]
    cursor: Option<String>,
    #[arg(long)]
    max_tokens: Option<u64>,
    #[arg(long)]
    max_bytes: Option<u64>,
    #[arg(long)]
    max_lines: Option<u64>,
    #[arg(long)]
    max_preview_chars: Option<u64>,
    /// none | snippet
    #[arg(long)]
    preview_mode: Option<String>,
    /// minimal | standard
    #[arg(long)]
    metadata: Option<String>,
    /// diff_preview: HEAD | INDEX | WORKTREE
    #[arg(long)]
    against: Option<String>,
    /// Print the JSON envelope instead of the text face.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigFlags,
}

impl ReadArgs {
    fn to_arguments(&self) -> Value {
        let mut map = Map::new();
        let windowed = self.start_line.is_some() || self.line_range.is_some() || self.end_line.is_some();
        let mode = self.mode.clone().unwrap_or_else(|| if windowed { "snippet" } else { "file" }.to_owned());
        map.insert("mode".into(), Value::from(mode));
        map.insert("target".into(), Value::from(self.target.as_str()));
        let numbers = [
            ("offset", self.offset),
            ("limit", self.limit),
            ("start_line", self.start_line),
            ("end_line", self.end_line),
            ("context_lines", self.context_lines),
            ("max_tokens", self.max_tokens),
            ("max_bytes", self.max_bytes),
            ("max_lines", self.max_lines),
            ("max_preview_chars", self.max_preview_chars),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value));
            }
        }
        let strings = [
            ("line_range", &self.line_range),
            ("cursor", &self.cursor),
            ("preview_mode", &self.preview_mode),
            ("metadata", &self.metadata),
            ("against", &self.against),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value.as_str()));
            }
        }
        Value::Object(map)
    }
}

fn main() -> ExitCode {
    // The tokenizer's vocabulary takes ~45 ms to build and every answer needs it: start now,
    // in parallel with parsing arguments, loading configuration and the MCP handshake.
    std::thread::spawn(loupe_core::tokens::warm_up);
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("loupe: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve { config, max_preview_chars } => {
            let mut flags = config.to_pairs();
            flags.extend(max_preview_chars.map(|value| ("max_preview_chars".to_owned(), Value::from(value))));
            serve(&flags, config.root.is_some())
        }
        Command::Read(args) => {
            let engine = open_engine(&args.config)?;
            // Symbol resolution needs a current index; plain reads never touch it.
            if matches!(args.mode.as_deref(), Some("symbol" | "outline")) {
                engine.refresh_index(&|_, _| {});
            }
            let code = print_response(&engine.call("read", args.to_arguments()), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Search(args) => {
            let engine = open_engine(&args.config)?;
            engine.refresh_index(&|_, _| {});
            let code = print_response(&engine.call("search", args.to_arguments()), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Analyze(args) => {
            let engine = open_engine(&args.config)?;
            engine.refresh_index(&|_, _| {});
            let code = print_response(&engine.call("analyze", args.to_arguments()), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Manage { command, session_id, json, config } => {
            let engine = open_engine(&config)?;
            // `status` reports the index: bring it up to date first, as `search` does.
            if command == "status" {
                engine.refresh_index(&|_, _| {});
            }
            let mut arguments = Map::new();
            arguments.insert("command".into(), Value::from(command));
            if let Some(session_id) = session_id {
                arguments.insert("session_id".into(), Value::from(session_id));
            }
            let code = print_response(&engine.call("manage", Value::Object(arguments)), json);
            exit_without_teardown(engine);
            code
        }
        Command::Edit(args) => {
            let arguments = args.to_arguments()?;
            let engine = open_engine(&args.config)?;
            let code = print_response(&engine.call("edit", arguments), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Undo(args) => manage(&args.config, args.to_arguments("undo"), args.json),
        Command::Redo(args) => manage(&args.config, args.to_arguments("redo"), args.json),
        Command::History { limit, json, config } => {
            let mut arguments = serde_json::json!({"command": "history"});
            if let Some(limit) = limit {
                arguments["limit"] = Value::from(limit);
            }
            manage(&config, arguments, json)
        }
        Command::Index { config } => {
            let engine = open_engine(&config)?;
            let progress = Progress::new();
            let stats = engine.refresh_index(&|done, total| progress.update(done, total));
            progress.finish();
            if let (Some(stats), Some(index)) = (stats, engine.index()) {
                let status = index.status();
                println!(
                    "indexed {} files ({} symbols) in {} ms: {} unchanged, {} re-indexed, {} removed{}",
                    status.files,
                    status.symbols,
                    stats.millis,
                    stats.unchanged,
                    stats.reindexed,
                    stats.removed,
                    if stats.full_rebuild { ", full rebuild" } else { "" }
                );
                println!(
                    "phases: walk {} ms, read and parse {} ms, persist {} ms",
                    stats.walk_millis, stats.process_millis, stats.persist_millis
                );
                let languages: Vec<String> =
                    status.by_language.iter().map(|(lang, count)| format!("{lang} {count}")).collect();
                println!("languages: {}", languages.join(", "));
            }
            exit_without_teardown(engine);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn manage(config: &ConfigFlags, arguments: Value, json: bool) -> anyhow::Result<ExitCode> {
    let engine = open_engine(config)?;
    let code = print_response(&engine.call("manage", arguments), json);
    exit_without_teardown(engine);
    code
}

/// A one-shot command is about to exit: freeing a large index piece by piece takes seconds
/// on a kernel-sized tree, and the OS reclaims it at once. The analytics events of the
/// command are written first; everything else was written already.
fn exit_without_teardown(engine: Engine) {
    engine.flush_analytics(std::time::Duration::from_millis(200));
    std::mem::forget(engine);
}

fn print_response(response: &loupe_engine::Response, json: bool) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&response.structured())?)?;
    } else {
        write!(stdout, "{}", response.face)?;
    }
    Ok(if response.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A one-line progress bar on stderr when it is a terminal; nothing otherwise.
struct Progress {
    terminal: bool,
    last: std::sync::Mutex<std::time::Instant>,
}

impl Progress {
    fn new() -> Progress {
        use std::io::IsTerminal;
        Progress { terminal: std::io::stderr().is_terminal(), last: std::sync::Mutex::new(std::time::Instant::now()) }
    }

    fn update(&self, done: usize, total: usize) {
        if !self.terminal {
            return;
        }
        let Ok(mut last) = self.last.lock() else { return };
        if last.elapsed().as_millis() < 100 && done < total {
            return;
        }
        *last = std::time::Instant::now();
        let width = 30;
        let filled = (done * width).checked_div(total).unwrap_or(width).min(width);
        eprint!("\rindexing [{}{}] {done}/{total} files", "#".repeat(filled), " ".repeat(width - filled));
    }

    fn finish(&self) {
        if self.terminal {
            eprintln!();
        }
    }
}

fn open_engine(flags: &ConfigFlags) -> anyhow::Result<Engine> {
    let sources = Sources::from_process(flags.to_pairs());
    let (mut config, warnings) = load(&sources).map_err(anyhow::Error::msg)?;
    // A one-shot command has no session history: under the gate every whole-file read would
    // be refused for want of a search in the same process. The CLI's gate is off unless the
    // user set `gate_mode` (flag, LOUPE_GATE_MODE or loupe.toml).
    if !loupe_engine::config::is_set(&sources, &config, "gate_mode") {
        config.gate_mode = loupe_core::config::GateMode::Off;
    }
    init_logging(&config.log);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    Engine::new(config).map_err(anyhow::Error::msg)
}

fn serve(flags: &[(String, Value)], root_given: bool) -> anyhow::Result<ExitCode> {
    let sources = Sources::from_process(flags.to_vec());
    // Fail fast on a bad configuration; with --root the engine can open right away.
    let (config, warnings) = load(&sources).map_err(anyhow::Error::msg)?;
    init_logging(&config.log);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    let server = if root_given {
        let engine = Engine::new(config).map_err(anyhow::Error::msg)?;
        loupe_mcp::LoupeServer::with_engine(sources, engine)
    } else {
        loupe_mcp::LoupeServer::new(sources)
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    runtime.block_on(loupe_mcp::serve_stdio(server)).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

/// Logs go to stderr only: on stdio, stdout carries protocol messages and nothing else.
fn init_logging(filter: &str) {
    let filter = std::env::var("LOUPE_LOG").ok().filter(|value| !value.is_empty()).unwrap_or_else(|| filter.to_owned());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&filter).unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks names, ids and defaults only when a command is built: do it in a test.
    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
