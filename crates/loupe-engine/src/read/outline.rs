//! Mode `outline`: the skeleton of a file, or of every source file under a directory, within
//! the budget (signatures, nesting, fields inline, runs of values by name).

use std::borrow::Cow;

use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError, text, tokens};
use loupe_index::{IndexState, Lang, SymbolKind};
use loupe_syntax::{Definition, Extract};
use serde_json::{Map, Value, json};

use crate::read::cursor::ReadCursor;
use crate::reasons::ReasonCode;
use crate::response::{Face, Location, MetadataLevel, Outcome, next_line};
use crate::workspace::Workspace;

/// An outline call, as `read.rs` hands it over.
pub(crate) struct OutlineRequest<'a> {
    pub(crate) target: &'a str,
    /// The commit to outline the file at (`revision`); `None`: the file on disk.
    pub(crate) revision: Option<&'a str>,
    pub(crate) depth: usize,
    pub(crate) include_docs: bool,
    /// Each definition's signature (`true`), its kind and name only (`false`), or whichever
    /// the file's size calls for (`None`: signatures while they fit in `NAMES_OVER` tokens).
    pub(crate) signatures: Option<bool>,
    pub(crate) max_tokens: Option<usize>,
    /// Where a cut outline continues (`ReadCursor::outline`).
    pub(crate) cursor: Option<&'a str>,
    /// The arguments as given, for the continuation call.
    pub(crate) original: &'a Map<String, Value>,
    pub(crate) metadata: Option<MetadataLevel>,
}

/// The token budget of an outline and where it came from (§3.5).
struct OutlineBudget {
    name: &'static str,
    tokens: usize,
    /// A server ceiling or default, not the caller, set it.
    from_server: bool,
    /// The caller asked above the ceiling.
    clamped: bool,
}

impl OutlineBudget {
    fn new(workspace: &Workspace, request: &OutlineRequest<'_>, directory: bool) -> OutlineBudget {
        let ceiling = workspace.config().max_response_tokens;
        match request.max_tokens {
            Some(asked) if asked <= ceiling => {
                OutlineBudget { name: "max_tokens", tokens: asked, from_server: false, clamped: false }
            }
            Some(_) => OutlineBudget { name: "max_response_tokens", tokens: ceiling, from_server: true, clamped: true },
            None if directory => OutlineBudget {
                name: "directory_outline_tokens",
                tokens: DIRECTORY_TOKENS.min(ceiling),
                from_server: true,
                clamped: false,
            },
            None => OutlineBudget { name: "max_response_tokens", tokens: ceiling, from_server: true, clamped: false },
        }
    }

    /// `BUDGET_SOFT_LIMIT` for a clamped cap; `PREVIEW_DEGRADED` when the response ceiling cut.
    fn codes(&self, truncated: bool) -> Vec<ReasonCode> {
        let mut codes = Vec::new();
        if self.clamped {
            codes.push(ReasonCode::BudgetSoftLimit);
        }
        if truncated && self.from_server && self.name == "max_response_tokens" {
            codes.push(ReasonCode::PreviewDegraded);
        }
        codes
    }

    fn codes_text(&self, truncated: bool) -> String {
        let codes = self.codes(truncated);
        if codes.is_empty() { String::new() } else { format!(" [{}]", crate::reasons::joined(&codes)) }
    }
}

/// A directory outline's page when the caller sets no `max_tokens`.
const DIRECTORY_TOKENS: usize = 4000;

