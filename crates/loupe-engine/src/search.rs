//! The `search` tool (§6): text, regex, symbol, file and directory search with `auto`
//! inference, filters, deterministic ranking, paging with totals, stable candidate ids and
//! ready-to-run reads for the top hits.
//!
//! The index narrows (candidate files, symbol locations); every text hit is verified against
//! the file as it is on disk now, so a result is never stale. While the index builds, text
//! search scans the walk instead and says `index_state: building`.

use std::collections::BTreeMap;

use globset::{Glob, GlobMatcher};
use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError, text, tokens};
use loupe_index::{IndexState, SymbolHit, trigram};
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value, json};

use crate::args::{Args, Parsed, Rejected};
use crate::engine::Engine;
use crate::params;
use crate::response::{MetadataLevel, Response};

const DEFAULT_RESULTS: usize = 20;
const MAX_RESULTS: usize = 100;
const MAX_CONTEXT: usize = 5;
/// Verification stops after this many matching lines; the total is then a lower bound.
const MAX_MATCHES: usize = 2000;
const DEFAULT_PREVIEW_CHARS: usize = 200;
/// Symbols with a partial name match considered per search, after every exact match.
const PARTIAL_SYMBOLS: usize = 2000;

/// A `search` call, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    pub(crate) query: String,
    kind: String,
    filters: Filters,
    case_sensitive: Option<bool>,
    whole_word: bool,
    max_results: usize,
    offset: usize,
    output: String,
    context_lines: usize,
    preview_chars: usize,
    pub(crate) metadata: MetadataLevel,
    pub(crate) session_id: Option<String>,
    original: Map<String, Value>,
    clamped: Vec<&'static str>,
}

#[derive(Debug, Clone, Default)]
struct Filters {
    under: Option<RepoPath>,
    globs: Vec<GlobMatcher>,
    excludes: Vec<GlobMatcher>,
    file_types: Vec<String>,
    kinds: Vec<String>,
}

/// One ranked result before paging.
#[derive(Debug, Clone)]
struct Hit {
    kind: &'static str,
    path: RepoPath,
    line: Option<usize>,
    end_line: Option<usize>,
    score: f64,
    preview: String,
    symbol: Option<SymbolHit>,
    file_hash: String,
}

impl SearchRequest {
    /// The arguments as given, to build follow-up calls from.
    pub(crate) fn original(&self) -> &Map<String, Value> {
        &self.original
    }
}

/// Runs a parsed search.
pub(crate) fn run(engine: &Engine, request: &SearchRequest) -> Response {
    match execute(engine, request) {
        Ok(response) => response,
        Err(error) => {
            let mut response =
                Response::failure("search", Some(request.kind.clone()), Some(request.query.clone()), error);
            response.metadata = request.metadata;
            response
        }
    }
}

/// Parses a `search` call's arguments into its request.
pub(crate) fn parse(arguments: Value) -> Parsed<SearchRequest> {
    Rejected::parsing("search", arguments, parse_request).map_err(|(rejected, _)| rejected)
}

fn parse_request(arguments: Value, original: Map<String, Value>) -> Result<SearchRequest, ToolError> {
    let mut args = Args::new(&params::SEARCH, arguments)?;
    let query = args.required_string("query", "\"query\": \"parse_config\"")?;
    let kind = args.choice("type")?.unwrap_or_else(|| "auto".into());
    let under = match args.string("path")? {
        Some(path) if path.contains(['*', '?', '[']) => {
            return finish_parse(args, query, kind, Some(path), original);
        }
        Some(path) => Some(RepoPath::normalize(&path.replace('\\', "/")).ok_or_else(|| {
            ToolError::new(
                ErrorCode::PathOutsideRoot,
                format!("`{path}` is outside the workspace root"),
                "pass a path relative to the root",
            )
        })?),
        None => None,
    };
    let mut request = finish_parse(args, query, kind, None, original)?;
    request.filters.under = under;
    Ok(request)
}

