//! The `edit` tool (§8.2): validates every edit of a call, computes each file's new bytes in
//! memory (matching, fuzzy matching, preconditions, line endings, syntax check), and hands
//! the journal one plan in which every file carries the hash it must still have.
//!
//! Nothing here writes: `loupe-vfs`'s journal is the only writer. A call whose edits do not
//! all validate writes nothing and lists every failing edit. Edits of one file apply in
//! order, each to the result of the previous one. After a successful apply the index is
//! updated for the touched paths before the reply leaves.

use std::collections::BTreeMap;

use loupe_core::text::{self, Encoding, LineEnding};
use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError, tokens};
use loupe_syntax::Lang;
use loupe_vfs::{ApplyError, FileChange, Plan, VfsError};
use serde_json::{Map, Value, json};

use crate::args::{Args, Parsed, Rejected};
use crate::engine::Engine;
use crate::errors::{Access, quoted};
use crate::params;
use crate::response::{MetadataLevel, Response, next_line};

/// How much of a region a conflict or a failure shows.
const REGION_PREVIEW_CHARS: usize = 1200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyntaxCheck {
    Warn,
    Block,
    Off,
}

#[derive(Debug, Clone)]
enum Operation {
    Replace { old: String, new: String, replace_all: bool, expected_count: Option<usize> },
    ReplaceLines { start: usize, end: usize, new: String },
    Insert { line: usize, new: String },
    Create { content: String, overwrite: bool },
    Delete,
}

#[derive(Debug, Clone)]
struct EditSpec {
    index: usize,
    path_input: String,
    operation: Operation,
    expected_hash: Option<ContentHash>,
    expected_text: Option<String>,
}

#[derive(Debug)]
struct Options {
    dry_run: bool,
    create_missing_dirs: bool,
    fuzzy: bool,
    check_syntax: SyntaxCheck,
    metadata: MetadataLevel,
}

/// One failing edit: which, where, why.
#[derive(Debug)]
struct Failure {
    index: usize,
    path: String,
    error: ToolError,
}

/// One file of the call as it is being edited in memory.
#[derive(Debug)]
struct FileState {
    path: RepoPath,
    /// The bytes on disk when the call started; `None` when the file does not exist.
    original: Option<Vec<u8>>,
    hash: Option<ContentHash>,
    /// The working text (decoded, without BOM); `None` until a text operation needs it.
    text: Option<String>,
    encoding: Encoding,
    bom: bool,
    ending: &'static str,
    /// Where the file will be: `None` = deleted.
    exists_after: bool,
    /// Set by `create`: the new bytes are the content as given.
    fuzzy_used: bool,
    /// Changed line range in the new text (1-based), for follow-up reads.
    touched: Option<(usize, usize)>,
    failed: bool,
}

/// The per-file part of a reply.
#[derive(Debug)]
struct FileReport {
    path: RepoPath,
    change: &'static str,
    old_hash: Option<ContentHash>,
    new_hash: Option<ContentHash>,
    diff: loupe_git::UnifiedDiff,
    syntax: &'static str,
    syntax_errors: usize,
    fuzzy_used: bool,
    touched: Option<(usize, usize)>,
}

/// An `edit` call, parsed once: its options and every edit, validated as to shape.
#[derive(Debug)]
pub(crate) struct EditRequest {
    options: Options,
    specs: Vec<EditSpec>,
}

/// Parses an `edit` call's arguments into its request (every malformed edit listed).
pub(crate) fn parse(arguments: Value) -> Parsed<EditRequest> {
    Rejected::parsing("edit", arguments, |arguments, _| parse_request(arguments))
        .map(|(options, specs)| EditRequest { options, specs })
        .map_err(|(rejected, _)| rejected)
}

/// Runs a parsed `edit` call.
pub(crate) fn run(engine: &Engine, request: &EditRequest) -> Response {
    let EditRequest { options, specs } = request;
    if engine.config().read_only && !options.dry_run {
        return Response::failure(
            "edit",
            None,
            None,
            ToolError::new(
                ErrorCode::ReadOnly,
                "this loupe server is read-only: edits are refused",
                "restart loupe without `read_only` (or `--read-only`) to edit; `dry_run: true` previews still work",
            ),
        );
    }
    // Edits to one root are serialised: validation and apply see one state of the disk.
    let _serial = engine.edit_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut response = match execute(engine, options, specs.clone()) {
        Ok(response) => response,
        Err(error) => Response::failure("edit", None, None, error),
    };
    response.metadata = options.metadata;
    response
}

fn parse_request(arguments: Value) -> Result<(Options, Vec<EditSpec>), ToolError> {
    let mut args = Args::new(&params::EDIT, arguments)?;
    let edits = args.take_value("edits").unwrap_or(Value::Null);
    let dry_run = args.boolean("dry_run")?.unwrap_or(false);
    let create_missing_dirs = args.boolean("create_missing_dirs")?.unwrap_or(false);
    let fuzzy = args.boolean("fuzzy")?.unwrap_or(false);
    let check_syntax = match args.choice("check_syntax")?.as_deref() {
        Some("block") => SyntaxCheck::Block,
        Some("off") => SyntaxCheck::Off,
        _ => SyntaxCheck::Warn,
    };
    let metadata = match args.choice("metadata")?.as_deref() {
        Some("minimal") => MetadataLevel::Minimal,
        _ => MetadataLevel::Standard,
    };
    let _session_id = args.string("session_id")?;
    args.finish()?;
    let list = match edits {
        Value::Array(list) if list.len() > params::MAX_LIST_ITEMS => {
            return Err(ToolError::invalid_args(
                format!("`edits` has {} edits; the limit is {}", list.len(), params::MAX_LIST_ITEMS),
                "split the change into several calls",
            ));
        }
        Value::Array(list) if !list.is_empty() => list,
        Value::Object(_) => vec![edits],
        _ => {
            return Err(ToolError::invalid_args(
                "`edits` is required for `edit`: a non-empty list of edits",
                r#"pass "edits": [{"path": "src/lib.rs", "operation": "replace", "old_string": "a", "new_string": "b"}]"#,
            ));
        }
    };
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    let total = list.len();
    for (index, value) in list.into_iter().enumerate() {
        match parse_edit(index, value) {
            Ok(spec) => specs.push(spec),
            Err(error) => errors.push(Failure { index, path: String::new(), error }),
        }
    }
    if !errors.is_empty() {
        return Err(combine(errors, total));
    }
    Ok((Options { dry_run, create_missing_dirs, fuzzy, check_syntax, metadata }, specs))
}

