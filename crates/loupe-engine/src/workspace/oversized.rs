//! Files over the index's size limit, which every text search scans itself (§7: never
//! "nothing" where the index does not look), each summarised by a small filter per chunk of
//! about 64 KiB (a Bloom filter of the chunk's trigrams and 4-grams), so later searches skip the
//! files that cannot hold a match and read only the chunks of the others that can.
//!
//! Summarising is never done on a search's path: on Linux it is seconds of CPU (424 MB), and a
//! search that met the files unsummarised while the server's own pass ran did the same work
//! again (a 35 s search under load). One background learner does it: once the index is ready
//! (`learn_in_background` from the server's indexing thread), and again whenever a search met a
//! file without a current filter (changed since, or not yet summarised); the search itself
//! scans such a file.
//!
//! Linux 6.12 has 102 such files (424 MB of generated register headers): scanning them all made
//! every text search cost 60–150 ms whatever it looked for. One filter per file still let a
//! common identifier through (its 4-grams are all somewhere in a 20 MB header: `list_add`
//! passed 51 files, 276 MB), where its 64 KiB chunks let none through; chunks bound what a
//! search reads, not only which files. A filter is keyed by the file's size and modification
//! time as the descriptor showed them before the bytes it summarises were read, so a file
//! changed since is scanned whole (and summarised) again; a chunk skipped lacks a gram every
//! match needs (a match is within a line, and chunks end at line ends), as the index's own
//! candidates do.
//!
//! The filters outlive the server: the learner writes them to `oversized.bin` beside the index
//! (the index's writer only) and the next server's learner starts from that file, so only the
//! first session on a tree pays for summarising, and its searches scan meanwhile. The file is a
//! cache: a damaged, foreign or stale one is ignored (each filter still answers only for the
//! size and mtime it was made from).
//!
//! Must stay bounded: at most `MAX_FILTER_BYTES` per file, and in all `MIN_TOTAL_BYTES` or a
//! `TOTAL_SHARE`th of the bytes the filters summarise, whichever is more (a fixed total had a
//! tree four times Linux's scan the files whose filters did not fit, and its searches grew six
//! times as slow).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use loupe_core::{ContentHash, RepoPath};
use loupe_index::trigram::{Plan, trigrams_of};
use loupe_vfs::Stamp;
use rustc_hash::{FxHashMap, FxHashSet};

/// The largest filter of one file (a file with more varied text is always scanned).
const MAX_FILTER_BYTES: usize = 4 << 20;
/// What the filters of all oversized files may hold together, at the least.
const MIN_TOTAL_BYTES: usize = 32 << 20;
/// ... and past that floor, this share of the bytes they summarise (Linux's take a 23rd: 18.6 MB
/// for 424 MB).
const TOTAL_SHARE: u64 = 16;
/// A chunk ends at the first line end at or after this many bytes (or the file's end). Linux's
/// register headers: 4-grams of a typical identifier pass 0–0.7 MB of their 64 KiB chunks and
/// 4–8 MB of 256 KiB ones, for 11.4 M and 6.0 M distinct (chunk, 4-gram) pairs.
const CHUNK_BYTES: usize = 64 << 10;
/// Bloom filter bits per distinct gram of a chunk, and the bits each gram sets: a gram the
/// chunk lacks passes 2.4 % of the time, and a query passes a chunk only when every gram it
/// needs does.
const BITS_PER_GRAM: usize = 8;
const PROBES: u64 = 4;

/// The file in the index directory the filters are kept in between servers.
const FILE_NAME: &str = "oversized.bin";
/// Its first bytes (the format's version is the digit).
const MAGIC: &[u8; 8] = b"LOUPEOV2";

/// The filters of the oversized files, by path, and the one learner that makes them.
#[derive(Debug, Default, Clone)]
pub(crate) struct OversizedFilters {
    filters: Arc<Mutex<FxHashMap<RepoPath, Filter>>>,
    /// The background learner runs (at most one at a time).
    learning: Arc<AtomicBool>,
    /// A search met a file without a current filter while the learner ran: it runs once more.
    again: Arc<AtomicBool>,
    /// The filters kept in the index directory were read (the learner's first step).
    loaded: Arc<AtomicBool>,
    /// Files this server summarised itself (not read from the kept filters).
    learned: Arc<AtomicUsize>,
    /// Spans searches read alone (`Check::Scan` with spans), rather than their whole file.
    spans_read: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct Filter {
    /// (size, mtime ns) of the file when the bytes summarised were read.
    stamp: Stamp,
    /// The hash of those bytes: a hit read from a chunk alone names the whole file's hash.
    hash: ContentHash,
    /// The chunks are byte ranges of the file as it is on disk (plain UTF-8 with `\n` line
    /// ends, read in place by the search), not of its decoded text (a search that passes one
    /// then reads the whole file).
    ranged: bool,
    /// In order; empty when the file holds no text (a search finds nothing in it).
    chunks: Vec<Chunk>,
    /// The chunks' Bloom filters, one after another.
    words: Vec<u64>,
    /// The file could not be summarised within the bounds: every search scans it (until it
    /// changes), and the learner does not try it again.
    always_scan: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    /// Its first byte, and the 1-based number of its first line.
    start: u64,
    first_line: u64,
    /// Where its Bloom filter ends in `Filter::words` (it starts where the previous one ends).
    words_end: u32,
}

impl Filter {
    fn always_scan(stamp: Stamp, hash: ContentHash) -> Filter {
        Filter { stamp, hash, ranged: false, chunks: Vec::new(), words: Vec::new(), always_scan: true }
    }

