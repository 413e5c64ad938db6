//! The symbol table: every definition of every live file as a flat row over one string arena,
//! and the name index that finds rows by lower-cased name, exactly or by substring.
//!
//! A file's rows are contiguous. Re-indexing a file appends its new rows and leaves the old
//! ones as garbage until `compact`. The name index has a sorted base, every distinct name in
//! one newline-separated blob (a substring query is a single `memmem` pass over it, and its
//! hits come out in name order), and an overlay for names added since the base was built. A
//! posting counts only while its row lies inside its file's current range, so nothing has to
//! be unlinked when a file changes.
//!
//! On the Linux kernel (4.7 million definitions) this is about a third of the memory of one
//! heap string per name, container and signature, and it loads as a few flat arrays.
//!
//! A table loaded from `tables.bin` leaves its rows (196 MB for Linux 6.12) and its string
//! arena (240 MB) in the file and reads the ones a query needs with `pread` (`OnDisk`): the
//! rows of one lookup in runs of consecutive ids, their strings in as few reads as their
//! offsets allow, and every row read is checked (kind, strings inside the arena, the doc its
//! position says) before it is used. What stays in memory is the file ranges, the name index
//! (its blob and starts and postings) and the rows appended since the load. A lookup whose
//! reads the file can no longer back (truncated or written in place, `ondisk`) answers nothing
//! and marks the table damaged, which the index answers by rebuilding.
//! Must not know about paths: doc ids are the index's business.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::Arc;

use loupe_syntax::{Definition, Span, SymbolKind};
use rustc_hash::FxHashMap;

use crate::ondisk::{PersistedFile, Source};
use crate::records::SymbolRecord;

/// A string in the arena. `offset == u32::MAX` is "none" (a symbol without a container).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Str {
    offset: u32,
    len: u32,
}

impl Str {
    const NONE: Str = Str { offset: u32::MAX, len: 0 };

    fn is_none(self) -> bool {
        self.offset == u32::MAX
    }
}

/// One definition. 42 bytes of data, where a `SymbolRecord` costs three heap strings.
#[derive(Debug, Clone, Copy)]
struct Row {
    name: Str,
    container: Str,
    signature: Str,
    start_line: u32,
    end_line: u32,
    name_line: u32,
    doc: u32,
    kind: u8,
    depth: u8,
}

const ROW_BYTES: usize = 42;

/// Garbage rows an update may leave before the table is compacted: half the live rows, and
/// never fewer than this. Proportional, so a compaction (one pass over the table) is paid for
/// by at least as many replaced rows as it moves; with a floor, so churn on a small table does
/// not compact on every edit. Without it a long-running server grew by every edit's rows
/// (in the 30-minute soak of `bench/soak/`: 40,000 re-indexed files, never compacted by a reader).
const GARBAGE_FLOOR: usize = 4096;
const MAGIC: &[u8; 4] = b"LPSY";

/// Definitions by file, and the index from names to them.
#[derive(Default)]
pub(crate) struct SymbolTable {
    /// Strings in memory; their offsets start where the arena on disk ends.
    arena: Vec<u8>,
    /// Rows in memory; their ids start where the rows on disk end.
    rows: Vec<Row>,
    /// Per doc id, its rows: ids `start..start + len`.
    files: Vec<(u32, u32)>,
    names: NameIndex,
    /// Rows in memory that no file's range covers any more.
    garbage: usize,
    /// Rows on disk that no file's range covers any more (they cost no memory).
    disk_garbage: usize,
    /// The rows and arena of the loaded snapshot (or of a finished build), left in a file.
    disk: Option<OnDisk>,
    /// A build in progress writing its rows and strings out (`spilling`).
    spill: Option<Box<Spill>>,
}

/// The rows and the string arena of a table loaded from a file, read on demand. Both are
/// sections of `tables.bin`, or, after a build, each a file of its own.
struct OnDisk {
    arena_file: Arc<PersistedFile>,
    arena_at: u64,
    arena_len: u32,
    rows_file: Arc<PersistedFile>,
    rows_at: u64,
    row_count: u32,
    /// (first row, doc) of every doc that had rows when loaded, in row order: which doc a row
    /// on disk belongs to, without reading it.
    firsts: Vec<(u32, u32)>,
}

/// A build's rows and strings, written as they come to two unnamed files in the index
/// directory (removed by the system when closed), so that a cold build holds only the names in
/// memory, for the name index `finish_build` makes: on Linux 6.12, 150 MB instead of 445.
struct Spill {
    arena: io::BufWriter<File>,
    arena_len: u64,
    rows: io::BufWriter<File>,
    row_count: u32,
    firsts: Vec<(u32, u32)>,
    /// Each row's name, for the name index `finish` makes.
    names: NameIds,
    /// The previous row's container, which the next row points at when it has the same.
    last_container: Option<(String, Str)>,
    failed: bool,
}

