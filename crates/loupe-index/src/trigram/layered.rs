//! Updates without a rebuild: the base file, an in-memory overlay of documents added or changed
//! since, and tombstones for base documents that are gone or changed.
//!
//! Owns the layering rule (a doc id is answered by the overlay if it is there, else by the base
//! unless tombstoned) and compaction into a new base file. Must not read documents or decide
//! when to compact: the caller does both.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use super::Candidates;
use super::eval::{PostingSource, evaluate};
use super::extract::TRIGRAM_SPACE;
use super::format::{AtomicFile, IndexWriter};
use super::plan::Plan;
use super::postings::{self, Corrupt, union};
use super::reader::TrigramIndex;

/// In-memory postings of the documents added or changed since the base was written.
#[derive(Debug, Default, Clone)]
pub struct Overlay {
    /// Each document's sorted trigrams (to undo its postings when it changes again).
    docs: HashMap<u32, Vec<u32>>,
    /// Each trigram's sorted documents.
    postings: HashMap<u32, Vec<u32>>,
    posting_count: usize,
}

impl Overlay {
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Sets the trigrams of `doc_id` (sorted and distinct, as `trigrams_of` makes them),
    /// replacing what it had.
    pub fn upsert(&mut self, doc_id: u32, trigrams: &[u32]) {
        self.remove(doc_id);
        let mut own: Vec<u32> = trigrams.iter().copied().filter(|&t| (t as usize) < TRIGRAM_SPACE).collect();
        own.sort_unstable();
        own.dedup();
        for &trigram in &own {
            let list = self.postings.entry(trigram).or_default();
            if let Err(at) = list.binary_search(&doc_id) {
                list.insert(at, doc_id);
            }
        }
        self.posting_count += own.len();
        self.docs.insert(doc_id, own);
    }

    /// Forgets `doc_id`; whether it was there.
    pub fn remove(&mut self, doc_id: u32) -> bool {
        let Some(old) = self.docs.remove(&doc_id) else { return false };
        for trigram in &old {
            if let Some(list) = self.postings.get_mut(trigram) {
                if let Ok(at) = list.binary_search(&doc_id) {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.postings.remove(trigram);
                }
            }
        }
        self.posting_count -= old.len();
        true
    }

    /// Documents in the overlay.
    pub fn doc_count(&self) -> usize {
        self.docs.len()
    }

    /// (trigram, doc) pairs in the overlay: the measure of its memory and query cost.
    pub fn posting_count(&self) -> usize {
        self.posting_count
    }

    pub fn contains_doc(&self, doc_id: u32) -> bool {
        self.docs.contains_key(&doc_id)
    }

    /// The overlay's documents, sorted.
    pub fn doc_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.docs.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    pub fn candidates(&self, plan: &Plan) -> Candidates {
        if *plan == Plan::All {
            return Candidates::All;
        }
        match evaluate(plan, self) {
            Ok(docs) => Candidates::Docs(docs),
            Err(Corrupt) => Candidates::All,
        }
    }

    fn list(&self, trigram: u32) -> &[u32] {
        self.postings.get(&trigram).map_or(&[], Vec::as_slice)
    }
}

impl PostingSource for Overlay {
    fn doc_frequency(&self, trigram: u32) -> u32 {
        self.list(trigram).len() as u32
    }

    fn postings_into(&self, trigram: u32, out: &mut Vec<u32>) -> Result<(), Corrupt> {
        out.clear();
        out.extend_from_slice(self.list(trigram));
        Ok(())
    }

    fn retain_holding(&self, trigram: u32, docs: &mut Vec<u32>) -> Result<(), Corrupt> {
        *docs = postings::intersect(docs, self.list(trigram));
        Ok(())
    }

    fn all_docs(&self) -> Vec<u32> {
        self.doc_ids()
    }
}

/// Base doc ids that no longer answer from the base: a bitset over the base's doc-id range.
#[derive(Debug, Default, Clone)]
struct Tombstones {
    words: Vec<u64>,
    count: usize,
}

impl Tombstones {
    fn insert(&mut self, doc_id: u32) {
        let word = doc_id as usize / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let bit = 1u64 << (doc_id % 64);
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.count += 1;
        }
    }

    fn contains(&self, doc_id: u32) -> bool {
        self.words.get(doc_id as usize / 64).is_some_and(|word| word & (1u64 << (doc_id % 64)) != 0)
    }
}

/// The base index plus the overlay and tombstones: what queries are answered from while the
/// repository changes under a running server.
#[derive(Debug, Default)]
pub struct LayeredIndex {
    base: Option<TrigramIndex>,
    overlay: Overlay,
    tombstones: Tombstones,
}

impl LayeredIndex {
    /// Layers over `base` (none: everything lives in the overlay).
    pub fn new(base: Option<TrigramIndex>) -> LayeredIndex {
        LayeredIndex { base, overlay: Overlay::new(), tombstones: Tombstones::default() }
    }

