//! Cross-file state: the file table, the trigram text index and the symbol table, persisted
//! under the index directory and kept current incrementally.
//!
//! The index only ever narrows: it proposes candidate files and symbol locations, and every
//! answer is verified against the current content on disk before it is shown. It never writes
//! into the repository; it reads it only through `loupe-vfs`.

mod index;
mod links;
mod records;
mod store;
mod symbols;
pub mod trigram;
mod watch;

pub use index::{Index, IndexOptions, IndexState, IndexStatus, RefreshStats, SymbolHit};
pub use links::FileLinks;
pub use loupe_syntax::{Lang, Span, SymbolKind};
pub use records::{FileRecord, SymbolRecord};
pub use watch::{IndexWatcher, watch};
