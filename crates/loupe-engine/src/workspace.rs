//! `Workspace`: what the tools share under them for one root: the configuration, the root, the
//! index and its watcher, the edit journal and lock, and the caches (`relations.rs`,
//! `proposals.rs`, `oversized.rs`), with the lookups more than one tool makes (`symbols.rs`,
//! `git.rs`).
//!
//! Architecture Invariant: nothing here names a tool, the session layer or the engine above it;
//! `read`, `search`, `analyze` and `edit` take a `&Workspace` and cannot reach those either.
//!
//! It opens its root through `loupe-vfs`, its index through `loupe-index`, and the journal
//! (finishing or rolling back an interrupted transaction) before any call is served.

pub(crate) mod changes;
pub(crate) mod git;
pub(crate) mod oversized;
pub(crate) mod proposals;
pub(crate) mod references;
pub(crate) mod relations;
pub(crate) mod review;
pub(crate) mod symbols;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use loupe_core::Config;
use loupe_index::{Index, IndexOptions};
use loupe_vfs::{Exclusions, Journal, Root, VfsError, WalkOptions};

use crate::work::Work;
use crate::workspace::oversized::OversizedFilters;
use crate::workspace::proposals::ProposedTexts;
use crate::workspace::relations::Relations;

/// Why a workspace could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// No root was named and the current directory cannot be read.
    CurrentDir(std::io::Error),
    /// An `exclude` or `allow` pattern does not compile.
    Exclusions(VfsError),
    /// The root cannot be opened (missing, not a directory, unreadable).
    Root { path: PathBuf, source: VfsError },
    /// The index directory cannot be created or is not the user's own.
    IndexDir(loupe_index::IndexError),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::CurrentDir(error) => write!(f, "cannot determine the current directory: {error}"),
            OpenError::Exclusions(error) => write!(f, "configuration key `exclude`/`allow`: {error}"),
            OpenError::Root { path, source } => write!(f, "cannot open workspace root `{}`: {source}", path.display()),
            OpenError::IndexDir(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// One workspace root's state, shared by the tools.
#[derive(Debug)]
pub(crate) struct Workspace {
    config: Config,
    root: Root,
    /// Where the index, the journal and the session layer's files live.
    index_dir: PathBuf,
    index: Option<Arc<Index>>,
    watcher: std::sync::Mutex<Option<loupe_index::IndexWatcher>>,
    /// A build runs in the background (a server): calls that need the index wait for it.
    building_in_background: std::sync::atomic::AtomicBool,
    /// The edit journal, the only writer into the repository; `None` when its directory
    /// could not be opened (edits then fail with `IO_ERROR`).
    journal: Option<Arc<Journal>>,
    /// Serialises edits, undo and redo of this root within the process (the journal's file
    /// lock does it across processes).
    pub(crate) edit_lock: std::sync::Mutex<()>,
    /// The relationship graphs and parsed facts `analyze` works from.
    pub(crate) relations: Relations,
    /// Proposed texts of cut diffs, so their cursors continue without the text.
    pub(crate) proposed: ProposedTexts,
    /// The changed symbols of file versions compared lately (reviews).
    pub(crate) compared: review::Compared,
    /// Trigram filters of the files over the index's size limit (`oversized.rs`).
    pub(crate) oversized: OversizedFilters,
    /// The entries the last direct walk could not enter or name (`unwalkable`).
    scanned_unwalkable: std::sync::atomic::AtomicUsize,
    /// The running build's walk with each path's words, made once for the scans that order
    /// it while the build runs (`files_to_scan`).
    scan_list: std::sync::Mutex<Option<Arc<ScanList>>>,
}

/// The files a build walked, and the words of their paths (`words_of`), each with the files
/// whose path holds it: what orders a scan (`likeliest_first`) without going through every path
/// per query (ordering Linux's 78,000 paths one by one took 70–135 ms, a whole scan's budget).
#[derive(Debug)]
struct ScanList {
    walked: Arc<Vec<loupe_vfs::WalkEntry>>,
    words: PathWords,
}

impl ScanList {
    fn of(walked: Arc<Vec<loupe_vfs::WalkEntry>>) -> ScanList {
        let words = PathWords::of(walked.iter().map(|entry| entry.path.as_str()));
        ScanList { walked, words }
    }
}

/// The distinct words of a list of paths, each with the paths (their indices) that hold it.
#[derive(Debug, Default)]
struct PathWords {
    words: Vec<(Box<str>, Vec<u32>)>,
    paths: usize,
}

impl PathWords {
    fn of<'a>(paths: impl Iterator<Item = &'a str>) -> PathWords {
        let mut words: rustc_hash::FxHashMap<String, Vec<u32>> = rustc_hash::FxHashMap::default();
        let mut count = 0;
        for (at, path) in paths.enumerate() {
            for word in words_of(path, 3) {
                words.entry(word).or_default().push(at as u32);
            }
            count = at + 1;
        }
        PathWords { words: words.into_iter().map(|(word, at)| (word.into_boxed_str(), at)).collect(), paths: count }
    }
}