/// An unnamed file in the index directory for a build to write its symbol rows out to: it has
/// no name to leave behind, and the system frees it when the build's table is dropped.
fn spill_file(dir: &std::path::Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

impl Spill {
    fn create(dir: &std::path::Path) -> io::Result<Spill> {
        Ok(Spill {
            arena: io::BufWriter::with_capacity(1 << 20, spill_file(dir)?),
            arena_len: 0,
            rows: io::BufWriter::with_capacity(1 << 20, spill_file(dir)?),
            row_count: 0,
            firsts: Vec::new(),
            names: NameIds::default(),
            last_container: None,
            failed: false,
        })
    }

    /// Appends `text` to the arena. Past 4 GiB of strings new strings are stored empty, as
    /// `SymbolTable::intern` does.
    fn intern(&mut self, text: &str) -> Str {
        if self.arena_len + text.len() as u64 >= u64::from(u32::MAX) {
            return Str { offset: 0, len: 0 };
        }
        let offset = self.arena_len as u32;
        self.failed |= self.arena.write_all(text.as_bytes()).is_err();
        self.arena_len += text.len() as u64;
        Str { offset, len: text.len() as u32 }
    }

    /// Appends one row of `doc` with the given strings (the rest of `template`'s fields).
    fn push(&mut self, doc: u32, name: &str, signature: &str, container: Option<&str>, template: &Row) {
        let signature_str = self.intern(signature);
        let name_str = match memchr::memmem::find(signature.as_bytes(), name.as_bytes()) {
            Some(at) if !name.is_empty() && signature_str.len as usize == signature.len() => {
                Str { offset: signature_str.offset + at as u32, len: name.len() as u32 }
            }
            _ => self.intern(name),
        };
        let container_str = match container {
            None => {
                self.last_container = None;
                Str::NONE
            }
            Some(text) => match &self.last_container {
                Some((last, at)) if last == text => *at,
                _ => {
                    let at = self.intern(text);
                    self.last_container = Some((text.to_owned(), at));
                    at
                }
            },
        };
        let row = Row { name: name_str, container: container_str, signature: signature_str, doc, ..*template };
        let mut bytes = Vec::with_capacity(ROW_BYTES);
        encode_row(&row, &mut bytes);
        self.failed |= self.rows.write_all(&bytes).is_err();
        self.names.push(name);
        self.row_count += 1;
    }

    /// The written files, as a table's rows and arena on disk, and the name index of the rows.
    fn finish(mut self) -> (OnDisk, NameIndex) {
        let index = std::mem::take(&mut self.names).index();
        let seal = |mut writer: io::BufWriter<File>, failed: &mut bool| -> PersistedFile {
            *failed |= writer.flush().is_err();
            PersistedFile::sealed(writer.into_parts().0)
        };
        let mut failed = self.failed;
        let arena = seal(self.arena, &mut failed);
        let rows = seal(self.rows, &mut failed);
        if failed || arena.len() != self.arena_len || rows.len() != u64::from(self.row_count) * ROW_BYTES as u64 {
            tracing::warn!("the symbol rows of this build could not be written out; the index will be rebuilt");
            rows.mark_damaged();
        }
        let disk = OnDisk {
            arena_file: Arc::new(arena),
            arena_at: 0,
            arena_len: self.arena_len as u32,
            rows_file: Arc::new(rows),
            rows_at: 0,
            row_count: self.row_count,
            firsts: self.firsts,
        };
        (disk, index)
    }
}

impl Spill {
    /// The range of the rows pushed since `start`, for `doc`, noted for `OnDisk::doc_of`.
    fn range_from(&mut self, start: u32, doc: u32) -> (u32, u32) {
        let len = self.row_count - start;
        if len > 0 {
            self.firsts.push((start, doc));
        }
        (start, len)
    }
}

impl OnDisk {
    /// Both files are the ones opened, and no read from them failed.
    fn still_same(&self) -> bool {
        self.arena_file.still_same() && (Arc::ptr_eq(&self.arena_file, &self.rows_file) || self.rows_file.still_same())
    }

    fn doc_of(&self, row: u32) -> Option<u32> {
        let at = self.firsts.partition_point(|&(first, _)| first <= row).checked_sub(1)?;
        Some(self.firsts[at].1)
    }

    /// The rows `first..first + len` (all on disk), each checked; `None` when the file cannot
    /// give them or they do not check out.
    fn rows(&self, first: u32, len: u32) -> Option<Vec<Row>> {
        let end = first.checked_add(len).filter(|&end| end <= self.row_count)?;
        let bytes = self
            .rows_file
            .read_vec(self.rows_at + u64::from(first) * ROW_BYTES as u64, len as usize * ROW_BYTES)
            .ok()?;
        let rows: Vec<Row> = bytes.chunks_exact(ROW_BYTES).map(decode_row).collect();
        let in_arena = |text: Str| text.offset.checked_add(text.len).is_some_and(|end| end <= self.arena_len);
        for (id, row) in (first..end).zip(&rows) {
            let strings_ok =
                in_arena(row.name) && in_arena(row.signature) && (row.container.is_none() || in_arena(row.container));
            if !strings_ok || usize::from(row.kind) >= SymbolKind::ALL.len() || self.doc_of(id) != Some(row.doc) {
                tracing::warn!("a symbol row read from the index file does not check out; it will be rebuilt");
                return None;
            }
        }
        Some(rows)
    }
}

/// Strings of some rows read from the arena on disk: spans closer than `GAP` bytes are read
/// together.
#[derive(Default)]
struct Texts {
    pieces: Vec<(u32, Vec<u8>)>,
}

const GAP: u32 = 4096;

/// A row whose name the name index leaves out (a name holding a newline).
const NO_NAME: u32 = u32::MAX;

/// The rows' names as a build adds them, for the name index: every distinct lower-cased name
/// once, with its id, and each row's name id. Rows repeat names (a name defined in every
/// configuration, every copy of a vendored tree: 4.67 M rows, 3.09 M names on Linux), so the
/// index sorts the distinct names only and places the rows under them by one counting pass,
/// its cost growing with the rows rather than with their n log n string comparisons.
#[derive(Default)]
struct NameIds {
    ids: FxHashMap<Box<[u8]>, u32>,
    /// Per row, its name's id (`NO_NAME` for one the index leaves out).
    rows: Vec<u32>,
    lowered: String,
}

impl NameIds {
    /// Adds the next row's name.
    fn push(&mut self, name: &str) {
        if name.contains('\n') {
            self.rows.push(NO_NAME);
            return;
        }
        self.lowered.clear();
        lower_into(name, &mut self.lowered);
        let id = match self.ids.get(self.lowered.as_bytes()) {
            Some(&id) => id,
            None => {
                let id = self.ids.len() as u32;
                self.ids.insert(self.lowered.as_bytes().into(), id);
                id
            }
        };
        self.rows.push(id);
    }

    /// The name index of the rows pushed: the names sorted, the rows of each in row order.
    fn index(self) -> NameIndex {
        let mut sorted: Vec<(Box<[u8]>, u32)> = self.ids.into_iter().collect();
        sorted.sort_unstable_by(|left, right| left.0.cmp(&right.0));
        let mut rank = vec![0u32; sorted.len()];
        for (position, (_, id)) in sorted.iter().enumerate() {
            rank[*id as usize] = position as u32;
        }
        // posting_starts[r + 1] counts name r's rows first, then becomes a running sum.
        let mut posting_starts = vec![0u32; sorted.len() + 1];
        for &id in self.rows.iter().filter(|&&id| id != NO_NAME) {
            posting_starts[rank[id as usize] as usize + 1] += 1;
        }
        for position in 1..posting_starts.len() {
            posting_starts[position] += posting_starts[position - 1];
        }
        let mut next = posting_starts.clone();
        let mut postings = vec![0u32; posting_starts[sorted.len()] as usize];
        for (row, &id) in self.rows.iter().enumerate().filter(|(_, id)| **id != NO_NAME) {
            let slot = &mut next[rank[id as usize] as usize];
            postings[*slot as usize] = row as u32;
            *slot += 1;
        }
        drop((next, rank, self.rows));
        let mut blob = Vec::with_capacity(1 + sorted.iter().map(|(name, _)| name.len() + 1).sum::<usize>());
        blob.push(b'\n');
        let mut starts = Vec::with_capacity(sorted.len() + 1);
        for (name, _) in sorted {
            starts.push(blob.len() as u32);
            blob.extend_from_slice(&name);
            blob.push(b'\n');
        }
        starts.push(blob.len() as u32);
        NameIndex { blob, starts, posting_starts, postings, overlay: FxHashMap::default() }
    }
}

#[derive(Default)]
struct NameIndex {
    /// `\n`, then each distinct lower-cased name followed by `\n`, in byte order.
    blob: Vec<u8>,
    /// Where each name starts in `blob`, plus the blob's length, so name `i` is
    /// `blob[starts[i]..starts[i + 1] - 1]`.
    starts: Vec<u32>,
    /// Name `i`'s rows are `postings[posting_starts[i]..posting_starts[i + 1]]`.
    posting_starts: Vec<u32>,
    postings: Vec<u32>,
    /// Rows appended since the base was built, by lower-cased name.
    overlay: FxHashMap<Box<str>, Vec<u32>>,
}

impl SymbolTable {
    /// Appends the definitions of the next doc id during a build. The names are indexed
    /// once, by `finish_build`.
    pub(crate) fn push_file(&mut self, definitions: &[Definition]) {
        let doc = self.files.len() as u32;
        if let Some(spill) = &mut self.spill {
            let start = spill.row_count;
            for definition in definitions {
                let template = template_row(definition);
                spill.push(doc, &definition.name, &definition.signature, definition.container.as_deref(), &template);
            }
            self.files.push(spill.range_from(start, doc));
            return;
        }
        let range = self.append_rows(doc, definitions);
        self.files.push(range);
    }

    /// An empty table for a build that writes its rows and strings to unnamed files in `dir`
    /// as they come (`Spill`); `finish_build` turns it into a table read from them.
    pub(crate) fn spilling(dir: &std::path::Path) -> io::Result<SymbolTable> {
        Ok(SymbolTable { spill: Some(Box::new(Spill::create(dir)?)), ..SymbolTable::default() })
    }

    /// Appends, as the next doc id of a build, the definitions `old` holds for `old_doc`: a
    /// rebuild's copy of a file whose content has not changed since `old` parsed it.
    pub(crate) fn push_file_from(&mut self, old: &SymbolTable, old_doc: u32) {
        let doc = self.files.len() as u32;
        let start = self.row_total() as u32;
        let (first, len) = old.files.get(old_doc as usize).copied().unwrap_or((0, 0));
        let rows = old.rows_in(first, len);
        let texts = old.texts(&rows);
        if let Some(spill) = &mut self.spill {
            let start = spill.row_count;
            for row in &rows {
                let container = (!row.container.is_none()).then(|| old.text(&texts, row.container));
                spill.push(doc, old.text(&texts, row.name), old.text(&texts, row.signature), container, row);
            }
            self.files.push(spill.range_from(start, doc));
            return;
        }
        for row in &rows {
            self.copy_row(old, &texts, row, doc);
        }
        self.files.push((start, self.row_total() as u32 - start));
    }

    /// Appends `row` of `old` (its strings in `texts`) as a row of `doc`.
    fn copy_row(&mut self, old: &SymbolTable, texts: &Texts, row: &Row, doc: u32) {
        let signature = self.intern(old.text(texts, row.signature));
        let name = self.intern_within(old.text(texts, row.name), signature);
        let container =
            if row.container.is_none() { Str::NONE } else { self.intern_container(old.text(texts, row.container)) };
        self.rows.push(Row { name, container, signature, doc, ..*row });
    }

    /// Indexes every name: call once after the last `push_file` of a build.
    pub(crate) fn finish_build(&mut self) {
        debug_assert!(self.disk.is_none(), "a build starts empty");
        if let Some(spill) = self.spill.take() {
            let (disk, names) = spill.finish();
            self.disk = Some(disk);
            self.names = names;
            return;
        }
        self.names = NameIndex::build(&self.arena, &self.rows);
    }

    /// Replaces the definitions of `doc` (a new doc id may be the next one), indexing the new
    /// names in the overlay.
    pub(crate) fn set_file(&mut self, doc: u32, definitions: &[Definition]) {
        self.remove_file(doc);
        while self.files.len() <= doc as usize {
            self.files.push((0, 0));
        }
        let first_row = self.row_total() as u32;
        let range = self.append_rows(doc, definitions);
        self.files[doc as usize] = range;
        let base = self.disk_rows();
        for row in first_row..self.row_total() as u32 {
            let name = lower(self.mem_str(self.rows[(row - base) as usize].name));
            if !name.contains('\n') {
                self.names.overlay.entry(name.into_boxed_str()).or_default().push(row);
            }
        }
    }

    /// Forgets the definitions of `doc`.
    pub(crate) fn remove_file(&mut self, doc: u32) {
        let base = self.disk_rows();
        if let Some(range) = self.files.get_mut(doc as usize) {
            if range.0 < base && range.1 > 0 {
                self.disk_garbage += range.1 as usize;
            } else {
                self.garbage += range.1 as usize;
            }
            *range = (0, 0);
        }
    }

    /// Definitions of live files.
    pub(crate) fn len(&self) -> usize {
        self.row_total() - self.garbage - self.disk_garbage
    }

    /// Doc ids the table has a (possibly empty) entry for.
    pub(crate) fn file_count(&self) -> usize {
        self.files.len()
    }

    /// True when garbage or overlay entries make `compact` worth it.
    pub(crate) fn needs_compaction(&self) -> bool {
        self.garbage > 0 || self.disk_garbage > 0 || !self.names.overlay.is_empty()
    }

    /// True when the garbage an update left is worth a compaction now (see `GARBAGE_FLOOR`):
    /// rows, arena and name overlay then stay within a constant factor of the live table.
    pub(crate) fn worth_compacting(&self) -> bool {
        self.garbage > GARBAGE_FLOOR.max((self.rows.len() - self.garbage) / 2)
    }

    /// Bytes the table holds on the heap (capacities, the name overlay approximately).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        let overlay: usize = self
            .names
            .overlay
            .iter()
            .map(|(name, rows)| name.len() + rows.capacity() * 4 + std::mem::size_of::<(Box<str>, Vec<u32>)>())
            .sum();
        self.arena.capacity()
            + self.rows.capacity() * std::mem::size_of::<Row>()
            + self.files.capacity() * 8
            + self.names.blob.capacity()
            + (self.names.starts.capacity() + self.names.posting_starts.capacity() + self.names.postings.capacity()) * 4
            + overlay
    }

    /// True when every row and string is read from a file, none held in memory.
    #[cfg(test)]
    pub(crate) fn is_on_disk(&self) -> bool {
        self.disk.is_some() && self.rows.is_empty() && self.arena.is_empty()
    }

    /// The rows of `doc`, as records, in the order its parse gave them (document order).
    pub(crate) fn of_file(&self, doc: u32) -> Vec<SymbolRecord> {
        let Some(&(start, len)) = self.files.get(doc as usize) else { return Vec::new() };
        let rows: Vec<u32> = (start..start + len).collect();
        self.hits(&rows).into_iter().map(|(_, record)| record).collect()
    }

    /// Rows whose lower-cased name is `name_lower`, as (doc, record), in row order.
    pub(crate) fn named(&self, name_lower: &str) -> Vec<(u32, SymbolRecord)> {
        let mut rows: Vec<u32> = Vec::new();
        if let Some(index) = self.names.find(name_lower.as_bytes()) {
            rows.extend_from_slice(self.names.postings_of(index));
        }
        if let Some(overlay) = self.names.overlay.get(name_lower) {
            rows.extend_from_slice(overlay);
        }
        rows.retain(|&row| self.is_live(row));
        self.hits(&rows)
    }

    /// Rows whose lower-cased name contains `needle_lower` but is not equal to it, name by
    /// name in byte order until at least `limit` rows; the flag says whether names were left.
    pub(crate) fn containing(&self, needle_lower: &str, limit: usize) -> (Vec<(u32, SymbolRecord)>, bool) {
        if needle_lower.is_empty() || needle_lower.contains('\n') {
            return (Vec::new(), false);
        }
        // Overlay names first (few), then base names in order until the limit is reached:
        // any base name after that point sorts after every name taken, so the cut is exact.
        let mut matched: Vec<(&[u8], Vec<u32>)> = Vec::new();
        for (name, rows) in &self.names.overlay {
            if name.len() > needle_lower.len() && name.contains(needle_lower) {
                let live: Vec<u32> = rows.iter().copied().filter(|&row| self.is_live(row)).collect();
                if !live.is_empty() {
                    matched.push((name.as_bytes(), live));
                }
            }
        }
        let mut base_rows = 0;
        let mut more = false;
        let mut last_index = usize::MAX;
        for position in memchr::memmem::find_iter(&self.names.blob, needle_lower.as_bytes()) {
            let index = self.names.index_at(position);
            if index == last_index {
                continue;
            }
            last_index = index;
            let name = self.names.name(index);
            if name.len() == needle_lower.len() {
                continue;
            }
            if base_rows >= limit {
                more = true;
                break;
            }
            let live: Vec<u32> =
                self.names.postings_of(index).iter().copied().filter(|&row| self.is_live(row)).collect();
            if !live.is_empty() {
                base_rows += live.len();
                matched.push((name, live));
            }
        }
        matched.sort_by(|left, right| left.0.cmp(right.0));
        let mut ids = Vec::new();
        let mut names = matched.into_iter().peekable();
        while let Some((name, rows)) = names.next() {
            if ids.len() >= limit {
                more = true;
                break;
            }
            ids.extend(rows);
            // The same name may be in the base and the overlay.
            while names.peek().is_some_and(|(next, _)| *next == name) {
                if let Some((_, rows)) = names.next() {
                    ids.extend(rows);
                }
            }
        }
        (self.hits(&ids), more)
    }

    /// Distinct lower-cased names that pass `keep` (each once, in no particular order).
    pub(crate) fn names_where(&self, keep: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for index in 0..self.names.count() {
            let Ok(name) = std::str::from_utf8(self.names.name(index)) else { continue };
            if keep(name) && self.names.postings_of(index).iter().any(|&row| self.is_live(row)) {
                names.push(name.to_owned());
            }
        }
        for (name, rows) in &self.names.overlay {
            let live_in_base = self
                .names
                .find(name.as_bytes())
                .is_some_and(|index| self.names.postings_of(index).iter().any(|&row| self.is_live(row)));
            if keep(name) && !live_in_base && rows.iter().any(|&row| self.is_live(row)) {
                names.push(name.to_string());
            }
        }
        names
    }

    /// Frees the memory that garbage rows hold. A table in memory is rewritten whole
    /// (`compact_all`); a table loaded from a file keeps its rows there (garbage on disk costs
    /// no memory) and rewrites only the rows appended since.
    pub(crate) fn compact(&mut self) {
        if self.disk.is_none() {
            self.compact_all();
            return;
        }
        let base = self.disk_rows();
        let disk_arena = self.disk_arena();
        let old_rows = std::mem::take(&mut self.rows);
        let old_arena = std::mem::take(&mut self.arena);
        let mut moved_to = vec![u32::MAX; old_rows.len()];
        for doc in 0..self.files.len() {
            let (start, len) = self.files[doc];
            if start < base || len == 0 {
                continue;
            }
            let first = self.row_total() as u32;
            for old in start..start + len {
                let Some(row) = old_rows.get((old - base) as usize) else { continue };
                let text = |text: Str| -> &str {
                    let at = text.offset.saturating_sub(disk_arena) as usize;
                    old_arena
                        .get(at..at + text.len as usize)
                        .and_then(|bytes| std::str::from_utf8(bytes).ok())
                        .unwrap_or("")
                };
                let (signature_text, name_text) = (text(row.signature), text(row.name));
                let container_text = (!row.container.is_none()).then(|| text(row.container));
                let signature = self.intern(signature_text);
                let name = self.intern_within(name_text, signature);
                let container = container_text.map_or(Str::NONE, |container| self.intern_container(container));
                moved_to[(old - base) as usize] = self.row_total() as u32;
                self.rows.push(Row { name, container, signature, ..*row });
            }
            self.files[doc] = (first, self.row_total() as u32 - first);
        }
        self.arena.shrink_to_fit();
        self.rows.shrink_to_fit();
        self.names.overlay.retain(|_, rows| {
            rows.retain_mut(|row| match row.checked_sub(base).and_then(|at| moved_to.get(at as usize)) {
                Some(&to) if to != u32::MAX => {
                    *row = to;
                    true
                }
                _ => false,
            });
            !rows.is_empty()
        });
        self.garbage = 0;
    }

    /// Rewrites the table without garbage, doc by doc, and rebuilds the name index whole: all
    /// in memory (what `encode` writes).
    pub(crate) fn compact_all(&mut self) {
        let mut compacted = SymbolTable::default();
        compacted.arena.reserve(self.arena.len());
        compacted.rows.reserve(self.len());
        for (doc, &(start, len)) in self.files.iter().enumerate() {
            let first = compacted.rows.len() as u32;
            let rows = self.rows_in(start, len);
            let texts = self.texts(&rows);
            for row in &rows {
                compacted.copy_row(self, &texts, row, doc as u32);
            }
            compacted.files.push((first, compacted.rows.len() as u32 - first));
        }
        // The arena was reserved at its old size, garbage included: give the rest back.
        compacted.arena.shrink_to_fit();
        compacted.finish_build();
        *self = compacted;
    }

    /// Writes the table (compacted: no garbage, no overlay) in the layout `decode` reads.
    /// Returns where, from the start of what it wrote, the arena's and the rows' bytes begin
    /// (for `rebase`).
    pub(crate) fn encode(&self, out: &mut impl Write) -> io::Result<(u64, u64)> {
        debug_assert!(!self.needs_compaction(), "encode a compacted table");
        out.write_all(MAGIC)?;
        // A table loaded from a file and not changed since: its sections are copied from it.
        let arena_len = u64::from(self.disk_arena()) + self.arena.len() as u64;
        write_u32(out, u32::try_from(arena_len).map_err(io::Error::other)?)?;
        if let Some(disk) = &self.disk {
            let copied =
                io::copy(&mut disk.arena_file.reader(disk.arena_at, disk.arena_at + u64::from(disk.arena_len)), out)?;
            if copied != u64::from(disk.arena_len) {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "the symbol arena on disk is truncated"));
            }
        }
        out.write_all(&self.arena)?;
        write_u32(out, self.row_total() as u32)?;
        if let Some(disk) = &self.disk {
            let len = u64::from(disk.row_count) * ROW_BYTES as u64;
            let copied = io::copy(&mut disk.rows_file.reader(disk.rows_at, disk.rows_at + len), out)?;
            if copied != len || !disk.still_same() {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "the symbol rows on disk changed"));
            }
        }
        let mut buffer = Vec::with_capacity(ROW_BYTES * 4096);
        for chunk in self.rows.chunks(4096) {
            buffer.clear();
            for row in chunk {
                encode_row(row, &mut buffer);
            }
            out.write_all(&buffer)?;
        }
        let files: Vec<u32> = self.files.iter().flat_map(|&(start, len)| [start, len]).collect();
        write_u32s(out, &files)?;
        write_bytes(out, &self.names.blob)?;
        write_u32s(out, &self.names.starts)?;
        write_u32s(out, &self.names.posting_starts)?;
        write_u32s(out, &self.names.postings)?;
        let arena_at = (MAGIC.len() + 4) as u64;
        Ok((arena_at, arena_at + arena_len + 4))
    }

    /// After `encode` wrote this table into `file` (its arena at `arena_at`, its rows at
    /// `rows_at`), reads its rows and strings from there and lets go of the ones in memory: the
    /// name index and the file ranges are the file's already. False (and nothing changed) when
    /// the table does not have the shape `encode` needs.
    pub(crate) fn rebase(&mut self, file: Arc<PersistedFile>, arena_at: u64, rows_at: u64) -> bool {
        if self.needs_compaction() || self.spill.is_some() {
            return false;
        }
        let firsts: Vec<(u32, u32)> = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, range)| range.1 > 0)
            .map(|(doc, range)| (range.0, doc as u32))
            .collect();
        if firsts.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
            return false;
        }
        let (Ok(arena_len), Ok(row_count)) =
            (u32::try_from(self.disk_arena() as usize + self.arena.len()), u32::try_from(self.row_total()))
        else {
            return false;
        };
        let fits = rows_at.checked_add(u64::from(row_count) * ROW_BYTES as u64).is_some_and(|end| end <= file.len());
        if !fits || arena_at + u64::from(arena_len) > rows_at {
            return false;
        }
        self.disk = Some(OnDisk {
            arena_file: Arc::clone(&file),
            arena_at,
            arena_len,
            rows_file: file,
            rows_at,
            row_count,
            firsts,
        });
        self.rows = Vec::new();
        self.arena = Vec::new();
        true
    }

    /// Reads what `encode` wrote, section by section straight into the table's own arrays,
    /// checking every offset and range so that no file, however damaged, can make a later
    /// lookup panic. An error means: rebuild. From a file (`disk`), the arena and the rows are
    /// checked as they stream past and left there, read again on demand.
    pub(crate) fn decode_from(
        reader: &mut impl Source,
        disk: Option<Arc<PersistedFile>>,
    ) -> Result<SymbolTable, String> {
        let mut input = Input { reader };
        if input.exact(4)? != MAGIC {
            return Err("not a symbol table".into());
        }
        let arena_len = input.u32()?;
        let arena_at = disk.as_ref().and(input.reader.offset());
        let arena = match arena_at {
            Some(_) => {
                input.reader.skip(u64::from(arena_len)).map_err(|_| "truncated arena")?;
                Vec::new()
            }
            None => input.exact(arena_len as usize)?,
        };
        let row_count = input.u32()? as usize;
        let rows_at = input.reader.offset();
        // The count is the file's word: reserve modestly and let the reads prove it.
        let mut rows = Vec::with_capacity(if arena_at.is_some() { 0 } else { row_count.min(1 << 16) });
        let mut firsts: Vec<(u32, u32)> = Vec::new();
        let mut chunk = vec![0u8; ROW_BYTES * 4096];
        let mut left = row_count;
        let mut id = 0u32;
        while left > 0 {
            let take = left.min(4096);
            let bytes = &mut chunk[..take * ROW_BYTES];
            input.reader.read_exact(bytes).map_err(|_| "truncated rows")?;
            for raw in bytes.chunks_exact(ROW_BYTES) {
                let row = decode_row(raw);
                if arena_at.is_some() {
                    check_row(&row, arena_len)?;
                    if firsts.last().is_none_or(|&(_, doc)| doc != row.doc) {
                        if firsts.last().is_some_and(|&(_, doc)| doc > row.doc) {
                            return Err("rows out of file order".into());
                        }
                        firsts.push((id, row.doc));
                    }
                } else {
                    rows.push(row);
                }
                id += 1;
            }
            left -= take;
        }
        let file_words = input.u32s()?;
        if file_words.len() % 2 != 0 {
            return Err("odd file table".into());
        }
        let files: Vec<(u32, u32)> = file_words.chunks_exact(2).map(|pair| (pair[0], pair[1])).collect();
        let names = NameIndex {
            blob: input.bytes()?,
            starts: input.u32s()?,
            posting_starts: input.u32s()?,
            postings: input.u32s()?,
            overlay: FxHashMap::default(),
        };
        let on_disk = match (disk, arena_at, rows_at) {
            (Some(file), Some(arena_at), Some(rows_at)) => Some(OnDisk {
                arena_file: Arc::clone(&file),
                rows_file: file,
                arena_at,
                arena_len,
                rows_at,
                row_count: row_count as u32,
                firsts,
            }),
            _ => None,
        };
        let table = SymbolTable { arena, rows, files, names, garbage: 0, disk_garbage: 0, disk: on_disk, spill: None };
        table.validate()?;
        Ok(table)
    }

    fn validate(&self) -> Result<(), String> {
        if let Some(disk) = &self.disk {
            // Each doc's range must be exactly the run of rows that name it.
            let mut runs = disk.firsts.iter().peekable();
            for (doc, &(start, len)) in self.files.iter().enumerate() {
                if len == 0 {
                    continue;
                }
                let Some(&(first, owner)) = runs.next() else { return Err(format!("file {doc} runs past the rows")) };
                let next = runs.peek().map_or(disk.row_count, |&&(next, _)| next);
                if first != start || owner != doc as u32 || start.checked_add(len) != Some(next) {
                    return Err(format!("file {doc} does not match its rows"));
                }
            }
            if runs.next().is_some() {
                return Err("rows outside every file".into());
            }
            return self.names.validate(disk.row_count as usize);
        }
        let in_arena = |text: Str| {
            (text.offset as usize).checked_add(text.len as usize).is_some_and(|end| end <= self.arena.len())
        };
        let mut expected_start = 0u32;
        for (doc, &(start, len)) in self.files.iter().enumerate() {
            if start != expected_start && len != 0 {
                return Err(format!("file {doc} does not follow its predecessor"));
            }
            let end = start.checked_add(len).ok_or("file range overflows")?;
            if end as usize > self.rows.len() {
                return Err(format!("file {doc} runs past the rows"));
            }
            if self.rows[start as usize..end as usize].iter().any(|row| row.doc != doc as u32) {
                return Err(format!("file {doc} holds rows of another file"));
            }
            if len != 0 {
                expected_start = end;
            }
        }
        if expected_start as usize != self.rows.len() {
            return Err("rows outside every file".into());
        }
        for row in &self.rows {
            let container_ok = row.container.is_none() || in_arena(row.container);
            if !in_arena(row.name) || !in_arena(row.signature) || !container_ok {
                return Err("a string runs past the arena".into());
            }
            if usize::from(row.kind) >= SymbolKind::ALL.len() {
                return Err("unknown symbol kind".into());
            }
        }
        self.names.validate(self.rows.len())
    }

    fn append_rows(&mut self, doc: u32, definitions: &[Definition]) -> (u32, u32) {
        let start = self.row_total() as u32;
        for definition in definitions {
            let signature = self.intern(&definition.signature);
            let row = Row {
                name: self.intern_within(&definition.name, signature),
                container: match &definition.container {
                    Some(container) => self.intern_container(container),
                    None => Str::NONE,
                },
                signature,
                start_line: clamp(definition.span.start_line),
                end_line: clamp(definition.span.end_line),
                name_line: clamp(definition.name_line),
                doc,
                kind: SymbolKind::ALL.iter().position(|kind| *kind == definition.kind).unwrap_or(0) as u8,
                depth: definition.depth.min(u8::MAX as usize) as u8,
            };
            self.rows.push(row);
        }
        (start, self.row_total() as u32 - start)
    }

    /// Copies `text` into the arena. Past 4 GiB of strings (never seen: Linux needs about
    /// 0.3) new strings are stored empty rather than wrapping an offset.
    fn intern(&mut self, text: &str) -> Str {
        let offset = self.disk_arena() as usize + self.arena.len();
        if offset + text.len() >= u32::MAX as usize {
            return Str { offset: 0, len: 0 };
        }
        self.arena.extend_from_slice(text.as_bytes());
        Str { offset: offset as u32, len: text.len() as u32 }
    }

    /// A name is nearly always written in its signature: point into it rather than copy it.
    fn intern_within(&mut self, text: &str, signature: Str) -> Str {
        let found = memchr::memmem::find(self.mem_str(signature).as_bytes(), text.as_bytes());
        match found {
            Some(at) if !text.is_empty() => Str { offset: signature.offset + at as u32, len: text.len() as u32 },
            _ => self.intern(text),
        }
    }

    /// Containers repeat row after row (every field of a struct): reuse the previous row's.
    fn intern_container(&mut self, text: &str) -> Str {
        if let Some(previous) = self.rows.last().map(|row| row.container)
            && !previous.is_none()
            && previous.offset >= self.disk_arena()
            && self.mem_str(previous) == text
        {
            return previous;
        }
        self.intern(text)
    }

    fn disk_rows(&self) -> u32 {
        self.disk.as_ref().map_or(0, |disk| disk.row_count)
    }

    fn disk_arena(&self) -> u32 {
        self.disk.as_ref().map_or(0, |disk| disk.arena_len)
    }

    /// Rows on disk and in memory, garbage included: the next row's id.
    fn row_total(&self) -> usize {
        self.disk_rows() as usize + self.rows.len()
    }

    /// A string of the arena in memory ("" for one on disk: callers pass their own rows).
    fn mem_str(&self, text: Str) -> &str {
        if text.is_none() {
            return "";
        }
        let Some(at) = text.offset.checked_sub(self.disk_arena()) else { return "" };
        let bytes = self.arena.get(at as usize..(at + text.len) as usize).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or("")
    }

    /// The rows `first..first + len` (one file's: all on disk or all in memory); none when the
    /// file cannot give them.
    fn rows_in(&self, first: u32, len: u32) -> Vec<Row> {
        if len == 0 {
            return Vec::new();
        }
        let base = self.disk_rows();
        if first >= base {
            let at = (first - base) as usize;
            return self.rows.get(at..at + len as usize).map(<[Row]>::to_vec).unwrap_or_default();
        }
        self.disk.as_ref().and_then(|disk| disk.rows(first, len)).unwrap_or_default()
    }

    /// The strings of `rows` that are on disk, read in as few reads as their offsets allow.
    fn texts(&self, rows: &[Row]) -> Texts {
        let Some(disk) = &self.disk else { return Texts::default() };
        let mut spans: Vec<(u32, u32)> = rows
            .iter()
            .flat_map(|row| [row.name, row.signature, row.container])
            .filter(|text| !text.is_none() && text.offset < disk.arena_len)
            .map(|text| (text.offset, text.offset.saturating_add(text.len).min(disk.arena_len)))
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::new();
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(GAP) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        let pieces = merged
            .into_iter()
            .filter_map(|(start, end)| {
                let bytes = disk.arena_file.read_vec(disk.arena_at + u64::from(start), (end - start) as usize).ok()?;
                Some((start, bytes))
            })
            .collect();
        Texts { pieces }
    }

    /// A string of a row: from the arena in memory, or from `texts` for one on disk.
    fn text<'a>(&'a self, texts: &'a Texts, text: Str) -> &'a str {
        if text.is_none() {
            return "";
        }
        if text.offset >= self.disk_arena() {
            return self.mem_str(text);
        }
        let at = texts.pieces.partition_point(|(start, _)| *start <= text.offset);
        let Some((start, bytes)) = at.checked_sub(1).map(|at| &texts.pieces[at]) else { return "" };
        let from = (text.offset - start) as usize;
        let bytes = bytes.get(from..from + text.len as usize).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or("")
    }

    fn is_live(&self, row: u32) -> bool {
        let base = self.disk_rows();
        let doc = match (row < base, &self.disk) {
            (true, Some(disk)) => disk.doc_of(row),
            _ => self.rows.get((row - base) as usize).map(|entry| entry.doc),
        };
        let Some(&(start, len)) = doc.and_then(|doc| self.files.get(doc as usize)) else { return false };
        start <= row && row < start + len
    }

    /// The rows `ids` (live), as (doc, record), in the order given. Rows on disk are read in
    /// runs of consecutive ids, their strings together; if the file cannot back the reads
    /// (damaged since it was loaded), nothing is answered.
    fn hits(&self, ids: &[u32]) -> Vec<(u32, SymbolRecord)> {
        let base = self.disk_rows();
        let mut on_disk: Vec<u32> = ids.iter().copied().filter(|&row| row < base).collect();
        on_disk.sort_unstable();
        on_disk.dedup();
        let mut loaded: Vec<(u32, Row)> = Vec::with_capacity(on_disk.len());
        let mut at = 0;
        while at < on_disk.len() {
            let mut end = at + 1;
            while end < on_disk.len() && on_disk[end] == on_disk[end - 1] + 1 {
                end += 1;
            }
            let rows = self.rows_in(on_disk[at], (end - at) as u32);
            if rows.len() != end - at {
                return Vec::new();
            }
            loaded.extend(on_disk[at..end].iter().copied().zip(rows));
            at = end;
        }
        let texts = self.texts(&loaded.iter().map(|(_, row)| *row).collect::<Vec<_>>());
        if let Some(disk) = &self.disk
            && !on_disk.is_empty()
            && !disk.still_same()
        {
            return Vec::new();
        }
        ids.iter()
            .filter_map(|&id| {
                let row = if id < base {
                    loaded.binary_search_by_key(&id, |(at, _)| *at).ok().map(|at| loaded[at].1)?
                } else {
                    *self.rows.get((id - base) as usize)?
                };
                Some(self.record(&texts, &row))
            })
            .collect()
    }

    fn record(&self, texts: &Texts, entry: &Row) -> (u32, SymbolRecord) {
        let record = SymbolRecord {
            name: self.text(texts, entry.name).to_owned(),
            kind: SymbolKind::ALL[usize::from(entry.kind)],
            container: (!entry.container.is_none()).then(|| self.text(texts, entry.container).to_owned()),
            signature: self.text(texts, entry.signature).to_owned(),
            span: Span { start_line: entry.start_line as usize, end_line: entry.end_line as usize },
            name_line: entry.name_line as usize,
            depth: usize::from(entry.depth),
        };
        (entry.doc, record)
    }

    /// True once a read from the file failed or the file changed under the table.
    pub(crate) fn is_damaged(&self) -> bool {
        self.disk.as_ref().is_some_and(|disk| !disk.still_same())
    }
}

