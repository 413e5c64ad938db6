//! Git baselines and unified diffs: the blobs of `HEAD`, of the index (`INDEX`) and of any
//! commit a revision names (`revision.rs`: branches, tags, ids, `A...B` merge bases), the set
//! of tracked files under a directory, and a line diff rendered as a unified diff.
//!
//! Git objects are read in-process with gix (never by running `git`), and only from the
//! object database and the index file. A caller hides the workspace's excluded paths with
//! `Repository::hiding`, so a secret once committed or staged is neither listed nor read. This
//! crate never reads the worktree (the engine hands
//! it worktree bytes read through `loupe-vfs`) and never writes anything. Diffs use
//! imara-diff's histogram algorithm over lines split the way `loupe-core` splits them (`\n`,
//! `\r\n` and a lone `\r`), so a CR-only file diffs line by line too.
//!
//! The repository is discovered from the root upward, and a link in its metadata (a `.git`
//! file, `commondir`, `alternates`) is followed only where git's own layouts put one
//! (`trust.rs`); a root below the work tree's top is handled
//! by a path prefix. Worktree bytes are compared with blobs as they are, without clean/smudge or
//! autocrlf filters. Status (modified, added, untracked, deleted, renamed) is the engine's, computed
//! from the tracked files and blob ids this crate gives, so gix runs without its `status` feature.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod diff;
mod revision;
mod trust;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

pub use diff::{UnifiedDiff, unified_diff, unified_diff_at, unified_diff_kept};
pub use gix::ObjectId;
pub use revision::{Resolved, RevisionError, Side};

/// Which baseline a worktree file is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    Head,
    Index,
    /// The files of a commit (`Repository::resolve` names one).
    Commit(gix::ObjectId),
}

/// Why git could not answer.
#[derive(Debug)]
pub enum GitError {
    /// No repository at or above the root.
    NotARepository { root: PathBuf },
    /// The repository exists but an object or the index could not be read.
    Read { message: String },
    /// A `.git` was found, but a link in its metadata leaves the repository (a planted `.git`
    /// file, `commondir` or `alternates`), so it is not followed (`trust.rs`).
    Untrusted { reason: String },
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::NotARepository { root } => write!(f, "`{}` is not inside a git repository", root.display()),
            GitError::Read { message } => write!(f, "cannot read the git repository: {message}"),
            GitError::Untrusted { reason } => write!(f, "the git repository is not read: {reason}"),
        }
    }
}

impl std::error::Error for GitError {}

fn read_error(error: impl std::fmt::Display) -> GitError {
    GitError::Read { message: error.to_string() }
}

/// A blob as read for a diff: its bytes, or only its size when it is over the caller's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
    Bytes(Vec<u8>),
    Large { size: u64 },
}

/// A tracked file of a baseline: its path relative to the workspace root and its blob id.
pub type TrackedFiles = BTreeMap<String, gix::ObjectId>;

/// What a baseline tracks under a directory (`Repository::tracked_under`).
#[derive(Debug, Default)]
pub struct Tracked {
    pub files: TrackedFiles,
    /// The files whose mode is executable (100755).
    pub executables: BTreeSet<String>,
    /// Tracked files the caller's `hiding` left out.
    pub hidden: usize,
}

/// Files that differ from `HEAD` (`changed`: staged, modified or deleted) and files git does
/// not track (`untracked`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dirty {
    pub changed: usize,
    pub untracked: usize,
}

/// Decides which root-relative paths a `Repository` never lists nor reads (the workspace's
/// exclusions, §3.1).
pub type Hidden = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// The git repository that holds a workspace root.
pub struct Repository {
    repo: gix::Repository,
    /// The workspace root relative to the repository's work tree, `/`-separated, empty at
    /// the top; every path this crate takes or returns is relative to the workspace root.
    prefix: String,
    /// Paths hidden from every listing and every blob lookup; see `Repository::hiding`.
    hidden: Option<Hidden>,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository").field("prefix", &self.prefix).field("hiding", &self.hidden.is_some()).finish()
    }
}

impl Repository {
    /// Finds the repository whose work tree holds `canonical_root`: the `.git` nearest it, at
    /// it or above, followed only where git's own layouts put a link (`trust.rs`).
    pub fn discover(canonical_root: &Path) -> Result<Repository, GitError> {
        let not_a_repository = || GitError::NotARepository { root: canonical_root.to_path_buf() };
        let trusted = match trust::find(canonical_root) {
            trust::Found::Nothing => return Err(not_a_repository()),
            trust::Found::Refused(reason) => return Err(GitError::Untrusted { reason }),
            trust::Found::Trusted(trusted) => trusted,
        };
        let repo = gix::open(&trusted.worktree).map_err(|_| not_a_repository())?;
        let same_git_dir = dunce::canonicalize(repo.git_dir()).is_ok_and(|git_dir| git_dir == trusted.git_dir);
        let workdir = repo.workdir().and_then(|workdir| dunce::canonicalize(workdir).ok());
        // gix opened what was checked, and its work tree is the one the `.git` sits in (a
        // `core.worktree` elsewhere is not this root's repository).
        if !same_git_dir || workdir.as_deref() != Some(trusted.worktree.as_path()) {
            return Err(not_a_repository());
        }
        let prefix = canonical_root.strip_prefix(&trusted.worktree).map_err(|_| not_a_repository())?;
        let prefix = prefix.to_string_lossy().replace('\\', "/");
        Ok(Repository { repo, prefix, hidden: None })
    }