    /// Sets the content of `doc_id` (new or changed) to the given sorted trigrams.
    pub fn upsert(&mut self, doc_id: u32, trigrams: &[u32]) {
        self.tombstone_in_base(doc_id);
        self.overlay.upsert(doc_id, trigrams);
    }

    /// Removes `doc_id` from the index.
    pub fn remove(&mut self, doc_id: u32) {
        self.tombstone_in_base(doc_id);
        self.overlay.remove(doc_id);
    }

    /// The documents that may match `plan`.
    pub fn candidates(&self, plan: &Plan) -> Candidates {
        if *plan == Plan::All {
            return Candidates::All;
        }
        self.evaluate(plan).map_or(Candidates::All, Candidates::Docs)
    }

    /// True when the base file was damaged under the running index: it answers "every
    /// document" until a rebuild replaces it.
    pub fn base_damaged(&self) -> bool {
        self.base.as_ref().is_some_and(TrigramIndex::is_damaged)
    }

    pub fn base(&self) -> Option<&TrigramIndex> {
        self.base.as_ref()
    }

    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    /// Documents in the overlay (added or changed since the base was written): compact when
    /// this grows.
    pub fn overlay_docs(&self) -> usize {
        self.overlay.doc_count()
    }

    /// Base documents hidden by a removal or a change.
    pub fn tombstone_count(&self) -> usize {
        self.tombstones.count
    }

    /// Every live doc id, sorted.
    pub fn doc_ids(&self) -> Vec<u32> {
        let base: Vec<u32> = self
            .base
            .as_ref()
            .map(|base| base.doc_ids().iter().copied().filter(|&doc| !self.tombstones.contains(doc)).collect())
            .unwrap_or_default();
        union(&base, &self.overlay.doc_ids())
    }

    /// Writes base, overlay and tombstones folded together as a new index file at `path`
    /// (atomically). Open it and start a new `LayeredIndex` over it, or call
    /// [`LayeredIndex::compact_in_place`].
    pub fn compact(&self, path: &Path) -> io::Result<()> {
        if let Some(base) = &self.base
            && self.overlay.doc_count() == 0
            && self.tombstones.count == 0
        {
            return base.write(path);
        }
        let base_entries: Vec<_> = self.base.iter().flat_map(|base| base.entries()).collect();
        let mut overlay_trigrams: Vec<u32> = self.overlay.postings.keys().copied().collect();
        overlay_trigrams.sort_unstable();
        let all_trigrams =
            union(&base_entries.iter().map(|entry| entry.trigram).collect::<Vec<_>>(), &overlay_trigrams);
        let (out, file) = AtomicFile::create(path)?;
        let mut writer = IndexWriter::new(out, all_trigrams.len() as u64)?;
        let mut entries = base_entries.iter().peekable();
        let (mut base_docs, mut merged, mut encoded) = (Vec::new(), Vec::new(), Vec::new());
        for &trigram in &all_trigrams {
            base_docs.clear();
            if let Some(entry) = entries.next_if(|entry| entry.trigram == trigram)
                && let Some(base) = &self.base
            {
                base.decode_entry(entry, &mut base_docs).and_then(|()| base.trusted()).map_err(|Corrupt| {
                    io::Error::new(io::ErrorKind::InvalidData, "trigram index: corrupt posting list; rebuild it")
                })?;
                base_docs.retain(|&doc| !self.tombstones.contains(doc));
            }
            merged.clear();
            merged.extend(union(&base_docs, self.overlay.list(trigram)));
            encoded.clear();
            postings::encode(&merged, &mut encoded);
            writer.push_list(trigram, merged.len() as u32, [encoded.as_slice()])?;
        }
        let out = writer.finish(&self.doc_ids())?;
        file.commit(out)
    }

    /// Compacts into `path`, then continues over the new file with an empty overlay.
    pub fn compact_in_place(&mut self, path: &Path) -> io::Result<()> {
        self.compact(path)?;
        *self = LayeredIndex::new(Some(TrigramIndex::open(path)?));
        Ok(())
    }

    fn tombstone_in_base(&mut self, doc_id: u32) {
        if self.base.as_ref().is_some_and(|base| base.contains_doc(doc_id)) {
            self.tombstones.insert(doc_id);
        }
    }

    /// Each layer answers for its own documents, so the plan is evaluated per layer: a doc's
    /// trigrams are never mixed across layers.
    fn evaluate(&self, plan: &Plan) -> Result<Vec<u32>, Corrupt> {
        let mut base_docs = match &self.base {
            Some(base) => evaluate(plan, base)?,
            None => Vec::new(),
        };
        if self.tombstones.count > 0 {
            base_docs.retain(|&doc| !self.tombstones.contains(doc));
        }
        if self.overlay.doc_count() == 0 {
            return Ok(base_docs);
        }
        Ok(union(&base_docs, &evaluate(plan, &self.overlay)?))
    }
}