/// A row as `encode` writes it: ten little-endian words, the kind and the depth.
fn encode_row(row: &Row, out: &mut Vec<u8>) {
    for value in [
        row.name.offset,
        row.name.len,
        row.container.offset,
        row.container.len,
        row.signature.offset,
        row.signature.len,
        row.start_line,
        row.end_line,
        row.name_line,
        row.doc,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.push(row.kind);
    out.push(row.depth);
}

/// The fields of a definition's row other than its strings and doc.
fn template_row(definition: &Definition) -> Row {
    Row {
        name: Str::NONE,
        container: Str::NONE,
        signature: Str::NONE,
        start_line: clamp(definition.span.start_line),
        end_line: clamp(definition.span.end_line),
        name_line: clamp(definition.name_line),
        doc: 0,
        kind: SymbolKind::ALL.iter().position(|kind| *kind == definition.kind).unwrap_or(0) as u8,
        depth: definition.depth.min(u8::MAX as usize) as u8,
    }
}

/// A row as `encode` writes it.
fn decode_row(row: &[u8]) -> Row {
    let field = |index: usize| {
        let at = index * 4;
        u32::from_le_bytes([row[at], row[at + 1], row[at + 2], row[at + 3]])
    };
    Row {
        name: Str { offset: field(0), len: field(1) },
        container: Str { offset: field(2), len: field(3) },
        signature: Str { offset: field(4), len: field(5) },
        start_line: field(6),
        end_line: field(7),
        name_line: field(8),
        doc: field(9),
        kind: row[40],
        depth: row[41],
    }
}

/// A row's kind is known and its strings lie inside an arena of `arena_len` bytes.
fn check_row(row: &Row, arena_len: u32) -> Result<(), String> {
    let in_arena = |text: Str| text.offset.checked_add(text.len).is_some_and(|end| end <= arena_len);
    if !in_arena(row.name) || !in_arena(row.signature) || !(row.container.is_none() || in_arena(row.container)) {
        return Err("a string runs past the arena".into());
    }
    if usize::from(row.kind) >= SymbolKind::ALL.len() {
        return Err("unknown symbol kind".into());
    }
    Ok(())
}

impl NameIndex {
    /// The index of `rows`' names (strings in `arena`).
    fn build(arena: &[u8], rows: &[Row]) -> NameIndex {
        let mut names = NameIds::default();
        for row in rows {
            let name = &arena[row.name.offset as usize..(row.name.offset + row.name.len) as usize];
            names.push(std::str::from_utf8(name).unwrap_or(""));
        }
        names.index()
    }

    fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    fn name(&self, index: usize) -> &[u8] {
        &self.blob[self.starts[index] as usize..self.starts[index + 1] as usize - 1]
    }

    fn postings_of(&self, index: usize) -> &[u32] {
        &self.postings[self.posting_starts[index] as usize..self.posting_starts[index + 1] as usize]
    }

    fn find(&self, name: &[u8]) -> Option<usize> {
        let (mut low, mut high) = (0, self.count());
        while low < high {
            let middle = (low + high) / 2;
            match self.name(middle).cmp(name) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    /// The name a byte position of the blob falls in.
    fn index_at(&self, position: usize) -> usize {
        self.starts.partition_point(|&start| start as usize <= position).saturating_sub(1)
    }

    fn validate(&self, rows: usize) -> Result<(), String> {
        if self.starts.is_empty() {
            return if self.blob.is_empty() && self.posting_starts.is_empty() && self.postings.is_empty() {
                Ok(())
            } else {
                Err("names without starts".into())
            };
        }
        if self.starts.len() != self.posting_starts.len() || self.blob.first() != Some(&b'\n') {
            return Err("name tables disagree".into());
        }
        if self.starts.windows(2).any(|pair| pair[0] >= pair[1]) || self.starts[0] != 1 {
            return Err("name starts out of order".into());
        }
        if *self.starts.last().unwrap_or(&0) as usize != self.blob.len() {
            return Err("name starts do not end the blob".into());
        }
        if self.posting_starts.windows(2).any(|pair| pair[0] > pair[1])
            || *self.posting_starts.last().unwrap_or(&0) as usize != self.postings.len()
        {
            return Err("posting ranges out of order".into());
        }
        if self.postings.iter().any(|&row| row as usize >= rows) {
            return Err("a posting points past the rows".into());
        }
        Ok(())
    }
}

fn lower(name: &str) -> String {
    let mut lowered = String::with_capacity(name.len());
    lower_into(name, &mut lowered);
    lowered
}

/// `name` lower-cased (ASCII quickly, the rest by Unicode), appended to `out`: the one
/// lower-casing the name index and its lookups share.
fn lower_into(name: &str, out: &mut String) {
    if name.is_ascii() {
        out.extend(name.bytes().map(|byte| char::from(byte.to_ascii_lowercase())));
    } else {
        out.push_str(&name.to_lowercase());
    }
}

fn clamp(line: usize) -> u32 {
    line.min(u32::MAX as usize) as u32
}

fn write_u32(out: &mut impl Write, value: u32) -> io::Result<()> {
    out.write_all(&value.to_le_bytes())
}

fn write_bytes(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    write_u32(out, u32::try_from(bytes.len()).map_err(io::Error::other)?)?;
    out.write_all(bytes)
}

fn write_u32s(out: &mut impl Write, values: &[u32]) -> io::Result<()> {
    write_u32(out, u32::try_from(values.len()).map_err(io::Error::other)?)?;
    let mut buffer = Vec::with_capacity(4 * 16_384);
    for chunk in values.chunks(16_384) {
        buffer.clear();
        for value in chunk {
            buffer.extend_from_slice(&value.to_le_bytes());
        }
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// Sections of an encoded table, read into buffers of their own size: a length is trusted
/// only as far as the bytes behind it actually arrive.
struct Input<'r, R> {
    reader: &'r mut R,
}

impl<R: Source> Input<'_, R> {
    /// `len` bytes; the buffer is sized at once when the source holds that many (a file), so
    /// a large section is never copied while it grows.
    fn exact(&mut self, len: usize) -> Result<Vec<u8>, String> {
        let holds = self.reader.remaining().is_some_and(|left| len as u64 <= left);
        let mut buffer = Vec::with_capacity(if holds { len } else { 0 });
        let read = (&mut *self.reader).take(len as u64).read_to_end(&mut buffer).map_err(|error| error.to_string())?;
        if read != len {
            return Err("truncated".into());
        }
        Ok(buffer)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut word = [0u8; 4];
        self.reader.read_exact(&mut word).map_err(|_| "truncated")?;
        Ok(u32::from_le_bytes(word))
    }

    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let len = self.u32()? as usize;
        self.exact(len)
    }

    /// `len` words read a chunk at a time, straight into the array.
    fn u32s(&mut self) -> Result<Vec<u32>, String> {
        let len = self.u32()? as usize;
        let holds = self.reader.remaining().is_some_and(|left| (len as u64).saturating_mul(4) <= left);
        let mut words = Vec::with_capacity(if holds { len } else { len.min(1 << 16) });
        let mut chunk = vec![0u8; 4 * 16_384];
        let mut left = len;
        while left > 0 {
            let take = left.min(16_384);
            let bytes = &mut chunk[..take * 4];
            self.reader.read_exact(bytes).map_err(|_| "truncated")?;
            words.extend(bytes.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]])));
            left -= take;
        }
        Ok(words)
    }
}

