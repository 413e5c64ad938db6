//! The index of one workspace: building it, reconciling it with the disk, keeping it current,
//! and answering lookups from it.
//!
//! State lives behind one `RwLock`. Work that reads or parses files runs without the lock and
//! only applies its results under it, so queries keep being answered (from what is ready)
//! while a build runs. Every lookup result is a proposal: callers verify against the disk.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use loupe_core::{ContentHash, RepoPath, text};
use loupe_syntax::Lang;
use loupe_vfs::{Root, WalkEntry, WalkOptions};
use serde::{Deserialize, Serialize};

use rustc_hash::FxHashMap;

use crate::links::{FileLinks, LinkTable};
use crate::records::{FileRecord, SymbolRecord};
use crate::store::{self, WriterLock};
use crate::symbols::SymbolTable;
use crate::trigram::{self, Candidates, IndexBuilder, LayeredIndex, Plan, TrigramIndex};

/// How an index is built and where it lives.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    pub index_dir: PathBuf,
    pub max_file_bytes: u64,
    pub threads: usize,
}

/// Whether the first build has finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexState {
    Building,
    Ready,
}

/// Counts for `manage status` and `meta.index_state`.
#[derive(Debug, Clone, Serialize)]
pub struct IndexStatus {
    pub state: IndexState,
    pub files: usize,
    pub symbols: usize,
    pub files_done: usize,
    pub files_total: usize,
    pub by_language: BTreeMap<String, usize>,
    pub persisted: bool,
}

/// What one refresh did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RefreshStats {
    pub walked: usize,
    pub unchanged: usize,
    pub reindexed: usize,
    /// Files a rebuild took from the previous tables (same content) instead of parsing again:
    /// how a build interrupted by the end of a session resumes.
    pub reused: usize,
    /// The build was interrupted (`Index::interrupt_build`): what it did is kept, as a
    /// checkpoint the next build resumes from.
    pub interrupted: bool,
    /// The caller stopped this refresh (`Index::refresh_until`): the changed files read before
    /// the stop are applied; a stopped rebuild keeps the previous tables whole.
    pub stopped: bool,
    pub removed: usize,
    pub full_rebuild: bool,
    pub millis: u128,
    /// Phases: walking the tree, reading and parsing, persisting.
    pub walk_millis: u128,
    pub process_millis: u128,
    pub persist_millis: u128,
    /// Where "reading and parsing" went, stage by stage.
    pub stages: BuildStages,
}

/// The stages of a refresh's reading and parsing, in milliseconds. The per-file stages are
/// summed over the worker threads (so with two busy workers they add up to about twice the
/// wall time); `apply` is the one thread that takes each file's results in order, and the last
/// two run once at the end of a full rebuild. Each grows with the files it touches: a stage
/// that grows faster than the tree in `bench/index/scale.sh` is the one to look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildStages {
    /// Opening and reading files, hashing and decoding their text.
    pub read_millis: f64,
    /// Each file's distinct trigrams.
    pub trigrams_millis: f64,
    /// tree-sitter's parse and the walk over its tree for definitions and links.
    pub parse_millis: f64,
    /// Adding each file's postings, symbol rows and links to the tables being built.
    pub apply_millis: f64,
    /// Writing the text index out (and reading it back).
    pub text_write_millis: f64,
    /// The name index of the symbol rows.
    pub name_index_millis: f64,
}

/// `BuildStages`' per-file counters, in nanoseconds, added to by every worker.
#[derive(Default)]
struct StageClock {
    read: AtomicU64,
    trigrams: AtomicU64,
    parse: AtomicU64,
}

impl StageClock {
    /// Adds the time since `since` to `counter`, and returns the end: where the next stage of
    /// the same file starts.
    fn add(counter: &AtomicU64, since: Instant) -> Instant {
        let now = Instant::now();
        counter.fetch_add(now.duration_since(since).as_nanos() as u64, Ordering::Relaxed);
        now
    }

    /// The counters so far, as milliseconds, and zero again.
    fn take(&self) -> (f64, f64, f64) {
        let millis = |counter: &AtomicU64| counter.swap(0, Ordering::Relaxed) as f64 / 1e6;
        (millis(&self.read), millis(&self.trigrams), millis(&self.parse))
    }
}

/// A symbol found by a lookup, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolHit {
    pub path: RepoPath,
    pub file_hash: ContentHash,
    pub symbol: SymbolRecord,
}

#[derive(Default)]
struct State {
    files: Vec<FileRecord>,
    symbols: SymbolTable,
    by_path: FxHashMap<RepoPath, u32>,
    /// Doc ids in path order (dead ones included), and each doc's position in it: queries
    /// sort their candidates by an integer rather than by comparing paths.
    path_order: Vec<u32>,
    path_rank: Vec<u32>,
    text: LayeredIndex,
    /// The text index could not be written and read back after a build: it answers for
    /// nothing, so every text file is a candidate (a scan) until a full rebuild succeeds.
    /// Never "no results" for want of an index.
    text_unusable: bool,
    links: LinkTable,
    /// Every walked file is in the tables. A build interrupted at the end of a session is
    /// persisted incomplete, as a checkpoint: loaded, it serves as `building`, and the next
    /// rebuild copies its files instead of parsing them again.
    complete: bool,
}

/// Generations whose changes `modified_since` remembers.
const CHANGES_KEPT: usize = 64;

/// What one generation changed.
#[derive(Debug, Clone)]
enum Change {
    /// These files, already indexed, were re-indexed with new content; no file came or went.
    Modified(Vec<RepoPath>),
    /// Files came or went, or the tables were replaced whole.
    Other,
}

pub struct Index {
    root: Root,
    options: IndexOptions,
    state: RwLock<State>,
    writer: Option<WriterLock>,
    ready: AtomicBool,
    /// `load_snapshot` has run (whether or not it found a snapshot).
    loaded: AtomicBool,
    /// Held while the snapshot loads, so a query that arrives meanwhile waits for it rather
    /// than scanning the disk.
    load_lock: Mutex<()>,
    files_done: AtomicUsize,
    files_total: AtomicUsize,
    /// Serialises refreshes: one build or update at a time.
    refresh_lock: Mutex<()>,
    /// Set when the session ends before the build does: the build stops after the file at
    /// hand, and what it built is persisted as a checkpoint.
    interrupted: AtomicBool,
    /// Test hook: microseconds every processed file takes longer (`slow_down_for_tests`).
    file_delay_micros: AtomicU64,
    /// Per-file stage times of the refresh in progress (`RefreshStats::stages`).
    stage_clock: StageClock,
    /// Bumped whenever the tables change, so derived state (the relationship graphs) knows
    /// when to rebuild.
    generation: AtomicU64,
    /// What the last generations changed (`modified_since`), so derived state can update
    /// rather than rebuild.
    changes: Mutex<std::collections::VecDeque<(u64, Change)>>,
    /// The files the last walk found over `max_file_bytes`: not indexed, so a text search
    /// scans them itself (§7: never "nothing" when the answer may lie where the index is not).
    oversized: Mutex<Vec<WalkEntry>>,
    /// The files the running refresh walked, for queries answered by a direct scan meanwhile:
    /// they need not walk the tree again (a walk of Linux is more than a bounded scan's time).
    walked: Mutex<Option<Arc<Vec<WalkEntry>>>>,
    /// What the last walk could not read (`Walk::unwalkable`).
    unwalkable: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("index_dir", &self.options.index_dir).finish()
    }
}