fn finish_parse(
    mut args: Args,
    query: String,
    kind: String,
    path_glob: Option<String>,
    original: Map<String, Value>,
) -> Result<SearchRequest, ToolError> {
    let mut globs = Vec::new();
    for pattern in path_glob.into_iter().chain(args.string_list("glob")?) {
        globs.push(compile_glob("glob", &pattern)?);
    }
    let excludes = args
        .string_list("exclude")?
        .iter()
        .map(|pattern| compile_glob("exclude", pattern))
        .collect::<Result<Vec<_>, _>>()?;
    let file_types =
        args.string_list("file_types")?.into_iter().map(|ext| ext.trim_start_matches('.').to_lowercase()).collect();
    let kinds = args.string_list("kinds")?.into_iter().map(|kind| kind.to_lowercase()).collect();
    let case_sensitive = args.boolean("case_sensitive")?;
    let whole_word = args.boolean("whole_word")?.unwrap_or(false);
    let mut clamped = Vec::new();
    let mut max_results = args.integer("max_results")?.map_or(DEFAULT_RESULTS, |value| value.max(1) as usize);
    if max_results > MAX_RESULTS {
        max_results = MAX_RESULTS;
        clamped.push("max_results");
    }
    let cursor_offset = match args.string("cursor")? {
        Some(cursor) => Some(decode_cursor(&cursor).ok_or_else(|| {
            ToolError::invalid_args(
                "`cursor` is not a search cursor issued by loupe",
                "pass `next_cursor` exactly as returned, or drop it",
            )
        })?),
        None => None,
    };
    let offset = cursor_offset.or(args.integer("offset")?.map(|value| value as usize)).unwrap_or(0);
    let output = args.choice("output")?.unwrap_or_else(|| "matches".into());
    let mut context_lines = args.integer("context_lines")?.unwrap_or(0) as usize;
    if context_lines > MAX_CONTEXT {
        context_lines = MAX_CONTEXT;
        clamped.push("context_lines");
    }
    let preview_chars =
        args.integer("max_preview_chars")?.map_or(DEFAULT_PREVIEW_CHARS, |value| (value as usize).clamp(20, 2000));
    let metadata = match args.choice("metadata")?.as_deref() {
        Some("minimal") => MetadataLevel::Minimal,
        _ => MetadataLevel::Standard,
    };
    let session_id = args.string("session_id")?;
    args.finish()?;
    if kind == "regex"
        && let Err(error) = Regex::new(&query)
    {
        return Err(ToolError::invalid_args(
            format!("invalid regex: {error}"),
            "fix the pattern, or use type='text' for a literal search",
        ));
    }
    Ok(SearchRequest {
        query,
        kind,
        filters: Filters { under: None, globs, excludes, file_types, kinds },
        case_sensitive,
        whole_word,
        max_results,
        offset,
        output,
        context_lines,
        preview_chars,
        metadata,
        session_id,
        original,
        clamped,
    })
}

fn compile_glob(name: &str, pattern: &str) -> Result<GlobMatcher, ToolError> {
    let pattern = if pattern.contains('/') { pattern.to_owned() } else { format!("**/{pattern}") };
    Glob::new(&pattern).map(|glob| glob.compile_matcher()).map_err(|error| {
        ToolError::invalid_args(
            format!("`{name}` has an invalid glob `{pattern}`: {error}"),
            "use a glob like \"src/**/*.rs\"",
        )
    })
}

/// `auto`: globs and paths are files, a trailing `/` a directory, identifiers symbols (then
/// text), anything else text.
fn infer(query: &str) -> &'static str {
    let trimmed = query.trim();
    if trimmed.ends_with('/') {
        return "directory";
    }
    if trimmed.contains(['*', '?'])
        || (trimmed.contains('/') && !trimmed.contains(' '))
        || looks_like_file_name(trimmed)
    {
        return "file";
    }
    if is_identifier_path(trimmed) {
        return "symbol";
    }
    "text"
}

fn looks_like_file_name(query: &str) -> bool {
    let Some((stem, extension)) = query.rsplit_once('.') else { return false };
    !stem.is_empty()
        && !stem.contains(' ')
        && (1..=5).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_lowercase())
        && loupe_index::Lang::from_path(query).is_some()
        || matches!(
            query.rsplit_once('.').map(|(_, ext)| ext),
            Some("md" | "toml" | "json" | "yaml" | "yml" | "txt" | "lock")
        )
}

fn is_identifier_path(query: &str) -> bool {
    let parts: Vec<&str> = query.split("::").flat_map(|part| part.split('.')).collect();
    !parts.is_empty()
        && parts.iter().all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        })
}

fn execute(engine: &Engine, request: &SearchRequest) -> Result<Response, ToolError> {
    let index = engine.index_for_query();
    let index_state = index.map_or(IndexState::Building, |index| index.state());
    let (effective, inferred) = match request.kind.as_str() {
        "auto" => (infer(&request.query), true),
        other => (static_kind(other), false),
    };
    let mut fell_back = false;
    let searched_all = |(hits, lower_bound): (Vec<Hit>, bool)| (hits, lower_bound, 0);
    let mut hits = match effective {
        "symbol" => searched_all(symbol_hits(engine, request)),
        "file" => searched_all(file_hits(engine, request, false)),
        "directory" => searched_all(file_hits(engine, request, true)),
        "regex" => text_hits(engine, request, true)?,
        _ => text_hits(engine, request, false)?,
    };
    let mut used = effective;
    if inferred && effective == "symbol" && hits.0.is_empty() {
        fell_back = true;
        used = "text";
        hits = text_hits(engine, request, false)?;
    }
    let (mut hits, lower_bound, not_searched) = hits;
    hits.sort_by(|left, right| {
        right
            .score
            .total_cmp(&left.score)
            .then_with(|| left.path.cmp(&right.path))
            .then_with(|| left.line.cmp(&right.line))
    });
    let found = Found { hits, lower_bound, not_searched };
    Ok(render(engine, request, used, inferred, fell_back, index_state, found))
}

