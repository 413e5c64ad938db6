//! The `loupe` binary: the command line and `loupe serve`. Glue only: every subcommand builds
//! the same JSON arguments an MCP client would send and hands them to the engine.
//!
//! Subcommands: `read`, `search`, `analyze`, `edit`, `review`, `undo`, `redo`, `history`, `manage`,
//! `index` (with a progress bar on a terminal) and `serve`. A one-shot command defaults to
//! `gate_mode = off` (§9.7 guards a session, and a command is a session of one call), unless
//! the configuration sets it. Logs go to stderr; stdout carries only the answer.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// jemalloc serves the whole process on Linux, tree-sitter's C code included (its `malloc`
// replaces libc's): a long-lived server's RSS stays flat under churn, where glibc's and
// mimalloc's grew, and the cold index needs less CPU and memory with it (docs/decisions.md).
// macOS and Windows keep their system allocators.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
mod hook;
mod install;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, FromArgMatches, Parser, Subcommand};
use loupe_core::config::{Flag, KEYS, Key, Kind};
use loupe_core::text::human_bytes;
use loupe_engine::Engine;
use loupe_engine::config::{Sources, load};
use loupe_engine::params::{self, Param, ParamType, ToolSpec};
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
    /// Configuration: the same flags for every command, after it or before it.
    #[command(flatten)]
    config: ConfigFlags,
}

// Parsed once per process: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server over stdio, or over Streamable HTTP with --http.
    Serve {
        #[command(flatten)]
        config: ServeConfigFlags,
        /// Serve Streamable HTTP at ADDR:PORT (endpoint /mcp), e.g. 127.0.0.1:8765; beyond
        /// loopback only with LOUPE_TOKEN set (clients send `Authorization: Bearer TOKEN`).
        #[arg(long, value_name = "ADDR:PORT")]
        http: Option<std::net::SocketAddr>,
        /// A host name clients may use in Host and Origin besides loopback and the bind address
        /// (repeatable), e.g. dev.example.com.
        #[arg(long, value_name = "NAME")]
        allow_host: Vec<String>,
        /// With --http: the most live sessions (Mcp-Session-Id) kept; an initialize beyond them is
        /// refused (503) until one closes or idles out.
        #[arg(long, value_name = "N", default_value_t = loupe_mcp::HttpLimits::default().max_sessions)]
        http_max_sessions: usize,
        /// With --http: seconds after which a session nothing was sent to is ended.
        #[arg(long, value_name = "SECS", default_value_t = loupe_mcp::HttpLimits::default().session_idle.as_secs())]
        http_session_idle: u64,
        /// With --http: the most open connections; at the cap a new one replaces the one idle the
        /// longest.
        #[arg(long, value_name = "N", default_value_t = loupe_mcp::HttpLimits::default().max_connections)]
        http_max_connections: usize,
    },
    /// Read a file or a window of it, printing what the model would see (mode: snippet when
    /// a line window is given, else file).
    Read(ToolArgs<ReadTool>),
    /// Search the workspace (text, regex, symbol, file, directory; `auto` infers).
    Search(ToolArgs<SearchTool>),
    /// Relationships of a file or symbol: dependencies, impact, calls, references, types,
    /// data_flow (e.g. `loupe analyze --mode calls --direction upstream parse_config`).
    Analyze(ToolArgs<AnalyzeTool>),
    /// Workspace and session: status | metrics | guidance | undo | redo | history.
    Manage(ToolArgs<ManageTool>),
    /// Apply edits: the `edit` tool's JSON arguments from a file or stdin (`-` or none).
    Edit(EditArgs),
    /// Rename a symbol at its definition and every use the resolver finds, across files
    /// (`edit` operation rename_symbol), e.g. `loupe rename Config.load load_file --dry-run`.
    Rename(RenameArgs),
    /// Review what changed: each changed file's symbols, the uses left of those a caller can
    /// break on, riskiest first (`read` mode diff_preview of a directory). No revision: the
    /// working tree against HEAD; one: against it (`main...` is what this branch did since it
    /// forked); two: the first against the second (`loupe review v1.2 v1.3`).
    Review(ReviewArgs),
    /// Undo the last edit transaction (or --transaction-id).
    Undo(UndoArgs),
    /// Redo the most recently undone transaction (or --transaction-id).
    Redo(UndoArgs),
    /// List recent edit transactions, newest first.
    History {
        /// How many transactions (default 20).
        #[arg(long)]
        limit: Option<u64>,
        /// Print the JSON envelope instead of the text face.
        #[arg(long)]
        json: bool,
    },
    /// Build or refresh the index, with a progress bar (rate and time left) on a terminal.
    Index,
    /// The index cache: each root's index, its size and last use; --prune removes the indexes
    /// of roots that no longer exist.
    Cache {
        /// Remove the indexes of roots that no longer exist (and with --unused-days, those not
        /// used for that many days); never one a running server holds.
        #[arg(long)]
        prune: bool,
        /// Also count as prunable the indexes not used for this many days.
        #[arg(long, value_name = "DAYS")]
        unused_days: Option<u64>,
    },
    /// What loupe would serve from here and how to plug it in: the root and how it was chosen,
    /// git, the index and its size, the configuration sources, and the client set-up lines.
    Doctor,
    /// Register `loupe serve` with the MCP clients here (all it finds, or those named): shows
    /// each config file's diff, then writes it; a second run changes nothing.
    Install(InstallArgs),
    /// Remove what `loupe install` added to the clients' config files, and nothing else.
    Uninstall(InstallArgs),
    /// A client's hook protocol on stdin/stdout: `loupe hook claude-code` answers Claude Code's
    /// PreToolUse events with the loupe call that serves a built-in lookup.
    Hook {
        /// The client whose protocol to speak.
        #[arg(value_parser = ["claude-code"])]
        client: String,
        /// suggest: the call runs, the loupe call comes as context; redirect: the call is
        /// denied with the loupe call as the reason.
        #[arg(long, value_enum, default_value = "suggest")]
        mode: install::HookMode,
    },
    /// Print a shell completion script, e.g. `loupe completions bash > ~/.local/share/bash-completion/completions/loupe`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// Clients: claude-code, codex, cursor, vscode, gemini, windsurf, zed (default: those
    /// installed here).
    #[arg(value_name = "CLIENT")]
    clients: Vec<String>,
    /// project: the repository's files (shared with the team); user: every project of this user.
    #[arg(long, value_enum, default_value = "user")]
    scope: install::Scope,
    /// Show the changes, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write without asking, even on a terminal.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Also install the Claude Code hook that steers Grep, Glob, Read and shell greps to loupe.
    #[arg(long, value_enum, value_name = "MODE")]
    hooks: Option<install::HookMode>,
    /// The command clients run (default: `loupe` for project files; the absolute path of the
    /// `loupe` on PATH, or of this binary, for user files).
    #[arg(long, value_name = "PATH")]
    command: Option<String>,
    /// Also add loupe's usage note (at most 15 lines) to this file, e.g. AGENTS.md or CLAUDE.md
    /// at the root; uninstall removes it.
    #[arg(long, value_name = "FILE")]
    agents_md: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct EditArgs {
    /// A JSON file with the arguments, e.g. {"edits": [...]} or just the list; `-` or nothing
    /// reads stdin. Flags override the file's values.
    input: Option<PathBuf>,
    #[command(flatten)]
    tool: ToolArgs<EditTool>,
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
        if let Value::Object(map) = &mut arguments {
            map.extend(self.tool.arguments.clone());
        }
        Ok(arguments)
    }
}

