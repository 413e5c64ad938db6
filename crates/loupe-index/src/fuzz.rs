//! Stable-Rust fuzzing of the index decoders: the persisted tables (`tables.bin`: the file table,
//! `SymbolTable::decode_from`, `LinkTable::decode_from`, through `store::decode`) and the trigram
//! text index (`text.bin`: `TrigramIndex::from_bytes` and `from_bytes_unverified`, then every
//! posting list and a few lookups).
//!
//! cargo-fuzz needs a nightly compiler, so these are long-running property tests instead. Each
//! harness damages the bytes of a real index, built once from a handful of tiny files in three
//! languages: bit flips, truncation, overwritten runs, inserted and removed bytes, length and
//! count fields (the real ones, found by walking the layout, and random aligned words) set to
//! huge values, or a whole random buffer. The properties: nothing panics, nothing allocates by a
//! damaged length (the process's address space is capped, so such an allocation aborts the run
//! instead of succeeding lazily under overcommit), damage is refused or decodes to tables that
//! answer every lookup, and an index whose snapshot is refused rebuilds to exact answers.
//!
//! Run long: `LOUPE_FUZZ_CASES=1000000 cargo test --release -p loupe-index --locked fuzz --
//! --nocapture` (default 256 cases per harness). Each harness prints its executions and time.
//! What a run found is kept below as named regression tests.

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use loupe_core::RepoPath;
use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_vfs::{Exclusions, Root};
use proptest::prelude::*;
use proptest::sample::Index as At;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::links::LinkTable;
use crate::store;
use crate::symbols::SymbolTable;
use crate::trigram::{Candidates, LayeredIndex, TrigramIndex, plan_literal, plan_regex, trigram, trigrams_of};
use crate::{Index, IndexOptions};

/// Cases per harness: `LOUPE_FUZZ_CASES`, 256 by default so CI stays fast.
fn cases() -> u32 {
    std::env::var("LOUPE_FUZZ_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(256)
}

/// Runs `test` over `cases` inputs of `strategy`, counting executions (shrinking included) and
/// printing the count and the time, then failing with proptest's minimal input if any failed.
fn run<S: Strategy>(name: &str, cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    loupe_vfs::testing::cap_address_space();
    let executions = AtomicU64::new(0);
    let started = Instant::now();
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 10_000, ..Config::default() };
    let result = TestRunner::new(config).run(&strategy, |value| {
        executions.fetch_add(1, Ordering::Relaxed);
        test(value)
    });
    eprintln!(
        "fuzz harness {name}: {} executions in {:.1} s",
        executions.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    if let Err(error) = result {
        panic!("fuzz harness {name} failed: {error}");
    }
}

/// The real index every harness damages.
struct Fixture {
    root_key: String,
    tables: Vec<u8>,
    text: Vec<u8>,
    /// Byte ranges of the symbol-table and link-table sections inside `tables`.
    symbol_section: std::ops::Range<usize>,
    link_section: std::ops::Range<usize>,
    /// (offset, width) of every length or count field of `tables` / `text`.
    table_fields: Vec<(usize, usize)>,
    text_fields: Vec<(usize, usize)>,
}

const FILES: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "use std::fmt;\n\npub struct Beta;\n\nimpl fmt::Display for Beta {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, \"beta\") }\n}\n\npub fn alpha_one() -> u32 { 1 }\n",
    ),
    (
        "src/util.py",
        "from os import path\n\nclass Shape:\n    pass\n\nclass Circle(Shape):\n    def area(self):\n        return 3\n\ndef gamma_two():\n    return path.join('a', 'b')\n",
    ),
    (
        "cmd/main.go",
        "package main\n\nimport \"fmt\"\n\ntype Point struct{ X int }\n\nfunc Epsilon() { fmt.Println(\"delta\") }\n",
    ),
    ("notes.md", "delta three\n"),
];

fn write_workspace(dir: &Path) {
    for (path, body) in FILES {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, body).unwrap();
    }
}