fn parse_edit(index: usize, value: Value) -> Result<EditSpec, ToolError> {
    let mut args = Args::with_params("edit", params::EDIT_ITEM, "operation", value)?;
    let path_input = args.required_string("path", "\"path\": \"src/lib.rs\"")?;
    let operation = match args.choice("operation")? {
        Some(operation) => operation,
        // Agents often leave it out; infer it from the fields when that is unambiguous.
        None if args.has("old_string") => "replace".into(),
        None if args.has("start_line") => "replace_lines".into(),
        None if args.has("line") => "insert".into(),
        None if args.has("content") => "create".into(),
        None => {
            return Err(ToolError::invalid_args(
                format!("edit #{}: `operation` is required", index + 1),
                "set `operation` to one of replace, replace_lines, insert, create, delete",
            ));
        }
    };
    let expected_hash = match args.string("expected_hash")? {
        Some(text) => Some(ContentHash::parse(&text).ok_or_else(|| {
            ToolError::invalid_args(
                format!(
                    "edit #{}: `expected_hash` must be the 16-hex `file_hash` of a read, got `{}`",
                    index + 1,
                    crate::errors::quoted(&text)
                ),
                "pass meta.file_hash from a read of the file, or remove `expected_hash`",
            )
        })?),
        None => None,
    };
    let expected_text = args.string("expected_text")?;
    let only = |args: &Args, keys: &[&str], owners: &str| -> Result<(), ToolError> {
        for key in keys {
            if args.has(key) {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `{key}` is only valid for operation={owners}. Remove it or switch operation.",
                        index + 1
                    ),
                    format!("remove `{key}`"),
                ));
            }
        }
        Ok(())
    };
    let operation = match operation.as_str() {
        "replace" => {
            only(&args, &["start_line", "end_line", "line", "content", "overwrite"], "replace_lines/insert/create")?;
            if expected_text.is_some() {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `expected_text` is only valid for operation='replace_lines' or 'insert'",
                        index + 1
                    ),
                    "`old_string` already says what must be there; remove `expected_text`",
                ));
            }
            let old = args.string("old_string")?.unwrap_or_default();
            if old.is_empty() {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `old_string` is required and must not be empty for operation='replace'",
                        index + 1
                    ),
                    "pass the exact text to replace; to add text use operation='insert', for a new file 'create'",
                ));
            }
            let new = required_text(&mut args, "new_string", index)?;
            let replace_all = args.boolean("replace_all")?.unwrap_or(false);
            let expected_count = args.integer("expected_count")?.map(|count| count as usize);
            if replace_all && expected_count.is_some() {
                return Err(ToolError::invalid_args(
                    format!("edit #{}: pass `replace_all` or `expected_count`, not both", index + 1),
                    "`expected_count` replaces exactly that many matches; `replace_all` replaces every match",
                ));
            }
            Operation::Replace { old, new, replace_all, expected_count }
        }
        "replace_lines" => {
            only(
                &args,
                &["old_string", "replace_all", "expected_count", "line", "content", "overwrite"],
                "replace/insert/create",
            )?;
            let start = args.integer("start_line")?;
            let end = args.integer("end_line")?;
            let (Some(start), Some(end)) = (start, end) else {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `start_line` and `end_line` are required for operation='replace_lines'",
                        index + 1
                    ),
                    "lines are 1-based and inclusive, e.g. \"start_line\": 10, \"end_line\": 12",
                ));
            };
            if start == 0 || end < start {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: lines {start}–{end} are not a range (1-based, inclusive, end >= start)",
                        index + 1
                    ),
                    "pass start_line >= 1 and end_line >= start_line",
                ));
            }
            let new = required_text(&mut args, "new_string", index)?;
            Operation::ReplaceLines { start: start as usize, end: end as usize, new }
        }
        "insert" => {
            only(
                &args,
                &["old_string", "replace_all", "expected_count", "start_line", "end_line", "content", "overwrite"],
                "replace/replace_lines/create",
            )?;
            let Some(line) = args.integer("line")? else {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `line` is required for operation='insert' (insert after it; 0 = at the top)",
                        index + 1
                    ),
                    "add \"line\": 0 to insert at the top",
                ));
            };
            let new = required_text(&mut args, "new_string", index)?;
            Operation::Insert { line: line as usize, new }
        }
        "create" => {
            only(
                &args,
                &["old_string", "replace_all", "expected_count", "start_line", "end_line", "line"],
                "replace/replace_lines/insert",
            )?;
            if expected_text.is_some() {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `expected_text` is only valid for operation='replace_lines' or 'insert'",
                        index + 1
                    ),
                    "remove `expected_text`",
                ));
            }
            let content = match args.string("content")? {
                Some(content) => content,
                None => required_text(&mut args, "new_string", index)?,
            };
            Operation::Create { content, overwrite: args.boolean("overwrite")?.unwrap_or(false) }
        }
        _ => {
            only(
                &args,
                &[
                    "old_string",
                    "new_string",
                    "replace_all",
                    "expected_count",
                    "start_line",
                    "end_line",
                    "line",
                    "content",
                    "overwrite",
                ],
                "replace/replace_lines/insert/create",
            )?;
            if expected_text.is_some() {
                return Err(ToolError::invalid_args(
                    format!(
                        "edit #{}: `expected_text` is only valid for operation='replace_lines' or 'insert'",
                        index + 1
                    ),
                    "use `expected_hash` to guard a delete",
                ));
            }
            Operation::Delete
        }
    };
    args.finish().map_err(|mut error| {
        error.message = format!("edit #{}: {}", index + 1, error.message);
        error
    })?;
    Ok(EditSpec { index, path_input, operation, expected_hash, expected_text })
}

fn required_text(args: &mut Args, key: &str, index: usize) -> Result<String, ToolError> {
    args.string(key)?.ok_or_else(|| {
        ToolError::invalid_args(
            format!("edit #{}: `{key}` is required (an empty string is allowed)", index + 1),
            format!("add `{key}`"),
        )
    })
}

