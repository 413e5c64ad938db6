//! Files over the index's size limit, which every text search scans itself (§7: never
//! "nothing" where the index does not look), each summarised by a small trigram filter (its
//! exact set of trigrams and 4-grams), so later searches skip the ones that cannot hold a match.
//!
//! Summarising is never done on a search's path: on Linux it is seconds of CPU (424 MB through
//! two gram sets), and a search that met the files unsummarised while the server's own pass ran
//! did the same work again (a 35 s search under load). One background learner does it: once the
//! index is ready (`learn_in_background` from the server's indexing thread), and again whenever
//! a search met a file without a current filter (changed since, or not yet summarised); the
//! search itself scans such a file.
//!
//! Linux 6.12 has 102 such files (424 MB of generated register headers): scanning them all made
//! every text search cost 60–150 ms whatever it looked for. A filter is keyed by the file's size
//! and modification time, taken before the bytes it summarises were read, so a file changed
//! since is scanned (and summarised) again; a file skipped lacks a trigram every match needs, as
//! the index's own candidates do.
//!
//! The filters outlive the server: the learner writes them to `oversized.bin` beside the index
//! (the index's writer only) and the next server's learner starts from that file, so only the
//! first session on a tree pays for summarising, and its searches scan meanwhile. The file is a
//! cache: a damaged, foreign or stale one is ignored (each filter still answers only for the
//! size and mtime it was made from).
//!
//! Must stay bounded: at most `MAX_FILTER_BYTES` per file and `MAX_TOTAL_BYTES` in all.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use loupe_core::RepoPath;
use loupe_index::trigram::{Plan, trigrams_of};
use loupe_vfs::Stamp;
use rustc_hash::{FxHashMap, FxHashSet};

/// The largest filter of one file (a file with more distinct trigrams is always scanned).
const MAX_FILTER_BYTES: usize = 4 << 20;
/// What the filters of all oversized files may hold together.
const MAX_TOTAL_BYTES: usize = 32 << 20;

/// The file in the index directory the filters are kept in between servers.
const FILE_NAME: &str = "oversized.bin";
/// Its first bytes (the format's version is the digit).
const MAGIC: &[u8; 8] = b"LOUPEOV1";

/// The trigram filters of the oversized files, by path, and the one learner that makes them.
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
}

#[derive(Debug)]
struct Filter {
    /// (size, mtime ns) of the file when the bytes summarised were read.
    stamp: Stamp,
    /// Its distinct trigrams (ASCII-lowercased, as the index's), sorted: generated headers have
    /// few (Linux's biggest, a few thousand each), and an exact set rules out what a Bloom
    /// filter of the same size lets through.
    trigrams: Vec<u32>,
    /// Its distinct 4-grams (ASCII-lowercased bytes), sorted, for literal queries: the
    /// register headers' vocabulary holds most trigrams of a typical identifier (17 of 612
    /// file × query pairs of Linux's rare literals pass on trigrams), few of its 4-grams (none).
    quadgrams: Vec<u32>,
    /// The file could not be summarised within the bounds: every search scans it (until it
    /// changes), and the learner does not try it again.
    always_scan: bool,
}

impl Filter {
    fn always_scan(stamp: Stamp) -> Filter {
        Filter { stamp, trigrams: Vec::new(), quadgrams: Vec::new(), always_scan: true }
    }

    fn has(&self, trigram: u32) -> bool {
        self.trigrams.binary_search(&trigram).is_ok()
    }

    fn holds_quadgrams_of(&self, literal: &[u8]) -> bool {
        literal.windows(4).all(|window| self.quadgrams.binary_search(&quadgram(window)).is_ok())
    }

    fn bytes(&self) -> usize {
        (self.trigrams.len() + self.quadgrams.len()) * 4
    }
}

/// Four bytes, ASCII-lowercased, packed.
fn quadgram(window: &[u8]) -> u32 {
    u32::from_be_bytes([
        window[0].to_ascii_lowercase(),
        window[1].to_ascii_lowercase(),
        window[2].to_ascii_lowercase(),
        window[3].to_ascii_lowercase(),
    ])
}

/// What a search does with one oversized file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Its current filter rules the plan out.
    Skip,
    /// Its current filter lets the plan through: scan it.
    Scan,
    /// No current filter: scan it, and have the learner summarise it (`learn_in_background`).
    ScanAndLearn,
}

