//! The tool surface as MCP sees it: names, descriptions, input and output schemas and
//! annotations (§4). Hand-written JSON, because every token of `tools/list` sits in every
//! agent's context; the whole surface stays under 3,000 tokens.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The tools `tools/list` returns, in order.
pub fn tools() -> Vec<Tool> {
    vec![read_tool(), search_tool(), analyze_tool(), edit_tool(), manage_tool()]
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

const READ_DESCRIPTION: &str = "Read code with a budget. Lines are 1-based, inclusive, prefixed `  N│` (not part of the content). \
Modes: file (paged: offset/limit), snippet (start_line..end_line or line_range \"10-20\", plus context_lines), \
symbol (target: name, Type.method or Type::method; path disambiguates), outline (signatures only, file or directory), \
diff_preview (file or directory vs HEAD/INDEX; content: proposed text vs HEAD/INDEX/WORKTREE). \
A cut result ends with the exact next call (cursor). meta.file_hash is the edit precondition. \
file/symbol/outline need a ref from search (candidate_id, bundle_id or a copied next_calls entry); windows up to 200 lines do not. \
Lines already sent unchanged come back as one reference line (fresh: true resends). \
Errors carry a code, a hint and ready-to-run next_calls.";

const SEARCH_DESCRIPTION: &str = "Find code before reading it. type auto infers: glob/path -> file, trailing / -> directory, \
identifier -> symbol (then text), else text. text is literal; regex is explicit. Ranked (definitions first), paged \
(showing X-Y of Z, cursor); each hit has a candidate_id and the top hits come with ready-to-run reads.";

const ANALYZE_DESCRIPTION: &str = "Relationships of a file or symbol, as a tree (meta.nodes/edges). \
dependencies: imports (downstream) and importers (upstream); impact: every file depending on it, nearest first; \
calls: callers/callees; references: uses grouped by containing symbol; types: supertypes/subtypes; \
data_flow: target function.variable (or variable + path): defs and uses in order, followed into callees. \
Edges carry confidence exact|scoped|name_only. Ambiguous symbols list candidates as next_calls.";

const EDIT_DESCRIPTION: &str = "Change files: all edits apply atomically or none (each failing edit is listed). \
Each edit: path + operation: replace (old_string, new_string; one exact match unless replace_all/expected_count), \
replace_lines (start_line..end_line, new_string; \"\" deletes), insert (after line; 0 = top), create (content; overwrite), delete. \
Guards: expected_hash (file_hash of a read), expected_text (current text of the lines). Line endings are kept. \
Returns diffs and a transaction_id for manage undo.";

const MANAGE_DESCRIPTION: &str = "Workspace and session. undo / redo the last edit transaction (or transaction_id; \
a file changed since is a CONFLICT unless force), history (recent transactions); status: root, index, session budget; \
metrics: session metrics and analytics counters; guidance: how to work cheaply and the reason-code registry.";

fn edit_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "operation": {"type": "string", "enum": ["replace", "replace_lines", "insert", "create", "delete"]},
                        "old_string": {"type": "string"},
                        "new_string": {"type": "string"},
                        "replace_all": {"type": "boolean"},
                        "expected_count": {"type": "integer", "minimum": 1},
                        "start_line": {"type": "integer", "minimum": 1},
                        "end_line": {"type": "integer", "minimum": 1},
                        "line": {"type": "integer", "minimum": 0},
                        "content": {"type": "string"},
                        "overwrite": {"type": "boolean"},
                        "expected_hash": {"type": "string"},
                        "expected_text": {"type": "string"}
                    },
                    "required": ["path"]
                }
            },
            "dry_run": {"type": "boolean", "description": "diffs only, nothing written"},
            "create_missing_dirs": {"type": "boolean"},
            "fuzzy": {"type": "boolean", "description": "tolerate whitespace/indentation if the match is unique"},
            "check_syntax": {"type": "string", "enum": ["warn", "block", "off"]},
            "metadata": {"type": "string", "enum": ["minimal", "standard"]},
            "session_id": {"type": "string"}
        },
        "required": ["edits"]
    });
    Tool::new("edit", EDIT_DESCRIPTION, object(input))
        .with_title("Edit files")
        .with_raw_output_schema(object(envelope_schema()))
        .with_annotations(
            ToolAnnotations::with_title("Edit files")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        )
}

fn manage_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": ["undo", "redo", "history", "status", "guidance", "metrics", "reindex"]},
            "transaction_id": {"type": "string", "description": "undo/redo"},
            "force": {"type": "boolean", "description": "undo/redo over later changes"},
            "limit": {"type": "integer", "minimum": 1, "description": "history"},
            "metadata": {"type": "string", "enum": ["minimal", "standard"]},
            "session_id": {"type": "string"}
        },
        "required": ["command"]
    });
    Tool::new("manage", MANAGE_DESCRIPTION, object(input))
        .with_title("Manage workspace")
        .with_raw_output_schema(object(envelope_schema()))
        .with_annotations(
            ToolAnnotations::with_title("Manage workspace")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        )
}