#[cfg(test)]
mod tests {
    use loupe_syntax::{Definition, Span, SymbolKind};

    use super::SymbolTable;

    fn definition(name: &str, container: Option<&str>, line: usize) -> Definition {
        Definition {
            name: name.to_owned(),
            kind: SymbolKind::Function,
            container: container.map(str::to_owned),
            signature: format!("fn {name}()"),
            doc: None,
            span: Span { start_line: line, end_line: line + 2 },
            name_line: line,
            name_column: 4,
            body: None,
            depth: usize::from(container.is_some()),
        }
    }

    fn names(found: &[(u32, crate::records::SymbolRecord)]) -> Vec<(u32, String)> {
        found.iter().map(|(doc, record)| (*doc, record.name.clone())).collect()
    }

    fn built() -> SymbolTable {
        let mut table = SymbolTable::default();
        table.push_file(&[definition("parse_config", None, 1), definition("Parse", Some("Config"), 5)]);
        table.push_file(&[]);
        table.push_file(&[definition("parse", Some("Config"), 3), definition("config_path", Some("Config"), 9)]);
        table.finish_build();
        table
    }

    #[test]
    fn exact_names_are_case_insensitive_and_in_row_order() {
        let table = built();
        assert_eq!(names(&table.named("parse")), [(0, "Parse".to_owned()), (2, "parse".to_owned())]);
        assert!(table.named("pars").is_empty());
        assert_eq!(names(&table.named("parse_config")), [(0, "parse_config".to_owned())], "the last name");
        assert_eq!(names(&table.named("config_path")), [(2, "config_path".to_owned())], "the first name");
        let (_, record) = &table.named("config_path")[0];
        assert_eq!(record.container.as_deref(), Some("Config"));
        assert_eq!(record.signature, "fn config_path()");
        assert_eq!((record.span.start_line, record.span.end_line, record.depth), (9, 11, 1));
    }

