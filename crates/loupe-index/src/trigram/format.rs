//! The on-disk format of a trigram index file, and its one streaming writer.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header    96 bytes   magic "LOUPETRI", version u32, header length u32, doc count u32,
//!                      doc-id bound u32 (largest id + 1), trigram count u64, then (offset u64,
//!                      length u64) of the table, the posting lists and the doc list, and a
//!                      16-byte BLAKE3 checksum of the header fields, the file length and the
//!                      three sections' hashes
//! table     20 bytes per trigram, sorted by trigram:
//!                      trigram u32, offset u64 (into the posting section), length u32,
//!                      doc count u32
//! postings  the posting lists back to back (see `postings.rs`: varint, first id then gap-1)
//! docs      every doc id in the index, encoded like a posting list
//! ```
//!
//! Owns the layout constants, header encoding and decoding, and writing a file atomically (a
//! temporary file in the same directory, renamed over the target). Must not decide what goes
//! into the lists, and must not be the only check on what it reads: the reader re-validates.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::postings;

pub(crate) const MAGIC: [u8; 8] = *b"LOUPETRI";
/// Bumped on any change to the layout or the meaning of a field; an older file is rebuilt.
pub(crate) const VERSION: u32 = 1;
pub(crate) const HEADER_LEN: usize = 96;
pub(crate) const ENTRY_LEN: usize = 20;
pub(crate) const CHECKSUM_AT: usize = 80;

/// The decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) doc_count: u32,
    pub(crate) doc_id_bound: u32,
    pub(crate) trigram_count: u64,
    pub(crate) table: Section,
    pub(crate) postings: Section,
    pub(crate) docs: Section,
    pub(crate) file_len: u64,
    pub(crate) checksum: [u8; 16],
}

/// A byte range of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Section {
    pub(crate) offset: u64,
    pub(crate) len: u64,
}

impl Header {
    /// Only a fallback for an empty in-memory index; never written.
    pub(crate) const EMPTY: Header = Header {
        doc_count: 0,
        doc_id_bound: 0,
        trigram_count: 0,
        table: Section { offset: HEADER_LEN as u64, len: 0 },
        postings: Section { offset: HEADER_LEN as u64, len: 0 },
        docs: Section { offset: HEADER_LEN as u64, len: 0 },
        file_len: HEADER_LEN as u64,
        checksum: [0; 16],
    };

    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        out[16..20].copy_from_slice(&self.doc_count.to_le_bytes());
        out[20..24].copy_from_slice(&self.doc_id_bound.to_le_bytes());
        let words = [
            self.trigram_count,
            self.table.offset,
            self.table.len,
            self.postings.offset,
            self.postings.len,
            self.docs.offset,
            self.docs.len,
        ];
        for (i, word) in words.iter().enumerate() {
            out[24 + 8 * i..32 + 8 * i].copy_from_slice(&word.to_le_bytes());
        }
        // 24 + 7 * 8 = 80: the checksum fills the rest. The file length is implied (the docs
        // section ends the file) and is hashed into the checksum too.
        out[CHECKSUM_AT..CHECKSUM_AT + 16].copy_from_slice(&self.checksum);
        out
    }

    /// Decodes and checks a header against the length of the file it came from.
    pub(crate) fn decode(bytes: &[u8], file_len: u64) -> Result<Header, String> {
        let header = bytes.get(..HEADER_LEN).ok_or("file shorter than a header")?;
        if header[0..8] != MAGIC {
            return Err("not a loupe trigram index (bad magic)".into());
        }
        let u32_at = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let u64_at = |at: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let version = u32_at(8);
        if version != VERSION {
            return Err(format!("format version {version}, expected {VERSION}"));
        }
        if u32_at(12) as usize != HEADER_LEN {
            return Err("unexpected header length".into());
        }
        let mut checksum = [0u8; 16];
        checksum.copy_from_slice(&header[CHECKSUM_AT..CHECKSUM_AT + 16]);
        let decoded = Header {
            doc_count: u32_at(16),
            doc_id_bound: u32_at(20),
            trigram_count: u64_at(24),
            table: Section { offset: u64_at(32), len: u64_at(40) },
            postings: Section { offset: u64_at(48), len: u64_at(56) },
            docs: Section { offset: u64_at(64), len: u64_at(72) },
            file_len,
            checksum,
        };
        decoded.check_layout()?;
        Ok(decoded)
    }

    /// The sections must tile the file exactly, in order.
    fn check_layout(&self) -> Result<(), String> {
        let table_len = self.trigram_count.checked_mul(ENTRY_LEN as u64).ok_or("trigram count overflows")?;
        let layout_ok = self.table.offset == HEADER_LEN as u64
            && self.table.len == table_len
            && Some(self.postings.offset) == self.table.offset.checked_add(self.table.len)
            && Some(self.docs.offset) == self.postings.offset.checked_add(self.postings.len)
            && Some(self.file_len) == self.docs.offset.checked_add(self.docs.len);
        if !layout_ok {
            return Err("sections do not match the file length (truncated or corrupt)".into());
        }
        if self.doc_count > self.doc_id_bound {
            return Err("more documents than doc ids".into());
        }
        Ok(())
    }

    /// The checksum over the header fields and the three section hashes.
    #[cfg(test)]
    pub(crate) fn expected_checksum(&self, table: &[u8], postings: &[u8], docs: &[u8]) -> [u8; 16] {
        let hashes = [blake3::hash(table), hash_large(postings), blake3::hash(docs)];
        self.checksum_of(&hashes)
    }

    pub(crate) fn checksum_of(&self, section_hashes: &[blake3::Hash; 3]) -> [u8; 16] {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.encode()[..CHECKSUM_AT]);
        hasher.update(&self.file_len.to_le_bytes());
        for hash in section_hashes {
            hasher.update(hash.as_bytes());
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
        out
    }
}

