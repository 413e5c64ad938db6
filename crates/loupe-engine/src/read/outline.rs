//! Mode `outline`: the skeleton of a file, or of every source file under a directory, within
//! the budget (signatures, nesting, fields inline, runs of values by name).

use std::borrow::Cow;

use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError, text, tokens};
use loupe_index::{IndexState, Lang, SymbolKind};
use loupe_syntax::{Definition, Extract};
use serde_json::{Value, json};

use crate::engine::Engine;
use crate::response::{Face, Location, Outcome};

/// The skeleton of a file, or of every source file under a directory.
pub(crate) fn outline(
    engine: &Engine,
    target: &str,
    depth: usize,
    include_docs: bool,
    max_tokens: Option<usize>,
) -> Result<Outcome, ToolError> {
    let resolved =
        engine.root().resolve(target).map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
    let Some(real) = &resolved.real else {
        return Err(ToolError::new(
            ErrorCode::FileNotFound,
            format!("`{}` does not exist", resolved.path),
            "search for the file: search(query, type='file')",
        )
        .with_next_call(NextCall::new("search", json!({"query": resolved.path.file_name(), "type": "file"}))));
    };
    let budget = max_tokens.unwrap_or(engine.config().max_response_tokens).min(engine.config().max_response_tokens);
    if real.is_dir() {
        return Ok(directory_outline(
            engine,
            &resolved.path,
            depth,
            include_docs,
            budget.min(if max_tokens.is_some() { budget } else { 4000 }),
        ));
    }
    let bytes = engine
        .root()
        .read_indexed(&resolved.path, engine.config().max_file_bytes)
        .map_err(|error| ToolError::new(ErrorCode::IoError, error.to_string(), "check the file, then retry"))?;
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
    let definitions: Vec<Definition> = loupe_syntax::parse_with(lang, &decoded.text, Extract::Definitions)
        .definitions
        .into_iter()
        .filter(|d| d.depth < depth)
        .collect();
    let hash = ContentHash::of(&bytes);
    // The caller named the file, `target` and `meta` carry its path, hash and definition count:
    // the face spends its tokens on the skeleton (the path alone is 5 % of a small file's).
    let header = format!("outline · {} lines\n", decoded.total_lines());
    // The footer a cut adds, priced before the body is: the answer stays within the budget.
    let next_call = (depth > 1)
        .then(|| NextCall::new("read", json!({"mode": "outline", "target": resolved.path.as_str(), "depth": 1})));
    let footer = |cut: usize| {
        let mut footer = format!(
            "── {cut} more definitions cut by max_tokens={budget}; ask for depth=1, or read a part with mode='snippet'\n"
        );
        if let Some(call) = &next_call {
            footer.push_str(&format!("→ next: {}\n", call.render()));
        }
        footer
    };
    let reserve = tokens::count(&header) + tokens::count(&footer(definitions.len()));
    let (body, shown) = render_definitions(&definitions, include_docs, budget.saturating_sub(reserve));
    let truncated = shown < definitions.len();
    let mut face = header + &body;
    let mut next_calls = Vec::new();
    if truncated {
        face.push_str(&footer(definitions.len() - shown));
        next_calls.extend(next_call);
    }
    let full_tokens = tokens::count(&decoded.text);
    let mut outcome =
        Outcome::success("read", Some("outline".into()), Some(resolved.path.to_string()), Face::text(face));
    outcome.act.truncated = truncated;
    outcome.act.file_hash = Some(hash.to_string());
    outcome.act.next_calls = next_calls;
    outcome.location = Some(Location { file: resolved.path.to_string(), line: None, end_line: None });
    let detail = &mut outcome.detail;
    detail.insert("full_file_tokens".into(), Value::from(full_tokens));
    detail.insert("total_lines".into(), Value::from(decoded.total_lines()));
    detail.insert("definitions".into(), Value::from(definitions.len()));
    detail.insert("language".into(), Value::from(lang.name()));
    Ok(outcome)
}

/// Kinds that are listed inline on their parent's line instead of getting lines of their own.
fn is_member(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Field | SymbolKind::EnumMember | SymbolKind::Property)
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

/// Whether any definition nested in the one at `index` gets a line of its own.
fn has_listed_children(definitions: &[Definition], index: usize) -> bool {
    let parent = &definitions[index];
    definitions[index + 1..]
        .iter()
        .take_while(|child| child.span.start_line <= parent.span.end_line)
        .any(|child| child.depth > parent.depth && !rides_inline(child, parent))
}

