//! The dispatcher: a tool call's arguments parsed once into its typed request (`ToolCall`),
//! then run. `read` and `search` pass through the session layer (§9); every other tool runs
//! directly. The CLI and tests use the in-process connection (`Engine::call`); MCP passes its
//! connection (`Engine::call_in`). A legacy name (§12) is translated here, before parsing, into
//! the call it stands for (`legacy.rs`), so it meets the same parser, gate and budgets.

use loupe_core::config::LegacyTools;
use loupe_core::{RepoPath, ToolError};
use serde_json::{Map, Value};

use crate::analyze::{self, AnalyzeRequest};
use crate::args::{Parsed, Rejected, given_text};
use crate::edit::{self, EditRequest};
use crate::engine::Engine;
use crate::latency::{self, Stage};
use crate::legacy::{self, LegacyTool};
use crate::manage::{self, ManageRequest};
use crate::params;
use crate::read::{self, ReadMode, ReadRequest};
use crate::response::{Outcome, Response};
use crate::search::{self, SearchRequest};
use crate::session::{Answered, CallContext};
use crate::work::{INDEX_WAIT, Work};
use loupe_index::IndexState;

/// One tool call, parsed: what the tool will do, in types.
#[derive(Debug)]
pub(crate) enum ToolCall {
    Read(ReadRequest),
    Search(SearchRequest),
    Analyze(AnalyzeRequest),
    Edit(EditRequest),
    Manage(ManageRequest),
}

impl ToolCall {
    /// Whether the answer waits for a first index build: symbol and outline reads, and analyze.
    fn needs_index(&self) -> bool {
        match self {
            ToolCall::Read(request) => matches!(request.mode, ReadMode::Symbol | ReadMode::Outline),
            // A search never waits: meanwhile it is a bounded scan of the files (§7).
            ToolCall::Search(_) => false,
            ToolCall::Analyze(_) => true,
            // A symbol operation finds its definition, a rename its uses, through the index.
            ToolCall::Edit(request) => request.names_symbols(),
            ToolCall::Manage(_) => false,
        }
    }

    /// Parses `arguments` for `tool`; argument errors come first, before anything runs.
    pub(crate) fn parse(tool: &str, arguments: Value) -> Parsed<ToolCall> {
        match tool {
            "read" => read::parse(arguments).map(ToolCall::Read),
            "search" => search::parse(arguments).map(ToolCall::Search),
            "analyze" => analyze::parse(arguments).map(ToolCall::Analyze),
            "edit" => edit::parse(arguments).map(ToolCall::Edit),
            "manage" => manage::parse(arguments).map(ToolCall::Manage),
            other => Err(Box::new(Rejected {
                tool: "unknown",
                error: ToolError::invalid_args(
                    format!("unknown tool `{}`", crate::errors::quoted(other)),
                    format!("available tools: {}", params::tool_names().join(", ")),
                ),
                mode: None,
                target: None,
                session_id: None,
            })),
        }
    }
}

impl Engine {
    /// Runs one tool call for the in-process connection (`CallContext::local`): the CLI and
    /// tests. Never panics on bad input: every failure is a `Response` with `ok = false`
    /// and a typed error.
    pub fn call(&self, tool: &str, arguments: Value) -> Response {
        self.call_in(&CallContext::local(), tool, arguments)
    }

    /// Runs one tool call for a connection. `read` and `search` pass through the session
    /// layer (§9), which keys its state on the connection (or the call's `session_id`); it
    /// answers argument errors too, so they count in the session's metrics.
    pub fn call_in(&self, context: &CallContext, tool: &str, arguments: Value) -> Response {
        self.call_with(context, tool, arguments, &Work::default())
    }

    /// `call_in` with a progress-and-cancel handle: a call that needs the index waits (bounded by
    /// `INDEX_WAIT`) for a first build, reporting its progress to a caller that takes reports, and
    /// long work stops early, answering with what it has, once `work` is cancelled or the call's
    /// time or memory budget (`max_call_secs`, `max_call_mb`, started here) runs out.
    ///
    /// `tool` may be a legacy name (§12, `legacy.rs`): it is translated here, once, into the call
    /// it stands for, which then runs like any other.
    pub fn call_with(&self, context: &CallContext, tool: &str, arguments: Value, work: &Work) -> Response {
        let started = std::time::Instant::now();
        work.start_budget(std::time::Duration::from_secs(self.config().max_call_secs));
        work.start_memory_budget(self.config().max_call_mb);
        let response = self.answer(context, tool, arguments, work);
        self.latency().record(Stage::Engine, started.elapsed());
        self.latency().file_pending();
        response
    }

