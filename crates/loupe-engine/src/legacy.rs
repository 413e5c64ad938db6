//! The legacy tool names (§12; the design notes they come from are in docs/findings.md): one table
//! from each old name to the tool it became, the arguments the old name implies (`mode`), and the
//! renames of its old argument names, applied once at the dispatch boundary (`dispatch.rs`). A
//! legacy call is translated into the call it stands for and then runs as that call: the same
//! parser, gate, budgets and session.
//!
//! What the old name adds to the answer: `LEGACY_TOOL_DEPRECATED` in the reason codes, one
//! `── deprecated` line in the text face naming the replacement, a count per name for `manage
//! metrics`, and, where the intent-tools design describes the old tool's result, those fields in
//! the structured face too (`LegacyShape`), so an old client keeps working. With `legacy_tools =
//! "disabled"` (`LOUPE_DISABLE_LEGACY=1`) the call is answered with `LEGACY_TOOL_DISABLED` and
//! the translated call in `next_calls`.
//!
//! Plain data, like the parameter table: `loupe-mcp` lists the names from here when
//! `legacy_tools = "listed"`; nothing here knows MCP. The five tools' own schemas do not grow:
//! the old names and their camelCase arguments are accepted on the old names only.

use std::collections::BTreeMap;
use std::sync::Mutex;

use loupe_core::{ErrorCode, NextCall, ToolError};
use serde_json::{Map, Value, json};

use crate::args::kind_of;
use crate::errors::quoted;
use crate::params::{Param, ParamType, boolean, choice, integer, string};
use crate::reasons::ReasonCode;
use crate::response::{Outcome, Part};

/// One legacy name and how it becomes a call of one of the five tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyTool {
    pub name: &'static str,
    /// The tool it became.
    pub tool: &'static str,
    /// What it did, for `tools/list` in listed mode (the replacement is named there too).
    pub description: &'static str,
    /// Arguments the old name implies, set on every call; a caller naming another value is
    /// refused (another mode is another call of the new tool).
    pub fixed: &'static [(&'static str, &'static str)],
    /// Arguments set when the call leaves them out (`dry_run_diff` diffs the whole tree).
    pub defaults: &'static [(&'static str, &'static str)],
    /// Old argument names, each renamed to the new tool's name. Two old names for one new
    /// name (`name`, `symbol_id`) may not both be given.
    pub renames: &'static [(&'static str, &'static str)],
    /// Renames inside each object of `edits` (`edit_code`).
    pub edit_renames: &'static [(&'static str, &'static str)],
    /// An old argument whose values choose the new tool's selector (`read_code`'s `view`).
    pub choice: Option<LegacyChoice>,
    /// The old parameters, as `tools/list` shows them in listed mode. The new tool's own
    /// parameters are accepted too.
    pub params: &'static [Param],
    /// The old tool's result fields the structured face carries besides loupe's own.
    pub shape: LegacyShape,
}

/// An old argument whose value picks the new tool's selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyChoice {
    pub name: &'static str,
    /// The new tool's selector (`mode`).
    pub selector: &'static str,
    /// (old value, new value)
    pub values: &'static [(&'static str, &'static str)],
}

/// Which old result a legacy name's structured face reproduces (the intent-tools design's);
/// `Unified` for the unified-read design's wrappers, which answer as `read` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyShape {
    Unified,
    /// `content`, `metadata: {lines, language, path}`, `truncated`.
    ReadCode,
    /// `results: [{type, path, score, context, line, candidate_id}]`, `inferredType`.
    SearchProject,
    /// `nodes: [{id, type, name, path, line}]`, `edges: [{source, target, relation, …}]`,
    /// `resolvedTarget: {type, path, name, line}`.
    AnalyzeRelationship,
    /// `success`, `results: [{filePath, applied, diff?, error?}]`, `transactionId`.
    EditCode,
    /// `output` (the text), `data` (the command's structured detail).
    ManageProject,
}

const PATH: Param = string("path", "file path").required();

