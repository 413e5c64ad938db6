//! Outcomes and their one renderer (§3.3).
//!
//! A tool returns an `Outcome`: plain data, never JSON it will read back. Its face is a list of
//! parts (text lines, and runs of numbered source lines that know their numbers), the fields a
//! program acts on are typed (`Act`), and mode-specific detail for the `full` envelope stays in
//! `detail`. The session layer post-processes outcomes (de-duplication removes numbered lines
//! before anything is rendered; warnings add a footer part). `Outcome::render` then makes, once,
//! at the end: the text face, `token_estimate`, and the structured face at the caller's
//! `metadata` level. Budgets are applied before: nothing is trimmed on the way out.
//!
//! The structured face (§3.3): `standard` (the default) carries what the text face says once,
//! with what a program acts on at the top level (`ok`, `error`, `truncated`, `next_cursor`,
//! `next_calls`, `file_hash`, `reason_codes`, `results`, `transaction_id`).
//! Its `text` is the face without what those fields carry: a search hit's line is its `results`
//! row (`[path, line, candidate_id, shown]` for a symbol), a `→ next:` line its `next_calls`
//! entry, a read header's `· hash` its `file_hash`; an analyze tree stays in `text`. So a client that hands the model
//! `JSON.stringify(structuredContent)` gives it every line of the face at nearly the text's
//! cost (a row, not the line and a row). `minimal` drops the reason codes; `full` keeps the
//! whole face as `text` and adds the envelope (`tool`, `mode`, `target`, `meta`, `content` (the
//! payload's exact bytes), `location`, the error's details).

use loupe_core::{NextCall, ToolError, tokens};
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use loupe_core::config::MetadataLevel;

use crate::reasons::ReasonCode;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: Option<usize>,
    pub end_line: Option<usize>,
}

/// A run of numbered source lines in a face: line `first + i` is the `i`-th line of `rendered`
/// (each `{number:>width}│{text}\n`). De-duplication removes lines from it by number; nothing
/// ever parses the rendered text to find them.
#[derive(Debug, Clone)]
pub(crate) struct Lines {
    pub(crate) first: usize,
    pub(crate) rendered: String,
    /// The exact token count of `rendered`, when the tool already counted it.
    pub(crate) tokens: Option<usize>,
    /// The last line was cut mid-line (so it was not sent whole).
    pub(crate) last_cut: bool,
}

impl Lines {
    pub(crate) fn last(&self) -> usize {
        self.first + self.rendered.matches('\n').count().max(1) - 1
    }
}

/// One part of a text face. Parts meet at line ends, where o200k's pre-tokenizer always splits,
/// so the face's token count is the sum of its parts' counts; the one part that starts inside a
/// line, a read header's ` · hash …`, starts where it splits too (a space before punctuation).
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Text(String),
    Lines(Lines),
    /// A line of the face that a structured row carries too (a search hit in `results`, an
    /// analyze node in `nodes`): the compact structured face leaves it out of `text`, so the
    /// row is the only copy a client that reads JSON hands the model.
    Row(String),
    /// A part whose text a structured field carries whole (a legacy `read_code`'s `content`, a
    /// read's hash in `file_hash`): shown in the text face, left out of the compact structured
    /// face's `text`.
    Carried(Box<Part>),
}

/// The text face as parts, rendered once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Face {
    pub(crate) parts: Vec<Part>,
}