fn execute(engine: &Engine, options: &Options, specs: Vec<EditSpec>) -> Result<Response, ToolError> {
    let total_edits = specs.len();
    let mut files: BTreeMap<String, FileState> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    for spec in specs {
        let state = match file_for(engine, &mut files, &mut order, &spec.path_input) {
            Ok(key) => files.get_mut(&key),
            Err(error) => {
                failures.push(Failure { index: spec.index, path: spec.path_input.clone(), error });
                continue;
            }
        };
        let Some(state) = state else { continue };
        if let Err(error) = apply_one(state, &spec, options.fuzzy) {
            state.failed = true;
            failures.push(Failure { index: spec.index, path: state.path.to_string(), error });
        }
    }

    // Encode every file whose edits all validated; then syntax-check and diff them, one file
    // per thread (parsing dominates the cost of an edit on a large file).
    let mut encoded: Vec<(&FileState, Option<Vec<u8>>)> = Vec::new();
    for key in &order {
        let state = &files[key];
        if state.failed {
            continue;
        }
        let new_bytes = if state.exists_after {
            match encode(state) {
                Ok(bytes) => Some(bytes),
                Err(error) => {
                    failures.push(Failure { index: usize::MAX, path: key.clone(), error });
                    continue;
                }
            }
        } else {
            None
        };
        if new_bytes.as_deref() != state.original.as_deref() {
            encoded.push((state, new_bytes));
        }
    }
    let analyses: Vec<Analysis> = std::thread::scope(|scope| {
        let handles: Vec<_> = encoded
            .iter()
            .map(|(state, new_bytes)| scope.spawn(move || analyze(state, new_bytes.as_deref(), options.check_syntax)))
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap_or_default()).collect()
    });
    let mut reports = Vec::new();
    let mut changes = Vec::new();
    let mut reason_codes: Vec<&'static str> = Vec::new();
    for ((state, new_bytes), analysis) in encoded.into_iter().zip(analyses) {
        if analysis.introduced {
            if options.check_syntax == SyntaxCheck::Block {
                failures.push(Failure {
                    index: usize::MAX,
                    path: state.path.to_string(),
                    error: ToolError::invalid_args(
                        format!(
                            "`{}` would not parse after this edit ({} syntax error(s)); check_syntax=block refuses it",
                            state.path, analysis.syntax_errors
                        ),
                        "fix `new_string`, or pass check_syntax=\"warn\" to apply it anyway",
                    ),
                });
                continue;
            }
            if !reason_codes.contains(&"SYNTAX_ERRORS_INTRODUCED") {
                reason_codes.push("SYNTAX_ERRORS_INTRODUCED");
            }
        }
        if state.fuzzy_used && !reason_codes.contains(&"FUZZY_MATCH") {
            reason_codes.push("FUZZY_MATCH");
        }
        reports.push(FileReport {
            path: state.path.clone(),
            change: match (state.original.is_some(), new_bytes.is_some()) {
                (false, _) => "created",
                (_, false) => "deleted",
                _ => "modified",
            },
            old_hash: state.hash.clone(),
            new_hash: new_bytes.as_deref().map(ContentHash::of),
            diff: analysis.diff,
            syntax: analysis.syntax,
            syntax_errors: analysis.syntax_errors,
            fuzzy_used: state.fuzzy_used,
            touched: state.touched,
        });
        changes.push(FileChange { path: state.path.clone(), expected: state.hash.clone(), new_bytes });
    }
    if !failures.is_empty() {
        return Err(combine(failures, total_edits));
    }

    // A dry run's proposals stay here, so a cut diff of the reply can continue by a cursor.
    let proposals = if options.dry_run { std::mem::take(&mut changes) } else { Vec::new() };
    let mut transaction_id = None;
    if !options.dry_run && !changes.is_empty() {
        let Some(journal) = engine.journal() else {
            return Err(ToolError::new(
                ErrorCode::IoError,
                "the edit journal could not be opened, so edits are disabled",
                "check that the index directory is writable (see the server log), then restart loupe",
            ));
        };
        let paths: Vec<RepoPath> = changes.iter().map(|change| change.path.clone()).collect();
        let applied = journal.apply(Plan { changes, create_dirs: options.create_missing_dirs }).map_err(apply_error)?;
        if let Some(index) = engine.index() {
            index.update_paths(&paths);
        }
        transaction_id = Some(applied.transaction_id);
    }
    Ok(render(engine, options, &reports, transaction_id, reason_codes, &proposals))
}

/// What checking one file's new bytes found.
#[derive(Debug, Default)]
struct Analysis {
    diff: loupe_git::UnifiedDiff,
    syntax: &'static str,
    syntax_errors: usize,
    /// The new text has syntax errors and the old one parsed cleanly (or did not exist).
    introduced: bool,
}

fn analyze(state: &FileState, new_bytes: Option<&[u8]>, check: SyntaxCheck) -> Analysis {
    let old_text = state.original.as_deref().map(decode_for_diff).unwrap_or_default();
    let new_text = new_bytes.map(decode_for_diff).unwrap_or_default();
    let (syntax, syntax_errors) = syntax_status(check, &state.path, new_bytes.is_some(), &new_text);
    let introduced = syntax == "errors" && (state.original.is_none() || syntax_count(&state.path, &old_text) == 0);
    let old_label = if state.original.is_some() { format!("a/{}", state.path) } else { "/dev/null".into() };
    let new_label = if new_bytes.is_some() { format!("b/{}", state.path) } else { "/dev/null".into() };
    let diff = loupe_git::unified_diff(&old_text, &new_text, &old_label, &new_label, 3);
    Analysis { diff, syntax, syntax_errors, introduced }
}

/// Loads a file into the call's working set on first use; returns its key.
fn file_for(
    engine: &Engine,
    files: &mut BTreeMap<String, FileState>,
    order: &mut Vec<String>,
    input: &str,
) -> Result<String, ToolError> {
    let resolved = engine.root().resolve(input).map_err(vfs_error)?;
    let key = resolved.path.to_string();
    if files.contains_key(&key) {
        return Ok(key);
    }
    if resolved.path.is_root() {
        return Err(ToolError::invalid_args("the workspace root is a directory, not a file", "name a file to edit"));
    }
    let link = engine.root().canonical().join(resolved.path.as_str());
    if std::fs::symlink_metadata(&link).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        let target = resolved.real.as_ref().and_then(|real| real.strip_prefix(engine.root().canonical()).ok());
        let mut error = ToolError::invalid_args(
            format!("`{}` is a symlink; loupe never writes through a symlink", resolved.path),
            match target {
                Some(target) => format!("edit its target `{}` instead", target.display()),
                None => "edit the file it points to instead".into(),
            },
        );
        if let Some(target) = target {
            error = error
                .with_next_call(NextCall::new("read", json!({"mode": "file", "target": target.to_string_lossy()})));
        }
        return Err(error);
    }
    let original = match &resolved.real {
        Some(_) => Some(engine.root().read(&resolved, engine.config().max_file_bytes).map_err(vfs_error)?.bytes),
        None => None,
    };
    let hash = original.as_deref().map(ContentHash::of);
    let state = FileState {
        path: resolved.path,
        original,
        hash,
        text: None,
        encoding: Encoding::Utf8,
        bom: false,
        ending: "\n",
        exists_after: resolved.real.is_some(),
        fuzzy_used: false,
        touched: None,
        failed: false,
    };
    files.insert(key.clone(), state);
    order.push(key.clone());
    Ok(key)
}