const READ_FILE: &[Param] = &[PATH, integer("offset", 0, "first line"), integer("limit", 1, "lines (max 300)")];
const READ_SYMBOL: &[Param] = &[
    string("name", "symbol name, Type.method or Type::method"),
    string("symbol_id", "an id from search"),
    string("path", "file defining the symbol"),
];
const GET_SNIPPET: &[Param] = &[
    PATH,
    integer("start_line", 1, "first line"),
    integer("end_line", 1, "last line"),
    integer("context_lines", 0, "lines around"),
];
const DRY_RUN_DIFF: &[Param] = &[
    string("path", "file or directory (default: the whole tree)"),
    string("against", "baseline: HEAD (default), INDEX, WORKTREE or a revision"),
    string("content", "proposed text").content(),
];
const READ_CODE: &[Param] = &[
    string("filePath", "file path").required(),
    choice("view", &["full", "skeleton", "fragment"], "full (default), skeleton (signatures) or fragment (lineRange)"),
    string("lineRange", "fragment: \"10-20\""),
];
const SEARCH_PROJECT: &[Param] = &[
    string("query", "search term, glob or question").required(),
    choice("type", &["auto", "file", "symbol", "directory"], "default auto"),
    integer("maxResults", 1, "default 20"),
];
const ANALYZE_RELATIONSHIP: &[Param] = &[
    string("target", "file path or symbol").required(),
    choice("targetType", &["auto", "file", "symbol"], "default auto"),
    choice("mode", &["impact", "dependencies", "calls", "data_flow", "types"], "which relationship").required(),
    choice("direction", &["upstream", "downstream", "both"], "default both"),
    integer("maxDepth", 1, "default: calls 3, dependencies 1, impact 20"),
];
const EDIT_CODE_ITEM: &[Param] = &[
    string("filePath", "file to change").required(),
    choice("operation", &["replace", "create", "delete"], "what to do").required(),
    string("targetString", "replace: the exact text to replace").content(),
    string("replacementString", "replace: the new text; create: the file").content(),
];
const EDIT_CODE: &[Param] = &[
    Param::new("edits", ParamType::EditList(EDIT_CODE_ITEM), "all apply or none").required(),
    boolean("dryRun", "diffs only"),
    boolean("createMissingDirectories", "create parent directories"),
    boolean("ignoreMistakes", "whitespace-tolerant match when unique (edits stay all-or-nothing)"),
];
const MANAGE_PROJECT: &[Param] = &[choice("command", &["undo", "redo", "guidance", "status"], "what to do").required()];

const NO_PAIRS: &[(&str, &str)] = &[];