impl Workspace {
    /// Opens the workspace on `config.root` (which `config::load` always sets).
    pub(crate) fn open(config: Config) -> Result<Workspace, OpenError> {
        let root_path = match &config.root {
            Some(root) => root.clone(),
            None => std::env::current_dir().map_err(OpenError::CurrentDir)?,
        };
        let exclusions = Exclusions::new(&config.exclude, &config.allow).map_err(OpenError::Exclusions)?;
        let root =
            Root::open(&root_path, exclusions).map_err(|source| OpenError::Root { path: root_path.clone(), source })?;
        let index_dir = config.index_dir.clone().unwrap_or_else(|| default_index_dir(root.canonical()));
        loupe_index::make_private_dir(&index_dir).map_err(OpenError::IndexDir)?;
        let journal = open_journal(&root, &index_dir, config.read_only);
        let options = IndexOptions {
            index_dir: index_dir.clone(),
            max_file_bytes: config.max_index_file_bytes,
            threads: index_threads(),
        };
        let index = Some(Arc::new(Index::open(root.clone(), options)));
        Ok(Workspace {
            config,
            root,
            index_dir,
            index,
            watcher: std::sync::Mutex::new(None),
            building_in_background: std::sync::atomic::AtomicBool::new(false),
            journal,
            edit_lock: std::sync::Mutex::new(()),
            relations: Relations::default(),
            proposed: Default::default(),
            compared: Default::default(),
            oversized: Default::default(),
            scanned_unwalkable: Default::default(),
            scan_list: Default::default(),
        })
    }

    /// Where the index, the journal and the session layer's files live.
    pub(crate) fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    /// The index, when this workspace has one. Lookups from it are proposals to verify.
    pub(crate) fn index(&self) -> Option<&Arc<Index>> {
        self.index.as_ref()
    }

    /// The index for a query: when a persisted snapshot is loading, this waits for it, which
    /// answers sooner than serving "building" results from a scan of the disk.
    pub(crate) fn index_for_query(&self) -> Option<&Arc<Index>> {
        let index = self.index.as_ref()?;
        index.load_snapshot();
        Some(index)
    }