/// Applies one edit to the file's working text.
fn apply_one(state: &mut FileState, spec: &EditSpec, fuzzy: bool) -> Result<(), ToolError> {
    if let Some(expected) = &spec.expected_hash
        && state.hash.as_ref() != Some(expected)
    {
        return Err(conflict(state, expected, None, "the file changed since it was read"));
    }
    match &spec.operation {
        Operation::Create { content, overwrite } => {
            if state.exists_after && state.original.is_some() && !overwrite {
                let mut error = ToolError::new(
                    ErrorCode::Conflict,
                    format!("`{}` already exists; operation='create' does not overwrite", state.path),
                    "pass \"overwrite\": true to replace it, or edit it with replace/replace_lines",
                )
                .with_next_call(NextCall::new("read", json!({"mode": "file", "target": state.path.as_str()})))
                .with_detail("path", Value::from(state.path.as_str()));
                if let Some(hash) = &state.hash {
                    error = error.with_detail("actual_hash", Value::from(hash.as_str()));
                }
                return Err(error);
            }
            state.text = Some(content.clone());
            state.encoding = Encoding::Utf8;
            state.bom = false;
            state.exists_after = true;
            state.touched = Some((1, line_spans(content).len().max(1)));
            Ok(())
        }
        Operation::Delete => {
            if !state.exists_after {
                return Err(missing(state));
            }
            state.exists_after = false;
            state.text = None;
            Ok(())
        }
        _ => {
            if !state.exists_after {
                return Err(missing(state));
            }
            ensure_text(state)?;
            let ending = state.ending;
            let text = state.text.take().unwrap_or_default();
            let result = edit_text(state, &text, spec, fuzzy, ending);
            match result {
                Ok((new_text, touched)) => {
                    state.text = Some(new_text);
                    state.touched = Some(match state.touched {
                        Some((first, last)) => (first.min(touched.0), last.max(touched.1)),
                        None => touched,
                    });
                    Ok(())
                }
                Err(error) => {
                    state.text = Some(text);
                    Err(error)
                }
            }
        }
    }
}

/// The text operations. Returns the new text and the changed lines (1-based).
fn edit_text(
    state: &mut FileState,
    text: &str,
    spec: &EditSpec,
    fuzzy: bool,
    ending: &str,
) -> Result<(String, (usize, usize)), ToolError> {
    let spans = line_spans(text);
    let total = spans.len();
    match &spec.operation {
        Operation::Replace { old, new, replace_all, expected_count } => {
            let old = adapt_endings(old, ending);
            let new = adapt_endings(new, ending);
            let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(at, _)| at).collect();
            if starts.is_empty() {
                if fuzzy && let Some((start, end, replacement)) = fuzzy_match(text, &old, &new)? {
                    state.fuzzy_used = true;
                    let new_text = format!("{}{replacement}{}", &text[..start], &text[end..]);
                    let first = line_of(&spans, start);
                    return Ok((new_text, (first, first + replacement.matches('\n').count())));
                }
                return Err(no_match(state, text, &spans, &old, fuzzy));
            }
            let wanted = match (replace_all, expected_count) {
                (true, _) => starts.len(),
                (false, Some(count)) => *count,
                (false, None) => 1,
            };
            if starts.len() != wanted {
                return Err(ambiguous(state, text, &spans, &starts, wanted, expected_count.is_some()));
            }
            let first = line_of(&spans, starts[0]);
            let last = line_of(&spans, *starts.last().unwrap_or(&0)) + new.matches('\n').count();
            Ok((text.replace(old.as_str(), &new), (first, last)))
        }
        Operation::ReplaceLines { start, end, new } => {
            if *end > total {
                return Err(past_end(state, *end, total));
            }
            let region = &text[spans[start - 1].start..spans[end - 1].next];
            check_expected_text(state, spec, region, *start, *end)?;
            let mut replacement = adapt_endings(new, ending);
            let region_terminated = spans[end - 1].next > spans[end - 1].end;
            if !replacement.is_empty() && region_terminated && !ends_with_break(&replacement) {
                replacement.push_str(ending);
            }
            let new_text = format!("{}{replacement}{}", &text[..spans[start - 1].start], &text[spans[end - 1].next..]);
            let added = line_spans(&replacement).len();
            Ok((new_text, (*start, (*start + added).saturating_sub(1).max(*start))))
        }
        Operation::Insert { line, new } => {
            if *line > total {
                return Err(past_end(state, *line, total));
            }
            if *line > 0 {
                let span = spans[line - 1];
                check_expected_text(state, spec, &text[span.start..span.next], *line, *line)?;
            } else if spec.expected_text.is_some() {
                return Err(ToolError::invalid_args(
                    "`expected_text` with line=0 has no line to check",
                    "remove `expected_text`, or insert after a line and pass that line's text",
                ));
            }
            let mut insertion = adapt_endings(new, ending);
            if !insertion.is_empty() && !ends_with_break(&insertion) {
                insertion.push_str(ending);
            }
            let at = if *line == 0 { 0 } else { spans[line - 1].next };
            let mut new_text = String::with_capacity(text.len() + insertion.len() + 2);
            new_text.push_str(&text[..at]);
            if *line == total && total > 0 && spans[total - 1].next == spans[total - 1].end {
                // The file has no final newline: the last line needs one before the insertion.
                new_text.push_str(ending);
            }
            new_text.push_str(&insertion);
            new_text.push_str(&text[at..]);
            let added = line_spans(&insertion).len().max(1);
            Ok((new_text, (line + 1, line + added)))
        }
        Operation::Create { .. } | Operation::Delete => Ok((text.to_owned(), (1, 1))),
    }
}

fn check_expected_text(
    state: &FileState,
    spec: &EditSpec,
    region: &str,
    start: usize,
    end: usize,
) -> Result<(), ToolError> {
    let Some(expected) = &spec.expected_text else { return Ok(()) };
    if normalize_region(expected) == normalize_region(region) {
        return Ok(());
    }
    let hash = state.hash.clone().unwrap_or_else(|| ContentHash::of(b""));
    Err(conflict(state, &hash, Some((start, end, region)), "the text of the range is not `expected_text`"))
}

/// Text compared for `expected_text`: line endings unified, trailing line breaks ignored.
fn normalize_region(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").trim_end_matches('\n').to_owned()
}

