//! What `analyze` knows about the workspace: the import and type graphs (when the index's
//! generation moves: updated in place when only edited files changed and no config the layout
//! read, rebuilt otherwise), and freshly parsed facts of the files a query touches (cached
//! by content hash), behind the `loupe_graph::Workspace` view resolution asks through.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use loupe_core::{ContentHash, RepoPath, text};
use loupe_graph::{ImportGraph, Layout, Resolved, ResolvedImports, SymbolRef, TypeGraph};
use loupe_index::{FileLinks, Index, Lang};
use loupe_syntax::{Extract, FileFacts};
use rustc_hash::FxHashMap;

use crate::work::Work;
use crate::workspace::Workspace;

/// The graphs of one index generation.
#[derive(Debug)]
pub(crate) struct Graphs {
    generation: u64,
    pub(crate) layout: Layout,
    pub(crate) imports: ImportGraph,
    pub(crate) types: TypeGraph,
    /// Files by directory, with their language (the package of Go and Java files).
    dirs: FxHashMap<RepoPath, Vec<(RepoPath, Option<Lang>)>>,
    /// What queries of this generation asked already: definitions by name, resolved imports.
    named: Mutex<FxHashMap<String, Arc<Vec<SymbolRef>>>>,
    imports_of: Mutex<FxHashMap<RepoPath, Arc<ResolvedImports>>>,
}

/// Files parsed with every fact, by path, checked against the content hash on each use.
const FACTS_CACHE_FILES: usize = 4096;

/// What the cached facts may hold together (`facts_bytes`). A file's facts (every call and
/// reference, each with its strings) are some 7 times its source (Django's 883 files under
/// `django/`: 5.7 MB of source, 39 MB of facts), so the count alone let 4,096 large files hold
/// gigabytes. Not smaller: a budget below a repository's working set makes `analyze` parse
/// again and again (32 MiB on the Django soak: analyze p50 184 ms against 80 ms, p95 1.6 s
/// against 0.24 s).
const FACTS_CACHE_BYTES: usize = 128 << 20;

/// Parsed facts by path, bounded in files and in estimated bytes. When an insertion would pass
/// either bound, other entries go (in the map's order: a cache miss costs one parse).
#[derive(Debug)]
pub(crate) struct FactsCache {
    entries: FxHashMap<RepoPath, (ContentHash, Arc<FileFacts>, usize)>,
    bytes: usize,
    max_files: usize,
    max_bytes: usize,
}

impl Default for FactsCache {
    fn default() -> FactsCache {
        FactsCache::new(FACTS_CACHE_FILES, FACTS_CACHE_BYTES)
    }
}

impl FactsCache {
    pub(crate) fn new(max_files: usize, max_bytes: usize) -> FactsCache {
        FactsCache { entries: FxHashMap::default(), bytes: 0, max_files: max_files.max(1), max_bytes }
    }

    /// The facts of `path` when they were parsed from content with `hash`.
    pub(crate) fn get(&self, path: &RepoPath, hash: &ContentHash) -> Option<Arc<FileFacts>> {
        self.entries.get(path).filter(|(cached, ..)| cached == hash).map(|(_, facts, _)| facts.clone())
    }