/// BLAKE3 of a large buffer; one pass, SIMD where the CPU has it.
#[cfg(test)]
pub(crate) fn hash_large(bytes: &[u8]) -> blake3::Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(bytes);
    hasher.finalize()
}

/// One table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) trigram: u32,
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) doc_count: u32,
}

impl Entry {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.trigram.to_le_bytes());
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.doc_count.to_le_bytes());
    }

    /// Decodes the entry at the start of `bytes` (which must hold at least `ENTRY_LEN`).
    pub(crate) fn decode(bytes: &[u8]) -> Option<Entry> {
        let bytes = bytes.get(..ENTRY_LEN)?;
        let u32_at = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let mut offset = [0u8; 8];
        offset.copy_from_slice(&bytes[4..12]);
        Some(Entry { trigram: u32_at(0), offset: u64::from_le_bytes(offset), len: u32_at(12), doc_count: u32_at(16) })
    }
}

/// Writes an index in one pass over the posting lists, in increasing trigram order, into any
/// seekable sink (a temporary file, or memory).
///
/// The table's size must be known up front (it precedes the lists), so the writer is created
/// with the exact number of lists it will be given; a list may be empty.
pub(crate) struct IndexWriter<W: Write + Seek> {
    out: W,
    trigram_count: u64,
    table: Vec<u8>,
    last_trigram: Option<u32>,
    postings_hasher: blake3::Hasher,
    postings_len: u64,
}