#[derive(Debug, Args)]
struct RenameArgs {
    /// The symbol as `read --mode symbol` takes it: name, Type.method, Type::method.
    old: String,
    /// The new name.
    new: String,
    /// The file that defines it, when the name is not unique.
    #[arg(long)]
    path: Option<String>,
    /// Show the diffs; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also change uses that match by name only (listed otherwise).
    #[arg(long)]
    name_only: bool,
    /// Also change the name in comments and strings of the files it changes.
    #[arg(long)]
    in_comments: bool,
    /// Print the JSON envelope instead of the text face.
    #[arg(long)]
    json: bool,
}

impl RenameArgs {
    fn to_arguments(&self) -> Value {
        let mut entry = serde_json::json!({"operation": "rename_symbol", "symbol": self.old, "new_name": self.new});
        if let Some(path) = &self.path {
            entry["path"] = Value::from(path.as_str());
        }
        if self.name_only {
            entry["include"] = Value::from("name_only");
        }
        if self.in_comments {
            entry["in_comments"] = Value::Bool(true);
        }
        serde_json::json!({"edits": [entry], "dry_run": self.dry_run})
    }
}

#[derive(Debug, Args)]
struct ReviewArgs {
    /// At most two revisions: a branch, tag, commit id, `HEAD~2`, `main...`.
    #[arg(num_args = 0..=2)]
    revisions: Vec<String>,
    /// A directory or file to review instead of the whole root.
    #[arg(long, default_value = ".")]
    target: String,
    /// A cut review's `next_cursor`, to see the rest.
    #[arg(long)]
    cursor: Option<String>,
    /// Print the JSON envelope instead of the text face.
    #[arg(long)]
    json: bool,
}

impl ReviewArgs {
    fn to_arguments(&self) -> Value {
        let against = match self.revisions.as_slice() {
            [] => "HEAD".to_owned(),
            [one] => one.clone(),
            [old, new, ..] => format!("{old}..{new}"),
        };
        let mut arguments = serde_json::json!({"mode": "diff_preview", "target": self.target, "against": against});
        if let Some(cursor) = &self.cursor {
            arguments["cursor"] = Value::from(cursor.as_str());
        }
        arguments
    }
}

#[derive(Debug, Args)]
struct UndoArgs {
    /// The transaction (default: the latest that can be undone, or redone).
    #[arg(long)]
    transaction_id: Option<String>,
    /// Restore even files that changed after the transaction.
    #[arg(long)]
    force: bool,
    /// Print the JSON envelope instead of the text face.
    #[arg(long)]
    json: bool,
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

/// A tool's subcommand, its flags generated from the engine's parameter table: the same
/// names, types, choices and descriptions as the MCP schema, so the two cannot drift.
trait ToolCli {
    const SPEC: &'static ToolSpec;
}

#[derive(Debug)]
struct ReadTool;
#[derive(Debug)]
struct SearchTool;
#[derive(Debug)]
struct AnalyzeTool;
#[derive(Debug)]
struct ManageTool;
#[derive(Debug)]
struct EditTool;

impl ToolCli for ReadTool {
    const SPEC: &'static ToolSpec = &params::READ;
}
impl ToolCli for SearchTool {
    const SPEC: &'static ToolSpec = &params::SEARCH;
}
impl ToolCli for AnalyzeTool {
    const SPEC: &'static ToolSpec = &params::ANALYZE;
}
impl ToolCli for ManageTool {
    const SPEC: &'static ToolSpec = &params::MANAGE;
}
impl ToolCli for EditTool {
    const SPEC: &'static ToolSpec = &params::EDIT;
}

/// The parsed flags of a tool subcommand: the JSON arguments an MCP client would send.
#[derive(Debug)]
struct ToolArgs<T> {
    arguments: Map<String, Value>,
    json: bool,
    tool: std::marker::PhantomData<T>,
}

/// Flags renamed on the command line because a configuration flag (§14) has the name.
const RENAMED_FLAGS: &[(&str, &str, &str)] = &[("search", "exclude", "exclude_glob")];

/// The command-line id (and, with dashes, the long flag) of a tool's parameter.
fn cli_id(tool: &str, param: &Param) -> &'static str {
    RENAMED_FLAGS
        .iter()
        .find(|(owner, name, _)| *owner == tool && *name == param.name)
        .map_or(param.name, |(_, _, renamed)| renamed)
}

/// The clap argument for one parameter; `None` for what a flag cannot carry (`edit`'s list).
fn cli_arg(spec: &ToolSpec, param: &'static Param) -> Option<clap::Arg> {
    use clap::builder::{PossibleValuesParser, ValueParser};
    let id = cli_id(spec.name, param);
    let mut arg = clap::Arg::new(id);
    arg = if param.positional {
        arg.required(param.required)
    } else {
        // A required selector with a command-line default (read's mode) stays optional here.
        arg.long(id.replace('_', "-")).required(param.required && !(spec.name == "read" && param.name == "mode"))
    };
    let help = match param.only_for {
        [] => param.description.to_owned(),
        modes => format!("{}: {}", modes.join("/"), param.description),
    };
    arg = arg.help(help).value_name(param.name.to_uppercase());
    let parser: ValueParser = match param.ty {
        ParamType::Integer { min, .. } => clap::value_parser!(u64).range(min..).into(),
        ParamType::Boolean => {
            arg = arg.num_args(0..=1).default_missing_value("true");
            clap::value_parser!(bool)
        }
        ParamType::Choice(choices) => PossibleValuesParser::new(choices).into(),
        ParamType::String | ParamType::StringList => ValueParser::string(),
        ParamType::EditList(_) => return None,
    };
    Some(arg.value_parser(parser))
}

