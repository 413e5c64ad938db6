//! `edit`'s symbol operations (§8.2): a definition named as `read mode=symbol` names it, found
//! again in the file's working text, and its body or whole text replaced, a sibling inserted
//! before or after it, the definition deleted, or the name changed at the definition and every
//! use the resolver finds (`analyze::reference_sites`, the sites `analyze references` shows).
//!
//! Each operation only changes working texts, like the text operations: the call's journal
//! plan, syntax check and reply are the same. A site found through the index is checked
//! against the working text before it is changed, so a file an earlier edit of the call
//! moved is refused, never changed in the wrong place.

use std::collections::BTreeMap;

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_graph::{Confidence, SymbolRef};
use loupe_index::Lang;
use loupe_syntax::{Definition, FileFacts};
use serde_json::{Map, Value, json};

use super::lines::{Span, line_of, line_spans};
use super::text_ops::ensure_text;
use super::{EditSpec, FileState, file_for};
use crate::work::Work;
use crate::workspace::Workspace;
use crate::workspace::references::{Site, reference_sites};
use crate::workspace::relations::View;
use crate::workspace::symbols::{self, ResolvedSymbol};

/// What a symbol operation does.
#[derive(Debug, Clone)]
pub(super) enum SymbolOp {
    /// `new_body` (the head, decorators and doc stay) or `new_text` (the whole definition).
    Replace {
        body: Option<String>,
        text: Option<String>,
    },
    /// `new_string` as a sibling before or after the definition.
    Insert {
        after: bool,
        new: String,
    },
    Delete {
        force: bool,
    },
    Rename {
        new_name: String,
        name_only: bool,
        in_comments: bool,
    },
}

/// What symbol operations add to the reply beside the files' diffs: lines for the text face,
/// calls, and the sites of a rename for the structured face.
#[derive(Debug, Default)]
pub(super) struct Notes {
    /// Every edit of the call names a symbol: the reply is what each did, where (`render`).
    pub(super) only_symbols: bool,
    /// Every edit of the call is a rename (a rename cannot break the syntax).
    pub(super) only_renames: bool,
    pub(super) lines: Vec<String>,
    pub(super) next_calls: Vec<NextCall>,
    pub(super) sites: Vec<Value>,
    /// What the call left behind (`dangling`), for the structured face.
    pub(super) left_behind: Vec<Value>,
}

/// The most sites a reply lists (every one is changed; the rest are counted).
const MAX_LISTED_SITES: usize = 200;
/// The most sites the text face names.
const MAX_SHOWN_SITES: usize = 30;