/// What a search found: the hits, whether the total is a lower bound (the 2,000-match cut),
/// and how many files in scope were too large to read and so not searched.
struct Found {
    hits: Vec<Hit>,
    lower_bound: bool,
    not_searched: usize,
}

fn static_kind(kind: &str) -> &'static str {
    match kind {
        "text" => "text",
        "regex" => "regex",
        "symbol" => "symbol",
        "file" => "file",
        "directory" => "directory",
        _ => "text",
    }
}

impl Filters {
    fn admits(&self, path: &RepoPath) -> bool {
        if let Some(under) = &self.under
            && !under.is_root()
            && path.as_str() != under.as_str()
            && !path.as_str().starts_with(&format!("{}/", under.as_str()))
        {
            return false;
        }
        if !self.globs.is_empty() && !self.globs.iter().any(|glob| glob.is_match(path.as_str())) {
            return false;
        }
        if self.excludes.iter().any(|glob| glob.is_match(path.as_str())) {
            return false;
        }
        if !self.file_types.is_empty() {
            let extension = path.file_name().rsplit_once('.').map(|(_, ext)| ext.to_lowercase()).unwrap_or_default();
            if !self.file_types.contains(&extension) {
                return false;
            }
        }
        true
    }
}

fn smart_case(request: &SearchRequest) -> bool {
    request.case_sensitive.unwrap_or_else(|| request.query.chars().any(char::is_uppercase))
}

fn symbol_hits(engine: &Engine, request: &SearchRequest) -> (Vec<Hit>, bool) {
    let Some(index) = engine.index_for_query() else { return (Vec::new(), false) };
    let query = request.query.trim();
    let (container, name) = split_qualified(query);
    let name_lower = name.to_lowercase();
    let case_sensitive = smart_case(request);
    // Exact names come from the name map at once; partial ones from a scan of the names,
    // capped so a two-letter query on a kernel-sized index stays fast (the total then says
    // it is a lower bound).
    let mut candidates = index.symbols_named(name);
    let (partial, cut) = index.symbols_containing(&name_lower, PARTIAL_SYMBOLS);
    candidates.extend(partial);
    let mut hits = Vec::new();
    for hit in candidates {
        if !request.filters.admits(&hit.path) {
            continue;
        }
        let kind_name = hit.symbol.kind.as_str();
        if !request.filters.kinds.is_empty() && !request.filters.kinds.iter().any(|kind| kind == kind_name) {
            continue;
        }
        if let Some(container) = container
            && !hit
                .symbol
                .container
                .as_deref()
                .is_some_and(|own| own.to_lowercase().ends_with(&container.to_lowercase()))
        {
            continue;
        }
        let symbol_name = hit.symbol.name.as_str();
        if case_sensitive && !symbol_name.contains(name) {
            continue;
        }
        let mut score: f64 = if symbol_name == name {
            1.0
        } else if symbol_name.eq_ignore_ascii_case(name) {
            0.95
        } else if symbol_name.to_lowercase().starts_with(&name_lower) {
            0.8
        } else {
            0.6
        };
        score -= kind_penalty(kind_name);
        score -= (hit.symbol.depth as f64 * 0.01).min(0.05);
        // A C/C++ prototype ranks below the definition it declares.
        if loupe_syntax::is_prototype(&hit.symbol.signature) {
            score -= 0.01;
        }
        let preview = hit.symbol.signature.clone();
        hits.push(Hit {
            kind: "symbol",
            path: hit.path.clone(),
            line: Some(hit.symbol.span.start_line),
            end_line: Some(hit.symbol.span.end_line),
            score: score.clamp(0.0, 1.0),
            preview,
            file_hash: hit.file_hash.to_string(),
            symbol: Some(hit),
        });
    }
    (hits, cut)
}

/// Definitions of types and functions rank above fields and locals of the same name.
fn kind_penalty(kind: &str) -> f64 {
    match kind {
        "function" | "method" | "class" | "struct" | "enum" | "trait" | "interface" | "type_alias" | "macro"
        | "module" => 0.0,
        "constructor" | "constant" | "union" | "namespace" | "impl" => 0.02,
        _ => 0.05,
    }
}

