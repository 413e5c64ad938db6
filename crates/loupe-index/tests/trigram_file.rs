//! The trigram index from the caller's side: build → write → open → postings round trip,
//! layering (overlay and tombstones) and compaction, and refusing corrupt or foreign files.
//! Owns no fixtures beyond the small corpora written here.

use std::path::Path;

use loupe_index::trigram::{
    Candidates, IndexBuilder, LayeredIndex, Plan, TrigramIndex, plan_literal, plan_regex, trigram, trigrams_of,
};

const CORPUS: &[&str] = &[
    "fn main() { println!(\"hello world\"); }",
    "struct Hello { world: u32 }",
    "the quick brown fox jumps over the lazy dog",
    "",
    "ab",
    "HELLO again, World",
    "naïve café résumé",
];

fn trigrams(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    trigrams_of(text.as_bytes(), &mut out);
    out
}

/// Doc id = 10 * position, to keep ids sparse.
fn build(corpus: &[&str]) -> IndexBuilder {
    let mut builder = IndexBuilder::new();
    for (i, text) in corpus.iter().enumerate() {
        builder.add(10 * i as u32, &trigrams(text));
    }
    builder
}

fn write_and_open(dir: &Path, corpus: &[&str]) -> TrigramIndex {
    let path = dir.join("text.idx");
    build(corpus).write(&path).unwrap();
    TrigramIndex::open(&path).unwrap()
}

fn docs(candidates: Candidates) -> Vec<u32> {
    match candidates {
        Candidates::All => panic!("expected a narrowed candidate set"),
        Candidates::Docs(docs) => docs,
    }
}

#[test]
fn postings_round_trip_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let index = write_and_open(dir.path(), CORPUS);
    assert_eq!(index.doc_count(), CORPUS.len() as u32);
    assert_eq!(index.doc_ids(), &[0, 10, 20, 30, 40, 50, 60]);
    index.verify().unwrap();
    // Every trigram of every document lists exactly the documents that have it.
    let mut all: Vec<u32> = CORPUS.iter().flat_map(|text| trigrams(text)).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(index.trigram_count(), all.len() as u64);
    for &t in &all {
        let expected: Vec<u32> = CORPUS
            .iter()
            .enumerate()
            .filter(|(_, text)| trigrams(text).contains(&t))
            .map(|(i, _)| 10 * i as u32)
            .collect();
        assert_eq!(index.postings(t).unwrap(), expected, "trigram {t:#08x}");
    }
    assert_eq!(index.postings(trigram(b'z', b'z', b'z')).unwrap(), Vec::<u32>::new());
    // No temporary file is left beside the index.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn in_memory_finish_matches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let from_file = write_and_open(dir.path(), CORPUS);
    let in_memory = build(CORPUS).finish();
    for query in ["hello", "world", "fox", "café", "zzz"] {
        let plan = plan_literal(query);
        assert_eq!(in_memory.candidates(&plan), from_file.candidates(&plan), "{query}");
    }
    // Written as is, it opens (checksum included) like the builder's own file.
    let path = dir.path().join("copy.idx");
    in_memory.write(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(dir.path().join("text.idx")).unwrap());
}

#[test]
fn literal_and_regex_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let index = write_and_open(dir.path(), CORPUS);
    assert_eq!(docs(index.candidates(&plan_literal("hello"))), vec![0, 10, 50]);
    assert_eq!(docs(index.candidates(&plan_literal("World"))), vec![0, 10, 50]);
    assert_eq!(docs(index.candidates(&plan_literal("lazy dog"))), vec![20]);
    assert_eq!(docs(index.candidates(&plan_literal("résumé"))), vec![60]);
    assert_eq!(docs(index.candidates(&plan_literal("absent"))), Vec::<u32>::new());
    assert_eq!(index.candidates(&plan_literal("ab")), Candidates::All);
    let plan = plan_regex(r"(hello|quick)\s+\w+", false).unwrap();
    assert_eq!(docs(index.candidates(&plan)), vec![0, 10, 20, 50]);
    let plan = plan_regex(r"\bfox\b.*dog", false).unwrap();
    assert_eq!(docs(index.candidates(&plan)), vec![20]);
    assert_eq!(index.candidates(&plan_regex("a.*b", false).unwrap()), Candidates::All);
}