/// The skeleton of a file, or of every source file under a directory.
pub(crate) fn outline(workspace: &Workspace, request: &OutlineRequest<'_>) -> Result<Outcome, ToolError> {
    let (depth, include_docs) = (request.depth, request.include_docs);
    let resolved = workspace
        .root()
        .resolve(request.target)
        .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
    // A file deleted since the revision is still outlined at it.
    let is_dir = resolved.real.as_ref().is_some_and(|real| real.is_dir());
    if resolved.real.is_none() && request.revision.is_none() {
        return Err(ToolError::new(
            ErrorCode::FileNotFound,
            format!("`{}` does not exist", resolved.path),
            "search for the file: search(query, type='file')",
        )
        .with_next_call(NextCall::new("search", json!({"query": resolved.path.file_name(), "type": "file"}))));
    }
    let cursor = match request.cursor {
        Some(text) => {
            Some(ReadCursor::decode(text).filter(|cursor| cursor.outline && cursor.is_for(&resolved.path)).ok_or_else(
                || {
                    ToolError::invalid_args(
                        "`cursor` is not a cursor loupe issued for this outline",
                        "pass the `next_cursor` of a cut outline of this target exactly as returned, or drop `cursor`",
                    )
                    .with_next_call(continuation(request, None))
                },
            )?)
        }
        None => None,
    };
    if is_dir {
        if request.revision.is_some() {
            return Err(ToolError::invalid_args(
                "an outline at a revision is of one file; the target is a directory",
                "outline the directory as it is now (drop `revision`), or name one of its files",
            )
            .with_next_call(NextCall::new("read", json!({"mode": "outline", "target": resolved.path.display()}))));
        }
        let budget = OutlineBudget::new(workspace, request, true);
        return directory_outline(workspace, request, &resolved.path, budget, cursor.as_ref());
    }
    let budget = OutlineBudget::new(workspace, request, false);
    // At a revision, the commit's blob of the same (checked) path; else the file on disk.
    let (bytes, at_label) = match request.revision {
        Some(spec) => {
            let at = super::revision::AtRevision::open(workspace, spec, request.original)?;
            (at.bytes(&resolved.path, workspace.config().max_file_bytes)?, Some(at.label))
        }
        None => (
            workspace
                .root()
                .read_indexed(&resolved.path, workspace.config().max_file_bytes)
                .map_err(|error| ToolError::new(ErrorCode::IoError, error.to_string(), "check the file, then retry"))?,
            None,
        ),
    };
    let decoded = text::decode(&bytes).map_err(|_| {
        ToolError::new(
            ErrorCode::BinaryFile,
            format!("`{}` is a binary file ({} bytes)", resolved.path, bytes.len()),
            "outline reads source files",
        )
    })?;
    let Some(lang) = Lang::from_path(resolved.path.as_str()) else {
        return Err(ToolError::invalid_args(
            format!("no outline for `{}`: not a language loupe parses", resolved.path),
            "read it with mode='file' instead",
        )
        .with_next_call(NextCall::new(
            "read",
            json!({"mode": "file", "target": resolved.path.as_str(), "limit": 100}),
        )));
    };
    let hash = ContentHash::of(&bytes);
    let definitions: Vec<Definition> = loupe_syntax::parse_with(lang, &decoded.text, Extract::Definitions)
        .definitions
        .into_iter()
        .filter(|d| d.depth < depth)
        .collect();
    // A large file's outline is its names by kind; signatures on request (or while they fit).
    let names = match request.signatures {
        Some(signatures) => !signatures,
        // Rendered only as far as the threshold: a minified file's 125,000 definitions stop
        // at the first few.
        None => render_definitions(&definitions, include_docs, false, NAMES_OVER, 0).1 < definitions.len(),
    };
    let key = outline_key(&bytes, depth, names);
    if let Some(cursor) = &cursor
        && !cursor.matches(&key)
    {
        return Err(changed_since_cursor(request, &resolved.path));
    }
    let start = cursor.as_ref().map_or(0, |cursor| (cursor.next_line - 1).min(definitions.len()));
    // The path leads, as in every read's header: a read by ref (`candidate_id`) or a later look at
    // the answer would not know the file otherwise.
    let mut header = format!("{} · outline · {} lines", resolved.path, decoded.total_lines());
    if let Some(label) = &at_label {
        header.push_str(&format!(" · at {label}"));
    }
    if names {
        header.push_str(NAMES_NOTE);
    }
    if start > 0 {
        header.push_str(&format!(" · from definition {} of {}", start + 1, definitions.len()));
    }
    header.push('\n');
    // The footer a cut adds, priced before the body is: the answer stays within the budget.
    let narrower = (depth > 1)
        .then(|| NextCall::new("read", json!({"mode": "outline", "target": resolved.path.as_str(), "depth": 1})));
    let footer = |cut: usize, calls: &[NextCall], continues: bool| {
        let how = if continues {
            "the cursor continues; depth=1 narrows, mode='snippet' reads a part"
        } else {
            "raise max_tokens, ask for depth=1, or read a part with mode='snippet'"
        };
        let mut footer = format!(
            "── {cut} more definitions cut by {}={}{}; {how}\n",
            budget.name,
            budget.tokens,
            budget.codes_text(true)
        );
        for call in calls {
            footer.push_str(&next_line(call));
        }
        footer
    };
    let placeholder = continuation(request, Some(&ReadCursor::outline(&key, &resolved.path, u32::MAX as usize, 0)));
    let priced: Vec<NextCall> = std::iter::once(placeholder).chain(narrower.clone()).collect();
    let reserve = tokens::count(&header)
        + [true, false]
            .map(|continues| tokens::count(&footer(definitions.len(), &priced, continues)))
            .into_iter()
            .max()
            .unwrap_or(0);
    let (body, shown) =
        render_definitions(&definitions, include_docs, names, budget.tokens.saturating_sub(reserve), start);
    let truncated = shown < definitions.len();
    let mut face = header + &body;
    let mut next_calls = Vec::new();
    let mut next_cursor = None;
    if truncated {
        // A page that showed nothing offers no cursor (it would stand still): a narrower outline.
        if shown > start {
            let cursor = ReadCursor::outline(&key, &resolved.path, shown + 1, 0);
            next_calls.push(continuation(request, Some(&cursor)));
            next_cursor = Some(cursor.encode());
        }
        next_calls.extend(narrower);
        face.push_str(&footer(definitions.len() - shown, &next_calls, next_cursor.is_some()));
    } else if budget.clamped {
        face.push_str(&format!(
            "── asked above a server ceiling, clamped to {}={}{}\n",
            budget.name,
            budget.tokens,
            budget.codes_text(false)
        ));
    }
    let full_tokens = tokens::count(&decoded.text);
    let mut outcome =
        Outcome::success("read", Some("outline".into()), Some(resolved.path.to_string()), Face::text(face));
    outcome.act.truncated = truncated;
    outcome.act.language = Some(lang.name());
    outcome.act.next_calls = next_calls;
    outcome.act.next_cursor = next_cursor;
    outcome.act.reason_codes = budget.codes(truncated);
    outcome.act.preview_degraded = !outcome.act.reason_codes.is_empty();
    outcome.location = Some(Location { file: resolved.path.to_string(), line: None, end_line: None });
    let detail = &mut outcome.detail;
    // The face names no hash (an outline is not what an edit quotes), so the compact structured
    // face carries none either: `full` has it, for a precondition (§5).
    detail.insert("file_hash".into(), Value::from(hash.to_string()));
    detail.insert("applied_limits".into(), json!({budget.name: budget.tokens, "depth": depth}));
    detail.insert("full_file_tokens".into(), Value::from(full_tokens));
    detail.insert("total_lines".into(), Value::from(decoded.total_lines()));
    detail.insert("definitions".into(), Value::from(definitions.len()));
    Ok(outcome.with_metadata(request.metadata))
}