/// Every legacy name, in the order listed mode shows them: the unified-read design's wrappers,
/// then the five intent tools (docs/findings.md).
pub const LEGACY_TOOLS: &[LegacyTool] = &[
    LegacyTool {
        name: "read_file",
        tool: "read",
        description: "Read a file, paged (offset/limit).",
        fixed: &[("mode", "file")],
        defaults: NO_PAIRS,
        renames: &[("path", "target")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: READ_FILE,
        shape: LegacyShape::Unified,
    },
    LegacyTool {
        name: "read_symbol",
        tool: "read",
        description: "Read a symbol's source by name or id.",
        fixed: &[("mode", "symbol")],
        defaults: NO_PAIRS,
        renames: &[("name", "target"), ("symbol_id", "target")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: READ_SYMBOL,
        shape: LegacyShape::Unified,
    },
    LegacyTool {
        name: "get_snippet",
        tool: "read",
        description: "Read a window of lines.",
        fixed: &[("mode", "snippet")],
        defaults: NO_PAIRS,
        renames: &[("path", "target")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: GET_SNIPPET,
        shape: LegacyShape::Unified,
    },
    LegacyTool {
        name: "dry_run_diff",
        tool: "read",
        description: "Diff a file or the tree against HEAD/INDEX, or proposed content against it.",
        fixed: &[("mode", "diff_preview")],
        defaults: &[("target", ".")],
        renames: &[("path", "target")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: DRY_RUN_DIFF,
        shape: LegacyShape::Unified,
    },
    LegacyTool {
        name: "read_code",
        tool: "read",
        description: "Read a file: full, skeleton or fragment (lineRange).",
        fixed: NO_PAIRS,
        defaults: NO_PAIRS,
        renames: &[("filePath", "target"), ("lineRange", "line_range")],
        edit_renames: NO_PAIRS,
        choice: Some(LegacyChoice {
            name: "view",
            selector: "mode",
            values: &[("full", "file"), ("skeleton", "outline"), ("fragment", "snippet")],
        }),
        params: READ_CODE,
        shape: LegacyShape::ReadCode,
    },
    LegacyTool {
        name: "search_project",
        tool: "search",
        description: "Search files, symbols, directories or text.",
        fixed: NO_PAIRS,
        defaults: NO_PAIRS,
        renames: &[("maxResults", "max_results")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: SEARCH_PROJECT,
        shape: LegacyShape::SearchProject,
    },
    LegacyTool {
        name: "analyze_relationship",
        tool: "analyze",
        description: "Dependencies, impact, calls, data flow or types of a file or symbol.",
        fixed: NO_PAIRS,
        defaults: NO_PAIRS,
        renames: &[("targetType", "target_type"), ("maxDepth", "max_depth")],
        edit_renames: NO_PAIRS,
        choice: None,
        params: ANALYZE_RELATIONSHIP,
        shape: LegacyShape::AnalyzeRelationship,
    },
    LegacyTool {
        name: "edit_code",
        tool: "edit",
        description: "Atomic multi-file edits with dry run.",
        fixed: NO_PAIRS,
        defaults: NO_PAIRS,
        renames: &[
            ("dryRun", "dry_run"),
            ("createMissingDirectories", "create_missing_dirs"),
            ("ignoreMistakes", "fuzzy"),
        ],
        edit_renames: &[("filePath", "path"), ("targetString", "old_string"), ("replacementString", "new_string")],
        choice: None,
        params: EDIT_CODE,
        shape: LegacyShape::EditCode,
    },
    LegacyTool {
        name: "manage_project",
        tool: "manage",
        description: "Undo, redo, guidance, status.",
        fixed: NO_PAIRS,
        defaults: NO_PAIRS,
        renames: NO_PAIRS,
        edit_renames: NO_PAIRS,
        choice: None,
        params: MANAGE_PROJECT,
        shape: LegacyShape::ManageProject,
    },
];

/// The legacy name `name`, when it is one.
pub fn legacy_tool(name: &str) -> Option<&'static LegacyTool> {
    LEGACY_TOOLS.iter().find(|legacy| legacy.name == name)
}

/// The longest replacement call a `LEGACY_TOOL_DISABLED` answer repeats, in bytes: an
/// `edit_code` carrying whole files is answered with the renames instead of echoing them.
const MAX_REPLACEMENT_BYTES: usize = 16 * 1024;

impl LegacyTool {
    /// The arguments of the call this one stands for: old names renamed, the implied ones set.
    /// Values are left to the new tool's parser; only what the old name itself decides (its
    /// implied mode, `view`, two old names for one parameter) is refused here, with the call
    /// that works without the offending argument as the next call.
    pub(crate) fn translate(&self, arguments: Value) -> Result<Map<String, Value>, ToolError> {
        let map = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_args(
                    format!("arguments for `{}` must be a JSON object, got {}", self.name, kind_of(&other)),
                    format!("pass the parameters as an object: {}", self.param_names().join(", ")),
                )
                .with_next_call(guidance()));
            }
        };
        self.translate_map(map.clone()).map_err(|refused| {
            let (error, offending) = *refused;
            let mut repaired = map;
            repaired.remove(offending);
            let retry = match self.translate_map(repaired) {
                Ok(arguments) => NextCall::new(self.tool, Value::Object(arguments)),
                Err(_) => guidance(),
            };
            error.with_next_call(retry)
        })
    }

    /// `translate` on an object; a refusal names the argument (as given) it is about.
    fn translate_map(&self, mut map: Map<String, Value>) -> Result<Map<String, Value>, Box<(ToolError, &'static str)>> {
        map.retain(|_, value| !value.is_null());
        for (old, new) in self.renames {
            rename(&mut map, self.name, old, new).map_err(|error| Box::new((error, *old)))?;
        }
        if let Some(choice) = &self.choice {
            let selected = self.choose(choice, &mut map).map_err(|error| Box::new((error, choice.name)))?;
            fix(&mut map, self, choice.selector, selected).map_err(|error| Box::new((error, choice.selector)))?;
        }
        for (key, value) in self.fixed {
            fix(&mut map, self, key, value).map_err(|error| Box::new((error, *key)))?;
        }
        for (key, value) in self.defaults {
            map.entry(*key).or_insert_with(|| Value::from(*value));
        }
        if !self.edit_renames.is_empty()
            && let Some(Value::Array(edits)) = map.get_mut("edits")
        {
            for edit in edits.iter_mut() {
                if let Value::Object(edit) = edit {
                    self.translate_edit(edit).map_err(|error| Box::new((error, "edits")))?;
                }
            }
        }
        Ok(map)
    }

    /// One object of `edit_code`'s `edits`: `filePath`, `targetString`, `replacementString`. A
    /// `create`'s `replacementString` is the new file (the intent-tools design), `edit`'s
    /// `content`.
    fn translate_edit(&self, edit: &mut Map<String, Value>) -> Result<(), ToolError> {
        if edit.get("operation").and_then(Value::as_str) == Some("create") {
            rename(edit, self.name, "replacementString", "content")?;
        }
        for (old, new) in self.edit_renames {
            rename(edit, self.name, old, new)?;
        }
        Ok(())
    }

    /// The selector value `choice` picks: the old value mapped, else the first (a
    /// `read_code` with a `lineRange` but no `view` is a fragment).
    fn choose(&self, choice: &LegacyChoice, map: &mut Map<String, Value>) -> Result<&'static str, ToolError> {
        let olds: Vec<&str> = choice.values.iter().map(|(old, _)| *old).collect();
        let Some(value) = map.remove(choice.name) else {
            let fragment = self.name == "read_code" && map.contains_key("line_range");
            return Ok(if fragment { "snippet" } else { choice.values[0].1 });
        };
        let text = value.as_str().unwrap_or_default();
        choice.values.iter().find(|(old, _)| *old == text).map(|(_, new)| *new).ok_or_else(|| {
            ToolError::invalid_args(
                format!("`{}` must be one of {}, got `{}`", choice.name, olds.join("|"), quoted(&value.to_string())),
                format!("set `{}` to one of: {}", choice.name, olds.join(", ")),
            )
        })
    }

    /// The old parameters' names (for messages).
    pub(crate) fn param_names(&self) -> Vec<&'static str> {
        self.params.iter().map(|param| param.name).collect()
    }

    /// The replacement in words: `read (mode=outline)`, `search`.
    pub(crate) fn replacement(&self, arguments: Option<&Map<String, Value>>) -> String {
        let selector = crate::params::tool(self.tool).and_then(|spec| spec.selector);
        let chosen = selector.and_then(|key| arguments?.get(key)?.as_str().map(|value| (key, value)));
        match chosen {
            Some((key, value)) => format!("{} ({key}={value})", self.tool),
            None => self.tool.to_owned(),
        }
    }

    /// `LEGACY_TOOL_DISABLED`: the call in the new names in `next_calls` when it translates
    /// and is small enough to repeat; otherwise the hint says how to rename.
    pub(crate) fn disabled(&self, translated: &Result<Map<String, Value>, ToolError>) -> ToolError {
        let renames: Vec<String> = self
            .renames
            .iter()
            .chain(self.edit_renames)
            .map(|(old, new)| format!("{old}→{new}"))
            .chain(self.choice.iter().map(|choice| {
                let values: Vec<String> = choice.values.iter().map(|(old, new)| format!("{old}→{new}")).collect();
                format!("{}→{} ({})", choice.name, choice.selector, values.join(", "))
            }))
            .collect();
        let renamed = if renames.is_empty() { String::new() } else { format!(", renaming {}", renames.join(", ")) };
        let mut error = ToolError::new(
            ErrorCode::LegacyToolDisabled,
            format!(
                "`{}` is a legacy name (LEGACY_TOOL_DEPRECATED) and legacy names are disabled on this server \
                 (legacy_tools = \"disabled\", LOUPE_DISABLE_LEGACY=1)",
                self.name
            ),
            match translated {
                Ok(_) => format!("call `{}` instead: the call below is this one in the new names", self.tool),
                Err(why) => format!(
                    "call `{}` with the same arguments{renamed}; these did not translate: {}",
                    self.tool, why.message
                ),
            },
        );
        let call = match translated {
            Ok(arguments) => Some(NextCall::new(self.tool, Value::Object(arguments.clone()))),
            Err(_) => None,
        };
        match call {
            Some(call)
                if serde_json::to_string(&call.arguments).map_or(0, |text| text.len()) <= MAX_REPLACEMENT_BYTES =>
            {
                error.next_calls.push(call);
            }
            Some(_) => {
                error.hint = format!(
                    "call `{}` with the same arguments{renamed} (the call is too long to repeat here)",
                    self.tool
                );
                error.next_calls.push(guidance());
            }
            None => {
                let fixed: Map<String, Value> =
                    self.fixed.iter().map(|(key, value)| ((*key).to_owned(), Value::from(*value))).collect();
                if fixed.is_empty() {
                    error.next_calls.push(guidance());
                } else {
                    error.next_calls.push(NextCall::new(self.tool, Value::Object(fixed)));
                }
            }
        }
        error.with_detail("legacy_tool", Value::from(self.name)).with_detail("replacement", Value::from(self.tool))
    }
}

