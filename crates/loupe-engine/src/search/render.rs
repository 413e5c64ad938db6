//! Ranking, paging and rendering: candidate ids, cursors, both faces, the read calls that follow a
//! hit, and the broader search offered when nothing matched.

use std::collections::BTreeMap;

use loupe_core::{NextCall, RepoPath, text};
use loupe_index::IndexState;
use serde_json::{Map, Value, json};

use super::{Found, Hit, LINE_PAGE_CHARS, Output, SearchKind, SearchRequest};
use crate::reasons::{ReasonCode, joined};
use crate::response::{Face, HitRef, Outcome, RowShape};
use crate::workspace::Workspace;

/// Hex digits of a bundle id.
const ID_HEX: usize = 8;

/// Letters of a candidate id: 26^7, about 2^33 ids, unique enough among the hits of a session's
/// last 20 searches (an id is only ever looked up there). Lower-case letters cost o200k about 2.4
/// tokens for 7 of them, where `c_` and 8 hex digits cost 4.6: an id is on every hit line.
const ID_LETTERS: usize = 7;

/// A stable id for a hit: path, line span, kind and file hash, never the rank.
fn candidate_id(hit: &Hit) -> String {
    let key = format!("{}\u{0}{:?}\u{0}{:?}\u{0}{}\u{0}{}", hit.path, hit.line, hit.end_line, hit.kind, hit.file_hash);
    let hash = blake3::hash(key.as_bytes());
    let mut value = hash.as_bytes()[..8].iter().fold(0u64, |value, byte| value << 8 | u64::from(*byte));
    (0..ID_LETTERS)
        .map(|_| {
            let letter = char::from(b'a' + (value % 26) as u8);
            value /= 26;
            letter
        })
        .collect()
}

fn encode_cursor(offset: usize) -> String {
    format!("s{offset}")
}

