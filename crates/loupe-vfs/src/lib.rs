//! The only code that touches the user's repository.
//!
//! Owns the workspace root, the mapping from a caller's path string to a file inside it
//! (containment on the canonical path, after resolving symlinks), the exclusion and ignore
//! rules, and reading bytes. It also owns the one atomic, journaled write path (`apply.rs`,
//! `journal.rs`). Nothing outside the root is ever read, listed, hashed or written through this
//! crate, and no other crate opens repository files itself. Every open, read, write, rename,
//! unlink and directory creation happens beneath the root by directory handle (`beneath.rs`),
//! and only regular files are read or written.

mod apply;
mod beneath;
mod exclude;
#[cfg(test)]
mod fuzz;
pub mod journal;
mod own_files;
mod root;
mod walk;

/// Fixtures for tests, here and in the crates above: symbolic links on every platform, and the
/// fuzz harnesses' address-space cap.
#[cfg(any(test, feature = "test-hooks"))]
pub mod testing {
    use std::path::Path;

    /// Caps the test process's address space once (never raising it), so that an allocation
    /// sized by a damaged length fails and aborts the run, naming its size, instead of being
    /// granted by overcommit and never touched. 6 GiB is far above what a test binary needs.
    /// Windows has no such limit: a damaged length there is bounded by the readers' checks only.
    pub fn cap_address_space() {
        #[cfg(unix)]
        {
            static CAPPED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
            CAPPED.get_or_init(|| {
                use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
                const CAP: u64 = 6 << 30;
                let current = getrlimit(Resource::As);
                if current.current.is_none_or(|limit| limit > CAP) {
                    let _ = setrlimit(Resource::As, Rlimit { current: Some(CAP), maximum: current.maximum });
                }
            });
        }
    }

    /// A symbolic link at `link` to `target` (relative to the link's directory, `/`-separated,
    /// or absolute). On Windows a directory link when the target is a directory, as Windows
    /// needs to know.
    pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
        let (target, link) = (target.as_ref(), link.as_ref());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(target, link)
        }
        #[cfg(windows)]
        {
            let target = std::path::PathBuf::from(target.to_string_lossy().replace('/', "\\"));
            let seen_from = link.parent().map_or_else(|| target.clone(), |dir| dir.join(&target));
            if seen_from.is_dir() {
                std::os::windows::fs::symlink_dir(&target, link)?;
            } else {
                std::os::windows::fs::symlink_file(&target, link)?;
            }
            // wine before 9 answers success and makes nothing (scripts/test-windows.sh).
            match std::fs::symlink_metadata(link) {
                Ok(_) => Ok(()),
                Err(_) => {
                    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this system made no symbolic link"))
                }
            }
        }
    }
}

#[cfg(feature = "test-hooks")]
pub use beneath::RacePoint;
pub use beneath::{open_without_links, read_exact_at};
pub use exclude::Exclusions;
pub use journal::{Applied, ApplyError, FileChange, Journal, Plan, Stale};
pub use own_files::{OwnAccess, clear_way, link_count, open_own};
pub use root::{FileBytes, Resolved, Root};
pub use walk::{Stamp, Walk, WalkEntry, WalkOptions};

use std::path::{Path, PathBuf};

use loupe_core::RepoPath;

/// A path as the user's tools spell it: on Windows without the `\\?\` prefix that
/// canonicalising and `GetFinalPathNameByHandleW` add (so a root and the paths below it compare
/// and join alike, `/` separators included); unchanged elsewhere.
pub fn plain_path(path: &Path) -> PathBuf {
    dunce::simplified(path).to_path_buf()
}

/// A relative file-system path as a `RepoPath` spells it: its components joined by `/` on every
/// platform (a name that is not UTF-8 is shown lossily, as before).
pub(crate) fn slash_joined(relative: &Path) -> String {
    let parts: Vec<_> = relative.iter().map(|part| part.to_string_lossy()).collect();
    parts.join("/")
}

/// The canonical form of `path` (symlinks resolved), as [`plain_path`] spells it.
pub fn canonical_path(path: &Path) -> std::io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// Why a path could not be used. The engine maps each to an error code.
#[derive(Debug)]
pub enum VfsError {
    /// The path leaves the root (`..`, an absolute path elsewhere, a symlink pointing out).
    OutsideRoot {
        requested: String,
    },
    /// The path matches an exclusion pattern (`.git/`, secrets, configured `exclude`).
    Excluded {
        path: RepoPath,
        pattern: String,
    },
    NotFound {
        path: RepoPath,
    },
    /// A directory where a file was needed.
    IsDirectory {
        path: RepoPath,
    },
    TooLarge {
        path: RepoPath,
        size: u64,
        limit: u64,
    },
    /// An IO error. For a file in the repository `path` is root-relative, so messages never
    /// carry the machine's absolute paths.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A FIFO, socket or device where a regular file was needed: never opened blocking, never
    /// read or written.
    NotRegular {
        path: RepoPath,
        /// `FIFO`, `socket`, `character device`, `block device`.
        kind: &'static str,
    },
    /// An exclusion or `allow` pattern that does not compile (from the configuration).
    Pattern {
        pattern: String,
        reason: String,
    },
    /// A path string that can name no file (a NUL byte).
    InvalidPath {
        reason: &'static str,
    },
    /// loupe's own configuration (`loupe.toml`, `.loupe/config.toml` at the root): readable,
    /// never written through `edit`.
    ConfigFile {
        path: RepoPath,
    },
    /// A write's parent directory does not exist (and was not to be created).
    MissingDirectory {
        path: RepoPath,
    },
    /// A write to a symlink: refused, whatever it points to.
    Symlink {
        path: RepoPath,
        /// Where it points, root-relative, when that is inside the root.
        target: Option<String>,
    },
    /// A path component that should be a directory is a file.
    NotADirectory {
        path: String,
    },
}

impl std::fmt::Display for VfsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VfsError::OutsideRoot { requested } => write!(f, "path `{requested}` is outside the workspace root"),
            VfsError::Pattern { pattern, reason } => write!(f, "invalid pattern `{pattern}`: {reason}"),
            VfsError::Excluded { path, pattern } => write!(f, "path `{path}` is excluded by pattern `{pattern}`"),
            VfsError::NotFound { path } => write!(f, "file `{path}` does not exist"),
            VfsError::IsDirectory { path } => write!(f, "`{path}` is a directory, not a file"),
            VfsError::TooLarge { path, size, limit } => {
                write!(f, "file `{path}` is {size} bytes, over the {limit}-byte limit")
            }
            VfsError::Io { path, source } => write!(f, "cannot access `{}`: {source}", path.display()),
            VfsError::NotRegular { path, kind } => {
                write!(f, "`{path}` is a {kind}, not a regular file; loupe reads and writes regular files only")
            }
            VfsError::InvalidPath { reason } => write!(f, "invalid path: {reason}"),
            VfsError::ConfigFile { path } => {
                write!(f, "`{path}` is loupe's own configuration; loupe never writes it through edit")
            }
            VfsError::MissingDirectory { path } => write!(f, "directory `{path}` does not exist"),
            VfsError::Symlink { path, .. } => write!(f, "`{path}` is a symlink; loupe never writes through one"),
            VfsError::NotADirectory { path } => write!(f, "`{path}` is a file, not a directory"),
        }
    }
}

impl std::error::Error for VfsError {}