impl OversizedFilters {
    /// What to do with the file as it is now (`stamp`, `None` when it cannot be read), for a
    /// search planned as `plan`; `literal`: the text a literal search looks for (any case).
    pub(crate) fn check(&self, path: &RepoPath, stamp: Option<Stamp>, plan: &Plan, literal: Option<&str>) -> Check {
        let filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        match (filters.get(path), stamp) {
            (Some(filter), Some(stamp)) if filter.stamp == stamp && filter.always_scan => Check::Scan,
            (Some(filter), Some(stamp)) if filter.stamp == stamp => {
                // ASCII only: 4-grams are lowercased bytewise, so a non-ASCII literal searched
                // in any case could match bytes its own 4-grams do not show.
                let literal = literal.filter(|literal| literal.is_ascii()).map(str::as_bytes);
                let may = plan.may_match(&|trigram| filter.has(trigram))
                    && literal.is_none_or(|literal| filter.holds_quadgrams_of(literal));
                if may { Check::Scan } else { Check::Skip }
            }
            _ => Check::ScanAndLearn,
        }
    }

    /// Summarises `text`, the content of `path` read after `stamp` was taken.
    fn learn(&self, path: &RepoPath, stamp: Stamp, text: &str) {
        let filter = Self::summarise(stamp, text, MAX_FILTER_BYTES).unwrap_or_else(|| Filter::always_scan(stamp));
        let mut filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        let held: usize = filters.iter().filter(|(known, _)| *known != path).map(|(_, filter)| filter.bytes()).sum();
        let filter = if held + filter.bytes() <= MAX_TOTAL_BYTES { filter } else { Filter::always_scan(stamp) };
        filters.insert(path.clone(), filter);
    }

