//! Persistence of the file and symbol tables under the index directory, and the writer lock.
//!
//! Files are written to a temporary name in the same directory and renamed, so a reader
//! never sees half a file. A snapshot whose format number differs from `FORMAT` is ignored
//! and the index is rebuilt cleanly. Only the process holding `writer.lock` writes.
//!
//! Every index file is opened the one way `ondisk::open_regular` opens it: never through a symbolic
//! link, never blocking, regular files only, and read no further than the size it had when
//! opened. Anything else under an index file's name (a directory, a link to `/dev/zero`, a
//! FIFO) is damage: it reads as no index, and `clear_way` removes it before the file is
//! written again, so the index is rebuilt rather than left unusable.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::Path;

use loupe_core::RepoPath;
use loupe_vfs::WalkEntry;
use serde::{Deserialize, Serialize};

use crate::error::IndexError;
use crate::links::LinkTable;
use crate::ondisk::{PersistedFile, Source};
use crate::records::FileRecord;
use crate::symbols::SymbolTable;

/// Bumped whenever the on-disk layout or the meaning of a record changes, or what the parsers
/// extract does, so that no index keeps stale facts (10: C's file-scope initializers are left
/// out of the parse, so error recovery inside them no longer hides the variables they
/// initialise; 11: the header lists the files over the size limit, so that a loaded index
/// knows them before its first walk).
pub(crate) const FORMAT: u32 = 11;

pub(crate) const SNAPSHOT_FILE: &str = "tables.bin";
pub(crate) const TEXT_FILE: &str = "text.bin";
const LOCK_FILE: &str = "writer.lock";

/// The file table, then (after it, in `SymbolTable`'s own layout) the symbol table, then the
/// link table (`LinkTable::encode`).
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    root: String,
    /// False for a checkpoint: a build interrupted at the end of a session.
    complete: bool,
    files: Vec<FileRecord>,
    /// The files the last walk found over the size limit (not indexed; searches read them
    /// directly), in path order.
    oversized: Vec<Oversized>,
}

/// A file over the size limit as the header keeps it: a walk's entry.
#[derive(Debug, Serialize, Deserialize)]
struct Oversized {
    path: RepoPath,
    size: u64,
    mtime_ns: u64,
}

pub(crate) struct Snapshot {
    pub(crate) files: Vec<FileRecord>,
    pub(crate) oversized: Vec<WalkEntry>,
    pub(crate) symbols: SymbolTable,
    pub(crate) links: LinkTable,
    pub(crate) complete: bool,
}

/// The tables persisted for `root`, or `None` when there are none, they are for another
/// root or format, or anything in them does not check out. The file is streamed and checked
/// whole; the symbol table's rows and arena stay in it, held open, and are read on demand.
pub(crate) fn load(dir: &Path, root: &str) -> Option<Snapshot> {
    let path = dir.join(SNAPSHOT_FILE);
    let file = match PersistedFile::open(&path) {
        Ok(opened) => std::sync::Arc::new(opened),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return None,
        Err(error) => {
            tracing::warn!("the persisted tables are unusable ({error}); rebuilding");
            return None;
        }
    };
    let reader = file.reader(0, file.len());
    decode_with(reader, root, Some(std::sync::Arc::clone(&file)))
}

/// The snapshot `load` reads, from any reader: every length is trusted only as far as the bytes
/// behind it arrive, every offset is checked, and every file path must be a normal path beneath
/// the root (a damaged or planted path such as `../x` would otherwise be handed to callers as
/// an indexed file). `None` means: rebuild.
#[cfg(test)]
pub(crate) fn decode(reader: &[u8], root: &str) -> Option<Snapshot> {
    decode_with(reader, root, None)
}

/// `decode`, leaving the symbol rows and arena in `disk` when it is the file `reader` reads.
fn decode_with(mut reader: impl Source, root: &str, disk: Option<std::sync::Arc<PersistedFile>>) -> Option<Snapshot> {
    let mut length = [0u8; 8];
    reader.read_exact(&mut length).ok()?;
    let length = u64::from_le_bytes(length);
    let mut header = Vec::new();
    (&mut reader).take(length).read_to_end(&mut header).ok()?;
    if header.len() as u64 != length {
        return None;
    }
    let header: Header = postcard::from_bytes(&header).ok()?;
    if header.format != FORMAT || header.root != root {
        return None;
    }
    let mut paths =
        header.files.iter().map(|record| &record.path).chain(header.oversized.iter().map(|entry| &entry.path));
    if let Some(bad) = paths.find(|path| !is_normal(path)) {
        tracing::warn!("the persisted file table names {bad:?}, not a path beneath the root; rebuilding");
        return None;
    }
    let symbols = match SymbolTable::decode_from(&mut reader, disk) {
        Ok(symbols) => symbols,
        Err(reason) => {
            tracing::warn!("the persisted symbol table is damaged ({reason}); rebuilding");
            return None;
        }
    };
    let links = match LinkTable::decode_from(&mut reader) {
        Ok(links) => links,
        Err(reason) => {
            tracing::warn!("the persisted link table is damaged ({reason}); rebuilding");
            return None;
        }
    };
    let at_end = reader.read(&mut [0u8; 1]).ok()? == 0;
    let oversized = header
        .oversized
        .into_iter()
        .map(|Oversized { path, size, mtime_ns }| WalkEntry { path, size, mtime_ns })
        .collect();
    (at_end && symbols.file_count() == header.files.len()).then_some(Snapshot {
        files: header.files,
        oversized,
        symbols,
        links,
        complete: header.complete,
    })
}

