//! The `manage` tool (§8.3): one function per command, so commands land independently.
//!
//! `status`, `metrics` and `guidance` report; they are never budget-blocked or gated.
//! `undo`, `redo` and `history` are the edit journal's (`journal.rs`). Commands of later
//! issues answer `INVALID_ARGS` "not available yet": never fake output.

mod journal;

use loupe_core::{ErrorCode, NextCall, ToolError};
use loupe_index::IndexState;
use serde_json::{Map, Value, json};

use crate::args::{Args, Parsed, Rejected};
use crate::engine::Engine;
use crate::params;
use crate::params::ManageCommand;
use crate::reasons;
use crate::response::{Face, MetadataLevel, Outcome, next_line};
use crate::session::CallContext;
use crate::work::{Work, index_message};

/// A `manage` call, parsed once.
#[derive(Debug)]
pub(crate) struct ManageRequest {
    command: ManageCommand,
    session_id: Option<String>,
    transaction_id: Option<String>,
    force: bool,
    limit: Option<u64>,
    /// `reindex`: one file or directory, instead of the whole root.
    path: Option<String>,
    metadata: Option<MetadataLevel>,
}

/// Parses a `manage` call's arguments into its request.
pub(crate) fn parse(arguments: Value) -> Parsed<ManageRequest> {
    Rejected::parsing("manage", arguments, |arguments, _| parse_request(arguments)).map_err(|(rejected, _)| rejected)
}

fn parse_request(arguments: Value) -> Result<ManageRequest, ToolError> {
    let mut args = Args::new(&params::MANAGE, arguments)?;
    let command = args.choice("command")?.as_deref().and_then(ManageCommand::parse).ok_or_else(|| {
        ToolError::invalid_args(
            "`command` is required for `manage`",
            format!("add `command`: one of {}", ManageCommand::CHOICES.join(", ")),
        )
    })?;
    args.refuse_other_modes(command.as_str())?;
    let metadata = args.metadata()?;
    let request = ManageRequest {
        command,
        session_id: args.string("session_id")?,
        transaction_id: args.string("transaction_id")?,
        force: args.boolean("force")?.unwrap_or(false),
        limit: args.integer("limit")?,
        path: args.string("path")?,
        metadata,
    };
    args.finish()?;
    Ok(request)
}

/// Runs a parsed `manage` call.
pub(crate) fn run(engine: &Engine, context: &CallContext, request: &ManageRequest, work: &Work) -> Outcome {
    let command = request.command.as_str();
    let session_id = request.session_id.as_deref();
    let result = match request.command {
        ManageCommand::Undo | ManageCommand::Redo => journal::undo(
            engine,
            request.transaction_id.as_deref(),
            request.force,
            request.command == ManageCommand::Undo,
        ),
        ManageCommand::History => journal::history(engine, request.limit),
        ManageCommand::Status => Ok(success(command, status(engine, context, session_id))),
        ManageCommand::Metrics => Ok(success(command, metrics(engine, context, session_id))),
        ManageCommand::Guidance => Ok(success(command, guidance())),
        ManageCommand::Reindex => reindex(engine, request.path.as_deref(), work),
    };
    let mut outcome = result.unwrap_or_else(|error| crate::edit::failed("manage", Some(command.into()), error));
    outcome.mode = Some(command.into());
    outcome.with_metadata(request.metadata)
}

fn success(command: &str, (face, data): (String, Value)) -> Outcome {
    let mut outcome = answer(face);
    outcome.detail.insert(command.to_owned(), data);
    outcome
}

/// A successful `manage` answer with its face; the caller adds what a program acts on.
fn answer(face: String) -> Outcome {
    Outcome::success("manage", None, None, Face::text(face))
}

