//! Finding hits: symbols from the index, files and directories by name, and text or regex matches
//! verified on disk (files verified on every core but consumed in candidate order, so the
//! 2,000-match cut is deterministic).

use std::collections::BTreeMap;

use loupe_core::{RepoPath, ToolError, text};
use loupe_index::{IndexState, trigram};
use regex::RegexBuilder;
use rustc_hash::FxHashMap;

use super::parse::{compile_glob, significant_terms, stem};
use super::smart_case;
use super::{COUNTED_MATCHES, Hit, MAX_MATCHES, PARTIAL_SYMBOLS, SearchRequest, split_qualified};
use crate::work::Work;
use crate::workspace::Workspace;
use crate::workspace::oversized::{Check, Spans};

pub(super) fn symbol_hits(workspace: &Workspace, request: &SearchRequest, work: &Work) -> (Vec<Hit>, bool) {
    let Some(index) = workspace.index_for_query() else { return (Vec::new(), false) };
    let query = request.query.trim();
    let (container, name) = split_qualified(query);
    let name_lower = name.to_lowercase();
    let case_sensitive = smart_case(request);
    // Exact names come from the name map at once; partial ones from a scan of the names,
    // capped so a two-letter query on a kernel-sized index stays fast (the total then says
    // it is a lower bound). While the first build runs, the files are scanned instead.
    let (candidates, cut) = if index.state() == IndexState::Ready {
        let mut candidates = index.symbols_named(name);
        let (partial, cut) = index.symbols_containing(&name_lower, PARTIAL_SYMBOLS);
        candidates.extend(partial);
        (candidates, cut)
    } else {
        (scanned_symbols(workspace, request, &name_lower, work), false)
    };
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
        score -= vendored_penalty(&hit.path);
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

/// How much lower a hit under a vendored tree ranks: as much as a source file ranks above prose,
/// so the project's own code comes first among equals, whether or not the copy is git-ignored.
const VENDORED_PENALTY: f64 = 0.04;

/// Directory names that hold other projects' code checked into (or installed beside) this one.
const VENDORED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    "third_party",
    "third-party",
    "dist",
    ".venv",
    "venv",
    "site-packages",
];