/// A face line of loupe's own (a header, a row, a footer, a diff) as it is shown: whatever it
/// quotes from the tree (a path, a symbol, a line of a diff) has every character that could
/// forge a line or reorder the text escaped (`text::escape_face_text`: control characters but
/// the line feeds and tabs the face is laid out with, line and paragraph separators, bidi
/// controls). Only numbered content (`Part::Lines`) is shown verbatim: its numbers mark it as
/// the file's. Every text and row part is made here, so no tool can forget it, and a part's
/// token count is its escaped text's. (A line feed inside a name cannot reach a face: a
/// `RepoPath` never holds one.)
fn shown(text: String) -> String {
    match loupe_core::text::escape_face_text(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

impl Part {
    pub(crate) fn text(text: impl Into<String>) -> Part {
        Part::Text(shown(text.into()))
    }

    /// The part as the text face shows it.
    fn rendered(&self) -> &str {
        match self {
            Part::Text(text) | Part::Row(text) => text,
            Part::Lines(lines) => &lines.rendered,
            Part::Carried(part) => part.rendered(),
        }
    }

    pub(crate) fn tokens(&self) -> usize {
        match self {
            Part::Text(text) | Part::Row(text) => tokens::count(text),
            Part::Lines(lines) => lines.tokens.unwrap_or_else(|| tokens::count(&lines.rendered)),
            Part::Carried(part) => part.tokens(),
        }
    }
}

impl Face {
    pub(crate) fn text(text: impl Into<String>) -> Face {
        Face { parts: vec![Part::text(text)] }
    }

    pub(crate) fn push(&mut self, text: impl Into<String>) {
        self.parts.push(Part::text(text));
    }

    /// The exact token count of the face as it will render.
    pub(crate) fn tokens(&self) -> usize {
        self.parts.iter().map(Part::tokens).sum()
    }

    /// The characters of the face as it will render.
    pub(crate) fn chars(&self) -> usize {
        self.parts.iter().map(|part| part.rendered().chars().count()).sum()
    }

    /// Marks the parts `keep` does not keep as carried whole by a structured field.
    pub(crate) fn carry(&mut self, keep: impl Fn(usize, &Part) -> bool) {
        for (at, part) in self.parts.iter_mut().enumerate() {
            if !keep(at, part) && !matches!(part, Part::Carried(_)) {
                let taken = std::mem::replace(part, Part::Text(String::new()));
                *part = Part::Carried(Box::new(taken));
            }
        }
    }

    /// Puts `part` before the `→ next:` lines that close the face (at the end when none do).
    pub(crate) fn insert_before_next_lines(&mut self, part: Part) -> usize {
        // The closing next lines are at the end of the last text parts; split the first part
        // that holds them where they start.
        let mut at = self.parts.len();
        while at > 0 {
            let Part::Text(text) = &self.parts[at - 1] else { break };
            let mut kept = text.len();
            for line in text.split_inclusive('\n').rev() {
                if !line.starts_with("→ next: ") {
                    break;
                }
                kept -= line.len();
            }
            if kept == text.len() {
                break;
            }
            if kept > 0 {
                let (head, tail) = text.split_at(kept);
                let (head, tail) = (head.to_owned(), tail.to_owned());
                self.parts[at - 1] = Part::Text(head);
                self.parts.insert(at, Part::Text(tail));
                break;
            }
            at -= 1;
        }
        // A face that does not end its last line gets one ended before the part.
        let open_line = self.parts[..at].iter().rev().map(Part::rendered).find(|text| !text.is_empty());
        let open_line = open_line.map(|text| !text.ends_with('\n'));
        let part = match part {
            Part::Text(text) if open_line == Some(true) => Part::Text(format!("\n{text}")),
            part => part,
        };
        self.parts.insert(at, part);
        at
    }

    pub(crate) fn push_row(&mut self, line: impl Into<String>) {
        self.parts.push(Part::Row(shown(line.into())));
    }

    pub(crate) fn render(&self) -> String {
        let mut face = String::new();
        for part in &self.parts {
            face.push_str(part.rendered());
        }
        face
    }

    /// The compact structured face's `text`: the face without the lines its fields carry, the
    /// rows (`results`, `nodes`) and each `→ next:` line of a call that `next_calls` holds.
    fn render_compact(&self, calls: &[NextCall]) -> String {
        let carried: Vec<String> = calls.iter().map(|call| shown(next_line(call))).collect();
        let mut face = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => {
                    for line in text.split_inclusive('\n') {
                        if !carried.iter().any(|carried| carried == line) {
                            face.push_str(line);
                        }
                    }
                }
                Part::Row(_) | Part::Carried(_) => {}
                Part::Lines(lines) => face.push_str(&lines.rendered),
            }
        }
        face
    }

    /// The only run of numbered lines, when the face has exactly one (file, snippet, symbol).
    pub(crate) fn lines(&self) -> Option<&Lines> {
        let mut runs = self.parts.iter().filter_map(|part| match part {
            Part::Lines(lines) => Some(lines),
            Part::Text(_) | Part::Row(_) | Part::Carried(_) => None,
        });
        let first = runs.next();
        if runs.next().is_some() { None } else { first }
    }
}

/// A search hit as a program acts on it (and as the session layer records it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HitRef {
    pub(crate) path: String,
    pub(crate) line: Option<usize>,
    pub(crate) candidate_id: String,
    /// The symbol's name, for symbol hits.
    pub(crate) symbol: Option<String>,
    /// What the hit's face line shows besides its path, line and id (a text hit's line, a
    /// symbol's span and signature), when it shows more.
    pub(crate) shown: Option<String>,
    /// How its face line and its structured row read.
    pub(crate) shape: RowShape,
    /// The read the hit's candidate id stands for (`read {"candidate_id": …}`).
    pub(crate) read: NextCall,
}