/// `reindex`: the whole root (a walk that re-reads what changed on disk, with progress), or one
/// file or directory re-read now. Writes only the index, never the repository.
fn reindex(engine: &Engine, path: Option<&str>, work: &Work) -> Result<Outcome, ToolError> {
    let Some(index) = engine.index() else {
        return Err(ToolError::new(
            ErrorCode::IndexNotReady,
            "this server runs without an index, so there is nothing to reindex",
            "restart loupe with a writable index directory (--index-dir)",
        ));
    };
    let started = std::time::Instant::now();
    let file = match path {
        Some(path) => {
            let resolved = engine
                .workspace()
                .root()
                .resolve(path)
                .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
            resolved.real.as_ref().is_some_and(|real| real.is_file()).then_some(resolved.path)
        }
        None => None,
    };
    let (face, stopped) = match file {
        Some(file) => {
            index.update_paths(std::slice::from_ref(&file));
            (format!("reindex · {file} re-read\n"), false)
        }
        None => {
            // A directory is reconciled with the rest: the walk skips files whose size and
            // modification time are unchanged. A cancelled call stops the walk after the file
            // at hand, keeping what it re-read (a stopped rebuild keeps the previous tables).
            // The walk comes first, and a refresh with nothing to re-read reports nothing else.
            work.report(0, None, || "reindex: walking the tree".to_owned());
            let report = |done: usize, total: usize| {
                work.report(done as u64, Some(total as u64), || index_message(done as u64, total as u64));
            };
            let stats = index.refresh_until(&report, &|| work.is_cancelled());
            let mut face = format!(
                "reindex · {} files walked · {} re-read · {} removed{}\n",
                stats.walked,
                stats.reindexed,
                stats.removed,
                if stats.full_rebuild { " · full rebuild" } else { "" },
            );
            if stats.stopped {
                face.push_str(if stats.full_rebuild {
                    "── cancelled: the rebuild stopped, and the index keeps its previous tables\n"
                } else {
                    "── cancelled: the files re-read so far are applied; the rest keep their previous entries\n"
                });
            }
            (face, stats.stopped)
        }
    };
    let mut outcome = answer(face);
    if stopped {
        let again = NextCall::new("manage", json!({"command": "reindex"}));
        outcome.face.push(next_line(&again));
        outcome.act.truncated = true;
        outcome.act.next_calls.push(again);
        outcome.detail.insert("cancelled".into(), Value::Bool(true));
    }
    outcome.detail.insert("index".into(), serde_json::to_value(index.status()).unwrap_or_default());
    outcome.detail.insert("millis".into(), Value::from(started.elapsed().as_millis() as u64));
    Ok(outcome)
}

/// Root, version, index and watcher, the configuration that steers, and this session.
fn status(engine: &Engine, context: &CallContext, session_id: Option<&str>) -> (String, Value) {
    let config = engine.config();
    let session = engine.session_layer().describe(config, context, session_id);
    let index = engine.index().map(|index| index.status());
    let disk_bytes = engine.index().map_or(0, |index| loupe_index::cache::usage(index.dir()).0);
    let watching = engine.is_watching();
    let chosen_by = if config.root_chosen_by.is_empty() { "the configuration" } else { &config.root_chosen_by };
    let mut face = format!(
        "loupe {} · root {} (chosen by {chosen_by})\n",
        env!("CARGO_PKG_VERSION"),
        engine.root_path().display()
    );
    let index_json = match &index {
        Some(status) => {
            let state = serde_json::to_value(status.state).unwrap_or_default();
            // An index nothing has built and nothing is building is not "building".
            let never_built = status.state == loupe_index::IndexState::Building
                && status.files == 0
                && status.files_done == 0
                && !engine.workspace().building_in_background();
            let state_word = if never_built {
                "not built yet (a server builds it on start; `loupe index` builds it now)"
            } else {
                state.as_str().unwrap_or("unknown")
            };
            let languages: Vec<String> =
                status.by_language.iter().map(|(lang, count)| format!("{lang} {count}")).collect();
            face.push_str(&format!(
                "index {} · {} files · {} symbols{} · watcher {} · {} on disk\n",
                state_word,
                status.files,
                status.symbols,
                if languages.is_empty() { String::new() } else { format!(" ({})", languages.join(", ")) },
                if watching { "on" } else { "off" },
                loupe_core::text::human_bytes(disk_bytes)
            ));
            json!({"state": state, "files": status.files, "symbols": status.symbols, "by_language": status.by_language,
                   "persisted": status.persisted, "watcher": watching, "disk_bytes": disk_bytes})
        }
        None => {
            face.push_str("index none\n");
            Value::Null
        }
    };
    let git = git_status(engine);
    match &git {
        Ok((branch, dirty)) => face.push_str(&format!(
            "git {} · {} changed · {} untracked\n",
            branch.as_deref().unwrap_or("(detached HEAD)"),
            dirty.changed,
            dirty.untracked
        )),
        Err(Some(reason)) => face.push_str(&format!("git unavailable: {reason}\n")),
        Err(None) => face.push_str("git none\n"),
    }
    let git_json = match &git {
        Ok((branch, dirty)) => json!({"branch": branch, "changed": dirty.changed, "untracked": dirty.untracked}),
        Err(Some(reason)) => json!({"unavailable": reason}),
        Err(None) => Value::Null,
    };
    face.push_str(&session_line(config, &session));
    let policy = json!({
        "gate_mode": format!("{:?}", config.gate_mode).to_lowercase(),
        "relevance": format!("{:?}", config.relevance).to_lowercase(),
        "max_range_lines": config.max_range_lines,
        "strict_session_id": config.strict_session_id,
        "session_ttl_secs": config.session_ttl_secs,
        "legacy_tools": config.legacy_tools,
    });
    face.push_str(&format!(
        "policy: gate {} · relevance {} · precision reads up to {} lines\n",
        policy["gate_mode"].as_str().unwrap_or_default(),
        policy["relevance"].as_str().unwrap_or_default(),
        config.max_range_lines
    ));
    let data = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "root": engine.root_path().display().to_string(),
        "root_chosen_by": chosen_by,
        "index": index_json,
        "git": git_json,
        "policy": policy,
        "session": session,
    });
    (face, data)
}

