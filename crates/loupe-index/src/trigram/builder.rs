//! Building an index from scratch: documents in, one index file out.
//!
//! Owns the in-memory posting lists of a build. Documents arrive in increasing doc-id order;
//! their (trigram, doc) pairs are batched, radix-sorted by trigram (stable, so doc ids stay
//! increasing) and appended to each trigram's list as delta varints in a block pool: a chain of
//! blocks per trigram, each twice the size of the last up to 32 KiB, inside 4 MiB pages. That
//! keeps memory near the encoded size (no per-list allocation or doubling slack) and turns the
//! random access per posting into one per distinct trigram per batch. Must not compute
//! trigrams (the caller does, in parallel) or read documents.

use std::io::{self, Cursor, Seek, Write};
use std::path::Path;

use super::extract::TRIGRAM_SPACE;
use super::format::{AtomicFile, IndexWriter};
use super::postings::{delta, encode_varint};
use super::reader::TrigramIndex;

/// Accumulates posting lists for documents given in increasing doc-id order, then writes them
/// as one index file.
pub struct IndexBuilder {
    /// For each trigram, 1 + the index of its list in `lists`, or 0. Allocated on first use.
    slot_of: Vec<u32>,
    lists: Vec<ListState>,
    pool: BlockPool,
    /// Pending (trigram << 32 | doc) pairs, in doc order.
    batch: Vec<u64>,
    scratch: Vec<u64>,
    doc_ids: Vec<u32>,
}

/// Pairs gathered before they are sorted and appended (32 MiB, about a thousand source files).
const BATCH_PAIRS: usize = 4 << 20;

impl Default for IndexBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl IndexBuilder {
    pub fn new() -> IndexBuilder {
        IndexBuilder {
            slot_of: Vec::new(),
            lists: Vec::new(),
            pool: BlockPool::default(),
            batch: Vec::new(),
            scratch: Vec::new(),
            doc_ids: Vec::new(),
        }
    }

    /// Adds a document. `trigrams` should be sorted and distinct (as `trigrams_of` makes them);
    /// duplicates are tolerated and values of 2^24 and above are ignored.
    ///
    /// # Panics
    ///
    /// When `doc_id` is not greater than the previous document's: ids must increase.
    pub fn add(&mut self, doc_id: u32, trigrams: &[u32]) {
        if let Some(&last) = self.doc_ids.last() {
            assert!(doc_id > last, "IndexBuilder::add: doc id {doc_id} after {last}; ids must increase");
        }
        self.doc_ids.push(doc_id);
        if self.batch.capacity() == 0 {
            self.batch.reserve(BATCH_PAIRS);
        }
        self.batch.extend(
            trigrams
                .iter()
                .filter(|&&t| (t as usize) < TRIGRAM_SPACE)
                .map(|&t| (u64::from(t) << 32) | u64::from(doc_id)),
        );
        if self.batch.len() >= BATCH_PAIRS {
            self.flush_batch();
        }
    }

    /// Documents added so far.
    pub fn doc_count(&self) -> usize {
        self.doc_ids.len()
    }

    /// Distinct trigrams seen so far (in flushed batches).
    pub fn trigram_count(&self) -> usize {
        self.lists.len()
    }

    /// Bytes of encoded postings so far (in flushed batches).
    pub fn posting_bytes(&self) -> u64 {
        self.lists.iter().map(|list| list.byte_len).sum()
    }

    /// Approximate heap bytes held: the pool, the trigram table and the batch buffers.
    pub fn memory_bytes(&self) -> usize {
        self.pool.pages.len() * PAGE
            + self.slot_of.capacity() * 4
            + self.lists.capacity() * std::mem::size_of::<ListState>()
            + (self.batch.capacity() + self.scratch.capacity()) * 8
            + self.doc_ids.capacity() * 4
    }

    /// Writes the index file at `path` atomically (temporary file in the same directory, then
    /// rename), replacing any file there. The lean path: the lists stream from the pool to the
    /// file.
    pub fn write(self, path: &Path) -> io::Result<()> {
        let (out, file) = AtomicFile::create(path)?;
        let out = self.emit(out)?;
        file.commit(out)
    }