/// Moves `old` to `new`; both given is one parameter twice.
fn rename(map: &mut Map<String, Value>, tool: &str, old: &str, new: &str) -> Result<(), ToolError> {
    let Some(value) = map.remove(old) else { return Ok(()) };
    if map.get(new).is_some_and(|value| !value.is_null()) {
        return Err(ToolError::invalid_args(
            format!("`{old}` and `{new}` name the same parameter of `{tool}`; pass only one"),
            format!("remove `{old}` or `{new}`"),
        ));
    }
    map.insert(new.to_owned(), value);
    Ok(())
}

/// Sets an argument the old name implies; another value given for it is refused.
fn fix(map: &mut Map<String, Value>, legacy: &LegacyTool, key: &str, value: &str) -> Result<(), ToolError> {
    match map.get(key) {
        Some(given) if given.as_str() != Some(value) => Err(ToolError::invalid_args(
            format!("`{}` always reads with {key}='{value}', got {key}={}", legacy.name, quoted(&given.to_string())),
            format!("remove `{key}`, or call `{}` with the {key} you want", legacy.tool),
        )),
        _ => {
            map.insert(key.to_owned(), Value::from(value));
            Ok(())
        }
    }
}

/// The call that explains the old names and the new (`manage guidance`), when no repaired call
/// can be offered.
fn guidance() -> NextCall {
    NextCall::new("manage", json!({"command": "guidance"}))
}