/// One line per definition, `line<TAB>indent signature`, until `budget` tokens are used: the
/// line where the definition starts (its doc comment and attributes included), then a tab (the
/// `cat -n` convention), then two spaces per level of nesting. A definition whose nested
/// definitions are listed shows where it ends too (`start-end`); any other definition ends
/// before the next one listed, so its end would only repeat what the outline already bounds.
/// Fields, enum members and properties ride on their type's line (`{ a: u32, b }`), which is
/// what keeps an outline near a tenth of the file.
fn render_definitions(definitions: &[Definition], include_docs: bool, budget: usize) -> (String, usize) {
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
                "{}-{}\t{indent}{} {}: {shown}{more}\n",
                definition.span.start_line,
                last.span.end_line,
                run,
                plural(definition.kind)
            );
            let cost = tokens::count(&line);
            if used + cost > budget {
                return (out, index);
            }
            used += cost;
            out.push_str(&line);
            index += run;
            continue;
        }
        let mut members: Vec<Cow<'_, str>> = Vec::new();
        for (offset, child) in definitions[index + 1..].iter().enumerate() {
            if child.span.start_line > definition.span.end_line {
                break;
            }
            if rides_inline(child, definition) {
                inlined[index + 1 + offset] = true;
                members.push(clip(Cow::Borrowed(child.signature.as_str()), MEMBER_CHARS));
            }
        }
        let lines = if definition.span.end_line > definition.span.start_line && has_listed_children(definitions, index)
        {
            format!("{}-{}", definition.span.start_line, definition.span.end_line)
        } else {
            definition.span.start_line.to_string()
        };
        let mut line = format!("{lines}\t{indent}{}", outline_signature(definition));
        if !members.is_empty() {
            let shown: Vec<&str> = members.iter().take(INLINE_MEMBERS).map(|member| member.as_ref()).collect();
            let more = members.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(", +{more}") } else { String::new() };
            line.push_str(&format!(" {{ {}{more} }}", shown.join(", ")));
        }
        line.push('\n');
        if include_docs && let Some(doc) = definition.doc.as_deref().and_then(|doc| doc.lines().next()) {
            line.push_str(&format!("\t{indent}  // {doc}\n"));
        }
        let cost = tokens::count(&line);
        if used + cost > budget {
            return (out, index);
        }
        used += cost;
        out.push_str(&line);
        index += 1;
    }
    (out, definitions.len())
}

fn directory_outline(engine: &Engine, dir: &RepoPath, depth: usize, include_docs: bool, budget: usize) -> Outcome {
    // Files over the index's size limit are not in it: they are outlined too, up to the read
    // limit; what is over that is counted in the answer, never silently left out.
    let (files, oversized): (Vec<RepoPath>, Vec<loupe_vfs::WalkEntry>) =
        match engine.index_for_query().filter(|index| index.state() == IndexState::Ready) {
            Some(index) => (index.files().into_iter().map(|record| record.path).collect(), index.oversized()),
            None => {
                let walk = engine.root().walk_all(engine.walk_options());
                (walk.files.into_iter().map(|entry| entry.path).collect(), walk.oversized)
            }
        };
    let prefix = if dir.is_root() { String::new() } else { format!("{}/", dir.as_str()) };
    let in_scope = |path: &RepoPath| path.as_str().starts_with(&prefix) && Lang::from_path(path.as_str()).is_some();
    let read_limit = engine.config().max_file_bytes;
    let too_large = oversized.iter().filter(|entry| in_scope(&entry.path) && entry.size > read_limit).count();
    let mut sources: Vec<RepoPath> = files
        .into_iter()
        .chain(oversized.into_iter().filter(|entry| entry.size <= read_limit).map(|entry| entry.path))
        .filter(|path| in_scope(path))
        .collect();
    sources.sort();
    sources.dedup();
    let mut face = format!("{dir} · outline · {} source files\n", sources.len());
    if too_large > 0 {
        face.push_str(&format!(
            "({too_large} source file(s) over the {read_limit}-byte read limit not outlined; raise max_file_bytes)\n"
        ));
    }
    let mut used = tokens::count(&face) + 60;
    let mut shown_files = 0;
    let mut truncated = false;
    for path in &sources {
        let Some(lang) = Lang::from_path(path.as_str()) else { continue };
        let Ok(bytes) = engine.root().read_indexed(path, engine.config().max_file_bytes) else { continue };
        let Ok(decoded) = text::decode(&bytes) else { continue };
        let definitions: Vec<Definition> = loupe_syntax::parse_with(lang, &decoded.text, Extract::Definitions)
            .definitions
            .into_iter()
            .filter(|d| d.depth < depth)
            .collect();
        let section_header = format!("== {path} ({} lines)\n", decoded.total_lines());
        let header_cost = tokens::count(&section_header);
        if used + header_cost > budget {
            truncated = true;
            break;
        }
        let (body, shown) = render_definitions(&definitions, include_docs, budget - used - header_cost);
        face.push_str(&section_header);
        face.push_str(&body);
        used += header_cost + tokens::count(&body);
        shown_files += 1;
        if shown < definitions.len() {
            truncated = true;
            break;
        }
    }
    let mut next_calls = Vec::new();
    if truncated {
        face.push_str(&format!("── cut after {shown_files} of {} files by the token budget ({budget}); outline a subdirectory or one file\n", sources.len()));
        if depth > 1 {
            next_calls.push(NextCall::new("read", json!({"mode": "outline", "target": dir.display(), "depth": 1})));
        }
    }
    for call in &next_calls {
        face.push_str(&format!("→ next: {}\n", call.render()));
    }
    let mut outcome = Outcome::success("read", Some("outline".into()), Some(dir.to_string()), Face::text(face));
    outcome.act.truncated = truncated;
    outcome.act.next_calls = next_calls;
    outcome.detail.insert("files".into(), Value::from(sources.len()));
    outcome.detail.insert("files_shown".into(), Value::from(shown_files));
    outcome
}
