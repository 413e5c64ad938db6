//! The one way the index reads its persisted files on demand: positioned reads (`pread`) of
//! an index file held open, within the size it had when it was opened, and a check that the
//! file is still the one that was opened.
//!
//! Why not a memory mapping: the workspace forbids `unsafe`, and a mapped file that another
//! process truncates kills the reader with `SIGBUS`. A `pread` past the end of a truncated file
//! returns short, which is an error here, never a signal.
//!
//! What a reader can trust: a file replaced by a rename (how loupe writes its files) leaves the
//! descriptor held here on the old file, which stays whole and consistent until it is closed.
//! A file truncated or written in place changes its size, its ctime or its mtime (the kernel
//! updates them before the bytes change, and no process can set a ctime; `Stamp::still` says
//! how a file unlinked by a rename is told apart), so `still_same`,
//! asked after the reads of a query, says whether what they returned can be trusted; the
//! caller then answers from the reads or treats the index as damaged (a scan, then a rebuild).
//! Every length and offset read from the file is bounded by the callers before use, as when
//! the whole file was read into memory. Must not write.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// What identifies one version of a file: it changes when the file is truncated or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    links: u64,
}

impl Stamp {
    #[cfg(unix)]
    fn of(metadata: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            links: metadata.nlink(),
        }
    }

    /// Windows has no change time or inode in stable `std`: the size, the last write and
    /// the creation time. An index file open here cannot be truncated or written in place
    /// without moving the last write time.
    #[cfg(windows)]
    fn of(metadata: &std::fs::Metadata) -> Stamp {
        use std::os::windows::fs::MetadataExt;
        let write = i64::try_from(metadata.last_write_time()).unwrap_or(i64::MAX);
        let creation = i64::try_from(metadata.creation_time()).unwrap_or(i64::MAX);
        Stamp { device: 0, inode: 0, len: metadata.len(), mtime: (write, 0), ctime: (creation, 0), links: 1 }
    }

    /// Whether `now` is still the version stamped at open. Replacing the file by a rename
    /// unlinks the old one, which moves its ctime but not its bytes: a file with no link left
    /// is compared by size and mtime (only a descriptor opened before could still write it,
    /// and a write moves the mtime); a linked one by its ctime too, which no process can set
    /// back after writing.
    fn still(&self, now: &Stamp) -> bool {
        let bytes_same =
            self.device == now.device && self.inode == now.inode && self.len == now.len && self.mtime == now.mtime;
        bytes_same && (now.links == 0 || (self.ctime == now.ctime && self.links == now.links))
    }
}

/// An index file held open for positioned reads.
#[derive(Debug)]
pub(crate) struct PersistedFile {
    file: File,
    stamp: Stamp,
    /// Set once a read failed or the file changed: nothing more is trusted from it.
    damaged: AtomicBool,
}

impl PersistedFile {
    /// Opens `path` the way every index file is opened (`open_regular`).
    pub(crate) fn open(path: &Path) -> io::Result<PersistedFile> {
        let (file, _) = open_regular(path)?;
        PersistedFile::from_file(file)
    }

    pub(crate) fn from_file(file: File) -> io::Result<PersistedFile> {
        let stamp = Stamp::of(&file.metadata()?);
        Ok(PersistedFile { file, stamp, damaged: AtomicBool::new(false) })
    }

    /// The size the file had when it was opened: no read goes past it.
    pub(crate) fn len(&self) -> u64 {
        self.stamp.len
    }

    /// Fills `buffer` from `offset`; an error (and the file marked damaged) when that range is
    /// not inside the file as opened or the file now ends before it.
    pub(crate) fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<()> {
        let inside = offset.checked_add(buffer.len() as u64).is_some_and(|end| end <= self.stamp.len);
        if !inside {
            return Err(self.damage("a read past the end of the file"));
        }
        loupe_vfs::read_exact_at(&self.file, buffer, offset)
            .inspect_err(|_| self.damaged.store(true, Ordering::Release))
    }

    /// `len` bytes from `offset`, in a new buffer.
    pub(crate) fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buffer = vec![0u8; len];
        self.read_exact_at(&mut buffer, offset)?;
        Ok(buffer)
    }

    /// True while the file is the one opened: same inode, size, mtime and ctime, and no read
    /// failed. Ask it after the reads of a query, before trusting them.
    pub(crate) fn still_same(&self) -> bool {
        if self.damaged.load(Ordering::Acquire) {
            return false;
        }
        let same = self.file.metadata().is_ok_and(|metadata| self.stamp.still(&Stamp::of(&metadata)));
        if !same {
            tracing::warn!("an index file changed under the running index; it will be rebuilt");
            self.damaged.store(true, Ordering::Release);
        }
        same
    }

    /// A file this process has just written (a build's unnamed files): never fails; a file
    /// whose metadata cannot be read is damaged from the start.
    pub(crate) fn sealed(file: File) -> PersistedFile {
        match file.metadata() {
            Ok(metadata) => PersistedFile { file, stamp: Stamp::of(&metadata), damaged: AtomicBool::new(false) },
            Err(_) => {
                let stamp = Stamp { device: 0, inode: 0, len: 0, mtime: (0, 0), ctime: (0, 0), links: 0 };
                PersistedFile { file, stamp, damaged: AtomicBool::new(true) }
            }
        }
    }

    /// Marks the file as not to be trusted (its content is known to be incomplete).
    pub(crate) fn mark_damaged(&self) {
        self.damaged.store(true, Ordering::Release);
    }

    /// True once a read failed or `still_same` saw the file change.
    pub(crate) fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Acquire)
    }

    fn damage(&self, what: &str) -> io::Error {
        self.damaged.store(true, Ordering::Release);
        io::Error::new(io::ErrorKind::InvalidData, format!("index file: {what}; rebuild it"))
    }

    /// A sequential reader over `range` of the file, buffered, that can skip ahead.
    pub(crate) fn reader(&self, start: u64, end: u64) -> FileReader<'_> {
        FileReader { file: self, position: start, end: end.min(self.stamp.len), buffer: Vec::new(), at: 0 }
    }
}