/// How a hit reads on both faces (§3.3, §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowShape {
    /// A file or directory hit: its path alone, a string.
    Path,
    /// A file of `output: files`: its path and how many hits it has, `[path, count]`.
    Count(usize),
    /// A symbol hit: `[path, line, candidate_id, shown]`, the id reads it.
    Symbol,
    /// A text hit with context lines: its place, then its lines, `[path, line, shown]`.
    Window,
    /// A text hit listed under its file's path: its row is its file's, `[path, line, shown,
    /// …]`, with a `line, shown` pair for each hit in that file.
    UnderPath,
}

/// The graph an `analyze` answer carries, as the envelope shows it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Graph {
    pub(crate) resolved_target: Value,
    pub(crate) nodes: Vec<Value>,
    pub(crate) edges: Vec<Value>,
}

/// What a program acts on: typed, set by the tool and the session layer, rendered at the top
/// level of the structured face.
#[derive(Debug, Clone, Default)]
pub(crate) struct Act {
    pub(crate) truncated: bool,
    pub(crate) next_cursor: Option<String>,
    pub(crate) file_hash: Option<String>,
    /// Codes in any order; rendered in the enum's fixed order (§9.9). Typed: only a
    /// registered code can be emitted.
    pub(crate) reason_codes: Vec<ReasonCode>,
    pub(crate) next_calls: Vec<NextCall>,
    pub(crate) preview_degraded: bool,
    pub(crate) results: Option<Vec<HitRef>>,
    pub(crate) bundle_id: Option<String>,
    pub(crate) transaction_id: Option<String>,
    pub(crate) graph: Option<Graph>,
    /// The language of the file a read shows, when loupe parses it (`rust`, `python`, …).
    pub(crate) language: Option<&'static str>,
}

/// What a tool answers, before rendering.
#[derive(Debug, Clone)]
#[must_use]
pub(crate) struct Outcome {
    pub(crate) ok: bool,
    pub(crate) tool: &'static str,
    pub(crate) mode: Option<String>,
    pub(crate) target: Option<String>,
    /// The level the caller asked for; `None` takes the configured default.
    pub(crate) metadata: Option<MetadataLevel>,
    pub(crate) face: Face,
    pub(crate) act: Act,
    /// Mode-specific detail, shown in the `full` envelope's `meta`.
    pub(crate) detail: Map<String, Value>,
    /// The payload exactly as in the file (line endings kept), when there is one.
    pub(crate) content: Option<String>,
    pub(crate) location: Option<Location>,
    pub(crate) error: Option<ToolError>,
    /// Fields the structured face carries at every level on top of its own (a legacy name's
    /// old result fields, §12).
    pub(crate) extra_fields: Map<String, Value>,
}

impl Outcome {
    /// A successful answer with the given face; the tool fills in the rest.
    pub(crate) fn success(tool: &'static str, mode: Option<String>, target: Option<String>, face: Face) -> Outcome {
        Outcome {
            ok: true,
            tool,
            mode,
            target,
            metadata: None,
            face,
            act: Act::default(),
            detail: Map::new(),
            content: None,
            location: None,
            error: None,
            extra_fields: Map::new(),
        }
    }

    /// A failure, with its error face.
    pub(crate) fn failure(
        tool: &'static str,
        mode: Option<String>,
        target: Option<String>,
        error: ToolError,
    ) -> Outcome {
        // A refused target is the caller's text, echoed bounded like any argument in an error.
        let target = target.map(|target| crate::errors::quoted(&target));
        let mut outcome = Outcome::success(tool, mode, target, Face::text(error_face(&error)));
        outcome.ok = false;
        outcome.act.next_calls = error.next_calls.clone();
        outcome.error = Some(error);
        outcome
    }

    pub(crate) fn with_metadata(mut self, metadata: Option<MetadataLevel>) -> Outcome {
        self.metadata = metadata;
        self
    }

    /// Renders both faces once: the text, its exact token count, and the envelope.
    pub(crate) fn render(self, default_level: MetadataLevel) -> Response {
        crate::latency::timed(crate::latency::Stage::Render, || self.render_now(default_level))
    }