/// Applies one symbol operation to the call's working texts.
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    workspace: &Workspace,
    files: &mut BTreeMap<String, FileState>,
    order: &mut Vec<String>,
    spec: &EditSpec,
    symbol: &str,
    op: &SymbolOp,
    original: &Map<String, Value>,
    notes: &mut Notes,
) -> Result<(), ToolError> {
    let resolved = symbols::resolve(workspace, "edit", symbol, spec.path_input.as_deref(), &Map::new())
        .map_err(|error| as_edit_calls(error, original, spec.index))?;
    let key = file_for(workspace, files, order, resolved.path.as_str())?;
    let state = files.get_mut(&key).ok_or_else(|| ToolError::new(ErrorCode::Internal, "file lost", "retry"))?;
    if let Some(expected) = &spec.expected_hash
        && state.hash.as_ref() != Some(expected)
    {
        return Err(super::failures::conflict(state, expected, None, "the file changed since it was read"));
    }
    if !state.exists_after {
        return Err(super::failures::missing(state));
    }
    ensure_text(state)?;
    let lang = Lang::from_path(state.path.as_str()).ok_or_else(|| {
        ToolError::invalid_args(format!("`{}` is not in a language loupe parses", state.path), "use a text edit")
    })?;
    let text = state.text.clone().unwrap_or_default();
    let facts = loupe_syntax::parse(lang, &text);
    let definition = find_definition(&facts, &resolved).ok_or_else(|| {
        ToolError::new(
            ErrorCode::SymbolNotFound,
            format!("`{symbol}` is no longer in the text of `{}` this call edits", state.path),
            "an earlier edit of this call changed it: edit the symbol in a call of its own",
        )
    })?;
    let label = resolved.label();
    let path = state.path.clone();
    let (new_text, touched, did) = match op {
        SymbolOp::Replace { body, text: whole } => match (body, whole) {
            (Some(body), None) => {
                let (new_text, touched) = replace_body(&text, lang, &definition, body, state.ending, &resolved)?;
                (new_text, touched, format!("replaced the body of {label}"))
            }
            (None, Some(whole)) => {
                let (new_text, touched) = replace_whole(&text, &definition, whole, state.ending);
                (new_text, touched, format!("replaced {label}"))
            }
            // The parser lets exactly one of them through.
            _ => {
                return Err(ToolError::invalid_args(
                    "replace_symbol takes `new_body` or `new_text`, exactly one",
                    "pass new_body (the body only) or new_text (the whole definition)",
                ));
            }
        },
        SymbolOp::Insert { after, new } => {
            let (new_text, touched) = insert_sibling(&text, lang, &definition, new, *after, state.ending);
            (new_text, touched, format!("inserted {} {label}", if *after { "after" } else { "before" }))
        }
        SymbolOp::Delete { force } => {
            if !force {
                refuse_in_use(workspace, &resolved, &definition, original, spec.index)?;
            }
            let (new_text, touched) = delete_definition(&text, &definition);
            let (first, last) = (definition.span.start_line, definition.span.end_line);
            notes.lines.push(format!("deleted {label}: {path}:{first}–{last} (lines before the edit)"));
            set_text(state, new_text, touched);
            return Ok(());
        }
        SymbolOp::Rename { new_name, name_only, in_comments } => {
            let rename = Rename { new_name, name_only: *name_only, in_comments: *in_comments };
            return rename_everywhere(
                workspace,
                files,
                order,
                &resolved,
                &definition,
                lang,
                &rename,
                original,
                spec,
                notes,
            );
        }
    };
    notes.lines.push(format!("{did}: {path}:{}–{}", touched.0, touched.1));
    set_text(state, new_text, touched);
    Ok(())
}

fn set_text(state: &mut FileState, text: String, touched: (usize, usize)) {
    state.text = Some(text);
    state.touched = Some(match state.touched {
        Some((first, last)) => (first.min(touched.0), last.max(touched.1)),
        None => touched,
    });
}

/// The resolved definition in a parse of the working text: same name, container and kind,
/// the nearest to where the index saw it.
fn find_definition(facts: &FileFacts, resolved: &ResolvedSymbol) -> Option<Definition> {
    facts
        .definitions
        .iter()
        .filter(|definition| {
            definition.name == resolved.name
                && definition.container == resolved.container
                && definition.kind == resolved.kind
        })
        .min_by_key(|definition| definition.name_line.abs_diff(resolved.name_line))
        .cloned()
}

/// An ambiguity's next calls, which name each candidate's `path` (and container as `target`),
/// made whole `edit` calls: the caller's call with that entry aimed at the candidate.
fn as_edit_calls(mut error: ToolError, original: &Map<String, Value>, index: usize) -> ToolError {
    if error.code != ErrorCode::AmbiguousSymbol {
        return error;
    }
    error.next_calls = error
        .next_calls
        .iter()
        .filter_map(|call| {
            let mut arguments = original.clone();
            let entry = entry_of(&mut arguments, index)?;
            entry.insert("path".into(), call.arguments.get("path")?.clone());
            if let Some(target) = call.arguments.get("target") {
                entry.insert("symbol".into(), target.clone());
            }
            Some(NextCall { tool: "edit".to_owned(), arguments })
        })
        .collect();
    error
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The file's indentation step: a tab when the first indented line starts with one, else
/// the smallest run of spaces that indents a line (4 when nothing is indented).
fn indent_unit(text: &str) -> String {
    let mut smallest = usize::MAX;
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let indent = indentation(line);
        if indent.starts_with('\t') && smallest == usize::MAX {
            return "\t".to_owned();
        }
        if !indent.is_empty() && indent.bytes().all(|byte| byte == b' ') {
            smallest = smallest.min(indent.len());
        }
    }
    " ".repeat(if smallest == usize::MAX { 4 } else { smallest })
}