/// `VENDORED_PENALTY` for a path under a vendored directory, else 0 (`dist/` and
/// `node_modules/` that were not git-ignored ranked above the project's own code).
fn vendored_penalty(path: &RepoPath) -> f64 {
    let dirs = path.as_str().rsplit_once('/').map_or("", |(dirs, _)| dirs);
    let vendored = dirs.split('/').any(|dir| VENDORED_DIRS.contains(&dir));
    if vendored { VENDORED_PENALTY } else { 0.0 }
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

/// The definitions whose name holds `name_lower`, from a direct scan while the first index
/// build runs (§7: a search never answers "nothing" from half an index): every source file in
/// scope whose text holds the name, parsed now.
fn scanned_symbols(
    workspace: &Workspace,
    request: &SearchRequest,
    name_lower: &str,
    work: &Work,
) -> Vec<loupe_index::SymbolHit> {
    let Ok(finder) = regex::bytes::RegexBuilder::new(&regex::escape(name_lower)).case_insensitive(true).build() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    // The source files likeliest to define it first, read until the scan's budget (§7).
    let (files, _) = workspace.files_to_scan(&request.query, work);
    for path in files {
        if work.stopped().is_some() {
            break;
        }
        let Some(lang) = loupe_index::Lang::from_path(path.as_str()) else { continue };
        if !request.filters.admits(&path) {
            continue;
        }
        let Ok(bytes) = workspace.root().read_indexed(&path, workspace.config().max_index_file_bytes) else {
            continue;
        };
        if !finder.is_match(&bytes) {
            continue;
        }
        let Ok(decoded) = text::decode(&bytes) else { continue };
        let file_hash = loupe_core::ContentHash::of(&bytes);
        for definition in loupe_syntax::parse(lang, &decoded.text).definitions {
            if definition.name.to_lowercase().contains(name_lower) {
                found.push(loupe_index::SymbolHit {
                    path: path.clone(),
                    file_hash: file_hash.clone(),
                    symbol: definition.into(),
                });
            }
        }
    }
    found
}

pub(super) fn file_hits(workspace: &Workspace, request: &SearchRequest, directories: bool) -> (Vec<Hit>, bool) {
    let files: Vec<RepoPath> = match workspace.index_for_query().filter(|index| index.state() == IndexState::Ready) {
        Some(index) => index.files().into_iter().map(|record| record.path).collect(),
        None => workspace.files_now().into_iter().map(|entry| entry.path).collect(),
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
        // Shallower paths first among equals, the project's own before vendored copies.
        let depth_penalty = (path.components().count() as f64 * 0.005).min(0.05) + vendored_penalty(&path);
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

/// A `terms` search (§6, `auto` on a question): every line holding a stem of one of the query's
/// significant terms, ranked by how many of the terms its file holds (its path included), then
/// how many its own line holds; a line holding the query as typed ranks above its file's others.
pub(super) fn terms_hits(
    workspace: &Workspace,
    request: &SearchRequest,
    work: &Work,
) -> Result<(Vec<Hit>, bool, usize), ToolError> {
    let stems: Vec<String> = significant_terms(&request.query).iter().map(|term| stem(term).to_owned()).collect();
    let mut derived = request.clone();
    // A term starts a word, or a part of an identifier (`parse_config`, `parseConfig`); its stem
    // may end inside one (`configur` finds `configuration`). `os` is not found in `verbose`.
    let escaped: Vec<String> = stems.iter().map(|stem| regex::escape(stem)).collect();
    let humps: Vec<String> = stems
        .iter()
        .filter_map(|stem| {
            let mut chars = stem.chars();
            let first = chars.next()?;
            Some(format!(r"(?-i:[\p{{Ll}}\p{{N}}]{})(?i:{})", first.to_uppercase(), regex::escape(chars.as_str())))
        })
        .collect();
    derived.query = format!(r"(?:\b|_)(?:{})|{}", escaped.join("|"), humps.join("|"));
    derived.case_sensitive = Some(false);
    derived.whole_word = false;
    // Every match counts towards a term's file, so the page cannot settle early.
    let (mut hits, lower_bound, not_searched) = text_hits(workspace, &derived, true, None, work)?;
    let held = |text: &str| -> Vec<bool> { stems.iter().map(|stem| starts_a_word(text, stem)).collect() };
    let mut per_file: BTreeMap<RepoPath, Vec<bool>> = BTreeMap::new();
    for hit in &hits {
        let found = held(&hit.preview);
        let file = per_file.entry(hit.path.clone()).or_insert_with(|| held(hit.path.as_str()));
        for (slot, found) in file.iter_mut().zip(found) {
            *slot |= found;
        }
    }
    let total = stems.len().max(1) as f64;
    let phrase = request.query.trim().trim_end_matches(['?', '.', '!']).to_lowercase();
    for hit in &mut hits {
        let line = hit.preview.to_lowercase();
        let in_line = held(&hit.preview).into_iter().filter(|found| *found).count() as f64;
        let in_file = per_file.get(&hit.path).map_or(0, |file| file.iter().filter(|found| **found).count()) as f64;
        let source_bonus = if loupe_index::Lang::from_path(hit.path.as_str()).is_some() { 0.02 } else { 0.0 };
        let phrase_bonus = if line.contains(&phrase) { 0.05 } else { 0.0 };
        hit.score = (0.15 + 0.5 * in_file / total + 0.28 * in_line / total + source_bonus + phrase_bonus).min(1.0);
    }
    Ok((hits, lower_bound, not_searched))
}

/// Whether `stem` (lower case) occurs in `text` at the start of a word or of a part of an
/// identifier: after a non-alphanumeric character (`_` included) or at a lower-to-upper hump.
fn starts_a_word(text: &str, stem: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices(stem).any(|(at, _)| match text[..at].chars().next_back() {
        None => true,
        Some(before) if !before.is_alphanumeric() => true,
        Some(before) => (before.is_lowercase() || before.is_numeric()) && text[at..].starts_with(char::is_uppercase),
    })
}

/// Text hits, whether the 2,000-match cut made the total a lower bound, and how many files in
/// scope were too large to read (over `max_file_bytes`) and so not searched.
/// `page_end`: where the page to show ends in the ranked hits, when only that page matters;
/// verification may then stop once it is settled (`Settled`).
pub(super) fn text_hits(
    workspace: &Workspace,
    request: &SearchRequest,
    is_regex: bool,
    page_end: Option<usize>,
    work: &Work,
) -> Result<(Vec<Hit>, bool, usize), ToolError> {
    let case_sensitive = smart_case(request);
    let pattern = if is_regex { request.query.clone() } else { regex::escape(&request.query) };
    let pattern = if request.whole_word { format!(r"\b(?:{pattern})\b") } else { pattern };
    // Matches are per line. One pass over the whole file with anchors at line terminators
    // finds where they can start, far faster than a call per line; only lines where such a
    // match starts are then matched alone. The scanner is the pattern made unable to match a
    // line terminator (`trigram::line_pattern`): on a single line it means what the pattern
    // means, so one regex serves both, and no match can run past a line's end, so the pass is
    // linear in the file whatever the pattern (`(?s).*=` was quadratic: one search to the
    // file's end from every line start).
    let invalid = |error: loupe_index::IndexError| {
        ToolError::invalid_args(format!("invalid regex: {error}"), "fix the pattern, or use type='text'")
    };
    let line_pattern = trigram::line_pattern(&pattern, !case_sensitive).map_err(invalid)?;
    let scanner =
        RegexBuilder::new(&line_pattern).multi_line(true).crlf(true).build().map_err(|error| match is_regex {
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
    let ready = workspace.index_for_query().filter(|index| index.state() == IndexState::Ready);
    // A direct scan while a server's first build runs: the files likeliest to hold the query
    // first, on one core beside the build, until the scan's budget (§7). A command's direct
    // scan (no build running) reads everything, on every core, in path order.
    let bounded = ready.is_none() && workspace.building_in_background();
    let (mut candidates, oversized): (Vec<RepoPath>, Vec<loupe_vfs::WalkEntry>) = match ready {
        Some(index) => (index.text_candidates(&plan), index.oversized()),
        None => workspace.files_to_scan(&request.query, work),
    };
    // Files over the index's size limit are not in it: they are scanned here, up to the read
    // limit; what is over that too is counted and named in the answer, never silently missed.
    let read_limit = workspace.config().max_file_bytes;
    let (scanned, too_large): (Vec<_>, Vec<_>) = oversized
        .into_iter()
        .filter(|entry| request.filters.admits(&entry.path))
        .partition(|entry| entry.size <= read_limit);
    // Each is skipped when its trigram filter rules the query out (`oversized.rs`); one
    // without a current filter is scanned, and summarised in the background for the next.
    // The parts of files a filter narrowed the search to: only those are read.
    let mut in_spans: FxHashMap<RepoPath, Spans> = FxHashMap::default();
    if !scanned.is_empty() {
        let (mut whole, mut span_bytes) = (0, 0);
        if let Some(index) = ready {
            workspace.oversized.load_kept(index, read_limit);
        }
        let (mut skipped, mut kept, mut unknown) = (0, 0, 0);
        for entry in scanned {
            let stamp = workspace.root().stamp_indexed(&entry.path);
            let literal = (!is_regex).then_some(request.query.as_str());
            match workspace.oversized.check(&entry.path, stamp, &plan, literal) {
                Check::Skip => {
                    skipped += 1;
                    continue;
                }
                Check::Scan(Some(spans)) => {
                    span_bytes += spans.spans.iter().map(|span| span.end - span.start).sum::<u64>();
                    in_spans.insert(entry.path.clone(), spans);
                }
                Check::Scan(None) => whole += 1,
                Check::ScanAndLearn => unknown += 1,
            }
            kept += 1;
            candidates.push(entry.path);
        }
        if unknown > 0
            && let Some(index) = ready
        {
            workspace.oversized.learn_in_background(workspace.root(), index, read_limit);
        }
        tracing::debug!(
            skipped,
            scanned = kept,
            whole,
            span_bytes,
            unknown,
            indexed = candidates.len() - kept,
            "candidates"
        );
        // In path order, as ranked ties are; a scan while the index builds keeps its order
        // (likeliest first: the files over the limit, never in the build's walk, come last).
        if !bounded {
            candidates.sort();
            candidates.dedup();
        }
    }
    // Lines that define a symbol named like the query rank as definitions, and files whose
    // path holds the query rank higher too: both are verified first, so a search cut short
    // still shows them, and every file after them is scored by its lines alone.
    let mut definition_lines: BTreeMap<RepoPath, Vec<usize>> = BTreeMap::new();
    if let Some(index) = ready {
        for hit in index.symbols_named(request.query.trim()) {
            definition_lines.entry(hit.path).or_default().push(hit.symbol.name_line);
        }
    }
    let query_lower = request.query.to_lowercase();
    candidates.retain(|path| request.filters.admits(path));
    // Candidates come in path order; a partition keeps that order within each group.
    let (first, rest): (Vec<RepoPath>, Vec<RepoPath>) =
        candidates.into_iter().partition(|path| definition_lines.contains_key(path) || path_holds(path, &query_lower));
    let (defining, named): (Vec<RepoPath>, Vec<RepoPath>) =
        first.into_iter().partition(|path| definition_lines.contains_key(path));
    let tiers = [defining.len(), named.len(), rest.len()];
    // `Settled` relies on the rest being in path order, as ties are ranked; a scan while the
    // index builds keeps its likeliest-first order and is cut by its budget instead.
    let mut rest = rest;
    if !bounded && !rest.is_sorted() {
        rest.sort();
    }
    let candidates: Vec<RepoPath> = defining.into_iter().chain(named).chain(rest).collect();
    // A match ranks higher when it holds the query's text as typed; no match of a regex whose
    // matches are all shorter than its text can (`spin_lock_irq(save|restore)`), so the best a
    // tier can reach is lower, and the page settles sooner.
    let exact_case_possible =
        !is_regex || trigram::max_match_len(&pattern, !case_sensitive).is_none_or(|max| max >= request.query.len());
    let mut settled = page_end.filter(|_| !bounded).map(|page_end| Settled::new(page_end, tiers, exact_case_possible));
    let verifier = Verifier {
        workspace,
        index: ready.map(|index| &**index),
        request,
        scanner: &scanner,
        query_lower: &query_lower,
        in_spans: &in_spans,
    };
    let verify = |buffer: &mut Vec<u8>, path: &RepoPath| {
        verifier.file(path, definition_lines.get(path).map(Vec::as_slice).unwrap_or(&[]), buffer)
    };
    // Files are verified on every core but taken in candidate order, so the cut at
    // MAX_MATCHES falls where a single thread would put it.
    let mut hits = Vec::new();
    let mut lower_bound = false;
    let threads = if bounded { 1 } else { loupe_core::parallel::cores() };
    let total = candidates.len() as u64;
    loupe_core::parallel::map_in_order(
        &candidates,
        threads,
        || READ_BUFFERS.lend(Vec::new),
        |buffer, path| verify(buffer, path),
        |index, file_hits| {
            // A cancelled search (or one at its time budget) stops here; what it found is a lower
            // bound of the total.
            if work.stopped().is_some() {
                lower_bound = true;
                return false;
            }
            // A regex over a large tree reads many files: each is a step a client hears of.
            let verified = index as u64 + 1;
            work.report(verified, Some(total), || format!("search: {verified} of {total} files verified"));
            for hit in file_hits {
                if hits.len() >= MAX_MATCHES {
                    lower_bound = true;
                    return false;
                }
                if let Some(settled) = &mut settled {
                    settled.count(&hit);
                }
                hits.push(hit);
            }
            if let Some(settled) = &settled
                && let Some(next) = candidates.get(index + 1)
                && settled.is_settled(index + 1, next, hits.len())
            {
                lower_bound = true;
                return false;
            }
            true
        },
    );
    Ok((hits, lower_bound, too_large.len()))
}

/// The verifiers' read buffers, kept between searches rather than made for each from fresh
/// pages (`perf` of a Linux search loop put page faults at a tenth of its CPU, 2026-11-26; an
/// A/B through MCP then showed no difference beyond the machine's noise). One grown past 4 MiB,
/// for a rare large file, is not kept.
static READ_BUFFERS: loupe_core::parallel::Spare<Vec<u8>> =
    loupe_core::parallel::Spare::new(|buffer| buffer.capacity() <= 4 << 20);

/// What verifying one candidate file needs.
struct Verifier<'a> {
    workspace: &'a Workspace,
    /// The ready index, whose recorded hashes stand for files unchanged since they were indexed.
    index: Option<&'a loupe_index::Index>,
    request: &'a SearchRequest,
    scanner: &'a regex::Regex,
    query_lower: &'a str,
    /// Files over the index's size limit of which only these parts can hold a match.
    in_spans: &'a FxHashMap<RepoPath, Spans>,
}

impl Verifier<'_> {
    /// The matches in `path` as it is on disk now, scored; `bytes`: the worker's read buffer.
    fn file(&self, path: &RepoPath, definition_lines: &[usize], bytes: &mut Vec<u8>) -> Vec<Hit> {
        if let Some(spans) = self.in_spans.get(path)
            && let Some(hits) = self.spans(path, spans, definition_lines, bytes)
        {
            return hits;
        }
        // The read limit, not the index's: files over the index's limit are scanned here too.
        let Ok(stamp) = self.workspace.root().read_indexed_stamped(path, self.workspace.config().max_file_bytes, bytes)
        else {
            return Vec::new();
        };
        let bytes: &[u8] = bytes;
        let decoded;
        let lines: Vec<(usize, &str)> = match text::plain_text(bytes) {
            Some(raw) => plain_lines_to_check(self.scanner, raw),
            None => {
                let Ok(text) = text::decode(bytes) else { return Vec::new() };
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
        // The hash the index recorded when the file is as it was indexed (same size and
        // mtime, as the descriptor read showed them), else the hash of what was read.
        let file_hash = stamp
            .zip(self.index)
            .and_then(|((size, mtime_ns), index)| index.file_hash_if_unchanged(path, size, mtime_ns))
            .unwrap_or_else(|| loupe_core::ContentHash::of(bytes))
            .to_string();
        self.scored(path, lines, definition_lines, &file_hash)
    }

    /// The matches in the `spans` of `path`, read alone (`None` when the file is no longer as
    /// they were made from, or a span's bytes are not plain text: the caller reads it whole).
    fn spans(
        &self,
        path: &RepoPath,
        spans: &Spans,
        definition_lines: &[usize],
        bytes: &mut Vec<u8>,
    ) -> Option<Vec<Hit>> {
        let mut hits = Vec::new();
        let file_hash = spans.hash.to_string();
        for span in &spans.spans {
            let stamp = self.workspace.root().read_indexed_range(path, span.start..span.end, bytes)?;
            if stamp != spans.stamp {
                return None;
            }
            let text = text::plain_text(bytes)?;
            let lines = plain_lines_to_check(self.scanner, text)
                .into_iter()
                .map(|(number, line)| (number + span.first_line - 1, line))
                .collect();
            hits.extend(self.scored(path, lines, definition_lines, &file_hash));
            if hits.len() >= MAX_MATCHES {
                hits.truncate(MAX_MATCHES);
                break;
            }
        }
        self.workspace.oversized.read_spans(spans.spans.len());
        Some(hits)
    }

    /// `lines` of `path` (number, content) where a match may start, as scored hits.
    fn scored(
        &self,
        path: &RepoPath,
        lines: Vec<(usize, &str)>,
        definition_lines: &[usize],
        file_hash: &str,
    ) -> Vec<Hit> {
        let in_path = path_holds(path, self.query_lower);
        // Code above prose: a match in a source file loupe parses ranks above the same match in
        // a changelog or a document (ties then go by path).
        let source = loupe_index::Lang::from_path(path.as_str()).is_some();
        let vendored = vendored_penalty(path) > 0.0;
        let mut hits = Vec::new();
        for (number, line) in lines {
            let Some(found) = self.scanner.find(line) else { continue };
            let score = LineScore {
                in_path,
                source,
                vendored,
                whole_word: is_word_boundary(line, found.start(), found.end()),
                exact_case: line[found.range()].contains(&self.request.query),
                definition: definition_lines.contains(&number),
            };
            hits.push(Hit {
                kind: "text",
                path: path.clone(),
                line: Some(number),
                end_line: Some(number),
                score: score.value(),
                preview: line.to_owned(),
                symbol: None,
                file_hash: file_hash.to_owned(),
            });
            if hits.len() >= MAX_MATCHES {
                break;
            }
        }
        hits
    }
}

/// Whether a file's path holds the query (ASCII case aside), which ranks its matches higher.
fn path_holds(path: &RepoPath, query_lower: &str) -> bool {
    path.as_str().to_lowercase().contains(query_lower)
}

/// What a text match's score is made of.
#[derive(Clone, Copy)]
struct LineScore {
    in_path: bool,
    source: bool,
    /// Under a directory that holds other projects' code (`vendored_penalty`).
    vendored: bool,
    whole_word: bool,
    exact_case: bool,
    definition: bool,
}

impl LineScore {
    fn value(self) -> f64 {
        let mut score: f64 = 0.5;
        for (holds, weight) in [
            (self.in_path, 0.1),
            (self.source, 0.04),
            (self.whole_word, 0.15),
            (self.exact_case, 0.05),
            (self.definition, 0.25),
        ] {
            if holds {
                score += weight;
            }
        }
        if self.vendored {
            score -= VENDORED_PENALTY;
        }
        score.min(1.0)
    }

    /// The best score a match can have in each tier of candidates: a file that defines the
    /// query, one whose path holds it, any other (`exact_case`: whether a match can hold the
    /// query's text as typed).
    fn tier_bests(exact_case: bool) -> [f64; 3] {
        let best = |in_path, definition| {
            LineScore { in_path, source: true, vendored: false, whole_word: true, exact_case, definition }.value()
        };
        [best(true, true), best(true, false), best(false, false)]
    }
}

/// When verification can stop without changing the page shown. Candidates come in three tiers,
/// each in path order: files that define the query, files whose path holds it, the rest; no
/// match in a tier can score above its best (`LineScore::tier_bests`, strictly falling from tier
/// to tier). With the next file to verify in tier `t` at path `p`, no unverified file can score
/// above `t`'s best `b`, and one scoring `b` lies at `p` or after it. So a hit above `b`, or at
/// `b` before `p`, can never be passed (ties go by path). Once `page_end` hits are beyond reach
/// and `COUNTED_MATCHES` are counted, the hits ranked first are exactly those a full
/// verification would rank first.
struct Settled {
    page_end: usize,
    /// Where each tier ends in the candidates.
    tier_ends: [usize; 3],
    bests: [f64; 3],
    /// Per tier: hits scored above its best.
    above: [usize; 3],
    /// Per tier: the paths of hits scored exactly its best.
    tied: [Vec<RepoPath>; 3],
}

impl Settled {
    fn new(page_end: usize, tiers: [usize; 3], exact_case_possible: bool) -> Settled {
        let tier_ends = [tiers[0], tiers[0] + tiers[1], tiers[0] + tiers[1] + tiers[2]];
        let bests = LineScore::tier_bests(exact_case_possible);
        Settled { page_end, tier_ends, bests, above: [0; 3], tied: Default::default() }
    }

    fn count(&mut self, hit: &Hit) {
        for ((best, above), tied) in self.bests.iter().zip(&mut self.above).zip(&mut self.tied) {
            if hit.score > *best {
                *above += 1;
            } else if hit.score == *best {
                tied.push(hit.path.clone());
            }
        }
    }

    /// Whether the page is settled when candidate `next` (at `path`) is the next to verify and
    /// `found` matches are counted.
    fn is_settled(&self, next: usize, path: &RepoPath, found: usize) -> bool {
        if found < COUNTED_MATCHES {
            return false;
        }
        let tier = self.tier_ends.iter().position(|&end| next < end).unwrap_or(2);
        let above = self.above[tier];
        let needed = self.page_end.saturating_sub(above);
        needed == 0 || self.tied[tier].iter().filter(|tied| *tied < path).take(needed).count() == needed
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

#[cfg(test)]
mod tests {
    use super::{COUNTED_MATCHES, Hit, text_hits};
    use crate::work::Work;
    use serde_json::json;

    /// A search that stops once its page is settled shows exactly the page a search that
    /// verified every file shows: the same hits, in the same order, only the total cut short.
    /// The tree has more matches than `COUNTED_MATCHES`, a file that defines the query and files
    /// whose path holds it (late in path order; in the second tree enough of them to settle
    /// the page before the rest is reached), and lines of every score, so that ties at each
    /// tier's best score decide the page.
    #[test]
    fn a_settled_page_is_the_page_of_a_full_verification() {
        for many_named in [false, true] {
            settled_page_matches_full_verification(many_named);
        }
    }

    fn settled_page_matches_full_verification(many_named: bool) {
        let root = tempfile::tempdir().unwrap();
        let index = tempfile::tempdir().unwrap();
        let write = |path: &str, body: &str| {
            let full = root.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, body).unwrap();
        };
        let line = |file: usize, n: usize| match (file + n) % 5 {
            0 => format!("x = token; // {n}"),
            1 => format!("x = tokens; // {n}"),
            2 => format!("x = TOKEN; // {n}"),
            3 => format!("token of {n}"),
            _ => format!("retokenize {n}"),
        };
        for file in 0..40 {
            let body: Vec<String> = (0..16).map(|n| line(file, n)).collect();
            let path = if file % 3 == 0 { format!("notes/n{file:02}.txt") } else { format!("src/f{file:02}.c") };
            write(&path, &(body.join("\n") + "\n"));
        }
        write("zz/token_table.txt", "token\nthe token list\n");
        if many_named {
            for file in 0..24 {
                let body: Vec<String> = (0..30).map(|n| line(file, n)).collect();
                let path =
                    if file % 4 == 0 { format!("tokens/t{file:02}.txt") } else { format!("tokens/t{file:02}.c") };
                write(&path, &(body.join("\n") + "\n"));
            }
        }
        // Its other lines tie with the best lines of the rest, at a path after all of them.
        let uses: String = (0..40).map(|n| format!("y = token + {n};\n")).collect();
        write("zz/defs.c", &format!("int token(void) {{ return 0; }}\n{uses}"));
        let workspace = crate::workspace::Workspace::open(loupe_core::Config {
            root: Some(root.path().to_path_buf()),
            index_dir: Some(index.path().to_path_buf()),
            analytics: false,
            ..loupe_core::Config::default()
        })
        .unwrap();
        workspace.refresh_index(&|_, _| {});
        let ranked_by = |query: &str, is_regex: bool, page_end: Option<usize>| {
            let kind = if is_regex { "regex" } else { "text" };
            let request = super::super::parse(json!({"query": query, "type": kind})).unwrap();
            let (mut hits, lower_bound, _) =
                text_hits(&workspace, &request, is_regex, page_end, &Work::default()).unwrap();
            hits.sort_by(|left, right| {
                right.score.total_cmp(&left.score).then_with(|| (&left.path, left.line).cmp(&(&right.path, right.line)))
            });
            (hits, lower_bound)
        };
        let ranked = |page_end: Option<usize>| ranked_by("token", false, page_end);
        let key = |hit: &Hit| (hit.path.as_str().to_owned(), hit.line, hit.score);
        let (full, full_cut) = ranked(None);
        assert!(!full_cut && full.len() > COUNTED_MATCHES + 50, "the fixture must outgrow the count: {}", full.len());
        assert!(full[0].path.as_str() == "zz/defs.c", "the definition ranks first");
        for page_end in [20, 100, 160] {
            let (early, cut) = ranked(Some(page_end));
            assert!(cut && early.len() < full.len(), "page {page_end}: verification stopped early ({})", early.len());
            assert!(early.len() >= COUNTED_MATCHES);
            let shown: Vec<_> = early[..page_end].iter().map(key).collect();
            let expected: Vec<_> = full[..page_end].iter().map(key).collect();
            assert_eq!(shown, expected, "page ending at {page_end}, many named: {many_named}");
            if many_named {
                assert!(early.iter().all(|hit| !hit.path.as_str().starts_with("src/")), "settled before the rest");
            }
        }
        // A regex whose matches are all shorter than its text: no match holds the query as
        // typed, so the tiers' bests are lower and its page settles too.
        let (full, _) = ranked_by("tok(en|ens)", true, None);
        let (early, cut) = ranked_by("tok(en|ens)", true, Some(20));
        assert!(cut && early.len() < full.len(), "the regex's verification stopped early ({})", early.len());
        let shown: Vec<_> = early[..20].iter().map(key).collect();
        let expected: Vec<_> = full[..20].iter().map(key).collect();
        assert_eq!(shown, expected, "regex page, many named: {many_named}");
    }
}