/// The result of reading and parsing one file.
enum Processed {
    /// Gone or unreadable since the walk.
    Missing,
    /// Same bytes as recorded: only size/mtime move.
    SameContent { size: u64, mtime_ns: u64 },
    /// Same bytes as recorded, in a rebuild: the record (size/mtime moved) and the trigrams,
    /// the definitions and links to be copied from the previous tables.
    Reused { record: FileRecord, trigrams: Vec<u32> },
    Indexed {
        record: FileRecord,
        definitions: Vec<loupe_syntax::Definition>,
        /// `FileLinks` encoded (on the worker thread, so the imports' strings die there).
        links: Option<Box<[u8]>>,
        trigrams: Vec<u32>,
    },
}

impl Index {
    /// Opens the index for `root`, loading the persisted tables when they are valid for this
    /// root and format. Nothing is walked until `refresh`.
    pub fn open(root: Root, options: IndexOptions) -> Index {
        let writer = WriterLock::try_acquire(&options.index_dir);
        if writer.is_some() {
            store::remove_stale_temporaries(&options.index_dir);
        }
        Index {
            root,
            options,
            state: RwLock::new(State::default()),
            writer,
            ready: AtomicBool::new(false),
            loaded: AtomicBool::new(false),
            load_lock: Mutex::new(()),
            files_done: AtomicUsize::new(0),
            files_total: AtomicUsize::new(0),
            refresh_lock: Mutex::new(()),
            interrupted: AtomicBool::new(false),
            file_delay_micros: AtomicU64::new(0),
            stage_clock: StageClock::default(),
            generation: AtomicU64::new(0),
            changes: Mutex::new(std::collections::VecDeque::new()),
            oversized: Mutex::new(Vec::new()),
            walked: Mutex::new(None),
            unwalkable: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Loads the persisted tables once, when they are valid for this root and format, and
    /// serves from them from then on (`refresh` reconciles them with the disk). Opening is
    /// cheap and this is not, so a server calls it off its start-up path. A call made while
    /// another thread loads waits for it. True when a snapshot was loaded.
    pub fn load_snapshot(&self) -> bool {
        if self.loaded.load(Ordering::Acquire) {
            return self.ready.load(Ordering::Acquire);
        }
        let _loading = self.load_lock.lock().unwrap_or_else(|poison| poison.into_inner());
        if !self.loaded.load(Ordering::Acquire) {
            // `loaded` is set only once the load is over, so that a caller arriving meanwhile
            // waits on the lock instead of taking the fast path with nothing loaded.
            self.load_snapshot_now();
            self.loaded.store(true, Ordering::Release);
        }
        self.ready.load(Ordering::Acquire)
    }

    fn load_snapshot_now(&self) {
        let root_key = self.root.canonical().display().to_string();
        let started = Instant::now();
        let Some(snapshot) = store::load(&self.options.index_dir, &root_key) else { return };
        let loaded = started.elapsed();
        let base = TrigramIndex::open(&self.options.index_dir.join(store::TEXT_FILE)).ok();
        let Some(base) = base.filter(|base| base.doc_count() as usize == snapshot.files.len()) else { return };
        let mut state =
            State::from_parts(snapshot.files, snapshot.symbols, snapshot.links, LayeredIndex::new(Some(base)));
        state.complete = snapshot.complete;
        *self.write_state() = state;
        // The large files the last walk found: a search reads them directly from the first
        // answer on, not only once this process's own walk has found them again.
        *self.oversized.lock().unwrap_or_else(|poison| poison.into_inner()) = snapshot.oversized;
        self.bump(Change::Other);
        // A checkpoint serves what it holds, as `building`, until the build is finished.
        self.ready.store(snapshot.complete, Ordering::Release);
        tracing::info!(?loaded, total = ?started.elapsed(), complete = snapshot.complete, "index snapshot loaded");
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// The directory the index is persisted in.
    pub fn dir(&self) -> &std::path::Path {
        &self.options.index_dir
    }

    /// The bytes of `name`, a file of the caller's own in the index directory (a cache beside
    /// the index, such as the summaries of files too large for it), read as the index's own
    /// files are: never through a link, never from a FIFO or device, at most `max_bytes`.
    /// `None` when it is not there, not a regular file, or larger.
    pub fn read_side_file(&self, name: &str, max_bytes: u64) -> Option<Vec<u8>> {
        use std::io::Read;
        let (file, size) = crate::ondisk::open_regular(&self.options.index_dir.join(name)).ok()?;
        if size > max_bytes {
            return None;
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(size).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    /// Replaces `name` in the index directory with `bytes`, through a temporary renamed over
    /// it, when this process is the writer (a reader leaves the directory to the writer:
    /// `Ok(false)`). The caller checks what it reads back: a cache, never a source of truth.
    pub fn write_side_file(&self, name: &str, bytes: &[u8]) -> std::io::Result<bool> {
        use std::io::Write;
        if self.writer.is_none() {
            return Ok(false);
        }
        let (mut out, file) = trigram::AtomicFile::create(&self.options.index_dir.join(name))?;
        out.write_all(bytes)?;
        file.commit(out)?;
        Ok(true)
    }

    /// Returns once no refresh or update is running (a running one has persisted its work).
    pub fn wait_idle(&self) {
        drop(self.refresh_lock.lock().unwrap_or_else(|poison| poison.into_inner()));
    }

    /// Stops a running build after the file at hand, keeping (and persisting) what it built, so
    /// that the next session's build resumes from it; every later build stops at once too. For
    /// a process about to exit.
    pub fn interrupt_build(&self) {
        self.interrupted.store(true, Ordering::Release);
    }

    /// Test hook: every file a build processes takes `delay` longer, so a test can end a
    /// session in the middle of a build. Never for serving.
    #[cfg(feature = "test-hooks")]
    pub fn slow_down_for_tests(&self, delay: std::time::Duration) {
        self.file_delay_micros.store(delay.as_micros() as u64, Ordering::Relaxed);
    }

    fn is_interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Acquire)
    }

    /// True when this process persists the index (it holds the writer lock).
    pub fn is_writer(&self) -> bool {
        self.writer.is_some()
    }

    /// Walks the workspace and brings the index up to date: unchanged files (same size and
    /// mtime, or same content hash) are kept, changed and new files are parsed, vanished
    /// files are dropped. A cold start or a large change rebuilds the text index whole.
    pub fn refresh(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> RefreshStats {
        self.refresh_until(progress, &|| false)
    }

    /// `refresh`, checking `stop` after every file: once it answers true the refresh stops,
    /// keeping what it applied (an incremental refresh) or the previous tables (a rebuild,
    /// whose half-built tables would lose the files it had not reached yet).
    pub fn refresh_until(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> RefreshStats {
        self.load_snapshot();
        let _guard = self.refresh_lock.lock().unwrap_or_else(|poison| poison.into_inner());
        if self.is_interrupted() {
            // The session ended before this build began: nothing to keep.
            return RefreshStats { interrupted: true, ..RefreshStats::default() };
        }
        let started = Instant::now();
        let walk = self
            .root
            .walk_all(WalkOptions { max_file_bytes: self.options.max_file_bytes, threads: self.options.threads });
        *self.oversized.lock().unwrap_or_else(|poison| poison.into_inner()) = walk.oversized;
        self.unwalkable.store(walk.unwalkable, Ordering::Relaxed);
        let walked = Arc::new(walk.files);
        *self.walked.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(Arc::clone(&walked));
        let mut stats = RefreshStats {
            walked: walked.len(),
            walk_millis: started.elapsed().as_millis(),
            ..RefreshStats::default()
        };
        let processing = Instant::now();
        self.stage_clock.take();

        // Decide, under a short read lock, what needs reading.
        let (to_check, removed, full, was_complete) = {
            let state = self.read_state();
            let mut to_check: Vec<(WalkEntry, Option<u32>)> = Vec::new();
            let mut seen: HashSet<u32> = HashSet::new();
            for entry in walked.iter() {
                match state.by_path.get(&entry.path) {
                    Some(&doc) => {
                        seen.insert(doc);
                        let record = &state.files[doc as usize];
                        if record.live && record.size == entry.size && record.mtime_ns == entry.mtime_ns {
                            stats.unchanged += 1;
                        } else {
                            to_check.push((entry.clone(), Some(doc)));
                        }
                    }
                    None => to_check.push((entry.clone(), None)),
                }
            }
            let removed: Vec<u32> = state
                .files
                .iter()
                .enumerate()
                .filter(|(doc, record)| record.live && !seen.contains(&(*doc as u32)))
                .map(|(doc, _)| doc as u32)
                .collect();
            let live = state.files.iter().filter(|record| record.live).count();
            // A full rebuild copies what a checkpoint or the previous tables already parsed.
            let full = live == 0
                || (to_check.len() + removed.len()) * 4 > live.max(1)
                || state.text.overlay_docs() > 20_000
                || state.text_unusable
                || state.text.base_damaged()
                || state.symbols.is_damaged();
            (to_check, removed, full, state.complete)
        };
        stats.removed = removed.len();

        // Nothing to write back when every file matched its record (and the snapshot on disk
        // says it is complete: a checkpoint whose missing files were deleted meanwhile is).
        let dirty = full || !to_check.is_empty() || !removed.is_empty() || !was_complete;
        if full {
            stats.full_rebuild = true;
            self.rebuild(&walked, progress, stop, &mut stats);
        } else {
            let (reindexed, stopped) = self.apply_changes(to_check, &removed, progress, stop);
            stats.reindexed = reindexed;
            stats.stopped = stopped;
            self.write_state().complete = true;
        }
        // A stopped rebuild changed nothing, so the index is as ready as it was before.
        let rebuilt_nothing = stats.full_rebuild && stats.stopped;
        if !stats.interrupted && !rebuilt_nothing {
            self.ready.store(true, Ordering::Release);
        }
        stats.process_millis = processing.elapsed().as_millis();
        (stats.stages.read_millis, stats.stages.trigrams_millis, stats.stages.parse_millis) = self.stage_clock.take();
        let persisting = Instant::now();
        if dirty
            && !rebuilt_nothing
            && self.writer.is_some()
            && let Err(error) = self.persist()
        {
            tracing::warn!("could not persist the index: {error}");
        }
        stats.persist_millis = persisting.elapsed().as_millis();
        // The walk served the direct scans of the refresh that ran; it is stale now.
        *self.walked.lock().unwrap_or_else(|poison| poison.into_inner()) = None;
        stats.millis = started.elapsed().as_millis();
        stats
    }

    /// Re-reads the given paths (from a watcher or an edit) and applies what changed.
    pub fn update_paths(&self, paths: &[RepoPath]) {
        let _guard = self.refresh_lock.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut to_check = Vec::new();
        let mut removed = Vec::new();
        // The paths now over the size limit, which searches read directly.
        let mut oversized = Vec::new();
        {
            let state = self.read_state();
            for path in paths {
                let doc = state.by_path.get(path).copied();
                let metadata = self
                    .root
                    .resolve(path.as_str())
                    .ok()
                    .and_then(|resolved| resolved.real)
                    .and_then(|real| std::fs::metadata(real).ok());
                match metadata.filter(|metadata| metadata.is_file()) {
                    Some(metadata) => {
                        let mtime_ns = metadata
                            .modified()
                            .ok()
                            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                            .map_or(0, |since| since.as_nanos() as u64);
                        if self.root.is_ignored(path, false) {
                            removed.extend(doc);
                            continue;
                        }
                        let entry = WalkEntry { path: path.clone(), size: metadata.len(), mtime_ns };
                        if entry.size > self.options.max_file_bytes {
                            removed.extend(doc);
                            oversized.push(entry);
                        } else {
                            to_check.push((entry, doc));
                        }
                    }
                    None => removed.extend(doc),
                }
            }
        }
        {
            // As a walk would list them: each path given is in the list only when it is over
            // the limit now (with its stamp now), and the list stays in path order.
            let given: HashSet<&RepoPath> = paths.iter().collect();
            let mut list = self.oversized.lock().unwrap_or_else(|poison| poison.into_inner());
            list.retain(|entry| !given.contains(&entry.path));
            list.extend(oversized);
            list.sort_by(|left, right| left.path.cmp(&right.path));
        }
        self.apply_changes(to_check, &removed, &|_, _| {}, &|| false);
    }

    fn read_state(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|poison| poison.into_inner())
    }

    fn write_state(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Builds the tables anew in path order, feeding the text index in doc order. A file whose
    /// content the current tables already hold (a checkpoint's, or the previous build's) is
    /// read for its trigrams but not parsed again: its definitions and links are copied. An
    /// interrupted rebuild keeps the files done so far, marked incomplete.
    fn rebuild(
        &self,
        walked: &[WalkEntry],
        progress: &(dyn Fn(usize, usize) + Sync),
        stop: &(dyn Fn() -> bool + Sync),
        stats: &mut RefreshStats,
    ) {
        // A rebuild renumbers every document: the old tables are read, under a read lock that
        // queries share, until the new ones replace them.
        let old = self.read_state();
        // Nothing is copied from a symbol table whose file was damaged under it.
        let previous: HashMap<RepoPath, FileRecord> = if old.symbols.is_damaged() {
            HashMap::new()
        } else {
            old.files.iter().filter(|record| record.live).map(|record| (record.path.clone(), record.clone())).collect()
        };
        let total = walked.len();
        self.files_total.store(total, Ordering::Release);
        self.files_done.store(0, Ordering::Release);
        let mut builder = IndexBuilder::new();
        let mut files = Vec::with_capacity(total);
        // The writer writes the rows and strings out as they come (a cold build then holds only
        // the names); a reader, which may not write here, builds in memory.
        let mut symbols = match &self.writer {
            Some(_) => SymbolTable::spilling(&self.options.index_dir).unwrap_or_else(|error| {
                tracing::warn!("could not write symbol rows out ({error}); building them in memory");
                SymbolTable::default()
            }),
            None => SymbolTable::default(),
        };
        let mut links = LinkTable::default();
        let mut reused = 0;
        let mut stopped = false;
        let mut applying = std::time::Duration::ZERO;
        self.process_in_order(
            walked,
            |index, processed| {
                let applied = Instant::now();
                let entry = &walked[index];
                // Each arm fills the file's symbol rows and links; the text index and the file
                // table take the record and trigrams below.
                let (record, trigrams) = match processed {
                    Processed::Indexed { record, definitions, links: file_links, trigrams } => {
                        symbols.push_file(&definitions);
                        links.set_encoded(index as u32, file_links);
                        (record, trigrams)
                    }
                    Processed::Reused { record, trigrams } => {
                        // `Reused` comes only from a live record of the old tables.
                        match old.by_path.get(&record.path) {
                            Some(&old_doc) => {
                                reused += 1;
                                symbols.push_file_from(&old.symbols, old_doc);
                                links.set_encoded(index as u32, old.links.encoded(old_doc));
                            }
                            None => {
                                symbols.push_file(&[]);
                                links.set_encoded(index as u32, None);
                            }
                        }
                        (record, trigrams)
                    }
                    Processed::SameContent { .. } | Processed::Missing => {
                        // Unreadable now: keep a dead slot so doc ids stay aligned.
                        symbols.push_file(&[]);
                        links.set_encoded(index as u32, None);
                        let dead = FileRecord {
                            path: entry.path.clone(),
                            size: entry.size,
                            mtime_ns: entry.mtime_ns,
                            hash: ContentHash::of(b""),
                            lang: None,
                            text: false,
                            live: false,
                        };
                        (dead, Vec::new())
                    }
                };
                builder.add(index as u32, &trigrams);
                files.push(record);
                applying += applied.elapsed();
                let done = self.files_done.fetch_add(1, Ordering::AcqRel) + 1;
                progress(done, total);
                stopped = stop();
                !self.is_interrupted() && !stopped
            },
            &previous,
            true,
        );
        drop(old);
        stats.stages.apply_millis = applying.as_secs_f64() * 1e3;
        if stopped && files.len() < total && !self.is_interrupted() {
            // The caller gave up on this rebuild: its half-built tables would drop the files it
            // had not reached, so the previous tables stay (and the text index file with them).
            stats.stopped = true;
            tracing::info!(
                done = files.len(),
                total,
                "index rebuild stopped by the caller; keeping the previous tables"
            );
            return;
        }
        let complete = files.len() == total;
        stats.reindexed = files.len() - reused;
        stats.reused = reused;
        stats.interrupted = !complete;
        if !complete {
            tracing::info!(done = files.len(), total, "index build interrupted; keeping it as a checkpoint");
        }
        // The writer streams the new text index to its file and reads it back, which never
        // holds the build buffers and the encoded index at once; others keep it in memory.
        // The name index is built after, once the text index's build buffers are freed.
        let text_path = self.options.index_dir.join(store::TEXT_FILE);
        let writing = Instant::now();
        let (base, unusable) = match &self.writer {
            Some(_) => match builder.write(&text_path).and_then(|()| TrigramIndex::open(&text_path)) {
                Ok(base) => (base, false),
                Err(error) => {
                    tracing::warn!("could not write the text index ({error}); text searches scan every file");
                    (TrigramIndex::empty(), true)
                }
            },
            None => (builder.finish(), false),
        };
        stats.stages.text_write_millis = writing.elapsed().as_secs_f64() * 1e3;
        let naming = Instant::now();
        symbols.finish_build();
        stats.stages.name_index_millis = naming.elapsed().as_secs_f64() * 1e3;
        let mut state = self.write_state();
        *state = State::from_parts(files, symbols, links, LayeredIndex::new(Some(base)));
        state.text_unusable = unusable;
        state.complete = complete;
        self.bump(Change::Other);
    }

    /// Re-reads changed files and applies them incrementally through the overlay.
    fn apply_changes(
        &self,
        to_check: Vec<(WalkEntry, Option<u32>)>,
        removed: &[u32],
        progress: &(dyn Fn(usize, usize) + Sync),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> (usize, bool) {
        let entries: Vec<WalkEntry> = to_check.iter().map(|(entry, _)| entry.clone()).collect();
        let previous: HashMap<RepoPath, FileRecord> = {
            let state = self.read_state();
            to_check
                .iter()
                .filter_map(|(entry, doc)| doc.map(|doc| (entry.path.clone(), state.files[doc as usize].clone())))
                .collect()
        };
        let total = entries.len();
        let mut results: Vec<(usize, Processed)> = Vec::with_capacity(total);
        let mut stopped = false;
        self.process_in_order(
            &entries,
            |index, processed| {
                results.push((index, processed));
                progress(results.len(), total);
                stopped = stop();
                !stopped
            },
            &previous,
            false,
        );
        let mut state = self.write_state();
        let mut reindexed = 0;
        // The files re-indexed in place; `None` once one came or went.
        let mut modified = Some(Vec::new());
        for &doc in removed {
            state.remove_doc(doc);
        }
        for (index, processed) in results {
            let (entry, doc) = &to_check[index];
            match processed {
                Processed::Missing => {
                    if let Some(doc) = doc {
                        state.remove_doc(*doc);
                        modified = None;
                    }
                }
                Processed::SameContent { size, mtime_ns }
                | Processed::Reused { record: FileRecord { size, mtime_ns, .. }, .. } => {
                    if let Some(doc) = doc {
                        let record = &mut state.files[*doc as usize];
                        record.size = size;
                        record.mtime_ns = mtime_ns;
                    }
                }
                Processed::Indexed { record, definitions, links, trigrams } => {
                    reindexed += 1;
                    let doc = match doc {
                        Some(doc) => {
                            if let Some(paths) = modified.as_mut() {
                                paths.push(entry.path.clone());
                            }
                            *doc
                        }
                        None => {
                            modified = None;
                            state.files.len() as u32
                        }
                    };
                    state.put_doc(doc, record, &definitions, links, &trigrams);
                }
            }
        }
        // Every re-indexed file left its old rows behind: compact once they outweigh the
        // live ones, here rather than only when persisting, which a reader never does.
        if state.symbols.worth_compacting() {
            state.symbols.compact();
        }
        if reindexed > 0 || !removed.is_empty() {
            self.bump(match modified {
                Some(paths) if removed.is_empty() => Change::Modified(paths),
                _ => Change::Other,
            });
        }
        (reindexed, stopped)
    }

    /// Reads, hashes, decodes and parses `entries` on `threads` workers, handing each result
    /// to `apply` in entry order (doc ids must reach the text index in order) until `apply`
    /// answers false. A file whose content `previous` records is `Reused` in a rebuild (its
    /// trigrams taken, nothing parsed), `SameContent` otherwise.
    fn process_in_order(
        &self,
        entries: &[WalkEntry],
        apply: impl FnMut(usize, Processed) -> bool,
        previous: &HashMap<RepoPath, FileRecord>,
        rebuilding: bool,
    ) {
        loupe_core::parallel::map_in_order(
            entries,
            self.options.threads.max(1),
            Vec::new,
            |trigram_buffer, entry| self.process(entry, previous.get(&entry.path), trigram_buffer, rebuilding),
            apply,
        );
    }

    fn process(
        &self,
        entry: &WalkEntry,
        known: Option<&FileRecord>,
        trigram_buffer: &mut Vec<u32>,
        rebuilding: bool,
    ) -> Processed {
        let delay = self.file_delay_micros.load(Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(std::time::Duration::from_micros(delay));
        }
        let clock = &self.stage_clock;
        let reading = Instant::now();
        let Ok(bytes) = self.root.read_indexed(&entry.path, self.options.max_file_bytes) else {
            StageClock::add(&clock.read, reading);
            return Processed::Missing;
        };
        let hash = ContentHash::of(&bytes);
        if let Some(known) = known
            && known.live
            && known.hash == hash
        {
            let (size, mtime_ns) = (bytes.len() as u64, entry.mtime_ns);
            if !rebuilding {
                StageClock::add(&clock.read, reading);
                return Processed::SameContent { size, mtime_ns };
            }
            let record = FileRecord { size, mtime_ns, ..known.clone() };
            trigram_buffer.clear();
            let decoded = if record.text { text::decode_owned(bytes).ok() } else { None };
            let read = StageClock::add(&clock.read, reading);
            if let Some(decoded) = decoded {
                trigram::trigrams_of(decoded.text.as_bytes(), trigram_buffer);
                StageClock::add(&clock.trigrams, read);
            }
            return Processed::Reused { record, trigrams: trigram_buffer.clone() };
        }
        let mut record = FileRecord {
            path: entry.path.clone(),
            size: bytes.len() as u64,
            mtime_ns: entry.mtime_ns,
            hash,
            lang: Lang::from_path(entry.path.as_str()),
            text: true,
            live: true,
        };
        let decoded = text::decode_owned(bytes);
        let read = StageClock::add(&clock.read, reading);
        let Ok(decoded) = decoded else {
            record.text = false;
            record.lang = None;
            return Processed::Indexed { record, definitions: Vec::new(), links: None, trigrams: Vec::new() };
        };
        // Trigrams of the decoded text: verification runs on it, so a Latin-1 or UTF-16
        // file must be indexed as the UTF-8 it is searched as.
        trigram::trigrams_of(decoded.text.as_bytes(), trigram_buffer);
        let trigrams_done = StageClock::add(&clock.trigrams, read);
        let (definitions, links) = match record.lang {
            Some(lang) => {
                let facts = loupe_syntax::parse_with(lang, &decoded.text, loupe_syntax::Extract::Declarations);
                (facts.definitions, FileLinks::new(facts.imports, facts.type_relations).encode())
            }
            None => (Vec::new(), None),
        };
        StageClock::add(&clock.parse, trigrams_done);
        Processed::Indexed { record, definitions, links, trigrams: trigram_buffer.clone() }
    }

    fn persist(&self) -> std::io::Result<()> {
        if self.read_state().symbols.needs_compaction() {
            self.write_state().symbols.compact_all();
        }
        let state = self.read_state();
        let root = self.root.canonical().display().to_string();
        let text_path = self.options.index_dir.join(store::TEXT_FILE);
        let compact =
            state.text.overlay_docs() > 0 || state.text.tombstone_count() > 0 || !crate::ondisk::is_regular(&text_path);
        if compact {
            state.text.compact(&text_path)?;
        }
        let oversized = self.oversized();
        let (arena_at, rows_at) = store::save(
            &self.options.index_dir,
            &root,
            &state.files,
            &oversized,
            &state.symbols,
            &state.links,
            state.complete,
        )?;
        drop(state);
        // The symbol table reads its rows and strings from the file just written from now on,
        // rather than holding them. Callers hold `refresh_lock`, so nothing changed the tables
        // since they were saved.
        let rebased = crate::ondisk::PersistedFile::open(&self.options.index_dir.join(store::SNAPSHOT_FILE))
            .is_ok_and(|file| self.write_state().symbols.rebase(std::sync::Arc::new(file), arena_at, rows_at));
        if !rebased {
            tracing::warn!("the symbol table just persisted cannot be read back; keeping it in memory");
        }
        if compact {
            // The compacted file is the new base: reopen it so the overlay starts empty.
            let base = TrigramIndex::open(&text_path)?;
            self.write_state().text = LayeredIndex::new(Some(base));
        }
        Ok(())
    }

    /// Counts and progress.
    pub fn status(&self) -> IndexStatus {
        let state = self.read_state();
        let mut by_language: BTreeMap<String, usize> = BTreeMap::new();
        let mut files = 0;
        for record in state.files.iter().filter(|record| record.live) {
            files += 1;
            let name = record.lang.map_or(if record.text { "other" } else { "binary" }, Lang::name);
            *by_language.entry(name.to_owned()).or_default() += 1;
        }
        IndexStatus {
            state: if self.ready.load(Ordering::Acquire) { IndexState::Ready } else { IndexState::Building },
            files,
            symbols: state.symbols.len(),
            files_done: self.files_done.load(Ordering::Acquire),
            files_total: self.files_total.load(Ordering::Acquire),
            by_language,
            persisted: self.writer.is_some(),
        }
    }

    /// `Ready` once the first build is done, while the files it reads on demand are the ones
    /// it opened: a `tables.bin` or `text.bin` truncated or written in place under it makes it
    /// `Building` (callers then scan the files instead), until a refresh rebuilds.
    pub fn state(&self) -> IndexState {
        if !self.ready.load(Ordering::Acquire) {
            return IndexState::Building;
        }
        let state = self.read_state();
        if state.symbols.is_damaged() || state.text.base_damaged() { IndexState::Building } else { IndexState::Ready }
    }

    /// Symbols whose name equals `name` (case-insensitively), in path then line order.
    pub fn symbols_named(&self, name: &str) -> Vec<SymbolHit> {
        let state = self.read_state();
        let mut hits: Vec<SymbolHit> = state
            .symbols
            .named(&name.to_lowercase())
            .into_iter()
            .filter_map(|(doc, symbol)| state.hit(doc, symbol))
            .collect();
        hits.sort_by(|left, right| {
            (&left.path, left.symbol.span.start_line).cmp(&(&right.path, right.symbol.span.start_line))
        });
        hits
    }

    /// The definitions of the file at `path` as the index last read it, in document order
    /// (empty for a file it does not hold): where a line sits, without parsing the file again.
    pub fn symbols_in(&self, path: &RepoPath) -> Vec<SymbolRecord> {
        let state = self.read_state();
        match state.by_path.get(path) {
            Some(&doc) if state.files.get(doc as usize).is_some_and(|record| record.live) => state.symbols.of_file(doc),
            _ => Vec::new(),
        }
    }

    /// Symbols whose lower-cased name contains `needle` (lower-cased) without being equal to
    /// it, whole names in byte order until at least `limit` symbols, so the cut is
    /// deterministic; the flag says whether the limit cut the list.
    pub fn symbols_containing(&self, needle: &str, limit: usize) -> (Vec<SymbolHit>, bool) {
        let state = self.read_state();
        let (found, cut) = state.symbols.containing(&needle.to_lowercase(), limit);
        (found.into_iter().filter_map(|(doc, symbol)| state.hit(doc, symbol)).collect(), cut)
    }

    /// Distinct symbol names (lower-cased) that pass `keep`, for "closest names" suggestions.
    pub fn symbol_names_where(&self, keep: &dyn Fn(&str) -> bool) -> Vec<String> {
        self.read_state().symbols.names_where(keep)
    }

    /// The files over `max_file_bytes` (not indexed), in path order: as the last walk found
    /// them (this process's, or the loaded snapshot's), with watched changes applied.
    /// How many entries this process's last walk could not read (a path too long, a
    /// directory it may not enter): searches say they did not see them.
    pub fn unwalkable(&self) -> usize {
        self.unwalkable.load(Ordering::Relaxed)
    }

    pub fn oversized(&self) -> Vec<WalkEntry> {
        self.oversized.lock().unwrap_or_else(|poison| poison.into_inner()).clone()
    }

    /// The files (within the index's size limit) the running refresh walked, once its walk is
    /// done and until the refresh ends: while a first build runs, what a direct scan reads
    /// instead of walking again.
    pub fn walked(&self) -> Option<Arc<Vec<WalkEntry>>> {
        self.walked.lock().unwrap_or_else(|poison| poison.into_inner()).clone()
    }

    /// Live files, in path order.
    pub fn files(&self) -> Vec<FileRecord> {
        let state = self.read_state();
        state
            .path_order
            .iter()
            .filter_map(|&doc| state.files.get(doc as usize))
            .filter(|record| record.live)
            .cloned()
            .collect()
    }

    /// A number that changes whenever the tables change (a build, a snapshot load, a file
    /// re-indexed or removed): state derived from the index is current while it is unchanged.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The files re-indexed with new content since `generation`, when that is all that
    /// changed (no file came or went, the tables were not replaced) and the changes are still
    /// remembered; `None` otherwise, when derived state must be rebuilt.
    pub fn modified_since(&self, generation: u64) -> Option<Vec<RepoPath>> {
        let now = self.generation();
        let changes = self.changes.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut paths: Vec<RepoPath> = Vec::new();
        let mut seen = 0;
        for (_, change) in changes.iter().filter(|(at, _)| *at > generation && *at <= now) {
            let Change::Modified(modified) = change else { return None };
            paths.extend(modified.iter().cloned());
            seen += 1;
        }
        // A generation bumped but not yet logged (or forgotten) is unknown: rebuild.
        if seen != now.saturating_sub(generation) {
            return None;
        }
        paths.sort();
        paths.dedup();
        Some(paths)
    }

    /// Moves to the next generation, remembering what it changed.
    fn bump(&self, change: Change) {
        let mut changes = self.changes.lock().unwrap_or_else(|poison| poison.into_inner());
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        changes.push_back((generation, change));
        while changes.len() > CHANGES_KEPT {
            changes.pop_front();
        }
    }

    /// Calls `visit` with every live file that has imports or type relations, in path order,
    /// under one read lock (so the view is consistent): what the relationship graphs are
    /// built from.
    pub fn for_each_links(&self, visit: &mut dyn FnMut(&FileRecord, &FileLinks)) {
        let state = self.read_state();
        for &doc in &state.path_order {
            let Some(record) = state.files.get(doc as usize).filter(|record| record.live) else { continue };
            if let Some(links) = state.links.get(doc) {
                visit(record, &links);
            }
        }
    }

    /// The content hash the index recorded for a live file.
    pub fn file_hash(&self, path: &RepoPath) -> Option<ContentHash> {
        self.recorded_hash(path, |_| true)
    }

    /// The content hash the index recorded for a live file, when the file's size and
    /// modification time are still those it was indexed with (the test the start-up reconcile
    /// trusts to skip a file): a search verifying thousands of files then hashes none of them.
    pub fn file_hash_if_unchanged(&self, path: &RepoPath, size: u64, mtime_ns: u64) -> Option<ContentHash> {
        self.recorded_hash(path, |record| record.size == size && record.mtime_ns == mtime_ns && mtime_ns != 0)
    }

    fn recorded_hash(&self, path: &RepoPath, keep: impl Fn(&FileRecord) -> bool) -> Option<ContentHash> {
        let state = self.read_state();
        let doc = *state.by_path.get(path)?;
        state.files.get(doc as usize).filter(|record| record.live && keep(record)).map(|record| record.hash.clone())
    }

    /// The imports and type relations of one indexed file.
    pub fn links_of(&self, path: &RepoPath) -> Option<FileLinks> {
        let state = self.read_state();
        let doc = *state.by_path.get(path)?;
        Some(state.links.get(doc).unwrap_or_default())
    }

    /// Files whose content may contain a match of `plan`: a superset, to be verified.
    /// `None` means the plan could not narrow: every text file is a candidate.
    pub fn text_candidates(&self, plan: &Plan) -> Vec<RepoPath> {
        let state = self.read_state();
        let candidates = if state.text_unusable { Candidates::All } else { state.text.candidates(plan) };
        let docs: Box<dyn Iterator<Item = u32>> = match candidates {
            Candidates::All => Box::new(0..state.files.len() as u32),
            Candidates::Docs(docs) => Box::new(docs.into_iter()),
        };
        let mut docs: Vec<u32> = docs
            .filter(|&doc| state.files.get(doc as usize).is_some_and(|record| record.live && record.text))
            .collect();
        docs.sort_unstable_by_key(|&doc| state.path_rank.get(doc as usize).copied().unwrap_or(u32::MAX));
        docs.into_iter().map(|doc| state.files[doc as usize].path.clone()).collect()
    }
}

impl State {
    fn from_parts(files: Vec<FileRecord>, symbols: SymbolTable, links: LinkTable, text: LayeredIndex) -> State {
        let mut state = State { files, symbols, text, links, ..State::default() };
        state.by_path.reserve(state.files.len());
        for (doc, record) in state.files.iter().enumerate() {
            if record.live {
                state.by_path.insert(record.path.clone(), doc as u32);
            }
        }
        // A build numbers docs in path order; only a snapshot grown by new files needs sorting.
        state.path_order = (0..state.files.len() as u32).collect();
        let sorted = state.files.windows(2).all(|pair| pair[0].path <= pair[1].path);
        if !sorted {
            let files = &state.files;
            state.path_order.sort_by(|&left, &right| files[left as usize].path.cmp(&files[right as usize].path));
        }
        state.rank_paths();
        state
    }

    fn rank_paths(&mut self) {
        self.path_rank = vec![0; self.files.len()];
        for (rank, &doc) in self.path_order.iter().enumerate() {
            self.path_rank[doc as usize] = rank as u32;
        }
    }

    fn hit(&self, doc: u32, symbol: SymbolRecord) -> Option<SymbolHit> {
        let record = self.files.get(doc as usize).filter(|record| record.live)?;
        Some(SymbolHit { path: record.path.clone(), file_hash: record.hash.clone(), symbol })
    }

    fn remove_doc(&mut self, doc: u32) {
        let Some(record) = self.files.get_mut(doc as usize) else { return };
        if !record.live {
            return;
        }
        record.live = false;
        let path = record.path.clone();
        self.by_path.remove(&path);
        self.symbols.remove_file(doc);
        self.links.remove(doc);
        self.text.remove(doc);
    }

    fn put_doc(
        &mut self,
        doc: u32,
        record: FileRecord,
        definitions: &[loupe_syntax::Definition],
        links: Option<Box<[u8]>>,
        trigrams: &[u32],
    ) {
        if doc as usize >= self.files.len() {
            let files = &self.files;
            let position = self.path_order.partition_point(|&other| files[other as usize].path < record.path);
            self.path_order.insert(position, doc);
            self.files.push(record.clone());
            self.rank_paths();
        }
        self.by_path.insert(record.path.clone(), doc);
        self.files[doc as usize] = record;
        self.symbols.set_file(doc, definitions);
        self.links.set_encoded(doc, links);
        self.text.upsert(doc, trigrams);
    }
}

#[cfg(test)]
mod tests {
    use loupe_core::config::DEFAULT_EXCLUDE;
    use loupe_vfs::Exclusions;

    use super::*;
    use crate::trigram::plan_literal;

    /// An index of `dir` (nothing excluded) kept in `index_dir`.
    fn open_index(dir: &std::path::Path, index_dir: &std::path::Path) -> Index {
        let root = Root::open(dir, Exclusions::new(&[], &[]).unwrap()).unwrap();
        Index::open(root, IndexOptions { index_dir: index_dir.to_path_buf(), max_file_bytes: 1 << 20, threads: 1 })
    }

    /// A full rebuild says where its time went, stage by stage, and the next refresh starts
    /// its per-file counters from zero.
    #[test]
    fn a_rebuild_reports_each_stage_and_a_refresh_its_own() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..4 {
            std::fs::write(dir.path().join(format!("f{n}.py")), format!("def f_{n}():\n    return {n}\n")).unwrap();
        }
        let index_dir = tempfile::tempdir().unwrap();
        let index = open_index(dir.path(), index_dir.path());
        let stats = index.refresh(&|_, _| {});
        let stages = stats.stages;
        assert!(stats.full_rebuild, "{stats:?}");
        for (stage, millis) in [
            ("read", stages.read_millis),
            ("trigrams", stages.trigrams_millis),
            ("parse", stages.parse_millis),
            ("apply", stages.apply_millis),
            ("text write", stages.text_write_millis),
            ("name index", stages.name_index_millis),
        ] {
            assert!(millis > 0.0, "{stage}: {stages:?}");
        }
        // Nothing changed: nothing read, nothing parsed, no rebuild's stages.
        let again = index.refresh(&|_, _| {});
        assert!(!again.full_rebuild, "{again:?}");
        assert_eq!(again.stages, BuildStages::default());
    }

    /// A refresh the caller stops (a cancelled `reindex`) never leaves the index worse than it
    /// was: a stopped rebuild keeps the previous tables whole, a stopped incremental refresh
    /// keeps the files it re-read, and the stop comes after the file at hand.
    #[test]
    fn a_stopped_refresh_keeps_the_previous_tables_or_what_it_applied() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..8 {
            std::fs::write(dir.path().join(format!("f{n}.py")), format!("def old_{n}():\n    pass\n")).unwrap();
        }
        let index_dir = tempfile::tempdir().unwrap();
        let index = open_index(dir.path(), index_dir.path());
        index.refresh(&|_, _| {});
        // Every file changes: a rebuild, stopped after its third file.
        for n in 0..8 {
            std::fs::write(dir.path().join(format!("f{n}.py")), format!("def new_{n}():\n    pass\n\n")).unwrap();
        }
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let report = |done: usize, _total: usize| seen.store(done, Ordering::Relaxed);
        let stats = index.refresh_until(&report, &|| seen.load(Ordering::Relaxed) >= 3);
        assert!(stats.full_rebuild && stats.stopped, "{stats:?}");
        assert_eq!(seen.load(Ordering::Relaxed), 3, "the rebuild stopped after the file at hand");
        assert_eq!(index.files().len(), 8, "the previous tables are kept whole");
        assert_eq!(index.symbols_named("old_7").len(), 1);
        assert!(index.symbols_named("new_0").is_empty());
        // A refresh that is not stopped brings everything up to date.
        assert!(!index.refresh(&|_, _| {}).stopped);
        assert_eq!(index.symbols_named("new_7").len(), 1);
        // One file of eight changes: an incremental refresh, stopped after that file.
        std::fs::write(dir.path().join("f2.py"), "def newer_2():\n    pass\n\n\n").unwrap();
        let stats = index.refresh_until(&|_, _| {}, &|| true);
        assert!(!stats.full_rebuild && stats.stopped && stats.reindexed == 1, "{stats:?}");
        assert_eq!(index.symbols_named("newer_2").len(), 1, "what it re-read is applied");
    }

    /// The writer's symbol table is read from `tables.bin` after every persist (a cold build, a
    /// refresh that changed files), never left in memory.
    #[test]
    fn a_persisted_symbol_table_is_read_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "def first():\n    pass\n").unwrap();
        for n in 0..8 {
            std::fs::write(dir.path().join(format!("f{n}.py")), format!("def other_{n}():\n    pass\n")).unwrap();
        }
        let index_dir = tempfile::tempdir().unwrap();
        let index = open_index(dir.path(), index_dir.path());
        index.refresh(&|_, _| {});
        assert!(index.read_state().symbols.is_on_disk());
        assert_eq!(index.symbols_named("first").len(), 1);
        // Two files of ten: an incremental refresh, compacted and persisted.
        std::fs::write(dir.path().join("b.py"), "def second():\n    pass\n").unwrap();
        std::fs::write(dir.path().join("a.py"), "def first_again():\n    pass\n").unwrap();
        assert!(!index.refresh(&|_, _| {}).full_rebuild);
        assert!(index.read_state().symbols.is_on_disk());
        assert_eq!(index.symbols_named("other_7").len(), 1);
        assert_eq!(index.symbols_named("second").len(), 1);
        assert_eq!(index.symbols_named("first_again").len(), 1);
        assert!(index.symbols_named("first").is_empty());
    }

    /// A writer killed mid-write leaves `.<file>.<random>.tmp` behind; the next writer removes
    /// them, and a reader (no lock) leaves the directory alone.
    #[test]
    fn the_writer_removes_temporaries_a_killed_writer_left() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let stale = index_dir.path().join(".tables.bin.Ab12Cd.tmp");
        std::fs::write(&stale, "half").unwrap();
        std::fs::write(index_dir.path().join("keep.tmp"), "not ours").unwrap();
        let open = || open_index(dir.path(), index_dir.path());
        let writer = open();
        assert!(writer.is_writer() && !stale.exists());
        std::fs::write(&stale, "half").unwrap();
        let reader = open();
        assert!(!reader.is_writer() && stale.exists(), "only the writer cleans up");
        assert!(index_dir.path().join("keep.tmp").exists());
    }

    /// Issue 14's soak: a server re-indexes a file on every edit and every change the watcher
    /// reports, each time leaving the file's old symbol rows behind. 400 rewrites of a file of
    /// 100 definitions (40,000 rows replaced) must leave the table within a constant factor of
    /// its 100 live rows, in a reader as in the writer, without a refresh or a persist.
    #[test]
    fn rss_re_indexing_a_file_over_and_over_keeps_the_symbol_table_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let text = |round: usize| -> String {
            (0..100).map(|f| format!("def function_{f}(value):\n    return value + {round}\n\n")).collect()
        };
        std::fs::write(dir.path().join("a.py"), text(0)).unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let open = || open_index(dir.path(), index_dir.path());
        let writer = open();
        writer.refresh(&|_, _| {});
        let reader = open();
        assert!(!reader.is_writer());
        reader.refresh(&|_, _| {});
        let path = RepoPath::normalize("a.py").unwrap();
        for round in 1..=400 {
            std::fs::write(dir.path().join("a.py"), text(round)).unwrap();
            reader.update_paths(std::slice::from_ref(&path));
            writer.update_paths(std::slice::from_ref(&path));
        }
        for index in [&reader, &writer] {
            assert_eq!(index.symbols_named("function_7").len(), 1, "the live rows still answer");
            let state = index.read_state();
            assert_eq!(state.symbols.len(), 100);
            let bytes = state.symbols.heap_bytes();
            // 100 live rows and at most `GARBAGE_FLOOR` dead ones, with their strings and names:
            // well under 600 KB; the 40,000 rows kept as garbage took over 2 MB.
            assert!(bytes < 600 << 10, "the symbol table holds {bytes} bytes after 400 rewrites");
        }
    }