    #[test]
    fn substrings_come_whole_name_by_name_in_order_and_cut_at_the_limit() {
        let table = built();
        let (found, cut) = table.containing("config", 10);
        assert_eq!(names(&found), [(2, "config_path".to_owned()), (0, "parse_config".to_owned())]);
        assert!(!cut);
        let (found, cut) = table.containing("config", 1);
        assert_eq!(names(&found), [(2, "config_path".to_owned())]);
        assert!(cut);
        assert!(table.containing("parse", 10).0.iter().all(|(_, record)| record.name == "parse_config"));
    }

    #[test]
    fn replaced_and_removed_files_stop_answering_and_compaction_keeps_the_rest() {
        let mut table = built();
        table.set_file(0, &[definition("reparsed", None, 2)]);
        table.remove_file(2);
        table.set_file(3, &[definition("parse_again", None, 1)]);
        assert!(table.named("parse").is_empty());
        assert_eq!(names(&table.named("reparsed")), [(0, "reparsed".to_owned())]);
        assert_eq!(
            names(&table.containing("parse", 10).0),
            [(3, "parse_again".to_owned()), (0, "reparsed".to_owned())]
        );
        assert_eq!(table.len(), 2);
        let mut suggestions = table.names_where(&|name| name.starts_with('r') || name.starts_with('p'));
        suggestions.sort();
        assert_eq!(suggestions, ["parse_again", "reparsed"]);
        table.compact();
        assert!(!table.needs_compaction());
        assert_eq!(names(&table.named("parse_again")), [(3, "parse_again".to_owned())]);
        assert_eq!(table.len(), 2);
        assert_eq!(table.file_count(), 4);
    }