/// Reads a range of a `PersistedFile` front to back through a 1 MiB buffer; knows its position,
/// so a decoder can note where a section lies and skip it rather than read it.
pub(crate) struct FileReader<'f> {
    file: &'f PersistedFile,
    /// The file offset of `buffer[0]` plus `buffer.len()`: where the next refill reads.
    position: u64,
    end: u64,
    buffer: Vec<u8>,
    at: usize,
}

impl<'f> FileReader<'f> {
    /// The file offset of the next byte `read` returns.
    pub(crate) fn offset(&self) -> u64 {
        self.position - (self.buffer.len() - self.at) as u64
    }

    /// Moves past `len` bytes without reading them; an error when fewer are left.
    pub(crate) fn skip(&mut self, len: u64) -> io::Result<()> {
        let target = self.offset().checked_add(len).filter(|&target| target <= self.end);
        let Some(target) = target else {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a section runs past the end of the file"));
        };
        self.buffer.clear();
        self.at = 0;
        self.position = target;
        Ok(())
    }
}

impl Read for FileReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.buffer.len() {
            let left = self.end.saturating_sub(self.position);
            if left == 0 || out.is_empty() {
                return Ok(0);
            }
            let take = left.min(1 << 20) as usize;
            self.buffer.resize(take, 0);
            self.file.read_exact_at(&mut self.buffer, self.position)?;
            self.position += take as u64;
            self.at = 0;
        }
        let take = out.len().min(self.buffer.len() - self.at);
        out[..take].copy_from_slice(&self.buffer[self.at..self.at + take]);
        self.at += take;
        Ok(take)
    }
}

/// What a decoder reads from: bytes in memory, or a file it may leave sections of unread.
pub(crate) trait Source: Read {
    /// The file offset of the next byte, for a reader over a file.
    fn offset(&self) -> Option<u64>;
    /// Moves past `len` bytes; an error when fewer are left.
    fn skip(&mut self, len: u64) -> io::Result<()>;
    /// The bytes left, when known.
    fn remaining(&self) -> Option<u64>;
}

impl Source for &[u8] {
    fn offset(&self) -> Option<u64> {
        None
    }

    fn skip(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).ok().filter(|&len| len <= self.len());
        let Some(len) = len else {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a section runs past the end"));
        };
        *self = &self[len..];
        Ok(())
    }

    fn remaining(&self) -> Option<u64> {
        Some(self.len() as u64)
    }
}

impl Source for FileReader<'_> {
    fn offset(&self) -> Option<u64> {
        Some(FileReader::offset(self))
    }

    fn skip(&mut self, len: u64) -> io::Result<()> {
        FileReader::skip(self, len)
    }

    fn remaining(&self) -> Option<u64> {
        Some(self.end.saturating_sub(FileReader::offset(self)))
    }
}

/// Opens an index file for reading: not through a symbolic link (`O_NOFOLLOW`), without
/// blocking (a FIFO), and only when it is a regular file. Returns it with its size, which a
/// reader must not read past (`File::take`): a file that grows meanwhile, or a device,
/// cannot make loading read without end.
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let file = loupe_vfs::open_own(path, loupe_vfs::OwnAccess::Read)?;
    let len = file.metadata()?.len();
    Ok((file, len))
}

/// True when `path` is a regular file (not followed through a link).
pub(crate) fn is_regular(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_inside_the_file_and_a_change_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, (0u8..100).collect::<Vec<u8>>()).unwrap();
        let file = PersistedFile::open(&path).unwrap();
        assert_eq!(file.read_vec(10, 3).unwrap(), [10, 11, 12]);
        assert!(file.still_same());
        let mut reader = file.reader(90, 200);
        reader.skip(5).unwrap();
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, [95, 96, 97, 98, 99]);
        assert!(file.reader(0, 100).skip(101).is_err());
        // Truncated by another process: a read fails, and the file is damaged from then on.
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(50).unwrap();
        assert!(file.read_vec(60, 10).is_err());
        assert!(!file.still_same() && file.is_damaged());
    }

    #[test]
    fn a_file_written_in_place_is_no_longer_the_same_one_replaced_by_a_rename_still_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, [1u8; 64]).unwrap();
        let renamed = PersistedFile::open(&path).unwrap();
        let other = dir.path().join("g.bin");
        std::fs::write(&other, [2u8; 64]).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(renamed.still_same(), "the held file is the old one, whole");
        assert_eq!(renamed.read_vec(0, 4).unwrap(), [1, 1, 1, 1]);
        let written = PersistedFile::open(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::io::Write::write_all(&mut std::fs::OpenOptions::new().write(true).open(&path).unwrap(), &[3u8; 8])
            .unwrap();
        assert!(!written.still_same());
    }
}