    /// The filter of `text`, or `None` when a gram set would be over `max_bytes`.
    fn summarise(stamp: Stamp, text: &str, max_bytes: usize) -> Option<Filter> {
        let mut trigrams = Vec::new();
        trigrams_of(text.as_bytes(), &mut trigrams);
        if trigrams.len() * 4 > max_bytes {
            return None;
        }
        trigrams.shrink_to_fit();
        // Through a set: collecting every window first would hold four bytes per byte of text.
        let mut distinct: FxHashSet<u32> = FxHashSet::default();
        for window in text.as_bytes().windows(4) {
            distinct.insert(quadgram(window));
            if distinct.len() * 4 > max_bytes {
                return None;
            }
        }
        let mut quadgrams: Vec<u32> = distinct.into_iter().collect();
        quadgrams.sort_unstable();
        Some(Filter { stamp, trigrams, quadgrams, always_scan: false })
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
            filters.load_kept(&index);
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
        let mut learned = 0;
        for (path, stamp) in self.without_current_filter(root, index, read_limit) {
            let (Some(stamp), Ok(bytes)) = (stamp, root.read_indexed(&path, read_limit)) else {
                continue;
            };
            if let Ok(decoded) = loupe_core::text::decode(&bytes) {
                self.learn(&path, stamp, &decoded.text);
                self.learned.fetch_add(1, Ordering::Relaxed);
                learned += 1;
            }
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

    /// Takes the kept filters (`load`) once per engine, before the first search checks a file
    /// against them: reading them back costs a few milliseconds where scanning the files they
    /// summarise costs seconds (a `loupe search` from the command line, which ends before any
    /// learner would have loaded them, scanned all 424 MB of Linux's such files).
    pub(crate) fn load_kept(&self, index: &loupe_index::Index) {
        if !self.loaded.swap(true, Ordering::AcqRel) {
            self.load(index);
        }
    }

    /// Takes the filters kept in the index directory, for files that have none here yet.
    fn load(&self, index: &loupe_index::Index) {
        let limit = (MAX_TOTAL_BYTES as u64).saturating_mul(2);
        let Some(bytes) = index.read_side_file(FILE_NAME, limit) else { return };
        let Some(kept) = decode(&bytes) else {
            tracing::debug!("{FILE_NAME} is damaged or from another version; summarising again");
            return;
        };
        let mut filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut held: usize = filters.values().map(Filter::bytes).sum();
        for (path, filter) in kept {
            if held + filter.bytes() <= MAX_TOTAL_BYTES && !filters.contains_key(&path) {
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

    /// Files summarised, and the bytes their filters hold.
    pub(crate) fn size(&self) -> (usize, usize) {
        let filters = self.filters.lock().unwrap_or_else(|poison| poison.into_inner());
        (filters.values().filter(|filter| !filter.always_scan).count(), filters.values().map(Filter::bytes).sum())
    }
}

/// The filters as `oversized.bin` holds them: `MAGIC`, then per file its path, stamp, mark and
/// two gram lists (little-endian, each length before its items), then the body's hash.
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
        out.push(u8::from(filter.always_scan));
        for grams in [&filter.trigrams, &filter.quadgrams] {
            out.extend_from_slice(&(grams.len() as u32).to_le_bytes());
            for gram in grams {
                out.extend_from_slice(&gram.to_le_bytes());
            }
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
        let summary = super::OversizedFilters::summarise((text.len() as u64, 9), &text, super::MAX_FILTER_BYTES);
        filters.insert(super::RepoPath::normalize("big/regs.h").unwrap(), summary.unwrap());
        filters.insert(super::RepoPath::normalize("gen/huge.json").unwrap(), super::Filter::always_scan((5 << 20, 3)));
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

/// What `encode` wrote, or `None` for anything else: every length is checked against the bytes
/// that remain before anything is allocated, gram lists must be sorted and distinct (a search
/// looks them up by bisection), and the hash must match.
fn decode(bytes: &[u8]) -> Option<Vec<(RepoPath, Filter)>> {
    let (rest, hash_len) = bytes.split_last_chunk::<4>()?;
    let hash_len = u32::from_le_bytes(*hash_len) as usize;
    let (body, hash) = rest.split_at_checked(rest.len().checked_sub(hash_len)?)?;
    if loupe_core::ContentHash::of(body).as_str().as_bytes() != hash {
        return None;
    }
    let mut reader = Reader { bytes: body.strip_prefix(MAGIC)? };
    let count = reader.u32()? as usize;
    let mut filters = Vec::with_capacity(count.min(reader.bytes.len() / 25));
    for _ in 0..count {
        let path_len = reader.u32()? as usize;
        // Only a path already in its normal form, as the index's own decoders require.
        let text = std::str::from_utf8(reader.take(path_len)?).ok()?;
        let path = RepoPath::normalize(text).filter(|path| path.as_str() == text && !path.is_root())?;
        let stamp = (reader.u64()?, reader.u64()?);
        let always_scan = match reader.take(1)? {
            [0] => false,
            [1] => true,
            _ => return None,
        };
        let trigrams = reader.grams()?;
        let quadgrams = reader.grams()?;
        filters.push((path, Filter { stamp, trigrams, quadgrams, always_scan }));
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

    /// A sorted, distinct list of grams.
    fn grams(&mut self) -> Option<Vec<u32>> {
        let len = self.u32()? as usize;
        let raw = self.take(len.checked_mul(4)?)?;
        let grams: Vec<u32> =
            raw.chunks_exact(4).map(|gram| u32::from_le_bytes(gram.try_into().unwrap_or_default())).collect();
        grams.windows(2).all(|pair| pair[0] < pair[1]).then_some(grams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_index::trigram::{plan_literal, plan_regex};

    fn path() -> RepoPath {
        RepoPath::normalize("big/regs.h").unwrap()
    }

    #[test]
    fn a_current_filter_skips_what_the_file_cannot_hold_and_never_what_it_can() {
        let filters = OversizedFilters::default();
        let mut text: String = (0..20_000).map(|n| format!("#define REG_{n}_MASK 0x{n:x}\n")).collect();
        text.push_str("alpha_beta\nbeta_gamma\n");
        let stamp = (text.len() as u64, 7);
        let check = |stamp: Option<Stamp>, plan: &Plan| filters.check(&path(), stamp, plan, None);
        assert_eq!(check(Some(stamp), &plan_literal("nowhere_else")), Check::ScanAndLearn, "unknown: scan");
        filters.learn(&path(), stamp, &text);
        for present in ["REG_19999_MASK", "define REG_1", "0x4e1f"] {
            assert_eq!(check(Some(stamp), &plan_literal(present)), Check::Scan, "{present}");
            assert_eq!(check(Some(stamp), &plan_regex(&regex::escape(present), true).unwrap()), Check::Scan);
        }
        assert_eq!(check(Some(stamp), &plan_literal("kmalloc(sizeof")), Check::Skip);
        assert_eq!(check(Some(stamp), &plan_regex("ext4_fc_replay_inode", true).unwrap()), Check::Skip);
        // Changed since (another size or mtime), or not there: scanned again.
        assert_eq!(check(Some((stamp.0, 8)), &plan_literal("kmalloc(sizeof")), Check::ScanAndLearn);
        assert_eq!(check(None, &plan_literal("kmalloc(sizeof")), Check::ScanAndLearn);
        // A literal: its 4-grams must be there too, in any case.
        let literal = |text: &str| filters.check(&path(), Some(stamp), &plan_literal(text), Some(text));
        assert_eq!(literal("REG_1999_MASK"), Check::Scan);
        assert_eq!(literal("reg_1999_mask"), Check::Scan);
        // Every trigram of "alpha_gamma" is in the file, its 4-gram "ha_g" not.
        assert_eq!(filters.check(&path(), Some(stamp), &plan_literal("alpha_gamma"), None), Check::Scan);
        assert_eq!(literal("alpha_gamma"), Check::Skip);
        assert_eq!(literal("ALPHA_beta"), Check::Scan);
        assert_eq!(filters.size().0, 1);
    }

    /// A file whose gram sets are over the bound is marked to be scanned, not summarised again
    /// by every pass of the learner; a change to it makes it unknown again.
    #[test]
    fn a_file_too_varied_to_summarise_is_scanned_and_not_learned_again() {
        let filters = OversizedFilters::default();
        let text: String = (0..2_000).map(|n| format!("word{n:x}q{}\n", n * 7919)).collect();
        let stamp = (text.len() as u64, 1);
        assert!(OversizedFilters::summarise(stamp, &text, 64).is_none());
        let filter = OversizedFilters::summarise(stamp, &text, MAX_FILTER_BYTES).expect("within the real bound");
        assert!(!filter.always_scan && filter.bytes() > 64);
        filters.filters.lock().unwrap().insert(path(), Filter::always_scan(stamp));
        let plan = plan_literal("nowhere");
        assert_eq!(filters.check(&path(), Some(stamp), &plan, Some("nowhere")), Check::Scan);
        assert_eq!(filters.check(&path(), Some((stamp.0, 2)), &plan, Some("nowhere")), Check::ScanAndLearn);
        assert_eq!(filters.size(), (0, 0), "a mark holds no filter");
    }

    /// What the learner writes beside the index reads back as the same filters; any damage
    /// (a cut, a flipped byte, another format) reads as nothing, without a panic or an
    /// allocation the bytes do not justify.
    #[test]
    fn kept_filters_read_back_and_damaged_ones_are_ignored() {
        let text: String = (0..500).map(|n| format!("#define REG_{n}_MASK 0x{n:x}\n")).collect();
        let mut filters = FxHashMap::default();
        filters.insert(path(), OversizedFilters::summarise((text.len() as u64, 9), &text, MAX_FILTER_BYTES).unwrap());
        filters.insert(RepoPath::normalize("gen/huge.json").unwrap(), Filter::always_scan((5 << 20, 3)));
        let bytes = encode(&filters);
        let decoded = decode(&bytes).expect("reads back");
        assert_eq!(decoded.len(), 2);
        for (path, filter) in &decoded {
            let original = &filters[path];
            assert_eq!(
                (filter.stamp, &filter.trigrams, &filter.quadgrams, filter.always_scan),
                (original.stamp, &original.trigrams, &original.quadgrams, original.always_scan)
            );
        }
        for cut in [0, 1, 8, 12, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        for at in (0..bytes.len()).step_by(97) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x41;
            assert!(decode(&damaged).is_none(), "byte {at} flipped");
        }
        // A body that hashes right but claims more than it holds, or unsorted grams.
        let rehash = |mut body: Vec<u8>| {
            seal(&mut body);
            body
        };
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&rehash(huge)).is_none());
        // One filter of `path` with `trigrams`, sealed.
        let one = |path: &str, trigrams: &[u32]| {
            let mut body = MAGIC.to_vec();
            body.extend_from_slice(&1u32.to_le_bytes());
            body.extend_from_slice(&(path.len() as u32).to_le_bytes());
            body.extend_from_slice(path.as_bytes());
            body.extend_from_slice(&[0; 16]);
            body.push(0);
            body.extend_from_slice(&(trigrams.len() as u32).to_le_bytes());
            trigrams.iter().for_each(|gram| body.extend_from_slice(&gram.to_le_bytes()));
            body.extend_from_slice(&0u32.to_le_bytes());
            decode(&rehash(body)).map(|filters| filters.len())
        };
        assert_eq!(one("a", &[1, 2]), Some(1), "well formed");
        assert_eq!(one("a", &[2, 1]), None, "unsorted trigrams");
        assert_eq!(one("a", &[1, 1]), None, "a trigram twice");
        for path in ["./a", "a/../b", "/a", "a//b", "", "../a"] {
            assert_eq!(one(path, &[1, 2]), None, "{path:?} is not a normal path");
        }
    }
}
