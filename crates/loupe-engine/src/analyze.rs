//! `analyze` (§8.1): dependencies, impact, calls, references, types and data flow.
//!
//! The import and type graphs come from the index (`workspace.rs`, rebuilt when the index
//! changes); calls, references and data flow parse the few files a query touches, found
//! through the text index, as they are on disk now. Resolution and its confidence are
//! `loupe-graph`'s; this module walks, bounds the walk by `max_depth` and `max_nodes`, and
//! renders the answer: nodes and edges, and a compact tree as the text face.

mod flow;
mod graph;

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_graph::calls::is_type_kind;
use loupe_graph::{Confidence, Resolved, SymbolRef, Workspace as _, resolve_call};
use loupe_index::{IndexState, Lang, SymbolKind};
use loupe_syntax::{Definition, FileFacts, RelationKind};
use serde_json::{Map, Value, json};

use crate::args::{Args, Parsed, Rejected};
use crate::params;
pub(crate) use crate::params::{AnalyzeMode, Direction, TargetType};
use crate::response::{Graph, MetadataLevel, Outcome, next_line};
use crate::work::{Stopped, Work};
use crate::workspace::Workspace;
use crate::workspace::references::{FILES_PER_CHUNK, mentioning, reference_sites, same_family, same_symbol, used_name};
use crate::workspace::relations::View;
use graph::{Answer, Side};

const MAX_NODES_DEFAULT: usize = 50;
const MAX_NODES_CEILING: usize = 500;

impl Direction {
    fn up(self) -> bool {
        matches!(self, Direction::Upstream | Direction::Both)
    }

    fn down(self) -> bool {
        matches!(self, Direction::Downstream | Direction::Both)
    }
}

/// An `analyze` call, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct AnalyzeRequest {
    target: String,
    target_type: TargetType,
    mode: AnalyzeMode,
    direction: Direction,
    max_depth: usize,
    /// The caller named `max_depth` (else the mode's default applies).
    depth_given: bool,
    max_nodes: usize,
    path: Option<String>,
    metadata: Option<MetadataLevel>,
    original: Map<String, Value>,
}

/// Runs a parsed `analyze` call.
pub(crate) fn run(workspace: &Workspace, request: &AnalyzeRequest, work: &Work) -> Outcome {
    answer(workspace, request, work)
        .unwrap_or_else(|error| {
            Outcome::failure("analyze", Some(request.mode.to_string()), Some(request.target.clone()), error)
        })
        .with_metadata(request.metadata)
}

/// Parses an `analyze` call's arguments into its request.
pub(crate) fn parse(arguments: Value) -> Parsed<AnalyzeRequest> {
    Rejected::parsing("analyze", arguments, parse_request).map_err(|(rejected, _)| rejected)
}

fn parse_request(arguments: Value, original: Map<String, Value>) -> Result<AnalyzeRequest, ToolError> {
    let mut args = Args::new(&params::ANALYZE, arguments)?;
    let mode = args.choice("mode")?.as_deref().and_then(AnalyzeMode::parse).ok_or_else(|| {
        ToolError::invalid_args(
            "`mode` is required for `analyze`",
            format!("add `mode`: one of {}", AnalyzeMode::CHOICES.join(", ")),
        )
    })?;
    let target = args.required_string("target", "src/main.rs or parse_config")?;
    if target.trim().is_empty() {
        return Err(ToolError::invalid_args("`target` is empty", "pass a file path or a symbol name"));
    }
    let target_type = args.choice("target_type")?.as_deref().and_then(TargetType::parse).unwrap_or(TargetType::Auto);
    let direction = args.choice("direction")?.as_deref().and_then(Direction::parse).unwrap_or(Direction::Both);
    let default_depth = match mode {
        AnalyzeMode::Dependencies => 1,
        AnalyzeMode::Impact => 20,
        AnalyzeMode::Types => 5,
        AnalyzeMode::Calls | AnalyzeMode::References | AnalyzeMode::DataFlow => 3,
    };
    let given_depth = args.integer("max_depth")?;
    let max_depth = given_depth.map_or(default_depth, |depth| depth as usize);
    if max_depth == 0 {
        return Err(ToolError::invalid_args(
            "`max_depth` must be at least 1",
            format!("omit it (default {default_depth})"),
        ));
    }
    let max_nodes = args.integer("max_nodes")?.map_or(MAX_NODES_DEFAULT, |nodes| nodes as usize);
    if max_nodes == 0 || max_nodes > MAX_NODES_CEILING {
        return Err(ToolError::invalid_args(
            format!("`max_nodes` must be between 1 and {MAX_NODES_CEILING}, got {max_nodes}"),
            format!("omit it (default {MAX_NODES_DEFAULT})"),
        ));
    }
    let path = args.string("path")?;
    let metadata = args.metadata()?;
    args.string("session_id")?;
    args.finish()?;
    Ok(AnalyzeRequest {
        target: target.trim().to_owned(),
        target_type,
        mode,
        direction,
        max_depth,
        depth_given: given_depth.is_some(),
        max_nodes,
        path,
        metadata,
        original,
    })
}