    /// The index in memory, without a file (write it later with [`TrigramIndex::write`] or
    /// through a `LayeredIndex` compaction). Holds the pool and the encoded index at once for a
    /// moment, about twice the index size.
    pub fn finish(self) -> TrigramIndex {
        // Encoding into memory has no IO to fail; the only errors are limits that u32 doc ids
        // cannot reach (a 4 GiB list, 2^32 documents). An empty index instead would silently
        // hide every document, so a failure here is a bug worth stopping for.
        let bytes = self.emit(Cursor::new(Vec::new())).map(Cursor::into_inner).expect("in-memory index encoding");
        TrigramIndex::from_bytes_unverified(bytes).expect("the builder's own encoding validates")
    }

    /// Streams every list, in trigram order, into `out`.
    fn emit<W: Write + Seek>(mut self, out: W) -> io::Result<W> {
        self.flush_batch();
        self.batch = Vec::new();
        self.scratch = Vec::new();
        let mut writer = IndexWriter::new(out, self.lists.len() as u64)?;
        // Lists in trigram order: sorting beats scanning the whole table for small builds.
        if self.lists.len() < TRIGRAM_SPACE / 64 {
            let mut order: Vec<(u32, u32)> =
                self.lists.iter().enumerate().map(|(index, list)| (list.trigram, index as u32)).collect();
            order.sort_unstable();
            for (trigram, index) in order {
                let list = &self.lists[index as usize];
                writer.push_list(trigram, list.doc_count, self.pool.chain(list))?;
            }
        } else {
            for (trigram, &slot) in self.slot_of.iter().enumerate() {
                if slot != 0 {
                    let list = &self.lists[slot as usize - 1];
                    writer.push_list(trigram as u32, list.doc_count, self.pool.chain(list))?;
                }
            }
        }
        writer.finish(&self.doc_ids)
    }

    fn flush_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self.slot_of.is_empty() {
            self.slot_of = vec![0; TRIGRAM_SPACE];
        }
        radix_sort_by_trigram(&mut self.batch, &mut self.scratch);
        let mut start = 0;
        while start < self.batch.len() {
            let trigram = (self.batch[start] >> 32) as usize;
            let mut end = start + 1;
            while end < self.batch.len() && (self.batch[end] >> 32) as usize == trigram {
                end += 1;
            }
            let slot = &mut self.slot_of[trigram];
            if *slot == 0 {
                self.lists.push(ListState::new(trigram as u32, self.pool.allocate(0)));
                *slot = self.lists.len() as u32;
            }
            let list = &mut self.lists[*slot as usize - 1];
            for &pair in &self.batch[start..end] {
                let doc = pair as u32;
                if list.doc_count > 0 && doc <= list.last_doc {
                    continue;
                }
                let mut buffer = [0u8; 5];
                let n = encode_varint(delta((list.doc_count > 0).then_some(list.last_doc), doc), &mut buffer);
                self.pool.append(list, &buffer[..n]);
                list.last_doc = doc;
                list.doc_count += 1;
            }
            start = end;
        }
        self.batch.clear();
    }
}

/// Stable LSD radix sort of (trigram << 32 | doc) pairs by their 24-bit trigram.
fn radix_sort_by_trigram(items: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let mut counts = [[0usize; 256]; 3];
    for &item in items.iter() {
        counts[0][((item >> 32) & 0xFF) as usize] += 1;
        counts[1][((item >> 40) & 0xFF) as usize] += 1;
        counts[2][((item >> 48) & 0xFF) as usize] += 1;
    }
    scratch.clear();
    scratch.resize(items.len(), 0);
    for (pass, shift) in [32u32, 40, 48].into_iter().enumerate() {
        // A pass where every item has the same byte would not move anything.
        if counts[pass].contains(&items.len()) {
            continue;
        }
        let mut offsets = [0usize; 256];
        let mut running = 0;
        for (offset, count) in offsets.iter_mut().zip(counts[pass].iter()) {
            *offset = running;
            running += count;
        }
        for &item in items.iter() {
            let bucket = ((item >> shift) & 0xFF) as usize;
            scratch[offsets[bucket]] = item;
            offsets[bucket] += 1;
        }
        std::mem::swap(items, scratch);
    }
}

/// One trigram's list under construction.
struct ListState {
    trigram: u32,
    /// The first block (in 16-byte units).
    head: u32,
    /// The block being filled, its level, and the bytes used in it.
    tail: u32,
    tail_level: u8,
    tail_used: u16,
    last_doc: u32,
    doc_count: u32,
    byte_len: u64,
}

impl ListState {
    fn new(trigram: u32, head: u32) -> ListState {
        ListState { trigram, head, tail: head, tail_level: 0, tail_used: 0, last_doc: 0, doc_count: 0, byte_len: 0 }
    }
}