fn open_index(dir: &Path, index_dir: &Path) -> Index {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    let root = Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap();
    Index::open(root, IndexOptions { index_dir: index_dir.to_path_buf(), max_file_bytes: 1 << 20, threads: 1 })
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(dir.path());
        let index_dir = tempfile::tempdir().unwrap();
        let index = open_index(dir.path(), index_dir.path());
        index.refresh(&|_, _| {});
        let root_key = index.root().canonical().display().to_string();
        drop(index);
        let tables = std::fs::read(index_dir.path().join("tables.bin")).unwrap();
        let text = std::fs::read(index_dir.path().join(store::TEXT_FILE)).unwrap();
        let (symbol_section, link_section, table_fields) = table_layout(&tables);
        let text_fields = text_layout(&text);
        let fixture = Fixture { root_key, tables, text, symbol_section, link_section, table_fields, text_fields };
        // The undamaged bytes decode, so a refusal below is the damage's doing.
        let snapshot = store::decode(&fixture.tables[..], &fixture.root_key).expect("the real snapshot loads");
        assert_eq!(snapshot.files.len(), FILES.len());
        assert_eq!(snapshot.symbols.named("alpha_one").len(), 1);
        assert!(TrigramIndex::from_bytes(fixture.text.clone()).is_ok());
        fixture
    })
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// Walks the layout `store::save` writes: the header length (u64) and header, then the symbol
/// table (`LPSY`, arena, rows, files, blob, starts, posting starts, postings), then the link
/// table (u64 length and postcard).
fn table_layout(tables: &[u8]) -> (std::ops::Range<usize>, std::ops::Range<usize>, Vec<(usize, usize)>) {
    let mut fields = vec![(0, 8)];
    let header_len = u64::from_le_bytes(tables[0..8].try_into().unwrap()) as usize;
    let symbols_at = 8 + header_len;
    assert_eq!(&tables[symbols_at..symbols_at + 4], b"LPSY");
    let mut at = symbols_at + 4;
    // arena (bytes), row count and rows, then files, blob, starts, posting starts, postings.
    fields.push((at, 4));
    at += 4 + u32_at(tables, at);
    fields.push((at, 4));
    at += 4 + 42 * u32_at(tables, at);
    for width in [4, 1, 4, 4, 4] {
        fields.push((at, 4));
        at += 4 + width * u32_at(tables, at);
    }
    let symbol_section = symbols_at..at;
    fields.push((at, 8));
    let link_len = u64::from_le_bytes(tables[at..at + 8].try_into().unwrap()) as usize;
    let link_section = at..at + 8 + link_len;
    assert_eq!(link_section.end, tables.len());
    (symbol_section, link_section, fields)
}

/// How many of `text_layout`'s fields are the header's.
const TEXT_HEADER_FIELDS: usize = 10;

/// The header's count, bound, offset and length fields, and each table entry's offset, length
/// and doc count.
fn text_layout(text: &[u8]) -> Vec<(usize, usize)> {
    let mut fields = vec![(12, 4), (16, 4), (20, 4)];
    fields.extend((24..80).step_by(8).map(|at| (at, 8)));
    let trigrams = u64::from_le_bytes(text[24..32].try_into().unwrap()) as usize;
    for entry in 0..trigrams {
        let at = 96 + 20 * entry;
        fields.extend([(at + 4, 8), (at + 12, 4), (at + 16, 4)]);
    }
    fields
}

/// One kind of damage.
#[derive(Debug, Clone)]
enum Damage {
    Flip {
        at: At,
        bit: u8,
    },
    Truncate(At),
    Overwrite {
        at: At,
        run: Vec<u8>,
    },
    Insert {
        at: At,
        run: Vec<u8>,
    },
    Remove {
        at: At,
        len: usize,
    },
    /// A real length or count field of the layout set to `value`.
    HugeField {
        field: At,
        value: u64,
    },
    /// The same, among the header's fields only (the text index has hundreds of table-entry
    /// fields, and a header field must often be hit twice, such as the doc count and its bound).
    HugeHeaderField {
        field: At,
        value: u64,
    },
    /// A random aligned word (4 or 8 bytes) set to `value`.
    HugeWord {
        at: At,
        wide: bool,
        value: u64,
    },
}