    /// Keeps `facts` for `path`; facts larger than the whole budget are not kept.
    pub(crate) fn insert(&mut self, path: RepoPath, hash: ContentHash, facts: Arc<FileFacts>) {
        if let Some((.., size)) = self.entries.remove(&path) {
            self.bytes -= size;
        }
        let size = facts_bytes(&facts);
        if size > self.max_bytes {
            return;
        }
        while !self.entries.is_empty() && (self.entries.len() >= self.max_files || self.bytes + size > self.max_bytes) {
            let Some(victim) = self.entries.keys().next().cloned() else { break };
            if let Some((.., gone)) = self.entries.remove(&victim) {
                self.bytes -= gone;
            }
        }
        self.bytes += size;
        self.entries.insert(path, (hash, facts, size));
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The heap bytes of a file's facts, estimated from their vectors and strings (a string's
/// allocation costs its capacity and some 16 bytes of the allocator's).
pub(crate) fn facts_bytes(facts: &FileFacts) -> usize {
    fn text(value: &str) -> usize {
        if value.is_empty() { 0 } else { value.len() + 16 }
    }
    fn optional(value: &Option<String>) -> usize {
        value.as_deref().map_or(0, text)
    }
    fn vector<T>(items: &[T], capacity: usize, strings: impl Fn(&T) -> usize) -> usize {
        capacity * std::mem::size_of::<T>() + items.iter().map(strings).sum::<usize>()
    }
    std::mem::size_of::<FileFacts>()
        + vector(&facts.definitions, facts.definitions.capacity(), |item| {
            text(&item.name) + optional(&item.container) + text(&item.signature) + optional(&item.doc)
        })
        + vector(&facts.imports, facts.imports.capacity(), |item| {
            text(&item.module)
                + item.names.capacity() * std::mem::size_of::<String>()
                + item.names.iter().map(|name| text(name)).sum::<usize>()
                + optional(&item.alias)
        })
        + vector(&facts.calls, facts.calls.capacity(), |item| {
            text(&item.callee) + optional(&item.qualifier) + optional(&item.receiver) + optional(&item.container)
        })
        + vector(&facts.type_relations, facts.type_relations.capacity(), |item| {
            text(&item.subtype) + text(&item.supertype)
        })
        + vector(&facts.references, facts.references.capacity(), |item| text(&item.name) + optional(&item.container))
}

/// The workspace's relationship state.
#[derive(Debug, Default)]
pub(crate) struct Relations {
    graphs: Mutex<Option<Arc<Graphs>>>,
    facts: Mutex<FactsCache>,
}

impl Relations {
    /// The facts cache's files and estimated bytes, for `manage metrics`.
    pub(crate) fn facts_cache_size(&self) -> (usize, usize) {
        let cache = self.facts.lock().unwrap_or_else(|poison| poison.into_inner());
        (cache.entries.len(), cache.bytes)
    }

    /// The graphs for the index as it is now, built when the index changed since the last (a
    /// step `work` hears of: on a large repository it takes a while, and is kept for every
    /// later query, so it is not cut short).
    pub(crate) fn graphs(&self, workspace: &Workspace, index: &Index, work: &Work) -> Arc<Graphs> {
        let generation = index.generation();
        let mut slot = self.graphs.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some(graphs) = slot.as_ref().filter(|graphs| graphs.generation == generation) {
            return graphs.clone();
        }
        // Files edited since (none came or went, no config the layout read): their imports and
        // relations are replaced in the graphs, which no other query holds now.
        if let Some(old) = slot.take() {
            match Arc::try_unwrap(old) {
                Ok(mut graphs) => {
                    if graphs.update(index, generation) {
                        let graphs = Arc::new(graphs);
                        *slot = Some(graphs.clone());
                        return graphs;
                    }
                }
                Err(shared) => *slot = Some(shared),
            }
        }
        work.report(0, None, || {
            format!("analyze: building the import and type graphs of {} files", index.status().files)
        });
        let graphs = Arc::new(build(workspace, index, generation));
        *slot = Some(graphs.clone());
        graphs
    }

    /// The file's facts (all of them: calls and references too): parsed from the disk, and
    /// reused while the index records the same content hash for the file (the graphs answer
    /// from the index's view too; the watcher and edits keep it current).
    pub(crate) fn facts(&self, workspace: &Workspace, index: &Index, path: &RepoPath) -> Option<Arc<FileFacts>> {
        let lang = Lang::from_path(path.as_str())?;
        let cached = |hash: &ContentHash| {
            let cache = self.facts.lock().unwrap_or_else(|poison| poison.into_inner());
            cache.get(path, hash)
        };
        if let Some(facts) = index.file_hash(path).and_then(|hash| cached(&hash)) {
            return Some(facts);
        }
        let bytes = workspace.root().read_indexed(path, workspace.config().max_file_bytes).ok()?;
        let hash = ContentHash::of(&bytes);
        if let Some(facts) = cached(&hash) {
            return Some(facts);
        }
        let decoded = text::decode(&bytes).ok()?;
        let facts = Arc::new(loupe_syntax::parse_with(lang, &decoded.text, Extract::All));
        let mut cache = self.facts.lock().unwrap_or_else(|poison| poison.into_inner());
        cache.insert(path.clone(), hash, facts.clone());
        Some(facts)
    }
}

/// A workspace file's text as it is on disk now (decoded), through the root.
pub(crate) fn read_text(workspace: &Workspace, path: &RepoPath) -> Option<String> {
    let bytes = workspace.root().read_indexed(path, workspace.config().max_file_bytes).ok()?;
    text::decode(&bytes).ok().map(|decoded| decoded.text)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn build(workspace: &Workspace, index: &Index, generation: u64) -> Graphs {
    let started = std::time::Instant::now();
    let files = index.files();
    let paths: Vec<RepoPath> = files.iter().map(|record| record.path.clone()).collect();
    let layout = Layout::new(&paths, &|path: &RepoPath| read_text(workspace, path));
    let mut linked: Vec<(RepoPath, Lang, FileLinks)> = Vec::new();
    index.for_each_links(&mut |record, links| {
        if let Some(lang) = record.lang {
            linked.push((record.path.clone(), lang, links.clone()));
        }
    });
    let imports = ImportGraph::build(&layout, linked.iter().map(|(path, lang, links)| (path, *lang, &*links.imports)));
    let types = TypeGraph::build(linked.iter().map(|(path, _, links)| (path, &*links.type_relations)));
    let mut dirs: FxHashMap<RepoPath, Vec<(RepoPath, Option<Lang>)>> = FxHashMap::default();
    for record in files {
        dirs.entry(record.path.parent()).or_default().push((record.path, record.lang));
    }
    let millis = started.elapsed().as_millis();
    tracing::debug!(millis, nodes = imports.node_count(), relations = types.len(), "relationship graphs built");
    Graphs { generation, layout, imports, types, dirs, named: Mutex::default(), imports_of: Mutex::default() }
}

impl Graphs {
    /// Brings the graphs to `generation` by replacing the imports and relations of the files
    /// edited since theirs; false (and the graphs are to be built anew) when files came or
    /// went, a config the layout read changed, or the index no longer remembers what changed.
    fn update(&mut self, index: &Index, generation: u64) -> bool {
        let started = std::time::Instant::now();
        let Some(modified) = index.modified_since(self.generation) else { return false };
        if modified.iter().any(|path| self.layout.depends_on(path)) {
            return false;
        }
        for path in &modified {
            let links = index.links_of(path).unwrap_or_default();
            if let Some(lang) = Lang::from_path(path.as_str()) {
                self.imports.replace_imports(&self.layout, path, lang, &links.imports);
            }
            self.types.replace_relations(path, &links.type_relations);
        }
        self.generation = generation;
        self.named = Mutex::default();
        self.imports_of = Mutex::default();
        let micros = started.elapsed().as_micros();
        tracing::debug!(micros, files = modified.len(), "relationship graphs updated");
        true
    }
}

/// One query's view of the workspace, through the graphs of the index's generation.
pub(crate) struct View<'a> {
    workspace: &'a Workspace,
    index: &'a Index,
    work: &'a Work,
    pub(crate) graphs: Arc<Graphs>,
    /// Files this query has parsed or found parsed: the progress it reports.
    files_read: AtomicU64,
}

impl<'a> View<'a> {
    pub(crate) fn new(workspace: &'a Workspace, index: &'a Index, work: &'a Work) -> View<'a> {
        let graphs = workspace.relations.graphs(workspace, index, work);
        View { workspace, index, work, graphs, files_read: AtomicU64::new(0) }
    }

    pub(crate) fn workspace(&self) -> &'a Workspace {
        self.workspace
    }

    /// The call's progress-and-cancel handle: long walks stop once it is cancelled.
    pub(crate) fn work(&self) -> &'a Work {
        self.work
    }

    pub(crate) fn index(&self) -> &'a Index {
        self.index
    }