fn split_qualified(query: &str) -> (Option<&str>, &str) {
    for separator in ["::", ".", "/"] {
        if let Some((container, name)) = query.rsplit_once(separator)
            && !container.is_empty()
            && !name.is_empty()
        {
            return (Some(container), name);
        }
    }
    (None, query)
}

fn file_hits(engine: &Engine, request: &SearchRequest, directories: bool) -> (Vec<Hit>, bool) {
    let files: Vec<RepoPath> = match engine.index_for_query().filter(|index| index.state() == IndexState::Ready) {
        Some(index) => index.files().into_iter().map(|record| record.path).collect(),
        None => engine.root().walk(engine.walk_options()).into_iter().map(|entry| entry.path).collect(),
    };
    let query = request.query.trim().trim_end_matches('/');
    let query_lower = query.to_lowercase();
    let glob = query.contains(['*', '?', '[']).then(|| compile_glob("query", query).ok()).flatten();
    let mut candidates: Vec<RepoPath> = if directories {
        let mut dirs = std::collections::BTreeSet::new();
        for file in &files {
            let mut dir = file.parent();
            while !dir.is_root() {
                if !dirs.insert(dir.clone()) {
                    break;
                }
                dir = dir.parent();
            }
        }
        dirs.into_iter().collect()
    } else {
        files
    };
    candidates.retain(|path| request.filters.admits(path));
    let mut hits = Vec::new();
    for path in candidates {
        let name = path.file_name().to_lowercase();
        let full = path.as_str().to_lowercase();
        let score = if let Some(glob) = &glob {
            if glob.is_match(path.as_str()) { 0.7 } else { continue }
        } else if name == query_lower || full == query_lower {
            1.0
        } else if full.ends_with(&format!("/{query_lower}")) {
            0.95
        } else if name.starts_with(&query_lower) {
            0.9
        } else if name.contains(&query_lower) {
            0.8
        } else if full.contains(&query_lower) {
            0.6
        } else {
            continue;
        };
        // Shallower paths first among equals.
        let depth_penalty = (path.components().count() as f64 * 0.005).min(0.05);
        hits.push(Hit {
            kind: if directories { "directory" } else { "file" },
            preview: path.to_string(),
            path,
            line: None,
            end_line: None,
            score: score - depth_penalty,
            symbol: None,
            file_hash: String::new(),
        });
    }
    (hits, false)
}

/// Text hits, whether the 2,000-match cut made the total a lower bound, and how many files in
/// scope were too large to read (over `max_file_bytes`) and so not searched.
fn text_hits(engine: &Engine, request: &SearchRequest, is_regex: bool) -> Result<(Vec<Hit>, bool, usize), ToolError> {
    let case_sensitive = smart_case(request);
    let pattern = if is_regex { request.query.clone() } else { regex::escape(&request.query) };
    let pattern = if request.whole_word { format!(r"\b(?:{pattern})\b") } else { pattern };
    // Matches are per line. One pass over the whole file with anchors at line terminators
    // finds where they can start, far faster than a call per line; only lines where such a
    // match starts are then matched alone. On a single line (no terminator inside) the same
    // regex has exactly the per-line meaning, so one regex serves both.
    let scanner = RegexBuilder::new(&pattern)
        .case_insensitive(!case_sensitive)
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|error| match is_regex {
            true => ToolError::invalid_args(format!("invalid regex: {error}"), "fix the pattern, or use type='text'"),
            // A literal always parses; what fails is its size once compiled (case folding).
            false => ToolError::invalid_args(
                "this literal is too large to search as given",
                "search for a shorter, distinctive part of it, or set case_sensitive: true",
            ),
        })?;
    // The plan must be evaluated with the same options the matcher uses; a literal searched
    // case-insensitively goes through the regex planner, which knows Unicode case folding.
    let plan_pattern = if is_regex { request.query.clone() } else { regex::escape(&request.query) };
    let plan = if is_regex || !case_sensitive {
        trigram::plan_regex(&plan_pattern, !case_sensitive)
            .map_err(|error| ToolError::invalid_args(format!("invalid regex: {error}"), "fix the pattern"))?
    } else {
        trigram::plan_literal(&request.query)
    };
    let ready = engine.index_for_query().filter(|index| index.state() == IndexState::Ready);
    let (mut candidates, oversized): (Vec<RepoPath>, Vec<loupe_vfs::WalkEntry>) = match ready {
        Some(index) => (index.text_candidates(&plan), index.oversized()),
        None => {
            let walk = engine.root().walk_all(engine.walk_options());
            (walk.files.into_iter().map(|entry| entry.path).collect(), walk.oversized)
        }
    };
    // Files over the index's size limit are not in it: they are scanned here, up to the read
    // limit; what is over that too is counted and named in the answer, never silently missed.
    let read_limit = engine.config().max_file_bytes;
    let (scanned, too_large): (Vec<_>, Vec<_>) = oversized
        .into_iter()
        .filter(|entry| request.filters.admits(&entry.path))
        .partition(|entry| entry.size <= read_limit);
    if !scanned.is_empty() {
        candidates.extend(scanned.into_iter().map(|entry| entry.path));
        candidates.sort();
        candidates.dedup();
    }
    // Lines that define a symbol named like the query rank as definitions, and the files
    // holding them are verified first, so a search cut at MAX_MATCHES still shows them.
    let mut definition_lines: BTreeMap<RepoPath, Vec<usize>> = BTreeMap::new();
    if let Some(index) = ready {
        for hit in index.symbols_named(request.query.trim()) {
            definition_lines.entry(hit.path).or_default().push(hit.symbol.name_line);
        }
    }
    // Candidates come in path order; a partition keeps that order within each group.
    if !definition_lines.is_empty() {
        let (defining, rest): (Vec<RepoPath>, Vec<RepoPath>) =
            candidates.into_iter().partition(|path| definition_lines.contains_key(path));
        candidates = defining.into_iter().chain(rest).collect();
    }
    candidates.retain(|path| request.filters.admits(path));
    let query_lower = request.query.to_lowercase();
    let verifier = Verifier { engine, request, scanner: &scanner, query_lower: &query_lower };
    let verify = |path: &RepoPath| verifier.file(path, definition_lines.get(path).map(Vec::as_slice).unwrap_or(&[]));
    // Files are verified on every core but taken in candidate order, so the cut at
    // MAX_MATCHES falls where a single thread would put it.
    let mut hits = Vec::new();
    let mut lower_bound = false;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    loupe_core::parallel::map_in_order(
        &candidates,
        threads,
        || (),
        |_, path| verify(path),
        |_, file_hits| {
            for hit in file_hits {
                if hits.len() >= MAX_MATCHES {
                    lower_bound = true;
                    return false;
                }
                hits.push(hit);
            }
            true
        },
    );
    Ok((hits, lower_bound, too_large.len()))
}

