//! `IndexError`: why the index's API could not do what was asked, one enum for the crate. A
//! damaged persisted file is not an error here: it is rebuilt, and its reason only logged.

use std::path::PathBuf;

#[derive(Debug)]
pub enum IndexError {
    /// The index directory cannot be created or made private, or is not a directory of the
    /// user's own (a symbolic link, another user's).
    Directory { dir: PathBuf, reason: String },
    /// The file watcher could not start: the index will not follow changes on disk.
    Watch { reason: String },
    /// A regular expression that does not parse (the parser's message).
    Pattern { reason: String },
}

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexError::Directory { dir, reason } => write!(f, "{reason} (`{}`)", dir.display()),
            IndexError::Watch { reason } | IndexError::Pattern { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for IndexError {}