impl<W: Write + Seek> IndexWriter<W> {
    pub(crate) fn new(mut out: W, trigram_count: u64) -> io::Result<IndexWriter<W>> {
        let table_len = trigram_count
            .checked_mul(ENTRY_LEN as u64)
            .filter(|&len| usize::try_from(len).is_ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "too many trigrams"))?;
        out.seek(SeekFrom::Start(HEADER_LEN as u64 + table_len))?;
        Ok(IndexWriter {
            out,
            trigram_count,
            table: Vec::with_capacity(table_len as usize),
            last_trigram: None,
            postings_hasher: blake3::Hasher::new(),
            postings_len: 0,
        })
    }

    /// Appends the list of `trigram` (greater than the previous one), given as byte pieces.
    pub(crate) fn push_list<'a>(
        &mut self,
        trigram: u32,
        doc_count: u32,
        pieces: impl IntoIterator<Item = &'a [u8]>,
    ) -> io::Result<()> {
        if self.last_trigram.is_some_and(|last| last >= trigram)
            || self.table.len() as u64 >= self.trigram_count * ENTRY_LEN as u64
        {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "trigram lists out of order or too many"));
        }
        self.last_trigram = Some(trigram);
        let offset = self.postings_len;
        for piece in pieces {
            self.out.write_all(piece)?;
            self.postings_hasher.update(piece);
            self.postings_len += piece.len() as u64;
        }
        let len = u32::try_from(self.postings_len - offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "posting list over 4 GiB"))?;
        Entry { trigram, offset, len, doc_count }.encode(&mut self.table);
        Ok(())
    }

    /// Writes the doc list, the table and the header; returns the sink.
    pub(crate) fn finish(mut self, doc_ids: &[u32]) -> io::Result<W> {
        if self.table.len() as u64 != self.trigram_count * ENTRY_LEN as u64 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "fewer trigram lists than announced"));
        }
        let mut docs = Vec::new();
        postings::encode(doc_ids, &mut docs);
        self.out.write_all(&docs)?;
        let table_len = self.table.len() as u64;
        let postings_offset = HEADER_LEN as u64 + table_len;
        let docs_offset = postings_offset + self.postings_len;
        let mut header = Header {
            doc_count: u32::try_from(doc_ids.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "more than 2^32 documents"))?,
            doc_id_bound: doc_ids.last().map_or(0, |last| last.saturating_add(1)),
            trigram_count: self.trigram_count,
            table: Section { offset: HEADER_LEN as u64, len: table_len },
            postings: Section { offset: postings_offset, len: self.postings_len },
            docs: Section { offset: docs_offset, len: docs.len() as u64 },
            file_len: docs_offset + docs.len() as u64,
            checksum: [0; 16],
        };
        let hashes = [blake3::hash(&self.table), self.postings_hasher.finalize(), blake3::hash(&docs)];
        header.checksum = header.checksum_of(&hashes);
        self.out.seek(SeekFrom::Start(HEADER_LEN as u64))?;
        self.out.write_all(&self.table)?;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header.encode())?;
        self.out.seek(SeekFrom::Start(header.file_len))?;
        Ok(self.out)
    }
}

/// A file written beside its target and renamed over it once complete, so a reader sees the
/// old file or the new one, never a partial one.
pub(crate) struct AtomicFile {
    temp_path: TempPath,
    target: PathBuf,
}

impl AtomicFile {
    pub(crate) fn create(path: &Path) -> io::Result<(BufWriter<File>, AtomicFile)> {
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let file_name = path.file_name().and_then(|name| name.to_str()).unwrap_or("trigram");
        let temp = tempfile::Builder::new().prefix(&format!(".{file_name}.")).suffix(".tmp").tempfile_in(directory)?;
        let (file, temp_path) = temp.into_parts();
        Ok((BufWriter::with_capacity(1 << 20, file), AtomicFile { temp_path, target: path.to_path_buf() }))
    }

    /// Flushes `out` and renames the file into place. No fsync: the index is a cache, and a
    /// file torn by a crash fails its checksum on open and is rebuilt.
    pub(crate) fn commit(self, out: BufWriter<File>) -> io::Result<()> {
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        drop(file);
        // A directory or a link squatting on the name would make the rename fail (or the
        // index unreadable) forever: clear it, so the index is rebuilt.
        crate::store::clear_way(&self.target)?;
        self.temp_path.persist(&self.target).map_err(|error| error.error)
    }
}