fn analyze_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "target": {"type": "string", "description": "file path or symbol (name, Type::method)"},
            "mode": {"type": "string", "enum": ["dependencies", "impact", "calls", "references", "types", "data_flow"]},
            "target_type": {"type": "string", "enum": ["auto", "file", "symbol"]},
            "direction": {"type": "string", "enum": ["upstream", "downstream", "both"]},
            "max_depth": {"type": "integer", "minimum": 1, "description": "default: calls 3, dependencies 1, impact 20, types 5, data_flow 3"},
            "max_nodes": {"type": "integer", "minimum": 1, "maximum": 500},
            "path": {"type": "string", "description": "file defining the target"},
            "metadata": {"type": "string", "enum": ["minimal", "standard"]},
            "session_id": {"type": "string"}
        },
        "required": ["target", "mode"]
    });
    Tool::new("analyze", ANALYZE_DESCRIPTION, object(input))
        .with_title("Analyze relationships")
        .with_raw_output_schema(object(envelope_schema()))
        .with_annotations(
            ToolAnnotations::with_title("Analyze relationships")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

fn search_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "type": {"type": "string", "enum": ["auto", "text", "regex", "symbol", "file", "directory"]},
            "path": {"type": "string", "description": "subtree or glob"},
            "glob": {"type": "string"},
            "exclude": {"type": "array", "items": {"type": "string"}},
            "file_types": {"type": "array", "items": {"type": "string"}, "description": "extensions, e.g. [\"rs\"]"},
            "kinds": {"type": "array", "items": {"type": "string"}, "description": "symbol kinds: function, method, class, struct..."},
            "case_sensitive": {"type": "boolean", "description": "default: smart case"},
            "whole_word": {"type": "boolean"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 100},
            "cursor": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0},
            "output": {"type": "string", "enum": ["matches", "files", "count"]},
            "context_lines": {"type": "integer", "minimum": 0, "maximum": 5},
            "max_preview_chars": {"type": "integer", "minimum": 20},
            "metadata": {"type": "string", "enum": ["minimal", "standard"]},
            "session_id": {"type": "string"}
        },
        "required": ["query"]
    });
    Tool::new("search", SEARCH_DESCRIPTION, object(input))
        .with_title("Search code")
        .with_raw_output_schema(object(envelope_schema()))
        .with_annotations(
            ToolAnnotations::with_title("Search code")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

fn read_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["file", "snippet", "symbol", "outline", "diff_preview"]},
            "target": {"type": "string", "description": "Path relative to the root (absolute inside it, ./x and file:// also work)"},
            "offset": {"type": "integer", "minimum": 0, "description": "file: first line"},
            "limit": {"type": "integer", "minimum": 1, "description": "file: lines (max 300)"},
            "start_line": {"type": "integer", "minimum": 1, "description": "snippet"},
            "end_line": {"type": "integer", "minimum": 1, "description": "snippet"},
            "line_range": {"type": "string", "description": "snippet: \"10-20\""},
            "context_lines": {"type": "integer", "minimum": 0, "description": "snippet: lines around"},
            "cursor": {"type": "string", "description": "next_cursor of a cut read"},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_bytes": {"type": "integer", "minimum": 1},
            "max_lines": {"type": "integer", "minimum": 1},
            "max_preview_chars": {"type": "integer", "minimum": 1},
            "preview_mode": {"type": "string", "enum": ["none", "snippet"], "description": "none: metadata only"},
            "metadata": {"type": "string", "enum": ["minimal", "standard"]},
            "path": {"type": "string", "description": "symbol: disambiguating file"},
            "include_context": {"type": "integer", "minimum": 0, "description": "symbol"},
            "body": {"type": "boolean", "description": "symbol"},
            "depth": {"type": "integer", "minimum": 1, "description": "outline"},
            "include_docs": {"type": "boolean", "description": "outline"},
            "against": {"type": "string", "enum": ["HEAD", "INDEX", "WORKTREE"], "description": "diff_preview baseline"},
            "content": {"type": "string", "description": "diff_preview: proposed text"},
            "session_id": {"type": "string"},
            "candidate_id": {"type": "string"},
            "bundle_id": {"type": "string"},
            "fresh": {"type": "boolean", "description": "resend lines already sent"}
        },
        "required": ["mode", "target"]
    });
    Tool::new("read", READ_DESCRIPTION, object(input))
        .with_title("Read code")
        .with_raw_output_schema(object(envelope_schema()))
        .with_annotations(
            ToolAnnotations::with_title("Read code")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// The §3.3 envelope, loose enough to hold every tool's success and error alike.
fn envelope_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "tool": {"type": "string"},
            "mode": {"type": "string"},
            "target": {"type": "string"},
            "meta": {"type": "object"},
            "text": {"type": "string"},
            "location": {"type": "object"},
            "error": {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "hint": {"type": "string"},
                    "next_calls": {"type": "array"}
                },
                "required": ["code", "message", "hint"]
            }
        },
        "required": ["ok", "meta"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §4: descriptions and schemas of the whole surface stay under 3,000 tokens.
    #[test]
    fn tools_list_stays_under_its_token_budget() {
        let listed = serde_json::to_string(&tools()).unwrap();
        let tokens = loupe_core::tokens::count(&listed);
        assert!(tokens < 3000, "tools/list costs {tokens} tokens");
    }

    #[test]
    fn every_tool_is_annotated_and_declares_its_output() {
        for tool in tools() {
            let annotations = tool.annotations.as_ref().unwrap();
            assert!(annotations.read_only_hint.is_some() && annotations.destructive_hint.is_some());
            assert!(annotations.idempotent_hint.is_some());
            assert_eq!(annotations.open_world_hint, Some(false));
            assert!(tool.output_schema.is_some());
        }
    }
}