    /// The chunks that may hold a match of `plan` (and of `literal`, lowercased ASCII), as
    /// ranges of the file's bytes (adjacent ones joined), each with its first line's number.
    fn passing(&self, plan: &Plan, literal: Option<&[u8]>) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        let mut words_start = 0;
        for (index, chunk) in self.chunks.iter().enumerate() {
            let bloom = Bloom(&self.words[words_start..chunk.words_end as usize]);
            words_start = chunk.words_end as usize;
            let passes = plan.may_match(&|trigram| bloom.has(trigram_key(trigram)))
                && literal.is_none_or(|literal| literal.windows(4).all(|window| bloom.has(quadgram_key(window))));
            if !passes {
                continue;
            }
            let end = self.chunks.get(index + 1).map_or(self.stamp.0, |next| next.start);
            match spans.last_mut() {
                Some(last) if last.end == chunk.start => last.end = end,
                _ => spans.push(Span { start: chunk.start, end, first_line: chunk.first_line as usize }),
            }
        }
        spans
    }

    fn bytes(&self) -> usize {
        self.words.len() * 8 + self.chunks.len() * std::mem::size_of::<Chunk>()
    }
}

/// A range of a file's bytes that starts a line, and that line's 1-based number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) first_line: usize,
}

/// Where in a file a search must look, when its filter says it can only be some chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spans {
    /// The file as summarised: what it must still be for the spans to hold.
    pub(crate) stamp: Stamp,
    pub(crate) hash: ContentHash,
    pub(crate) spans: Vec<Span>,
}

/// One chunk's Bloom filter.
struct Bloom<'a>(&'a [u64]);

impl Bloom<'_> {
    fn bits(&self) -> u64 {
        self.0.len() as u64 * 64
    }

    fn has(&self, key: u64) -> bool {
        probes(key, self.bits()).all(|bit| self.0[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }
}

/// The bits `key` sets in a filter of `bits` bits (double hashing of one 64-bit mix).
fn probes(key: u64, bits: u64) -> impl Iterator<Item = u64> {
    let mut mixed = key;
    mixed ^= mixed >> 30;
    mixed = mixed.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed ^= mixed >> 27;
    mixed = mixed.wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^= mixed >> 31;
    let (first, step) = (mixed & 0xffff_ffff, (mixed >> 32) | 1);
    (0..PROBES).map(move |probe| first.wrapping_add(probe.wrapping_mul(step)) % bits)
}

/// A trigram (as the index packs it) and a 4-gram as Bloom keys, apart from each other.
fn trigram_key(trigram: u32) -> u64 {
    u64::from(trigram) | 1 << 40
}

fn quadgram_key(window: &[u8]) -> u64 {
    let packed = u32::from_be_bytes([
        window[0].to_ascii_lowercase(),
        window[1].to_ascii_lowercase(),
        window[2].to_ascii_lowercase(),
        window[3].to_ascii_lowercase(),
    ]);
    u64::from(packed) | 2 << 40
}

/// What a search does with one oversized file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Its current filter rules the plan out.
    Skip,
    /// Its current filter lets the plan through: scan it, only `Spans` when given (the file
    /// must still have their stamp; else it is read whole).
    Scan(Option<Spans>),
    /// No current filter: scan it, and have the learner summarise it (`learn_in_background`).
    ScanAndLearn,
}

