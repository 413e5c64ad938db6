//! The index cache: the index directories under `$XDG_CACHE_HOME/loupe/`, one per root
//! (`<workspace hash>`), what each holds and for which root, and pruning those no longer used.
//!
//! A directory is described from its own files: the root from `tables.bin`'s header, the last
//! use from the newest modification time of its files (every call appends to
//! `analytics.jsonl`), and whether a server uses it now from `writer.lock` (held for a server's
//! life). Pruning removes a directory only while holding its writer lock, so never under a
//! running server.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::store::{self, WriterLock};

/// One index directory of the cache.
#[derive(Debug, Clone)]
pub struct IndexDir {
    pub path: PathBuf,
    /// The root its tables are for (none before a first build persisted them).
    pub root: Option<PathBuf>,
    /// Bytes of its files.
    pub bytes: u64,
    /// The newest modification time of its files.
    pub last_used: Option<SystemTime>,
    /// A server holds its writer lock now.
    pub in_use: bool,
}

impl IndexDir {
    /// Its root is recorded and is no longer a directory.
    pub fn root_gone(&self) -> bool {
        self.root.as_ref().is_some_and(|root| !root.is_dir())
    }
}

/// The index directories in `cache` (the parent of every default index directory), by path.
pub fn list(cache: &Path) -> Vec<IndexDir> {
    let Ok(entries) = fs::read_dir(cache) else { return Vec::new() };
    // Only what loupe names its index directories (a workspace hash: 12 hex digits), so that a
    // cache variable pointing somewhere unexpected never lists, nor prunes, anything else.
    let is_index_name = |name: &str| name.len() == 12 && name.bytes().all(|byte| byte.is_ascii_hexdigit());
    let mut dirs: Vec<IndexDir> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter(|entry| entry.file_name().to_str().is_some_and(is_index_name))
        .map(|entry| describe(&entry.path()))
        .collect();
    dirs.sort_by(|left, right| left.path.cmp(&right.path));
    dirs
}

/// What one index directory holds.
pub fn describe(dir: &Path) -> IndexDir {
    let (bytes, last_used) = usage(dir);
    IndexDir {
        path: dir.to_path_buf(),
        root: recorded_root(dir).map(PathBuf::from),
        bytes,
        last_used,
        in_use: WriterLock::try_acquire(dir).is_none(),
    }
}

/// Removes an index directory unless a server holds it (checked under its writer lock).
pub fn prune(dir: &IndexDir) -> io::Result<()> {
    let Some(_lock) = WriterLock::try_acquire(&dir.path) else {
        return Err(io::Error::new(io::ErrorKind::ResourceBusy, "a server uses this index"));
    };
    fs::remove_dir_all(&dir.path)
}

/// The bytes of the files beneath `dir` (links not followed) and their newest modification.
pub fn usage(dir: &Path) -> (u64, Option<SystemTime>) {
    let mut bytes = 0;
    let mut newest: Option<SystemTime> = None;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = fs::read_dir(&next) else { continue };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.path().symlink_metadata() else { continue };
            if metadata.is_dir() {
                pending.push(entry.path());
            } else if metadata.is_file() {
                bytes += metadata.len();
                if let Ok(modified) = metadata.modified() {
                    newest = Some(newest.map_or(modified, |newest| newest.max(modified)));
                }
            }
        }
    }
    (bytes, newest)
}

/// The root `tables.bin` is for, from the start of its header (format number, root), whatever
/// the format: an index of an older loupe still names its root.
fn recorded_root(dir: &Path) -> Option<String> {
    let (file, size) = crate::ondisk::open_regular(&dir.join(store::SNAPSHOT_FILE)).ok()?;
    let mut reader = file.take(size);
    let mut length = [0u8; 8];
    reader.read_exact(&mut length).ok()?;
    // The root comes right after the format number: 8 KiB of header is more than enough.
    let wanted = u64::from_le_bytes(length).min(8192);
    let mut header = Vec::new();
    reader.take(wanted).read_to_end(&mut header).ok()?;
    let ((_format, root), _rest): ((u32, String), _) = postcard::take_from_bytes(&header).ok()?;
    Some(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Index, IndexOptions};

    /// Two roots indexed in one cache; one root deleted: the listing names both roots with their
    /// sizes, the gone one is said gone, pruning removes it and not the other, and an index a
    /// server holds is never removed.
    #[test]
    fn the_cache_lists_its_roots_and_prunes_the_gone_ones_only() {
        let cache = tempfile::tempdir().unwrap();
        let kept_root = tempfile::tempdir().unwrap();
        let gone_root = tempfile::tempdir().unwrap();
        for root in [&kept_root, &gone_root] {
            fs::write(root.path().join("a.py"), "def a():\n    return 1\n").unwrap();
        }
        let open = |root: &Path, name: &str| {
            let vfs = loupe_vfs::Root::open(root, loupe_vfs::Exclusions::new(&[], &[]).unwrap()).unwrap();
            Index::open(vfs, IndexOptions { index_dir: cache.path().join(name), max_file_bytes: 1 << 20, threads: 1 })
        };
        open(kept_root.path(), "aaaaaaaaaaaa").refresh(&|_, _| {});
        open(gone_root.path(), "bbbbbbbbbbbb").refresh(&|_, _| {});
        let gone_path = loupe_vfs::canonical_path(gone_root.path()).unwrap();
        drop(gone_root);

        fs::create_dir(cache.path().join("not-an-index")).unwrap();
        let dirs = list(cache.path());
        assert_eq!(dirs.len(), 2, "only index directories are listed: {dirs:?}");
        let by_name = |name: &str| dirs.iter().find(|dir| dir.path.ends_with(name)).unwrap().clone();
        let (kept, gone) = (by_name("aaaaaaaaaaaa"), by_name("bbbbbbbbbbbb"));
        assert_eq!(kept.root.as_deref(), Some(loupe_vfs::canonical_path(kept_root.path()).unwrap().as_path()));
        assert_eq!(gone.root.as_deref(), Some(gone_path.as_path()));
        assert!(!kept.root_gone() && gone.root_gone());
        assert!(kept.bytes > 0 && kept.last_used.is_some() && !kept.in_use);

        // A server on the kept root holds its lock: it is in use, and pruning refuses it.
        let server = open(kept_root.path(), "aaaaaaaaaaaa");
        assert!(server.is_writer());
        let held = describe(&kept.path);
        assert!(held.in_use);
        assert_eq!(prune(&held).unwrap_err().kind(), io::ErrorKind::ResourceBusy);
        drop(server);

        prune(&gone).unwrap();
        let left: Vec<PathBuf> = list(cache.path()).into_iter().map(|dir| dir.path).collect();
        assert_eq!(left, vec![kept.path]);
    }
}
