//! What an edit left behind (§8.2, `LEFT_DANGLING`): uses of a name the edit removed or renamed
//! that remain, and imports of a file it deleted, found from the index's facts before anything
//! is written. A report, never a refusal.
//!
//! A definition is removed when the file's text after the call has no definition of that name
//! in that container. Its uses are the sites `analyze references` finds (`exact` and `scoped`
//! only: a name-only match may be another symbol) in files the call leaves as they are; in a
//! file the call changes, a use is the new text's reference to the name when the new text no
//! longer defines it.

use loupe_core::{NextCall, RepoPath};
use loupe_graph::calls::{Arity, arity, positional_arguments};
use loupe_graph::{Confidence, Resolved, SymbolRef};
use loupe_index::{IndexState, Lang, SymbolKind};
use loupe_syntax::{Definition, Extract};
use serde_json::{Value, json};

use crate::work::Work;
use crate::workspace::Workspace;
use crate::workspace::references::reference_sites;
use crate::workspace::relations::View;

/// The most removed definitions whose uses are looked for (the rest are counted).
const MAX_CHECKED: usize = 12;
/// The most places the report names.
const MAX_SHOWN: usize = 8;
/// The most reads of them offered.
const MAX_READS: usize = 3;

/// One file of the call: its text before and after (`None`: absent).
pub(super) struct Change<'a> {
    pub(super) path: &'a RepoPath,
    pub(super) before: Option<&'a str>,
    pub(super) after: Option<&'a str>,
}

/// What was left behind: the face's lines, the reads of the first places, and every place for
/// the structured face.
#[derive(Debug, Default)]
pub(super) struct LeftBehind {
    pub(super) lines: Vec<String>,
    pub(super) next_calls: Vec<NextCall>,
    pub(super) places: Vec<Value>,
}

/// One use left: which name, where, how sure.
struct Place {
    name: String,
    path: RepoPath,
    line: usize,
    why: String,
}

