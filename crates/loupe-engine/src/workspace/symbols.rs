//! Symbol resolution, shared by `read` mode `symbol` (§5) and `analyze`: a name looked up
//! through the index and confirmed against a fresh parse of the file.
//!
//! The index only says where to look. The span that is read always comes from parsing the
//! file as it is on disk now, so an edit since the last index update cannot shift the window.

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError, text};
use loupe_index::{IndexState, Lang, Span, SymbolKind};
use loupe_syntax::{Definition, Extract};
use serde_json::{Map, Value, json};

use crate::suggest::closest;
use crate::workspace::Workspace;

/// A symbol confirmed in the current content of its file.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedSymbol {
    pub(crate) path: RepoPath,
    pub(crate) name: String,
    pub(crate) kind: SymbolKind,
    pub(crate) container: Option<String>,
    pub(crate) signature: String,
    pub(crate) span: Span,
    pub(crate) name_line: usize,
    /// The other definitions a bare name also names, when it was resolved to the one
    /// top-level definition among them: each as `kind name in container path:line` and the
    /// call that reads it.
    pub(crate) others: Vec<(String, NextCall)>,
}

impl ResolvedSymbol {
    /// A parsed definition of `path`, as resolved.
    pub(crate) fn of(path: RepoPath, definition: Definition, others: Vec<(String, NextCall)>) -> ResolvedSymbol {
        ResolvedSymbol {
            path,
            name: definition.name,
            kind: definition.kind,
            container: definition.container,
            signature: definition.signature,
            span: definition.span,
            name_line: definition.name_line,
            others,
        }
    }

    /// The symbol as the relationship queries name it.
    pub(crate) fn into_symbol_ref(self) -> loupe_graph::SymbolRef {
        let lang = Lang::from_path(self.path.as_str()).unwrap_or(Lang::Rust);
        loupe_graph::SymbolRef {
            path: self.path,
            lang,
            name: self.name,
            kind: self.kind,
            container: self.container,
            signature: self.signature,
            span: self.span,
            line: self.name_line,
        }
    }

    /// The lines to read: the whole span (doc comment included), or only the head.
    pub(crate) fn window(&self, include_context: usize, body: bool) -> (usize, usize) {
        let end = if body { self.span.end_line } else { self.name_line.max(self.span.start_line) };
        (self.span.start_line.saturating_sub(include_context).max(1), end + include_context)
    }

    pub(crate) fn label(&self) -> String {
        let container = self.container.as_deref().map(|container| format!(" in {container}")).unwrap_or_default();
        format!("{} {}{container}", kind_name(self.kind), self.name)
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "kind": self.kind,
            "path": self.path.as_str(),
            "line": self.span.start_line,
            "end_line": self.span.end_line,
            "container": self.container,
        })
    }
}

fn kind_name(kind: SymbolKind) -> &'static str {
    kind.as_str()
}

/// `name`, `Type.method`, `Type::method` or `Type/method` → (container, name).
pub(crate) fn split_target(target: &str) -> (Option<&str>, &str) {
    let target = target.trim();
    for separator in ["::", "/", "."] {
        if let Some((container, name)) = target.rsplit_once(separator)
            && !container.is_empty()
            && !name.is_empty()
        {
            return (Some(container), name);
        }
    }
    (None, target)
}

pub(crate) fn container_matches(own: Option<&str>, wanted: Option<&str>) -> bool {
    let Some(wanted) = wanted else { return true };
    let Some(own) = own else { return false };
    let normalise = |text: &str| text.replace("::", ".").replace('/', ".");
    let (own, wanted) = (normalise(own), normalise(wanted));
    own == wanted || own.ends_with(&format!(".{wanted}"))
}

/// Finds the one definition `target` names, or explains why there is not exactly one. An
/// ambiguity's `next_calls` repeat `tool` (`read` in mode `symbol`, or `analyze`) with
/// `original`'s arguments, one per candidate.
pub(crate) fn resolve(
    workspace: &Workspace,
    tool: &str,
    target: &str,
    path: Option<&str>,
    original: &Map<String, Value>,
) -> Result<ResolvedSymbol, ToolError> {
    resolve_where(workspace, tool, target, path, original, &|_| true)
}