/// What the target turned out to be.
enum Target {
    File(RepoPath),
    Symbol(SymbolRef),
    /// A revision range: the files it changed, and how its sides are named.
    Range(Vec<crate::workspace::changes::Change>, String),
    /// A variable in a function: `flow` resolves it.
    Variable,
}

fn answer(workspace: &Workspace, request: &AnalyzeRequest, work: &Work) -> Result<Outcome, ToolError> {
    let index = workspace.index_for_query().ok_or_else(|| {
        ToolError::new(ErrorCode::IndexNotReady, "this server runs without an index", "restart loupe with an index dir")
    })?;
    // While the first build runs the graphs cover the files indexed so far (after the bounded
    // wait every index call makes): the answer says how many, and how to ask again.
    let building = (index.state() == IndexState::Building).then(|| {
        let status = index.status();
        (status.files.max(status.files_done), status.files_total)
    });
    let view = View::new(workspace, index, work);
    let target = resolve_target(&view, request)?;
    let mut answer = Answer::new(request.max_nodes);
    if let (AnalyzeMode::Calls, Target::Symbol(symbol)) = (request.mode, &target)
        && !request.depth_given
        && request.max_depth > 1
    {
        return Ok(direct_calls(&view, request, symbol, &target, building));
    }
    match (request.mode, &target) {
        (AnalyzeMode::Dependencies, _) => dependencies(&view, request, &target, &mut answer),
        (AnalyzeMode::Impact, _) => impact(&view, request, &target, &mut answer),
        (AnalyzeMode::Calls, Target::Symbol(symbol)) => calls(&view, request, symbol, &mut answer),
        (AnalyzeMode::References, Target::Symbol(symbol)) => {
            let root = answer.root_symbol(symbol);
            references(&view, symbol, &mut answer, (root, 1))
        }
        (AnalyzeMode::Types, Target::Symbol(symbol)) => types(&view, request, symbol, &mut answer),
        (AnalyzeMode::DataFlow, _) => flow::data_flow(&view, request, &mut answer)?,
        // Only data_flow resolves its target as a variable, only impact as a range
        // (`resolve_target`).
        (mode, Target::Variable | Target::Range(..)) => {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("mode `{mode}` got a variable target"),
                "retry with target_type='symbol' or 'file'",
            ));
        }
        (mode, Target::File(path)) => {
            return Err(ToolError::invalid_args(
                format!("mode `{mode}` takes a symbol, and `{}` is a file", path.as_str()),
                "name a function, method or type; the file's outline lists them",
            )
            .with_next_call(NextCall::new("read", json!({"mode": "outline", "target": path.as_str()}))));
        }
    }
    Ok(render(request, &target, answer, building, work.stopped_early()))
}