    fn answer(&self, context: &CallContext, tool: &str, arguments: Value, work: &Work) -> Response {
        match legacy::legacy_tool(tool) {
            Some(legacy) => self.call_legacy(context, legacy, arguments, work),
            None => {
                let arguments = match tool {
                    "read" => self.candidate_read(context, arguments),
                    "edit" => self.edit_symbols_by_candidate(context, arguments),
                    _ => arguments,
                };
                let session_id = arguments.get("session_id").and_then(Value::as_str).map(str::to_owned);
                let answered = self.dispatch(context, ToolCall::parse(tool, arguments), work);
                if answered.event.is_none() {
                    // analyze, edit, manage: what they offer to read next passes the gate.
                    self.session_layer().remember_issued(context, session_id.as_deref(), &answered.outcome);
                }
                self.render(context, answered)
            }
        }
    }

    /// Renders a call's answer, once, and files its session's analytics event from it.
    fn render(&self, context: &CallContext, answered: Answered) -> Response {
        let response = answered.outcome.render(self.config().structured_content);
        if let Some(event) = answered.event {
            self.session_layer().record(context, event, &response);
        }
        response
    }

    /// A parsed call (or the reason it did not parse), run: its answer, not yet rendered.
    fn dispatch(&self, context: &CallContext, parsed: Parsed<ToolCall>, work: &Work) -> Answered {
        match parsed {
            Ok(call) => {
                // An answer from half an index could say "nothing" where the rest holds it (§7):
                // wait for the first build, bounded, reporting progress to a caller that asked.
                if call.needs_index() {
                    self.wait_for_index(work);
                }
                match call {
                    ToolCall::Read(request) => self.session_layer().read(self.workspace(), context, Ok(request), work),
                    ToolCall::Search(request) => {
                        self.session_layer().search(self.workspace(), context, Ok(request), work)
                    }
                    call => Answered::unrecorded(latency::timed(Stage::Tool, || self.run(context, &call, work))),
                }
            }
            // A refused read or search still counts in its session (§9.3).
            Err(rejected) if rejected.tool == "read" => {
                self.session_layer().read(self.workspace(), context, Err(rejected), work)
            }
            Err(rejected) if rejected.tool == "search" => {
                self.session_layer().search(self.workspace(), context, Err(rejected), work)
            }
            Err(rejected) => Answered::unrecorded(rejected.into_outcome()),
        }
    }

    /// A call by a legacy name: counted, translated into the call it stands for and run as that
    /// call (same parser, gate, budgets and session), then marked deprecated; with
    /// `legacy_tools = "disabled"`, refused with the translated call to make instead.
    fn call_legacy(
        &self,
        context: &CallContext,
        legacy: &'static LegacyTool,
        arguments: Value,
        work: &Work,
    ) -> Response {
        self.legacy_calls.count(legacy.name);
        let session_id = arguments.get("session_id").and_then(Value::as_str).map(str::to_owned);
        let translated = legacy.translate(arguments);
        let disabled = self.config().legacy_tools == LegacyTools::Disabled;
        self.session_layer().record_legacy(context, legacy, disabled);
        if disabled {
            let error = legacy.disabled(&translated);
            let mut refused = Outcome::failure(legacy.tool, None, None, error);
            legacy::decorate(&mut refused, legacy, None, None);
            return refused.render(self.config().structured_content);
        }
        let note = format!(
            "── deprecated [LEGACY_TOOL_DEPRECATED]: `{}` is a legacy name; call {} instead\n",
            legacy.name,
            legacy.replacement(translated.as_ref().ok())
        );
        let max_tokens = translated
            .as_ref()
            .ok()
            .and_then(|arguments| arguments.get("max_tokens"))
            .and_then(|value| value.as_u64().or_else(|| value.as_str().and_then(|text| text.trim().parse().ok())));
        let max_tokens = max_tokens
            .map_or(self.config().max_response_tokens, |limit| (limit as usize).min(self.config().max_response_tokens));
        let parsed = match translated {
            Ok(arguments) => {
                let arguments = match legacy.tool {
                    "read" => self.candidate_read(context, Value::Object(arguments)),
                    _ => Value::Object(arguments),
                };
                ToolCall::parse(legacy.tool, arguments)
            }
            Err(error) => Err(Box::new(Rejected { tool: legacy.tool, error, mode: None, target: None, session_id })),
        };
        let mut answered = self.dispatch(context, parsed, work);
        legacy::decorate(&mut answered.outcome, legacy, Some(&note), Some(max_tokens));
        self.render(context, answered)
    }