    fn render_now(self, default_level: MetadataLevel) -> Response {
        let token_estimate = self.face.tokens();
        let face = self.face.render();
        let compact = self.face.render_compact(&self.act.next_calls);
        let reason_codes = crate::reasons::ordered(self.act.reason_codes.iter().copied());
        let meta = self.meta(token_estimate);
        Response {
            ok: self.ok,
            tool: self.tool,
            mode: self.mode,
            target: self.target,
            metadata: self.metadata.unwrap_or(default_level),
            token_estimate,
            face,
            compact,
            reason_codes,
            act: self.act,
            extra_fields: self.extra_fields,
            meta,
            content: self.content,
            location: self.location,
            error: self.error,
        }
    }

    /// The envelope's `meta` (the `full` level's): the act fields, then the detail.
    pub(crate) fn meta(&self, token_estimate: usize) -> Map<String, Value> {
        let reason_codes = crate::reasons::ordered(self.act.reason_codes.iter().copied());
        let mut meta = Map::new();
        meta.insert("token_estimate".into(), Value::from(token_estimate));
        if self.ok {
            meta.insert("truncated".into(), Value::Bool(self.act.truncated));
            meta.insert("preview_degraded".into(), Value::Bool(self.act.preview_degraded));
            meta.insert("next_cursor".into(), self.act.next_cursor.clone().map_or(Value::Null, Value::from));
        }
        if let Some(hash) = &self.act.file_hash {
            meta.insert("file_hash".into(), Value::from(hash.as_str()));
        }
        if let Some(language) = self.act.language {
            meta.insert("language".into(), Value::from(language));
        }
        meta.insert("reason_codes".into(), json!(reason_codes));
        meta.insert("next_calls".into(), calls_json(&self.act.next_calls));
        if let Some(results) = &self.act.results {
            meta.insert("results".into(), Value::Array(results.iter().map(hit_json).collect()));
        }
        if let Some(bundle_id) = &self.act.bundle_id {
            meta.insert("bundle_id".into(), Value::from(bundle_id.as_str()));
        }
        if self.ok && (self.tool == "edit" || self.act.transaction_id.is_some()) {
            meta.insert("transaction_id".into(), self.act.transaction_id.clone().map_or(Value::Null, Value::from));
        }
        if let Some(graph) = &self.act.graph {
            meta.insert("resolved_target".into(), graph.resolved_target.clone());
            meta.insert("nodes".into(), Value::Array(graph.nodes.clone()));
            meta.insert("edges".into(), Value::Array(graph.edges.clone()));
        }
        // Detail may say more than the act fields (a search's ranked hits with their symbols).
        meta.extend(self.detail.clone());
        meta
    }

    /// The answer with `code` in its reason codes (the envelope's and its stabilization's)
    /// and `note` in the text face before its closing `→ next:` lines (left out, like the
    /// session footer, when it would take the face over `max_tokens`).
    /// Returns where the note went among the face's parts, when it did.
    pub(crate) fn noted(&mut self, code: ReasonCode, note: Option<&str>, max_tokens: Option<usize>) -> Option<usize> {
        let mut noted_at = None;
        if let Some(note) = note {
            let mut face = self.face.clone();
            let at = face.insert_before_next_lines(Part::text(note));
            if max_tokens.is_none_or(|limit| face.tokens() <= limit) {
                self.face = face;
                noted_at = Some(at);
            }
        }
        if !self.act.reason_codes.contains(&code) {
            self.act.reason_codes.push(code);
        }
        if let Some(Value::Object(stabilization)) = self.detail.get_mut("stabilization") {
            let codes = stabilization.get("reason_codes").and_then(Value::as_array).into_iter().flatten();
            let codes = codes.filter_map(Value::as_str).filter_map(ReasonCode::parse).chain(std::iter::once(code));
            stabilization.insert("reason_codes".into(), json!(crate::reasons::ordered(codes)));
        }
        noted_at
    }
}

/// One tool response, rendered: both faces.
#[derive(Debug, Clone)]
#[must_use]
pub struct Response {
    pub ok: bool,
    pub tool: &'static str,
    pub mode: Option<String>,
    pub target: Option<String>,
    /// What the model reads.
    pub face: String,
    /// The face without the lines that the compact face's fields carry (its `text`).
    compact: String,
    /// The exact o200k_base token count of `face`.
    pub token_estimate: usize,
    /// The whole envelope's `meta` (the `full` level's).
    pub meta: Map<String, Value>,
    /// The payload exactly as in the file (line endings kept), when there is one.
    pub content: Option<String>,
    pub location: Option<Location>,
    pub error: Option<ToolError>,
    pub metadata: MetadataLevel,
    reason_codes: Vec<String>,
    pub(crate) act: Act,
    /// Fields the structured face carries at every level on top of its own (a legacy name's
    /// old result fields, §12).
    pub(crate) extra_fields: Map<String, Value>,
}