/// Calls per legacy name since the engine started, for `manage metrics` (§12).
#[derive(Debug, Default)]
pub(crate) struct LegacyCounts {
    calls: Mutex<BTreeMap<&'static str, u64>>,
}

impl LegacyCounts {
    pub(crate) fn count(&self, name: &'static str) {
        let mut calls = self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *calls.entry(name).or_default() += 1;
    }

    /// `{name: calls}`, names in order.
    pub(crate) fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Decorates the answer to a call made by a legacy name (§12), before it is rendered:
/// `LEGACY_TOOL_DEPRECATED` in the reason codes, `note` in the text face (while it fits
/// `max_tokens`), the old name in `meta.legacy`, and the old result fields in the structured face.
pub(crate) fn decorate(
    outcome: &mut Outcome,
    legacy: &'static LegacyTool,
    note: Option<&str>,
    max_tokens: Option<usize>,
) {
    let tool_face = outcome.face.render();
    let noted_at = outcome.noted(ReasonCode::LegacyToolDeprecated, note, max_tokens);
    if legacy.shape == LegacyShape::ReadCode && outcome.ok {
        // The old `content` field carries the payload (the numbered lines' exact bytes, or an
        // outline's whole face): the compact `text` leaves it out, or the structured face would
        // carry it twice (§3.3's bound).
        let lines_only = outcome.content.is_some();
        outcome.face.carry(|at, part| Some(at) == noted_at || (lines_only && !matches!(part, Part::Lines(_))));
    }
    outcome.detail.insert("legacy".into(), json!({"tool": legacy.name, "replacement": legacy.tool}));
    let mut fields = Map::new();
    add_fields(legacy.shape, &tool_face, outcome, &mut fields);
    outcome.extra_fields = fields;
}

/// The old tool's result fields, added to the structured face at any level (an old client
/// asks for no level). They are built from what the response carries, never from its text;
/// `tool_face` is the face as the tool answered, before the `deprecated` line.
fn add_fields(shape: LegacyShape, tool_face: &str, response: &Outcome, object: &mut Map<String, Value>) {
    let meta = &response.meta(0);
    match shape {
        LegacyShape::Unified => {}
        LegacyShape::ReadCode if response.ok => {
            // The payload's exact bytes; an outline has no other payload than its face.
            let content = response.content.clone().unwrap_or_else(|| tool_face.to_owned());
            let path = response.target.clone().unwrap_or_default();
            let language = loupe_syntax::Lang::from_path(&path).map(|lang| lang.name());
            object.insert("content".into(), Value::from(content));
            object.insert(
                "metadata".into(),
                json!({"lines": meta.get("total_lines"), "language": language, "path": path}),
            );
            object.insert("truncated".into(), Value::Bool(response.act.truncated));
        }
        LegacyShape::SearchProject if response.ok => {
            let results: Vec<Value> = meta
                .get("results")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|hit| {
                    json!({
                        "type": hit["type"], "path": hit["path"], "score": hit["score"], "context": hit["preview"],
                        "line": hit["line"], "candidate_id": hit["candidate_id"],
                    })
                })
                .collect();
            object.insert("results".into(), Value::Array(results));
            object.insert("inferredType".into(), meta.get("inferred_type").cloned().unwrap_or(Value::Null));
        }
        LegacyShape::AnalyzeRelationship => {
            if let Some(graph) = &response.act.graph {
                object.insert("nodes".into(), Value::Array(graph.nodes.clone()));
                object.insert("edges".into(), Value::Array(graph.edges.clone()));
                object.insert("resolvedTarget".into(), graph.resolved_target.clone());
            }
        }
        LegacyShape::EditCode => {
            object.insert("success".into(), Value::Bool(response.ok));
            let results: Vec<Value> = if response.ok {
                meta.get("files")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|file| json!({"filePath": file["path"], "applied": file["applied"], "diff": file["diff"]}))
                    .collect()
            } else {
                let error = response.error.as_ref();
                let failures = error.and_then(|error| error.details.get("failures")).and_then(Value::as_array);
                let message = error.map(|error| error.message.clone()).unwrap_or_default();
                failures
                    .into_iter()
                    .flatten()
                    .map(|failure| {
                        let error = failure.get("message").cloned().unwrap_or_else(|| Value::from(message.as_str()));
                        json!({"filePath": failure["path"], "applied": false, "error": error})
                    })
                    .collect()
            };
            object.insert("results".into(), Value::Array(results));
            if let Some(id) = &response.act.transaction_id {
                object.insert("transactionId".into(), Value::from(id.as_str()));
            }
        }
        LegacyShape::ManageProject => {
            object.insert("output".into(), Value::from(tool_face));
            // The command's own detail: the envelope without the fields every answer has.
            let mut data: Map<String, Value> = meta.clone();
            for key in ["token_estimate", "truncated", "preview_degraded", "next_cursor", "reason_codes", "next_calls"]
            {
                data.remove(key);
            }
            data.remove("legacy");
            object.insert("data".into(), Value::Object(data));
        }
        LegacyShape::ReadCode | LegacyShape::SearchProject => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_legacy_name_routes_to_one_of_the_five_tools_and_no_name_is_listed_twice() {
        let mut names: Vec<&str> = LEGACY_TOOLS.iter().map(|legacy| legacy.name).collect();
        for legacy in LEGACY_TOOLS {
            assert!(crate::params::tool(legacy.tool).is_some(), "{} routes to {}", legacy.name, legacy.tool);
            assert!(crate::params::tool(legacy.name).is_none(), "{} is a tool name", legacy.name);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LEGACY_TOOLS.len());
    }