impl OversizedFilters {
    /// What to do with the file as it is now (`stamp`, `None` when it cannot be read), for a
    /// search planned as `plan`; `literal`: the text a literal search looks for (any case).
    pub(crate) fn check(&self, path: &RepoPath, stamp: Option<Stamp>, plan: &Plan, literal: Option<&str>) -> Check {
        let filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        match (filters.get(path), stamp) {
            (Some(filter), Some(stamp)) if filter.stamp == stamp && filter.always_scan => Check::Scan(None),
            (Some(filter), Some(stamp)) if filter.stamp == stamp => {
                // ASCII only: 4-grams are lowercased bytewise, so a non-ASCII literal searched
                // in any case could match bytes its own 4-grams do not show.
                let literal = literal.filter(|literal| literal.is_ascii()).map(str::as_bytes);
                let spans = filter.passing(plan, literal);
                match (spans.is_empty(), filter.ranged) {
                    (true, _) => Check::Skip,
                    (false, true) => Check::Scan(Some(Spans { stamp, hash: filter.hash.clone(), spans })),
                    (false, false) => Check::Scan(None),
                }
            }
            _ => Check::ScanAndLearn,
        }
    }

    /// Summarises `bytes`, the content of `path` read when it had `stamp`, keeping the filter
    /// when it fits in `budget` with the others.
    fn learn(&self, path: &RepoPath, stamp: Stamp, bytes: &[u8], budget: usize) {
        let filter = Self::summarise(stamp, bytes, CHUNK_BYTES, MAX_FILTER_BYTES)
            .unwrap_or_else(|| Filter::always_scan(stamp, ContentHash::of(bytes)));
        let mut filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        let held: usize = filters.iter().filter(|(known, _)| *known != path).map(|(_, filter)| filter.bytes()).sum();
        let filter =
            if held + filter.bytes() <= budget { filter } else { Filter::always_scan(stamp, filter.hash.clone()) };
        filters.insert(path.clone(), filter);
    }

    /// The filter of `bytes` in chunks of about `chunk_bytes`, or `None` when it would be over
    /// `max_bytes`. Text that is not plain UTF-8 is summarised as decoded (its chunks are not
    /// ranges of the file); bytes that are not text have no chunks (a search finds nothing in
    /// them).
    fn summarise(stamp: Stamp, bytes: &[u8], chunk_bytes: usize, max_bytes: usize) -> Option<Filter> {
        let hash = ContentHash::of(bytes);
        let decoded;
        let (text, ranged): (&[u8], bool) = match loupe_core::text::plain_text(bytes) {
            Some(text) => (text.as_bytes(), true),
            None => match loupe_core::text::decode(bytes) {
                Ok(text) => {
                    decoded = text.text;
                    (decoded.as_bytes(), false)
                }
                Err(_) => (&[], false),
            },
        };
        let mut filter = Filter { stamp, hash, ranged, chunks: Vec::new(), words: Vec::new(), always_scan: false };
        let (mut trigrams, mut quadgrams) = (Vec::new(), FxHashSet::default());
        let (mut start, mut first_line) = (0, 1);
        while start < text.len() {
            let cut = (start + chunk_bytes).min(text.len());
            let end = memchr::memchr(b'\n', &text[cut.saturating_sub(1)..]).map_or(text.len(), |at| cut + at);
            let chunk = &text[start..end];
            trigrams_of(chunk, &mut trigrams);
            quadgrams.clear();
            quadgrams.extend(chunk.windows(4).map(quadgram_key));
            let grams = trigrams.len() + quadgrams.len();
            let words = (grams * BITS_PER_GRAM).div_ceil(64).max(1);
            let from = filter.words.len();
            filter.words.resize(from + words, 0);
            let bloom = &mut filter.words[from..];
            let bits = words as u64 * 64;
            for key in trigrams.iter().map(|&trigram| trigram_key(trigram)).chain(quadgrams.iter().copied()) {
                for bit in probes(key, bits) {
                    bloom[(bit / 64) as usize] |= 1 << (bit % 64);
                }
            }
            let words_end = u32::try_from(filter.words.len()).ok()?;
            filter.chunks.push(Chunk { start: start as u64, first_line, words_end });
            if filter.bytes() > max_bytes {
                return None;
            }
            first_line += memchr::memchr_iter(b'\n', chunk).count() as u64;
            start = end;
        }
        filter.words.shrink_to_fit();
        filter.chunks.shrink_to_fit();
        Some(filter)
    }

    /// What the filters may hold together on a tree whose oversized files (within the read
    /// limit) are `oversized`.
    fn budget(index: &loupe_index::Index, read_limit: u64) -> usize {
        let summarised: u64 =
            index.oversized().iter().filter(|entry| entry.size <= read_limit).map(|entry| entry.size).sum();
        MIN_TOTAL_BYTES.max(usize::try_from(summarised / TOTAL_SHARE).unwrap_or(usize::MAX))
    }

