//! The answer of one `analyze` call as it grows: nodes (each reached once, from one parent,
//! on one side of the target), edges (deduplicated), the `max_nodes` bound, and the two faces:
//! `{nodes, edges}` for programs and a compact indented tree for the model.

use loupe_core::{NextCall, RepoPath};
use loupe_graph::{Confidence, Resolved, SymbolRef};
use loupe_index::SymbolKind;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Value, json};

use super::AnalyzeMode;
use crate::response::Face;

/// Which way from the target a node lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Upstream,
    Downstream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    File,
    External,
    Symbol(SymbolKind),
    /// A variable or parameter (data flow).
    Variable,
    /// A revision range (`impact` of what it changed).
    Range,
}

impl NodeKind {
    fn as_str(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::External => "external",
            NodeKind::Symbol(kind) => kind.as_str(),
            NodeKind::Variable => "variable",
            NodeKind::Range => "range",
        }
    }
}

#[derive(Debug)]
struct Node {
    id: String,
    kind: NodeKind,
    name: String,
    path: Option<RepoPath>,
    line: Option<usize>,
    depth: usize,
    side: Option<Side>,
    parent: Option<usize>,
}

#[derive(Debug)]
struct Edge {
    source: String,
    target: String,
    relation: &'static str,
    confidence: Option<Confidence>,
    line: Option<usize>,
    /// The node this edge reached (for the face: its lines and confidence).
    node: usize,
}

#[derive(Debug)]
pub(crate) struct Answer {
    nodes: Vec<Node>,
    ids: FxHashMap<String, usize>,
    edges: Vec<Edge>,
    edge_keys: FxHashSet<(String, String, &'static str, Option<usize>)>,
    max_nodes: usize,
    pub(crate) truncated: bool,
    /// Lines printed after the tree (data flow's ordered events).
    pub(crate) notes: Vec<String>,
    /// What data flow resolved its target to.
    pub(crate) flow_target: Option<Value>,
    /// The answer stopped short of the depth a deeper walk would reach: that depth, which its
    /// next call asks for (its notes say how many more nodes the walk has).
    pub(crate) deeper: Option<usize>,
}

impl Answer {
    pub(crate) fn new(max_nodes: usize) -> Answer {
        Answer {
            nodes: Vec::new(),
            ids: FxHashMap::default(),
            edges: Vec::new(),
            edge_keys: FxHashSet::default(),
            max_nodes,
            truncated: false,
            notes: Vec::new(),
            flow_target: None,
            deeper: None,
        }
    }

    pub(crate) fn index_of(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }

    pub(crate) fn full(&self) -> bool {
        self.nodes.len() >= self.max_nodes
    }