/// `calls` without `max_depth`: the direct callers and callees, which is what "who calls this"
/// asks, and a count of the rest within the default depth, with the call that shows them.
fn direct_calls(
    view: &View<'_>,
    request: &AnalyzeRequest,
    symbol: &SymbolRef,
    target: &Target,
    building: Option<(usize, usize)>,
) -> Outcome {
    let mut deeper = Answer::new(request.max_nodes);
    calls(view, request, symbol, &mut deeper);
    let near = AnalyzeRequest { max_depth: 1, ..request.clone() };
    let mut answer = Answer::new(request.max_nodes);
    calls(view, &near, symbol, &mut answer);
    let more = deeper.node_count().saturating_sub(answer.node_count());
    if more > 0 {
        let plus = if deeper.truncated { "+" } else { "" };
        let depth = request.max_depth;
        answer.notes.push(format!("── {more}{plus} more within depth {depth}"));
        answer.deeper = Some(depth);
    }
    render(&near, target, answer, building, view.work().stopped_early())
}

fn resolve_target(view: &View<'_>, request: &AnalyzeRequest) -> Result<Target, ToolError> {
    let workspace = view.workspace();
    if request.mode == AnalyzeMode::DataFlow {
        return Ok(Target::Variable);
    }
    let exists = || workspace.root().resolve(&request.target).is_ok_and(|resolved| resolved.real.is_some());
    let range = request.target_type == TargetType::Range
        || (request.target_type == TargetType::Auto && request.target.contains("..") && !exists());
    if range {
        if request.mode != AnalyzeMode::Impact {
            return Err(ToolError::invalid_args(
                format!("a revision range is a target of mode impact only, not `{}`", request.mode),
                "ask impact of the range, or name a file or symbol",
            )
            .with_next_call(NextCall::new(
                "analyze",
                json!({"mode": "impact", "target": request.target, "target_type": "range"}),
            )));
        }
        let (changes, label) = crate::workspace::changes::range_changes(
            workspace,
            &request.target,
            ("analyze", &request.original, "target"),
            view.work(),
        )?;
        return Ok(Target::Range(changes, label));
    }
    let as_file = match request.target_type {
        TargetType::Symbol => None,
        wanted => match workspace.root().resolve(&request.target) {
            Ok(resolved) if resolved.real.as_ref().is_some_and(|real| real.is_file()) => Some(resolved.path),
            Ok(_) | Err(_) if wanted == TargetType::File => {
                return Err(ToolError::new(
                    ErrorCode::FileNotFound,
                    format!("no file `{}` under the root", request.target),
                    "pass a path relative to the root, or target_type `symbol`",
                )
                .with_next_call(NextCall::new("search", json!({"query": request.target, "type": "file"}))));
            }
            _ => None,
        },
    };
    if let Some(path) = as_file {
        return Ok(Target::File(path));
    }
    let want_type = request.mode == AnalyzeMode::Types;
    let keep = |definition: &Definition| !want_type || is_type_kind(definition.kind);
    let resolved = crate::workspace::symbols::resolve_where(
        workspace,
        "analyze",
        &request.target,
        request.path.as_deref(),
        &request.original,
        &keep,
    )?;
    Ok(Target::Symbol(resolved.into_symbol_ref()))
}

fn target_file(target: &Target) -> RepoPath {
    match target {
        Target::File(path) => path.clone(),
        Target::Symbol(symbol) => symbol.path.clone(),
        Target::Variable | Target::Range(..) => RepoPath::root(),
    }
}

fn dependencies(view: &View<'_>, request: &AnalyzeRequest, target: &Target, answer: &mut Answer) {
    let file = target_file(target);
    let root = answer.root_file(&file);
    let start = Resolved::File(file);
    let sides: &[(bool, Side)] = match request.direction {
        Direction::Upstream => &[(true, Side::Upstream)],
        Direction::Downstream => &[(false, Side::Downstream)],
        Direction::Both => &[(false, Side::Downstream), (true, Side::Upstream)],
    };
    for &(upstream, side) in sides {
        let walk = view.graphs.imports.walk(&start, upstream, request.max_depth, answer.room());
        answer.truncated |= walk.truncated;
        add_walk(answer, root, side, walk);
    }
}