/// True for a path a walk can produce: not the root, already normalised (no `.`, `..` or empty
/// component, no leading `/`) and without a NUL.
fn is_normal(path: &RepoPath) -> bool {
    !path.is_root()
        && !path.as_str().contains('\0')
        && RepoPath::normalize(path.as_str()).is_some_and(|normal| normal == *path)
}

/// The same layout as `Header`, borrowed, so saving never copies the file table.
#[derive(Serialize)]
struct HeaderRef<'a> {
    format: u32,
    root: &'a str,
    complete: bool,
    files: &'a [FileRecord],
    oversized: Vec<OversizedRef<'a>>,
}

#[derive(Serialize)]
struct OversizedRef<'a> {
    path: &'a RepoPath,
    size: u64,
    mtime_ns: u64,
}

/// Writes the header's length and the header, then streams the symbol table to a temporary
/// file and renames it into place. The symbol table must be compacted. Returns where the
/// symbol arena and rows begin in the file (`SymbolTable::rebase`).
pub(crate) fn save(
    dir: &Path,
    root: &str,
    files: &[FileRecord],
    oversized: &[WalkEntry],
    symbols: &SymbolTable,
    links: &LinkTable,
    complete: bool,
) -> io::Result<(u64, u64)> {
    let path = dir.join(SNAPSHOT_FILE);
    // A fresh name created exclusively (never a file or link already there), removed unless
    // it is renamed into place.
    let temporary = tempfile::Builder::new().prefix(".tables.bin.").suffix(".tmp").tempfile_in(dir)?;
    let (file, temporary) = temporary.into_parts();
    let mut writer = io::BufWriter::with_capacity(1 << 20, file);
    let oversized = oversized
        .iter()
        .map(|entry| OversizedRef { path: &entry.path, size: entry.size, mtime_ns: entry.mtime_ns })
        .collect();
    let header = postcard::to_stdvec(&HeaderRef { format: FORMAT, root, complete, files, oversized })
        .map_err(io::Error::other)?;
    writer.write_all(&(header.len() as u64).to_le_bytes())?;
    writer.write_all(&header)?;
    let symbols_at = 8 + header.len() as u64;
    let (arena_at, rows_at) = symbols.encode(&mut writer)?;
    links.encode(&mut writer)?;
    let file = writer.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()?;
    clear_way(&path)?;
    temporary.persist(&path).map_err(|error| error.error)?;
    Ok((symbols_at + arena_at, symbols_at + rows_at))
}

pub(crate) use loupe_vfs::clear_way;

/// Creates the index directory if needed and makes it private to the user (mode 0700): it
/// holds the edit journal (the old and new bytes of every edited file, a 0600 file's included),
/// the analytics and the index of the code, none of which another local user may read, and a
/// directory they cannot enter makes every file below it private whatever its own mode. A
/// directory that is a symbolic link, or owned by another user (a `/tmp/loupe` planted before
/// loupe's first start, when there is no home directory), is refused: its owner could read or
/// plant the journal that start-up recovery replays.
pub fn make_private_dir(dir: &Path) -> Result<(), IndexError> {
    let refused = |reason: String| IndexError::Directory { dir: dir.to_path_buf(), reason };
    fs::create_dir_all(dir).map_err(|error| refused(format!("cannot create the index directory: {error}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let metadata =
            fs::symlink_metadata(dir).map_err(|error| refused(format!("cannot read the index directory: {error}")))?;
        if !metadata.is_dir() {
            return Err(refused(
                "the index directory is a symbolic link or not a directory; loupe keeps its journal only in a \
                 directory of its own"
                    .into(),
            ));
        }
        if metadata.uid() != rustix::process::getuid().as_raw() {
            return Err(refused(
                "the index directory is owned by another user; set LOUPE_INDEX_DIR or --index-dir to a directory \
                 of your own"
                    .into(),
            ));
        }
        if metadata.mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|error| refused(format!("cannot make the index directory private: {error}")))?;
        }
    }
    Ok(())
}

/// The writer lock: held for the life of the index by the one process that persists it.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock if no other process holds it; `None` means read-only persistence.
    pub(crate) fn try_acquire(dir: &Path) -> Option<WriterLock> {
        fs::create_dir_all(dir).ok()?;
        let path = dir.join(LOCK_FILE);
        // Never through a link, never blocking on a FIFO; anything but a regular file there
        // is replaced.
        let open = || loupe_vfs::open_own(&path, loupe_vfs::OwnAccess::Write);
        let file = open().or_else(|_| clear_way(&path).and_then(|()| open())).ok()?;
        match file.try_lock() {
            Ok(()) => Some(WriterLock { _file: file }),
            Err(_) => None,
        }
    }
}
/// Only the writer writes the index's files, each through a temporary `.<name>.<random>.tmp`
/// renamed over it; a writer killed mid-write leaves its temporary behind. The new writer
/// removes them: none can be in use, the lock says no other writer runs.
pub(crate) fn remove_stale_temporaries(index_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(index_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if is_file && name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