/// What a case feeds the decoder: damage applied to the real bytes, or a random buffer.
#[derive(Debug, Clone)]
enum Input {
    Damaged(Vec<Damage>),
    Whole(Vec<u8>),
}

fn huge() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        Just(1 << 62),
        Just(1 << 63),
        Just(u64::from(u32::MAX)),
        Just(1 << 31),
        Just(1 << 32),
        Just(u64::from(u32::MAX) - 1),
        0u64..4096,
        any::<u64>(),
    ]
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<At>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        1 => any::<At>().prop_map(Damage::Truncate),
        2 => (any::<At>(), prop::collection::vec(any::<u8>(), 1..24)).prop_map(|(at, run)| Damage::Overwrite { at, run }),
        1 => (any::<At>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, run)| Damage::Insert { at, run }),
        1 => (any::<At>(), 1usize..16).prop_map(|(at, len)| Damage::Remove { at, len }),
        2 => (any::<At>(), huge()).prop_map(|(field, value)| Damage::HugeField { field, value }),
        4 => (any::<At>(), huge()).prop_map(|(field, value)| Damage::HugeHeaderField { field, value }),
        2 => (any::<At>(), any::<bool>(), huge()).prop_map(|(at, wide, value)| Damage::HugeWord { at, wide, value }),
    ]
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        12 => prop::collection::vec(damage(), 1..5).prop_map(Input::Damaged),
        1 => prop::collection::vec(any::<u8>(), 0..600).prop_map(Input::Whole),
    ]
}

/// Writes `value` over the `width` bytes at `at`, as far as they exist.
fn put(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    let word = value.to_le_bytes();
    for (offset, byte) in word[..width].iter().enumerate() {
        if let Some(slot) = bytes.get_mut(at + offset) {
            *slot = *byte;
        }
    }
}

/// The bytes `input` makes of `original`, whose length and count fields are `fields` (offsets
/// into `original`, the header's first: `header` of them).
fn apply(original: &[u8], fields: &[(usize, usize)], header: usize, input: &Input) -> Vec<u8> {
    let damages = match input {
        Input::Whole(bytes) => return bytes.clone(),
        Input::Damaged(damages) => damages,
    };
    let mut bytes = original.to_vec();
    for damage in damages {
        match damage {
            Damage::Flip { at, bit } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] ^= 1 << bit;
            }
            Damage::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            Damage::Overwrite { at, run } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                for (offset, byte) in run.iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(at + offset) {
                        *slot = *byte;
                    }
                }
            }
            Damage::Insert { at, run } => {
                let at = at.index(bytes.len() + 1);
                bytes.splice(at..at, run.iter().copied());
            }
            Damage::Remove { at, len } if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes.drain(at..(at + len).min(bytes.len()));
            }
            Damage::HugeField { field, value } if !fields.is_empty() => {
                let (at, width) = fields[field.index(fields.len())];
                put(&mut bytes, at, width, *value);
            }
            Damage::HugeHeaderField { field, value } if header > 0 => {
                let (at, width) = fields[field.index(header.min(fields.len()))];
                put(&mut bytes, at, width, *value);
            }
            Damage::HugeWord { at, wide, value } => {
                let width = if *wide { 8 } else { 4 };
                let words = bytes.len() / width;
                if words > 0 {
                    put(&mut bytes, at.index(words) * width, width, *value);
                }
            }
            _ => {}
        }
    }
    bytes
}

/// Every lookup a loaded symbol table serves, then compaction and a round trip: a table that
/// decoded must be usable, not merely decodable.
fn exercise_symbols(symbols: &mut SymbolTable) -> Result<(), TestCaseError> {
    for name in ["alpha_one", "beta", "gamma_two", "epsilon", "shape", "", "\n"] {
        let _ = symbols.named(name);
    }
    for needle in ["a", "e", "ta", "_", "alpha"] {
        let _ = symbols.containing(needle, 3);
        let _ = symbols.containing(needle, 1000);
    }
    let _ = symbols.names_where(&|_| true);
    let _ = symbols.len();
    symbols.remove_file(0);
    symbols.set_file(symbols.file_count() as u32, &[]);
    symbols.compact();
    let mut encoded = Vec::new();
    symbols.encode(&mut encoded).map_err(|error| TestCaseError::fail(format!("re-encoding failed: {error}")))?;
    let again = SymbolTable::decode_from(&mut &encoded[..], None)
        .map_err(|reason| TestCaseError::fail(format!("a compacted table does not decode: {reason}")))?;
    prop_assert_eq!(again.file_count(), symbols.file_count());
    prop_assert_eq!(again.len(), symbols.len());
    Ok(())
}