/// Everything that depends on the target, nearest first: for a file, the files importing it
/// transitively; for a symbol, the symbols using it, then the files importing theirs; for a
/// range, each symbol it changed (riskiest first), their users, then the users' importers.
fn impact(view: &View<'_>, request: &AnalyzeRequest, target: &Target, answer: &mut Answer) {
    let symbol = match target {
        Target::Symbol(symbol) => symbol,
        Target::Range(changes, label) => return range_impact(view, request, (changes, label), answer),
        _ => {
            let file = target_file(target);
            let root = answer.root_file(&file);
            let walk = view.graphs.imports.walk(&Resolved::File(file), true, request.max_depth, answer.room());
            answer.truncated |= walk.truncated;
            add_walk(answer, root, Side::Upstream, walk);
            return;
        }
    };
    let root = answer.root_symbol(symbol);
    references(view, symbol, answer, (root, 1));
    importers_of_users(view, request, answer, 1);
}

/// The files importing the files of the users at `depth`, each file once, under the first user
/// found in it, to `max_depth`.
fn importers_of_users(view: &View<'_>, request: &AnalyzeRequest, answer: &mut Answer, depth: usize) {
    if request.max_depth <= depth {
        return;
    }
    let mut seen = rustc_hash::FxHashSet::default();
    for (node, path) in answer.user_files(depth) {
        if !seen.insert(path.clone()) {
            continue;
        }
        let walk = view.graphs.imports.walk(&Resolved::File(path), true, request.max_depth - depth, answer.room());
        answer.truncated |= walk.truncated;
        let steps =
            walk.steps.into_iter().map(|step| loupe_graph::Step { depth: step.depth + depth, ..step }).collect();
        add_walk(answer, node, Side::Upstream, loupe_graph::Walk { steps, truncated: walk.truncated });
        if answer.full() {
            break;
        }
    }
}

/// `impact` of a revision range: the symbols it changed (additions left out: nothing used them
/// before), riskiest first, each with the symbols that use it now, then the files importing
/// those.
fn range_impact(
    view: &View<'_>,
    request: &AnalyzeRequest,
    (changes, label): (&[crate::workspace::changes::Change], &str),
    answer: &mut Answer,
) {
    let root =
        answer.root_range(&request.target, format!("{} ({label}): {} file(s) changed", request.target, changes.len()));
    let limit = view.workspace().config().max_file_bytes as usize;
    let mut changed: Vec<(crate::workspace::review::Reviewed, SymbolRef)> = Vec::new();
    for change in changes {
        let sides = crate::workspace::review::FileSides {
            path: &change.path,
            old_path: change.old_path.as_deref(),
            old: change.old.as_deref(),
            new: change.new.as_deref(),
        };
        let Some(lang) = Lang::from_path(&change.path) else { continue };
        for symbol in crate::workspace::review::symbols_of(view.workspace(), &sides, limit) {
            if symbol.change.change == loupe_syntax::changes::ChangeKind::Added {
                continue;
            }
            if let Some(target) = crate::workspace::review::target_of(view, &sides, lang, &symbol) {
                changed.push((symbol, target));
            }
        }
    }
    // Riskiest first; a module's data (a constant, a variable) after the code of its rank.
    changed.sort_by_key(|(symbol, _)| {
        (symbol.rank(), matches!(symbol.change.kind, SymbolKind::Variable | SymbolKind::Constant))
    });
    for (symbol, target) in &changed {
        if answer.full() || view.work().stopped().is_some() {
            answer.truncated = true;
            break;
        }
        // A symbol gone from the tree is shown where it was.
        let shown = SymbolRef { line: symbol.line(), ..target.clone() };
        let Some(node) = answer.add_symbol(&shown, root, Side::Upstream, 1) else { break };
        references(view, target, answer, (node, 2));
    }
    importers_of_users(view, request, answer, 2);
}