pub(super) fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.trim().strip_prefix('s')?.parse().ok()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn render(
    workspace: &Workspace,
    request: &SearchRequest,
    used: SearchKind,
    inferred: bool,
    fell_back: bool,
    index_state: IndexState,
    found: Found,
) -> Outcome {
    let Found { hits, lower_bound, not_searched, unwalkable, terms, stopped } = found;
    let total = hits.len();
    // What a page lists: hits, or (`output: files`) each file by its first hit, with its count.
    let listed: Vec<(usize, Option<usize>)> = match request.output {
        Output::Matches => (0..total).map(|index| (index, None)).collect(),
        Output::Files => {
            let mut files: BTreeMap<&RepoPath, (usize, usize)> = BTreeMap::new();
            for (index, hit) in hits.iter().enumerate() {
                files.entry(&hit.path).or_insert((index, 0)).1 += 1;
            }
            files.into_values().map(|(first, count)| (first, Some(count))).collect()
        }
        Output::Count => Vec::new(),
    };
    let start = request.offset.min(listed.len());
    // A symbol search whose query is a definition's exact name lists those definitions; the
    // names that only contain it (more than a few) follow on the next page (§6).
    let exact = (used == SearchKind::Symbol && request.output == Output::Matches && start == 0)
        .then(|| exact_names(&hits, &request.query))
        .filter(|&exact| exact > 0 && listed.len() > exact + FEW_PARTIAL && !request.page_asked);
    // Line hits listed one per row (no context, no page size asked) page by what they show:
    // up to `LINE_PAGE` hits within `LINE_PAGE_CHARS` characters of their lines.
    let line_page = request.line_page().filter(|_| hits.iter().all(|hit| hit.symbol.is_none() && hit.line.is_some()));
    let page = match (exact, line_page) {
        (Some(exact), _) => exact.min(request.max_results),
        (None, Some(line_page)) => {
            let mut chars = 0;
            let fits = listed[start..].iter().take(line_page).take_while(|(index, _)| {
                chars += hits[*index].preview.trim().chars().count().min(request.preview_chars) + 1;
                chars <= LINE_PAGE_CHARS
            });
            fits.count().max(1)
        }
        (None, None) => request.max_results,
    };
    let end = (start + page).min(listed.len());
    // A page of line hits lists each file's hits together, files in the order of their best
    // hit, each file's in line order: the path once, its lines under it (§6).
    let mut shown_page = listed[start..end].to_vec();
    if request.output == Output::Matches && shown_page.iter().all(|(index, _)| hits[*index].symbol.is_none()) {
        let mut first_seen: Vec<&RepoPath> = Vec::new();
        for (index, _) in &shown_page {
            if !first_seen.contains(&&hits[*index].path) {
                first_seen.push(&hits[*index].path);
            }
        }
        shown_page.sort_by_key(|(index, _)| {
            (first_seen.iter().position(|path| **path == hits[*index].path), hits[*index].line)
        });
    }
    let has_more = end < listed.len();
    let next_cursor = has_more.then(|| encode_cursor(end));
    let ids: Vec<String> = hits.iter().map(candidate_id).collect();
    let bundle_key = format!("{}\u{0}{}\u{0}{}", request.query, used, ids.join(","));
    let bundle_id = format!("b_{}", &blake3::hash(bundle_key.as_bytes()).to_hex()[..ID_HEX]);

    let mut reason_codes: Vec<ReasonCode> = Vec::new();
    let mut next_calls: Vec<NextCall> = Vec::new();
    if total == 0 && stopped.is_some() {
        // Not "nothing": the search stopped before it looked everywhere. The same search again.
        next_calls.push(in_session(NextCall::new("search", Value::Object(request.original().clone())), request));
    } else if total == 0 {
        reason_codes.push(ReasonCode::NoMatch);
        next_calls.push(in_session(broaden(request, used), request));
    } else if let Some((first, _)) = listed
        .get(start)
        .filter(|(first, _)| end > start && request.output == Output::Matches && hits[*first].symbol.is_some())
    {
        // The top definition's read, by candidate id (the session keeps the read the id stands
        // for). Only a symbol hit offers one: a text hit already shows its line and the function
        // it is in (which reads by name), and a file list is paths (an outline reads by path,
        // §9.7); a next call there would be a guess that costs every answer its tokens.
        next_calls.push(in_session(NextCall::new("read", json!({"candidate_id": ids[*first]})), request));
    }
    if !request.clamped.is_empty() {
        reason_codes.push(ReasonCode::BudgetSoftLimit);
    }

    // The text face. Its first line says how much of the answer the page shows, and what
    // `auto` searched; the query is the caller's own words and is named only when nothing
    // matched (§6).
    let total_text = if lower_bound { format!("{total}+") } else { total.to_string() };
    let mut searched = String::new();
    if inferred && used == SearchKind::Terms {
        // A question is not searched as one literal: the face says what was searched instead.
        searched = format!(
            "{used} (auto: {}searched the terms {}; ranked by terms matched)",
            if fell_back { "no exact phrase; " } else { "" },
            terms.join(", ")
        );
    } else if inferred {
        searched =
            format!("{used}{}", if fell_back { " (auto: no symbol matched, fell back to text)" } else { " (auto)" });
    }
    let complete = start == 0 && end == listed.len() && !lower_bound;
    let plural = |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
    let shown = match request.output {
        _ if total == 0 => None,
        // A whole list of files is its paths, as `rg --files` prints them: the count says
        // nothing the lines do not.
        Output::Matches if complete && matches!(used, SearchKind::File | SearchKind::Directory) => None,
        Output::Matches if complete => Some(plural(total, "hit")),
        Output::Matches => Some(format!("hits {}–{end} of {total_text}", start + 1)),
        Output::Files if complete => Some(format!("{}, {total_text} matches", plural(listed.len(), "file"))),
        Output::Files => Some(format!("files {}–{end} of {}, {total_text} matches", start + 1, listed.len())),
        Output::Count => None,
    };
    let mut face = match shown {
        _ if total == 0 => {
            let searched = if searched.is_empty() { used.to_string() } else { searched };
            let nothing = if stopped.is_some() { "no results in the files searched" } else { "no results" };
            format!("search {:?} · {searched} · {nothing}\n", request.query)
        }
        Some(shown) if searched.is_empty() => format!("{shown}\n"),
        Some(shown) => format!("{shown} · {searched}\n"),
        None if searched.is_empty() => String::new(),
        None => format!("{searched}\n"),
    };
    if let Some(stopped @ crate::work::Stopped::Building(_)) = stopped {
        // A scan while the first build runs, cut at its budget: what it read, and when the same
        // search sees every file.
        let built = workspace
            .index()
            .map(|index| index.status())
            .map_or(String::new(), |status| format!(", {} of {} files", status.files_done, status.files_total));
        face.push_str(&format!(
            "(index still building{built}: {}; the same search once it is ready sees every file)\n",
            stopped.words()
        ));
    } else {
        if index_state == IndexState::Building {
            face.push_str("(index still building: answered by a direct scan of the files)\n");
        }
        if let Some(stopped) = stopped {
            face.push_str(&format!("({}: not every file was searched; narrow `path` or `glob`)\n", stopped.words()));
        }
    }
    if not_searched > 0 {
        face.push_str(&format!(
            "({not_searched} file(s) over the {}-byte read limit were not searched; raise max_file_bytes)\n",
            workspace.config().max_file_bytes
        ));
    }
    if unwalkable > 0 {
        face.push_str(&format!(
            "({unwalkable} path(s) not searched: too long, unreadable, or named with a control character)\n"
        ));
    }
    let mut results_json = Vec::new();
    let mut face = Face::text(face);
    // The page's hits (a file by its first hit), whose ids stand for their reads.
    let mut results = (request.output != Output::Count).then(Vec::new);
    let mut scopes = Scopes {
        parse_until: workspace
            .building_in_background()
            .then(|| std::time::Instant::now() + crate::work::BUILDING_NOTES),
        ..Scopes::default()
    };
    // The file whose text hits the rows above are listed under.
    let mut grouped: Option<RepoPath> = None;
    for &(index, count) in &shown_page {
        let (hit, id) = (&hits[index], &ids[index]);
        let (line, shown) = match count {
            // A file of `output: files`: its path, and its count (`RowShape::Count`).
            Some(_) => (hit.path.to_string(), None),
            None => render_hit(workspace, hit, request, &mut scopes),
        };
        // What a row shows besides the hit: a symbol hit its id, which reads it; a file or
        // directory hit, and a file of `output: files`, its path (and count): a file list is
        // paths, which read by path (§9.7); a text hit its line and the function it is in
        // (which reads by name), no id.
        let shape = match (count, &hit.symbol, hit.line, shown.as_deref()) {
            (Some(count), ..) => RowShape::Count(count),
            (None, _, None, _) => RowShape::Path,
            (None, Some(_), ..) => RowShape::Symbol,
            (None, None, Some(_), Some(block)) if !line.ends_with(block) => RowShape::Window,
            (None, None, Some(_), _) => RowShape::UnderPath,
        };
        match (shape, shown.as_deref()) {
            (RowShape::Path, _) => face.push_row(format!("{line}\n")),
            (RowShape::Count(count), _) => face.push_row(format!("{line} {count}\n")),
            // A hit with context: its place, its lines below.
            (RowShape::Window, Some(block)) => face.push_row(format!("{line}\n{block}\n")),
            // Text hits under their file's path, once per run of hits in that file.
            (RowShape::UnderPath, Some(shown)) => {
                if grouped.as_ref() != Some(&hit.path) {
                    face.push_row(format!("{}\n", hit.path));
                    grouped = Some(hit.path.clone());
                }
                face.push_row(format!("{}\n", text::numbered_line(hit.line.unwrap_or_default(), shown)));
            }
            _ => face.push_row(format!("{line}  [{id}]\n")),
        }
        if shape != RowShape::UnderPath {
            grouped = None;
        }
        results_json.push(match count {
            Some(count) => json!({"path": hit.path.as_str(), "count": count, "candidate_id": id}),
            None => hit_json(hit, id, request),
        });
        if let Some(results) = &mut results {
            results.push(HitRef {
                path: hit.path.to_string(),
                line: hit.line,
                candidate_id: id.clone(),
                symbol: hit.symbol.as_ref().map(|symbol| symbol.symbol.name.clone()),
                shown,
                shape,
                read: read_call(workspace, hit),
            });
        }
    }
    if request.output == Output::Count {
        let files: std::collections::BTreeSet<&RepoPath> = hits.iter().map(|hit| &hit.path).collect();
        face.push(format!("{total_text} matches in {} files\n", files.len()));
    }
    if has_more && let Some(cursor) = &next_cursor {
        let mut arguments = request.original.clone();
        arguments.remove("offset");
        arguments.insert("cursor".into(), Value::from(cursor.as_str()));
        let call = NextCall { tool: "search".into(), arguments };
        // A count cut short is a lower bound, so is what remains of it.
        let plus = if lower_bound { "+" } else { "" };
        let partial = match exact {
            Some(_) => format!(" whose names contain `{}`", super::split_qualified(request.query.trim()).1),
            None => String::new(),
        };
        face.push(format!("── {}{plus} more{partial}; → next page: {}\n", listed.len() - end, call.render()));
    }
    if !reason_codes.is_empty() && total > 0 {
        face.push(format!("── [{}]\n", joined(&reason_codes)));
    }
    for call in &next_calls {
        face.push(format!("→ next: {}\n", call.render()));
    }

    let mut outcome = Outcome::success("search", Some(used.to_string()), Some(request.query.clone()), face)
        .with_metadata(request.metadata);
    outcome.act.truncated = has_more || stopped.is_some();
    outcome.act.next_cursor = next_cursor;
    outcome.act.bundle_id = Some(bundle_id);
    outcome.act.reason_codes = reason_codes;
    outcome.act.next_calls = next_calls;
    outcome.act.results = results;
    let detail = &mut outcome.detail;
    detail.insert("inferred_type".into(), Value::from(used.as_str()));
    detail.insert("fell_back".into(), Value::Bool(fell_back));
    if !terms.is_empty() {
        detail.insert("terms".into(), Value::from(terms));
    }
    detail.insert("total".into(), Value::from(total));
    detail.insert("total_is_lower_bound".into(), Value::Bool(lower_bound));
    detail.insert("has_more".into(), Value::Bool(has_more));
    detail.insert("index_state".into(), serde_json::to_value(index_state).unwrap_or_default());
    if unwalkable > 0 {
        detail.insert("unwalkable".into(), Value::from(unwalkable));
    }
    if not_searched > 0 {
        detail.insert("not_searched".into(), Value::from(not_searched));
    }
    // The ranked hits with their scores, previews and symbols, for the full envelope.
    detail.insert("results".into(), Value::Array(results_json));
    outcome
}