/// The outline call that continues at `cursor` (or, without one, starts over).
fn continuation(request: &OutlineRequest<'_>, cursor: Option<&ReadCursor>) -> NextCall {
    let mut arguments = request.original.clone();
    for key in ["file_path", "filePath", "path"] {
        if let Some(value) = arguments.remove(key) {
            arguments.entry("target").or_insert(value);
        }
    }
    arguments.remove("cursor");
    if let Some(cursor) = cursor {
        arguments.insert("cursor".into(), Value::from(cursor.encode()));
    }
    NextCall { tool: "read".into(), arguments }
}

/// The cursor's outline is not this one any more: `CONFLICT`, with the outline from its start.
fn changed_since_cursor(request: &OutlineRequest<'_>, path: &RepoPath) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!("`{path}` (or the `depth` asked) changed since this outline cursor was issued"),
        "the outline is not the one the cursor paged; outline it again from the start",
    )
    .with_next_call(continuation(request, None))
    .with_detail("path", Value::from(path.as_str()))
}

/// Kinds that are listed inline on their parent's line instead of getting lines of their own.
fn is_member(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Field | SymbolKind::EnumMember | SymbolKind::Property)
}

/// Kinds a names outline shows by their bare name when they ride on their parent's line.
fn is_callable(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor)
}