fn add_walk(answer: &mut Answer, root: usize, side: Side, walk: loupe_graph::Walk) {
    for step in walk.steps {
        let parent_id = match side {
            Side::Upstream => resolved_id(&step.to),
            Side::Downstream => resolved_id(&step.from),
        };
        let parent = answer.index_of(&parent_id).unwrap_or(root);
        let Some(node) = answer.add_resolved(&step.node, parent, side, step.depth) else { break };
        answer.add_edge(resolved_id(&step.from), resolved_id(&step.to), "imports", None, Some(step.line), node);
    }
}

fn resolved_id(resolved: &Resolved) -> String {
    match resolved {
        Resolved::File(path) => path.as_str().to_owned(),
        Resolved::External(name) => format!("external:{name}"),
    }
}

/// `enclosing` for the call sites of one file, each line's answer found once: a minified file
/// holds every call on one line, and 125,000 calls made 125,000 scans of its 125,000
/// definitions (four minutes for one `analyze calls`).
struct Enclosings<'f> {
    facts: &'f FileFacts,
    known: rustc_hash::FxHashMap<usize, Option<&'f Definition>>,
}

impl<'f> Enclosings<'f> {
    fn new(facts: &'f FileFacts) -> Enclosings<'f> {
        Enclosings { facts, known: Default::default() }
    }

    /// The innermost function-like definition around `line`.
    fn callable_at(&mut self, line: usize) -> Option<&'f Definition> {
        let facts = self.facts;
        *self.known.entry(line).or_insert_with(|| enclosing(facts, line, false))
    }
}

/// The innermost function-like definition around `line`; else, when `any`, the innermost
/// definition of any kind around it.
fn enclosing<'f>(facts: &'f FileFacts, line: usize, any: bool) -> Option<&'f Definition> {
    let around = |definition: &&Definition| definition.span.start_line <= line && line <= definition.span.end_line;
    let callable = |definition: &&Definition| {
        matches!(definition.kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor)
    };
    let innermost = |found: Option<&'f Definition>, definition: &'f Definition| match found {
        Some(best) if best.depth >= definition.depth => Some(best),
        _ => Some(definition),
    };
    let found = facts.definitions.iter().filter(around).filter(callable).fold(None, innermost);
    if found.is_some() || !any {
        return found;
    }
    {
        facts
            .definitions
            .iter()
            .filter(around)
            .filter(|definition| !matches!(definition.kind, SymbolKind::Impl))
            .fold(None, innermost)
    }
}

fn calls(view: &View<'_>, request: &AnalyzeRequest, target: &SymbolRef, answer: &mut Answer) {
    let root = answer.root_symbol(target);
    if request.direction.down() {
        let mut frontier = vec![(target.clone(), root)];
        for depth in 1..=request.max_depth {
            let mut next = Vec::new();
            for (symbol, node) in &frontier {
                let Some(facts) = view.facts(&symbol.path) else { continue };
                let mut enclosings = Enclosings::new(&facts);
                for site in &facts.calls {
                    if view.work().stopped().is_some() {
                        break;
                    }
                    let inside = enclosings.callable_at(site.line).is_some_and(|definition| {
                        definition.name_line == symbol.line && definition.name == symbol.name
                    });
                    if !inside {
                        continue;
                    }
                    for (callee, confidence) in resolve_call(view, &symbol.path, symbol.lang, site) {
                        let existed = answer.index_of(&callee.id()).is_some();
                        let Some(callee_node) = answer.add_symbol(&callee, *node, Side::Downstream, depth) else {
                            break;
                        };
                        answer.add_edge(
                            symbol.id(),
                            callee.id(),
                            "calls",
                            Some(confidence),
                            Some(site.line),
                            callee_node,
                        );
                        if !existed {
                            next.push((callee, callee_node));
                        }
                    }
                }
            }
            if next.is_empty() || answer.full() {
                break;
            }
            frontier = next;
        }
    }
    if request.direction.up() {
        let mut frontier = vec![(target.clone(), root)];
        for depth in 1..=request.max_depth {
            let mut next = Vec::new();
            for (symbol, node) in &frontier {
                let (callers, cut) = callers_of(view, symbol, answer.left());
                answer.truncated |= cut;
                for (caller, confidence, line) in callers {
                    let existed = answer.index_of(&caller.id()).is_some();
                    let Some(caller_node) = answer.add_symbol(&caller, *node, Side::Upstream, depth) else { break };
                    answer.add_edge(caller.id(), symbol.id(), "calls", Some(confidence), Some(line), caller_node);
                    if !existed && caller.kind != SymbolKind::Module {
                        next.push((caller, caller_node));
                    }
                }
            }
            if next.is_empty() || answer.full() {
                break;
            }
            frontier = next;
        }
    }
}