/// What verifying one candidate file needs.
struct Verifier<'a> {
    engine: &'a Engine,
    request: &'a SearchRequest,
    scanner: &'a regex::Regex,
    query_lower: &'a str,
}

impl Verifier<'_> {
    /// The matches in `path` as it is on disk now, scored.
    fn file(&self, path: &RepoPath, definition_lines: &[usize]) -> Vec<Hit> {
        // The read limit, not the index's: files over the index's limit are scanned here too.
        let Ok(bytes) = self.engine.root().read_indexed(path, self.engine.config().max_file_bytes) else {
            return Vec::new();
        };
        // A file that is plain UTF-8 with `\n` line ends (no BOM, no NUL near the start, no
        // `\r`) is its own decoded text: it is scanned in place, and only the lines where a
        // match starts are located. Anything else is decoded first.
        let plain = (!bytes.starts_with(b"\xEF\xBB\xBF")
            && !bytes[..bytes.len().min(text::BINARY_SNIFF_BYTES)].contains(&0)
            && memchr::memchr(b'\r', &bytes).is_none())
        .then(|| std::str::from_utf8(&bytes).ok())
        .flatten();
        let decoded;
        let lines: Vec<(usize, &str)> = match plain {
            Some(raw) => plain_lines_to_check(self.scanner, raw),
            None => {
                let Ok(text) = text::decode(&bytes) else { return Vec::new() };
                decoded = text;
                lines_to_check(self.scanner, &decoded)
                    .into_iter()
                    .map(|number| (number, decoded.line(number)))
                    .collect()
            }
        };
        if lines.is_empty() {
            return Vec::new();
        }
        let file_hash = loupe_core::ContentHash::of(&bytes).to_string();
        let path_bonus = if path.as_str().to_lowercase().contains(self.query_lower) { 0.1 } else { 0.0 };
        let mut hits = Vec::new();
        for (number, line) in lines {
            let Some(found) = self.scanner.find(line) else { continue };
            let whole_word = is_word_boundary(line, found.start(), found.end());
            let exact_case = line[found.range()].contains(&self.request.query);
            let mut score: f64 = 0.5 + path_bonus;
            if whole_word {
                score += 0.15;
            }
            if exact_case {
                score += 0.05;
            }
            if definition_lines.contains(&number) {
                score += 0.25;
            }
            hits.push(Hit {
                kind: "text",
                path: path.clone(),
                line: Some(number),
                end_line: Some(number),
                score: score.min(1.0),
                preview: line.to_owned(),
                symbol: None,
                file_hash: file_hash.clone(),
            });
            if hits.len() >= MAX_MATCHES {
                break;
            }
        }
        hits
    }
}