impl Response {
    /// A failure outside any tool (the engine could not open, a task failed), rendered.
    pub fn failure(tool: &'static str, error: ToolError) -> Response {
        Outcome::failure(tool, None, None, error).render(MetadataLevel::Standard)
    }

    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref().map(|error| error.code.as_str())
    }

    /// The reason codes, in the enum's fixed order.
    pub fn reason_codes(&self) -> &[String] {
        &self.reason_codes
    }

    /// The `structuredContent` at the response's metadata level.
    pub fn structured(&self) -> Value {
        self.structured_at(self.metadata)
    }

    /// The `structuredContent` at a given level (§3.3). Its top-level fields are those of
    /// [`STRUCTURED_FIELDS`], from which the tools' output schemas are made.
    pub fn structured_at(&self, level: MetadataLevel) -> Value {
        let act = &self.act;
        let mut object = Map::new();
        object.insert("ok".into(), Value::Bool(self.ok));
        if let Some(error) = &self.error {
            let compact = json!({"code": error.code.as_str()});
            object.insert("error".into(), if level == MetadataLevel::Full { error_json(error) } else { compact });
        }
        // The compact text leaves out the lines its fields carry; `full` keeps the whole face.
        let text = if level == MetadataLevel::Full { &self.face } else { &self.compact };
        object.insert("text".into(), Value::from(text.as_str()));
        if act.truncated {
            object.insert("truncated".into(), Value::Bool(true));
        }
        if let Some(cursor) = &act.next_cursor {
            object.insert("next_cursor".into(), Value::from(cursor.as_str()));
        }
        if let Some(hash) = &act.file_hash {
            object.insert("file_hash".into(), Value::from(hash.as_str()));
        }
        if let Some(id) = &act.transaction_id {
            object.insert("transaction_id".into(), Value::from(id.as_str()));
        }
        if !act.next_calls.is_empty() {
            object.insert("next_calls".into(), calls_json(&act.next_calls));
        }
        if level != MetadataLevel::Minimal && !self.reason_codes.is_empty() {
            object.insert("reason_codes".into(), json!(self.reason_codes));
        }
        if let Some(results) = act.results.as_ref().filter(|results| !results.is_empty()) {
            // `[path, line, candidate_id, shown]` per hit, in rank order: the row is the hit's
            // line for a client that reads JSON (keys on 20 hits would cost more than the hits).
            let rows = hit_rows(results);
            object.insert("results".into(), Value::Array(rows));
        }
        // The graph's lines are in `text`, as the model reads them (rows joined by node index
        // cost a model a lookup per edge), the resolved target first; `full` has the target, the
        // nodes and the edges for programs.
        if let Some(graph) = act.graph.as_ref().filter(|_| level == MetadataLevel::Full) {
            object.insert("resolved_target".into(), graph.resolved_target.clone());
            object.insert("nodes".into(), Value::Array(graph.nodes.clone()));
            object.insert("edges".into(), Value::Array(graph.edges.clone()));
        }
        if level == MetadataLevel::Full {
            object.insert("tool".into(), Value::from(self.tool));
            if let Some(mode) = &self.mode {
                object.insert("mode".into(), Value::from(mode.as_str()));
            }
            if let Some(target) = &self.target {
                object.insert("target".into(), Value::from(target.as_str()));
            }
            object.insert("meta".into(), Value::Object(self.meta.clone()));
            if let Some(bundle_id) = &act.bundle_id {
                object.insert("bundle_id".into(), Value::from(bundle_id.as_str()));
            }
            if let Some(content) = &self.content {
                object.insert("content".into(), Value::from(content.as_str()));
            }
            if let Some(location) = &self.location {
                object.insert("location".into(), serde_json::to_value(location).unwrap_or_default());
            }
        }
        for (key, value) in &self.extra_fields {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }
}

/// A top-level field of `structuredContent` as the compact levels carry it (§3.3).
#[derive(Debug, Clone, Copy)]
pub struct StructuredField {
    pub name: &'static str,
    /// Its JSON type.
    pub json_type: &'static str,
    /// The tools whose answers may carry it; empty: every tool.
    pub tools: &'static [&'static str],
    /// What it holds, where its name does not say.
    pub description: Option<&'static str>,
}