/// Callee names that may call `symbol` in `path`: its name, its import aliases, and for a
/// constructor its class's name and `super`.
fn call_names(view: &View<'_>, path: &RepoPath, symbol: &SymbolRef) -> Vec<String> {
    let mut names = loupe_graph::local_names(view, path, &symbol.name);
    if symbol.is_constructor() {
        names.extend(loupe_graph::local_names(view, path, used_name(symbol)));
        names.push("super".to_owned());
    }
    names
}

/// Every call of `symbol` in the workspace: (caller, confidence, line of the call). Files are
/// taken in path order, a chunk at a time, until `limit` distinct callers are found (a node
/// budget will not hold more); the flag says whether files were left unread.
fn callers_of(view: &View<'_>, symbol: &SymbolRef, limit: usize) -> (Vec<(SymbolRef, Confidence, usize)>, bool) {
    let mut found: Vec<(SymbolRef, Confidence, usize)> = Vec::new();
    let mut callers = rustc_hash::FxHashSet::default();
    let files = same_family(mentioning(view, symbol), symbol.lang);
    for chunk in files.chunks(FILES_PER_CHUNK) {
        if callers.len() >= limit || view.work().stopped().is_some() {
            return (found, true);
        }
        for (path, facts) in chunk.iter().zip(view.facts_of(chunk)) {
            callers_in(view, symbol, path, facts, &mut found);
        }
        callers.extend(found.iter().map(|(caller, _, _)| caller.id()));
    }
    (found, false)
}

/// The calls of `symbol` in one file.
fn callers_in(
    view: &View<'_>,
    symbol: &SymbolRef,
    path: &RepoPath,
    facts: Option<std::sync::Arc<FileFacts>>,
    found: &mut Vec<(SymbolRef, Confidence, usize)>,
) {
    let Some(lang) = Lang::from_path(path.as_str()) else { return };
    let names = call_names(view, path, symbol);
    let Some(facts) = facts else { return };
    let mut enclosings = Enclosings::new(&facts);
    for site in &facts.calls {
        if view.work().stopped().is_some() {
            return;
        }
        if !names.iter().any(|name| name == site.callee.trim_end_matches('!')) {
            continue;
        }
        let resolved = resolve_call(view, path, lang, site);
        let Some((_, confidence)) = resolved.iter().find(|(callee, _)| same_symbol(callee, symbol)) else {
            continue;
        };
        let caller = match enclosings.callable_at(site.line) {
            Some(definition) => SymbolRef::from_definition(path, lang, definition),
            None => module_symbol(path, lang),
        };
        found.push((caller, *confidence, site.line));
    }
}

/// Code at the top level of a file, as a caller or a referrer.
fn module_symbol(path: &RepoPath, lang: Lang) -> SymbolRef {
    SymbolRef {
        path: path.clone(),
        lang,
        name: "<module>".to_owned(),
        kind: SymbolKind::Module,
        container: None,
        signature: String::new(),
        span: loupe_syntax::Span { start_line: 1, end_line: 1 },
        line: 1,
    }
}

/// The users of `target`, each added under node `root` at `depth`.
fn references(view: &View<'_>, target: &SymbolRef, answer: &mut Answer, (root, depth): (usize, usize)) {
    let complete = reference_sites(view, target, &mut |path, facts, sites| {
        if answer.full() {
            return false;
        }
        let mut lines: Vec<(usize, Confidence)> = sites.iter().map(|site| (site.line, site.confidence)).collect();
        lines.dedup_by_key(|(line, _)| *line);
        for (line, confidence) in lines {
            let user = match enclosing(facts, line, true) {
                Some(definition) => SymbolRef::from_definition(path, facts.lang, definition),
                None => module_symbol(path, facts.lang),
            };
            let Some(node) = answer.add_symbol(&user, root, Side::Upstream, depth) else { return false };
            answer.add_edge(user.id(), target.id(), "references", Some(confidence), Some(line), node);
        }
        true
    });
    answer.truncated |= !complete;
}