    /// Summarises, on a thread of its own, every file over the index's size limit that has no
    /// current filter; when the learner already runs, it makes one more pass after this one.
    pub(crate) fn learn_in_background(&self, root: &loupe_vfs::Root, index: &Arc<loupe_index::Index>, read_limit: u64) {
        self.again.store(true, Ordering::Release);
        if self.learning.swap(true, Ordering::AcqRel) {
            return;
        }
        let (filters, root, index) = (self.clone(), root.clone(), Arc::clone(index));
        let spawned = std::thread::Builder::new().name("loupe-oversized".into()).spawn(move || {
            // The lowest priority (on Linux `setpriority` of 0 is the calling thread): a search
            // that starts while it runs takes the cores, as the learner works for later ones.
            #[cfg(target_os = "linux")]
            let _ = rustix::process::setpriority_process(None, 19);
            filters.load_kept(&index, read_limit);
            loop {
                while filters.again.swap(false, Ordering::AcqRel) {
                    if filters.prime(&root, &index, read_limit) > 0 {
                        filters.save(&index);
                    }
                }
                filters.learning.store(false, Ordering::Release);
                // A request that came after the last pass and before the flag fell is served
                // here, unless another learner took it up.
                if !filters.again.load(Ordering::Acquire) || filters.learning.swap(true, Ordering::AcqRel) {
                    break;
                }
            }
        });
        if spawned.is_err() {
            self.learning.store(false, Ordering::Release);
        }
    }

    /// Summarises every file over the index's size limit that has no current filter; how many
    /// it summarised (or marked to be scanned).
    fn prime(&self, root: &loupe_vfs::Root, index: &loupe_index::Index, read_limit: u64) -> usize {
        let budget = Self::budget(index, read_limit);
        let mut learned = 0;
        let mut bytes = Vec::new();
        for (path, _) in self.without_current_filter(root, index, read_limit) {
            // The stamp the descriptor showed before the bytes were read: a file changed
            // during the read has another one by the time a search checks it.
            let Ok(Some(stamp)) = root.read_indexed_stamped(&path, read_limit, &mut bytes) else {
                continue;
            };
            self.learn(&path, stamp, &bytes, budget);
            self.learned.fetch_add(1, Ordering::Relaxed);
            learned += 1;
        }
        learned
    }

    /// How many files over the index's size limit (and within the read limit) have no current
    /// filter: what searches scan until the learner is done with them.
    pub(crate) fn pending(&self, root: &loupe_vfs::Root, index: &loupe_index::Index, read_limit: u64) -> usize {
        self.without_current_filter(root, index, read_limit).len()
    }

    /// The files over the index's size limit, within the read limit, that have no current
    /// filter, each with its stamp as it is now (`None`: it cannot be read).
    fn without_current_filter(
        &self,
        root: &loupe_vfs::Root,
        index: &loupe_index::Index,
        read_limit: u64,
    ) -> Vec<(RepoPath, Option<Stamp>)> {
        index
            .oversized()
            .into_iter()
            .filter(|entry| entry.size <= read_limit)
            .map(|entry| {
                let stamp = root.stamp_indexed(&entry.path);
                (entry.path, stamp)
            })
            .filter(|(path, stamp)| self.check(path, *stamp, &Plan::All, None) == Check::ScanAndLearn)
            .collect()
    }

    /// Takes the kept filters (`load`) once per workspace, before the first search checks a file
    /// against them: reading them back costs a few milliseconds where scanning the files they
    /// summarise costs seconds (a `loupe search` from the command line, which ends before any
    /// learner would have loaded them, scanned all 424 MB of Linux's such files).
    pub(crate) fn load_kept(&self, index: &loupe_index::Index, read_limit: u64) {
        if !self.loaded.swap(true, Ordering::AcqRel) {
            self.load(index, read_limit);
        }
    }

    /// Takes the filters kept in the index directory, for files that have none here yet.
    fn load(&self, index: &loupe_index::Index, read_limit: u64) {
        let budget = Self::budget(index, read_limit);
        let Some(bytes) = index.read_side_file(FILE_NAME, budget as u64 * 2) else { return };
        let Some(kept) = decode(&bytes) else {
            tracing::debug!("{FILE_NAME} is damaged or from another version; summarising again");
            return;
        };
        let mut filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut held: usize = filters.values().map(Filter::bytes).sum();
        for (path, filter) in kept {
            if held + filter.bytes() <= budget && !filters.contains_key(&path) {
                held += filter.bytes();
                filters.insert(path, filter);
            }
        }
    }

    /// Writes the filters to the index directory (when this server is the index's writer),
    /// forgetting those of files no longer over the index's size limit (gone, or shrunk).
    fn save(&self, index: &loupe_index::Index) {
        let oversized: std::collections::HashSet<RepoPath> =
            index.oversized().into_iter().map(|entry| entry.path).collect();
        let bytes = {
            let mut filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
            filters.retain(|path, _| oversized.contains(path));
            encode(&filters)
        };
        if let Err(error) = index.write_side_file(FILE_NAME, &bytes) {
            tracing::debug!("cannot keep the filters of oversized files: {error}");
        }
    }

