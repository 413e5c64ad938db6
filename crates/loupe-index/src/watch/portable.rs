//! The watcher where inotify is not at hand: notify, with its debouncer; its access events
//! (opens, reads, read-only closes) are filtered out.

use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use loupe_core::RepoPath;
use loupe_vfs::WalkOptions;
use notify::RecursiveMode;
use notify::event::{AccessKind, AccessMode, CreateKind, EventKind};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::Index;
use crate::error::IndexError;

/// How long events settle before they are applied.
const DEBOUNCE: Duration = Duration::from_millis(60);

type Watcher = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

/// A running watcher; dropping it stops watching.
pub struct IndexWatcher {
    _debouncer: Arc<Mutex<Watcher>>,
}

impl std::fmt::Debug for IndexWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IndexWatcher")
    }
}

/// Starts watching `index`'s root. Events are applied on a background thread.
pub fn watch(index: Arc<Index>) -> Result<IndexWatcher, IndexError> {
    let prepared = prepare(Arc::clone(&index))?;
    // What changed between the walk that built (or reconciled) the index and the watches
    // existing made no event: a reconcile now finds it (as in `inotify.rs`).
    index.refresh(&|_, _| {});
    prepared.start()
}

/// Watches in place whose events are not applied yet (see `inotify.rs`).
pub struct PreparedWatcher {
    index: Arc<Index>,
    debouncer: Arc<Mutex<Watcher>>,
    receiver: mpsc::Receiver<DebounceEventResult>,
}

impl std::fmt::Debug for PreparedWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PreparedWatcher")
    }
}

/// Adds the watches of `index`'s root; its events queue until `PreparedWatcher::start`.
pub fn prepare(index: Arc<Index>) -> Result<PreparedWatcher, IndexError> {
    let (sender, receiver) = mpsc::channel::<DebounceEventResult>();
    let debouncer = new_debouncer(DEBOUNCE, None, sender)
        .map_err(|error| IndexError::Watch { reason: format!("cannot start the file watcher: {error}") })?;
    let debouncer = Arc::new(Mutex::new(debouncer));
    watch_tree(&index, &debouncer);
    Ok(PreparedWatcher { index, debouncer, receiver })
}

impl PreparedWatcher {
    /// Applies events from now on, those queued since `prepare` first.
    pub fn start(self) -> Result<IndexWatcher, IndexError> {
        let PreparedWatcher { index, debouncer, receiver } = self;
        let thread_debouncer = Arc::clone(&debouncer);
        std::thread::Builder::new()
            .name("loupe-watch".into())
            .spawn(move || {
                for result in receiver {
                    apply(&index, &thread_debouncer, result);
                }
            })
            .map_err(|error| IndexError::Watch { reason: format!("cannot start the watcher thread: {error}") })?;
        Ok(IndexWatcher { _debouncer: debouncer })
    }
}

fn watch_tree(index: &Index, debouncer: &Mutex<Watcher>) {
    let options = WalkOptions { max_file_bytes: u64::MAX, threads: 2 };
    let (_, directories) = index.root().walk_tree(options);
    let Ok(mut debouncer) = debouncer.lock() else { return };
    for directory in directories {
        let absolute = index.root().canonical().join(directory.as_str());
        if let Err(error) = debouncer.watch(&absolute, RecursiveMode::NonRecursive) {
            tracing::debug!("not watching {}: {error}", absolute.display());
        }
    }
}

fn apply(index: &Index, debouncer: &Mutex<Watcher>, result: DebounceEventResult) {
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            tracing::warn!("file watcher errors ({}); rescanning: {:?}", errors.len(), errors.first());
            // Watches before the walk, as in `inotify.rs`.
            watch_tree(index, debouncer);
            index.refresh(&|_, _| {});
            return;
        }
    };
    let (paths, rescan) = hints(index.root().canonical(), events.iter().map(|event| &event.event));
    if rescan {
        watch_tree(index, debouncer);
        index.refresh(&|_, _| {});
        return;
    }
    if !paths.is_empty() {
        index.update_paths(&paths);
    }
}

/// What a batch of events asks for: the root-relative paths that may have changed (sorted,
/// once each), and whether the tree must be walked again (a new directory, a lost event).
fn hints<'a>(root: &Path, events: impl Iterator<Item = &'a notify::Event>) -> (Vec<RepoPath>, bool) {
    let mut paths: Vec<RepoPath> = Vec::new();
    let mut rescan = false;
    for event in events {
        if event.need_rescan() {
            rescan = true;
            continue;
        }
        if !may_change(&event.kind) {
            continue;
        }
        if matches!(event.kind, EventKind::Create(CreateKind::Folder)) {
            rescan = true;
        }
        for path in &event.paths {
            if path.is_dir() {
                rescan |= matches!(event.kind, EventKind::Create(_));
                continue;
            }
            if let Some(relative) = relative(root, path) {
                paths.push(relative);
            }
        }
    }
    paths.sort();
    paths.dedup();
    (paths, rescan)
}

/// Whether an event can mean that a file's bytes or its existence changed. Opening a file and
/// closing it after reading (which the index's own re-reads cause) cannot.
fn may_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

fn relative(root: &Path, path: &Path) -> Option<RepoPath> {
    let rest = path.strip_prefix(root).ok()?;
    RepoPath::normalize(&rest.to_string_lossy()).filter(|path| !path.is_root())
}

#[cfg(test)]
mod tests {
    use notify::event::{AccessKind, AccessMode, DataChange, ModifyKind, RemoveKind};
    use notify::{Event, EventKind};

    use super::*;

    fn event(kind: EventKind, path: &Path) -> Event {
        Event::new(kind).add_path(path.to_path_buf())
    }

    /// S1 (found by the soak): every open and read-only close in a watched directory was taken
    /// for a change, so each re-read reported itself again, forever, and servers sharing a root
    /// fed each other's watchers until new files went unseen for minutes.
    #[test]
    fn s1_opening_or_reading_a_file_is_not_a_change() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("a.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let reads = [
            event(EventKind::Access(AccessKind::Open(AccessMode::Any)), &file),
            event(EventKind::Access(AccessKind::Close(AccessMode::Read)), &file),
            event(EventKind::Access(AccessKind::Read), &file),
        ];
        assert_eq!(hints(root.path(), reads.iter()), (Vec::new(), false));
        let changes = [
            event(EventKind::Access(AccessKind::Close(AccessMode::Write)), &file),
            event(EventKind::Modify(ModifyKind::Data(DataChange::Any)), &file),
            event(EventKind::Remove(RemoveKind::File), &root.path().join("gone.py")),
        ];
        let (paths, rescan) = hints(root.path(), reads.iter().chain(changes.iter()));
        assert_eq!(paths, [RepoPath::normalize("a.py").unwrap(), RepoPath::normalize("gone.py").unwrap()]);
        assert!(!rescan);
    }
}