    /// The nodes at `depth` (1: the target's direct users) with their files, in order.
    pub(crate) fn user_files(&self, depth: usize) -> Vec<(usize, RepoPath)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.depth == depth)
            .filter_map(|(index, node)| Some((index, node.path.clone()?)))
            .collect()
    }

    /// How many more nodes fit.
    pub(crate) fn left(&self) -> usize {
        self.max_nodes.saturating_sub(self.nodes.len())
    }

    /// How many more nodes a walk that counts its start may add (the start exists already).
    pub(crate) fn room(&self) -> usize {
        self.max_nodes.saturating_sub(self.nodes.len()) + 1
    }

    fn push(&mut self, node: Node) -> Option<usize> {
        if let Some(&existing) = self.ids.get(&node.id) {
            return Some(existing);
        }
        if self.full() {
            self.truncated = true;
            return None;
        }
        let index = self.nodes.len();
        self.ids.insert(node.id.clone(), index);
        self.nodes.push(node);
        Some(index)
    }

    pub(crate) fn root_file(&mut self, path: &RepoPath) -> usize {
        let node = Node {
            id: path.as_str().to_owned(),
            kind: NodeKind::File,
            name: path.file_name().to_owned(),
            path: Some(path.clone()),
            line: None,
            depth: 0,
            side: None,
            parent: None,
        };
        self.push(node).unwrap_or(0)
    }

    /// A revision range as the root: `name` says which commits it compares.
    pub(crate) fn root_range(&mut self, spec: &str, name: String) -> usize {
        let node = Node {
            id: format!("range:{spec}"),
            kind: NodeKind::Range,
            name,
            path: None,
            line: None,
            depth: 0,
            side: None,
            parent: None,
        };
        self.push(node).unwrap_or(0)
    }

    pub(crate) fn root_symbol(&mut self, symbol: &SymbolRef) -> usize {
        let node = symbol_node(symbol, None, None, 0);
        self.push(node).unwrap_or(0)
    }

    pub(crate) fn add_symbol(&mut self, symbol: &SymbolRef, parent: usize, side: Side, depth: usize) -> Option<usize> {
        self.push(symbol_node(symbol, Some(parent), Some(side), depth))
    }

    /// A variable (data flow): the target when `under` is `None`, else reached from node
    /// `under.0` at depth `under.1`.
    pub(crate) fn add_variable(
        &mut self,
        id: String,
        name: &str,
        path: &RepoPath,
        line: usize,
        under: Option<(usize, usize)>,
    ) -> Option<usize> {
        self.push(Node {
            id,
            kind: NodeKind::Variable,
            name: name.to_owned(),
            path: Some(path.clone()),
            line: Some(line),
            depth: under.map_or(0, |(_, depth)| depth),
            side: under.map(|_| Side::Downstream),
            parent: under.map(|(parent, _)| parent),
        })
    }

    pub(crate) fn add_external(
        &mut self,
        id: &str,
        name: &str,
        parent: usize,
        side: Side,
        depth: usize,
    ) -> Option<usize> {
        self.push(Node {
            id: id.to_owned(),
            kind: NodeKind::External,
            name: name.to_owned(),
            path: None,
            line: None,
            depth,
            side: Some(side),
            parent: Some(parent),
        })
    }

    pub(crate) fn add_resolved(
        &mut self,
        resolved: &Resolved,
        parent: usize,
        side: Side,
        depth: usize,
    ) -> Option<usize> {
        let node = match resolved {
            Resolved::File(path) => Node {
                id: path.as_str().to_owned(),
                kind: NodeKind::File,
                name: path.file_name().to_owned(),
                path: Some(path.clone()),
                line: None,
                depth,
                side: Some(side),
                parent: Some(parent),
            },
            Resolved::External(name) => Node {
                id: format!("external:{name}"),
                kind: NodeKind::External,
                name: name.clone(),
                path: None,
                line: None,
                depth,
                side: Some(side),
                parent: Some(parent),
            },
        };
        self.push(node)
    }

    /// Records an edge once (per source, target, relation and line).
    pub(crate) fn add_edge(
        &mut self,
        source: String,
        target: String,
        relation: &'static str,
        confidence: Option<Confidence>,
        line: Option<usize>,
        node: usize,
    ) {
        if self.edge_keys.insert((source.clone(), target.clone(), relation, line)) {
            self.edges.push(Edge { source, target, relation, confidence, line, node });
        }
    }

    /// `read` calls for the first `count` nodes after the target that can be read.
    pub(crate) fn read_calls(&self, count: usize) -> Vec<NextCall> {
        self.nodes
            .iter()
            .skip(1)
            .filter_map(|node| {
                let path = node.path.as_ref()?;
                match node.kind {
                    NodeKind::Symbol(SymbolKind::Module) | NodeKind::File => Some(NextCall::new(
                        "read",
                        json!({"mode": "outline", "target": path.as_str()}),
                    )),
                    NodeKind::Symbol(_) => Some(NextCall::new(
                        "read",
                        json!({"mode": "symbol", "target": qualified_of(&node.id), "path": path.as_str()}),
                    )),
                    NodeKind::Range => None,
                    NodeKind::Variable => {
                        let line = node.line?;
                        Some(NextCall::new(
                            "read",
                            json!({"mode": "snippet", "target": path.as_str(), "start_line": line.saturating_sub(2).max(1), "end_line": line + 2}),
                        ))
                    }
                    NodeKind::External => None,
                }
            })
            .take(count)
            .collect()
    }

    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn into_json(self) -> (Vec<Value>, Vec<Value>) {
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .map(|node| {
                json!({
                    "id": node.id,
                    "type": node.kind.as_str(),
                    "name": node.name,
                    "path": node.path.as_ref().map(RepoPath::as_str),
                    "line": node.line,
                    "depth": node.depth,
                    "direction": node.side.map(|side| match side {
                        Side::Upstream => "upstream",
                        Side::Downstream => "downstream",
                    }),
                })
            })
            .collect();
        let edges: Vec<Value> = self
            .edges
            .iter()
            .map(|edge| {
                let mut value = json!({"source": edge.source, "target": edge.target, "relation": edge.relation});
                if let Some(confidence) = edge.confidence {
                    value["confidence"] = Value::from(confidence.as_str());
                }
                if let Some(line) = edge.line {
                    value["line"] = Value::from(line);
                }
                value
            })
            .collect();
        (nodes, edges)
    }

    /// The compact tree: a head line, the target's line, one section per side, each node under
    /// the node that reached it, with the lines and confidence of the edges that did.
    /// Node lines are text on both faces (`full` carries the nodes and edges as objects).
    pub(crate) fn face(&self, mode: AnalyzeMode, direction: &str, max_depth: usize) -> Face {
        let Some(root) = self.nodes.first() else { return Face::text(format!("analyze {mode}: nothing found\n")) };
        let mut face = Face::text(format!("analyze {mode} · {direction}, depth ≤ {max_depth}\n"));
        face.push(format!("{}\n", label(root)));
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (index, node) in self.nodes.iter().enumerate() {
            if let Some(parent) = node.parent {
                children[parent].push(index);
            }
        }
        let mut edges_to: Vec<Vec<&Edge>> = vec![Vec::new(); self.nodes.len()];
        // A node's note shows the edges between it and the node it hangs under (a caller of
        // several walked functions is shown under the first; its other calls are elsewhere).
        for edge in &self.edges {
            let node = &self.nodes[edge.node];
            let Some(parent) = node.parent.map(|parent| &self.nodes[parent]) else { continue };
            let other = if edge.source == node.id { &edge.target } else { &edge.source };
            // An import edge reaches a symbol's file: `app/config.py` under `app/config.py#<module>`.
            let joins = *other == parent.id || parent.path.as_ref().is_some_and(|path| path.as_str() == other);
            if joins {
                edges_to[edge.node].push(edge);
            }
        }
        for side in [Side::Upstream, Side::Downstream] {
            let tops: Vec<usize> =
                children[0].iter().copied().filter(|&child| self.nodes[child].side == Some(side)).collect();
            if tops.is_empty() {
                continue;
            }
            let count = self.nodes.iter().filter(|node| node.side == Some(side)).count();
            face.push(format!("{} ({count}):\n", section(mode, side)));
            let arrow = if side == Side::Upstream { "←" } else { "→" };
            let mut stack: Vec<(usize, usize)> = tops.iter().rev().map(|&top| (top, 1)).collect();
            while let Some((index, indent)) = stack.pop() {
                let node = &self.nodes[index];
                let shown = match (side, at_its_lines(node, &edges_to[index])) {
                    // A caller, a user or an importer: where in it, as `path:line`.
                    (Side::Upstream, Some(place)) => place,
                    _ => format!("{}{}", label(node), edge_note(&edges_to[index])),
                };
                face.push(format!("{}{arrow} {shown}\n", "  ".repeat(indent)));
                for &child in children[index].iter().rev() {
                    stack.push((child, indent + 1));
                }
            }
        }
        for note in &self.notes {
            face.push(format!("{note}\n"));
        }
        // The counts matter when the walk was cut; otherwise the lines above are the answer.
        if self.truncated {
            let plural = |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
            face.push(format!(
                "{} · {} · truncated at max_nodes={}\n",
                plural(self.nodes.len(), "node"),
                plural(self.edges.len(), "edge"),
                self.max_nodes
            ));
        }
        face
    }
}