    /// Brings the index up to date with the disk (a cold build the first time).
    pub(crate) fn refresh_index(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Option<loupe_index::RefreshStats> {
        self.index.as_ref().map(|index| index.refresh(progress))
    }

    /// For a long-running server: builds or reconciles the index on a background thread after
    /// `delay` (a test hook: zero when serving), then keeps it current with a file watcher.
    /// Queries meanwhile are served from what is ready, marked `index_state: building`; calls
    /// that need the index wait for it from now on.
    pub(crate) fn start_background_indexing_after(self: &Arc<Self>, delay: std::time::Duration) {
        self.building_in_background.store(true, std::sync::atomic::Ordering::Release);
        let workspace = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("loupe-index".into()).spawn(move || {
            std::thread::sleep(delay);
            // A persisted index serves at once (queries wait for it rather than scan).
            if let Some(index) = workspace.index() {
                index.load_snapshot();
            }
            // The first answers need the tokenizer and a free core: let the vocabulary build,
            // and the client's opening calls through, before reconciling competes for the cores.
            loupe_core::tokens::warm_up();
            std::thread::sleep(INDEX_START_DELAY);
            // The watches go in before the build walks the tree, and their events are read
            // after it: whatever changes while it runs is in its walk or an event, and the
            // build is the watcher's first reconcile. Started after the build instead, the
            // watcher's own walk left seconds in which a file written during the build was
            // missing from answers marked ready (a soak's probe, 2026-11-27).
            let prepared = workspace.index().and_then(|index| match loupe_index::prepare_watch(Arc::clone(index)) {
                Ok(prepared) => Some(prepared),
                Err(error) => {
                    tracing::warn!("{error}; the index will not follow changes on disk");
                    None
                }
            });
            let stats = workspace.refresh_index(&|_, _| {});
            // The build is over: calls no longer wait for it (an index left `building`, as a
            // damaged one is, answers from a direct scan rather than make every call wait).
            workspace.building_in_background.store(false, std::sync::atomic::Ordering::Release);
            // Only the scans of a running build read the ordered list: it goes with the build.
            *workspace.scan_list.lock().unwrap_or_else(|poison| poison.into_inner()) = None;
            let Some(stats) = stats else { return };
            if stats.interrupted {
                // The session is ending: what was built is kept as a checkpoint, nothing to watch.
                tracing::info!(?stats, "index build interrupted");
                return;
            }
            tracing::info!(?stats, "index ready");
            if let Some(prepared) = prepared {
                match prepared.start() {
                    Ok(watcher) => {
                        if let Ok(mut slot) = workspace.watcher.lock() {
                            *slot = Some(watcher);
                        }
                    }
                    Err(error) => tracing::warn!("{error}; the index will not follow changes on disk"),
                }
            }
            // The files over the index's size limit, summarised now (Linux: 102 of them, 424 MB;
            // seconds of CPU) on a thread of their own, so the first searches need not scan them.
            if let Some(index) = workspace.index() {
                workspace.oversized.learn_in_background(&workspace.root, index, workspace.config.max_file_bytes);
            }
        });
        if let Err(error) = spawned {
            tracing::warn!("cannot start background indexing: {error}");
        }
    }

    pub(crate) fn journal(&self) -> Option<&Journal> {
        self.journal.as_deref()
    }

    pub(crate) fn walk_options(&self) -> WalkOptions {
        WalkOptions { max_file_bytes: self.config.max_index_file_bytes, threads: index_threads() }
    }

    /// The tree's files within the index's size limit, as `Root::walk` lists them: while the
    /// first build runs and its walk is done, that walk, not a second one beside it (a walk of
    /// Linux is seconds of the CPU the build needs: `manage status` asked every 2 s during a
    /// build, each call walking the tree, made the build 1.54× slower); otherwise a walk now.
    pub(crate) fn files_now(&self) -> Vec<loupe_vfs::WalkEntry> {
        match self.index().and_then(|index| index.walked()) {
            Some(walked) => walked.as_ref().clone(),
            None => self.root.walk(self.walk_options()),
        }
    }

    /// A direct walk of the tree (an answer while the index is not ready), whose count of the
    /// entries it could not enter or name is kept for `unwalkable`.
    pub(crate) fn walk_all(&self) -> loupe_vfs::Walk {
        let walk = self.root.walk_all(self.walk_options());
        self.scanned_unwalkable.store(walk.unwalkable, std::sync::atomic::Ordering::Relaxed);
        walk
    }

    /// How many entries the last walk of the tree could not enter or name: the index's, or,
    /// while it is not ready, the last direct walk's.
    pub(crate) fn unwalkable(&self) -> usize {
        match self.index.as_ref().filter(|index| index.state() == loupe_index::IndexState::Ready) {
            Some(index) => index.unwalkable(),
            None => self.scanned_unwalkable.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// What a direct scan reads, and the files over the index's size limit. While a server's
    /// first build runs: the files the build walked (a walk now, before the build's is done),
    /// likeliest to hold `query` first (`likeliest_first`), and the scan that follows is bounded
    /// (`BUILDING_SCAN`, from when the list is ready: a walk of Linux takes longer than the
    /// budget, and a scan with no files finds nothing). Otherwise every file, in walk order.
    pub(crate) fn files_to_scan(
        &self,
        query: &str,
        work: &Work,
    ) -> (Vec<loupe_core::RepoPath>, Vec<loupe_vfs::WalkEntry>) {
        if !self.building_in_background() {
            let walk = self.walk_all();
            return (walk.files.into_iter().map(|entry| entry.path).collect(), walk.oversized);
        }
        let (list, oversized) = self.scan_list();
        work.start_scan_budget(crate::work::BUILDING_SCAN);
        let order = likeliest_first(&list.words, query).take(SCAN_LIST_CAP);
        (order.map(|at| list.walked[at].path.clone()).collect(), oversized)
    }

    /// The build's walk with its paths' words (made once per walk), or a walk of its own
    /// before the build's is done.
    fn scan_list(&self) -> (Arc<ScanList>, Vec<loupe_vfs::WalkEntry>) {
        let Some((walked, oversized)) = self.index().and_then(|index| Some((index.walked()?, index.oversized())))
        else {
            let walk = self.walk_all();
            return (Arc::new(ScanList::of(Arc::new(walk.files))), walk.oversized);
        };
        let mut slot = self.scan_list.lock().unwrap_or_else(|poison| poison.into_inner());
        let list = match slot.as_ref().filter(|list| Arc::ptr_eq(&list.walked, &walked)) {
            Some(list) => Arc::clone(list),
            None => Arc::clone(slot.insert(Arc::new(ScanList::of(walked)))),
        };
        (list, oversized)
    }

    /// The source files (a language loupe parses) whose text holds `name`, any case, with the
    /// bytes read: where a definition of it can be while the first index build runs and the
    /// name map is not there yet (§7). A direct scan, as `rg -il` would do.
    pub(crate) fn source_files_mentioning(&self, name: &str) -> Vec<(loupe_core::RepoPath, Vec<u8>)> {
        let Ok(finder) = regex::bytes::RegexBuilder::new(&regex::escape(name)).case_insensitive(true).build() else {
            return Vec::new();
        };
        self.root
            .walk(self.walk_options())
            .into_iter()
            .filter(|entry| loupe_index::Lang::from_path(entry.path.as_str()).is_some())
            .filter_map(|entry| {
                let bytes = self.root.read_indexed(&entry.path, self.config.max_index_file_bytes).ok()?;
                finder.is_match(&bytes).then_some((entry.path, bytes))
            })
            .collect()
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn root(&self) -> &Root {
        &self.root
    }

    /// The canonical workspace root.
    pub(crate) fn root_path(&self) -> &Path {
        self.root.canonical()
    }

    /// Whether a first index build runs in the background (a server), which calls that need
    /// the index wait for.
    pub(crate) fn building_in_background(&self) -> bool {
        self.building_in_background.load(std::sync::atomic::Ordering::Acquire)
    }

    /// True while a file watcher keeps the index current.
    pub(crate) fn is_watching(&self) -> bool {
        self.watcher.lock().is_ok_and(|slot| slot.is_some())
    }
}

/// The most files a scan during the first build is handed: more than its budget can read (a
/// file read and searched is 10–50 µs), so what is left out would not have been reached, and
/// each scan no longer copies every path of a kernel-sized tree.
const SCAN_LIST_CAP: usize = 32_768;

/// The order (indices into the paths `words` was made of) in which a scan reads the files: by
/// how many of `query`'s words their own words hold, either way round, then in walk order.
/// `tcp_v4_connect` puts `net/ipv4/tcp_ipv4.c` (`tcp`, `v4`) before `arch/`, `schedule_timeout`
/// puts `kernel/time/timer.c` and `kernel/sched/` early. A scan cut short by its budget has then
/// read the files likeliest to hold the answer (issue 35).
fn likeliest_first(words: &PathWords, query: &str) -> impl Iterator<Item = usize> {
    let mut relevance = vec![0u8; words.paths];
    // The query word a path was last counted for (+1), so a path counts each query word once.
    let mut counted = vec![0u8; words.paths];
    for (number, word) in words_of(query, 3).iter().enumerate().take(usize::from(u8::MAX - 1)) {
        let mark = number as u8 + 1;
        for (own, paths) in &words.words {
            if !(own.contains(word.as_str()) || word.contains(&**own)) {
                continue;
            }
            for &at in paths {
                let at = at as usize;
                if counted[at] != mark {
                    counted[at] = mark;
                    relevance[at] = relevance[at].saturating_add(1);
                }
            }
        }
    }
    let mut first: Vec<usize> = (0..words.paths).filter(|&at| relevance[at] > 0).collect();
    first.sort_unstable_by_key(|&at| (std::cmp::Reverse(relevance[at]), at));
    let rest = (0..words.paths).filter(move |&at| relevance[at] == 0);
    first.into_iter().chain(rest)
}

/// The lowercase words of a query or a path: split at anything not a letter or digit and at
/// camelCase humps; at least `min` characters long, or two with a digit (`v4`).
fn words_of(text: &str, min: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for character in text.chars().chain(std::iter::once(' ')) {
        let hump = character.is_uppercase() && previous_lower;
        if !character.is_alphanumeric() || hump {
            let long_enough = word.len() >= min || (word.len() >= 2 && word.chars().any(|c| c.is_ascii_digit()));
            if long_enough && !words.contains(&word) {
                words.push(std::mem::take(&mut word));
            }
            word.clear();
        }
        if character.is_alphanumeric() {
            word.extend(character.to_lowercase());
        }
        previous_lower = character.is_lowercase();
    }
    words
}

/// `$XDG_CACHE_HOME/loupe/<workspace_hash>` (§2), outside the repository.
pub fn default_index_dir(canonical_root: &Path) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("loupe").join(loupe_core::path::workspace_hash(canonical_root))
}

/// Opens the edit journal in `<index_dir>/journal` and finishes or rolls back a transaction
/// a crash interrupted, before any call is served. A read-only server writes nothing, not even
/// to recover: it names the interrupted transactions and leaves them for a writable start.
fn open_journal(root: &Root, index_dir: &Path, read_only: bool) -> Option<Arc<Journal>> {
    let dir = index_dir.join("journal");
    let opened = if read_only { Journal::open_read_only(root.clone(), dir) } else { Journal::open(root.clone(), dir) };
    match opened {
        Ok((journal, recovery)) => {
            if !recovery.rolled_back.is_empty() || !recovery.completed.is_empty() {
                tracing::warn!(?recovery, "recovered interrupted edit transactions");
            }
            for path in &recovery.left_alone {
                tracing::warn!("`{path}` changed during an interrupted edit; left as it is");
            }
            for record in &recovery.quarantined {
                tracing::warn!("a damaged edit journal record was moved to `journal/{record}`; edits go on");
            }
            if !recovery.pending_left.is_empty() {
                tracing::warn!(
                    "read-only: interrupted edit transactions {:?} were left as they are; start loupe without `read_only` to recover them",
                    recovery.pending_left
                );
            }
            Some(Arc::new(journal))
        }
        Err(error) => {
            tracing::warn!("cannot open the edit journal: {error}; edits are disabled");
            None
        }
    }
}

/// How long a server waits, once the tokenizer is ready, before its first index build starts.
const INDEX_START_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

fn index_threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

#[cfg(test)]
mod tests {
    use super::{PathWords, likeliest_first, words_of};

    #[test]
    fn words_split_at_separators_and_humps() {
        assert_eq!(words_of("tcp_v4_connect", 3), ["tcp", "v4", "connect"]);
        assert_eq!(words_of("getLoadDotenv", 3), ["get", "load", "dotenv"]);
        assert_eq!(words_of("net/ipv4/tcp_ipv4.c", 3), ["net", "ipv4", "tcp"]);
        assert_eq!(words_of("Kernel panic - not syncing", 3), ["kernel", "panic", "not", "syncing"]);
        assert!(words_of("a b", 3).is_empty());
    }

    /// A scan cut by its budget has read the files whose paths hold the query's words (or a
    /// word of one holds the other: `ipv4` holds `v4`, `schedule` holds `sched`), then the rest
    /// in walk order.
    #[test]
    fn the_likeliest_files_come_first() {
        let paths = [
            "arch/x86/kernel/time.c",
            "drivers/net/tcp_offload.c",
            "include/net/tcp.h",
            "kernel/sched/core.c",
            "kernel/time/timer.c",
            "net/ipv4/tcp_ipv4.c",
        ];
        let words = PathWords::of(paths.iter().copied());
        let order = |query: &str| -> Vec<&str> { likeliest_first(&words, query).map(|at| paths[at]).collect() };
        let tcp = order("tcp_v4_connect");
        assert_eq!(tcp[0], "net/ipv4/tcp_ipv4.c", "{tcp:?}");
        assert_eq!(&tcp[1..3], ["drivers/net/tcp_offload.c", "include/net/tcp.h"], "{tcp:?}");
        let timeout = order("schedule_timeout");
        assert_eq!(
            &timeout[..3],
            ["arch/x86/kernel/time.c", "kernel/sched/core.c", "kernel/time/timer.c"],
            "{timeout:?}"
        );
        // No word to go by: walk order.
        assert_eq!(order("x"), paths);
    }
}
