//! The import graph of a workspace: every file's imports resolved to workspace files or
//! external modules, with the reverse edges, and breadth-first walks over it for
//! `dependencies` (both directions) and `impact` (upstream, nearest first).

use std::collections::VecDeque;

use loupe_core::RepoPath;
use loupe_syntax::{Import, Lang};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::resolve::{Layout, Resolved};

/// A node of the import graph: a workspace file or an external module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum NodeId {
    File(u32),
    External(u32),
}

/// One resolved import edge: the node and the line of the import statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Edge {
    node: NodeId,
    line: u32,
}

/// Files and external modules joined by their imports.
#[derive(Debug, Default)]
pub struct ImportGraph {
    files: Vec<RepoPath>,
    file_ids: FxHashMap<RepoPath, u32>,
    externals: Vec<String>,
    external_ids: FxHashMap<String, u32>,
    /// Per file: what it imports, in source order, each target once.
    out: Vec<Vec<Edge>>,
    /// Per file and per external: who imports it, in path order.
    into_files: Vec<Vec<Edge>>,
    into_externals: Vec<Vec<Edge>>,
}

/// One step of a walk: the node reached, how far from the start, and the edge that reached it
/// (importer → imported, whatever the walk's direction), with the import's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub node: Resolved,
    pub depth: usize,
    pub from: Resolved,
    pub to: Resolved,
    pub line: usize,
}

/// The nodes a walk reached (the start first) and whether `max_nodes` cut it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    pub steps: Vec<Step>,
    pub truncated: bool,
}