/// Decodes the file for text edits; refuses what cannot be written back byte-exactly.
fn ensure_text(state: &mut FileState) -> Result<(), ToolError> {
    if state.text.is_some() {
        return Ok(());
    }
    let bytes = state.original.clone().unwrap_or_default();
    let size = bytes.len();
    let decoded = text::decode_owned(bytes).map_err(|_| {
        ToolError::new(
            ErrorCode::BinaryFile,
            format!("`{}` is a binary file ({size} bytes); text edits do not apply", state.path),
            "binary files can only be replaced whole (create with overwrite) or deleted",
        )
        .with_detail("size", Value::from(size))
    })?;
    if matches!(decoded.encoding, Encoding::Utf16Le | Encoding::Utf16Be) {
        return Err(ToolError::invalid_args(
            format!("`{}` is {}; loupe edits UTF-8 and Latin-1 files only", state.path, decoded.encoding.as_str()),
            "convert the file to UTF-8 first, or edit it with another tool",
        ));
    }
    state.ending = match decoded.line_ending {
        LineEnding::Crlf => "\r\n",
        LineEnding::Cr => "\r",
        LineEnding::Mixed => {
            let first = decoded.lines.first().map(|span| &decoded.text[span.end..span.next]).unwrap_or("\n");
            if first == "\r\n" {
                "\r\n"
            } else if first == "\r" {
                "\r"
            } else {
                "\n"
            }
        }
        LineEnding::Lf | LineEnding::None => "\n",
    };
    state.encoding = decoded.encoding;
    state.bom = decoded.bom;
    state.text = Some(decoded.text);
    Ok(())
}

/// The file's bytes for its working text, in its own encoding.
fn encode(state: &FileState) -> Result<Vec<u8>, ToolError> {
    let Some(text) = &state.text else { return Ok(state.original.clone().unwrap_or_default()) };
    let mut bytes = Vec::with_capacity(text.len() + 3);
    if state.bom {
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
    }
    match state.encoding {
        Encoding::Latin1 => {
            for character in text.chars() {
                let Ok(byte) = u8::try_from(u32::from(character)) else {
                    return Err(ToolError::invalid_args(
                        format!("`{}` is Latin-1 and `{character}` cannot be written in Latin-1", state.path),
                        "use only characters U+0000–U+00FF in this file, or convert it to UTF-8 first",
                    ));
                };
                bytes.push(byte);
            }
        }
        _ => bytes.extend_from_slice(text.as_bytes()),
    }
    Ok(bytes)
}

/// New text typed with `\n` takes the file's line ending (CRLF and CR files stay so).
fn adapt_endings(text: &str, ending: &str) -> String {
    if ending == "\n" {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n").replace('\n', ending)
}

fn ends_with_break(text: &str) -> bool {
    text.ends_with('\n') || text.ends_with('\r')
}

/// Whitespace- and indentation-tolerant match: the non-blank tokens of `old` in order, with
/// any run of whitespace between them. Used only when exactly one place matches; the
/// replacement is re-indented from `old`'s indentation to the file's.
fn fuzzy_match(text: &str, old: &str, new: &str) -> Result<Option<(usize, usize, String)>, ToolError> {
    let words: Vec<String> = old.split_whitespace().map(regex::escape).collect();
    if words.is_empty() {
        return Ok(None);
    }
    let Ok(pattern) = regex::Regex::new(&words.join(r"\s+")) else { return Ok(None) };
    let found: Vec<(usize, usize)> = pattern.find_iter(text).map(|m| (m.start(), m.end())).take(2).collect();
    if found.len() != 1 {
        return Ok(None);
    }
    let (start, end) = found[0];
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |at| at + 1);
    let file_indent: String = text[line_start..start].chars().take_while(|c| c.is_whitespace()).collect();
    let old_indent: String =
        old.trim_start_matches(['\n', '\r']).chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let mut replacement = String::new();
    for (number, line) in new.split_inclusive('\n').enumerate() {
        if number == 0 {
            replacement.push_str(line.trim_start_matches([' ', '\t']));
        } else if let Some(rest) = line.strip_prefix(old_indent.as_str()) {
            replacement.push_str(&file_indent);
            replacement.push_str(rest);
        } else {
            replacement.push_str(line);
        }
    }
    // The match ends at `old`'s last token, before any trailing whitespace: the file keeps
    // its own, so the replacement drops `new`'s.
    Ok(Some((start, end, replacement.trim_end_matches([' ', '\t', '\n', '\r']).to_owned())))
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    next: usize,
}

fn line_spans(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut spans = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                spans.push(Span { start, end: at, next: at + 1 });
                start = at + 1;
            }
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                spans.push(Span { start, end: at, next: at + 2 });
                at += 1;
                start = at + 1;
            }
            b'\r' => {
                spans.push(Span { start, end: at, next: at + 1 });
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    if start < bytes.len() {
        spans.push(Span { start, end: bytes.len(), next: bytes.len() });
    }
    spans
}

/// The 1-based line holding byte `offset`.
fn line_of(spans: &[Span], offset: usize) -> usize {
    spans.partition_point(|span| span.next <= offset) + 1
}

fn missing(state: &FileState) -> ToolError {
    ToolError::new(
        ErrorCode::FileNotFound,
        format!("`{}` does not exist", state.path),
        "create it with operation='create' (and create_missing_dirs for new directories)",
    )
}

fn past_end(state: &FileState, asked: usize, total: usize) -> ToolError {
    ToolError::invalid_args(
        format!("line {asked} is past the end of `{}` ({total} lines)", state.path),
        format!("lines are 1-based; the file has {total} lines"),
    )
    .with_next_call(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": state.path.as_str(), "start_line": total.saturating_sub(9).max(1), "end_line": total.max(1)}),
    ))
    .with_detail("total_lines", Value::from(total))
}

fn conflict(state: &FileState, expected: &ContentHash, region: Option<(usize, usize, &str)>, why: &str) -> ToolError {
    let actual = state.hash.as_ref().map_or_else(|| "missing".to_owned(), ToString::to_string);
    let (start, end, current) = match region {
        Some((start, end, text)) => (start, end, text.to_owned()),
        None => {
            let text = state.original.as_deref().map(decode_for_diff).unwrap_or_default();
            let spans = line_spans(&text);
            let last = spans.len().min(20);
            let current = if last == 0 { String::new() } else { text[..spans[last - 1].next].to_owned() };
            (1, last.max(1), current)
        }
    };
    let shown = loupe_core::text::truncate_at_char_boundary(&current, REGION_PREVIEW_CHARS);
    let mut error = ToolError::new(
        ErrorCode::Conflict,
        format!("`{}`: {why} (expected hash {expected}, actual {actual})", state.path),
        "re-read the region, then retry the edit with the new file_hash",
    )
    .with_next_call(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": state.path.as_str(), "start_line": start, "end_line": end}),
    ))
    .with_detail("path", Value::from(state.path.as_str()))
    .with_detail("expected_hash", Value::from(expected.as_str()))
    .with_detail("actual_hash", Value::from(actual))
    .with_detail(
        "region",
        json!({"start_line": start, "end_line": end, "current_text": shown, "truncated": shown.len() < current.len()}),
    );
    error.message.push_str(&format!("\ncurrent text of lines {start}–{end}:\n{}", numbered(shown, start)));
    error
}