/// The branch and the dirty count, when the root is in a git work tree; else why git is not
/// read, when there is a repository it will not follow (`GitError::Untrusted`). The files on
/// disk come from the index (its walk already left ignored files out).
fn git_status(engine: &Engine) -> Result<(Option<String>, loupe_git::Dirty), Option<String>> {
    // The same view of git as diff_preview: excluded paths (secrets) are not counted.
    let repository = crate::workspace::git::open_repository(engine.workspace()).map_err(|error| match error {
        loupe_git::GitError::Untrusted { .. } => Some(error.to_string()),
        _ => None,
    })?;
    let files: Vec<(String, u64, u64)> = match engine.index().filter(|index| index.state() == IndexState::Ready) {
        Some(index) => {
            index.files().into_iter().map(|file| (file.path.to_string(), file.size, file.mtime_ns)).collect()
        }
        None => engine
            .workspace()
            .files_now()
            .into_iter()
            .map(|entry| (entry.path.to_string(), entry.size, entry.mtime_ns))
            .collect(),
    };
    let read = |path: &str| {
        let path = loupe_core::RepoPath::normalize(path)?;
        engine.workspace().root().read_indexed(&path, engine.config().max_file_bytes).ok()
    };
    let dirty = repository.dirty(&files, &read).map_err(|_| None)?;
    Ok((repository.branch(), dirty))
}

fn session_line(config: &loupe_core::Config, session: &Value) -> String {
    let metrics = &session["metrics"];
    let budget = &session["budget"];
    format!(
        "session {} · budget {} · left until a search: {}/{} reads, {}/{} lines · in all: {} reads, {} lines, {} searches · tokens saved {}\n",
        session["key"].as_str().unwrap_or_default(),
        budget["state"].as_str().unwrap_or_default(),
        budget["reads_left"],
        config.max_reads_per_session,
        budget["lines_left"],
        config.max_total_read_lines,
        metrics["reads_count"],
        metrics["reads_lines_total"],
        metrics["search_count"],
        metrics["tokens_saved_estimate"],
    )
}