    /// Files this server summarised itself since it started.
    pub(crate) fn learned(&self) -> usize {
        self.learned.load(Ordering::Relaxed)
    }

    /// A search read `count` spans alone.
    pub(crate) fn read_spans(&self, count: usize) {
        self.spans_read.fetch_add(count, Ordering::Relaxed);
    }

    /// Spans searches read alone since the server started.
    pub(crate) fn spans_read(&self) -> usize {
        self.spans_read.load(Ordering::Relaxed)
    }

    /// Files summarised, and the bytes their filters hold.
    pub(crate) fn size(&self) -> (usize, usize) {
        let filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        (filters.values().filter(|filter| !filter.always_scan).count(), filters.values().map(Filter::bytes).sum())
    }
}

/// The filters as `oversized.bin` holds them: `MAGIC`, then per file its path, stamp, flags,
/// hash, chunks and Bloom words (little-endian, each count before its items), then the body's
/// hash.
fn encode(filters: &FxHashMap<RepoPath, Filter>) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let mut sorted: Vec<(&RepoPath, &Filter)> = filters.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    out.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for (path, filter) in sorted {
        out.extend_from_slice(&(path.as_str().len() as u32).to_le_bytes());
        out.extend_from_slice(path.as_str().as_bytes());
        out.extend_from_slice(&filter.stamp.0.to_le_bytes());
        out.extend_from_slice(&filter.stamp.1.to_le_bytes());
        out.push(u8::from(filter.always_scan) | u8::from(filter.ranged) << 1);
        out.extend_from_slice(filter.hash.as_str().as_bytes());
        out.extend_from_slice(&(filter.chunks.len() as u32).to_le_bytes());
        for chunk in &filter.chunks {
            out.extend_from_slice(&chunk.start.to_le_bytes());
            out.extend_from_slice(&chunk.first_line.to_le_bytes());
            out.extend_from_slice(&chunk.words_end.to_le_bytes());
        }
        out.extend_from_slice(&(filter.words.len() as u32).to_le_bytes());
        for word in &filter.words {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    seal(&mut out);
    out
}

/// Ends `body` with its hash and the hash's length, as `decode` checks them.
fn seal(body: &mut Vec<u8>) {
    let hash = loupe_core::ContentHash::of(body);
    body.extend_from_slice(hash.as_str().as_bytes());
    body.extend_from_slice(&(hash.as_str().len() as u32).to_le_bytes());
}

/// For the fuzz harness (`crate::fuzz`): a kept file's body (before its hash) holding two
/// filters, and the number of filters `decode` reads from `body` once sealed with its hash (so
/// damage reaches the structure's checks, not only the hash's).
#[cfg(test)]
pub(crate) mod for_fuzz {
    pub(crate) fn sample_body() -> Vec<u8> {
        let text: String = (0..50).map(|n| format!("#define REG_{n}_MASK 0x{n:x}\n")).collect();
        let mut filters = super::FxHashMap::default();
        let summary =
            super::OversizedFilters::summarise((text.len() as u64, 9), text.as_bytes(), 200, super::MAX_FILTER_BYTES);
        filters.insert(super::RepoPath::normalize("big/regs.h").unwrap(), summary.unwrap());
        let hash = super::ContentHash::of(b"huge");
        filters.insert(
            super::RepoPath::normalize("gen/huge.json").unwrap(),
            super::Filter::always_scan((5 << 20, 3), hash),
        );
        let mut bytes = super::encode(&filters);
        let hash_len = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap()) as usize;
        bytes.truncate(bytes.len() - 4 - hash_len);
        bytes
    }

    pub(crate) fn decode_sealed(body: &[u8]) -> Option<usize> {
        let mut bytes = body.to_vec();
        super::seal(&mut bytes);
        super::decode(&bytes).map(|filters| filters.len())
    }

    pub(crate) fn decode_raw(bytes: &[u8]) -> Option<usize> {
        super::decode(bytes).map(|filters| filters.len())
    }
}

