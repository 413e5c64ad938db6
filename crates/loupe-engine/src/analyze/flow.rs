//! `analyze mode=data_flow`: a variable or parameter inside one function, its definitions
//! and uses in order, and where it is passed as an argument, followed into the callee's
//! parameter (to `max_depth` calls).
//!
//! The target names the function and the variable: `parse_config.path`,
//! `Config::load::path`, `Config.load/path`; or just the variable with `path` set to its file,
//! when one function (or the top level) of that file uses it.

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_graph::{SymbolRef, resolve_call};
use loupe_index::{Lang, SymbolKind};
use loupe_syntax::{CallSite, DataFlow, FlowKind};
use serde_json::{Value, json};

use super::AnalyzeRequest;
use super::graph::Answer;
use crate::workspace::relations::{View, read_text};

/// A function-like definition and the variable in it.
struct Scope {
    path: RepoPath,
    lang: Lang,
    /// The function (`None`: the file's top level).
    function: Option<SymbolRef>,
    variable: String,
}

impl Scope {
    fn line(&self) -> usize {
        self.function.as_ref().map_or(0, |function| function.line)
    }

    /// `function.variable` (or the variable alone at the top level).
    fn label(&self) -> String {
        match &self.function {
            Some(function) => format!("{}{}{}", function.qualified(), self.lang.separator(), self.variable),
            None => self.variable.clone(),
        }
    }

    fn id(&self) -> String {
        match &self.function {
            Some(function) => format!("{}{}{}", function.id(), self.lang.separator(), self.variable),
            None => format!("{}#{}", self.path.as_str(), self.variable),
        }
    }
}

pub(super) fn data_flow(view: &View<'_>, request: &AnalyzeRequest, answer: &mut Answer) -> Result<(), ToolError> {
    let scope = resolve(view, request)?;
    let traced = flow_of(view, &scope).ok_or_else(|| not_used(&scope))?;
    let flow = &traced.flow;
    answer.flow_target = Some(json!({
        "type": "variable",
        "path": scope.path.as_str(),
        "name": scope.variable,
        "function": scope.function.as_ref().map(SymbolRef::qualified),
        "line": flow.events.first().map(|event| event.line),
    }));
    let root = answer.add_variable(scope.id(), &scope.label(), &scope.path, flow.span.start_line.max(1), None);
    let Some(root) = root else { return Ok(()) };
    follow(view, &scope, &traced, root, 1, request.max_depth, answer);
    Ok(())
}

fn is_callable(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor)
}

fn resolve(view: &View<'_>, request: &AnalyzeRequest) -> Result<Scope, ToolError> {
    let target = request.target.as_str();
    let split = ["::", "/", "."].iter().find_map(|separator| {
        target.rsplit_once(separator).filter(|(function, variable)| !function.is_empty() && !variable.is_empty())
    });
    if let Some((function, variable)) = split {
        let keep = |definition: &loupe_syntax::Definition| is_callable(definition.kind);
        let resolved = crate::workspace::symbols::resolve_where(
            view.workspace(),
            "analyze",
            function,
            request.path.as_deref(),
            &request.original,
            &keep,
        )?;
        let function = resolved.into_symbol_ref();
        return Ok(Scope {
            path: function.path.clone(),
            lang: function.lang,
            function: Some(function),
            variable: variable.to_owned(),
        });
    }
    // A bare variable: the functions of `path` that use it.
    let Some(path) = request.path.as_deref() else {
        return Err(ToolError::invalid_args(
            format!("data_flow needs the function of `{target}`: `function.{target}`, or `path` to its file"),
            "name it as function.variable (Type::method::variable for a method)",
        ));
    };
    let resolved = view.workspace().root().resolve(path).map_err(|error| {
        ToolError::new(ErrorCode::FileNotFound, format!("`path` {path}: {error}"), "pass the file the variable is in")
    })?;
    let path = resolved.path;
    let lang = Lang::from_path(path.as_str()).ok_or_else(|| {
        ToolError::invalid_args(format!("`{}` is not in a language loupe parses", path.as_str()), "pick a source file")
    })?;
    let facts = view.facts(&path).ok_or_else(|| {
        ToolError::new(ErrorCode::FileNotFound, format!("cannot read `{}`", path.as_str()), "check the path")
    })?;
    let text = read_text(view.workspace(), &path).unwrap_or_default();
    let mut users: Vec<Scope> = Vec::new();
    for definition in facts.definitions.iter().filter(|definition| is_callable(definition.kind)) {
        let uses = loupe_syntax::data_flow(lang, &text, definition.name_line, target)
            .is_some_and(|flow| flow.span.start_line == definition.span.start_line && !flow.events.is_empty());
        if uses {
            let function = SymbolRef::from_definition(&path, lang, definition);
            users.push(Scope { path: path.clone(), lang, function: Some(function), variable: target.to_owned() });
        }
    }
    if users.is_empty() && loupe_syntax::data_flow(lang, &text, 0, target).is_some_and(|flow| !flow.events.is_empty()) {
        users.push(Scope { path: path.clone(), lang, function: None, variable: target.to_owned() });
    }
    match users.len() {
        0 => Err(not_used(&Scope { path, lang, function: None, variable: target.to_owned() })),
        1 => Ok(users.remove(0)),
        _ => {
            let mut error = ToolError::new(
                ErrorCode::AmbiguousSymbol,
                format!("`{target}` is used in {} functions of `{}`", users.len(), path.as_str()),
                "pick one: each next call names the function",
            );
            let mut listing = Vec::new();
            for user in users.iter().take(20) {
                let function = user.function.as_ref().map(SymbolRef::qualified).unwrap_or_default();
                let mut arguments = request.original.clone();
                arguments.insert("target".into(), Value::from(format!("{function}{}{target}", lang.separator())));
                error = error.with_next_call(NextCall { tool: "analyze".into(), arguments });
                listing.push(json!({"path": path.as_str(), "function": function, "line": user.line()}));
            }
            Err(error.with_detail("candidates", Value::Array(listing)))
        }
    }
}