fn no_match(state: &FileState, text: &str, spans: &[Span], old: &str, fuzzy: bool) -> ToolError {
    let wanted = old.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let mut scored: Vec<(f64, usize)> = spans
        .iter()
        .enumerate()
        .filter_map(|(number, span)| {
            let line = text[span.start..span.end].trim();
            (!line.is_empty()).then(|| (similarity(wanted, line), number + 1))
        })
        .filter(|(score, _)| *score > 0.3)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(3);
    let mut closest = Vec::new();
    let mut listing = String::new();
    for (score, number) in &scored {
        let span = spans[number - 1];
        let line = &text[span.start..span.end];
        listing.push_str(&format!("\n  {number:>5}│{}", loupe_core::text::truncate_at_char_boundary(line, 200)));
        closest.push(json!({"line": number, "text": quoted(line), "similarity": (score * 100.0).round() / 100.0}));
    }
    let mut message = format!("`old_string` was not found in `{}`", state.path);
    if listing.is_empty() {
        message.push_str(" (no similar line)");
    } else {
        message.push_str(&format!("; closest lines:{listing}"));
    }
    let hint = if fuzzy {
        "no unique whitespace-tolerant match either; copy the exact text from a fresh read"
    } else {
        "copy the exact text from a fresh read (whitespace counts), or pass fuzzy=true to tolerate whitespace and indentation"
    };
    let mut error = ToolError::new(ErrorCode::NoMatch, message, hint).with_detail("closest", Value::from(closest));
    if let Some((_, number)) = scored.first() {
        error = error.with_next_call(NextCall::new(
            "read",
            json!({"mode": "snippet", "target": state.path.as_str(), "start_line": number.saturating_sub(5).max(1), "end_line": (number + 5).min(spans.len())}),
        ));
    }
    error
}

fn ambiguous(
    state: &FileState,
    text: &str,
    spans: &[Span],
    starts: &[usize],
    wanted: usize,
    counted: bool,
) -> ToolError {
    let mut listing = String::new();
    let mut matches = Vec::new();
    for start in starts.iter().take(20) {
        let number = line_of(spans, *start);
        let span = spans[number - 1];
        let line = &text[span.start..span.end];
        listing.push_str(&format!("\n  {number:>5}│{}", loupe_core::text::truncate_at_char_boundary(line, 200)));
        let neighbour = |at: usize| spans.get(at).map(|span| quoted(&text[span.start..span.end]));
        let before = number.checked_sub(2).and_then(neighbour);
        matches.push(json!({"line": number, "text": quoted(line), "before": before, "after": neighbour(number)}));
    }
    if starts.len() > 20 {
        listing.push_str(&format!("\n  … and {} more", starts.len() - 20));
    }
    let message = if counted {
        format!("`old_string` matches {} times in `{}`, expected_count is {wanted}:{listing}", starts.len(), state.path)
    } else {
        format!("`old_string` matches {} times in `{}`:{listing}", starts.len(), state.path)
    };
    ToolError::new(
        ErrorCode::AmbiguousMatch,
        message,
        "add surrounding lines to `old_string` to make it unique, or pass replace_all=true / expected_count",
    )
    .with_detail("matches", Value::from(matches))
    .with_detail("count", Value::from(starts.len()))
}

