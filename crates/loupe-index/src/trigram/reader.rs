//! Opening an index file and reading posting lists from it.
//!
//! Owns validation: the header, the section layout against the file's length, a BLAKE3
//! checksum over everything, the table (sorted, contiguous, plausible counts) and the doc
//! list. A file that fails any check is an `io::Error` of kind `InvalidData` that the caller
//! answers by rebuilding; nothing in a file can make this code panic or read out of bounds.
//! Must not write.
//!
//! An index opened from a file keeps only its table (20 bytes a trigram: 5 MB for Linux 6.12)
//! and its doc list in memory; each query reads the posting lists it needs with `pread`
//! (`crate::ondisk`), a few per query. Opening streams the whole file once through the
//! checksum without keeping it. A list read from a file that has since been truncated or
//! written in place is refused (`PersistedFile::still_same`, asked after the reads): the query
//! widens to every document, which is a scan and a correct answer, and the index reports itself
//! damaged so the next refresh rebuilds it. An index built in memory (a reader process, tests)
//! holds its bytes.

use std::borrow::Cow;
use std::io::{self, Cursor, Read, Write};
use std::path::Path;

use super::Candidates;
use super::eval::{PostingSource, evaluate};
use super::format::{AtomicFile, ENTRY_LEN, Entry, HEADER_LEN, Header, IndexWriter, Section};
use super::plan::Plan;
use super::postings::{self, Corrupt};
use crate::ondisk::PersistedFile;

/// An index file opened for queries. Immutable; updates go through [`super::LayeredIndex`].
pub struct TrigramIndex {
    lists: Lists,
    header: Header,
    /// The table section: `ENTRY_LEN` bytes a trigram.
    table: Vec<u8>,
    doc_ids: Vec<u32>,
}

/// Where the posting lists are.
enum Lists {
    /// The whole encoded index.
    Memory(Vec<u8>),
    /// The file it was opened from, read a list at a time.
    File(PersistedFile),
}

impl std::fmt::Debug for TrigramIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrigramIndex")
            .field("docs", &self.header.doc_count)
            .field("trigrams", &self.header.trigram_count)
            .field("bytes", &self.header.file_len)
            .field("on_disk", &matches!(self.lists, Lists::File(_)))
            .finish()
    }
}