/// The JSON value clap parsed for one parameter, when it was given.
fn cli_value(matches: &clap::ArgMatches, id: &str, ty: ParamType) -> Option<Value> {
    match ty {
        ParamType::Integer { .. } => matches.get_one::<u64>(id).map(|value| Value::from(*value)),
        ParamType::Boolean => matches.get_one::<bool>(id).map(|value| Value::Bool(*value)),
        ParamType::EditList(_) => None,
        _ => matches.get_one::<String>(id).map(|value| Value::from(value.as_str())),
    }
}

impl<T: ToolCli> clap::FromArgMatches for ToolArgs<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut arguments = Map::new();
        for param in T::SPEC.params {
            if let Some(value) = cli_value(matches, cli_id(T::SPEC.name, param), param.ty) {
                arguments.insert(param.name.to_owned(), value);
            }
        }
        Ok(ToolArgs { arguments, json: matches.get_flag("json"), tool: std::marker::PhantomData })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<T: ToolCli> Args for ToolArgs<T> {
    fn augment_args(command: clap::Command) -> clap::Command {
        command.args(T::SPEC.params.iter().filter_map(|param| cli_arg(T::SPEC, param))).arg(
            clap::Arg::new("json")
                .long("json")
                .action(clap::ArgAction::SetTrue)
                .help("Print the JSON envelope instead of the text face"),
        )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// Configuration flags (§14), global: given once, before or after the command, each overriding
/// loupe.toml and the LOUPE_* variables. `loupe --help` lists them under their own heading. They
/// come from the key table (`loupe_core::config::KEYS`): its flag spelling, its choices, its
/// description and default.
/// `KeyFlags<false>`; `KeyFlags<true>` are the flags `loupe serve` alone takes
/// (`Flag::ServeOnly`): on `read` and `search` the same flag is the call's own cap.
#[derive(Debug, Default)]
struct KeyFlags<const SERVE_ONLY: bool> {
    /// `(key, value)` for each flag given, in the table's order.
    pairs: Vec<(String, Value)>,
}

type ConfigFlags = KeyFlags<false>;
type ServeConfigFlags = KeyFlags<true>;

const CONFIGURATION_HEADING: &str = "Configuration (any command; overrides loupe.toml and LOUPE_*)";

impl ConfigFlags {
    fn to_pairs(&self) -> Vec<(String, Value)> {
        self.pairs.clone()
    }

    /// Whether a flag set `key`.
    fn sets(&self, key: &str) -> bool {
        self.pairs.iter().any(|(name, _)| name == key)
    }
}

/// The clap argument of one configuration key.
fn config_arg(key: &'static Key) -> clap::Arg {
    use clap::builder::PossibleValuesParser;
    let arg = clap::Arg::new(key.name).long(key.flag.long(key.name));
    match key.kind {
        Kind::Switch => {
            let help = match key.flag {
                Flag::Negated(_) => format!("Do not {}", lower_first(key.description)),
                _ => key.description.to_owned(),
            };
            arg.action(clap::ArgAction::SetTrue).help(help)
        }
        kind => {
            let help = format!("{} Default: {}.", key.description, key.default_text().trim_matches('`'));
            let arg = arg.help(help).value_name(key.name.to_uppercase());
            match kind {
                Kind::Count => arg.value_parser(clap::value_parser!(u64).range(1..)),
                Kind::Choice(choices) => arg.value_parser(PossibleValuesParser::new(choices)),
                Kind::Path => arg.value_parser(clap::value_parser!(PathBuf)),
                _ => arg,
            }
        }
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

/// The `(key, value)` pairs of the configuration flags `matches` holds among `keys`.
fn config_pairs<'k>(matches: &clap::ArgMatches, keys: impl Iterator<Item = &'k Key>) -> Vec<(String, Value)> {
    let mut pairs = Vec::new();
    for key in keys {
        let value = match key.kind {
            Kind::Switch => matches.get_flag(key.name).then_some(Value::Bool(!matches!(key.flag, Flag::Negated(_)))),
            Kind::Count => matches.get_one::<u64>(key.name).map(|value| Value::from(*value)),
            Kind::Path => matches.get_one::<PathBuf>(key.name).map(|path| Value::from(path.display().to_string())),
            _ => matches.get_one::<String>(key.name).map(|value| Value::from(value.as_str())),
        };
        pairs.extend(value.map(|value| (key.name.to_owned(), value)));
    }
    pairs
}

impl<const SERVE_ONLY: bool> KeyFlags<SERVE_ONLY> {
    /// The keys these flags carry.
    fn keys() -> impl Iterator<Item = &'static Key> {
        KEYS.iter().filter(|key| (key.flag == Flag::ServeOnly) == SERVE_ONLY)
    }
}

impl<const SERVE_ONLY: bool> clap::FromArgMatches for KeyFlags<SERVE_ONLY> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(KeyFlags { pairs: config_pairs(matches, Self::keys()) })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<const SERVE_ONLY: bool> Args for KeyFlags<SERVE_ONLY> {
    fn augment_args(command: clap::Command) -> clap::Command {
        if SERVE_ONLY {
            command.args(Self::keys().map(config_arg))
        } else {
            command.next_help_heading(CONFIGURATION_HEADING).args(Self::keys().map(|key| config_arg(key).global(true)))
        }
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// jemalloc's own counts, for `manage metrics` (`loupe_engine::heap`). jemalloc refreshes its
/// statistics when the epoch advances.
#[cfg(target_os = "linux")]
fn heap_figures() -> Option<loupe_engine::heap::HeapFigures> {
    tikv_jemalloc_ctl::epoch::advance().ok()?;
    let allocated = tikv_jemalloc_ctl::stats::allocated::read().ok()?;
    let resident = tikv_jemalloc_ctl::stats::resident::read().ok()?;
    Some(loupe_engine::heap::HeapFigures {
        allocator: "jemalloc",
        allocated: allocated as u64,
        resident: resident as u64,
    })
}

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    loupe_engine::heap::set_probe(heap_figures);
    // The tokenizer's vocabulary takes ~45 ms to build and every answer needs it: start now,
    // in parallel with parsing arguments, loading configuration and the MCP handshake.
    std::thread::spawn(loupe_core::tokens::warm_up);
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("loupe: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// The command line: the configuration flags are global, listed once under their heading in
/// `loupe --help`; each command's help names its own flags and points there.
fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command();
    command.build();
    let configuration: Vec<clap::Id> = ConfigFlags::augment_args(clap::Command::new("configuration"))
        .get_arguments()
        .map(|arg| arg.get_id().clone())
        .collect();
    command.mut_subcommands(|subcommand| {
        subcommand
            .mut_args(|arg| if configuration.contains(arg.get_id()) { arg.hide(true) } else { arg })
            .after_help("Configuration flags (--root, --index-dir, --log, limits, policies): `loupe --help`.")
    })
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = &cli.config;
    match cli.command {
        Command::Serve {
            config: serve_config,
            http,
            allow_host,
            http_max_sessions,
            http_session_idle,
            http_max_connections,
        } => {
            let mut flags = config.to_pairs();
            flags.extend(serve_config.pairs);
            let http = http.map(|addr| loupe_mcp::HttpOptions {
                addr,
                token: std::env::var("LOUPE_TOKEN").ok(),
                allowed_hosts: allow_host,
                limits: loupe_mcp::HttpLimits {
                    max_sessions: http_max_sessions,
                    session_idle: std::time::Duration::from_secs(http_session_idle),
                    max_connections: http_max_connections,
                    ..loupe_mcp::HttpLimits::default()
                },
            });
            serve(&flags, config.sets("root"), http)
        }
        Command::Read(args) => {
            let engine = open_engine(config)?;
            let mut arguments = args.arguments;
            if !arguments.contains_key("mode") {
                let windowed = ["start_line", "end_line", "line_range"].iter().any(|key| arguments.contains_key(*key));
                arguments.insert("mode".into(), Value::from(if windowed { "snippet" } else { "file" }));
            }
            // Symbol resolution needs a current index; plain reads never touch it.
            if matches!(arguments.get("mode").and_then(Value::as_str), Some("symbol" | "outline")) {
                refresh(&engine);
            }
            tool_call(engine, "read", arguments, args.json)
        }
        Command::Search(args) => {
            let engine = open_engine(config)?;
            refresh(&engine);
            tool_call(engine, "search", args.arguments, args.json)
        }
        Command::Analyze(args) => {
            let engine = open_engine(config)?;
            refresh(&engine);
            tool_call(engine, "analyze", args.arguments, args.json)
        }
        Command::Manage(args) => {
            let engine = open_engine(config)?;
            // `status` reports the index: bring it up to date first, as `search` does.
            if args.arguments.get("command").and_then(Value::as_str) == Some("status") {
                refresh(&engine);
            }
            tool_call(engine, "manage", args.arguments, args.json)
        }
        Command::Edit(args) => {
            let arguments = args.to_arguments()?;
            let engine = open_engine(config)?;
            // A symbol operation finds its definition (a rename its uses) through the index.
            if names_symbols(&arguments) {
                refresh(&engine);
            }
            let code = print_response(&engine, &engine.call("edit", arguments), args.tool.json);
            exit_without_teardown(engine);
            code
        }
        Command::Rename(args) => {
            let engine = open_engine(config)?;
            refresh(&engine);
            let code = print_response(&engine, &engine.call("edit", args.to_arguments()), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Review(args) => {
            let engine = open_engine(config)?;
            refresh(&engine);
            let code = print_response(&engine, &engine.call("read", args.to_arguments()), args.json);
            exit_without_teardown(engine);
            code
        }
        Command::Undo(args) => manage(config, args.to_arguments("undo"), args.json),
        Command::Redo(args) => manage(config, args.to_arguments("redo"), args.json),
        Command::History { limit, json } => {
            let mut arguments = serde_json::json!({"command": "history"});
            if let Some(limit) = limit {
                arguments["limit"] = Value::from(limit);
            }
            manage(config, arguments, json)
        }
        Command::Doctor => doctor(config),
        Command::Install(args) => install_command(config, &args, true),
        Command::Uninstall(args) => install_command(config, &args, false),
        Command::Hook { client: _, mode } => {
            hook::run(mode);
            Ok(ExitCode::SUCCESS)
        }
        Command::Cache { prune, unused_days } => cache(prune, unused_days),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "loupe", &mut script);
            // A closed pipe (`loupe completions zsh | head -1`) ends the output, not the process.
            let _ = std::io::stdout().write_all(&script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Index => {
            let engine = open_engine(config)?;
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
                let stages = &stats.stages;
                println!(
                    "stages: read {:.0} ms, trigrams {:.0} ms, parse {:.0} ms (summed over the workers); \
                     apply {:.0} ms, text index write {:.0} ms, name index {:.0} ms",
                    stages.read_millis,
                    stages.trigrams_millis,
                    stages.parse_millis,
                    stages.apply_millis,
                    stages.text_write_millis,
                    stages.name_index_millis
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

/// Runs one tool call on a one-shot engine and prints its answer.
fn tool_call(engine: Engine, tool: &str, arguments: Map<String, Value>, json: bool) -> anyhow::Result<ExitCode> {
    let code = print_response(&engine, &engine.call(tool, Value::Object(arguments)), json);
    exit_without_teardown(engine);
    code
}

fn manage(config: &ConfigFlags, arguments: Value, json: bool) -> anyhow::Result<ExitCode> {
    let engine = open_engine(config)?;
    let code = print_response(&engine, &engine.call("manage", arguments), json);
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

fn print_response(engine: &Engine, response: &loupe_engine::Response, json: bool) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&response.structured())?)?;
    } else {
        write!(stdout, "{}", runnable_next_steps(engine, &response.face))?;
    }
    Ok(if response.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The face with each `→ next: TOOL {…}` line (an MCP call, whose refs mean nothing to another
/// process) written as the `loupe` command that does the same, when there is one.
fn runnable_next_steps(engine: &Engine, face: &str) -> String {
    const NEXT: &str = "→ next: ";
    let command = |line: &str| -> Option<String> {
        let (indent, rest) = line.split_at(line.find(NEXT)?);
        let (tool, arguments) = rest[NEXT.len()..].split_once(' ')?;
        let spec = params::tool(tool)?;
        let arguments: Value = serde_json::from_str(arguments).ok()?;
        let arguments = engine.standalone_arguments(tool, &arguments)?;
        if tool == "edit" {
            return Some(format!("{indent}{NEXT}{}", edit_command(arguments.as_object()?)));
        }
        Some(format!("{indent}{NEXT}{}", shell_words(&cli_command(spec, arguments.as_object()?)?)))
    };
    let mut out = String::with_capacity(face.len());
    for line in face.split_inclusive('\n') {
        let (text, end) = line.strip_suffix('\n').map_or((line, ""), |text| (text, "\n"));
        match command(text) {
            Some(rewritten) => out.push_str(&rewritten),
            None => out.push_str(text),
        }
        out.push_str(end);
    }
    out
}

/// An `edit` call as a command: `loupe rename` for a lone rename, else its JSON piped to
/// `loupe edit`.
fn edit_command(arguments: &Map<String, Value>) -> String {
    let entries = edit_entries(arguments.get("edits"));
    let others = arguments.keys().all(|key| matches!(key.as_str(), "edits" | "dry_run" | "metadata"));
    if let [entry] = entries.as_slice()
        && others
        && entry.get("operation").and_then(Value::as_str) == Some("rename_symbol")
        && let (Some(old), Some(new)) =
            (entry.get("symbol").and_then(Value::as_str), entry.get("new_name").and_then(Value::as_str))
    {
        let mut words = vec!["loupe".to_owned(), "rename".to_owned(), old.to_owned(), new.to_owned()];
        if let Some(path) = entry.get("path").and_then(Value::as_str) {
            words.extend(["--path".to_owned(), path.to_owned()]);
        }
        if arguments.get("dry_run") == Some(&Value::Bool(true)) {
            words.push("--dry-run".to_owned());
        }
        if entry.get("include").and_then(Value::as_str) == Some("name_only") {
            words.push("--name-only".to_owned());
        }
        if entry.get("in_comments") == Some(&Value::Bool(true)) {
            words.push("--in-comments".to_owned());
        }
        return shell_words(&words);
    }
    let mut arguments = arguments.clone();
    arguments.remove("metadata");
    format!("echo {} | loupe edit", shell_words(&[Value::Object(arguments).to_string()]))
}

/// The `loupe` command line for a tool call, or `None` for arguments no flag carries (an
/// `edit` list, a list of several values).
fn cli_command(spec: &ToolSpec, arguments: &Map<String, Value>) -> Option<Vec<String>> {
    let mut line = vec!["loupe".to_owned(), spec.name.to_owned()];
    if let Some(unknown) = arguments.keys().find(|key| !spec.params.iter().any(|param| param.name == *key)) {
        tracing::debug!("no flag for `{unknown}`");
        return None;
    }
    for param in spec.params {
        let Some(value) = arguments.get(param.name) else { continue };
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Array(items) if items.len() == 1 => items[0].as_str()?.to_owned(),
            Value::Array(_) | Value::Object(_) => return None,
            other => other.to_string(),
        };
        if !param.positional {
            line.push(format!("--{}", cli_id(spec.name, param).replace('_', "-")));
        }
        line.push(text);
    }
    Some(line)
}

fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|word| shlex::try_quote(word).map_or_else(|_| word.clone(), |quoted| quoted.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A progress bar on stderr with the rate and the time left when stderr is a terminal; nothing
/// in a pipe or a log (indicatif draws nothing where stderr is not a terminal).
struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    fn new() -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        let style =
            indicatif::ProgressStyle::with_template("indexing {bar:30} {pos}/{len} files · {per_sec} · {eta} left")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        Progress { bar }
    }

    fn update(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// An `edit` call's entries: its `edits` list, or the one edit given as an object.
fn edit_entries(edits: Option<&Value>) -> Vec<&Value> {
    match edits {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(single) => vec![single],
        None => Vec::new(),
    }
}

/// Whether an `edit` call's arguments name a symbol (`symbol`, or a `*_symbol` operation).
fn names_symbols(arguments: &Value) -> bool {
    edit_entries(arguments.get("edits")).iter().any(|entry| {
        entry.get("symbol").is_some()
            || entry.get("operation").and_then(Value::as_str).is_some_and(|operation| operation.ends_with("_symbol"))
    })
}

/// Brings the index up to date before a query. A first build takes a while (20 s on django),
/// so one that has run for a second says so: the bar on a terminal, one line on stderr
/// elsewhere. An up-to-date index answers at once and shows nothing.
fn refresh(engine: &Engine) {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};
    let started = std::time::Instant::now();
    let progress = Progress::new();
    let said = AtomicBool::new(false);
    let terminal = std::io::stderr().is_terminal();
    engine.refresh_index(&|done, total| {
        if started.elapsed() < std::time::Duration::from_secs(1) {
            return;
        }
        if terminal {
            progress.update(done, total);
        } else if !said.swap(true, Ordering::Relaxed) {
            eprintln!("loupe: building the index of {total} files; later commands use it at once");
        }
    });
    progress.finish();
}

/// `loupe doctor`: the status a server here would report, then where its state lives, where its
/// configuration came from, and the lines that register it with the common clients.
fn doctor(flags: &ConfigFlags) -> anyhow::Result<ExitCode> {
    let sources = Sources::from_process(flags.to_pairs());
    let mut out = String::new();
    let root = match loupe_engine::config::choose_root(&sources) {
        Ok((root, _)) => root,
        Err(message) => {
            // A closed pipe (`loupe doctor | head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout(), "{message}\n\n{}", client_report(None));
            return Ok(ExitCode::from(1));
        }
    };
    // What a server here would report: its policy (the gate on unless configured off), the
    // index as a server would find it, and its watcher, which a server always starts.
    let engine = open_engine_as(flags, false)?;
    if let Some(index) = engine.index() {
        index.load_snapshot();
    }
    let status = engine.call("manage", serde_json::json!({"command": "status"})).face;
    out.push_str(&status.replacen(" · watcher off ·", " · watcher on in a server ·", 1));
    let canonical = dunce::canonicalize(&root).unwrap_or(root.clone());
    let index_dir = engine.config().index_dir.clone().unwrap_or_else(|| loupe_engine::default_index_dir(&canonical));
    out.push_str(&format!(
        "index dir {} · {}\n",
        index_dir.display(),
        human_bytes(loupe_engine::index_cache::usage(&index_dir).0)
    ));
    let user = loupe_engine::config::user_config_file(&sources);
    let repository = loupe_engine::config::config_file(&canonical);
    let variables: Vec<&str> = sources
        .env
        .iter()
        .map(|(key, _)| key.as_str())
        .filter(|key| key.starts_with("LOUPE_") && !key.starts_with("LOUPE_TEST"))
        .collect();
    let shown = |file: Option<std::path::PathBuf>| file.map_or("none".to_owned(), |file| file.display().to_string());
    out.push_str(&format!(
        "config: user file {} · repository file {} · variables {} · flags {}\n",
        shown(user),
        shown(repository),
        if variables.is_empty() { "none".to_owned() } else { variables.join(", ") },
        if flags.to_pairs().is_empty() { "none".to_owned() } else { flags.to_pairs().len().to_string() }
    ));
    out.push_str(&format!("tokenizer {}\n\n", loupe_core::tokens::TOKENIZER));
    out.push_str(&client_report(Some(root)));
    let _ = std::io::stdout().write_all(out.as_bytes());
    exit_without_teardown(engine);
    Ok(ExitCode::SUCCESS)
}

/// `loupe install` / `loupe uninstall`: plan the edits to each client's config, show them, ask
/// on a terminal, write them.
fn install_command(flags: &ConfigFlags, args: &InstallArgs, installing: bool) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let sources = Sources::from_process(flags.to_pairs());
    let project = loupe_engine::config::choose_root(&sources).ok().map(|(root, _)| root);
    let places = install::Places::from_env(project)?;
    let clients: Vec<&'static install::Client> = if args.clients.is_empty() {
        install::CLIENTS.iter().filter(|client| !installing || client.present(&places)).collect()
    } else {
        let mut chosen = Vec::new();
        for id in &args.clients {
            chosen.push(install::client(id).with_context(|| {
                let known: Vec<&str> = install::CLIENTS.iter().map(|client| client.id).collect();
                format!("unknown client `{id}`; known: {}", known.join(", "))
            })?);
        }
        chosen
    };
    if clients.is_empty() {
        let known: Vec<&str> = install::CLIENTS.iter().map(|client| client.id).collect();
        anyhow::bail!("found none of the clients loupe sets up; name one: loupe install {}", known.join(" | "));
    }
    let launch =
        install::Launch { command: install::server_command(args.command.clone(), args.scope), hooks: args.hooks };
    let mut plan = install::plan(&clients, &places, args.scope, &launch, installing)?;
    if let Some(file) = &args.agents_md {
        let path = if file.is_absolute() { file.clone() } else { std::env::current_dir()?.join(file) };
        plan.changes.push(install::agents_change(&path, installing)?);
    }
    let mut out = install::show(&plan, &places.home);
    let pending = plan.changes.iter().any(install::Change::changes);
    if !pending {
        out.push_str("nothing to change\n");
    } else if args.dry_run {
        out.push_str("dry run: nothing written\n");
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    if !pending || args.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    if !args.yes && std::io::stdin().is_terminal() {
        print!("write these changes? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            println!("nothing written");
            return Ok(ExitCode::from(1));
        }
    }
    install::apply(&plan, &places, installing)?;
    let mut done = String::from(if installing { "written" } else { "removed" });
    if installing {
        for client in &clients {
            if plan.changes.iter().any(|change| change.client == client.id) {
                done.push_str(&format!("\n  {}: {}", client.name, client.note));
            }
        }
        if args.agents_md.is_none() {
            done.push_str("\nclients without hooks (Codex, Cursor…): `--agents-md AGENTS.md` adds a 10-line note on when to use loupe");
        }
    }
    println!("{done}");
    Ok(ExitCode::SUCCESS)
}

/// For `loupe doctor`: each client, whether loupe is set up for it and whether it can start it.
fn client_report(project: Option<PathBuf>) -> String {
    match install::Places::from_env(project) {
        Ok(places) => {
            install::report(&places, |scope| install::Launch {
                command: install::server_command(None, scope),
                hooks: None,
            }) + "set up or update: loupe install [CLIENT…] [--scope project] (--dry-run shows the changes)\n"
        }
        Err(error) => format!("clients: {error}\n"),
    }
}

/// `loupe cache`: every root's index directory in the cache, with its root, size and last use;
/// `--prune` removes those whose root is gone (and, with `--unused-days`, those unused that
/// long), never one a running server holds.
fn cache(prune: bool, unused_days: Option<u64>) -> anyhow::Result<ExitCode> {
    use loupe_engine::index_cache;
    let some_dir = loupe_engine::default_index_dir(std::path::Path::new("/"));
    let cache = some_dir.parent().context("the index cache has no directory")?;
    let dirs = index_cache::list(cache);
    let now = std::time::SystemTime::now();
    let idle_days = |dir: &index_cache::IndexDir| {
        dir.last_used.and_then(|used| now.duration_since(used).ok()).map(|idle| idle.as_secs() / 86_400)
    };
    let total: u64 = dirs.iter().map(|dir| dir.bytes).sum();
    let count = if dirs.len() == 1 { "1 index".to_owned() } else { format!("{} indexes", dirs.len()) };
    let mut out = format!("index cache {} · {count} · {}\n", cache.display(), human_bytes(total));
    let (mut removed, mut freed, mut prunable) = (0, 0, 0);
    for dir in &dirs {
        let name = dir.path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        let root = match &dir.root {
            Some(root) if dir.root_gone() => format!("{} (gone)", root.display()),
            Some(root) => root.display().to_string(),
            None => "(no index persisted yet)".to_owned(),
        };
        let used = match idle_days(dir) {
            Some(0) => "used today".to_owned(),
            Some(1) => "used yesterday".to_owned(),
            Some(days) => format!("used {days} days ago"),
            None => "never used".to_owned(),
        };
        let stale = dir.root_gone() || unused_days.is_some_and(|days| idle_days(dir).is_none_or(|idle| idle >= days));
        let action = match (stale, prune) {
            (false, _) => String::new(),
            (true, false) => {
                prunable += 1;
                " · prunable".to_owned()
            }
            (true, true) => match index_cache::prune(dir) {
                Ok(()) => {
                    removed += 1;
                    freed += dir.bytes;
                    " · removed".to_owned()
                }
                Err(error) => format!(" · kept: {error}"),
            },
        };
        let in_use = if dir.in_use { " · in use" } else { "" };
        out.push_str(&format!("  {name}  {:>9}  {root} · {used}{in_use}{action}\n", human_bytes(dir.bytes)));
    }
    if prune {
        out.push_str(&format!("removed {removed} · freed {}\n", human_bytes(freed)));
    } else if prunable > 0 {
        out.push_str(&format!(
            "{prunable} prunable (root gone{}) → next: loupe cache --prune{}\n",
            if unused_days.is_some() { " or unused" } else { "" },
            unused_days.map_or_else(String::new, |days| format!(" --unused-days {days}"))
        ));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn open_engine(flags: &ConfigFlags) -> anyhow::Result<Engine> {
    open_engine_as(flags, true)
}

/// The engine a command (`one_shot`) or a server (`loupe doctor` describes one) would open.
fn open_engine_as(flags: &ConfigFlags, one_shot: bool) -> anyhow::Result<Engine> {
    let sources = Sources::from_process(flags.to_pairs());
    let (mut config, warnings) = load(&sources).map_err(anyhow::Error::msg)?;
    // A one-shot command has no session history: under the gate every whole-file read would
    // be refused for want of a search in the same process. The CLI's gate is off unless the
    // user set `gate_mode` (flag, LOUPE_GATE_MODE or loupe.toml).
    if one_shot && !loupe_engine::config::is_set(&sources, &config, "gate_mode") {
        config.gate_mode = loupe_core::config::GateMode::Off;
    }
    init_logging(&config.log);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    Engine::new(config).map_err(anyhow::Error::msg)
}

fn serve(
    flags: &[(String, Value)],
    root_given: bool,
    http: Option<loupe_mcp::HttpOptions>,
) -> anyhow::Result<ExitCode> {
    if let Some(http) = &http {
        http.check().map_err(anyhow::Error::msg)?;
    }
    let sources = Sources::from_process(flags.to_vec());
    let run = |server: loupe_mcp::LoupeServer| -> anyhow::Result<ExitCode> {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
        let served = match http.clone() {
            Some(options) => runtime.block_on(loupe_mcp::serve_http(server, options)),
            None => runtime.block_on(loupe_mcp::serve_stdio(server)),
        };
        // The server wound down (and kept its index build); a tool call still running on a
        // blocking thread must not hold the exit back (dropping the runtime would wait for it).
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
        served.map_err(anyhow::Error::msg)?;
        Ok(ExitCode::SUCCESS)
    };
    // Started where no root may be chosen (`/`, the home directory) and none named: serve, and
    // answer each call with how to name one; client roots may still arrive (§2).
    if let Err(message) = loupe_engine::config::choose_root(&sources) {
        init_logging("warn");
        tracing::warn!("{message}");
        return run(loupe_mcp::LoupeServer::new(sources));
    }
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
    run(server)
}

/// Logs go to stderr (at the `log` level, or `LOUPE_LOG`): on stdio, stdout carries protocol
/// messages and nothing else. A server's clients may ask for them too (`logging/setLevel`), at
/// their own level: `loupe-mcp`'s layer sends them as `notifications/message`.
fn init_logging(filter: &str) {
    use tracing_subscriber::prelude::*;
    let filter = std::env::var("LOUPE_LOG").ok().filter(|value| !value.is_empty()).unwrap_or_else(|| filter.to_owned());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(tracing_subscriber::EnvFilter::try_new(&filter).unwrap_or_else(|_| "warn".into()));
    let _ = tracing_subscriber::registry().with(stderr).with(loupe_mcp::client_log_layer()).try_init();
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};
    use loupe_core::ArgumentRule;
    use loupe_engine::params::{self, ParamType, ToolSpec};
    use serde_json::{Map, Value, json};

    use super::{ToolArgs, ToolCli};

    /// A value of the parameter's type that its parser accepts as to shape.
    fn sample(param: &params::Param) -> Value {
        match param.ty {
            ParamType::String => Value::from(if param.name == "target" { "a.rs" } else { "x" }),
            ParamType::Integer { min, .. } => Value::from(min.max(1)),
            ParamType::Boolean => Value::Bool(true),
            ParamType::Choice(choices) => Value::from(choices[0]),
            ParamType::StringList => Value::from("x"),
            ParamType::EditList(_) => json!([{"path": "a.rs", "operation": "delete"}]),
        }
    }

    /// The smallest call of `spec` that holds `param`, with the selector set to a value the
    /// parameter is valid for.
    fn call_with(spec: &ToolSpec, param: &params::Param) -> Map<String, Value> {
        let mut arguments = Map::new();
        for required in spec.params.iter().filter(|p| p.required) {
            arguments.insert(required.name.to_owned(), sample(required));
        }
        if let (Some(selector), Some(mode)) = (spec.selector, param.only_for.first()) {
            arguments.insert(selector.to_owned(), Value::from(*mode));
        }
        if spec.selector != Some(param.name) {
            arguments.insert(param.name.to_owned(), sample(param));
        }
        arguments
    }

    fn command_line(spec: &ToolSpec, arguments: &Map<String, Value>) -> Vec<String> {
        // What no flag carries (`edit`'s list) is left out, as the command line takes it from a file.
        let mut arguments = arguments.clone();
        arguments.retain(|key, _| {
            spec.params.iter().any(|param| param.name == key && !matches!(param.ty, ParamType::EditList(_)))
        });
        super::cli_command(spec, &arguments).unwrap()
    }

    fn cli_arguments<T: ToolCli>(line: &[String]) -> Map<String, Value> {
        let matches =
            super::Cli::command().try_get_matches_from(line).unwrap_or_else(|error| panic!("{line:?}: {error}"));
        let (_, sub) = matches.subcommand().unwrap();
        ToolArgs::<T>::from_arg_matches(sub).unwrap().arguments
    }

    /// The parameter table is the one definition: the MCP schema lists exactly its parameters
    /// with their types, the engine's parser accepts each of them in the modes the table names
    /// (and refuses it in the others), and the command line carries each one to the same JSON.
    #[test]
    fn schema_parser_and_cli_agree() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.rs"), "fn a() {}\n").unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let config = loupe_core::Config {
            root: Some(root.path().to_path_buf()),
            index_dir: Some(index_dir.path().to_path_buf()),
            analytics: false,
            ..loupe_core::Config::default()
        };
        let engine = loupe_engine::Engine::new(config).unwrap();
        let listed = loupe_mcp::tools();
        assert_eq!(listed.len(), params::TOOLS.len());
        for spec in params::TOOLS {
            let tool = listed.iter().find(|tool| tool.name == spec.name).unwrap();
            let properties = tool.input_schema["properties"].as_object().unwrap();
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            // The schema lists the table's parameters but the unlisted ones (§4), which the parser
            // and the command line take all the same.
            let mut expected: Vec<&str> =
                spec.params.iter().filter(|param| param.listed).map(|param| param.name).collect();
            expected.sort_unstable();
            let mut listed_names = names.clone();
            listed_names.sort_unstable();
            assert_eq!(listed_names, expected, "{}: schema properties", spec.name);
            for param in spec.params {
                let table_type = match param.ty {
                    ParamType::String | ParamType::Choice(_) => "string",
                    ParamType::Integer { .. } => "integer",
                    ParamType::Boolean => "boolean",
                    ParamType::StringList | ParamType::EditList(_) => "array",
                };
                if param.listed {
                    let schema_type = properties[param.name]["type"].as_str().unwrap();
                    assert_eq!(schema_type, table_type, "{}.{}: schema type", spec.name, param.name);
                }
                assert!(!param.description.is_empty(), "{}.{} has no description", spec.name, param.name);

                let arguments = call_with(spec, param);
                let answer = engine.call(spec.name, Value::Object(arguments.clone()));
                let refused = answer.error.as_ref().and_then(|error| error.refused.as_deref());
                assert!(
                    refused.is_none(),
                    "{}.{}: the parser refused {arguments:?}: {}",
                    spec.name,
                    param.name,
                    answer.face
                );
                if let (Some(selector), Some(other)) = (spec.selector, spec.param(spec.selector.unwrap_or_default()))
                    && !param.only_for.is_empty()
                    && let ParamType::Choice(modes) = other.ty
                    && let Some(wrong) = modes.iter().find(|mode| !param.valid_for(mode))
                {
                    let mut misplaced = arguments.clone();
                    misplaced.insert(selector.to_owned(), Value::from(*wrong));
                    let refused = engine.call(spec.name, Value::Object(misplaced));
                    assert_eq!(
                        refused.error.as_ref().and_then(|error| error.refused.as_deref().cloned()),
                        Some((ArgumentRule::OtherMode, param.name.to_owned())),
                        "{}.{} with {selector}={wrong}: {}",
                        spec.name,
                        param.name,
                        refused.face
                    );
                }

                if matches!(param.ty, ParamType::EditList(_)) {
                    continue;
                }
                let line = command_line(spec, &arguments);
                let parsed = match spec.name {
                    "read" => cli_arguments::<super::ReadTool>(&line),
                    "search" => cli_arguments::<super::SearchTool>(&line),
                    "analyze" => cli_arguments::<super::AnalyzeTool>(&line),
                    "manage" => cli_arguments::<super::ManageTool>(&line),
                    "edit" => cli_arguments::<super::EditTool>(&line),
                    _ => panic!("`{}` has no subcommand", spec.name),
                };
                assert_eq!(
                    parsed.get(param.name),
                    Some(&arguments[param.name]),
                    "{}.{}: the command line {line:?}",
                    spec.name,
                    param.name
                );
            }
        }
    }

    /// An edit's fields follow the table too: each is taken with an operation its `only_for`
    /// names and refused, as that rule, with any other.
    #[test]
    fn an_edits_fields_follow_the_table() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.rs"), "fn a() {}\n").unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let config = loupe_core::Config {
            root: Some(root.path().to_path_buf()),
            index_dir: Some(index_dir.path().to_path_buf()),
            analytics: false,
            ..loupe_core::Config::default()
        };
        let engine = loupe_engine::Engine::new(config).unwrap();
        let operations = match params::EDIT_ITEM.iter().find(|param| param.name == "operation").unwrap().ty {
            ParamType::Choice(choices) => choices,
            _ => panic!("`operation` is a choice"),
        };
        let mut checked = 0;
        for param in params::EDIT_ITEM.iter().filter(|param| !param.only_for.is_empty()) {
            for operation in operations {
                let edit = json!({"path": "a.rs", "operation": operation, param.name: sample(param)});
                let answer = engine.call("edit", json!({"edits": [edit], "dry_run": true}));
                let refused = answer.error.as_ref().and_then(|error| error.refused.as_deref().cloned());
                if param.valid_for(operation) {
                    assert_eq!(refused, None, "{} with {operation}: {}", param.name, answer.face);
                } else {
                    assert_eq!(
                        refused,
                        Some((ArgumentRule::OtherMode, param.name.to_owned())),
                        "{} with {operation}: {}",
                        param.name,
                        answer.face
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "{checked}");
    }

    /// clap checks names, ids and defaults only when a command is built: do it in a test.
    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// An `edit` next call prints as a command that runs: `loupe rename` for a lone rename (and
    /// it parses back to the same call), else the JSON piped to `loupe edit`.
    #[test]
    fn edit_next_calls_print_as_commands() {
        let rename = json!({"dry_run": true, "edits": [{"operation": "rename_symbol", "symbol": "Config.load",
            "new_name": "load_file", "path": "a b.py", "include": "name_only"}]});
        let line = super::edit_command(rename.as_object().unwrap());
        assert_eq!(line, "loupe rename Config.load load_file --path 'a b.py' --dry-run --name-only");
        let words = shlex::split(&line).unwrap();
        let parsed = <super::Cli as clap::Parser>::try_parse_from(&words).unwrap();
        let super::Command::Rename(args) = parsed.command else { panic!("not a rename: {line}") };
        assert_eq!(args.to_arguments(), rename);
        let delete = json!({"edits": [{"operation": "delete_symbol", "symbol": "it's", "force": true}]});
        let line = super::edit_command(delete.as_object().unwrap());
        let words = shlex::split(&line).unwrap();
        assert_eq!(words[..2], ["echo".to_owned(), delete.to_string()]);
        assert_eq!(words[2..], ["|", "loupe", "edit"]);
    }
}