/// `lines_to_check` for text whose only line terminator is `\n`, without splitting it: the
/// 1-based number and content of each line where a match starts.
fn plain_lines_to_check<'t>(scanner: &regex::Regex, text: &'t str) -> Vec<(usize, &'t str)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    if text.is_empty() {
        return lines;
    }
    let (mut at, mut counted_to, mut number) = (0, 0, 1);
    while at <= text.len() {
        let Some(found) = scanner.find_at(text, at) else { break };
        let start = found.start();
        if start >= text.len() && text.ends_with('\n') {
            break;
        }
        number += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count();
        counted_to = start;
        let line_start = memchr::memrchr(b'\n', &bytes[..start]).map_or(0, |newline| newline + 1);
        let line_end = memchr::memchr(b'\n', &bytes[start..]).map_or(text.len(), |newline| start + newline);
        lines.push((number, &text[line_start..line_end]));
        if line_end >= text.len() {
            break;
        }
        at = line_end + 1;
    }
    lines
}

/// 1-based lines of `decoded` where a match of `scanner` starts, in order; every line with a
/// per-line match is among them. After a match, the scan resumes at the next line, so a match
/// spanning lines never hides one that starts inside it.
fn lines_to_check(scanner: &regex::Regex, decoded: &text::Decoded) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut at = 0;
    while at <= decoded.text.len() {
        let Some(found) = scanner.find_at(&decoded.text, at) else { break };
        let mut index = decoded.lines.partition_point(|span| span.next <= found.start());
        // An empty match at the very end belongs to a last line that has no terminator.
        if index == decoded.lines.len() && decoded.lines.last().is_some_and(|span| span.end == found.start()) {
            index -= 1;
        }
        let Some(span) = decoded.lines.get(index) else { break };
        if lines.last() == Some(&(index + 1)) {
            break;
        }
        lines.push(index + 1);
        if span.next <= at {
            break;
        }
        at = span.next;
    }
    lines
}

fn is_word_boundary(line: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let before = line[..start].chars().next_back().is_none_or(|c| !word(c));
    let after = line[end..].chars().next().is_none_or(|c| !word(c));
    before && after
}

/// A stable id for a hit: path, line span, kind and file hash, never the rank.
fn candidate_id(hit: &Hit) -> String {
    let key = format!("{}\u{0}{:?}\u{0}{:?}\u{0}{}\u{0}{}", hit.path, hit.line, hit.end_line, hit.kind, hit.file_hash);
    format!("c_{}", &blake3::hash(key.as_bytes()).to_hex()[..12])
}

fn encode_cursor(offset: usize) -> String {
    format!("s{offset}")
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.trim().strip_prefix('s')?.parse().ok()
}