/// A hit's face line (without its id) and what the line shows besides the hit's path and line,
/// which its structured row carries.
fn render_hit(
    workspace: &Workspace,
    hit: &Hit,
    request: &SearchRequest,
    scopes: &mut Scopes,
) -> (String, Option<String>) {
    let shown = match (&hit.symbol, hit.line) {
        (Some(symbol), _) => {
            let kind = serde_json::to_value(symbol.symbol.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let span = symbol.symbol.span;
            // The signature's head: the read shows the rest. A member names its container; a
            // definition whose signature opens with its kind (`def`, `class`, `fn`) needs no more.
            let signature = clip(&symbol.symbol.signature, request.signature_chars);
            let said = signature.split_whitespace().take(3).any(|word| kind_word(word, &kind));
            let about = match (symbol.symbol.container.as_deref(), said) {
                (Some(container), true) => format!("  (in {container})"),
                (Some(container), false) => format!("  ({kind} in {container})"),
                (None, true) => String::new(),
                (None, false) => format!("  ({kind})"),
            };
            let shown = format!("{}-{}  {signature}{about}", span.start_line, span.end_line);
            return (format!("{}:{shown}", hit.path), Some(shown));
        }
        (None, Some(line)) if request.context_lines > 0 => {
            let mut out = String::new();
            if let Ok(bytes) = workspace.root().read_indexed(&hit.path, workspace.config().max_index_file_bytes)
                && let Ok(decoded) = text::decode(&bytes)
            {
                let mut first = line.saturating_sub(request.context_lines).max(1);
                let last = (line + request.context_lines).min(decoded.total_lines());
                // Windows that overlap the previous hit's (same file) start after it.
                if let Some((path, shown_to)) = &scopes.shown_to
                    && *path == hit.path
                    && *shown_to >= first
                {
                    first = (*shown_to + 1).min(line);
                }
                scopes.shown_to = Some((hit.path.clone(), last));
                for number in first..=last {
                    out.push_str(&text::numbered_line(number, &clip(decoded.line(number), request.preview_chars)));
                    out.push('\n');
                }
            }
            // The hit's place (and the definition it is in) and id on a line of their own, its
            // lines below.
            let block = out.trim_end().to_owned();
            let place = match scopes.note(workspace, &hit.path, line) {
                Some(scope) => format!("{}:{line} (in {scope})", hit.path),
                None => format!("{}:{line}", hit.path),
            };
            return (place, Some(block));
        }
        // A hit's line without its indentation, which says nothing in a list of hits, and the
        // definition it is in: "where, and in which function" in one answer (one space before
        // it: a second cost a token on every hit that names one).
        (None, Some(line)) => {
            let preview = clip(hit.preview.trim(), request.preview_chars);
            match scopes.note(workspace, &hit.path, line) {
                Some(scope) => format!("{preview} (in {scope})"),
                None => preview,
            }
        }
        (None, None) => return (hit.path.to_string(), None),
    };
    (format!("{}:{}", hit.path, text::numbered_line(hit.line.unwrap_or_default(), &shown)), Some(shown))
}

/// Does a signature's `word` say the definition's kind (`def` a function or method, `class` a
/// class, `fn`, `struct`, `trait`…)?
fn kind_word(word: &str, kind: &str) -> bool {
    match word {
        "def" | "fn" | "func" | "function" | "sub" => matches!(kind, "function" | "method" | "constructor"),
        "class" | "struct" | "enum" | "trait" | "interface" | "union" | "module" | "namespace" | "impl" | "type" => {
            word == kind || (word == "type" && kind == "type_alias")
        }
        _ => false,
    }
}

/// Names that only contain the query, up to this many, are listed with the exact ones: the
/// line that would point at them costs as much.
const FEW_PARTIAL: usize = 3;

/// How many hits, from the first, define exactly the name a symbol query asks for.
fn exact_names(hits: &[Hit], query: &str) -> usize {
    let name = super::split_qualified(query.trim()).1;
    hits.iter().take_while(|hit| hit.symbol.as_ref().is_some_and(|s| s.symbol.name.eq_ignore_ascii_case(name))).count()
}

/// The definitions of the files a page of text hits is in, looked up once per file: as the
/// index holds them (a search parses nothing), or parsed while its first build runs.
#[derive(Default)]
struct Scopes {
    files: BTreeMap<RepoPath, Vec<loupe_index::SymbolRecord>>,
    /// The scope the previous row named, with its file: a run of hits in one function names
    /// it once.
    last: Option<(RepoPath, String)>,
    /// The last line a context window showed, with its file.
    shown_to: Option<(RepoPath, usize)>,
    /// While the first build runs, files are parsed for their definitions until then
    /// (`work::BUILDING_NOTES`); after it, a file not parsed yet names none.
    parse_until: Option<std::time::Instant>,
}

impl Scopes {
    /// The scope to name on a hit's row: its enclosing definition, unless the row before named it.
    fn note(&mut self, workspace: &Workspace, path: &RepoPath, line: usize) -> Option<String> {
        let scope = self.enclosing(workspace, path, line);
        let repeated = matches!((&self.last, &scope), (Some((last_path, last)), Some(scope)) if last_path == path && last == scope);
        self.last = scope.clone().map(|scope| (path.clone(), scope));
        scope.filter(|_| !repeated)
    }

    /// The innermost function, method or type around `line` (not starting on it: a hit on a
    /// definition's own line shows it), as `Container.name` or `name`.
    fn enclosing(&mut self, workspace: &Workspace, path: &RepoPath, line: usize) -> Option<String> {
        let definitions = self.files.entry(path.clone()).or_insert_with(|| {
            match workspace.index_for_query().filter(|index| index.state() == IndexState::Ready) {
                Some(index) => index.symbols_in(path),
                None if self.parse_until.is_some_and(|until| std::time::Instant::now() >= until) => Vec::new(),
                None => parsed_definitions(workspace, path),
            }
        });
        let scope = definitions
            .iter()
            .filter(|definition| {
                use loupe_index::SymbolKind as K;
                matches!(
                    definition.kind,
                    K::Function
                        | K::Method
                        | K::Constructor
                        | K::Class
                        | K::Struct
                        | K::Enum
                        | K::Trait
                        | K::Interface
                        | K::Impl
                        | K::Module
                ) && definition.span.start_line <= line
                    && line <= definition.span.end_line
                    && definition.name_line != line
            })
            .max_by_key(|definition| (definition.depth, definition.span.start_line))?;
        let separator = loupe_index::Lang::from_path(path.as_str()).map_or(".", |lang| lang.separator());
        Some(match &scope.container {
            Some(container) => format!("{container}{separator}{}", scope.name),
            None => scope.name.clone(),
        })
    }
}

/// A file's definitions parsed from the disk now, as the index would hold them.
fn parsed_definitions(workspace: &Workspace, path: &RepoPath) -> Vec<loupe_index::SymbolRecord> {
    let Some(lang) = loupe_index::Lang::from_path(path.as_str()) else { return Vec::new() };
    let Ok(bytes) = workspace.root().read_indexed(path, workspace.config().max_index_file_bytes) else {
        return Vec::new();
    };
    let Ok(decoded) = text::decode(&bytes) else { return Vec::new() };
    let facts = loupe_syntax::parse_with(lang, &decoded.text, loupe_syntax::Extract::Declarations);
    facts.definitions.into_iter().map(loupe_index::SymbolRecord::from).collect()
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

/// The read that opens a hit, one that works as it is (§6): a symbol by name and path when that
/// names one definition (else its lines), a text hit as a window around it, a directory or a
/// source file as an outline, any other file as its first lines.
fn read_call(workspace: &Workspace, hit: &Hit) -> NextCall {
    let path = hit.path.as_str();
    match (&hit.symbol, hit.line) {
        (Some(symbol), line) => {
            let record = &symbol.symbol;
            let twins = workspace.index_for_query().map_or(0, |index| {
                index
                    .symbols_named(&record.name)
                    .iter()
                    // Any other definition of the name in the file: the resolver matches containers
                    // by suffix, so a different container does not make a symbol read unique.
                    .filter(|other| other.path == hit.path && other.symbol.name == record.name)
                    .count()
            });
            match line {
                // Several definitions answer to this name here (a minified file, overloads):
                // read this one's lines, which stay unambiguous.
                Some(line) if twins > 1 => {
                    let end = hit.end_line.unwrap_or(line).max(line).min(line + MAX_OFFERED_LINES - 1);
                    NextCall::new(
                        "read",
                        json!({"mode": "snippet", "target": path, "start_line": line, "end_line": end}),
                    )
                }
                _ => {
                    let target = match &record.container {
                        Some(container) => format!("{container}{}{}", separator_for(&hit.path), record.name),
                        None => record.name.clone(),
                    };
                    NextCall::new("read", json!({"mode": "symbol", "target": target, "path": path}))
                }
            }
        }
        (None, Some(line)) => NextCall::new(
            "read",
            json!({"mode": "snippet", "target": path, "start_line": line.saturating_sub(5).max(1), "end_line": line + 5}),
        ),
        (None, None) if hit.kind == "directory" || loupe_index::Lang::from_path(path).is_some() => {
            NextCall::new("read", json!({"mode": "outline", "target": path}))
        }
        // A file loupe does not parse has no outline: its first lines, a precision read.
        (None, None) => {
            NextCall::new("read", json!({"mode": "file", "target": path, "offset": 1, "limit": MAX_OFFERED_LINES}))
        }
    }
}

/// The most lines a read offered for a hit asks for: within the gate's `max_range_lines`
/// default, so the offer passes as a precision read.
const MAX_OFFERED_LINES: usize = 100;

fn separator_for(path: &RepoPath) -> &'static str {
    match loupe_index::Lang::from_path(path.as_str()) {
        Some(lang) => lang.separator(),
        None => "::",
    }
}

/// A broader search to offer when nothing matched: drop the filters and word boundaries if
/// there were any, else the longest piece of the query, else look for it as a file name.
fn broaden(request: &SearchRequest, used: SearchKind) -> NextCall {
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
        arguments.insert("type".into(), Value::from(if used == SearchKind::Regex { "regex" } else { "text" }));
    } else if used == SearchKind::Symbol {
        arguments.insert("query".into(), Value::from(query));
        arguments.insert("type".into(), Value::from("text"));
    } else if pieces.len() > 1 && !matches!(used, SearchKind::File | SearchKind::Directory) {
        arguments.insert("query".into(), Value::from(longest));
        arguments.insert("type".into(), Value::from("text"));
    } else if matches!(used, SearchKind::File | SearchKind::Directory) && longest == query {
        // The name as it is found nothing: look for it in the files' text.
        arguments.insert("query".into(), Value::from(query));
        arguments.insert("type".into(), Value::from("text"));
    } else {
        let stem = query.rsplit('/').next().unwrap_or(query).split('.').next().unwrap_or(query);
        let stem = if stem.is_empty() { query } else { stem };
        arguments.insert(
            "query".into(),
            Value::from(if matches!(used, SearchKind::File | SearchKind::Directory) { longest } else { stem }),
        );
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