    /// A next call's arguments as another process needs them (the command line: every command
    /// a session of its own): a `read`'s ref replaced by the read it stands for, refs and
    /// session ids dropped. `None` when a ref stands for nothing this engine's local session
    /// holds.
    pub fn standalone_arguments(&self, tool: &str, arguments: &Value) -> Option<Value> {
        let mut resolved = match tool {
            "read" => self.candidate_read(&CallContext::local(), arguments.clone()),
            _ => arguments.clone(),
        };
        let Value::Object(map) = &mut resolved else { return None };
        for key in ["candidate_id", "bundle_id", "session_id"] {
            map.remove(key);
        }
        (tool != "read" || map.contains_key("target")).then_some(resolved)
    }

    /// `read {"candidate_id": id}` without a target (§5): the read the id stands for, from the
    /// session's last searches, with the caller's other arguments (caps, `metadata`, `fresh`…)
    /// kept. An id the session does not hold is left to the parser, which asks for a target.
    fn candidate_read(&self, context: &CallContext, arguments: Value) -> Value {
        let Value::Object(mut given) = arguments else { return arguments };
        if given.get("mode").and_then(Value::as_str) == Some("symbol") {
            return Value::Object(self.symbol_by_candidate(context, given));
        }
        let text = |key: &str| given_text(params::READ.params, &given, key).map(str::to_owned);
        if given_text(params::READ.params, &given, "target").is_some() {
            return Value::Object(given);
        }
        let Some(candidate_id) = text("candidate_id") else {
            return Value::Object(given);
        };
        let session_id = text("session_id");
        let Some(candidate) = self.session_layer().candidate(context, session_id.as_deref(), &candidate_id) else {
            return Value::Object(given);
        };
        for (key, value) in candidate.read {
            given.entry(key).or_insert(value);
        }
        Value::Object(given)
    }

    /// `read {"mode": "symbol", "target": <candidate id>}` (§5: a symbol read takes an id from
    /// search; or `candidate_id` without a target): the symbol the hit names, or, for a text
    /// hit, the innermost definition around its line, by name and `path`, with the id as the
    /// read's ref. A target that is no id the session holds is a symbol name and is left as it is.
    fn symbol_by_candidate(&self, context: &CallContext, mut given: Map<String, Value>) -> Map<String, Value> {
        let text = |key: &str| given_text(params::READ.params, &given, key).map(str::to_owned);
        // The id as the target, or, without a target, the ref itself (`candidate_id` alone).
        // `target` by its own name: the symbol's place, which the id's definition takes.
        let id = match given.get("target").and_then(Value::as_str).map(str::to_owned) {
            Some(target) => Some(target).filter(|target| is_candidate_id(target)),
            None => text("candidate_id"),
        };
        let Some(id) = id else { return given };
        let session_id = text("session_id");
        let Some(candidate) = self.session_layer().candidate(context, session_id.as_deref(), &id) else {
            return given;
        };
        let target = match candidate.read.get("mode").and_then(Value::as_str) {
            Some("symbol") => candidate.read.get("target").cloned(),
            _ => self.definition_around(&candidate.path, candidate.line).map(Value::from),
        };
        let Some(target) = target else { return given };
        given.insert("target".into(), target);
        given.entry("path").or_insert_with(|| Value::from(candidate.path.as_str()));
        if given_text(params::READ.params, &given, "candidate_id").is_none() {
            given.insert("candidate_id".into(), Value::from(id));
        }
        given
    }