    /// Hides the paths `hidden` names (root-relative, `/`-separated) from this repository:
    /// `tracked` and `dirty` never list them and `blob` answers `None` for them. A baseline
    /// holds whatever was ever committed or staged, secrets included, so the workspace's
    /// exclusions must apply to it as they apply to the worktree; every path of a baseline
    /// passes through `relative`, which is where this applies.
    pub fn hiding(mut self, hidden: Hidden) -> Repository {
        self.hidden = Some(hidden);
        self
    }

    fn is_hidden(&self, path: &str) -> bool {
        self.hidden.as_ref().is_some_and(|hidden| hidden(path))
    }

    /// The blob of `path` in the baseline (its size only when over `limit`), or `None` when
    /// the baseline does not have it.
    pub fn blob(&self, baseline: Baseline, path: &str, limit: u64) -> Result<Option<Blob>, GitError> {
        if self.is_hidden(path) {
            return Ok(None);
        }
        let full = self.full_path(path);
        let id = match baseline {
            Baseline::Head | Baseline::Commit(_) => {
                let Some(tree) = self.tree(baseline)? else { return Ok(None) };
                match tree.lookup_entry_by_path(&full).map_err(read_error)? {
                    Some(entry) if entry.mode().is_blob() => entry.object_id(),
                    _ => return Ok(None),
                }
            }
            Baseline::Index => {
                let index = self.repo.index_or_load_from_head_or_empty().map_err(read_error)?;
                match index.entry_by_path(full.as_bytes().as_bstr()) {
                    Some(entry) => entry.id,
                    None => return Ok(None),
                }
            }
        };
        self.object(id, limit).map(Some)
    }

    /// Every file the baseline tracks under `dir` (root-relative, `""` for the whole root).
    pub fn tracked(&self, baseline: Baseline, dir: &str) -> Result<TrackedFiles, GitError> {
        self.tracked_under(baseline, dir).map(|tracked| tracked.files)
    }

    /// `tracked`, with which of the files are executable and how many `hiding` left out (a
    /// preview says that many were not compared rather than letting them vanish): one walk of
    /// the tree or the index.
    pub fn tracked_under(&self, baseline: Baseline, dir: &str) -> Result<Tracked, GitError> {
        let mut tracked = Tracked::default();
        let mut add = |full: &str, id: gix::ObjectId, executable: bool| match self.under(full, dir) {
            Some(path) if self.is_hidden(&path) => tracked.hidden += 1,
            Some(path) => {
                if executable {
                    tracked.executables.insert(path.clone());
                }
                tracked.files.insert(path, id);
            }
            None => {}
        };
        match baseline {
            Baseline::Head | Baseline::Commit(_) => {
                let Some(tree) = self.tree(baseline)? else { return Ok(tracked) };
                for entry in tree.traverse().breadthfirst.files().map_err(read_error)? {
                    if entry.mode.is_blob() {
                        add(entry.filepath.to_str_lossy().as_ref(), entry.oid, entry.mode.is_executable());
                    }
                }
            }
            Baseline::Index => {
                let index = self.repo.index_or_load_from_head_or_empty().map_err(read_error)?;
                for entry in index.entries() {
                    let executable = entry.mode == gix::index::entry::Mode::FILE_EXECUTABLE;
                    add(&entry.path(&index).to_str_lossy(), entry.id, executable);
                }
            }
        }
        Ok(tracked)
    }

    /// The bytes of a blob, or only its size when that is over `limit`: the size comes from the
    /// object's header (a loose object's first bytes, a pack entry's header), so a committed
    /// 1.5 GB dataset costs a few bytes of reading, not 1.5 GB of memory.
    pub fn object(&self, id: gix::ObjectId, limit: u64) -> Result<Blob, GitError> {
        let size = self.repo.find_header(id).map_err(read_error)?.size();
        if size > limit {
            return Ok(Blob::Large { size });
        }
        let object = self.repo.find_object(id).map_err(read_error)?;
        Ok(Blob::Bytes(object.detach().data))
    }

