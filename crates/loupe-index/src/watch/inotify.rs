//! The Linux watcher: inotify, asked only for the events that can mean a change (a write, a
//! close after writing, metadata, a name created, deleted or moved), never for opens, reads or
//! read-only closes. One thread reads the events and maps each to a hint (a root-relative path,
//! or "walk again"); another collects hints until they settle (`DEBOUNCE` of quiet, at most
//! `MAX_BATCH_WAIT`) and applies them to the index.
//!
//! Stopping: dropping the `IndexWatcher` raises the stop flag and removes the watches; each
//! removal queues an `IN_IGNORED` event, which wakes the reader, which then ends, and with it
//! the applier (its channel closes). The inotify descriptor closes with the last of them.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use loupe_core::RepoPath;
use loupe_vfs::WalkOptions;
use rustix::fs::inotify::{self as sys, CreateFlags, ReadFlags, WatchFlags};

use crate::Index;
use crate::error::IndexError;

/// How long events settle before they are applied.
const DEBOUNCE: Duration = Duration::from_millis(60);
/// The longest a batch waits for events to settle (a tree written to without pause).
const MAX_BATCH_WAIT: Duration = Duration::from_millis(1000);
/// The events that can mean a file's bytes, or its existence, changed.
const WATCHED: WatchFlags = WatchFlags::MODIFY
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::CREATE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::ONLYDIR);

/// A running watcher; dropping it stops watching.
pub struct IndexWatcher {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for IndexWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IndexWatcher")
    }
}

impl IndexWatcher {
    /// Paths handed to the index so far (each batch's distinct paths), for tests.
    #[cfg(feature = "test-hooks")]
    pub fn paths_applied(&self) -> u64 {
        self.shared.applied.load(Ordering::Relaxed)
    }
}

impl Drop for IndexWatcher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        let watches: Vec<i32> = self.shared.directories().keys().copied().collect();
        for watch in watches {
            let _ = sys::remove_watch(&self.shared.fd, watch);
        }
    }
}

/// What the reader, the applier and the handle share.
struct Shared {
    fd: OwnedFd,
    /// Each watch's directory, root-relative.
    directories: Mutex<HashMap<i32, RepoPath>>,
    stop: AtomicBool,
    applied: AtomicU64,
}

impl Shared {
    fn directories(&self) -> std::sync::MutexGuard<'_, HashMap<i32, RepoPath>> {
        self.directories.lock().unwrap_or_else(|poison| poison.into_inner())
    }
}

/// What one event asks for.
#[derive(Debug, PartialEq, Eq)]
enum Hint {
    /// This path may have changed (or appeared, or gone).
    Path(RepoPath),
    /// The tree must be walked again: a directory appeared or moved, or events were lost.
    Rescan,
}

/// Starts watching `index`'s root. Events are applied on a background thread.
pub fn watch(index: Arc<Index>) -> Result<IndexWatcher, IndexError> {
    let prepared = prepare(Arc::clone(&index))?;
    // What changed between the walk that built (or reconciled) the index and the watches
    // existing made no event: a reconcile now finds it. Without it a server whose build
    // walked the tree seconds before its watcher started never saw the files written
    // meanwhile (13–16 of 60 written a second apart, on the fourth server of a shared index).
    index.refresh(&|_, _| {});
    prepared.start()
}

/// Watches in place whose events are not read yet. Prepared before a refresh walks the tree
/// and started after it, every change is in that walk or an event: what a server does around
/// its first build, so that nothing written during the build waits for the watcher's own
/// reconcile (`Engine::start_background_indexing`).
pub struct PreparedWatcher {
    index: Arc<Index>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PreparedWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PreparedWatcher")
    }
}

/// Adds the watches of `index`'s root; its events queue until `PreparedWatcher::start`.
pub fn prepare(index: Arc<Index>) -> Result<PreparedWatcher, IndexError> {
    let fd = sys::init(CreateFlags::CLOEXEC)
        .map_err(|error| IndexError::Watch { reason: format!("cannot start the file watcher: {error}") })?;
    let shared = Arc::new(Shared {
        fd,
        directories: Mutex::new(HashMap::new()),
        stop: AtomicBool::new(false),
        applied: AtomicU64::new(0),
    });
    watch_tree(&index, &shared);
    Ok(PreparedWatcher { index, shared })
}

impl PreparedWatcher {
    /// Reads and applies events from now on, those queued since `prepare` first.
    pub fn start(self) -> Result<IndexWatcher, IndexError> {
        let PreparedWatcher { index, shared } = self;
        let (sender, receiver) = mpsc::channel::<Hint>();
        let reader = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("loupe-inotify".into())
            .spawn(move || read_events(&reader, &sender))
            .map_err(|error| IndexError::Watch { reason: format!("cannot start the watcher thread: {error}") })?;
        let applier = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("loupe-watch".into())
            .spawn(move || apply_batches(&index, &applier, &receiver))
            .map_err(|error| IndexError::Watch { reason: format!("cannot start the watcher thread: {error}") })?;
        Ok(IndexWatcher { shared })
    }
}