impl TrigramIndex {
    /// Opens and validates the index file at `path`: the checksum over the whole file (streamed,
    /// never held), the table and the doc list, which stay in memory; the posting lists are read
    /// from the file when a query needs them.
    pub fn open(path: &Path) -> io::Result<TrigramIndex> {
        // A regular file only, never through a link, at most its size: a `text.bin` that is a
        // directory or a link to `/dev/zero` is "no index", never an endless read.
        let file = PersistedFile::open(path)?;
        TrigramIndex::from_file(file).map_err(|reason| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("trigram index {}: {reason}; rebuild it", path.display()),
            )
        })
    }

    fn from_file(file: PersistedFile) -> Result<TrigramIndex, String> {
        let io_error = |error: io::Error| error.to_string();
        let file_len = file.len();
        let head = file.read_vec(0, HEADER_LEN.min(file_len as usize)).map_err(io_error)?;
        let header = Header::decode(&head, file_len)?;
        let read = |section: Section| -> Result<Vec<u8>, String> {
            let len = usize::try_from(section.len).map_err(|_| "section too large".to_string())?;
            file.read_vec(section.offset, len).map_err(io_error)
        };
        let table = read(header.table)?;
        let docs = read(header.docs)?;
        let mut hasher = blake3::Hasher::new();
        let mut reader = file.reader(header.postings.offset, header.postings.offset + header.postings.len);
        let mut chunk = vec![0u8; 1 << 20];
        let mut hashed = 0u64;
        loop {
            let n = reader.read(&mut chunk).map_err(io_error)?;
            if n == 0 {
                break;
            }
            hasher.update(&chunk[..n]);
            hashed += n as u64;
        }
        if hashed != header.postings.len {
            return Err("posting lists are truncated".into());
        }
        let hashes = [blake3::hash(&table), hasher.finalize(), blake3::hash(&docs)];
        if header.checksum_of(&hashes) != header.checksum {
            return Err("checksum mismatch (corrupt or torn file)".into());
        }
        TrigramIndex::validated(Lists::File(file), header, table, &docs)
    }

    /// An index with no documents.
    pub fn empty() -> TrigramIndex {
        let bytes = IndexWriter::new(Cursor::new(Vec::new()), 0)
            .and_then(|writer| writer.finish(&[]))
            .map(Cursor::into_inner)
            .unwrap_or_default();
        let header = Header::decode(&bytes, bytes.len() as u64).unwrap_or(Header::EMPTY);
        TrigramIndex { lists: Lists::Memory(bytes), header, table: Vec::new(), doc_ids: Vec::new() }
    }

    /// Writes the index to `path` atomically, as it is.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let (mut out, file) = AtomicFile::create(path)?;
        match &self.lists {
            Lists::Memory(bytes) => out.write_all(bytes)?,
            Lists::File(source) => {
                io::copy(&mut source.reader(0, self.header.file_len), &mut out)?;
                if !source.still_same() {
                    return Err(corrupt_list(Corrupt));
                }
            }
        }
        file.commit(out)
    }

    /// Validates an index held in memory, checksum included.
    #[cfg(test)]
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<TrigramIndex, String> {
        let header = Header::decode(&bytes, bytes.len() as u64)?;
        let section = |s: Section| &bytes[s.offset as usize..(s.offset + s.len) as usize];
        let (table, postings_bytes, docs_bytes) =
            (section(header.table), section(header.postings), section(header.docs));
        if header.expected_checksum(table, postings_bytes, docs_bytes) != header.checksum {
            return Err("checksum mismatch (corrupt or torn file)".into());
        }
        TrigramIndex::from_bytes_unverified(bytes)
    }

    /// Validates the structure of an index held in memory, trusting its checksum (for bytes
    /// this process just encoded).
    pub(crate) fn from_bytes_unverified(bytes: Vec<u8>) -> Result<TrigramIndex, String> {
        let header = Header::decode(&bytes, bytes.len() as u64)?;
        let section = |s: Section| &bytes[s.offset as usize..(s.offset + s.len) as usize];
        let table = section(header.table).to_vec();
        let docs = section(header.docs).to_vec();
        TrigramIndex::validated(Lists::Memory(bytes), header, table, &docs)
    }

    /// Checks the table (sorted, contiguous, plausible counts) and decodes the doc list.
    fn validated(lists: Lists, header: Header, table: Vec<u8>, docs_bytes: &[u8]) -> Result<TrigramIndex, String> {
        let mut expected_offset = 0u64;
        let mut previous: Option<u32> = None;
        for raw in table.chunks_exact(ENTRY_LEN) {
            let entry = Entry::decode(raw).ok_or("short table entry")?;
            let plausible = previous.is_none_or(|p| p < entry.trigram)
                && entry.trigram < 1 << 24
                && entry.offset == expected_offset
                && entry.doc_count <= header.doc_count
                && u64::from(entry.len) >= u64::from(entry.doc_count)
                && u64::from(entry.len) <= 5 * u64::from(entry.doc_count);
            if !plausible {
                return Err(format!("table entry for trigram {:#08x} is inconsistent", entry.trigram));
            }
            previous = Some(entry.trigram);
            expected_offset += u64::from(entry.len);
        }
        if expected_offset != header.postings.len {
            return Err("posting lists do not fill their section".into());
        }
        let mut doc_ids = Vec::new();
        postings::decode(docs_bytes, header.doc_count, header.doc_id_bound, &mut doc_ids)
            .map_err(|Corrupt| "doc list is corrupt".to_string())?;
        if doc_ids.last().map_or(0, |&last| last + 1) != header.doc_id_bound {
            return Err("doc-id bound does not match the doc list".into());
        }
        Ok(TrigramIndex { lists, header, table, doc_ids })
    }

    /// True once a list could not be read from the file or the file changed under it: the
    /// index answers "every document" from then on, and should be rebuilt.
    pub fn is_damaged(&self) -> bool {
        match &self.lists {
            Lists::Memory(_) => false,
            Lists::File(file) => file.is_damaged() || !file.still_same(),
        }
    }

    /// Rewrites the checksum of `bytes` to match their content when the header decodes, so a
    /// test can damage a file past the checksum and reach the structural checks behind it.
    #[cfg(test)]
    pub(crate) fn reseal(bytes: &mut [u8]) {
        let Ok(header) = Header::decode(bytes, bytes.len() as u64) else { return };
        let section = |s: Section| &bytes[s.offset as usize..(s.offset + s.len) as usize];
        let checksum = header.expected_checksum(section(header.table), section(header.postings), section(header.docs));
        bytes[super::format::CHECKSUM_AT..super::format::CHECKSUM_AT + 16].copy_from_slice(&checksum);
    }

    /// Documents in the index.
    pub fn doc_count(&self) -> u32 {
        self.header.doc_count
    }

    /// Every doc id in the index, sorted.
    pub fn doc_ids(&self) -> &[u32] {
        &self.doc_ids
    }

    /// Whether `doc_id` is in the index.
    pub fn contains_doc(&self, doc_id: u32) -> bool {
        self.doc_ids.binary_search(&doc_id).is_ok()
    }

    /// Distinct trigrams in the index.
    pub fn trigram_count(&self) -> u64 {
        self.header.trigram_count
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.header.file_len
    }

    /// How many documents hold `trigram`.
    pub fn doc_frequency(&self, trigram: u32) -> u32 {
        self.entry(trigram).map_or(0, |entry| entry.doc_count)
    }

    /// The documents holding `trigram`, sorted; an error if its list is corrupt.
    pub fn postings(&self, trigram: u32) -> io::Result<Vec<u32>> {
        let mut out = Vec::new();
        self.postings_into(trigram, &mut out).and_then(|()| self.trusted()).map_err(corrupt_list)?;
        Ok(out)
    }

    /// The candidate documents for `plan`.
    pub fn candidates(&self, plan: &Plan) -> Candidates {
        if *plan == Plan::All {
            return Candidates::All;
        }
        match evaluate(plan, self).and_then(|docs| self.trusted().map(|()| docs)) {
            Ok(docs) => Candidates::Docs(docs),
            // A file damaged since it was opened (or a bug): stay sound regardless.
            Err(Corrupt) => Candidates::All,
        }
    }

    /// Decodes every posting list, checking each against its table entry and the doc-id
    /// bound. Open checks the checksum and the table; this is the exhaustive check.
    pub fn verify(&self) -> io::Result<()> {
        let mut out = Vec::new();
        for index in 0..self.header.trigram_count as usize {
            let entry = self.entry_at(index).ok_or_else(|| corrupt_list(Corrupt))?;
            postings::decode(&self.list_bytes(&entry)?, entry.doc_count, self.header.doc_id_bound, &mut out)
                .map_err(corrupt_list)?;
        }
        self.trusted().map_err(corrupt_list)
    }

    /// Every trigram with its entry, in order (for compaction).
    pub(crate) fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.header.trigram_count as usize).filter_map(|index| self.entry_at(index))
    }

    /// Decodes the list of `entry`. A caller reading from the file asks `trusted` after its
    /// last read.
    pub(crate) fn decode_entry(&self, entry: &Entry, out: &mut Vec<u32>) -> Result<(), Corrupt> {
        let bytes = self.list_bytes(entry).map_err(|_| Corrupt)?;
        postings::decode(&bytes, entry.doc_count, self.header.doc_id_bound, out)
    }

    /// Ok when what was read from the file can be trusted: it has not changed since it was
    /// opened (always, for an index in memory).
    pub(crate) fn trusted(&self) -> Result<(), Corrupt> {
        match &self.lists {
            Lists::File(file) if !file.still_same() => Err(Corrupt),
            _ => Ok(()),
        }
    }

    fn entry_at(&self, index: usize) -> Option<Entry> {
        let start = index * ENTRY_LEN;
        Entry::decode(self.table.get(start..start + ENTRY_LEN)?)
    }

    fn entry(&self, trigram: u32) -> Option<Entry> {
        let (mut low, mut high) = (0usize, self.header.trigram_count as usize);
        while low < high {
            let middle = low + (high - low) / 2;
            let entry = self.entry_at(middle)?;
            match entry.trigram.cmp(&trigram) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(entry),
            }
        }
        None
    }

    /// The bytes of a list, borrowed from memory or read from the file; empty if the entry
    /// points outside the posting section (the table was validated at open, so that would be a
    /// bug, and decoding then reports it); an error when the file cannot give them.
    fn list_bytes(&self, entry: &Entry) -> io::Result<Cow<'_, [u8]>> {
        let start = self.header.postings.offset.saturating_add(entry.offset);
        let end = start.saturating_add(u64::from(entry.len));
        if end > self.header.postings.offset + self.header.postings.len {
            return Ok(Cow::Borrowed(&[]));
        }
        match &self.lists {
            Lists::Memory(bytes) => Ok(Cow::Borrowed(bytes.get(start as usize..end as usize).unwrap_or(&[]))),
            Lists::File(file) => file.read_vec(start, entry.len as usize).map(Cow::Owned),
        }
    }
}

fn corrupt_list(Corrupt: Corrupt) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "trigram index: corrupt posting list; rebuild it")
}

impl PostingSource for TrigramIndex {
    fn doc_frequency(&self, trigram: u32) -> u32 {
        TrigramIndex::doc_frequency(self, trigram)
    }

    fn postings_into(&self, trigram: u32, out: &mut Vec<u32>) -> Result<(), Corrupt> {
        match self.entry(trigram) {
            Some(entry) => self.decode_entry(&entry, out),
            None => {
                out.clear();
                Ok(())
            }
        }
    }

    fn retain_holding(&self, trigram: u32, docs: &mut Vec<u32>) -> Result<(), Corrupt> {
        match self.entry(trigram) {
            Some(entry) => {
                let bytes = self.list_bytes(&entry).map_err(|_| Corrupt)?;
                postings::intersect_encoded(docs, &bytes, entry.doc_count)
            }
            None => {
                docs.clear();
                Ok(())
            }
        }
    }

    fn all_docs(&self) -> Vec<u32> {
        self.doc_ids.clone()
    }
}
