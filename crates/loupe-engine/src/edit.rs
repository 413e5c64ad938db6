//! The `edit` tool (§8.2): validates every edit of a call, computes each file's new bytes in
//! memory (matching, fuzzy matching, preconditions, line endings, syntax check), and hands
//! the journal one plan in which every file carries the hash it must still have.
//!
//! Nothing here writes: `loupe-vfs`'s journal is the only writer. A call whose edits do not
//! all validate writes nothing and lists every failing edit. Edits of one file apply in
//! order, each to the result of the previous one. After a successful apply the index is
//! updated for the touched paths before the reply leaves.

mod dangling;
mod failures;
mod lines;
mod parse;
mod render;
mod symbol_ops;
mod text_ops;

use std::collections::BTreeMap;

use loupe_core::text::Encoding;
use loupe_core::{ContentHash, ErrorCode, NextCall, RepoPath, ToolError};
use loupe_vfs::{FileChange, Plan};
use serde_json::json;

use crate::params::SyntaxCheck;
use crate::reasons::ReasonCode;
use crate::response::{MetadataLevel, Outcome};
use crate::workspace::Workspace;
use failures::{combine, decode_for_diff, syntax_count, syntax_status, vfs_error};
use render::render;
use text_ops::{apply_one, encode};

pub(crate) use failures::{apply_error, failed};
pub(crate) use parse::parse;

/// How much of a region a conflict or a failure shows.
const REGION_PREVIEW_CHARS: usize = 1200;

#[derive(Debug, Clone)]
enum Operation {
    Replace {
        old: String,
        new: String,
        replace_all: bool,
        expected_count: Option<usize>,
    },
    ReplaceLines {
        start: usize,
        end: usize,
        new: String,
    },
    Insert {
        line: usize,
        new: String,
    },
    Create {
        content: String,
        overwrite: bool,
    },
    Delete,
    /// A definition found by name (`symbol_ops`).
    Symbol {
        symbol: String,
        op: symbol_ops::SymbolOp,
    },
}

#[derive(Debug, Clone)]
struct EditSpec {
    index: usize,
    /// Required but for the symbol operations, which find the file by the symbol.
    path_input: Option<String>,
    operation: Operation,
    expected_hash: Option<ContentHash>,
    expected_text: Option<String>,
}