    pub(crate) fn facts(&self, path: &RepoPath) -> Option<Arc<FileFacts>> {
        self.workspace.relations.facts(self.workspace, self.index, path)
    }

    /// The facts of `paths`, in order, parsed on every core (a first query may touch hundreds
    /// of files; later ones find them cached). Each file is a step of the query's progress (its
    /// total is not known: a walk finds the next files as it goes); once the work is cancelled
    /// the files not reached yet are left out, so the result may be shorter than `paths`.
    pub(crate) fn facts_of(&self, paths: &[RepoPath]) -> Vec<Option<Arc<FileFacts>>> {
        let threads = loupe_core::parallel::cores();
        let mut found = Vec::with_capacity(paths.len());
        loupe_core::parallel::map_in_order(
            paths,
            threads,
            || (),
            |(), path| if self.work.stopped().is_some() { None } else { self.facts(path) },
            |_, facts| {
                if self.work.stopped().is_some() {
                    return false;
                }
                found.push(facts);
                let done = self.files_read.fetch_add(1, Ordering::Relaxed) + 1;
                self.work.report(done, None, || format!("analyze: {done} files read"));
                true
            },
        );
        found
    }
}

impl loupe_graph::Workspace for View<'_> {
    fn named(&self, name: &str) -> Arc<Vec<SymbolRef>> {
        if let Some(found) = lock(&self.graphs.named).get(name) {
            return found.clone();
        }
        let found: Vec<SymbolRef> = self
            .index
            .symbols_named(name)
            .into_iter()
            .filter(|hit| hit.symbol.name == name)
            .filter_map(|hit| {
                let lang = Lang::from_path(hit.path.as_str())?;
                Some(SymbolRef {
                    path: hit.path,
                    lang,
                    name: hit.symbol.name,
                    kind: hit.symbol.kind,
                    container: hit.symbol.container,
                    signature: hit.symbol.signature,
                    span: hit.symbol.span,
                    line: hit.symbol.name_line,
                })
            })
            .collect();
        let found = Arc::new(found);
        lock(&self.graphs.named).insert(name.to_owned(), found.clone());
        found
    }

    fn imports(&self, path: &RepoPath) -> Arc<ResolvedImports> {
        if let Some(found) = lock(&self.graphs.imports_of).get(path) {
            return found.clone();
        }
        let lang = Lang::from_path(path.as_str());
        let links = self.index.links_of(path).unwrap_or_default();
        let resolved: ResolvedImports = match lang {
            Some(lang) => links
                .imports
                .iter()
                .map(|import| {
                    let files = self
                        .graphs
                        .layout
                        .resolve(path, lang, import)
                        .into_iter()
                        .filter_map(|target| match target {
                            Resolved::File(file) => Some(file),
                            Resolved::External(_) => None,
                        })
                        .collect();
                    (import.clone(), files)
                })
                .collect(),
            None => Vec::new(),
        };
        let resolved = Arc::new(resolved);
        lock(&self.graphs.imports_of).insert(path.clone(), resolved.clone());
        resolved
    }

    fn package(&self, path: &RepoPath) -> Vec<RepoPath> {
        let lang = Lang::from_path(path.as_str());
        if !matches!(lang, Some(Lang::Go | Lang::Java | Lang::Kotlin)) {
            return Vec::new();
        }
        self.graphs
            .dirs
            .get(&path.parent())
            .map(|files| {
                files
                    .iter()
                    .filter(|(file, other)| *other == lang && file != path)
                    .map(|(file, _)| file.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn types(&self) -> &TypeGraph {
        &self.graphs.types
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14's soak: `analyze` parses every file a query touches and keeps the facts. Facts of
    /// 500 files of 200 lines each (some 300 KB of facts per file) must stay within the cache's
    /// byte budget, the newest kept; the count bound alone kept all 500.
    #[test]
    fn rss_the_facts_cache_is_bounded_by_bytes() {
        let source: String = (0..50)
            .map(|f| format!("def handler_{f}(request, view):\n    response = view.dispatch(request, handler_{f})\n    return render(request, response.template_name, context)\n\n"))
            .collect();
        let facts = Arc::new(loupe_syntax::parse_with(Lang::Python, &source, Extract::All));
        let one = facts_bytes(&facts);
        assert!(one > 20_000, "the facts of 200 lines of Python are estimated at {one} bytes");
        let budget = 2 << 20;
        let mut cache = FactsCache::new(4096, budget);
        for file in 0..500 {
            let path = RepoPath::normalize(&format!("pkg/module_{file}.py")).unwrap();
            let facts = Arc::new(loupe_syntax::parse_with(Lang::Python, &source, Extract::All));
            cache.insert(path, ContentHash::of(source.as_bytes()), facts);
        }
        assert!(cache.bytes() <= budget, "the cache holds {} bytes", cache.bytes());
        assert!(cache.len() >= budget / one - 1 && cache.len() < 500, "{} files kept", cache.len());
        let newest = RepoPath::normalize("pkg/module_499.py").unwrap();
        assert!(cache.get(&newest, &ContentHash::of(source.as_bytes())).is_some());
        // Re-inserting a path replaces its entry rather than counting it twice.
        let before = cache.bytes();
        cache.insert(newest, ContentHash::of(source.as_bytes()), facts);
        assert_eq!(cache.bytes(), before);
    }
}