#[allow(clippy::too_many_arguments)]
fn render(
    engine: &Engine,
    request: &SearchRequest,
    used: &'static str,
    inferred: bool,
    fell_back: bool,
    index_state: IndexState,
    found: Found,
) -> Response {
    let Found { hits, lower_bound, not_searched } = found;
    let total = hits.len();
    let start = request.offset.min(total);
    let end = (start + request.max_results).min(total);
    let has_more = end < total;
    let next_cursor = has_more.then(|| encode_cursor(end));
    let ids: Vec<String> = hits.iter().map(candidate_id).collect();
    let bundle_key = format!("{}\u{0}{}\u{0}{}", request.query, used, ids.join(","));
    let bundle_id = format!("b_{}", &blake3::hash(bundle_key.as_bytes()).to_hex()[..12]);

    let mut reason_codes: Vec<&'static str> = Vec::new();
    let mut next_calls: Vec<NextCall> = Vec::new();
    if total == 0 {
        reason_codes.push("NO_MATCH");
        next_calls.push(in_session(broaden(request, used), request));
    } else {
        for hit in &hits[start..end] {
            let call = in_session(read_call(hit, request), request);
            if !next_calls.contains(&call) {
                next_calls.push(call);
            }
            if next_calls.len() == 3 {
                break;
            }
        }
    }
    if !request.clamped.is_empty() {
        reason_codes.push("BUDGET_SOFT_LIMIT");
    }

    // The text face.
    let total_text = if lower_bound { format!("{total}+") } else { total.to_string() };
    let mut face = format!("search {:?} · {used}", request.query);
    if inferred {
        face.push_str(if fell_back { " (auto: no symbol matched, fell back to text)" } else { " (auto)" });
    }
    if total == 0 {
        face.push_str(" · no results\n");
    } else {
        face.push_str(&format!(" · showing {}–{end} of {total_text}\n", start + 1));
    }
    if index_state == IndexState::Building {
        face.push_str("(index still building: results may be incomplete)\n");
    }
    if not_searched > 0 {
        face.push_str(&format!(
            "({not_searched} file(s) over the {}-byte read limit were not searched; raise max_file_bytes)\n",
            engine.config().max_file_bytes
        ));
    }
    let page = &hits[start..end];
    let mut results_json = Vec::new();
    match request.output.as_str() {
        "count" => {
            let files: std::collections::BTreeSet<&RepoPath> = hits.iter().map(|hit| &hit.path).collect();
            face.push_str(&format!("{total_text} matches in {} files\n", files.len()));
        }
        "files" => {
            let mut counts: BTreeMap<&RepoPath, usize> = BTreeMap::new();
            for hit in &hits {
                *counts.entry(&hit.path).or_default() += 1;
            }
            for (path, count) in counts.iter().skip(start).take(request.max_results) {
                face.push_str(&format!("{path} ({count})\n"));
                results_json.push(json!({"path": path.as_str(), "count": count}));
            }
        }
        _ => {
            for (offset, hit) in page.iter().enumerate() {
                let id = &ids[start + offset];
                face.push_str(&render_hit(engine, hit, request));
                face.push_str(&format!("  [{id}]\n"));
                results_json.push(hit_json(hit, id, request));
            }
        }
    }
    if has_more && let Some(cursor) = &next_cursor {
        let mut arguments = request.original.clone();
        arguments.remove("offset");
        arguments.insert("cursor".into(), Value::from(cursor.as_str()));
        let call = NextCall { tool: "search".into(), arguments };
        face.push_str(&format!("── {} more; → next page: {}\n", total - end, call.render()));
    }
    if !reason_codes.is_empty() && total > 0 {
        face.push_str(&format!("── [{}]\n", reason_codes.join(", ")));
    }
    for call in &next_calls {
        face.push_str(&format!("→ next: {}\n", call.render()));
    }

    let mut meta = Map::new();
    meta.insert("token_estimate".into(), Value::from(tokens::count(&face)));
    meta.insert("truncated".into(), Value::Bool(has_more));
    meta.insert("inferred_type".into(), Value::from(used));
    meta.insert("fell_back".into(), Value::Bool(fell_back));
    meta.insert("total".into(), Value::from(total));
    meta.insert("total_is_lower_bound".into(), Value::Bool(lower_bound));
    meta.insert("has_more".into(), Value::Bool(has_more));
    meta.insert("next_cursor".into(), next_cursor.map(Value::from).unwrap_or(Value::Null));
    meta.insert("bundle_id".into(), Value::from(bundle_id));
    meta.insert("index_state".into(), serde_json::to_value(index_state).unwrap_or_default());
    if not_searched > 0 {
        meta.insert("not_searched".into(), Value::from(not_searched));
    }
    meta.insert("reason_codes".into(), json!(reason_codes));
    meta.insert("next_calls".into(), serde_json::to_value(&next_calls).unwrap_or_default());
    meta.insert("results".into(), Value::Array(results_json));
    Response {
        ok: true,
        tool: "search",
        mode: Some(used.to_owned()),
        target: Some(request.query.clone()),
        meta,
        text: None,
        location: None,
        error: None,
        face,
        metadata: request.metadata,
    }
}

fn render_hit(engine: &Engine, hit: &Hit, request: &SearchRequest) -> String {
    match (&hit.symbol, hit.line) {
        (Some(symbol), _) => {
            let kind = serde_json::to_value(symbol.symbol.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let container = symbol.symbol.container.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
            format!(
                "{}:{}-{}  {}  ({kind}{container})",
                hit.path,
                symbol.symbol.span.start_line,
                symbol.symbol.span.end_line,
                clip(&symbol.symbol.signature, request.preview_chars)
            )
        }
        (None, Some(line)) if request.context_lines > 0 => {
            let mut out = format!("{}:{line}\n", hit.path);
            if let Ok(bytes) = engine.root().read_indexed(&hit.path, engine.config().max_index_file_bytes)
                && let Ok(decoded) = text::decode(&bytes)
            {
                let first = line.saturating_sub(request.context_lines).max(1);
                let last = (line + request.context_lines).min(decoded.total_lines());
                for number in first..=last {
                    let marker = if number == line { '│' } else { ':' };
                    out.push_str(&format!(
                        "{number:>6}{marker}{}\n",
                        clip(decoded.line(number), request.preview_chars)
                    ));
                }
            }
            out.trim_end().to_owned()
        }
        (None, Some(line)) => format!("{}:{line}│{}", hit.path, clip(hit.preview.trim_end(), request.preview_chars)),
        (None, None) => hit.path.to_string(),
    }
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((index, _)) => format!("{}…", &text[..index]),
        None => text.to_owned(),
    }
}

