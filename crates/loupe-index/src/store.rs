//! Persistence of the file and symbol tables under the index directory, and the writer lock.
//!
//! Files are written to a temporary name in the same directory and renamed, so a reader
//! never sees half a file. A snapshot whose format number differs from `FORMAT` is ignored
//! and the index is rebuilt cleanly. Only the process holding `writer.lock` writes.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::records::{FileRecord, SymbolRecord};

/// Bumped whenever the on-disk layout or the meaning of a record changes.
pub(crate) const FORMAT: u32 = 1;

const SNAPSHOT_FILE: &str = "tables.bin";
pub(crate) const TEXT_FILE: &str = "text.bin";
const LOCK_FILE: &str = "writer.lock";

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    pub(crate) format: u32,
    pub(crate) root: String,
    pub(crate) files: Vec<FileRecord>,
    /// Per doc id, the file's definitions in source order.
    pub(crate) symbols: Vec<Vec<SymbolRecord>>,
}

pub(crate) fn load(dir: &Path, root: &str) -> Option<Snapshot> {
    let bytes = fs::read(dir.join(SNAPSHOT_FILE)).ok()?;
    let snapshot: Snapshot = postcard::from_bytes(&bytes).ok()?;
    let valid = snapshot.format == FORMAT && snapshot.root == root && snapshot.files.len() == snapshot.symbols.len();
    valid.then_some(snapshot)
}

/// The same layout as `Snapshot`, borrowed, so saving never copies the tables.
#[derive(Serialize)]
struct SnapshotRef<'a> {
    format: u32,
    root: &'a str,
    files: &'a [FileRecord],
    symbols: &'a [Vec<SymbolRecord>],
}

/// Streams the tables to a temporary file and renames it into place.
pub(crate) fn save(dir: &Path, root: &str, files: &[FileRecord], symbols: &[Vec<SymbolRecord>]) -> io::Result<()> {
    let path = dir.join(SNAPSHOT_FILE);
    let temporary = temporary_name(&path);
    let mut writer = io::BufWriter::with_capacity(1 << 20, File::create(&temporary)?);
    let snapshot = SnapshotRef { format: FORMAT, root, files, symbols };
    postcard::to_io(&snapshot, &mut writer).map_err(io::Error::other)?;
    let file = writer.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()?;
    fs::rename(&temporary, &path)
}

pub(crate) fn temporary_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
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
        let file = File::options().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE)).ok()?;
        match file.try_lock() {
            Ok(()) => Some(WriterLock { _file: file }),
            Err(_) => None,
        }
    }
}