/// `text`'s lines without its leading and trailing blank lines, their common indentation
/// replaced by `indent` (blank lines stay empty).
fn reindent(text: &str, indent: &str) -> Vec<String> {
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.first().is_some_and(|line| line.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    let common = lines.iter().filter(|line| !line.trim().is_empty()).map(|line| indentation(line).len()).min();
    let common = common.unwrap_or(0);
    lines
        .iter()
        .map(|line| if line.trim().is_empty() { String::new() } else { format!("{indent}{}", &line[common..]) })
        .collect()
}

fn line_text<'t>(text: &'t str, spans: &[Span], line: usize) -> &'t str {
    spans.get(line.wrapping_sub(1)).map_or("", |span| &text[span.start..span.end])
}

/// `new_body` in place of the body: in Python what follows the header's `:` (or the
/// docstring), elsewhere what is between the body's braces.
fn replace_body(
    text: &str,
    lang: Lang,
    definition: &Definition,
    body: &str,
    ending: &str,
    resolved: &ResolvedSymbol,
) -> Result<(String, (usize, usize)), ToolError> {
    let spans = line_spans(text);
    let no_body = || {
        ToolError::invalid_args(
            format!("{} has no body loupe can replace", resolved.label()),
            "pass new_text with the whole definition instead of new_body",
        )
        .with_next_call(NextCall::new(
            "read",
            json!({"mode": "symbol", "target": qualified(resolved), "path": resolved.path.as_str()}),
        ))
    };
    let (start, end) = definition.body.ok_or_else(no_body)?;
    if start > end || end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return Err(no_body());
    }
    let definition_indent = indentation(line_text(text, &spans, definition.span.start_line)).to_owned();
    let unit = indent_unit(text);
    // The indentation of the body's first line below the head, if the body has one.
    let head_line = line_of(&spans, start);
    let (open, close, closing) = if lang == Lang::Python {
        (start, end, None)
    } else {
        let region = &text[start..end];
        let (Some(open), Some(close)) = (region.find('{'), region.rfind('}')) else { return Err(no_body()) };
        if close <= open {
            return Err(no_body());
        }
        let close_line = line_of(&spans, start + close);
        let close_text = line_text(text, &spans, close_line);
        let before_brace = &text[spans[close_line - 1].start..start + close];
        let closing_indent = if before_brace.trim().is_empty() && close_line > head_line {
            indentation(close_text).to_owned()
        } else {
            definition_indent.clone()
        };
        (start + open + 1, start + close, Some(closing_indent))
    };
    let last_line = line_of(&spans, close.max(open));
    let body_indent = ((head_line + 1)..=last_line)
        .map(|line| line_text(text, &spans, line))
        .find(|line| !line.trim().is_empty() && (closing.is_none() || !line.trim_start().starts_with('}')))
        .map(|line| indentation(line).to_owned())
        .unwrap_or_else(|| format!("{definition_indent}{unit}"));
    let mut lines = reindent(body, &body_indent);
    if lines.is_empty() && lang == Lang::Python {
        lines.push(format!("{body_indent}pass"));
    }
    let mut replacement = String::new();
    for line in &lines {
        replacement.push_str(ending);
        replacement.push_str(line);
    }
    if let Some(closing) = &closing {
        replacement.push_str(ending);
        replacement.push_str(closing);
    }
    let new_text = format!("{}{replacement}{}", &text[..open], &text[close..]);
    // The body's lines start on the line after the head's end.
    let first = line_of(&spans, open) + 1;
    Ok((new_text, (first, first + lines.len().max(1) - 1)))
}

/// `new_text` in place of the lines `read mode=symbol` shows (decorators and doc included),
/// at the definition's indentation.
fn replace_whole(text: &str, definition: &Definition, whole: &str, ending: &str) -> (String, (usize, usize)) {
    let spans = line_spans(text);
    let (first, last) = (definition.span.start_line, definition.span.end_line.min(spans.len()));
    let indent = indentation(line_text(text, &spans, first)).to_owned();
    let lines = reindent(whole, &indent);
    let mut replacement = lines.join(ending);
    let terminated = spans[last - 1].next > spans[last - 1].end;
    if terminated && !lines.is_empty() {
        replacement.push_str(ending);
    }
    let new_text = format!("{}{replacement}{}", &text[..spans[first - 1].start], &text[spans[last - 1].next..]);
    (new_text, (first, first + lines.len().max(1) - 1))
}