fn exercise_links(links: &LinkTable, docs: usize) {
    for doc in 0..=docs as u32 + 1 {
        let _ = links.get(doc);
    }
}

/// Every posting list, the exhaustive check, and literal, regex and layered lookups.
fn exercise_text(index: TrigramIndex) -> Result<(), TestCaseError> {
    let _ = index.verify();
    let mut out = Vec::new();
    let entries: Vec<_> = index.entries().collect();
    for entry in &entries {
        let _ = index.decode_entry(entry, &mut out);
    }
    let doc_ids = index.doc_ids();
    prop_assert!(doc_ids.windows(2).all(|pair| pair[0] < pair[1]), "doc ids out of order");
    let bound = doc_ids.last().map_or(0, |&last| u64::from(last) + 1);
    let mut plans =
        vec![plan_regex(r"gam+a_t[wo]+|Epsilon\(\)", false).unwrap(), plan_regex("delta.*three", true).unwrap()];
    plans.extend(["alpha_one", "gamma_two", "fmt", "package main", "def ", "zzzz"].map(plan_literal));
    for plan in &plans {
        if let Candidates::Docs(docs) = index.candidates(plan) {
            prop_assert!(docs.windows(2).all(|pair| pair[0] < pair[1]), "candidates out of order");
            prop_assert!(docs.iter().all(|&doc| u64::from(doc) < bound), "a candidate past the doc-id bound");
        }
    }
    for t in [trigram(b'a', b'l', b'p'), trigram(b'd', b'e', b'l'), 0, (1 << 24) - 1, u32::MAX] {
        let _ = index.postings(t);
        let _ = index.doc_frequency(t);
    }
    let _ = index.contains_doc(0);
    let mut layered = LayeredIndex::new(Some(index));
    let mut trigrams = Vec::new();
    trigrams_of(b"alpha_one gamma_two", &mut trigrams);
    layered.upsert(1, &trigrams);
    layered.remove(0);
    for plan in &plans {
        let _ = layered.candidates(plan);
    }
    Ok(())
}

#[test]
fn fuzz_tables_snapshot() {
    let fixture = fixture();
    // `tables.bin` has no checksum: damage the structure cannot see (a byte of a name, a size)
    // is accepted. Counted, so a run shows how often.
    let accepted = AtomicU64::new(0);
    run("tables_snapshot", cases(), input(), |input| {
        let bytes = apply(&fixture.tables, &fixture.table_fields, fixture.table_fields.len(), &input);
        if let Some(mut snapshot) = store::decode(&bytes[..], &fixture.root_key) {
            if bytes != fixture.tables {
                accepted.fetch_add(1, Ordering::Relaxed);
            }
            prop_assert_eq!(snapshot.symbols.file_count(), snapshot.files.len());
            exercise_links(&snapshot.links, snapshot.files.len());
            exercise_symbols(&mut snapshot.symbols)?;
        }
        Ok(())
    });
    eprintln!("fuzz harness tables_snapshot: {} changed snapshots decoded", accepted.load(Ordering::Relaxed));
}

#[test]
fn fuzz_symbol_table_section() {
    let fixture = fixture();
    let section = &fixture.tables[fixture.symbol_section.clone()];
    let start = fixture.symbol_section.start;
    let fields: Vec<(usize, usize)> = fixture
        .table_fields
        .iter()
        .filter(|(at, _)| fixture.symbol_section.contains(at))
        .map(|&(at, width)| (at - start, width))
        .collect();
    run("symbol_table_section", cases(), input(), |input| {
        let bytes = apply(section, &fields, fields.len(), &input);
        if let Ok(mut symbols) = SymbolTable::decode_from(&mut &bytes[..], None) {
            exercise_symbols(&mut symbols)?;
        }
        Ok(())
    });
}