const PAGE: usize = 4 << 20;
const UNIT: usize = 16;
const POINTER: usize = 4;
const MAX_LEVEL: u8 = 11;

/// Block size of a level: 16 bytes doubling to 32 KiB; the last 4 bytes of a full block point
/// to the next one.
fn block_size(level: u8) -> usize {
    UNIT << level
}

/// Pages of blocks; an address is a byte offset over all pages in 16-byte units, so a `u32`
/// reaches 64 GiB.
#[derive(Default)]
struct BlockPool {
    pages: Vec<Box<[u8]>>,
    used_in_last: usize,
}

impl BlockPool {
    fn allocate(&mut self, level: u8) -> u32 {
        let size = block_size(level);
        if self.pages.is_empty() || self.used_in_last + size > PAGE {
            self.pages.push(vec![0u8; PAGE].into_boxed_slice());
            self.used_in_last = 0;
        }
        let address = (self.pages.len() - 1) * PAGE + self.used_in_last;
        self.used_in_last += size;
        (address / UNIT) as u32
    }

    fn block_mut(&mut self, address: u32, level: u8) -> &mut [u8] {
        let byte = address as usize * UNIT;
        &mut self.pages[byte / PAGE][byte % PAGE..byte % PAGE + block_size(level)]
    }

    fn block(&self, address: u32, level: u8) -> &[u8] {
        let byte = address as usize * UNIT;
        &self.pages[byte / PAGE][byte % PAGE..byte % PAGE + block_size(level)]
    }

    fn append(&mut self, list: &mut ListState, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let capacity = block_size(list.tail_level) - POINTER;
            if list.tail_used as usize == capacity {
                let level = (list.tail_level + 1).min(MAX_LEVEL);
                let next = self.allocate(level);
                let (tail, tail_level) = (list.tail, list.tail_level);
                self.block_mut(tail, tail_level)[capacity..].copy_from_slice(&next.to_le_bytes());
                list.tail = next;
                list.tail_level = level;
                list.tail_used = 0;
                continue;
            }
            let used = list.tail_used as usize;
            let take = bytes.len().min(capacity - used);
            let (tail, tail_level) = (list.tail, list.tail_level);
            self.block_mut(tail, tail_level)[used..used + take].copy_from_slice(&bytes[..take]);
            list.tail_used += take as u16;
            list.byte_len += take as u64;
            bytes = &bytes[take..];
        }
    }

    /// The encoded bytes of a list, block by block.
    fn chain<'a>(&'a self, list: &ListState) -> impl Iterator<Item = &'a [u8]> + 'a {
        let mut remaining = list.byte_len;
        let mut block = list.head;
        let mut level = 0u8;
        std::iter::from_fn(move || {
            if remaining == 0 {
                return None;
            }
            let capacity = block_size(level) - POINTER;
            let bytes = self.block(block, level);
            let take = (remaining as usize).min(capacity);
            remaining -= take as u64;
            if remaining > 0 {
                block = u32::from_le_bytes([
                    bytes[capacity],
                    bytes[capacity + 1],
                    bytes[capacity + 2],
                    bytes[capacity + 3],
                ]);
                level = (level + 1).min(MAX_LEVEL);
            }
            Some(&bytes[..take])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_is_stable_by_trigram() {
        let mut items: Vec<u64> =
            (0..10_000u64).map(|doc| (((doc * 7919) % 5000 * 3001 % (1 << 24)) << 32) | doc).collect();
        let mut expected = items.clone();
        expected.sort_by_key(|item| item >> 32);
        radix_sort_by_trigram(&mut items, &mut Vec::new());
        assert_eq!(items, expected);
    }

    #[test]
    fn chains_round_trip_across_block_boundaries() {
        let mut pool = BlockPool::default();
        let mut lists: Vec<ListState> = (0..3).map(|t| ListState::new(t, pool.allocate(0))).collect();
        let mut expected: Vec<Vec<u8>> = vec![Vec::new(); 3];
        for i in 0..200_000u32 {
            let which = (i % 7 % 3) as usize;
            let byte = [(i % 251) as u8];
            pool.append(&mut lists[which], &byte);
            expected[which].push(byte[0]);
        }
        for (list, expected) in lists.iter().zip(&expected) {
            let bytes: Vec<u8> = pool.chain(list).flatten().copied().collect();
            assert_eq!(&bytes, expected);
        }
    }
}