/// The session's §9.3 metrics and the analytics counters.
fn metrics(engine: &Engine, context: &CallContext, session_id: Option<&str>) -> (String, Value) {
    let config = engine.config();
    let session = engine.session_layer().describe(config, context, session_id);
    let analytics = engine.session_layer().analytics().counters();
    let mut face = session_line(config, &session);
    if let Some(metrics) = session["metrics"].as_object() {
        let pairs: Vec<String> = metrics.iter().map(|(name, value)| format!("{name}={value}")).collect();
        face.push_str(&pairs.join(" "));
        face.push('\n');
    }
    face.push_str(&format!(
        "analytics: {} · enqueued {} · written {} · drop_count_by_type {}\n",
        if analytics["enabled"] == json!(true) { "on" } else { "off" },
        analytics["enqueued"],
        analytics["written"],
        analytics["drop_count_by_type"]
    ));
    // The memory of the bounded caches a long-running server fills (estimated as their budgets
    // count it): what a soak tells apart from growth.
    let (facts_files, facts_bytes) = engine.workspace().relations.facts_cache_size();
    let (filter_files, filter_bytes) = engine.workspace().oversized.size();
    // Oversized files the background learner has yet to summarise: searches scan them until
    // it has (a benchmark waits for 0 to measure a settled server).
    let filter_pending =
        engine.index().filter(|index| index.state() == loupe_index::IndexState::Ready).map_or(0, |index| {
            engine.workspace().oversized.pending(engine.workspace().root(), index, engine.config().max_file_bytes)
        });
    face.push_str(&format!(
        "caches: sessions {} KiB · analyze facts {} KiB in {facts_files} files · filters of oversized files {} KiB in {filter_files} files, {filter_pending} to make\n",
        session["live_sessions_bytes"].as_u64().unwrap_or(0) / 1024,
        facts_bytes / 1024,
        filter_bytes / 1024
    ));
    let caches = json!({
        "analyze_facts_files": facts_files, "analyze_facts_bytes": facts_bytes,
        "oversized_filter_files": filter_files, "oversized_filter_bytes": filter_bytes,
        "oversized_filter_pending": filter_pending, "oversized_filters_learned": engine.workspace().oversized.learned(),
        "oversized_spans_read": engine.workspace().oversized.spans_read(),
    });
    // Where the calls of this server spent their time, stage by stage (`latency.rs`): in the
    // full envelope only, as timings would make the face differ from call to call.
    let figures = engine.latency().figures();
    let latency: Map<String, Value> = figures
        .iter()
        .map(|figure| {
            let ms = |duration: std::time::Duration| (duration.as_secs_f64() * 1e5).round() / 100.0;
            let figures = json!({"count": figure.count, "p50_ms": ms(figure.p50), "p95_ms": ms(figure.p95)});
            (figure.stage.as_str().to_owned(), figures)
        })
        .collect();
    // Calls by the legacy names (§12) since the server started, per name: who still uses them.
    let legacy_calls = engine.legacy_calls.snapshot();
    let legacy_mode = serde_json::to_value(config.legacy_tools).unwrap_or_default();
    if !legacy_calls.is_empty() {
        let counts: Vec<String> = legacy_calls.iter().map(|(name, calls)| format!("{name} {calls}")).collect();
        face.push_str(&format!(
            "legacy names ({}, deprecated): {}\n",
            legacy_mode.as_str().unwrap_or_default(),
            counts.join(" · ")
        ));
    }
    let legacy = json!({"mode": legacy_mode, "calls": legacy_calls});
    let mut metrics = json!({"session": session, "analytics": analytics, "caches": caches, "legacy_tools": legacy, "latency": latency});
    // The allocator's counts (`heap.rs`), when the binary registered them: full envelope only,
    // like the timings.
    if let Some(heap) = crate::heap::figures() {
        metrics["heap"] =
            json!({"allocator": heap.allocator, "allocated_bytes": heap.allocated, "resident_bytes": heap.resident});
    }
    (face, metrics)
}

const GUIDANCE: &str = "How to work with loupe cheaply:
1. Know the name? read mode symbol (name or Type.method) or mode outline (a path): no search needed.
2. Else search (type auto infers symbol/text/file): a symbol hit has a candidate_id (read it), a text hit names the function it is in, a file hit is its path.
3. A whole file needs a ref: a path a search of this session returned, a candidate_id / bundle_id, or a copied next_calls entry. Exact windows need none: snippet start_line..end_line, or file offset+limit, up to max_range_lines.
4. Follow `→ next:` lines: they are the exact call that continues or fixes a result.
5. Lines you already received unchanged come back as one reference line; pass fresh: true to get them again.
6. Watch meta.stabilization: budget_state, warnings, reason_codes, suggested_next_action.
Reason codes (the code is authoritative; this list only describes it):
";

fn guidance() -> (String, Value) {
    let registry = reasons::registry();
    let mut face = GUIDANCE.to_owned();
    for part in ["core", "extensions"] {
        for entry in registry[part].as_array().into_iter().flatten() {
            face.push_str(&format!(
                "  {} ({}): {}\n",
                entry["code"].as_str().unwrap_or_default(),
                entry["severity"].as_str().unwrap_or_default(),
                entry["description"].as_str().unwrap_or_default()
            ));
        }
    }
    // What `tools/list` leaves out to stay small (§4): accepted by every tool that names them.
    face.push_str("parameters accepted but not listed:\n");
    for spec in crate::params::TOOLS {
        let unlisted: Vec<String> = spec
            .params
            .iter()
            .filter(|param| !param.listed)
            .map(|param| format!("{} ({})", param.name, param.description))
            .collect();
        if !unlisted.is_empty() {
            face.push_str(&format!("  {}: {}\n", spec.name, unlisted.join("; ")));
        }
    }
    (face, json!({"reason_registry": registry}))
}