/// A definition's lines and what is around them: its indentation, the blank lines before and
/// after it, and whether a line at its indentation (a sibling) comes past them.
struct Surroundings {
    first: usize,
    last: usize,
    indent: String,
    before: usize,
    after: usize,
    sibling_before: bool,
    sibling_after: bool,
}

impl Surroundings {
    fn of(text: &str, spans: &[Span], definition: &Definition) -> Surroundings {
        let (first, last) = (definition.span.start_line, definition.span.end_line.min(spans.len()));
        let indent = indentation(line_text(text, spans, first));
        let blank = |line: usize| line_text(text, spans, line).trim().is_empty();
        let after = (last + 1..=spans.len()).take_while(|&line| blank(line)).count();
        let before = (1..first).rev().take_while(|&line| blank(line)).count();
        let (next, previous) = (last + after + 1, first.saturating_sub(before + 1));
        Surroundings {
            first,
            last,
            indent: indent.to_owned(),
            before,
            after,
            sibling_before: previous >= 1 && indentation(line_text(text, spans, previous)) == indent,
            sibling_after: next <= spans.len() && indentation(line_text(text, spans, next)) == indent,
        }
    }

    /// How many blank lines separate the definition from a sibling: those after it when a
    /// sibling follows, else those before it when one precedes, else the language's habit (two
    /// between top-level Python definitions, else one).
    fn gap(&self, lang: Lang) -> usize {
        if self.sibling_after {
            self.after
        } else if self.sibling_before {
            self.before
        } else if lang == Lang::Python && self.indent.is_empty() {
            2
        } else {
            1
        }
    }
}

fn insert_sibling(
    text: &str,
    lang: Lang,
    definition: &Definition,
    new: &str,
    after: bool,
    ending: &str,
) -> (String, (usize, usize)) {
    let spans = line_spans(text);
    let around = Surroundings::of(text, &spans, definition);
    let (first, last, indent) = (around.first, around.last, around.indent.as_str());
    let lines = reindent(new, indent);
    let gap = around.gap(lang).max(usize::from(!lines.is_empty() && lang == Lang::Python && indent.is_empty()));
    let body: String = lines.iter().map(|line| format!("{line}{ending}")).collect();
    let blanks = ending.repeat(gap);
    if after {
        let span = spans[last - 1];
        let unterminated = span.next == span.end;
        let insertion = format!("{}{blanks}{body}", if unterminated { ending } else { "" });
        let new_text = format!("{}{insertion}{}", &text[..span.next], &text[span.next..]);
        let start = last + gap + 1;
        (new_text, (start, start + lines.len().max(1) - 1))
    } else {
        let at = spans[first - 1].start;
        let new_text = format!("{}{body}{blanks}{}", &text[..at], &text[at..]);
        (new_text, (first, first + lines.len().max(1) - 1))
    }
}

/// Removes the definition's lines (decorators and doc included) and one side's blank lines:
/// those after it when a sibling follows, else those before it.
fn delete_definition(text: &str, definition: &Definition) -> (String, (usize, usize)) {
    let spans = line_spans(text);
    let Surroundings { first, last, before, after, sibling_after, .. } = Surroundings::of(text, &spans, definition);
    let (from, to) = if sibling_after || before == 0 { (first, last + after) } else { (first - before, last) };
    let new_text = format!("{}{}", &text[..spans[from - 1].start], &text[spans[to - 1].next..]);
    let at = from.saturating_sub(1).max(1);
    (new_text, (at, at))
}

fn qualified(resolved: &ResolvedSymbol) -> String {
    let separator = Lang::from_path(resolved.path.as_str()).map_or(".", Lang::separator);
    match &resolved.container {
        Some(container) => format!("{container}{separator}{}", resolved.name),
        None => resolved.name.clone(),
    }
}