fn symbol_node(symbol: &SymbolRef, parent: Option<usize>, side: Option<Side>, depth: usize) -> Node {
    let name = if symbol.kind == SymbolKind::Module { symbol.path.as_str().to_owned() } else { symbol.qualified() };
    Node {
        id: if symbol.kind == SymbolKind::Module { format!("{}#<module>", symbol.path.as_str()) } else { symbol.id() },
        kind: NodeKind::Symbol(symbol.kind),
        name,
        path: Some(symbol.path.clone()),
        line: (symbol.kind != SymbolKind::Module).then_some(symbol.line),
        depth,
        side,
        parent,
    }
}

/// `path#Config::load` → `Config::load`.
fn qualified_of(id: &str) -> &str {
    id.split_once('#').map_or(id, |(_, qualified)| qualified)
}

fn label(node: &Node) -> String {
    match (node.kind, &node.path, node.line) {
        (NodeKind::File, Some(path), _) => path.as_str().to_owned(),
        (NodeKind::External, _, _) => format!("external {}", node.name),
        (NodeKind::Symbol(SymbolKind::Module), Some(path), _) => format!("{} (top level)", path.as_str()),
        (kind, Some(path), Some(line)) => format!("{} {}  {}:{line}", kind.as_str(), node.name, path.as_str()),
        (kind, _, _) => format!("{} {}", kind.as_str(), node.name),
    }
}