fn not_used(scope: &Scope) -> ToolError {
    let place = match &scope.function {
        Some(function) => format!("{} ({}:{})", function.qualified(), scope.path.as_str(), function.line),
        None => scope.path.as_str().to_owned(),
    };
    ToolError::new(
        ErrorCode::SymbolNotFound,
        format!("`{}` is neither defined nor used in {place}", scope.variable),
        "check the variable's name; the function's source shows its parameters and locals",
    )
    .with_next_call(match &scope.function {
        Some(function) => NextCall::new(
            "read",
            json!({"mode": "symbol", "target": function.qualified(), "path": scope.path.as_str()}),
        ),
        None => NextCall::new("read", json!({"mode": "outline", "target": scope.path.as_str()})),
    })
}

/// A variable's flow and the text of its file (the face quotes its lines).
struct Traced {
    flow: DataFlow,
    text: String,
}

fn flow_of(view: &View<'_>, scope: &Scope) -> Option<Traced> {
    let text = read_text(view.workspace(), &scope.path)?;
    let flow = loupe_syntax::data_flow(scope.lang, &text, scope.line(), &scope.variable)?;
    (!flow.events.is_empty()).then_some(Traced { flow, text })
}

fn kind_word(kind: &FlowKind) -> &'static str {
    match kind {
        FlowKind::Parameter => "param",
        FlowKind::Definition => "def",
        FlowKind::Assignment => "assign",
        FlowKind::Use => "use",
        FlowKind::Argument { .. } => "arg",
        FlowKind::Return => "return",
    }
}

/// Lists the traced events under the scope, then follows each argument into its callee.
fn follow(
    view: &View<'_>,
    scope: &Scope,
    traced: &Traced,
    node: usize,
    depth: usize,
    max_depth: usize,
    answer: &mut Answer,
) {
    let indent = "  ".repeat(depth);
    let where_ = match &scope.function {
        Some(function) => format!("{} in {}", scope.variable, function.qualified()),
        None => format!("{} at the top level", scope.variable),
    };
    answer.notes.push(format!("{}{where_} ({}):", "  ".repeat(depth - 1), scope.path.as_str()));
    let caller = scope.function.as_ref().map(SymbolRef::qualified);
    let source: Vec<&str> = traced.text.lines().collect();
    for event in &traced.flow.events {
        let code = source.get(event.line.wrapping_sub(1)).map_or("", |code| code.trim());
        let clipped = loupe_core::text::truncate_at_char_boundary(code, 72);
        let code = if clipped.len() < code.len() { format!("{clipped}…") } else { clipped.to_owned() };
        let mut line = format!("{indent}{:>5} {:<6} {code}", event.line, kind_word(&event.kind));
        let FlowKind::Argument { callee, qualifier, receiver, index } = &event.kind else {
            answer.notes.push(line.trim_end().to_owned());
            continue;
        };
        line.push_str(&format!("  ← #{index} of {callee}"));
        let site = CallSite {
            callee: callee.clone(),
            qualifier: qualifier.clone(),
            receiver: receiver.clone(),
            line: event.line,
            column: event.column,
            container: caller.clone(),
        };
        let resolved = resolve_call(view, &scope.path, scope.lang, &site);
        if resolved.is_empty() {
            line.push_str(" (outside the workspace)");
        }
        answer.notes.push(line);
        for (function, confidence) in resolved {
            let Some(callee) = callee_parameter_flow(view, &function, *index) else { continue };
            let Some(parameter) = callee.flow.parameters.get(*index).cloned() else { continue };
            let inner = Scope {
                path: function.path.clone(),
                lang: function.lang,
                function: Some(function.clone()),
                variable: parameter,
            };
            let id = inner.id();
            let existed = answer.index_of(&id).is_some();
            let line_of = callee.flow.span.start_line;
            let Some(child) =
                answer.add_variable(id.clone(), &inner.label(), &inner.path, line_of, Some((node, depth)))
            else {
                return;
            };
            answer.add_edge(scope.id(), id, "passes_to", Some(confidence), Some(event.line), child);
            if !existed && depth < max_depth {
                follow(view, &inner, &callee, child, depth + 1, max_depth, answer);
            }
        }
    }
}

/// The callee's flow of its parameter number `index`, with the text of its file.
fn callee_parameter_flow(view: &View<'_>, function: &SymbolRef, index: usize) -> Option<Traced> {
    let text = read_text(view.workspace(), &function.path)?;
    let parameters = loupe_syntax::data_flow(function.lang, &text, function.line, "")?.parameters;
    let parameter = parameters.get(index)?;
    let flow = loupe_syntax::data_flow(function.lang, &text, function.line, parameter)?;
    Some(Traced { flow, text })
}