/// Every use of the symbol outside its own definition, through the index. Refused while the
/// first build runs: uses in files not indexed yet would be missed, and a rename or a delete
/// that misses a use breaks the code.
fn uses_of(
    workspace: &Workspace,
    resolved: &ResolvedSymbol,
    original: &Map<String, Value>,
) -> Result<(Vec<(RepoPath, Site)>, bool), ToolError> {
    let index = workspace.index_for_query().ok_or_else(|| {
        ToolError::new(ErrorCode::IndexNotReady, "this server runs without an index", "restart loupe with an index dir")
    })?;
    if index.state() != loupe_index::IndexState::Ready {
        let status = index.status();
        return Err(ToolError::new(
            ErrorCode::IndexNotReady,
            format!(
                "the index is still being built ({} of {} files): a rename or delete needs every use",
                status.files_done, status.files_total
            ),
            "send the same call again in a moment",
        )
        .with_next_call(NextCall { tool: "edit".to_owned(), arguments: original.clone() }));
    }
    let work = Work::default();
    let view = View::new(workspace, index, &work);
    let target: SymbolRef = resolved.clone().into_symbol_ref();
    let mut found = Vec::new();
    let complete = reference_sites(&view, &target, &mut |path, _, sites| {
        found.extend(sites.iter().map(|site| (path.clone(), site.clone())));
        true
    });
    Ok((found, complete))
}

fn refuse_in_use(
    workspace: &Workspace,
    resolved: &ResolvedSymbol,
    definition: &Definition,
    original: &Map<String, Value>,
    index: usize,
) -> Result<(), ToolError> {
    let (uses, _) = uses_of(workspace, resolved, original)?;
    let inside = |path: &RepoPath, line: usize| {
        *path == resolved.path && (definition.span.start_line..=definition.span.end_line).contains(&line)
    };
    let live: Vec<&(RepoPath, Site)> = uses
        .iter()
        .filter(|(path, site)| site.confidence != Confidence::NameOnly && !inside(path, site.line))
        .collect();
    if live.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = live
        .iter()
        .take(10)
        .map(|(path, site)| format!("{path}:{} ({})", site.line, site.confidence.as_str()))
        .collect();
    let more = if live.len() > shown.len() { format!(" and {} more", live.len() - shown.len()) } else { String::new() };
    let mut forced = original.clone();
    if let Some(entry) = entry_of(&mut forced, index) {
        entry.insert("force".into(), Value::Bool(true));
    }
    Err(ToolError::new(
        ErrorCode::SymbolInUse,
        format!(
            "{} is still used at {} site(s): {}{more}",
            resolved.label(),
            live.len(),
            shown.join(", ")
        ),
        "change or remove those uses first (analyze references lists them), or pass force: true to delete it anyway",
    )
    .with_next_call(NextCall::new(
        "analyze",
        json!({"mode": "references", "target": qualified(resolved), "path": resolved.path.as_str()}),
    ))
    .with_next_call(NextCall { tool: "edit".to_owned(), arguments: forced })
    .with_detail(
        "references",
        Value::from(
            live.iter()
                .take(MAX_LISTED_SITES)
                .map(|(path, site)| json!({"path": path.as_str(), "line": site.line, "confidence": site.confidence.as_str()}))
                .collect::<Vec<_>>(),
        ),
    ))
}

/// The `edits` entry `index` of a call's arguments.
fn entry_of(arguments: &mut Map<String, Value>, index: usize) -> Option<&mut Map<String, Value>> {
    match arguments.get_mut("edits")? {
        Value::Array(list) => list.get_mut(index)?.as_object_mut(),
        single @ Value::Object(_) => single.as_object_mut(),
        _ => None,
    }
}

struct Rename<'a> {
    new_name: &'a str,
    name_only: bool,
    in_comments: bool,
}

