//! Parsing an `edit` call into its `EditRequest`: the options and every edit, validated as to shape,
//! every malformed edit listed at once.

use loupe_core::{ContentHash, ToolError};
use serde_json::Value;

use super::failures::combine;
use super::symbol_ops::SymbolOp;
use super::{EditRequest, EditSpec, Failure, Operation, Options};
use crate::args::{Args, Parsed, Rejected};
use crate::params::{self, EditOperation, RenameInclude, SyntaxCheck};

/// Parses an `edit` call's arguments into its request (every malformed edit listed).
pub(crate) fn parse(arguments: Value) -> Parsed<EditRequest> {
    Rejected::parsing("edit", arguments, |arguments, _| parse_request(arguments))
        .map(|(options, specs)| EditRequest { options, specs })
        .map_err(|(rejected, _)| rejected)
}

fn parse_request(arguments: Value) -> Result<(Options, Vec<EditSpec>), ToolError> {
    let original = arguments.as_object().cloned().unwrap_or_default();
    let mut args = Args::new(&params::EDIT, arguments)?;
    let edits = args.take_value("edits").unwrap_or(Value::Null);
    let dry_run = args.boolean("dry_run")?.unwrap_or(false);
    let diff = args.boolean("diff")?.unwrap_or(false);
    let create_missing_dirs = args.boolean("create_missing_dirs")?.unwrap_or(false);
    let fuzzy = args.boolean("fuzzy")?.unwrap_or(false);
    let check_syntax =
        args.choice("check_syntax")?.as_deref().and_then(SyntaxCheck::parse).unwrap_or(SyntaxCheck::Warn);
    let metadata = args.metadata()?;
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
    Ok((Options { dry_run, diff, create_missing_dirs, fuzzy, check_syntax, metadata, original }, specs))
}

fn parse_edit(index: usize, value: Value) -> Result<EditSpec, ToolError> {
    let mut args = Args::with_params("edit", params::EDIT_ITEM, "operation", value)?;
    let path_input = args.string("path")?;
    let operation = match args.choice("operation")?.as_deref().and_then(EditOperation::parse) {
        Some(operation) => operation,
        // Agents often leave it out; infer it from the fields when that is unambiguous.
        None if args.has("new_name") => EditOperation::RenameSymbol,
        None if args.has("new_body") || args.has("new_text") => EditOperation::ReplaceSymbol,
        None if args.has("old_string") => EditOperation::Replace,
        None if args.has("start_line") => EditOperation::ReplaceLines,
        None if args.has("line") => EditOperation::Insert,
        None if args.has("content") => EditOperation::Create,
        None => {
            return Err(ToolError::invalid_args(
                format!("edit #{}: `operation` is required", index + 1),
                format!("set `operation` to one of {}", EditOperation::CHOICES.join(", ")),
            ));
        }
    };
    // The table says which fields each operation takes (`only_for`).
    args.refuse_other_modes(operation.as_str()).map_err(|mut error| {
        error.message = format!("edit #{}: {}", index + 1, error.message);
        error
    })?;
    let symbol_op = matches!(
        operation,
        EditOperation::ReplaceSymbol
            | EditOperation::InsertBeforeSymbol
            | EditOperation::InsertAfterSymbol
            | EditOperation::DeleteSymbol
            | EditOperation::RenameSymbol
    );
    if path_input.is_none() && !symbol_op {
        return Err(ToolError::invalid_args(
            format!("edit #{}: `path` is required for operation='{operation}'", index + 1),
            "add \"path\": \"src/lib.rs\" (only the symbol operations find the file by the symbol)",
        ));
    }
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
    let operation = match operation {
        EditOperation::Replace => {
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
        EditOperation::ReplaceLines => {
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
        EditOperation::Insert => {
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
        EditOperation::Create => {
            let content = match args.string("content")? {
                Some(content) => content,
                None => required_text(&mut args, "new_string", index)?,
            };
            Operation::Create { content, overwrite: args.boolean("overwrite")?.unwrap_or(false) }
        }
        EditOperation::Delete => Operation::Delete,
        EditOperation::ReplaceSymbol
        | EditOperation::InsertBeforeSymbol
        | EditOperation::InsertAfterSymbol
        | EditOperation::DeleteSymbol
        | EditOperation::RenameSymbol => symbol_operation(&mut args, operation, index)?,
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

fn symbol_operation(args: &mut Args, operation: EditOperation, index: usize) -> Result<Operation, ToolError> {
    let symbol = args.string("symbol")?.filter(|symbol| !symbol.trim().is_empty()).ok_or_else(|| {
        ToolError::invalid_args(
            format!("edit #{}: `symbol` is required for operation='{operation}'", index + 1),
            "name the definition as read mode=symbol takes it: \"symbol\": \"Config.load\" (and `path` when the name is not unique)",
        )
    })?;
    let op = match operation {
        EditOperation::ReplaceSymbol => {
            let body = args.string("new_body")?;
            let text = args.string("new_text")?;
            if body.is_some() == text.is_some() {
                return Err(ToolError::invalid_args(
                    format!("edit #{}: replace_symbol takes `new_body` or `new_text`, exactly one", index + 1),
                    "new_body replaces the body only (head, decorators and doc stay); new_text the whole definition",
                ));
            }
            SymbolOp::Replace { body, text }
        }
        EditOperation::InsertBeforeSymbol | EditOperation::InsertAfterSymbol => SymbolOp::Insert {
            after: operation == EditOperation::InsertAfterSymbol,
            new: required_text(args, "new_string", index)?,
        },
        EditOperation::DeleteSymbol => SymbolOp::Delete { force: args.boolean("force")?.unwrap_or(false) },
        _ => {
            let new_name = args.string("new_name")?.map(|name| name.trim().to_owned()).unwrap_or_default();
            if new_name.is_empty() {
                return Err(ToolError::invalid_args(
                    format!("edit #{}: `new_name` is required for operation='rename_symbol'", index + 1),
                    "add \"new_name\": \"the_new_name\"",
                ));
            }
            let name_only = args.choice("include")?.as_deref().and_then(RenameInclude::parse).is_some();
            SymbolOp::Rename { new_name, name_only, in_comments: args.boolean("in_comments")?.unwrap_or(false) }
        }
    };
    Ok(Operation::Symbol { symbol: symbol.trim().to_owned(), op })
}