    /// An `edit` entry's `symbol` that is a candidate id of the session's last searches (§8.2):
    /// the definition the hit names (or, for a text hit, the innermost one around its line),
    /// by qualified name, and its file as `path`. An id the session does not hold is left as a
    /// symbol name.
    fn edit_symbols_by_candidate(&self, context: &CallContext, arguments: Value) -> Value {
        let Value::Object(mut given) = arguments else { return arguments };
        let session_id = given.get("session_id").and_then(Value::as_str).map(str::to_owned);
        let entries: Vec<&mut Value> = match given.get_mut("edits") {
            Some(Value::Array(list)) => list.iter_mut().collect(),
            Some(single @ Value::Object(_)) => vec![single],
            _ => Vec::new(),
        };
        for entry in entries {
            let Some(entry) = entry.as_object_mut() else { continue };
            let Some(id) = entry.get("symbol").and_then(Value::as_str).filter(|id| is_candidate_id(id)) else {
                continue;
            };
            let Some(candidate) = self.session_layer().candidate(context, session_id.as_deref(), id) else { continue };
            let symbol = match candidate.read.get("mode").and_then(Value::as_str) {
                Some("symbol") => candidate.read.get("target").and_then(Value::as_str).map(str::to_owned),
                _ => self.definition_around(&candidate.path, candidate.line),
            };
            let Some(symbol) = symbol else { continue };
            entry.insert("symbol".into(), Value::from(symbol));
            entry.entry("path").or_insert_with(|| Value::from(candidate.path.as_str()));
        }
        Value::Object(given)
    }

    /// The qualified name of the innermost definition holding `line` of `path`, as on disk now.
    fn definition_around(&self, path: &str, line: Option<usize>) -> Option<String> {
        let line = line?;
        let path = RepoPath::normalize(path)?;
        let lang = loupe_index::Lang::from_path(path.as_str())?;
        let bytes = self.workspace().root().read_indexed(&path, self.config().max_file_bytes).ok()?;
        let decoded = loupe_core::text::decode(&bytes).ok()?;
        let definitions = loupe_syntax::parse_with(lang, &decoded.text, loupe_syntax::Extract::Definitions).definitions;
        let around = definitions
            .iter()
            .filter(|definition| definition.span.start_line <= line && line <= definition.span.end_line)
            .max_by_key(|definition| definition.depth)?;
        Some(match &around.container {
            Some(container) => format!("{container}{}{}", lang.separator(), around.name),
            None => around.name.clone(),
        })
    }

    /// Waits for the first index build, reporting its progress (see `Work::wait_for_index`).
    fn wait_for_index(&self, work: &Work) {
        let Some(index) = self.index() else { return };
        // Only a build that runs can end the wait (a one-shot command builds none).
        if !self.workspace().building_in_background() {
            return;
        }
        let building = || {
            (index.state() == IndexState::Building).then(|| {
                let status = index.status();
                (status.files_done as u64, status.files_total as u64)
            })
        };
        work.wait_for_index(building, INDEX_WAIT);
    }

    /// A tool call that bypasses the session layer: no gate, budget, aggregation or
    /// stabilization. For benchmarks measuring the layer's overhead; never for serving.
    #[cfg(feature = "test-hooks")]
    pub fn call_raw(&self, tool: &str, arguments: Value) -> Response {
        match ToolCall::parse(tool, arguments) {
            Ok(call) => self.run(&CallContext::local(), &call, &Work::default()),
            Err(rejected) => rejected.into_outcome(),
        }
        .render(self.config().structured_content)
    }

    fn run(&self, context: &CallContext, call: &ToolCall, work: &Work) -> Outcome {
        match call {
            ToolCall::Read(request) => read::run(self.workspace(), request, work),
            ToolCall::Search(request) => search::run(self.workspace(), request, work),
            ToolCall::Analyze(request) => analyze::run(self.workspace(), request, work),
            ToolCall::Edit(request) => edit::run(self.workspace(), request),
            ToolCall::Manage(request) => manage::run(self, context, request, work),
        }
    }
}

/// A search hit's candidate id: 7 lower-case letters (`search/render.rs`, `candidate_id`).
fn is_candidate_id(text: &str) -> bool {
    text.len() == 7 && text.bytes().all(|byte| byte.is_ascii_lowercase())
}