impl ImportGraph {
    /// Resolves every import of `files` (path, language, imports) through `layout`.
    pub fn build<'a>(
        layout: &Layout,
        files: impl IntoIterator<Item = (&'a RepoPath, Lang, &'a [Import])>,
    ) -> ImportGraph {
        let mut graph = ImportGraph::default();
        for (path, lang, imports) in files {
            let from = graph.file_id(path);
            graph.out[from as usize] = graph.resolve_edges(layout, path, lang, imports);
        }
        graph.into_files = vec![Vec::new(); graph.files.len()];
        graph.into_externals = vec![Vec::new(); graph.externals.len()];
        for (from, edges) in graph.out.iter().enumerate() {
            for edge in edges {
                let back = Edge { node: NodeId::File(from as u32), line: edge.line };
                match edge.node {
                    NodeId::File(to) => graph.into_files[to as usize].push(back),
                    NodeId::External(to) => graph.into_externals[to as usize].push(back),
                }
            }
        }
        let files = &graph.files;
        let by_path = |edge: &Edge| match edge.node {
            NodeId::File(id) => files[id as usize].as_str(),
            NodeId::External(_) => "",
        };
        for list in graph.into_files.iter_mut().chain(graph.into_externals.iter_mut()) {
            list.sort_by(|left, right| by_path(left).cmp(by_path(right)));
        }
        graph
    }

    /// `path`'s imports replaced by `imports` (its content changed; the layout did not): the
    /// same graph a build with the new imports makes, without rebuilding the rest.
    pub fn replace_imports(&mut self, layout: &Layout, path: &RepoPath, lang: Lang, imports: &[Import]) {
        let from = self.file_id(path);
        let importer = NodeId::File(from);
        for edge in std::mem::take(&mut self.out[from as usize]) {
            self.importers_list(edge.node).retain(|back| back.node != importer);
        }
        let edges = self.resolve_edges(layout, path, lang, imports);
        self.into_files.resize(self.files.len(), Vec::new());
        self.into_externals.resize(self.externals.len(), Vec::new());
        for edge in &edges {
            let files = &self.files;
            let list = match edge.node {
                NodeId::File(to) => &mut self.into_files[to as usize],
                NodeId::External(to) => &mut self.into_externals[to as usize],
            };
            // Importers in path order, as a build sorts them.
            let at = list.partition_point(|back| match back.node {
                NodeId::File(id) => files[id as usize] < *path,
                NodeId::External(_) => true,
            });
            list.insert(at, Edge { node: importer, line: edge.line });
        }
        self.out[from as usize] = edges;
    }

    /// What one file's imports resolve to, in source order, each target once.
    fn resolve_edges(&mut self, layout: &Layout, path: &RepoPath, lang: Lang, imports: &[Import]) -> Vec<Edge> {
        let mut seen: FxHashSet<NodeId> = FxHashSet::default();
        let mut edges = Vec::new();
        for import in imports {
            for resolved in layout.resolve(path, lang, import) {
                let node = match resolved {
                    Resolved::File(target) if &target == path => continue,
                    Resolved::File(target) => NodeId::File(self.file_id(&target)),
                    Resolved::External(name) => NodeId::External(self.external_id(name)),
                };
                if seen.insert(node) {
                    edges.push(Edge { node, line: import.line as u32 });
                }
            }
        }
        edges
    }

    fn importers_list(&mut self, node: NodeId) -> &mut Vec<Edge> {
        match node {
            NodeId::File(to) => &mut self.into_files[to as usize],
            NodeId::External(to) => &mut self.into_externals[to as usize],
        }
    }

    fn file_id(&mut self, path: &RepoPath) -> u32 {
        if let Some(&id) = self.file_ids.get(path) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(path.clone());
        self.file_ids.insert(path.clone(), id);
        self.out.push(Vec::new());
        id
    }

    fn external_id(&mut self, name: String) -> u32 {
        if let Some(&id) = self.external_ids.get(&name) {
            return id;
        }
        let id = self.externals.len() as u32;
        self.externals.push(name.clone());
        self.external_ids.insert(name, id);
        id
    }

    fn resolved(&self, node: NodeId) -> Resolved {
        match node {
            NodeId::File(id) => Resolved::File(self.files[id as usize].clone()),
            NodeId::External(id) => Resolved::External(self.externals[id as usize].clone()),
        }
    }

    fn node_of(&self, target: &Resolved) -> Option<NodeId> {
        match target {
            Resolved::File(path) => self.file_ids.get(path).map(|&id| NodeId::File(id)),
            Resolved::External(name) => self.external_ids.get(name).map(|&id| NodeId::External(id)),
        }
    }

    /// What `path` imports (resolved), with the line of each import.
    pub fn imports_of(&self, path: &RepoPath) -> Vec<(Resolved, usize)> {
        let Some(&id) = self.file_ids.get(path) else { return Vec::new() };
        self.out[id as usize].iter().map(|edge| (self.resolved(edge.node), edge.line as usize)).collect()
    }

    /// The files that import `target`, in path order, with the line of the import.
    pub fn importers_of(&self, target: &Resolved) -> Vec<(RepoPath, usize)> {
        self.incoming(self.node_of(target))
            .iter()
            .map(|edge| match edge.node {
                NodeId::File(id) => (self.files[id as usize].clone(), edge.line as usize),
                NodeId::External(_) => unreachable!("only files import"),
            })
            .collect()
    }

    fn incoming(&self, node: Option<NodeId>) -> &[Edge] {
        match node {
            Some(NodeId::File(id)) => &self.into_files[id as usize],
            Some(NodeId::External(id)) => &self.into_externals[id as usize],
            None => &[],
        }
    }

    /// A breadth-first walk from `start`: downstream follows imports, upstream follows
    /// importers. Nodes come nearest first (then in edge order), each once; the walk stops at
    /// `max_depth` edges from the start, or after `max_nodes` nodes (the start included), and
    /// then says `truncated` when anything was left unvisited.
    pub fn walk(&self, start: &Resolved, upstream: bool, max_depth: usize, max_nodes: usize) -> Walk {
        let mut steps = Vec::new();
        let Some(start_node) = self.node_of(start) else {
            return Walk { steps, truncated: false };
        };
        let mut seen: FxHashSet<NodeId> = FxHashSet::default();
        seen.insert(start_node);
        let mut queue: VecDeque<(NodeId, usize)> = VecDeque::from([(start_node, 0)]);
        let mut truncated = false;
        while let Some((node, depth)) = queue.pop_front() {
            if depth >= max_depth {
                continue;
            }
            let edges: &[Edge] = match (upstream, node) {
                (true, node) => self.incoming(Some(node)),
                (false, NodeId::File(id)) => &self.out[id as usize],
                (false, NodeId::External(_)) => &[],
            };
            for edge in edges {
                let (from, to) = if upstream { (edge.node, node) } else { (node, edge.node) };
                if seen.contains(&edge.node) {
                    continue;
                }
                if steps.len() + 1 >= max_nodes {
                    truncated = true;
                    break;
                }
                seen.insert(edge.node);
                steps.push(Step {
                    node: self.resolved(edge.node),
                    depth: depth + 1,
                    from: self.resolved(from),
                    to: self.resolved(to),
                    line: edge.line as usize,
                });
                queue.push_back((edge.node, depth + 1));
            }
            if truncated {
                break;
            }
        }
        Walk { steps, truncated }
    }

    /// Number of files and external modules.
    pub fn node_count(&self) -> usize {
        self.files.len() + self.externals.len()
    }
}