/// Members shown inline before the rest is summarised as `+N`.
const INLINE_MEMBERS: usize = 12;

/// Value-like definitions (macros, constants, variables) whose signature is mostly a value.
fn is_value(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Macro | SymbolKind::Constant | SymbolKind::Variable)
}

/// A run of at least this many value-like siblings is listed by name on one line.
const VALUE_RUN: usize = 4;

/// Characters of a value-like definition's signature shown on its own line.
const VALUE_CHARS: usize = 72;

/// The signature as the outline shows it: clipped when a value makes it long.
fn outline_signature(definition: &Definition) -> Cow<'_, str> {
    let signature = Cow::Borrowed(definition.signature.as_str());
    if is_value(definition.kind) { clip(signature, VALUE_CHARS) } else { signature }
}

/// Past this many tokens of signatures, an outline asked for without `signatures` lists names.
const NAMES_OVER: usize = 200;

/// What a names-only outline's header adds: how to get the rest.
const NAMES_NOTE: &str = " · names (signatures=true adds lines)";

/// A definition as a names-only outline shows it: its signature up to its name (`def get`,
/// `pub struct Config`, `async def run`), or its kind and name when the signature does not
/// hold the name.
fn head(definition: &Definition) -> Cow<'_, str> {
    let signature = definition.signature.as_str();
    let name = definition.name.as_str();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
    let at = signature.match_indices(name).map(|(at, _)| at).find(|&at| {
        !name.is_empty()
            && !word(signature[..at].chars().next_back())
            && !word(signature[at + name.len()..].chars().next())
    });
    match at {
        Some(at) => Cow::Borrowed(signature[..at + name.len()].trim_start()),
        None => format!("{} {name}", definition.kind.as_str()).into(),
    }
}

/// Characters of a member shown inline (`types = { "AutoField": int, …`).
const MEMBER_CHARS: usize = 40;

/// `text` cut to `limit` characters on a character boundary, ending with `…` when cut.
fn clip(text: Cow<'_, str>, limit: usize) -> Cow<'_, str> {
    if text.chars().count() <= limit {
        return text;
    }
    let cut: String = text.chars().take(limit - 1).collect();
    format!("{}…", cut.trim_end()).into()
}

/// How many definitions from `index` on are value-like siblings with nothing inside them.
fn value_run(definitions: &[Definition], index: usize) -> usize {
    let first = &definitions[index];
    if !is_value(first.kind) {
        return 0;
    }
    // A function-like macro is an API: it keeps its own line, parameters and all.
    let function_like = |definition: &Definition| {
        definition.kind == SymbolKind::Macro && definition.signature.contains(&format!("{}(", definition.name))
    };
    definitions[index..]
        .iter()
        .take_while(|definition| {
            definition.depth == first.depth && definition.kind == first.kind && !function_like(definition)
        })
        .count()
}

fn plural(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::Macro => "macros",
        SymbolKind::Constant => "constants",
        _ => "variables",
    }
}

/// Whether a definition gets its own line, or rides inline on its parent's.
fn rides_inline(child: &Definition, parent: &Definition) -> bool {
    child.depth == parent.depth + 1 && is_member(child.kind) && !is_member(parent.kind)
}

/// Whether any definition nested in the one at `index` gets a line of its own. Definitions come
/// in document order, so the nested ones are the run that follows it deeper than it: the scan
/// stops at the first that is not (a minified file's 125,000 functions on one line made every
/// scan run to the end: ten seconds for one outline).
fn has_listed_children(definitions: &[Definition], index: usize) -> bool {
    let parent = &definitions[index];
    nested_in(definitions, index).any(|child| !rides_inline(child, parent))
}