#[allow(clippy::too_many_arguments)]
fn rename_everywhere(
    workspace: &Workspace,
    files: &mut BTreeMap<String, FileState>,
    order: &mut Vec<String>,
    resolved: &ResolvedSymbol,
    definition: &Definition,
    lang: Lang,
    rename: &Rename<'_>,
    original: &Map<String, Value>,
    spec: &EditSpec,
    notes: &mut Notes,
) -> Result<(), ToolError> {
    let old_name = resolved.name.as_str();
    let new_name = rename.new_name;
    if !valid_identifier(lang, new_name) {
        return Err(ToolError::invalid_args(
            format!("`{}` is not a valid {} identifier", crate::errors::quoted(new_name), lang.name()),
            "pass a name of letters, digits and `_` that does not start with a digit and is not a keyword",
        ));
    }
    if new_name == old_name {
        return Err(ToolError::invalid_args(
            format!("`{old_name}` already has that name"),
            "pass a different new_name",
        ));
    }
    let (uses, complete) = uses_of(workspace, resolved, original)?;
    // The definition's own name, then every use written with the symbol's own name (an alias
    // an import gave it stays: the import line's name is one of the uses).
    let mut changed: BTreeMap<RepoPath, Vec<(usize, usize, Confidence)>> = BTreeMap::new();
    changed.entry(resolved.path.clone()).or_default().push((
        definition.name_line,
        definition.name_column,
        Confidence::Exact,
    ));
    let mut left: Vec<(RepoPath, Site)> = Vec::new();
    for (path, site) in uses {
        if site.name != old_name {
            continue;
        }
        if site.confidence == Confidence::NameOnly && !rename.name_only {
            left.push((path, site));
            continue;
        }
        changed.entry(path).or_default().push((site.line, site.column, site.confidence));
    }
    let mut mentions_left = 0;
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut listed: Vec<(String, Vec<String>)> = Vec::new();
    for (path, sites) in &mut changed {
        sites.sort_by_key(|(line, column, _)| (*line, *column));
        sites.dedup_by_key(|(line, column, _)| (*line, *column));
        let key = file_for(workspace, files, order, path.as_str())?;
        let state = files.get_mut(&key).ok_or_else(|| ToolError::new(ErrorCode::Internal, "file lost", "retry"))?;
        ensure_text(state)?;
        let text = state.text.clone().unwrap_or_default();
        let file_lang = Lang::from_path(path.as_str()).unwrap_or(lang);
        let facts = loupe_syntax::parse(file_lang, &text);
        check_collision(&facts, path, resolved, new_name, spec.index)?;
        let spans = line_spans(&text);
        let mut offsets = Vec::new();
        for &(line, column, confidence) in sites.iter() {
            let at = spans.get(line.wrapping_sub(1)).map(|span| span.start + column - 1);
            let holds = at.is_some_and(|at| text.get(at..at + old_name.len()) == Some(old_name));
            let Some(at) = at.filter(|_| holds) else {
                return Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!("`{path}` line {line} no longer holds `{old_name}` where the index saw it"),
                    "an earlier edit of this call moved it: send rename_symbol in a call of its own (or first)",
                )
                .with_next_call(NextCall::new("manage", json!({"command": "reindex", "path": path.as_str()}))));
            };
            offsets.push(at);
            *counts.entry(confidence.as_str()).or_default() += 1;
            if notes.sites.len() < MAX_LISTED_SITES {
                notes.sites.push(
                    json!({"path": path.as_str(), "line": line, "column": column, "confidence": confidence.as_str(), "changed": true}),
                );
            }
        }
        // What else spells the name in this file and is no identifier: comments and strings.
        let mut mentions = mentions_of(&text, old_name, &facts, &spans);
        mentions.retain(|at| !offsets.contains(at));
        // `from .helpers import abort as abort` re-exports under the same name: the alias is
        // the public name the uses through the package were renamed by, so it changes too.
        let same_alias: Vec<usize> = facts
            .imports
            .iter()
            .filter(|import| import.alias.as_deref() == Some(old_name))
            .filter(|import| offsets.iter().any(|&at| line_of(&spans, at) == import.line))
            .map(|import| import.line)
            .collect();
        let (aliases, rest): (Vec<usize>, Vec<usize>) =
            mentions.into_iter().partition(|&at| same_alias.contains(&line_of(&spans, at)));
        offsets.extend(&aliases);
        let mentions = rest;
        if rename.in_comments {
            offsets.extend(&mentions);
        } else {
            mentions_left += mentions.len();
        }
        offsets.sort_unstable();
        offsets.dedup();
        let mut new_text = text.clone();
        for &at in offsets.iter().rev() {
            new_text.replace_range(at..at + old_name.len(), new_name);
        }
        let lines: Vec<usize> = offsets.iter().map(|&at| line_of(&spans, at)).collect();
        let shown: Vec<String> = lines.iter().map(ToString::to_string).collect::<Vec<_>>();
        let mut shown = shown;
        shown.dedup();
        listed.push((path.to_string(), shown));
        let first = lines.first().copied().unwrap_or(1);
        let last = lines.last().copied().unwrap_or(first);
        set_text(state, new_text, (first, last));
    }
    let total: usize = counts.values().sum();
    let sites = if total == 1 { "site" } else { "sites" };
    let classes = match counts.len() {
        1 => format!("{total} {} {sites}", counts.keys().next().copied().unwrap_or("exact")),
        _ => {
            let by_class: Vec<String> = counts.iter().map(|(class, count)| format!("{class} {count}")).collect();
            format!("{total} {sites} ({})", by_class.join(", "))
        }
    };
    notes.lines.push(format!("renamed {old_name} → {new_name} at {classes}{}", sites_line(&listed)));
    if !complete {
        notes.lines.push("── the search for uses stopped early: some files were not read [PARTIAL]".to_owned());
    }
    if !left.is_empty() {
        let places: Vec<String> = left.iter().take(10).map(|(path, site)| format!("{path}:{}", site.line)).collect();
        let more =
            if left.len() > places.len() { format!(" and {} more", left.len() - places.len()) } else { String::new() };
        notes.lines.push(format!(
            "── {} name-only site(s) not changed (may be another symbol): {}{more}; the call below previews them too",
            left.len(),
            places.join(", ")
        ));
        let mut with = original.clone();
        with.insert("dry_run".into(), Value::Bool(true));
        if let Some(entry) = entry_of(&mut with, spec.index) {
            entry.insert("include".into(), Value::from("name_only"));
        }
        notes.next_calls.push(NextCall { tool: "edit".to_owned(), arguments: with });
        for (path, site) in left.iter().take(MAX_LISTED_SITES.saturating_sub(notes.sites.len())) {
            notes.sites.push(json!({"path": path.as_str(), "line": site.line, "column": site.column, "confidence": site.confidence.as_str(), "changed": false}));
        }
    }
    if mentions_left > 0 {
        notes.lines.push(format!(
            "── {mentions_left} mention(s) in comments or strings of these files not changed (in_comments: true changes them)"
        ));
    }
    Ok(())
}