#[test]
fn fuzz_link_table_section() {
    let fixture = fixture();
    let section = &fixture.tables[fixture.link_section.clone()];
    run("link_table_section", cases(), input(), |input| {
        let bytes = apply(section, &[(0, 8)], 1, &input);
        if let Ok(links) = LinkTable::decode_from(&mut &bytes[..]) {
            exercise_links(&links, FILES.len());
        }
        Ok(())
    });
}

#[test]
fn fuzz_text_index() {
    let fixture = fixture();
    let strategy = (input(), any::<bool>());
    run("text_index", cases(), strategy, |(input, reseal)| {
        let mut bytes = apply(&fixture.text, &fixture.text_fields, TEXT_HEADER_FIELDS, &input);
        if reseal {
            // Past the checksum, to the structural checks behind it.
            TrigramIndex::reseal(&mut bytes);
        } else if bytes != fixture.text {
            // The checksum covers every byte: any change is refused.
            prop_assert!(TrigramIndex::from_bytes(bytes.clone()).is_err(), "a damaged text index passed its checksum");
        }
        if let Ok(index) = TrigramIndex::from_bytes(bytes.clone()) {
            exercise_text(index)?;
        }
        if let Ok(index) = TrigramIndex::from_bytes_unverified(bytes) {
            exercise_text(index)?;
        }
        Ok(())
    });
}

/// Which index file a rebuild case damages.
#[derive(Debug, Clone)]
enum Target {
    Tables(Input),
    Text(Input),
}

/// The whole path: a damaged file in the index directory, then `Index::open`, `load_snapshot`
/// and `refresh`. A refused snapshot must rebuild to exact answers. Each case walks and parses
/// the workspace, so this harness runs a twentieth of the cases (at least 16).
#[test]
fn fuzz_index_rebuilds_after_damage() {
    let fixture = fixture();
    let dir = tempfile::tempdir().unwrap();
    write_workspace(dir.path());
    let index_dir = tempfile::tempdir().unwrap();
    // Hold the writer lock so the index under test is read-only: it rebuilds in memory and
    // writes nothing (persisting a rebuilt index is the r15 tests' business), which keeps a
    // case cheap. The fixture's bytes are for another root: rewrite the root key.
    let _lock = store::WriterLock::try_acquire(index_dir.path()).unwrap();
    let probe = open_index(dir.path(), index_dir.path());
    assert!(!probe.is_writer());
    let root_key = probe.root().canonical().display().to_string();
    drop(probe);
    let tables = rekey(&fixture.tables, &fixture.root_key, &root_key);
    let (_, _, table_fields) = table_layout(&tables);
    let strategy = prop_oneof![
        3 => input().prop_map(Target::Tables),
        1 => input().prop_map(Target::Text),
    ];
    let cases = (cases() / 20).max(16);
    let util = RepoPath::normalize("src/util.py").unwrap();
    run("index_rebuilds_after_damage", cases, strategy, |target| {
        let (tables, text) = match &target {
            Target::Tables(input) => (apply(&tables, &table_fields, table_fields.len(), input), fixture.text.clone()),
            Target::Text(input) => {
                (tables.clone(), apply(&fixture.text, &fixture.text_fields, TEXT_HEADER_FIELDS, input))
            }
        };
        std::fs::write(index_dir.path().join("tables.bin"), &tables).unwrap();
        std::fs::write(index_dir.path().join(store::TEXT_FILE), &text).unwrap();
        let index = open_index(dir.path(), index_dir.path());
        let loaded = index.load_snapshot();
        let stats = index.refresh(&|_, _| {});
        let gamma: Vec<String> =
            index.text_candidates(&plan_literal("gamma_two")).iter().map(|path| path.as_str().to_owned()).collect();
        let _ = index.symbols_containing("a", 10);
        if !loaded {
            prop_assert!(stats.full_rebuild, "a refused snapshot did not rebuild: {:?}", stats);
            prop_assert_eq!(index.symbols_named("alpha_one").len(), 1);
            prop_assert_eq!(index.symbols_named("Epsilon").len(), 1);
            prop_assert_eq!(gamma, ["src/util.py"]);
            let links = index.links_of(&util).unwrap_or_default();
            prop_assert!(links.imports.iter().any(|import| import.module == "os"), "links lost: {:?}", links);
        }
        Ok(())
    });
}