/// A node that reached its parent from its own lines (a call, a use or an import inside it) as
/// `name  path:12, 30`: where the agent would look, the weaker confidence named.
fn at_its_lines(node: &Node, edges: &[&Edge]) -> Option<String> {
    let path = node.path.as_ref()?;
    let mut numbers: Vec<usize> = edges.iter().filter_map(|edge| edge.line).collect();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.is_empty() || edges.iter().any(|edge| !matches!(edge.relation, "imports" | "calls" | "references")) {
        return None;
    }
    let lines: Vec<String> = numbers.iter().take(8).map(usize::to_string).collect();
    let more = if numbers.len() > 8 { format!(" +{}", numbers.len() - 8) } else { String::new() };
    let place = format!("{}:{}{more}", path.as_str(), lines.join(", "));
    let mut shown = match node.kind {
        NodeKind::File => place,
        NodeKind::Symbol(SymbolKind::Module) => format!("{place} (top level)"),
        _ => format!("{}  {place}", node.name),
    };
    let mut weaker: Vec<&str> = edges
        .iter()
        .filter_map(|edge| edge.confidence)
        .filter(|confidence| *confidence != Confidence::Exact)
        .map(|confidence| confidence.as_str())
        .collect();
    weaker.sort_unstable();
    weaker.dedup();
    if !weaker.is_empty() {
        shown.push_str(&format!("  [{}]", weaker.join("/")));
    }
    Some(shown)
}

/// `  exact · line 12, 30` from the edges that reached a node.
fn edge_note(edges: &[&Edge]) -> String {
    if edges.is_empty() {
        return String::new();
    }
    let mut note = String::from("  ");
    let relations: Vec<&str> = {
        let mut relations: Vec<&str> = edges.iter().map(|edge| edge.relation).collect();
        relations.dedup();
        relations
    };
    if !matches!(relations.as_slice(), ["imports" | "calls" | "references"]) {
        note.push_str(&relations.join(", "));
        note.push(' ');
    }
    let mut confidences: Vec<Confidence> = edges.iter().filter_map(|edge| edge.confidence).collect();
    confidences.sort();
    confidences.dedup();
    // An exact edge is the rule: only the weaker ones are named.
    confidences.retain(|confidence| *confidence != Confidence::Exact);
    if !confidences.is_empty() {
        let names: Vec<&str> = confidences.iter().map(|confidence| confidence.as_str()).collect();
        note.push_str(&format!("[{}] ", names.join("/")));
    }
    let mut numbers: Vec<usize> = edges.iter().filter_map(|edge| edge.line).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let lines: Vec<String> = numbers.iter().map(usize::to_string).collect();
    if !lines.is_empty() {
        let shown: Vec<&str> = lines.iter().take(8).map(String::as_str).collect();
        let more = if lines.len() > 8 { format!(" +{}", lines.len() - 8) } else { String::new() };
        note.push_str(&format!("at line {}{more}", shown.join(", ")));
    }
    note.trim_end().to_owned()
}

fn section(mode: AnalyzeMode, side: Side) -> &'static str {
    match (mode, side) {
        (AnalyzeMode::Dependencies, Side::Downstream) => "imports",
        (AnalyzeMode::Dependencies, Side::Upstream) => "imported by",
        (AnalyzeMode::Impact, _) => "depended on by, nearest first",
        (AnalyzeMode::Calls, Side::Upstream) => "callers",
        (AnalyzeMode::Calls, Side::Downstream) => "callees",
        (AnalyzeMode::References, _) => "used by",
        (AnalyzeMode::Types, Side::Upstream) => "supertypes",
        (AnalyzeMode::Types, Side::Downstream) => "subtypes",
        (AnalyzeMode::DataFlow, _) => "flows into",
    }
}