#[derive(Debug)]
struct Options {
    dry_run: bool,
    /// Every file's diff, however long (a dry run always shows them).
    diff: bool,
    create_missing_dirs: bool,
    fuzzy: bool,
    check_syntax: SyntaxCheck,
    metadata: Option<MetadataLevel>,
    /// The call's arguments as sent: next calls that repeat it with one change start from them.
    original: serde_json::Map<String, serde_json::Value>,
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

impl EditRequest {
    /// Whether an edit of the call names a symbol (and so needs the index).
    pub(crate) fn names_symbols(&self) -> bool {
        self.specs.iter().any(|spec| matches!(spec.operation, Operation::Symbol { .. }))
    }
}

/// Runs a parsed `edit` call.
pub(crate) fn run(workspace: &Workspace, request: &EditRequest) -> Outcome {
    let EditRequest { options, specs } = request;
    if workspace.config().read_only && !options.dry_run {
        return Outcome::failure(
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
    let _serial = workspace.edit_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match execute(workspace, options, specs.clone()) {
        Ok(outcome) => outcome,
        Err(error) => failures::failed("edit", None, error),
    }
    .with_metadata(options.metadata)
}

fn execute(workspace: &Workspace, options: &Options, specs: Vec<EditSpec>) -> Result<Outcome, ToolError> {
    let total_edits = specs.len();
    let mut files: BTreeMap<String, FileState> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let only_symbols = specs.iter().all(|spec| matches!(spec.operation, Operation::Symbol { .. }));
    let only_renames = specs
        .iter()
        .all(|spec| matches!(spec.operation, Operation::Symbol { op: symbol_ops::SymbolOp::Rename { .. }, .. }));
    let mut notes = symbol_ops::Notes { only_symbols, only_renames, ..Default::default() };
    for spec in specs {
        if let Operation::Symbol { symbol, op } = &spec.operation {
            let applied =
                symbol_ops::apply(workspace, &mut files, &mut order, &spec, symbol, op, &options.original, &mut notes);
            if let Err(error) = applied {
                failures.push(Failure { index: spec.index, path: spec.path_input.clone().unwrap_or_default(), error });
            }
            continue;
        }
        let path_input = spec.path_input.clone().unwrap_or_default();
        let state = match file_for(workspace, &mut files, &mut order, &path_input) {
            Ok(key) => files.get_mut(&key),
            Err(error) => {
                failures.push(Failure { index: spec.index, path: path_input, error });
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
    // The texts before and after, for what the call leaves behind (`dangling`).
    let texts: Vec<(RepoPath, Option<String>, Option<String>)> = encoded
        .iter()
        .map(|(state, new_bytes)| {
            (
                state.path.clone(),
                state.original.as_deref().map(decode_for_diff),
                new_bytes.as_deref().map(decode_for_diff),
            )
        })
        .collect();
    let mut reports = Vec::new();
    let mut changes = Vec::new();
    let mut reason_codes: Vec<ReasonCode> = Vec::new();
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
            if !reason_codes.contains(&ReasonCode::SyntaxErrorsIntroduced) {
                reason_codes.push(ReasonCode::SyntaxErrorsIntroduced);
            }
        }
        if state.fuzzy_used && !reason_codes.contains(&ReasonCode::FuzzyMatch) {
            reason_codes.push(ReasonCode::FuzzyMatch);
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
    let left = dangling::left_behind(
        workspace,
        &texts
            .iter()
            .map(|(path, before, after)| dangling::Change { path, before: before.as_deref(), after: after.as_deref() })
            .collect::<Vec<_>>(),
    );
    if !left.lines.is_empty() {
        reason_codes.push(ReasonCode::LeftDangling);
        notes.lines.extend(left.lines);
        notes.next_calls.extend(left.next_calls);
        notes.left_behind = left.places;
    }

    // A dry run's proposals stay here, so a cut diff of the reply can continue by a cursor.
    let proposals = if options.dry_run { std::mem::take(&mut changes) } else { Vec::new() };
    let mut transaction_id = None;
    if !options.dry_run && !changes.is_empty() {
        let Some(journal) = workspace.journal() else {
            return Err(ToolError::new(
                ErrorCode::IoError,
                "the edit journal could not be opened, so edits are disabled",
                "check that the index directory is writable (see the server log), then restart loupe",
            ));
        };
        let paths: Vec<RepoPath> = changes.iter().map(|change| change.path.clone()).collect();
        let applied = journal.apply(Plan { changes, create_dirs: options.create_missing_dirs }).map_err(apply_error)?;
        if let Some(index) = workspace.index() {
            index.update_paths(&paths);
        }
        transaction_id = Some(applied.transaction_id);
    }
    Ok(render(workspace, options, &reports, transaction_id, reason_codes, &proposals, notes))
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
    workspace: &Workspace,
    files: &mut BTreeMap<String, FileState>,
    order: &mut Vec<String>,
    input: &str,
) -> Result<String, ToolError> {
    let resolved = workspace.root().resolve(input).map_err(vfs_error)?;
    let key = resolved.path.to_string();
    if files.contains_key(&key) {
        return Ok(key);
    }
    if resolved.path.is_root() {
        return Err(ToolError::invalid_args("the workspace root is a directory, not a file", "name a file to edit"));
    }
    let link = workspace.root().canonical().join(resolved.path.as_str());
    if std::fs::symlink_metadata(&link).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        let target = resolved.real.as_ref().and_then(|real| real.strip_prefix(workspace.root().canonical()).ok());
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
        Some(_) => Some(workspace.root().read(&resolved, workspace.config().max_file_bytes).map_err(vfs_error)?.bytes),
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