    #[test]
    fn read_code_views_become_read_modes() {
        let read_code = legacy_tool("read_code").unwrap();
        let cases = [
            (json!({"filePath": "a.rs"}), json!({"mode": "file", "target": "a.rs"})),
            (json!({"filePath": "a.rs", "view": "full"}), json!({"mode": "file", "target": "a.rs"})),
            (json!({"filePath": "a.rs", "view": "skeleton"}), json!({"mode": "outline", "target": "a.rs"})),
            (
                json!({"filePath": "a.rs", "view": "fragment", "lineRange": "3-4"}),
                json!({"mode": "snippet", "target": "a.rs", "line_range": "3-4"}),
            ),
            (
                json!({"filePath": "a.rs", "lineRange": "3-4"}),
                json!({"mode": "snippet", "target": "a.rs", "line_range": "3-4"}),
            ),
        ];
        for (old, new) in cases {
            assert_eq!(Value::Object(read_code.translate(old.clone()).unwrap()), new, "{old}");
        }
        let refused = read_code.translate(json!({"filePath": "a.rs", "view": "whole"})).unwrap_err();
        assert!(refused.message.contains("full|skeleton|fragment"), "{}", refused.message);
    }

    #[test]
    fn an_implied_mode_cannot_be_changed_and_one_parameter_cannot_come_twice() {
        let read_file = legacy_tool("read_file").unwrap();
        assert!(read_file.translate(json!({"path": "a.rs", "mode": "file"})).is_ok());
        let other_mode = read_file.translate(json!({"path": "a.rs", "mode": "outline"})).unwrap_err();
        assert!(other_mode.message.contains("mode='file'"), "{}", other_mode.message);
        let twice = legacy_tool("read_symbol").unwrap().translate(json!({"name": "a", "symbol_id": "b"})).unwrap_err();
        assert!(twice.message.contains("`symbol_id` and `target`"), "{}", twice.message);
    }

