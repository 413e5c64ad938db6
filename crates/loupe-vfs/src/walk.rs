//! Walking the workspace for the index: every regular file under the root that the ignore
//! rules (`.gitignore` and git's exclude file inside a git repository; `.ignore` and
//! `.loupeignore` everywhere) and the exclusions let through, with its size and mtime.
//!
//! Symlinks are not followed and not reported, so a walk never leaves the root. Excluded
//! directories (`.git/` and the configured patterns) are pruned before they are entered.

use std::fs;
use std::path::Path;
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use ignore::{WalkBuilder, WalkState};
use loupe_core::RepoPath;

use crate::Root;

/// One file found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    pub path: RepoPath,
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: u64,
}

/// What a walk skips besides ignored and excluded paths.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions {
    /// Files larger than this are left out.
    pub max_file_bytes: u64,
    /// Walker threads.
    pub threads: usize,
}

/// Everything one walk found, each list sorted by path.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// The files within `max_file_bytes`.
    pub files: Vec<WalkEntry>,
    /// The files over `max_file_bytes`: not indexed, but still there (a search scans them or
    /// says it did not).
    pub oversized: Vec<WalkEntry>,
    /// Every directory the walk entered, the root included.
    pub directories: Vec<RepoPath>,
    /// Entries the walk could not read (a path too long for the system, a directory it may
    /// not enter, a loop), or whose name no `RepoPath` can hold (a control character): what
    /// a search cannot see, so it can say so rather than miss it silently.
    pub unwalkable: usize,
}

impl Root {
    /// All indexable files, sorted by path. Unreadable entries are skipped, not fatal.
    pub fn walk(&self, options: WalkOptions) -> Vec<WalkEntry> {
        self.walk_all(options).files
    }

    /// The files of `walk`, and every directory the walk entered (the root included), both
    /// sorted: what a watcher should watch, without descending into ignored trees.
    pub fn walk_tree(&self, options: WalkOptions) -> (Vec<WalkEntry>, Vec<RepoPath>) {
        let walk = self.walk_all(options);
        (walk.files, walk.directories)
    }