    /// The blob id the git index records for `path` when the file on disk still has the size
    /// and modification time (ns since the epoch) the index saw: git's own shortcut for "the
    /// worktree file is the index's blob", which needs no read of the file.
    pub fn index_blob_if_unchanged(&self, path: &str, size: u64, mtime_ns: u64) -> Option<gix::ObjectId> {
        let index = self.repo.index_or_load_from_head_or_empty().ok()?;
        let entry = index.entry_by_path(self.full_path(path).as_bytes().as_bstr())?;
        // The index keeps a size's low 32 bits; a file over the read limit may be larger.
        same_stat(&entry.stat, size % (1 << 32), mtime_ns).then_some(entry.id)
    }

    /// How far the work tree is from `HEAD`, as `git status` counts it: tracked files that are
    /// staged, modified or deleted, and files git does not track. `worktree` lists the files
    /// on disk (root-relative path, size, mtime in ns since the epoch; ignored files already
    /// left out); a file whose size and mtime match its git-index entry is taken as unchanged
    /// (git's own shortcut), any other is read with `read` and hashed.
    pub fn dirty(
        &self,
        worktree: &[(String, u64, u64)],
        read: &dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> Result<Dirty, GitError> {
        let head = self.tracked(Baseline::Head, "")?;
        let index = self.repo.index_or_load_from_head_or_empty().map_err(read_error)?;
        let on_disk: BTreeMap<&str, (u64, u64)> =
            worktree.iter().map(|(path, size, mtime)| (path.as_str(), (*size, *mtime))).collect();
        let mut dirty = Dirty::default();
        let mut in_index = std::collections::BTreeSet::new();
        for entry in index.entries() {
            let full = entry.path(&index).to_str_lossy().into_owned();
            let Some(path) = self.relative(&full, "") else { continue };
            let staged = head.get(&path) != Some(&entry.id);
            let modified = match on_disk.get(path.as_str()) {
                // Not in the listing (a dotfile the walk skips, say): look at the file itself.
                None => read(&path).is_none_or(|bytes| blob_id(&bytes) != entry.id),
                Some(&(size, mtime)) => {
                    !same_stat(&entry.stat, size, mtime) && read(&path).is_none_or(|bytes| blob_id(&bytes) != entry.id)
                }
            };
            if staged || modified {
                dirty.changed += 1;
            }
            in_index.insert(path);
        }
        dirty.changed += head.keys().filter(|path| !in_index.contains(*path)).count();
        dirty.untracked = on_disk.keys().filter(|path| !in_index.contains(**path)).count();
        Ok(dirty)
    }

    /// The branch `HEAD` names, when it names one.
    pub fn branch(&self) -> Option<String> {
        let name = self.repo.head_name().ok()??;
        Some(name.shorten().to_str_lossy().into_owned())
    }

    /// The tree of `HEAD` (`None` while it is unborn) or of a commit.
    fn tree(&self, baseline: Baseline) -> Result<Option<gix::Tree<'_>>, GitError> {
        match baseline {
            Baseline::Commit(id) => {
                let commit = self.repo.find_commit(id).map_err(read_error)?;
                commit.tree().map(Some).map_err(read_error)
            }
            _ => self.head_tree(),
        }
    }

    fn head_tree(&self) -> Result<Option<gix::Tree<'_>>, GitError> {
        let head = self.repo.head().map_err(read_error)?;
        if head.is_unborn() {
            return Ok(None);
        }
        self.repo.head_tree().map(Some).map_err(read_error)
    }

    fn full_path(&self, path: &str) -> String {
        if self.prefix.is_empty() { path.to_owned() } else { format!("{}/{path}", self.prefix) }
    }

    /// A repository path mapped to the workspace root, if it lies under `dir` and is not
    /// hidden. Every path a listing returns comes through here.
    fn relative(&self, full: &str, dir: &str) -> Option<String> {
        self.under(full, dir).filter(|path| !self.is_hidden(path))
    }

    /// A repository path mapped to the workspace root, if it lies under `dir`, hidden or not.
    fn under(&self, full: &str, dir: &str) -> Option<String> {
        let path = if self.prefix.is_empty() { full } else { full.strip_prefix(&self.prefix)?.strip_prefix('/')? };
        let under = dir.is_empty() || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'));
        under.then(|| path.to_owned())
    }
}

/// A git-index entry's stat still describes a file of `size` bytes modified at `mtime_ns`
/// (ns since the epoch): git's shortcut for "unchanged since it was staged".
fn same_stat(stat: &gix::index::entry::Stat, size: u64, mtime_ns: u64) -> bool {
    u64::from(stat.size) == size
        && u64::from(stat.mtime.secs) == mtime_ns / 1_000_000_000
        && u64::from(stat.mtime.nsecs) == mtime_ns % 1_000_000_000
}

/// The git blob id of `bytes` (what `git hash-object` prints), to compare worktree bytes
/// with a baseline without reading the baseline's blob.
pub fn blob_id(bytes: &[u8]) -> gix::ObjectId {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .unwrap_or_else(|_| gix::ObjectId::null(gix::hash::Kind::Sha1))
}