/// `tables.bin`'s header as postcard lays it out: format, root, complete, the file table, and
/// the files over the size limit (path, size, modification time).
type HeaderTuple = (u32, String, bool, Vec<crate::FileRecord>, Vec<(RepoPath, u64, u64)>);

/// The header of `tables`, decoded.
fn header_of(tables: &[u8]) -> HeaderTuple {
    let header_len = u64::from_le_bytes(tables[0..8].try_into().unwrap()) as usize;
    postcard::from_bytes(&tables[8..8 + header_len]).unwrap()
}

/// `tables` with `header` in place of its own (re-encoded, so its length prefix follows).
fn with_header(tables: &[u8], header: &HeaderTuple) -> Vec<u8> {
    let header_len = u64::from_le_bytes(tables[0..8].try_into().unwrap()) as usize;
    let encoded = postcard::to_stdvec(header).unwrap();
    let mut out = (encoded.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&encoded);
    out.extend_from_slice(&tables[8 + header_len..]);
    out
}

/// `tables` with its header's root key replaced.
fn rekey(tables: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut header = header_of(tables);
    assert_eq!(header.1, from);
    header.1 = to.to_owned();
    with_header(tables, &header)
}

// Regression tests: what the fuzzer found, reproduced through the same decoders.

/// A resealed `text.bin` whose header claims 2^32 - 1 documents (and as large a doc-id bound)
/// made `from_bytes` reserve 16 GiB for the doc list before reading a byte of it.
#[test]
fn f1_text_index_claiming_four_billion_docs_is_refused_without_allocating_for_them() {
    loupe_vfs::testing::cap_address_space();
    let mut bytes = fixture().text.clone();
    put(&mut bytes, 16, 4, u64::from(u32::MAX));
    put(&mut bytes, 20, 4, u64::from(u32::MAX));
    TrigramIndex::reseal(&mut bytes);
    assert!(TrigramIndex::from_bytes(bytes.clone()).is_err());
    assert!(TrigramIndex::from_bytes_unverified(bytes).is_err());
}

/// Found in review, not by the fuzzer: a file table naming a path outside the root (`..`), an
/// absolute one or the root itself decoded, and the index would hand it out as an indexed file.
/// The list of files over the size limit is checked the same way.
#[test]
fn snapshot_naming_a_path_outside_the_root_is_refused() {
    let fixture = fixture();
    let reseal = |header: &HeaderTuple| with_header(&fixture.tables, header);
    let original = header_of(&fixture.tables);
    let good: RepoPath = RepoPath::normalize("big/register.h").unwrap();
    let mut listed = original.clone();
    listed.4.push((good, 1 << 30, 1));
    let snapshot = store::decode(&reseal(&listed)[..], &fixture.root_key).expect("a listed large file loads");
    assert_eq!(snapshot.oversized.len(), original.4.len() + 1);
    for bad in ["../outside", "/etc/passwd", "", "src/../../x", "src//lib.rs", "src/lib.rs\0"] {
        let bad: RepoPath = postcard::from_bytes(&postcard::to_stdvec(bad).unwrap()).unwrap();
        // In the file table, and in the list of files over the size limit.
        let mut in_files = original.clone();
        in_files.3[0].path = bad.clone();
        assert!(store::decode(&reseal(&in_files)[..], &fixture.root_key).is_none(), "{bad:?} was accepted");
        let mut in_oversized = original.clone();
        in_oversized.4.push((bad.clone(), 1 << 30, 1));
        assert!(store::decode(&reseal(&in_oversized)[..], &fixture.root_key).is_none(), "{bad:?} was accepted");
    }
}