    /// One walk: the files within the size limit, those over it, and the directories entered.
    pub fn walk_all(&self, options: WalkOptions) -> Walk {
        let found = Mutex::new(Vec::new());
        let oversized = Mutex::new(Vec::new());
        let directories = Mutex::new(Vec::new());
        let unwalkable = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let root = self.canonical().to_path_buf();
        let exclusions = self.exclusions().clone();
        let filter_root = root.clone();
        let unnamable = std::sync::Arc::clone(&unwalkable);
        WalkBuilder::new(&root)
            .hidden(false)
            .parents(false)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .ignore(true)
            // `.gitignore` counts only inside a git repository, as for git and ripgrep: a
            // source tarball's stray `.gitignore` (Debian's kernel has `/*`) must not hide it.
            .require_git(true)
            .follow_links(false)
            .add_custom_ignore_filename(".loupeignore")
            .threads(options.threads.max(1))
            .filter_entry(move |entry| match relative(&filter_root, entry.path()) {
                Some(path) => path.is_root() || exclusions.matching_pattern(&path).is_none(),
                // A name no `RepoPath` can hold (a control character, not UTF-8): skipped, and
                // counted, so an answer can say what it did not look at.
                None => {
                    unnamable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    false
                }
            })
            .build_parallel()
            .run(|| {
                let found = &found;
                let oversized = &oversized;
                let directories = &directories;
                let unwalkable = &unwalkable;
                let root = &root;
                let skip = move || {
                    unwalkable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    WalkState::Continue
                };
                Box::new(move |entry| {
                    let Ok(entry) = entry else { return skip() };
                    if entry.file_type().is_some_and(|kind| kind.is_dir()) {
                        if let (Some(path), Ok(mut directories)) = (relative(root, entry.path()), directories.lock()) {
                            directories.push(path);
                        }
                        return WalkState::Continue;
                    }
                    if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                        return WalkState::Continue;
                    }
                    let (Some(path), Ok(metadata)) = (relative(root, entry.path()), entry.metadata()) else {
                        return skip();
                    };
                    let (size, mtime_ns) = stamp(&metadata);
                    let list = if size > options.max_file_bytes { oversized } else { found };
                    if let Ok(mut list) = list.lock() {
                        list.push(WalkEntry { path, size, mtime_ns });
                    }
                    WalkState::Continue
                })
            });
        let mut files = found.into_inner().unwrap_or_default();
        files.sort_by(|left, right| left.path.cmp(&right.path));
        let mut oversized = oversized.into_inner().unwrap_or_default();
        oversized.sort_by(|left, right| left.path.cmp(&right.path));
        let mut directories = directories.into_inner().unwrap_or_default();
        directories.sort();
        let unwalkable = unwalkable.load(std::sync::atomic::Ordering::Relaxed);
        Walk { files, oversized, directories, unwalkable }
    }

    /// Reads a file the walk reported, by its root-relative path, refusing anything that
    /// resolves outside the root or onto an excluded path.
    pub fn read_indexed(&self, path: &RepoPath, max_bytes: u64) -> Result<Vec<u8>, crate::VfsError> {
        let mut bytes = Vec::new();
        self.read_indexed_stamped(path, max_bytes, &mut bytes)?;
        Ok(bytes)
    }

    /// `read_indexed` into `bytes` (replacing what it held: a caller reading many files reuses
    /// one buffer), with the file's size and modification time (ns since the epoch) as the
    /// descriptor read showed them (`stamp_indexed`'s figures), when known.
    pub fn read_indexed_stamped(
        &self,
        path: &RepoPath,
        max_bytes: u64,
        bytes: &mut Vec<u8>,
    ) -> Result<Option<Stamp>, crate::VfsError> {
        if let Some(metadata) = self.read_beneath(path, max_bytes, bytes) {
            return Ok(Some(stamp(&metadata)));
        }
        let resolved = self.resolve(path.as_str())?;
        *bytes = self.read(&resolved, max_bytes)?.bytes;
        Ok(None)
    }

    /// `range` of a file `read_indexed` would read, into `bytes` (replacing what it held), with
    /// the file's size and modification time as the descriptor showed them before the read: a
    /// search that knows which part of a large file can hold a match reads that part only.
    /// `None` when the file cannot be opened so or holds less than `range` (it changed), and
    /// where there is no open beneath the root (the caller reads the whole file instead).
    pub fn read_indexed_range(
        &self,
        path: &RepoPath,
        range: std::ops::Range<u64>,
        bytes: &mut Vec<u8>,
    ) -> Option<Stamp> {
        let len = usize::try_from(range.end.checked_sub(range.start)?).ok()?;
        let (file, metadata) = self.open_regular_beneath(path)?;
        if range.end > metadata.len() {
            return None;
        }
        bytes.clear();
        bytes.resize(len, 0);
        crate::beneath::read_exact_at(&file, bytes, range.start).ok()?;
        Some(stamp(&metadata))
    }

    /// The size and modification time (ns since the epoch) of a file `read_indexed` would
    /// read, without reading it: what tells a cached summary of its bytes still holds. `None`
    /// when `read_indexed` would refuse it.
    pub fn stamp_indexed(&self, path: &RepoPath) -> Option<Stamp> {
        let metadata = match self.open_regular_beneath(path) {
            Some((_, metadata)) => metadata,
            None => self.resolved_metadata(path)?,
        };
        Some(stamp(&metadata))
    }

    fn resolved_metadata(&self, path: &RepoPath) -> Option<fs::Metadata> {
        let real = self.resolve(path.as_str()).ok()?.real?;
        fs::metadata(real).ok().filter(fs::Metadata::is_file)
    }
}

/// A file's size and modification time in ns since the epoch (0 when unknown): what tells a
/// summary of its bytes, or the index's record of it, still holds.
pub type Stamp = (u64, u64);

fn stamp(metadata: &fs::Metadata) -> Stamp {
    let mtime_ns = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos() as u64);
    (metadata.len(), mtime_ns)
}