    /// When the text index cannot be written and read back (an index directory that
    /// refuses the file), text searches scan every text file instead of finding nothing, and
    /// the next refresh rebuilds. The failure itself cannot be provoked portably (permissions
    /// do not bind root), so the state it leaves is set here.
    #[test]
    fn r15_an_unusable_text_index_scans_then_rebuilds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "needle here\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "nothing\n").unwrap();
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        let root = Root::open(dir.path(), Exclusions::new(&exclude, &[]).unwrap()).unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let index = Index::open(
            root,
            IndexOptions { index_dir: index_dir.path().to_path_buf(), max_file_bytes: 1 << 20, threads: 1 },
        );
        index.refresh(&|_, _| {});
        {
            let mut state = index.write_state();
            state.text = LayeredIndex::new(Some(TrigramIndex::empty()));
            state.text_unusable = true;
        }
        let found: Vec<String> =
            index.text_candidates(&plan_literal("needle")).iter().map(|p| p.as_str().to_owned()).collect();
        assert_eq!(found, ["a.txt", "b.txt"], "every text file is a candidate");
        assert!(index.refresh(&|_, _| {}).full_rebuild);
        let found: Vec<String> =
            index.text_candidates(&plan_literal("needle")).iter().map(|p| p.as_str().to_owned()).collect();
        assert_eq!(found, ["a.txt"]);
    }
}
