//! Persistence of the file and symbol tables under the index directory, and the writer lock.
//!
//! Files are written to a temporary name in the same directory and renamed, so a reader
//! never sees half a file. A snapshot whose format number differs from `FORMAT` is ignored
//! and the index is rebuilt cleanly. Only the process holding `writer.lock` writes.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::links::LinkTable;
use crate::records::FileRecord;
use crate::symbols::SymbolTable;

/// Bumped whenever the on-disk layout or the meaning of a record changes.
pub(crate) const FORMAT: u32 = 7;

const SNAPSHOT_FILE: &str = "tables.bin";
pub(crate) const TEXT_FILE: &str = "text.bin";
const LOCK_FILE: &str = "writer.lock";

/// The file table, then (after it, in `SymbolTable`'s own layout) the symbol table, then the
/// link table (`LinkTable::encode`).
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    root: String,
    files: Vec<FileRecord>,
}

pub(crate) struct Snapshot {
    pub(crate) files: Vec<FileRecord>,
    pub(crate) symbols: SymbolTable,
    pub(crate) links: LinkTable,
}

/// The tables persisted for `root`, or `None` when there are none, they are for another
/// root or format, or anything in them does not check out. The file is streamed: the symbol
/// table's sections go straight into their arrays, never through one file-sized buffer.
pub(crate) fn load(dir: &Path, root: &str) -> Option<Snapshot> {
    let mut reader = io::BufReader::with_capacity(1 << 20, File::open(dir.join(SNAPSHOT_FILE)).ok()?);
    let mut length = [0u8; 8];
    reader.read_exact(&mut length).ok()?;
    let length = usize::try_from(u64::from_le_bytes(length)).ok()?;
    let mut header = Vec::new();
    (&mut reader).take(length as u64).read_to_end(&mut header).ok()?;
    let header: Header = postcard::from_bytes(&header).ok()?;
    if header.format != FORMAT || header.root != root {
        return None;
    }
    let symbols = match SymbolTable::decode_from(&mut reader) {
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
    (at_end && symbols.file_count() == header.files.len()).then_some(Snapshot { files: header.files, symbols, links })
}

/// The same layout as `Header`, borrowed, so saving never copies the file table.
#[derive(Serialize)]
struct HeaderRef<'a> {
    format: u32,
    root: &'a str,
    files: &'a [FileRecord],
}

/// Writes the header's length and the header, then streams the symbol table to a temporary
/// file and renames it into place. The symbol table must be compacted.
pub(crate) fn save(
    dir: &Path,
    root: &str,
    files: &[FileRecord],
    symbols: &SymbolTable,
    links: &LinkTable,
) -> io::Result<()> {
    let path = dir.join(SNAPSHOT_FILE);
    let temporary = temporary_name(&path);
    let mut writer = io::BufWriter::with_capacity(1 << 20, File::create(&temporary)?);
    let header = postcard::to_stdvec(&HeaderRef { format: FORMAT, root, files }).map_err(io::Error::other)?;
    writer.write_all(&(header.len() as u64).to_le_bytes())?;
    writer.write_all(&header)?;
    symbols.encode(&mut writer)?;
    links.encode(&mut writer)?;
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