    /// A build that writes its rows out (the writer's) answers exactly as one in memory, after
    /// changes too, and encodes to the same bytes.
    #[test]
    fn a_spilled_build_answers_like_one_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut spilled = SymbolTable::spilling(dir.path()).unwrap();
        let memory = built();
        spilled.push_file(&[definition("parse_config", None, 1), definition("Parse", Some("Config"), 5)]);
        spilled.push_file_from(&memory, 1);
        spilled.push_file_from(&memory, 2);
        spilled.finish_build();
        assert!(spilled.rows.is_empty() && spilled.arena.is_empty(), "the rows are on disk");
        let same = |left: &SymbolTable, right: &SymbolTable| {
            for name in ["parse", "config_path", "parse_config", "reparsed", "nothing"] {
                assert_eq!(left.named(name), right.named(name), "{name}");
            }
            for (needle, limit) in [("config", 10), ("config", 1), ("parse", 10), ("a", 2)] {
                assert_eq!(left.containing(needle, limit), right.containing(needle, limit), "{needle}");
            }
            let (mut left_names, mut right_names) = (left.names_where(&|_| true), right.names_where(&|_| true));
            left_names.sort();
            right_names.sort();
            assert_eq!(left_names, right_names);
            assert_eq!(left.len(), right.len());
        };
        same(&spilled, &memory);
        let (mut spilled_bytes, mut memory_bytes) = (Vec::new(), Vec::new());
        spilled.encode(&mut spilled_bytes).unwrap();
        memory.encode(&mut memory_bytes).unwrap();
        assert_eq!(spilled_bytes, memory_bytes);
        let mut memory = memory;
        for table in [&mut spilled, &mut memory] {
            table.set_file(0, &[definition("reparsed", None, 2)]);
            table.remove_file(2);
        }
        same(&spilled, &memory);
        spilled.compact();
        same(&spilled, &memory);
        spilled.compact_all();
        memory.compact_all();
        same(&spilled, &memory);
    }

    #[test]
    fn encode_then_decode_answers_the_same_and_damage_is_an_error() {
        let table = built();
        let mut bytes = Vec::new();
        table.encode(&mut bytes).unwrap();
        let decoded = SymbolTable::decode_from(&mut &bytes[..], None).unwrap();
        assert_eq!(names(&decoded.named("parse")), names(&table.named("parse")));
        assert_eq!(names(&decoded.containing("config", 10).0), names(&table.containing("config", 10).0));
        for cut in [0, 3, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(SymbolTable::decode_from(&mut &bytes[..cut], None).is_err(), "truncated at {cut}");
        }
        for position in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0xA5;
            // Any answer is acceptable except a panic, now or on a lookup.
            if let Ok(table) = SymbolTable::decode_from(&mut &damaged[..], None) {
                let _ = table.named("parse");
                let _ = table.containing("a", 10);
                let _ = table.names_where(&|_| true);
            }
        }
    }
}