/// The definitions nested in the one at `index`: those that follow it, deeper, within its lines.
fn nested_in(definitions: &[Definition], index: usize) -> impl Iterator<Item = &Definition> {
    let parent = &definitions[index];
    definitions[index + 1..]
        .iter()
        .take_while(move |child| child.depth > parent.depth && child.span.start_line <= parent.span.end_line)
}

/// One line per definition, `line indent signature`, until `budget` tokens are used: the
/// line where the definition starts (its doc comment and attributes included), then a space (a
/// tab cost a token more per line in a JSON string, where it is `\t`), then two spaces per
/// level of nesting. A definition whose nested
/// definitions are listed shows where it ends too (`start-end`); any other definition ends
/// before the next one listed, so its end would only repeat what the outline already bounds.
/// Fields, enum members and properties ride on their type's line (`{ a: u32, b }`), which is
/// what keeps an outline near a tenth of the file; in a names outline so do the methods and
/// any other nested definition with nothing inside it, by name (`class A { x }: get, pop`). A page that continues a cut outline starts at
/// `start`: what comes before it is walked, not shown, so members already inlined stay inline.
fn render_definitions(
    definitions: &[Definition],
    include_docs: bool,
    names: bool,
    budget: usize,
    start: usize,
) -> (String, usize) {
    let mut out = String::new();
    let mut used = 0;
    let mut inlined = vec![false; definitions.len()];
    let mut index = 0;
    while index < definitions.len() {
        let definition = &definitions[index];
        if inlined[index] {
            index += 1;
            continue;
        }
        let indent = "  ".repeat(definition.depth);
        // `#define A 1`, `#define B 2`, … : a map needs the names, not every value.
        let run = value_run(definitions, index);
        if run >= VALUE_RUN {
            let last = &definitions[index + run - 1];
            let names: Vec<&str> = definitions[index..index + run].iter().map(|d| d.name.as_str()).collect();
            let shown = names.iter().take(INLINE_MEMBERS * 2).copied().collect::<Vec<_>>().join(", ");
            let more = names.len().saturating_sub(INLINE_MEMBERS * 2);
            let more = if more > 0 { format!(", +{more}") } else { String::new() };
            let line = format!(
                "{}-{} {indent}{} {}: {shown}{more}\n",
                definition.span.start_line,
                last.span.end_line,
                run,
                plural(definition.kind)
            );
            if index >= start {
                let cost = tokens::count(&line);
                if used + cost > budget {
                    return (out, index);
                }
                used += cost;
                out.push_str(&line);
            }
            index += run;
            continue;
        }
        let mut members: Vec<Cow<'_, str>> = Vec::new();
        let mut named: Vec<Cow<'_, str>> = Vec::new();
        for (offset, child) in nested_in(definitions, index).enumerate() {
            let at = index + 1 + offset;
            if rides_inline(child, definition) {
                inlined[at] = true;
                // A names outline shows a member as its signature starts (`def name` for a
                // property, `x` for a field).
                members.push(if names {
                    head(child)
                } else {
                    clip(Cow::Borrowed(child.signature.as_str()), MEMBER_CHARS)
                });
            } else if names && child.depth == definition.depth + 1 && nested_in(definitions, at).next().is_none() {
                // A names outline lists a type's methods (and any nested definition with nothing
                // inside it) by name on the type's line: `read mode=symbol` opens one by name, and
                // a line each, numbered, cost three times the names (the token suite's `module`).
                inlined[at] = true;
                named.push(if is_callable(child.kind) { Cow::Borrowed(child.name.as_str()) } else { head(child) });
            }
        }
        let lines = if definition.span.end_line > definition.span.start_line && has_listed_children(definitions, index)
        {
            format!("{}-{}", definition.span.start_line, definition.span.end_line)
        } else {
            definition.span.start_line.to_string()
        };
        let head = if names { head(definition) } else { outline_signature(definition) };
        let mut line = format!("{lines} {indent}{head}");
        if !members.is_empty() {
            // Names are short: all of them. Signatures: the first few, then how many more.
            let inline = if names { members.len() } else { INLINE_MEMBERS };
            let shown: Vec<&str> = members.iter().take(inline).map(|member| member.as_ref()).collect();
            let more = members.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(", +{more}") } else { String::new() };
            line.push_str(&format!(" {{ {}{more} }}", shown.join(", ")));
        }
        if !named.is_empty() {
            line.push_str(&format!(": {}", named.join(", ")));
        }
        line.push('\n');
        if include_docs && let Some(doc) = definition.doc.as_deref().and_then(|doc| doc.lines().next()) {
            line.push_str(&format!("{:width$} {indent}  // {doc}\n", "", width = lines.len()));
        }
        if index >= start {
            let cost = tokens::count(&line);
            if used + cost > budget {
                return (out, index);
            }
            used += cost;
            out.push_str(&line);
        }
        index += 1;
    }
    (out, definitions.len())
}