fn relation_name(kind: RelationKind) -> &'static str {
    match kind {
        RelationKind::Extends => "extends",
        RelationKind::Implements => "implements",
        RelationKind::Impl => "impl",
        RelationKind::Embeds => "embeds",
    }
}

/// The type definition `name` means, seen from `path`: the one in that file, else the one the
/// file imports, else the only one.
fn type_named(view: &View<'_>, name: &str, from: &RepoPath) -> Option<(SymbolRef, Confidence)> {
    let candidates: Vec<SymbolRef> =
        view.named(name).iter().filter(|candidate| is_type_kind(candidate.kind)).cloned().collect();
    if let Some(local) = candidates.iter().find(|candidate| &candidate.path == from) {
        return Some((local.clone(), Confidence::Exact));
    }
    let imported: Vec<RepoPath> = view.imports(from).iter().flat_map(|(_, files)| files.iter().cloned()).collect();
    let mut visible: Vec<&SymbolRef> =
        candidates.iter().filter(|candidate| imported.contains(&candidate.path)).collect();
    if visible.is_empty() {
        let package = view.package(from);
        visible = candidates.iter().filter(|candidate| package.contains(&candidate.path)).collect();
    }
    match (visible.as_slice(), candidates.as_slice()) {
        ([one], _) => Some(((*one).clone(), Confidence::Exact)),
        ([], [one]) => Some((one.clone(), Confidence::Scoped)),
        ([], many) if !many.is_empty() => Some((many[0].clone(), Confidence::NameOnly)),
        _ => None,
    }
}

fn types(view: &View<'_>, request: &AnalyzeRequest, target: &SymbolRef, answer: &mut Answer) {
    let root = answer.root_symbol(target);
    for (side, wanted) in [(Side::Upstream, request.direction.up()), (Side::Downstream, request.direction.down())] {
        if !wanted {
            continue;
        }
        let mut frontier = vec![(target.clone(), root)];
        for depth in 1..=request.max_depth {
            let mut next = Vec::new();
            for (symbol, node) in &frontier {
                let relations = match side {
                    Side::Upstream => view.graphs.types.supertypes_of(&symbol.name),
                    Side::Downstream => view.graphs.types.subtypes_of(&symbol.name),
                };
                for relation in relations {
                    let (other_name, from_file) = match side {
                        Side::Upstream => (&relation.supertype, &relation.path),
                        Side::Downstream => (&relation.subtype, &relation.path),
                    };
                    // The relation must be about this symbol: stated in its file, or naming a
                    // type that resolves to it from where it is stated.
                    let own = match side {
                        Side::Upstream => type_named(view, &symbol.name, &relation.path),
                        Side::Downstream => type_named(view, &relation.supertype, &relation.path),
                    };
                    if !own.as_ref().is_some_and(|(resolved, _)| same_symbol(resolved, symbol)) {
                        continue;
                    }
                    let (other, confidence) = match type_named(view, other_name, from_file) {
                        Some(found) => found,
                        None => {
                            let id = format!("type:{other_name}");
                            let Some(other_node) = answer.add_external(&id, other_name, *node, side, depth) else {
                                break;
                            };
                            let (source, target_id) = match side {
                                Side::Upstream => (symbol.id(), id),
                                Side::Downstream => (id, symbol.id()),
                            };
                            let relation_name = relation_name(relation.kind);
                            answer.add_edge(source, target_id, relation_name, None, Some(relation.line), other_node);
                            continue;
                        }
                    };
                    let existed = answer.index_of(&other.id()).is_some();
                    let Some(other_node) = answer.add_symbol(&other, *node, side, depth) else { break };
                    let (source, target_id) = match side {
                        Side::Upstream => (symbol.id(), other.id()),
                        Side::Downstream => (other.id(), symbol.id()),
                    };
                    answer.add_edge(
                        source,
                        target_id,
                        relation_name(relation.kind),
                        Some(confidence),
                        Some(relation.line),
                        other_node,
                    );
                    if !existed {
                        next.push((other, other_node));
                    }
                }
            }
            if next.is_empty() || answer.full() {
                break;
            }
            frontier = next;
        }
    }
}

