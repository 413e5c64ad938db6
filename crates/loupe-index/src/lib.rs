//! Cross-file state: the file table, the trigram text index and the symbol table, persisted
//! under the index directory and kept current incrementally.
//!
//! The index only ever narrows: it proposes candidate files and symbol locations, and every
//! answer is verified against the current content on disk before it is shown. It never writes
//! into the repository; it reads it only through `loupe-vfs`.
//!
//! Where things are: `index.rs` (`Index::refresh`: walk, reconcile by size and mtime then content
//! hash, parse changed files on every core, rebuild whole on a cold start or a large change;
//! `Index::update_paths` for edits and watcher hints), `records.rs` (the file table; a doc id is a
//! position in it), `symbols.rs` (the symbol table and its name index), `links.rs` (each file's
//! imports and type relations, postcard-encoded on the worker thread; a `generation` number moves
//! on every change so derived graphs know when to rebuild), `trigram/` (the text index),
//! `store.rs` (persistence and the writer lock), `ondisk.rs` (positioned reads of the persisted
//! files, and the check that they are still the files opened) and `watch.rs` (the watcher:
//! `watch/inotify.rs` on Linux, `watch/portable.rs` with notify elsewhere).
//!
//! The index directory (by default `$XDG_CACHE_HOME/loupe/<workspace_hash>/`) holds `tables.bin`
//! (the file table in postcard, then the symbol table's flat arrays, every offset checked on load),
//! `text.bin` (trigram postings), and `writer.lock`: one process persists, the others keep their
//! index in memory. Loaded or persisted, the two files are held open and their bulk stays on
//! disk: the symbol rows and strings and the posting lists are read with `pread` when a query
//! needs them (`ondisk.rs` says why not a memory mapping); the file table, the links, the name
//! index and the trigram table of contents stay in memory. A server loads the snapshot on a
//! background thread at once (a query that arrives meanwhile waits for it, which is sooner than
//! a scan), adds the watcher's watches, reconciles the index with the disk, then starts reading
//! the watcher's events (`prepare_watch`). A build interrupted by shutdown keeps what it built.

pub mod cache;
mod error;
#[cfg(test)]
mod fuzz;
mod index;
mod links;
mod ondisk;
mod records;
mod store;
mod symbols;
pub mod trigram;
mod watch;

pub use error::IndexError;
pub use index::{BuildStages, Index, IndexOptions, IndexState, IndexStatus, RefreshStats, SymbolHit};
pub use links::FileLinks;
pub use loupe_syntax::{Lang, Span, SymbolKind};
pub use records::{FileRecord, SymbolRecord};
pub use store::make_private_dir;
pub use watch::{IndexWatcher, PreparedWatcher, prepare as prepare_watch, watch};