/// `in DIR/: a.py:3,9 · b.py:4` (the files' common directory named once), at most
/// `MAX_SHOWN_SITES` sites, the rest counted.
fn sites_line(listed: &[(String, Vec<String>)]) -> String {
    let paths: Vec<&str> = listed.iter().map(|(path, _)| path.as_str()).collect();
    let first = paths.first().copied().unwrap_or("");
    let mut common = first.rfind('/').map_or(0, |at| at + 1);
    for path in &paths {
        while common > 0 && !path.starts_with(&first[..common]) {
            common = first[..common - 1].rfind('/').map_or(0, |at| at + 1);
        }
    }
    let mut shown = Vec::new();
    let mut sites = 0;
    for (path, lines) in listed {
        if sites >= MAX_SHOWN_SITES {
            break;
        }
        sites += lines.len();
        shown.push(format!("{}:{}", &path[common..], lines.join(",")));
    }
    let more = match listed.len() - shown.len() {
        0 => String::new(),
        rest => format!(" · and {rest} more file(s) (meta.sites lists them)"),
    };
    let place = if common == 0 { String::new() } else { format!(" in {}", &first[..common]) };
    format!("{place}: {}{more}", shown.join(" · "))
}

/// Word-bounded spellings of `name` in `text` that no identifier of the parse accounts for.
fn mentions_of(text: &str, name: &str, facts: &FileFacts, spans: &[Span]) -> Vec<usize> {
    let offset = |line: usize, column: usize| spans.get(line.wrapping_sub(1)).map(|span| span.start + column - 1);
    let mut code: Vec<usize> = Vec::new();
    code.extend(facts.references.iter().filter(|r| r.name == name).filter_map(|r| offset(r.line, r.column)));
    code.extend(facts.calls.iter().filter(|c| c.callee == name).filter_map(|c| offset(c.line, c.column)));
    code.extend(facts.definitions.iter().filter(|d| d.name == name).filter_map(|d| offset(d.name_line, d.name_column)));
    let word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80;
    let bytes = text.as_bytes();
    text.match_indices(name)
        .map(|(at, _)| at)
        .filter(|&at| at == 0 || !word(bytes[at - 1]))
        .filter(|&at| bytes.get(at + name.len()).is_none_or(|&byte| !word(byte)))
        .filter(|at| !code.contains(at))
        .collect()
}