/// What `encode` wrote, or `None` for anything else: every count is checked against the bytes
/// that remain before anything is allocated, chunks must run forwards within the file (a search
/// reads their ranges) with at least one Bloom word each, ending where the words do, and the
/// hash must match.
fn decode(bytes: &[u8]) -> Option<Vec<(RepoPath, Filter)>> {
    let (rest, hash_len) = bytes.split_last_chunk::<4>()?;
    let hash_len = u32::from_le_bytes(*hash_len) as usize;
    let (body, hash) = rest.split_at_checked(rest.len().checked_sub(hash_len)?)?;
    if loupe_core::ContentHash::of(body).as_str().as_bytes() != hash {
        return None;
    }
    let mut reader = Reader { bytes: body.strip_prefix(MAGIC)? };
    let count = reader.u32()? as usize;
    let mut filters = Vec::with_capacity(count.min(reader.bytes.len() / 45));
    for _ in 0..count {
        let path_len = reader.u32()? as usize;
        // Only a path already in its normal form, as the index's own decoders require.
        let text = std::str::from_utf8(reader.take(path_len)?).ok()?;
        let path = RepoPath::normalize(text).filter(|path| path.as_str() == text && !path.is_root())?;
        let stamp = (reader.u64()?, reader.u64()?);
        let (always_scan, ranged) = match reader.take(1)? {
            [flags @ 0..=3] => (flags & 1 == 1, flags & 2 == 2),
            _ => return None,
        };
        let hash = ContentHash::parse(std::str::from_utf8(reader.take(ContentHash::HEX_LEN)?).ok()?)?;
        let chunk_count = reader.u32()? as usize;
        let mut chunks = Vec::with_capacity(chunk_count.min(reader.bytes.len() / 20));
        for _ in 0..chunk_count {
            chunks.push(Chunk { start: reader.u64()?, first_line: reader.u64()?, words_end: reader.u32()? });
        }
        let word_count = reader.u32()? as usize;
        let raw = reader.take(word_count.checked_mul(8)?)?;
        let words: Vec<u64> =
            raw.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default())).collect();
        let forwards = chunks.first().is_none_or(|first| first.start == 0 && first.first_line == 1)
            && chunks.windows(2).all(|pair| {
                pair[0].start < pair[1].start
                    && pair[0].first_line < pair[1].first_line
                    && pair[0].words_end < pair[1].words_end
            })
            && chunks.first().is_none_or(|first| first.words_end > 0)
            && chunks.last().map_or(words.is_empty(), |last| last.words_end as usize == words.len())
            && chunks.last().is_none_or(|last| last.start < stamp.0)
            && (!always_scan || chunks.is_empty());
        if !forwards {
            return None;
        }
        filters.push((path, Filter { stamp, hash, ranged, chunks, words, always_scan }));
    }
    reader.bytes.is_empty().then_some(filters)
}