/// The answer's faces. `building`: the first index build is still running, with (files
/// indexed, files in all, 0 while the walk counts them).
/// The answer as an outcome. A walk `stopped` early (cancelled, or at the time budget) shows what
/// it found, cut, with the same question as the next call.
fn render(
    request: &AnalyzeRequest,
    target: &Target,
    answer: Answer,
    building: Option<(usize, usize)>,
    stopped: Option<Stopped>,
) -> Outcome {
    let resolved_target = match target {
        Target::Variable => answer.flow_target.clone().unwrap_or(Value::Null),
        Target::File(path) => json!({"type": "file", "path": path.as_str(), "name": path.file_name(), "line": null}),
        Target::Range(changes, label) => json!({
            "type": "range", "range": request.target, "sides": label, "files": changes.len(),
        }),
        Target::Symbol(symbol) => json!({
            "type": "symbol", "path": symbol.path.as_str(), "name": symbol.qualified(),
            "kind": symbol.kind, "line": symbol.line,
        }),
    };
    // impact only ever looks upstream, whatever `direction` says.
    let direction = if request.mode == AnalyzeMode::Impact { "upstream" } else { request.direction.as_str() };
    let mut face = answer.face(request.mode, direction, request.max_depth);
    // The face offers one call: the same question again when the index was still building,
    // more of the graph when it was cut, the deeper walk when it stopped short of one, else a
    // read of the first node.
    let next_call = if building.is_some() || stopped.is_some() {
        Some(NextCall { tool: "analyze".into(), arguments: request.original.clone() })
    } else if answer.truncated && request.max_nodes < MAX_NODES_CEILING {
        let mut arguments = request.original.clone();
        arguments.insert("max_nodes".into(), Value::from((request.max_nodes * 4).min(MAX_NODES_CEILING)));
        Some(NextCall { tool: "analyze".into(), arguments })
    } else if let Some(depth) = answer.deeper {
        let mut arguments = request.original.clone();
        arguments.insert("max_depth".into(), Value::from(depth));
        Some(NextCall { tool: "analyze".into(), arguments })
    } else {
        answer.read_calls(1).into_iter().next()
    };
    if let Some((done, total)) = building {
        let files = if total > 0 { format!("{done} of {total} files") } else { format!("{done} files so far") };
        face.push(format!(
            "note: the index is still building ({files}): edges from the files not yet indexed are missing; ask again once it is ready\n"
        ));
    }
    if let Some(stopped) = stopped {
        face.push(format!("── {}: the walk stopped early; the graph above is what it found\n", stopped.words()));
    }
    if let Some(call) = &next_call {
        face.push(next_line(call));
    }
    let truncated = answer.truncated || building.is_some() || stopped.is_some();
    let (nodes, edges) = answer.into_json();
    let mut outcome = Outcome::success("analyze", Some(request.mode.to_string()), Some(request.target.clone()), face);
    outcome.act.truncated = truncated;
    outcome.act.next_calls = next_call.into_iter().collect();
    outcome.act.graph = Some(Graph { resolved_target, nodes, edges });
    let detail = &mut outcome.detail;
    let index_state = if building.is_some() { IndexState::Building } else { IndexState::Ready };
    detail.insert("index_state".into(), serde_json::to_value(index_state).unwrap_or_default());
    detail.insert("direction".into(), Value::from(direction));
    detail.insert("max_depth".into(), Value::from(request.max_depth));
    if let Some((key, value)) = stopped.map(Stopped::detail) {
        detail.insert(key.into(), value);
    }
    outcome
}
