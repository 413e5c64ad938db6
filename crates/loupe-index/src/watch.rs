//! Keeping the index current while a server runs: file-system events as hints.
//!
//! Every directory the walk entered is watched non-recursively, so ignored trees
//! (`node_modules/`, `target/`, `.git/`) never get watches. Events are debounced, mapped to
//! root-relative paths and handed to `Index::update_paths`, which re-reads each path and
//! decides for itself what changed. A queue overflow triggers a full `refresh`; a new (or
//! moved-in) directory gets its own watch and a refresh to pick up its files. Starting the
//! watcher is one more refresh once the watches exist: what changed since the build's walk
//! made no event (`a_file_written_before_the_watcher_started_is_found`). A server instead
//! prepares the watcher (its watches added, events queued) before its first build and starts
//! it after, so that build is that refresh (`prepare`, `PreparedWatcher::start`).
//!
//! Only events that can mean a change count. On Linux the watcher is inotify itself, asked for
//! those events only: notify 8 also subscribes to every open and read-only close, so each
//! file any process read in the tree (the server's own searches first: 2,000 reads for one
//! search on Linux) went through notify's thread, its debouncer's path map and ours, a sixth
//! of the CPU of a search loop, and re-reading a file for such an event reported it again (S1,
//! found by the soak). Elsewhere notify serves, its access events filtered out.

#[cfg(target_os = "linux")]
mod inotify;
#[cfg(target_os = "linux")]
pub use inotify::{IndexWatcher, PreparedWatcher, prepare, watch};

#[cfg(not(target_os = "linux"))]
mod portable;
#[cfg(not(target_os = "linux"))]
pub use portable::{IndexWatcher, PreparedWatcher, prepare, watch};