/// Dice coefficient over character bigrams: cheap, and good at "almost the same line".
fn similarity(left: &str, right: &str) -> f64 {
    let bigrams = |text: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut pairs: Vec<(char, char)> = chars.windows(2).map(|pair| (pair[0], pair[1])).collect();
        pairs.sort_unstable();
        pairs
    };
    let (a, b) = (bigrams(left), bigrams(right));
    if a.is_empty() || b.is_empty() {
        return if left.trim() == right.trim() { 1.0 } else { 0.0 };
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

fn decode_for_diff(bytes: &[u8]) -> String {
    match text::decode(bytes) {
        Ok(decoded) => decoded.text,
        Err(_) => format!("(binary, {} bytes)\n", bytes.len()),
    }
}

fn syntax_count(path: &RepoPath, text: &str) -> usize {
    Lang::from_path(path.as_str()).map_or(0, |lang| loupe_syntax::error_count(lang, text))
}

fn syntax_status(check: SyntaxCheck, path: &RepoPath, exists_after: bool, new_text: &str) -> (&'static str, usize) {
    if check == SyntaxCheck::Off || !exists_after {
        return ("unchecked", 0);
    }
    let Some(lang) = Lang::from_path(path.as_str()) else { return ("unchecked", 0) };
    let errors = loupe_syntax::error_count(lang, new_text);
    if errors == 0 { ("ok", 0) } else { ("errors", errors) }
}

/// How many failing edits an error lists (the rest are counted): an answer stays bounded
/// however many edits a call sends.
const MAX_LISTED_FAILURES: usize = 20;

/// One error for every failing edit: the first one's code, each listed in the message.
fn combine(mut failures: Vec<Failure>, total: usize) -> ToolError {
    if failures.len() == 1 {
        let failure = failures.remove(0);
        let mut error = failure.error;
        error.message.push_str("\nnothing was written");
        let code = error.code.as_str();
        return error.with_detail(
            "failures",
            json!([{"edit": failure.index.checked_add(1), "path": quoted(&failure.path), "code": code}]),
        );
    }
    let code = failures[0].error.code;
    let mut message = format!("{} edits failed (of {total}); nothing was written:", failures.len());
    let mut next_calls = Vec::new();
    let mut listed = Vec::new();
    for failure in failures.iter().take(MAX_LISTED_FAILURES) {
        let label =
            if failure.index == usize::MAX { "file".to_owned() } else { format!("edit #{}", failure.index + 1) };
        let path = if failure.path.is_empty() { String::new() } else { format!(" ({})", quoted(&failure.path)) };
        message.push_str(&format!(
            "\n· {label}{path}: {} {}",
            failure.error.code,
            failure.error.message.replace('\n', "\n  ")
        ));
        for call in &failure.error.next_calls {
            if !next_calls.contains(call) {
                next_calls.push(call.clone());
            }
        }
        let mut detail = Map::new();
        detail.insert("edit".into(), json!(failure.index.checked_add(1).filter(|_| failure.index != usize::MAX)));
        detail.insert("path".into(), Value::from(quoted(&failure.path)));
        detail.insert("code".into(), Value::from(failure.error.code.as_str()));
        detail.insert("message".into(), Value::from(failure.error.message.as_str()));
        detail.insert("hint".into(), Value::from(failure.error.hint.as_str()));
        for (key, value) in &failure.error.details {
            detail.insert(key.clone(), value.clone());
        }
        listed.push(Value::Object(detail));
    }
    if failures.len() > MAX_LISTED_FAILURES {
        message
            .push_str(&format!("\n· … and {} more failing edit(s), not listed", failures.len() - MAX_LISTED_FAILURES));
    }
    let mut error = ToolError::new(code, message, "fix each failing edit listed above and send the whole call again");
    error.next_calls = next_calls;
    error.next_calls.truncate(MAX_LISTED_FAILURES);
    error = error.with_detail("failures", Value::from(listed));
    if failures.len() > MAX_LISTED_FAILURES {
        error = error.with_detail("failures_total", Value::from(failures.len()));
    }
    error
}

fn numbered(text: &str, first: usize) -> String {
    let mut out = String::new();
    for (offset, span) in line_spans(text).iter().enumerate() {
        out.push_str(&format!("  {:>5}│{}\n", first + offset, &text[span.start..span.end]));
    }
    out.trim_end_matches('\n').to_owned()
}

pub(crate) fn apply_error(error: ApplyError) -> ToolError {
    match error {
        ApplyError::Stale(stale) => {
            let mut message = String::from("files changed on disk while the edit was being made; nothing was written:");
            let mut error = ToolError::new(ErrorCode::Conflict, "", "re-read the files, then retry with fresh hashes");
            let mut listed = Vec::new();
            for file in &stale {
                let expected = file.expected.as_ref().map_or("missing".into(), ToString::to_string);
                let actual = file.actual.as_ref().map_or("missing".into(), ToString::to_string);
                message.push_str(&format!("\n· {} (expected {expected}, now {actual})", file.path));
                listed.push(json!({"path": file.path.as_str(), "expected_hash": expected, "actual_hash": actual}));
                if file.actual.is_some() {
                    error = error
                        .with_next_call(NextCall::new("read", json!({"mode": "file", "target": file.path.as_str()})));
                }
            }
            if let Some(first) = stale.first() {
                let expected = first.expected.as_ref().map_or("missing".into(), ToString::to_string);
                let actual = first.actual.as_ref().map_or("missing".into(), ToString::to_string);
                let current = first.actual_bytes.as_deref().map(decode_for_diff).unwrap_or_default();
                let spans = line_spans(&current);
                let last = spans.len().min(20);
                let shown = if last == 0 { "" } else { &current[..spans[last - 1].next] };
                let shown = loupe_core::text::truncate_at_char_boundary(shown, REGION_PREVIEW_CHARS);
                error = error
                    .with_detail("path", Value::from(first.path.as_str()))
                    .with_detail("expected_hash", Value::from(expected))
                    .with_detail("actual_hash", Value::from(actual))
                    .with_detail("region", json!({"start_line": 1, "end_line": last.max(1), "current_text": shown}));
            }
            error.message = message;
            error.with_detail("files", Value::from(listed))
        }
        ApplyError::Vfs(error) => vfs_error(error),
        ApplyError::DuplicatePath(path) => ToolError::new(
            ErrorCode::Internal,
            format!("the edit plan named `{path}` twice"),
            "this is a bug in loupe; please report it",
        ),
        ApplyError::NothingToDo { command } => ToolError::invalid_args(
            format!("nothing to {command}: the journal has no transaction to {command}"),
            "see what the journal keeps with manage {\"command\":\"history\"}",
        )
        .with_next_call(NextCall::new("manage", json!({"command": "history"}))),
        ApplyError::UnknownTransaction { id, reason } => ToolError::invalid_args(
            format!("cannot use transaction `{id}`: {reason}"),
            "pick a transaction_id from manage history",
        )
        .with_next_call(NextCall::new("manage", json!({"command": "history"}))),
    }
}

pub(crate) fn vfs_error(error: VfsError) -> ToolError {
    crate::errors::vfs_error(error, Access::Write)
}

/// The reply: one header, per file its status and bounded diff, then what was cut and how
/// to undo. Both faces are bounded by the response ceiling: the diffs share
/// `max_preview_chars` and the token ceiling, a file whose line no longer fits is counted, not
/// listed, and `meta.files` carries the same cut diffs the face shows (`diff_truncated`), with
/// a call that shows the rest of each cut diff.
fn render(
    engine: &Engine,
    options: &Options,
    reports: &[FileReport],
    transaction_id: Option<String>,
    reason_codes: Vec<&'static str>,
    proposals: &[FileChange],
) -> Response {
    let config = engine.config();
    let added: usize = reports.iter().map(|report| report.diff.added).sum();
    let removed: usize = reports.iter().map(|report| report.diff.removed).sum();
    let mut face = match (&transaction_id, options.dry_run) {
        (_, true) => format!("edit · dry run, nothing written · {} file(s) · +{added} -{removed}\n", reports.len()),
        (Some(id), false) => format!("edit · applied {id} · {} file(s) · +{added} -{removed}\n", reports.len()),
        (None, false) => "edit · nothing to change: the files already hold this text\n".to_owned(),
    };
    let mut budget_chars = config.max_preview_chars;
    let mut token_budget = config.max_response_tokens.saturating_sub(REPLY_FOOTER_TOKENS);
    let mut next_calls = Vec::new();
    let mut cuts = Vec::new();
    let mut files_json = Vec::new();
    let mut listed = 0;
    for report in reports {
        let old = report.old_hash.as_ref().map_or("∅".to_owned(), ToString::to_string);
        let new = report.new_hash.as_ref().map_or("∅".to_owned(), ToString::to_string);
        let syntax = match report.syntax {
            "errors" => format!("syntax errors: {}", report.syntax_errors),
            other => format!("syntax {other}"),
        };
        let fuzzy = if report.fuzzy_used { " · fuzzy match" } else { "" };
        let line = format!(
            "{} · {} · +{} -{} · {old} → {new} · {syntax}{fuzzy}\n",
            report.path, report.change, report.diff.added, report.diff.removed
        );
        let line_tokens = tokens::count(&line);
        if listed > 0 && line_tokens > token_budget {
            break;
        }
        token_budget = token_budget.saturating_sub(line_tokens);
        listed += 1;
        face.push_str(&line);
        let (shown, cut) = bounded(&report.diff.text, &mut budget_chars, &mut token_budget);
        face.push_str(shown);
        if cut {
            cuts.push(report.path.to_string());
            if next_calls.len() < MAX_REST_CALLS {
                next_calls.extend(rest_of_diff(engine, options, report, proposals, shown.lines().count()));
            }
        }
        let mut file_json = json!({
            "path": report.path.as_str(),
            "applied": transaction_id.is_some(),
            "change": report.change,
            "diff": shown,
            "added": report.diff.added,
            "removed": report.diff.removed,
            "old_hash": report.old_hash.as_ref().map(|hash| hash.as_str()),
            "new_hash": report.new_hash.as_ref().map(|hash| hash.as_str()),
            "syntax": report.syntax,
            "syntax_errors": report.syntax_errors,
            "fuzzy_used": report.fuzzy_used,
        });
        if cut {
            file_json["diff_truncated"] = Value::Bool(true);
        }
        files_json.push(file_json);
    }
    let unlisted = reports.len() - listed;
    if !cuts.is_empty() {
        let named: Vec<&str> = cuts.iter().take(5).map(String::as_str).collect();
        let more =
            if cuts.len() > named.len() { format!(" and {} more", cuts.len() - named.len()) } else { String::new() };
        let rest = if options.dry_run {
            "the calls below show the rest of each (diff_preview by cursor, the proposal is not resent)"
        } else {
            "the calls below read the edited regions; manage history lists the transaction"
        };
        face.push_str(&format!(
            "── diff cut to fit max_preview_chars={} / max_response_tokens={} for {}{more}; {rest} [DIFF_TRUNCATED]\n",
            config.max_preview_chars,
            config.max_response_tokens,
            named.join(", ")
        ));
    }
    if unlisted > 0 {
        let see = if transaction_id.is_some() {
            "manage history lists every file of the transaction"
        } else {
            "preview fewer files per call to see each"
        };
        face.push_str(&format!(
            "── {unlisted} more file(s) not listed (the reply reached max_response_tokens={}); {see} [DIFF_TRUNCATED]\n",
            config.max_response_tokens
        ));
        if transaction_id.is_some() {
            next_calls.push(NextCall::new("manage", json!({"command": "history"})));
        }
    }
    if reason_codes.contains(&"SYNTAX_ERRORS_INTRODUCED") {
        face.push_str(
            "── warning: this edit leaves syntax errors in a file that parsed cleanly [SYNTAX_ERRORS_INTRODUCED]\n",
        );
    }
    if reason_codes.contains(&"FUZZY_MATCH") {
        face.push_str(
            "── old_string did not match exactly; a unique whitespace-tolerant match was used [FUZZY_MATCH]\n",
        );
    }
    if let Some(id) = &transaction_id {
        next_calls.push(NextCall::new("manage", json!({"command": "undo", "transaction_id": id})));
    }
    for call in &next_calls {
        face.push_str(&next_line(call));
    }
    let truncated = !cuts.is_empty() || unlisted > 0;
    let mut all_codes: Vec<&str> = reason_codes.clone();
    if truncated {
        all_codes.push("DIFF_TRUNCATED");
    }
    let mut meta = Map::new();
    meta.insert("truncated".into(), Value::Bool(truncated));
    meta.insert("token_estimate".into(), Value::from(tokens::count(&face)));
    meta.insert("next_cursor".into(), Value::Null);
    meta.insert("dry_run".into(), Value::Bool(options.dry_run));
    meta.insert("transaction_id".into(), transaction_id.clone().map(Value::from).unwrap_or(Value::Null));
    meta.insert("files".into(), Value::from(files_json));
    if unlisted > 0 {
        meta.insert("files_total".into(), Value::from(reports.len()));
    }
    meta.insert("fuzzy_used".into(), Value::Bool(reports.iter().any(|report| report.fuzzy_used)));
    meta.insert("reason_codes".into(), json!(all_codes));
    meta.insert("next_calls".into(), serde_json::to_value(&next_calls).unwrap_or_default());
    Response {
        ok: true,
        tool: "edit",
        mode: None,
        target: reports.first().map(|report| report.path.to_string()),
        meta,
        text: None,
        location: None,
        error: None,
        face,
        metadata: options.metadata,
    }
}

/// What the reply keeps free of the token ceiling for its footer and next calls.
const REPLY_FOOTER_TOKENS: usize = 500;

/// The most calls a reply offers for the rest of cut diffs.
const MAX_REST_CALLS: usize = 3;

/// How to see the rest of a cut diff: a dry run's proposal continues through `diff_preview`
/// against the file on disk by a cursor (the server keeps the proposal, the call does not
/// carry it); an applied edit's new text is read where it changed.
fn rest_of_diff(
    engine: &Engine,
    options: &Options,
    report: &FileReport,
    proposals: &[FileChange],
    shown_lines: usize,
) -> Option<NextCall> {
    if options.dry_run {
        let proposal = proposals.iter().find(|change| change.path == report.path)?;
        let new = proposal.new_bytes.as_deref()?;
        let old = engine.root().resolve(report.path.as_str()).ok().and_then(|resolved| {
            resolved.real.as_ref()?;
            engine.root().read(&resolved, engine.config().max_file_bytes).ok().map(|file| file.bytes)
        });
        return Some(crate::diff_preview::proposal_continuation(
            engine,
            report.path.as_str(),
            old.as_deref(),
            new,
            shown_lines + 1,
        ));
    }
    let ((first, last), _) = (report.touched?, report.new_hash.as_ref()?);
    Some(NextCall::new(
        "read",
        json!({"mode": "snippet", "target": report.path.as_str(), "start_line": first, "end_line": last.max(first)}),
    ))
}

/// Takes whole lines of `text` while the character and token budgets last.
fn bounded<'a>(text: &'a str, chars_left: &mut usize, tokens_left: &mut usize) -> (&'a str, bool) {
    let mut end = 0;
    let mut used_chars = 0;
    for line in text.split_inclusive('\n') {
        let count = line.chars().count();
        if used_chars + count > *chars_left {
            break;
        }
        used_chars += count;
        end += line.len();
    }
    let mut shown = &text[..end];
    let mut token_count = tokens::count(shown);
    while token_count > *tokens_left && !shown.is_empty() {
        let keep = shown[..shown.len() - 1].rfind('\n').map_or(0, |at| at + 1);
        shown = &shown[..keep];
        token_count = tokens::count(shown);
    }
    *chars_left -= shown.chars().count();
    *tokens_left -= token_count;
    (shown, shown.len() < text.len())
}