    #[test]
    fn edit_code_edits_take_the_new_names_and_a_create_gets_its_content() {
        let edit_code = legacy_tool("edit_code").unwrap();
        let translated = edit_code
            .translate(json!({
                "edits": [
                    {"filePath": "a.rs", "operation": "replace", "targetString": "x", "replacementString": "y"},
                    {"filePath": "b.rs", "operation": "create", "replacementString": "new\n"},
                ],
                "dryRun": true, "createMissingDirectories": true, "ignoreMistakes": true,
            }))
            .unwrap();
        assert_eq!(
            Value::Object(translated),
            json!({
                "edits": [
                    {"path": "a.rs", "operation": "replace", "old_string": "x", "new_string": "y"},
                    {"path": "b.rs", "operation": "create", "content": "new\n"},
                ],
                "dry_run": true, "create_missing_dirs": true, "fuzzy": true,
            })
        );
    }

    #[test]
    fn a_disabled_call_names_its_replacement_unless_it_is_too_long_to_repeat() {
        let read_code = legacy_tool("read_code").unwrap();
        let translated = read_code.translate(json!({"filePath": "a.rs", "view": "skeleton"}));
        let error = read_code.disabled(&translated);
        assert_eq!(error.code, ErrorCode::LegacyToolDisabled);
        assert_eq!(error.next_calls, [NextCall::new("read", json!({"mode": "outline", "target": "a.rs"}))]);
        let edit_code = legacy_tool("edit_code").unwrap();
        let huge = "x".repeat(MAX_REPLACEMENT_BYTES);
        let translated = edit_code
            .translate(json!({"edits": [{"filePath": "a", "operation": "create", "replacementString": huge}]}));
        let error = edit_code.disabled(&translated);
        assert_eq!(error.next_calls[0].tool, "manage");
        assert!(error.hint.contains("replacementString→new_string"), "{}", error.hint);
    }
}