/// Watches every directory the walk enters (again after a rescan: a watch added twice is the
/// same watch).
fn watch_tree(index: &Index, shared: &Shared) {
    let options = WalkOptions { max_file_bytes: u64::MAX, threads: 2 };
    let (_, directories) = index.root().walk_tree(options);
    let mut known = shared.directories();
    for directory in directories {
        let absolute = index.root().canonical().join(directory.as_str());
        match sys::add_watch(&shared.fd, &absolute, WATCHED) {
            Ok(watch) => {
                known.insert(watch, directory);
            }
            Err(error) => tracing::debug!("not watching {}: {error}", absolute.display()),
        }
    }
}

/// The reader thread: blocking reads of the events, each mapped to hints, until stopped.
fn read_events(shared: &Shared, sender: &mpsc::Sender<Hint>) {
    let mut buffer = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut reader = sys::Reader::new(&shared.fd, &mut buffer);
    loop {
        let event = match reader.next() {
            Ok(event) => event,
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => {
                if !shared.stop.load(Ordering::Acquire) {
                    tracing::warn!("the file watcher stopped: {error}");
                }
                return;
            }
        };
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let flags = event.events();
        if flags.contains(ReadFlags::IGNORED) {
            shared.directories().remove(&event.wd());
            continue;
        }
        let directory = shared.directories().get(&event.wd()).cloned();
        let name = event.file_name().and_then(|name| name.to_str().ok());
        if let Some(hint) = hint(flags, directory.as_ref(), name)
            && sender.send(hint).is_err()
        {
            return;
        }
    }
}

/// What an event with `flags` on `name` in the watched `directory` asks for.
fn hint(flags: ReadFlags, directory: Option<&RepoPath>, name: Option<&str>) -> Option<Hint> {
    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
        return Some(Hint::Rescan);
    }
    let (directory, name) = (directory?, name?);
    if flags.contains(ReadFlags::ISDIR) {
        // A directory that appears (made, or moved in) needs watches and its files read; one
        // moved out takes its files with it without an event for each.
        let moved_or_made = ReadFlags::CREATE | ReadFlags::MOVED_TO | ReadFlags::MOVED_FROM;
        return flags.intersects(moved_or_made).then_some(Hint::Rescan);
    }
    let path = if directory.is_root() { name.to_owned() } else { format!("{}/{name}", directory.as_str()) };
    RepoPath::normalize(&path).filter(|path| !path.is_root()).map(Hint::Path)
}

/// The applier thread: collects hints until they settle, then applies them, until the reader
/// is gone.
fn apply_batches(index: &Index, shared: &Shared, receiver: &mpsc::Receiver<Hint>) {
    while let Ok(first) = receiver.recv() {
        let started = Instant::now();
        let mut batch = vec![first];
        while started.elapsed() < MAX_BATCH_WAIT {
            match receiver.recv_timeout(DEBOUNCE) {
                Ok(hint) => batch.push(hint),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        if batch.contains(&Hint::Rescan) {
            // Watches first: a file written into a new directory after its watch exists makes
            // an event, one written before it is found by the walk. The other order lost the
            // files written between the walk and the watch (a flaky
            // `s1_reads_in_a_watched_tree_are_not_events`, 2026-11-26).
            watch_tree(index, shared);
            index.refresh(&|_, _| {});
            continue;
        }
        let mut paths: Vec<RepoPath> = batch
            .into_iter()
            .filter_map(|hint| match hint {
                Hint::Path(path) => Some(path),
                Hint::Rescan => None,
            })
            .collect();
        paths.sort();
        paths.dedup();
        shared.applied.fetch_add(paths.len() as u64, Ordering::Relaxed);
        index.update_paths(&paths);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> RepoPath {
        RepoPath::normalize(text).unwrap()
    }

    #[test]
    fn events_map_to_paths_and_rescans() {
        let root = RepoPath::root();
        let src = path("src");
        assert_eq!(hint(ReadFlags::CLOSE_WRITE, Some(&src), Some("a.rs")), Some(Hint::Path(path("src/a.rs"))));
        assert_eq!(hint(ReadFlags::DELETE, Some(&root), Some("b.rs")), Some(Hint::Path(path("b.rs"))));
        assert_eq!(hint(ReadFlags::CREATE | ReadFlags::ISDIR, Some(&src), Some("new")), Some(Hint::Rescan));
        assert_eq!(hint(ReadFlags::MOVED_FROM | ReadFlags::ISDIR, Some(&src), Some("old")), Some(Hint::Rescan));
        assert_eq!(hint(ReadFlags::ATTRIB | ReadFlags::ISDIR, Some(&src), Some("dir")), None);
        assert_eq!(hint(ReadFlags::QUEUE_OVERFLOW, None, None), Some(Hint::Rescan));
        assert_eq!(hint(ReadFlags::MODIFY, None, Some("a.rs")), None, "a watch already gone");
    }
}