fn relative(root: &Path, path: &Path) -> Option<RepoPath> {
    let rest = path.strip_prefix(root).ok()?;
    RepoPath::normalize(&crate::slash_joined(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exclusions;
    use loupe_core::config::DEFAULT_EXCLUDE;
    use std::fs;

    /// `read_indexed` takes one `openat2` for a plain path and the resolving path otherwise:
    /// either way a symlink out of the root, an excluded file or a directory is refused, and a
    /// symlink that stays inside is read.
    #[test]
    fn read_indexed_refuses_what_resolve_refuses() {
        use crate::testing::symlink;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(dir.path().join(".env"), "SECRET=1\n").unwrap();
        fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        symlink(dir.path().join("src/lib.rs"), dir.path().join("inside_link.rs")).unwrap();
        symlink(outside.path().join("secret.txt"), dir.path().join("escape.txt")).unwrap();
        symlink(outside.path(), dir.path().join("escape_dir")).unwrap();
        symlink(dir.path().join(".env"), dir.path().join("env_link")).unwrap();
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        let root = Root::open(dir.path(), Exclusions::new(&exclude, &[]).unwrap()).unwrap();
        let read = |path: &str| root.read_indexed(&RepoPath::normalize(path).unwrap(), 1 << 20);
        assert_eq!(read("src/lib.rs").unwrap(), b"pub fn a() {}\n");
        assert_eq!(read("inside_link.rs").unwrap(), b"pub fn a() {}\n");
        assert!(read("escape.txt").is_err());
        assert!(read("escape_dir/secret.txt").is_err());
        assert!(read(".env").is_err());
        assert!(read("env_link").is_err());
        assert!(read("src").is_err());
        assert!(read("missing.rs").is_err());
        assert!(root.read_indexed(&RepoPath::normalize("src/lib.rs").unwrap(), 4).is_err(), "over max_bytes");
    }

    #[test]
    fn walk_honours_ignores_exclusions_size_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let write = |path: &str, body: &str| {
            let full = dir.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, body).unwrap();
        };
        write("src/lib.rs", "fn a() {}\n");
        write("src/gen/out.rs", "fn g() {}\n");
        write(".gitignore", "src/gen/\n*.log\n");
        write(".loupeignore", "vendor/\n");
        write("vendor/x.rs", "fn v() {}\n");
        write("debug.log", "x\n");
        write(".env", "SECRET=1\n");
        write(".git/HEAD", "ref: refs/heads/main\n");
        write("big.txt", &"x".repeat(2000));
        write(".github/workflow.yml", "on: push\n");
        fs::write(outside.path().join("o.rs"), "fn o() {}\n").unwrap();
        crate::testing::symlink(outside.path(), dir.path().join("link")).unwrap();
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        let root = Root::open(dir.path(), Exclusions::new(&exclude, &[]).unwrap()).unwrap();
        let paths: Vec<String> = root
            .walk(WalkOptions { max_file_bytes: 1000, threads: 2 })
            .into_iter()
            .map(|entry| entry.path.as_str().to_owned())
            .collect();
        assert_eq!(paths, [".github/workflow.yml", ".gitignore", ".loupeignore", "src/lib.rs"]);
        let (_, directories) = root.walk_tree(WalkOptions { max_file_bytes: 1000, threads: 1 });
        let directories: Vec<&str> = directories.iter().map(RepoPath::as_str).collect();
        assert_eq!(directories, ["", ".github", "src"]);
    }
}

#[cfg(test)]
mod outside_git_tests {
    use super::*;
    use crate::Exclusions;

    /// A source tarball is not a repository: its `.gitignore` (Debian's kernel tarball has
    /// `/*`) does not hide files, while `.ignore` and `.loupeignore` still apply.
    #[test]
    fn gitignore_counts_only_inside_a_git_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "/*\n").unwrap();
        std::fs::write(dir.path().join(".ignore"), "skip.txt\n").unwrap();
        std::fs::write(dir.path().join("main.c"), "int main;\n").unwrap();
        std::fs::write(dir.path().join("skip.txt"), "x\n").unwrap();
        let root = Root::open(dir.path(), Exclusions::new(&[], &[]).unwrap()).unwrap();
        let paths: Vec<String> = root
            .walk(WalkOptions { max_file_bytes: 1000, threads: 1 })
            .into_iter()
            .map(|entry| entry.path.as_str().to_owned())
            .collect();
        assert_eq!(paths, [".gitignore", ".ignore", "main.c"]);
        assert!(!root.is_ignored(&RepoPath::normalize("main.c").unwrap(), false));
        assert!(root.is_ignored(&RepoPath::normalize("skip.txt").unwrap(), false));
    }
}