const fn field(name: &'static str, json_type: &'static str, tools: &'static [&'static str]) -> StructuredField {
    StructuredField { name, json_type, tools, description: None }
}

const fn described(
    name: &'static str,
    json_type: &'static str,
    tools: &'static [&'static str],
    description: &'static str,
) -> StructuredField {
    StructuredField { name, json_type, tools, description: Some(description) }
}

/// Every top-level field `structured_at` writes at the `minimal` and `standard` levels (`full`
/// adds `meta`, `content`, `location`, an analyze graph's `resolved_target`, `nodes` and
/// `edges`, and the envelope's names): the output schemas are made
/// from this table, and `tests/structured_faces.rs` checks every answer against it.
pub const STRUCTURED_FIELDS: &[StructuredField] = &[
    field("ok", "boolean", &[]),
    field("text", "string", &[]),
    field("error", "object", &[]),
    field("truncated", "boolean", &[]),
    field("next_cursor", "string", &["read", "search"]),
    field("file_hash", "string", &["read", "edit"]),
    field("transaction_id", "string", &["edit", "manage"]),
    field("next_calls", "array", &[]),
    field("reason_codes", "array", &[]),
    described(
        "results",
        "array",
        &["search"],
        "per hit: [path, line, candidate_id, shown] (symbol), path (file), [path, count] (output files); per file: [path, line, shown, …] (text: a line, shown pair per hit)",
    ),
];

fn calls_json(calls: &[NextCall]) -> Value {
    serde_json::to_value(calls).unwrap_or_default()
}

/// The structured rows of a page of hits: one per hit, except that text hits in one file share
/// their file's row, which goes on with a `line, shown` pair for each further hit (as the text
/// face lists them under the path once).
fn hit_rows(results: &[HitRef]) -> Vec<Value> {
    let mut rows: Vec<Value> = Vec::new();
    let mut previous: Option<&HitRef> = None;
    for hit in results {
        let under_path = |hit: &HitRef| hit.shape == RowShape::UnderPath;
        let same_file = previous.is_some_and(|previous| under_path(previous) && previous.path == hit.path);
        match rows.last_mut().and_then(Value::as_array_mut) {
            Some(row) if same_file && under_path(hit) => {
                row.push(hit.line.map_or(Value::Null, Value::from));
                row.push(hit.shown.as_deref().map_or(Value::Null, Value::from));
            }
            _ => rows.push(hit_row(hit)),
        }
        previous = Some(hit);
    }
    rows
}

fn hit_row(hit: &HitRef) -> Value {
    let path = Value::from(hit.path.as_str());
    let line = hit.line.map_or(Value::Null, Value::from);
    let shown = hit.shown.as_deref().map_or(Value::Null, Value::from);
    Value::Array(match hit.shape {
        // A file list is paths (`["a.py","b.py"]`): nothing else is known of a file hit.
        RowShape::Path => return path,
        RowShape::Count(count) => vec![path, Value::from(count)],
        RowShape::Symbol => vec![path, line, Value::from(hit.candidate_id.as_str()), shown],
        RowShape::Window | RowShape::UnderPath => vec![path, line, shown],
    })
}

fn hit_json(hit: &HitRef) -> Value {
    json!({"path": hit.path, "line": hit.line, "candidate_id": hit.candidate_id})
}

fn error_json(error: &ToolError) -> Value {
    let mut object = Map::new();
    object.insert("code".into(), Value::from(error.code.as_str()));
    object.insert("message".into(), Value::from(error.message.as_str()));
    object.insert("hint".into(), Value::from(error.hint.as_str()));
    object.insert("next_calls".into(), calls_json(&error.next_calls));
    for (key, value) in &error.details {
        object.insert(key.clone(), value.clone());
    }
    Value::Object(object)
}

/// `error CODE: message`, the hint, and each ready-to-run retry.
pub(crate) fn error_face(error: &ToolError) -> String {
    let mut face = format!("error {}: {}\nhint: {}\n", error.code, error.message, error.hint);
    for call in &error.next_calls {
        face.push_str(&format!("→ next: {}\n", call.render()));
    }
    face
}

/// The footer line naming a ready-to-run call.
pub(crate) fn next_line(call: &NextCall) -> String {
    format!("→ next: {}\n", call.render())
}