pub(super) fn left_behind(workspace: &Workspace, changes: &[Change<'_>]) -> LeftBehind {
    let mut report = LeftBehind::default();
    let Some(index) = workspace.index_for_query().filter(|index| index.state() == IndexState::Ready) else {
        return report;
    };
    let work = Work::default();
    let view = View::new(workspace, index, &work);
    let changed = |path: &RepoPath| changes.iter().find(|change| change.path == path);
    let mut removed: Vec<SymbolRef> = Vec::new();
    let mut reshaped: Vec<(SymbolRef, Arity, Arity)> = Vec::new();
    for change in changes {
        let (Some(before), Some(lang)) = (change.before, Lang::from_path(change.path.as_str())) else { continue };
        let old = loupe_syntax::parse_with(lang, before, Extract::Definitions).definitions;
        let new = match change.after {
            Some(after) => loupe_syntax::parse_with(lang, after, Extract::Definitions).definitions,
            None => Vec::new(),
        };
        let kept = |definition: &Definition| {
            new.iter().any(|other| other.name == definition.name && other.container == definition.container)
        };
        for definition in old.iter().filter(|definition| !kept(definition) && worth_checking(definition)) {
            removed.push(SymbolRef::from_definition(change.path, lang, definition));
        }
        // A function kept under its name whose arity changed: its calls may no longer fit.
        for definition in
            old.iter().filter(|definition| matches!(definition.kind, SymbolKind::Function | SymbolKind::Method))
        {
            let method = definition.container.is_some();
            let Some(before) = arity(&definition.signature, lang, method) else { continue };
            let now = new.iter().find(|other| {
                other.name == definition.name
                    && other.container == definition.container
                    && other.kind == definition.kind
            });
            let Some(after) = now.and_then(|now| arity(&now.signature, lang, method)) else { continue };
            if before != after {
                reshaped.push((SymbolRef::from_definition(change.path, lang, definition), before, after));
            }
        }
    }
    let unchecked = removed.len().saturating_sub(MAX_CHECKED);
    let mut places: Vec<Place> = Vec::new();
    for symbol in removed.iter().take(MAX_CHECKED) {
        let mut rescan: Vec<RepoPath> = Vec::new();
        reference_sites(&view, symbol, &mut |path, _, sites| {
            let sure = sites.iter().filter(|site| site.confidence != Confidence::NameOnly && site.name == symbol.name);
            match changed(path) {
                // The call rewrites this file: its new text decides.
                Some(_) => {
                    if sure.count() > 0 {
                        rescan.push(path.clone());
                    }
                }
                None => places.extend(sure.map(|site| Place {
                    name: symbol.name.clone(),
                    path: path.clone(),
                    line: site.line,
                    why: site.confidence.as_str().to_owned(),
                })),
            }
            true
        });
        for path in rescan {
            let Some(after) = changed(&path).and_then(|change| change.after) else { continue };
            let Some(lang) = Lang::from_path(path.as_str()) else { continue };
            let facts = loupe_syntax::parse(lang, after);
            if facts.definitions.iter().any(|definition| definition.name == symbol.name) {
                continue;
            }
            let mut lines: Vec<usize> =
                facts.references.iter().filter(|reference| reference.name == symbol.name).map(|r| r.line).collect();
            lines.dedup();
            places.extend(lines.into_iter().map(|line| Place {
                name: symbol.name.clone(),
                path: path.clone(),
                line,
                why: "in the new text".to_owned(),
            }));
        }
    }
    // Calls, in files the call leaves as they are, that fit a function's old arity and not its
    // new one.
    for (symbol, before, after) in reshaped.iter().take(MAX_CHECKED) {
        reference_sites(&view, symbol, &mut |path, _, sites| {
            if changed(path).is_some() {
                return true;
            }
            let Ok(bytes) = workspace.root().read_indexed(path, workspace.config().max_file_bytes) else { return true };
            let Ok(decoded) = loupe_core::text::decode(&bytes) else { return true };
            let text = decoded.text;
            let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
            for site in sites.iter().filter(|site| site.confidence != Confidence::NameOnly && site.name == symbol.name)
            {
                let Some(at) = starts.get(site.line - 1).map(|start| start + site.column - 1) else { continue };
                let Some(rest) = text.get(at + symbol.name.len()..) else { continue };
                // `Type.method(obj, …)` passes the receiver itself: not comparable.
                let unbound = text[..at].ends_with('.')
                    && text[..at - 1]
                        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .is_some_and(|head| head.starts_with(|c: char| c.is_ascii_uppercase()));
                let Some(count) = positional_arguments(rest).filter(|_| !unbound) else { continue };
                if before.accepts(count) && !after.accepts(count) {
                    places.push(Place {
                        name: symbol.name.clone(),
                        path: path.clone(),
                        line: site.line,
                        why: format!("called with {count}, now takes {}", describe(*after)),
                    });
                }
            }
            true
        });
    }
    // Imports of a file the call deletes, from files it keeps.
    for change in changes.iter().filter(|change| change.before.is_some() && change.after.is_none()) {
        for (importer, line) in view.graphs.imports.importers_of(&Resolved::File(change.path.clone())) {
            if changed(&importer).is_none_or(|other| other.after.is_some()) {
                places.push(Place { name: change.path.to_string(), path: importer, line, why: "import".to_owned() });
            }
        }
    }
    if places.is_empty() && unchecked == 0 {
        return report;
    }
    places.sort_by(|a, b| (&a.name, &a.path, a.line).cmp(&(&b.name, &b.path, b.line)));
    places.dedup_by(|a, b| a.name == b.name && a.path == b.path && a.line == b.line);
    // Grouped by name, then file: `name at a.py:1,7 · b.py:3`, at most MAX_SHOWN places.
    let mut groups: Vec<String> = Vec::new();
    let mut shown = 0;
    for (name, of_name) in places.chunk_by(|a, b| a.name == b.name).map(|group| (&group[0].name, group)) {
        if shown >= MAX_SHOWN {
            break;
        }
        let files: Vec<String> = of_name
            .chunk_by(|a, b| a.path == b.path)
            .map(|file| {
                let lines: Vec<String> = file.iter().map(|place| place.line.to_string()).collect();
                format!("{}:{}", file[0].path, lines.join(","))
            })
            .collect();
        shown += of_name.len();
        let what = match of_name[0].why.as_str() {
            "import" => format!("imports of {name}"),
            why if why.starts_with("called with") => {
                format!("calls of {name} that no longer fit ({})", why.rsplit_once(", ").map_or(why, |(_, now)| now))
            }
            _ => name.clone(),
        };
        groups.push(format!("{what} at {}", files.join(" · ")));
    }
    let more = match places.len().saturating_sub(shown) {
        0 => String::new(),
        rest => format!("; and {rest} more (meta.left_behind)"),
    };
    if !places.is_empty() {
        report.lines.push(format!(
            "── left behind: {} place(s) this edit broke: {}{more} [LEFT_DANGLING]",
            places.len(),
            groups.join("; ")
        ));
    }
    if unchecked > 0 {
        report.lines.push(format!("── {unchecked} more removed definition(s) not checked for uses [LEFT_DANGLING]"));
    }
    // A read of each file's places (one window when they are near each other), the first few.
    let mut windows: Vec<(&RepoPath, usize, usize)> = Vec::new();
    for place in &places {
        let (first, last) = (place.line.saturating_sub(2).max(1), place.line + 2);
        match windows.iter_mut().find(|(path, start, _)| *path == &place.path && last.abs_diff(*start) <= 40) {
            Some(window) => {
                window.1 = window.1.min(first);
                window.2 = window.2.max(last);
            }
            None => windows.push((&place.path, first, last)),
        }
    }
    for (path, first, last) in windows.into_iter().take(MAX_READS) {
        report.next_calls.push(NextCall::new(
            "read",
            json!({"mode": "snippet", "target": path.as_str(), "start_line": first, "end_line": last}),
        ));
    }
    report.places = places
        .iter()
        .map(|place| json!({"name": place.name, "path": place.path.as_str(), "line": place.line, "why": place.why}))
        .collect();
    report
}

/// `2`, `1–2`, `1 or more` arguments.
fn describe(arity: Arity) -> String {
    match arity.max {
        Some(max) if max == arity.min => max.to_string(),
        Some(max) => format!("{}–{max}", arity.min),
        None => format!("{} or more", arity.min),
    }
}

/// Definitions whose uses other files could hold: not a local of a function, not an `impl`
/// block (its type is the definition).
fn worth_checking(definition: &Definition) -> bool {
    !matches!(definition.kind, SymbolKind::Impl | SymbolKind::Module) && definition.name.len() > 1
}