#[test]
fn overlay_and_tombstones_answer_for_changed_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = LayeredIndex::new(Some(write_and_open(dir.path(), CORPUS)));
    // Doc 20 changes: found by its new content, no longer by its old.
    index.upsert(20, &trigrams("a slow red panda"));
    assert_eq!(docs(index.candidates(&plan_literal("panda"))), vec![20]);
    assert_eq!(docs(index.candidates(&plan_literal("fox"))), Vec::<u32>::new());
    // Doc 0 is removed; doc 70 is new; a second change to 20 replaces the first.
    index.remove(0);
    index.upsert(70, &trigrams("hello from a new file"));
    index.upsert(20, &trigrams("the quick brown fox is back"));
    assert_eq!(docs(index.candidates(&plan_literal("hello"))), vec![10, 50, 70]);
    assert_eq!(docs(index.candidates(&plan_literal("panda"))), Vec::<u32>::new());
    assert_eq!(docs(index.candidates(&plan_literal("fox"))), vec![20]);
    // A plan mixing trigrams must be satisfied by one document's own content, never by the
    // old version's trigrams plus the new version's.
    let mixed = Plan::and(vec![plan_literal("lazy"), plan_literal("back")]);
    assert_eq!(docs(index.candidates(&mixed)), Vec::<u32>::new());
    assert_eq!(index.tombstone_count(), 2);
    assert_eq!(index.overlay_docs(), 2);
    assert_eq!(index.doc_ids(), vec![10, 20, 30, 40, 50, 60, 70]);

    // Compaction folds it all into a new base that answers the same.
    let path = dir.path().join("compacted.idx");
    let before: Vec<Candidates> =
        ["hello", "fox", "panda", "lazy", "back", "café"].iter().map(|q| index.candidates(&plan_literal(q))).collect();
    index.compact_in_place(&path).unwrap();
    assert_eq!(index.overlay_docs(), 0);
    assert_eq!(index.tombstone_count(), 0);
    let base = index.base().unwrap();
    base.verify().unwrap();
    assert_eq!(base.doc_ids(), &[10, 20, 30, 40, 50, 60, 70]);
    let after: Vec<Candidates> =
        ["hello", "fox", "panda", "lazy", "back", "café"].iter().map(|q| index.candidates(&plan_literal(q))).collect();
    assert_eq!(before, after);
}

#[test]
fn an_index_without_base_lives_in_the_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = LayeredIndex::new(None);
    index.upsert(3, &trigrams("alpha beta"));
    index.upsert(1, &trigrams("beta gamma"));
    assert_eq!(docs(index.candidates(&plan_literal("beta"))), vec![1, 3]);
    let path = dir.path().join("fresh.idx");
    index.compact(&path).unwrap();
    let reopened = LayeredIndex::new(Some(TrigramIndex::open(&path).unwrap()));
    assert_eq!(docs(reopened.candidates(&plan_literal("beta"))), vec![1, 3]);
    assert_eq!(docs(reopened.candidates(&plan_literal("gamma"))), vec![1]);
    // An empty index writes and opens too.
    let empty = dir.path().join("empty.idx");
    IndexBuilder::new().write(&empty).unwrap();
    let empty = TrigramIndex::open(&empty).unwrap();
    assert_eq!(empty.doc_count(), 0);
    assert_eq!(docs(empty.candidates(&plan_literal("beta"))), Vec::<u32>::new());
}

#[test]
fn corrupt_truncated_and_foreign_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good_path = dir.path().join("text.idx");
    build(CORPUS).write(&good_path).unwrap();
    let good = std::fs::read(&good_path).unwrap();
    let bad_path = dir.path().join("bad.idx");
    let open_bytes = |bytes: &[u8]| {
        std::fs::write(&bad_path, bytes).unwrap();
        TrigramIndex::open(&bad_path)
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty file", Vec::new()),
        ("truncated header", good[..40].to_vec()),
        ("truncated body", good[..good.len() - 3].to_vec()),
        ("trailing garbage", [good.clone(), vec![0; 8]].concat()),
        ("wrong magic", [b"NOTANIDX".as_slice(), &good[8..]].concat()),
        ("other version", {
            let mut bytes = good.clone();
            bytes[8] = 99;
            bytes
        }),
        ("flipped posting byte", {
            let mut bytes = good.clone();
            let at = bytes.len() - 20;
            bytes[at] ^= 0x40;
            bytes
        }),
        ("flipped table byte", {
            let mut bytes = good.clone();
            bytes[96 + 5] ^= 0x01;
            bytes
        }),
    ];
    for (name, bytes) in cases {
        let error = open_bytes(&bytes).expect_err(name);
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData, "{name}: {error}");
    }
    // Every truncation point fails cleanly (no panic), not only the ones above.
    for len in 0..good.len() {
        assert!(open_bytes(&good[..len]).is_err(), "truncated to {len}");
    }
    // A missing file is NotFound, not InvalidData.
    assert_eq!(TrigramIndex::open(&dir.path().join("missing.idx")).unwrap_err().kind(), std::io::ErrorKind::NotFound);
}

#[test]
#[should_panic(expected = "ids must increase")]
fn builder_refuses_decreasing_doc_ids() {
    let mut builder = IndexBuilder::new();
    builder.add(5, &[]);
    builder.add(5, &[]);
}