fn hit_json(hit: &Hit, id: &str, request: &SearchRequest) -> Value {
    let mut object = json!({
        "type": hit.kind,
        "path": hit.path.as_str(),
        "line": hit.line,
        "end_line": hit.end_line,
        "score": (hit.score * 1000.0).round() / 1000.0,
        "preview": clip(&hit.preview, request.preview_chars),
        "candidate_id": id,
    });
    if let Some(symbol) = &hit.symbol {
        object["symbol"] = json!({
            "name": symbol.symbol.name,
            "kind": symbol.symbol.kind,
            "container": symbol.symbol.container,
            "signature": symbol.symbol.signature,
        });
    }
    object
}

/// A follow-up call in the caller's session: it carries the search's `session_id`, so the
/// refs it relies on are found (§9.1).
fn in_session(mut call: NextCall, request: &SearchRequest) -> NextCall {
    if let Some(session_id) = request.original.get("session_id").filter(|value| value.is_string()) {
        call.arguments.insert("session_id".into(), session_id.clone());
    }
    call
}

/// The read that opens a hit: symbols by name and path, text hits as a window around them.
fn read_call(hit: &Hit, request: &SearchRequest) -> NextCall {
    match (&hit.symbol, hit.line) {
        (Some(symbol), _) => {
            let target = match &symbol.symbol.container {
                Some(container) => format!("{container}{}{}", separator_for(&hit.path), symbol.symbol.name),
                None => symbol.symbol.name.clone(),
            };
            NextCall::new("read", json!({"mode": "symbol", "target": target, "path": hit.path.as_str()}))
        }
        (None, Some(line)) => {
            let _ = request;
            NextCall::new(
                "read",
                json!({"mode": "snippet", "target": hit.path.as_str(), "start_line": line.saturating_sub(5).max(1), "end_line": line + 5}),
            )
        }
        (None, None) if hit.kind == "directory" => {
            NextCall::new("read", json!({"mode": "outline", "target": hit.path.as_str()}))
        }
        (None, None) => NextCall::new("read", json!({"mode": "outline", "target": hit.path.as_str()})),
    }
}

fn separator_for(path: &RepoPath) -> &'static str {
    match loupe_index::Lang::from_path(path.as_str()) {
        Some(lang) => lang.separator(),
        None => "::",
    }
}

/// A broader search to offer when nothing matched: drop the filters and word boundaries if
/// there were any, else the longest piece of the query, else look for it as a file name.
fn broaden(request: &SearchRequest, used: &str) -> NextCall {
    let mut arguments = Map::new();
    let query = request.query.trim();
    let filtered = request.whole_word
        || request.case_sensitive == Some(true)
        || request.filters.under.is_some()
        || !request.filters.globs.is_empty()
        || !request.filters.excludes.is_empty()
        || !request.filters.file_types.is_empty()
        || !request.filters.kinds.is_empty();
    let pieces: Vec<&str> = split_words(query);
    let longest = pieces.iter().copied().max_by_key(|piece| piece.len()).unwrap_or(query);
    if filtered {
        arguments.insert("query".into(), Value::from(query));
        arguments.insert("type".into(), Value::from(if used == "regex" { "regex" } else { "text" }));
    } else if used == "symbol" {
        arguments.insert("query".into(), Value::from(query));
        arguments.insert("type".into(), Value::from("text"));
    } else if pieces.len() > 1 && used != "file" && used != "directory" {
        arguments.insert("query".into(), Value::from(longest));
        arguments.insert("type".into(), Value::from("text"));
    } else {
        let stem = query.rsplit('/').next().unwrap_or(query).split('.').next().unwrap_or(query);
        let stem = if stem.is_empty() { query } else { stem };
        arguments
            .insert("query".into(), Value::from(if used == "file" || used == "directory" { longest } else { stem }));
        arguments.insert("type".into(), Value::from("file"));
    }
    NextCall { tool: "search".into(), arguments }
}

/// Words of a query: split at non-word characters, `_` and lower-to-upper case changes.
fn split_words(query: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    let mut previous_lower = false;
    for (index, character) in query.char_indices() {
        let word_char = character.is_alphanumeric();
        let boundary = !word_char || (character.is_uppercase() && previous_lower);
        if boundary && let Some(begin) = start.take() {
            words.push(&query[begin..index]);
        }
        if word_char && start.is_none() {
            start = Some(index);
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
    }
    if let Some(begin) = start {
        words.push(&query[begin..]);
    }
    words.retain(|word| word.len() >= 3);
    words
}