/// `NAME_COLLISION` when `new_name` is already bound where the renamed symbol lives: a
/// definition beside it (same container), or for a top-level symbol a top-level definition or
/// an import of that name in a file the rename touches.
fn check_collision(
    facts: &FileFacts,
    path: &RepoPath,
    resolved: &ResolvedSymbol,
    new_name: &str,
    index: usize,
) -> Result<(), ToolError> {
    let same_file = *path == resolved.path;
    let clash = facts.definitions.iter().find(|definition| {
        definition.name == new_name
            && ((same_file && definition.container == resolved.container)
                || (resolved.container.is_none() && definition.container.is_none()))
    });
    let place = match clash {
        Some(definition) => Some(format!("{} {new_name} at {path}:{}", definition.kind.as_str(), definition.name_line)),
        None if resolved.container.is_none() => facts
            .imports
            .iter()
            .find(|import| {
                // `import os.path` binds `os`; `import "x/y"` (Go) binds `y`.
                let module_binds = import.names.is_empty()
                    && (import.module.split(['.', '/']).next() == Some(new_name)
                        || import.module.rsplit(['.', '/', ':']).next() == Some(new_name));
                import.alias.as_deref() == Some(new_name)
                    || (import.alias.is_none() && (module_binds || import.names.iter().any(|name| name == new_name)))
            })
            .map(|import| format!("an import of {new_name} at {path}:{}", import.line)),
        None => None,
    };
    let Some(place) = place else { return Ok(()) };
    Err(ToolError::new(
        ErrorCode::NameCollision,
        format!("renaming {} to `{new_name}` would clash with {place}", resolved.label()),
        "choose another new_name",
    )
    .with_next_call(NextCall::new("read", json!({"mode": "outline", "target": path.as_str()})))
    .with_detail("index", Value::from(index + 1)))
}

/// Whether `name` can name a symbol in `lang`: an identifier that is not a reserved word.
fn valid_identifier(lang: Lang, name: &str) -> bool {
    let dollar = matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Php);
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let starts = first == '_' || first.is_alphabetic() || (dollar && first == '$');
    if !starts || !chars.all(|c| c == '_' || c.is_alphanumeric() || (dollar && c == '$')) {
        return false;
    }
    !keywords(lang).contains(&name)
}

fn keywords(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &[
            "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
            "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
            "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
        ],
        Lang::Rust => &[
            "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false",
            "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
            "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
        ],
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => &[
            "break",
            "case",
            "catch",
            "class",
            "const",
            "continue",
            "debugger",
            "default",
            "delete",
            "do",
            "else",
            "enum",
            "export",
            "extends",
            "false",
            "finally",
            "for",
            "function",
            "if",
            "import",
            "in",
            "instanceof",
            "new",
            "null",
            "return",
            "super",
            "switch",
            "this",
            "throw",
            "true",
            "try",
            "typeof",
            "var",
            "void",
            "while",
            "with",
            "yield",
            "let",
            "static",
            "implements",
            "interface",
            "package",
            "private",
            "protected",
            "public",
            "await",
        ],
        Lang::Go => &[
            "break",
            "case",
            "chan",
            "const",
            "continue",
            "default",
            "defer",
            "else",
            "fallthrough",
            "for",
            "func",
            "go",
            "goto",
            "if",
            "import",
            "interface",
            "map",
            "package",
            "range",
            "return",
            "select",
            "struct",
            "switch",
            "type",
            "var",
        ],
        Lang::Java | Lang::Kotlin | Lang::CSharp | Lang::C | Lang::Cpp | Lang::Ruby | Lang::Php => &[
            "abstract",
            "break",
            "case",
            "catch",
            "class",
            "const",
            "continue",
            "default",
            "do",
            "else",
            "enum",
            "extends",
            "false",
            "final",
            "for",
            "goto",
            "if",
            "import",
            "int",
            "interface",
            "new",
            "null",
            "private",
            "protected",
            "public",
            "return",
            "static",
            "struct",
            "super",
            "switch",
            "this",
            "throw",
            "true",
            "try",
            "void",
            "while",
            "def",
            "end",
            "fun",
            "val",
            "var",
            "namespace",
            "using",
        ],
    }
}