/// Bounds-checked reading of `decode`'s input.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.bytes.split_at_checked(len)?;
        self.bytes = rest;
        Some(taken)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|bytes| u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|bytes| u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_index::trigram::{plan_literal, plan_regex};

    fn path() -> RepoPath {
        RepoPath::normalize("big/regs.h").unwrap()
    }

    /// Register-header text: `lines` lines of defines, then two lines of prose.
    fn header(lines: usize) -> String {
        let mut text: String = (0..lines).map(|n| format!("#define REG_{n}_MASK 0x{n:x}\n")).collect();
        text.push_str("alpha_beta\nbeta_gamma\n");
        text
    }

    #[test]
    fn a_current_filter_skips_what_the_file_cannot_hold_and_never_what_it_can() {
        let filters = OversizedFilters::default();
        let text = header(20_000);
        let stamp = (text.len() as u64, 7);
        let check = |stamp: Option<Stamp>, plan: &Plan| filters.check(&path(), stamp, plan, None);
        assert_eq!(check(Some(stamp), &plan_literal("nowhere_else")), Check::ScanAndLearn, "unknown: scan");
        filters.learn(&path(), stamp, text.as_bytes(), MIN_TOTAL_BYTES);
        for present in ["REG_19999_MASK", "define REG_1", "0x4e1f"] {
            assert!(matches!(check(Some(stamp), &plan_literal(present)), Check::Scan(Some(_))), "{present}");
            let regex = plan_regex(&regex::escape(present), true).unwrap();
            assert!(matches!(check(Some(stamp), &regex), Check::Scan(Some(_))), "{present}");
        }
        assert_eq!(check(Some(stamp), &plan_literal("kmalloc(sizeof")), Check::Skip);
        assert_eq!(check(Some(stamp), &plan_regex("ext4_fc_replay_inode", true).unwrap()), Check::Skip);
        // Changed since (another size or mtime), or not there: scanned again.
        assert_eq!(check(Some((stamp.0, 8)), &plan_literal("kmalloc(sizeof")), Check::ScanAndLearn);
        assert_eq!(check(None, &plan_literal("kmalloc(sizeof")), Check::ScanAndLearn);
        // A literal: its 4-grams must be there too, in any case.
        let literal = |text: &str| filters.check(&path(), Some(stamp), &plan_literal(text), Some(text));
        assert!(matches!(literal("REG_1999_MASK"), Check::Scan(Some(_))));
        assert!(matches!(literal("reg_1999_mask"), Check::Scan(Some(_))));
        // Every trigram of "alpha_gamma" is in the file, its 4-gram "ha_g" not.
        assert!(matches!(filters.check(&path(), Some(stamp), &plan_literal("alpha_gamma"), None), Check::Scan(_)));
        assert_eq!(literal("alpha_gamma"), Check::Skip);
        assert!(matches!(literal("ALPHA_beta"), Check::Scan(Some(_))));
        assert_eq!(filters.size().0, 1);
    }

    /// A passing chunk is a range of the file's bytes that starts a line, with that line's
    /// number, and every line holding a match is inside a passing chunk: what the search reads
    /// of the file finds what reading all of it finds. Chunks that cannot hold the query are
    /// not read (on this text, most of them).
    #[test]
    fn passing_chunks_hold_every_matching_line_and_few_others() {
        let text: String =
            (0..6_000).map(|n| format!("line {n} holds word_{} and value_{}\n", n % 997, n * 31)).collect();
        let stamp = (text.len() as u64, 1);
        let filter = OversizedFilters::summarise(stamp, text.as_bytes(), 4096, MAX_FILTER_BYTES).unwrap();
        assert!(filter.ranged && filter.chunks.len() > 50, "{} chunks", filter.chunks.len());
        let lines: Vec<&str> = text.lines().collect();
        for query in ["word_996 ", "value_185969", "line 5999 ", "word_3 and", "holds", "value_1", "nothing_here"] {
            let spans = filter.passing(&plan_literal(query), Some(query.as_bytes()));
            let mut read = vec![false; lines.len()];
            for span in &spans {
                let bytes = &text.as_bytes()[span.start as usize..span.end as usize];
                assert!(span.start == 0 || text.as_bytes()[span.start as usize - 1] == b'\n', "{query}: starts a line");
                assert_eq!(span.first_line, text[..span.start as usize].matches('\n').count() + 1, "{query}");
                let count = bytes.iter().filter(|&&byte| byte == b'\n').count();
                read[span.first_line - 1..span.first_line - 1 + count].iter_mut().for_each(|line| *line = true);
            }
            let matching: Vec<usize> = (0..lines.len()).filter(|&line| lines[line].contains(query)).collect();
            assert!(matching.iter().all(|&line| read[line]), "{query}: a matching line in a skipped chunk");
            // Chunks read, against chunks holding a matching line (a Bloom filter lets a few more
            // through).
            let chunk_of = |line: usize| filter.chunks.partition_point(|chunk| chunk.first_line as usize <= line + 1);
            let read_chunks = filter.chunks.iter().filter(|chunk| read[chunk.first_line as usize - 1]).count();
            let needed: std::collections::BTreeSet<usize> = matching.iter().map(|&line| chunk_of(line)).collect();
            assert!(read_chunks <= needed.len() + 2, "{query}: {read_chunks} chunks read, {} needed", needed.len());
        }
    }

    /// Text that is not plain UTF-8 is summarised as decoded, and a passing chunk has the
    /// whole file read; bytes that are not text hold nothing a search finds.
    #[test]
    fn only_plain_text_is_read_by_chunks() {
        let crlf = header(3_000).replace('\n', "\r\n");
        let filter =
            OversizedFilters::summarise((crlf.len() as u64, 1), crlf.as_bytes(), 4096, MAX_FILTER_BYTES).unwrap();
        assert!(!filter.ranged && !filter.chunks.is_empty());
        let filters = OversizedFilters::default();
        filters.filters.lock().unwrap().insert(path(), filter);
        let check =
            |query: &str| filters.check(&path(), Some((crlf.len() as u64, 1)), &plan_literal(query), Some(query));
        assert_eq!(check("REG_2999_MASK"), Check::Scan(None));
        assert_eq!(check("kmalloc"), Check::Skip);
        let binary = [0u8, 159, 146, 150, 0, 1].repeat(1000);
        let filter = OversizedFilters::summarise((6000, 1), &binary, 4096, MAX_FILTER_BYTES).unwrap();
        assert!(filter.chunks.is_empty());
        filters.filters.lock().unwrap().insert(path(), filter);
        assert_eq!(filters.check(&path(), Some((6000, 1)), &Plan::All, None), Check::Skip);
    }

    /// A file whose filter is over the bound is marked to be scanned, not summarised again by
    /// every pass of the learner; a change to it makes it unknown again. Filters past the total
    /// budget are marks too.
    #[test]
    fn a_file_too_varied_to_summarise_is_scanned_and_not_learned_again() {
        let filters = OversizedFilters::default();
        let text: String = (0..2_000).map(|n| format!("word{n:x}q{}\n", n * 7919)).collect();
        let stamp = (text.len() as u64, 1);
        assert!(OversizedFilters::summarise(stamp, text.as_bytes(), 4096, 64).is_none());
        let filter = OversizedFilters::summarise(stamp, text.as_bytes(), 4096, MAX_FILTER_BYTES).expect("within bound");
        assert!(!filter.always_scan && filter.bytes() > 64);
        filters.filters.lock().unwrap().insert(path(), Filter::always_scan(stamp, ContentHash::of(text.as_bytes())));
        let plan = plan_literal("nowhere");
        assert_eq!(filters.check(&path(), Some(stamp), &plan, Some("nowhere")), Check::Scan(None));
        assert_eq!(filters.check(&path(), Some((stamp.0, 2)), &plan, Some("nowhere")), Check::ScanAndLearn);
        assert_eq!(filters.size(), (0, 0), "a mark holds no filter");
        filters.learn(&path(), (stamp.0, 3), text.as_bytes(), 16);
        assert_eq!(
            filters.check(&path(), Some((stamp.0, 3)), &plan, Some("nowhere")),
            Check::Scan(None),
            "over budget"
        );
    }

    /// What the learner writes beside the index reads back as the same filters; any damage
    /// (a cut, a flipped byte, another format) reads as nothing, without a panic or an
    /// allocation the bytes do not justify.
    #[test]
    fn kept_filters_read_back_and_damaged_ones_are_ignored() {
        let text = header(500);
        let mut filters = FxHashMap::default();
        let summary = OversizedFilters::summarise((text.len() as u64, 9), text.as_bytes(), 1024, MAX_FILTER_BYTES);
        filters.insert(path(), summary.unwrap());
        filters.insert(
            RepoPath::normalize("gen/huge.json").unwrap(),
            Filter::always_scan((5 << 20, 3), ContentHash::of(b"")),
        );
        let bytes = encode(&filters);
        let decoded = decode(&bytes).expect("reads back");
        assert_eq!(decoded.len(), 2);
        for (path, filter) in &decoded {
            let original = &filters[path];
            assert_eq!(
                (filter.stamp, &filter.hash, filter.ranged, &filter.chunks, &filter.words, filter.always_scan),
                (
                    original.stamp,
                    &original.hash,
                    original.ranged,
                    &original.chunks,
                    &original.words,
                    original.always_scan
                )
            );
        }
        assert!(filters[&path()].chunks.len() > 10);
        for cut in [0, 1, 8, 12, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        for at in (0..bytes.len()).step_by(97) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x41;
            assert!(decode(&damaged).is_none(), "byte {at} flipped");
        }
        // A body that hashes right but claims more than it holds, or chunks out of order.
        let rehash = |mut body: Vec<u8>| {
            seal(&mut body);
            body
        };
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&rehash(huge)).is_none());
        // One filter of `path` with `chunks` (start, first line, words end) over `words` words.
        let one = |path: &str, chunks: &[(u64, u64, u32)], words: u32| {
            let mut body = MAGIC.to_vec();
            body.extend_from_slice(&1u32.to_le_bytes());
            body.extend_from_slice(&(path.len() as u32).to_le_bytes());
            body.extend_from_slice(path.as_bytes());
            body.extend_from_slice(&100u64.to_le_bytes());
            body.extend_from_slice(&0u64.to_le_bytes());
            body.push(2);
            body.extend_from_slice(b"0123456789abcdef");
            body.extend_from_slice(&(chunks.len() as u32).to_le_bytes());
            for (start, line, end) in chunks {
                body.extend_from_slice(&start.to_le_bytes());
                body.extend_from_slice(&line.to_le_bytes());
                body.extend_from_slice(&end.to_le_bytes());
            }
            body.extend_from_slice(&words.to_le_bytes());
            body.extend_from_slice(&vec![0xff; words as usize * 8]);
            decode(&rehash(body)).map(|filters| filters.len())
        };
        assert_eq!(one("a", &[(0, 1, 1), (50, 4, 2)], 2), Some(1), "well formed");
        assert_eq!(one("a", &[], 0), Some(1), "no text");
        assert_eq!(one("a", &[(0, 1, 1), (50, 4, 2)], 3), None, "words past the last chunk");
        assert_eq!(one("a", &[(0, 1, 1), (0, 4, 2)], 2), None, "a chunk not after the one before");
        assert_eq!(one("a", &[(0, 1, 1), (50, 1, 2)], 2), None, "a line number not after");
        assert_eq!(one("a", &[(0, 1, 1), (50, 4, 1)], 1), None, "a chunk without words");
        assert_eq!(one("a", &[(0, 1, 1), (100, 4, 2)], 2), None, "a chunk past the file's end");
        assert_eq!(one("a", &[(5, 1, 1)], 1), None, "a first chunk not at the start");
        for path in ["./a", "a/../b", "/a", "a//b", "", "../a"] {
            assert_eq!(one(path, &[(0, 1, 1)], 1), None, "{path:?} is not a normal path");
        }
    }
}