fn directory_outline(
    workspace: &Workspace,
    request: &OutlineRequest<'_>,
    dir: &RepoPath,
    budget: OutlineBudget,
    cursor: Option<&ReadCursor>,
) -> Result<Outcome, ToolError> {
    let (depth, include_docs) = (request.depth, request.include_docs);
    // A directory's outline is its files' names by kind; signatures on request.
    let names = request.signatures != Some(true);
    // Files over the index's size limit are not in it: they are outlined too, up to the read
    // limit; what is over that is counted in the answer, never silently left out.
    let (files, oversized): (Vec<RepoPath>, Vec<loupe_vfs::WalkEntry>) =
        match workspace.index_for_query().filter(|index| index.state() == IndexState::Ready) {
            Some(index) => (index.files().into_iter().map(|record| record.path).collect(), index.oversized()),
            None => {
                let walk = workspace.walk_all();
                (walk.files.into_iter().map(|entry| entry.path).collect(), walk.oversized)
            }
        };
    let prefix = if dir.is_root() { String::new() } else { format!("{}/", dir.as_str()) };
    let in_scope = |path: &RepoPath| path.as_str().starts_with(&prefix) && Lang::from_path(path.as_str()).is_some();
    let read_limit = workspace.config().max_file_bytes;
    let too_large = oversized.iter().filter(|entry| in_scope(&entry.path) && entry.size > read_limit).count();
    let mut sources: Vec<RepoPath> = files
        .into_iter()
        .chain(oversized.into_iter().filter(|entry| entry.size <= read_limit).map(|entry| entry.path))
        .filter(|path| in_scope(path))
        .collect();
    sources.sort();
    sources.dedup();
    // A cursor pages the list of files (and the definitions of one): it holds the list's hash.
    let listing: String = sources.iter().map(|path| format!("{path}\n")).collect();
    let listing_hash = outline_key(listing.as_bytes(), depth, names);
    let (first_file, first_definition) = match cursor {
        Some(cursor) if !cursor.matches(&listing_hash) => return Err(changed_since_cursor(request, dir)),
        Some(cursor) => ((cursor.next_line - 1).min(sources.len()), cursor.window_end),
        None => (0, 0),
    };
    let mut face = format!("{dir} · outline · {} source files", sources.len());
    if names {
        face.push_str(NAMES_NOTE);
    }
    if first_file > 0 || first_definition > 0 {
        face.push_str(&format!(" · from file {}", first_file + 1));
    }
    face.push('\n');
    if too_large > 0 {
        face.push_str(&format!(
            "({too_large} source file(s) over the {read_limit}-byte read limit not outlined; raise max_file_bytes)\n"
        ));
    }
    let narrower =
        (depth > 1).then(|| NextCall::new("read", json!({"mode": "outline", "target": dir.display(), "depth": 1})));
    // "the cursor continues" only when there is one: a page that showed nothing has none.
    let footer = |shown_files: usize, calls: &[NextCall], continues: bool| {
        let how = if continues {
            "the cursor continues, or outline a subdirectory or one file"
        } else {
            "raise max_tokens, or outline a subdirectory or one file"
        };
        let mut footer = format!(
            "── cut after {shown_files} of {} files by {}={}{}; {how}\n",
            sources.len(),
            budget.name,
            budget.tokens,
            budget.codes_text(true)
        );
        for call in calls {
            footer.push_str(&next_line(call));
        }
        footer
    };
    let placeholder =
        continuation(request, Some(&ReadCursor::outline(&listing_hash, dir, u32::MAX as usize, u32::MAX as usize)));
    let priced: Vec<NextCall> = std::iter::once(placeholder).chain(narrower.clone()).collect();
    let priced_footer = [true, false].map(|continues| tokens::count(&footer(sources.len(), &priced, continues)));
    let mut used = tokens::count(&face) + priced_footer[0].max(priced_footer[1]);
    let mut shown_files = first_file;
    // Where the next page starts: (file index, definition index), when this one was cut.
    let mut cut_at: Option<(usize, usize)> = None;
    for (index, path) in sources.iter().enumerate().skip(first_file) {
        let Some(lang) = Lang::from_path(path.as_str()) else { continue };
        let Ok(bytes) = workspace.root().read_indexed(path, workspace.config().max_file_bytes) else { continue };
        let Ok(decoded) = text::decode(&bytes) else { continue };
        let definitions: Vec<Definition> = loupe_syntax::parse_with(lang, &decoded.text, Extract::Definitions)
            .definitions
            .into_iter()
            .filter(|d| d.depth < depth)
            .collect();
        let start = if index == first_file { first_definition.min(definitions.len()) } else { 0 };
        let section_header = if start > 0 {
            format!("== {path} ({} lines, from definition {})\n", decoded.total_lines(), start + 1)
        } else {
            format!("== {path} ({} lines)\n", decoded.total_lines())
        };
        let header_cost = tokens::count(&section_header);
        if used + header_cost > budget.tokens {
            cut_at = Some((index, start));
            break;
        }
        let (body, shown) =
            render_definitions(&definitions, include_docs, names, budget.tokens - used - header_cost, start);
        face.push_str(&section_header);
        face.push_str(&body);
        used += header_cost + tokens::count(&body);
        if shown < definitions.len() {
            cut_at = Some((index, shown));
            break;
        }
        shown_files = index + 1;
    }
    let truncated = cut_at.is_some();
    let mut next_calls = Vec::new();
    let mut next_cursor = None;
    if let Some((file, definition)) = cut_at {
        // A page that showed nothing offers no cursor (it would stand still).
        if (file, definition) != (first_file, first_definition) {
            let cursor = ReadCursor::outline(&listing_hash, dir, file + 1, definition);
            next_calls.push(continuation(request, Some(&cursor)));
            next_cursor = Some(cursor.encode());
        }
        next_calls.extend(narrower);
        face.push_str(&footer(shown_files, &next_calls, next_cursor.is_some()));
    } else if budget.clamped {
        face.push_str(&format!(
            "── asked above a server ceiling, clamped to {}={}{}\n",
            budget.name,
            budget.tokens,
            budget.codes_text(false)
        ));
    }
    let mut outcome = Outcome::success("read", Some("outline".into()), Some(dir.to_string()), Face::text(face));
    outcome.act.truncated = truncated;
    outcome.act.next_calls = next_calls;
    outcome.act.next_cursor = next_cursor;
    outcome.act.reason_codes = budget.codes(truncated);
    outcome.act.preview_degraded = !outcome.act.reason_codes.is_empty();
    outcome.detail.insert("applied_limits".into(), json!({budget.name: budget.tokens, "depth": depth}));
    outcome.detail.insert("files".into(), Value::from(sources.len()));
    outcome.detail.insert("files_shown".into(), Value::from(shown_files));
    Ok(outcome.with_metadata(request.metadata))
}

/// What an outline cursor pins: the bytes outlined (a file, or a directory's list of files),
/// the depth, which decides which definitions are counted, and whether it lists names only.
fn outline_key(bytes: &[u8], depth: usize, names: bool) -> ContentHash {
    let mut keyed = bytes.to_vec();
    keyed.extend_from_slice(format!("\0depth={depth}\0names={names}").as_bytes());
    ContentHash::of(&keyed)
}