/// `resolve`, among the definitions `keep` accepts (analyze `types` wants types only).
pub(crate) fn resolve_where(
    workspace: &Workspace,
    tool: &str,
    target: &str,
    path: Option<&str>,
    original: &Map<String, Value>,
    keep: &dyn Fn(&Definition) -> bool,
) -> Result<ResolvedSymbol, ToolError> {
    let (container, name) = split_target(target);
    let files: Vec<RepoPath> = match path {
        Some(path) => {
            let resolved = workspace.root().resolve(path).map_err(|error| {
                ToolError::new(
                    ErrorCode::FileNotFound,
                    format!("`path` {path}: {error}"),
                    "pass the file the symbol is defined in, relative to the root",
                )
            })?;
            vec![resolved.path]
        }
        None => match workspace.index_for_query().filter(|index| index.state() == IndexState::Ready) {
            Some(index) => {
                let mut paths: Vec<RepoPath> = index.symbols_named(name).into_iter().map(|hit| hit.path).collect();
                paths.dedup();
                paths
            }
            // The first build still runs: the files that mention the name, scanned now.
            None => workspace.source_files_mentioning(name).into_iter().map(|(path, _)| path).collect(),
        },
    };
    // Confirm every candidate against the file as it is now.
    let mut found: Vec<(RepoPath, Definition)> = Vec::new();
    for file in files {
        let Some(lang) = Lang::from_path(file.as_str()) else { continue };
        let Ok(bytes) = workspace.root().read_indexed(&file, workspace.config().max_file_bytes) else { continue };
        let Ok(decoded) = text::decode(&bytes) else { continue };
        for definition in loupe_syntax::parse_with(lang, &decoded.text, Extract::Definitions).definitions {
            if definition.name.eq_ignore_ascii_case(name)
                && container_matches(definition.container.as_deref(), container)
                && keep(&definition)
            {
                found.push((file.clone(), definition));
            }
        }
    }
    // An exact-case match beats case-insensitive ones.
    if found.iter().any(|(_, definition)| definition.name == name) {
        found.retain(|(_, definition)| definition.name == name);
    }
    // `impl` blocks share their type's name; the type itself is what a reader wants.
    if found.len() > 1 && found.iter().any(|(_, definition)| definition.kind != SymbolKind::Impl) {
        found.retain(|(_, definition)| definition.kind != SymbolKind::Impl);
    }
    // A C/C++ prototype and the function's definition share a name: the body is what is meant.
    if found.iter().any(|(_, definition)| {
        matches!(definition.kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor)
            && !definition.is_prototype()
    }) {
        found.retain(|(_, definition)| !definition.is_prototype());
    }
    // A class and its constructor share a name (Java, C++, C#): the class is what is meant.
    if found.len() > 1 {
        let types: Vec<(RepoPath, String)> = found
            .iter()
            .filter(|(_, definition)| definition.kind != SymbolKind::Constructor)
            .map(|(path, definition)| (path.clone(), definition.name.clone()))
            .collect();
        found.retain(|(path, definition)| {
            definition.kind != SymbolKind::Constructor
                || !types.iter().any(|(type_path, name)| {
                    type_path == path
                        && definition.container.as_deref().map(loupe_graph::types::simple_name) == Some(name)
                })
        });
    }
    // A bare name that one top-level definition has and members of types share (`url_for`,
    // `Flask.url_for`): the top-level one, the members named beside it (`Type.name` reads them).
    let mut others = Vec::new();
    if found.len() > 1 && container.is_none() && path.is_none() {
        let top: Vec<usize> = (0..found.len()).filter(|&at| found[at].1.container.is_none()).collect();
        if let [chosen] = top[..] {
            let pair = found.remove(chosen);
            others = found
                .iter()
                .take(MAX_CANDIDATES)
                .map(|(path, definition)| {
                    let container = definition.container.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
                    let shown = format!(
                        "{} {}{container} {path}:{}",
                        kind_name(definition.kind),
                        definition.name,
                        definition.span.start_line
                    );
                    (shown, candidate_call(tool, path, definition, original))
                })
                .collect();
            found = vec![pair];
        }
    }
    match found.len() {
        0 => Err(not_found(workspace, target, name, path)),
        1 => {
            let (path, definition) = found.remove(0);
            Ok(ResolvedSymbol::of(path, definition, others))
        }
        _ => Err(ambiguous(tool, target, &found, original)),
    }
}

fn not_found(workspace: &Workspace, target: &str, name: &str, path: Option<&str>) -> ToolError {
    let lower = name.to_lowercase();
    let plausible: Vec<String> = workspace
        .index()
        .map(|index| index.symbol_names_where(&|candidate| candidate.len().abs_diff(lower.len()) <= 3))
        .unwrap_or_default();
    let suggestions: Vec<String> = closest(&lower, &plausible, 5).into_iter().map(str::to_owned).collect();
    let place = path.map(|path| format!(" in `{path}`")).unwrap_or_default();
    let hint = if suggestions.is_empty() {
        "search for it: search(query, type='symbol') lists definitions by partial name".to_owned()
    } else {
        format!("closest names: {}", suggestions.join(", "))
    };
    let mut error = ToolError::new(ErrorCode::SymbolNotFound, format!("no definition of `{target}`{place}"), hint)
        .with_detail("closest", json!(suggestions))
        .with_next_call(NextCall::new("search", json!({"query": name, "type": "symbol"})));
    if let Some(first) = suggestions.first() {
        error = error.with_next_call(NextCall::new("search", json!({"query": first, "type": "symbol"})));
    }
    error
}

/// The most candidates an ambiguity lists (and a resolution names beside its choice).
const MAX_CANDIDATES: usize = 20;

/// `tool` with `original`'s arguments, aimed at one definition: its file, and its container
/// when it has one.
fn candidate_call(tool: &str, path: &RepoPath, definition: &Definition, original: &Map<String, Value>) -> NextCall {
    let mut arguments = original.clone();
    if tool == "read" {
        arguments.insert("mode".into(), Value::from("symbol"));
    }
    arguments.insert("path".into(), Value::from(path.as_str()));
    arguments.remove("cursor");
    if let Some(container) = &definition.container {
        let separator = Lang::from_path(path.as_str()).map_or("::", Lang::separator);
        arguments.insert("target".into(), Value::from(format!("{container}{separator}{}", definition.name)));
    }
    NextCall { tool: tool.to_owned(), arguments }
}

fn ambiguous(tool: &str, target: &str, found: &[(RepoPath, Definition)], original: &Map<String, Value>) -> ToolError {
    let mut listing = Vec::new();
    let mut error = ToolError::new(
        ErrorCode::AmbiguousSymbol,
        format!("`{target}` has {} definitions", found.len()),
        "pick one: each next call names its file (and container)",
    );
    for (path, definition) in found.iter().take(MAX_CANDIDATES) {
        error = error.with_next_call(candidate_call(tool, path, definition, original));
        listing.push(json!({
            "path": path.as_str(),
            "line": definition.span.start_line,
            "kind": definition.kind,
            "container": definition.container,
        }));
    }
    error.with_detail("candidates", Value::Array(listing))
}
