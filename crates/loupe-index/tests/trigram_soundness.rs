//! Soundness of the trigram index, as a property: for random small corpora (a base file, then
//! changes through the overlay) and random literal and regex queries, the candidates are always
//! a superset of the documents that truly match. Owns nothing else; precision is not checked.

use loupe_index::trigram::{Candidates, IndexBuilder, LayeredIndex, plan_literal, plan_regex, trigrams_of};
use proptest::prelude::*;
use regex::RegexBuilder;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Pieces that make collisions likely, plus the letters with non-ASCII case partners (K and
/// KELVIN SIGN, s and LONG S) and a multi-byte letter with a case pair.
const PIECES: &[&str] =
    &["a", "b", "c", "ab", "abc", "A", "B", "k", "K", "\u{212A}", "s", "\u{17F}", "é", "É", "_", " ", "\n", "x"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|pieces| pieces.concat())
}

/// A regex over the same alphabet: literals, classes, anchors, groups, alternation, repetition.
fn regex_pattern() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(PIECES).prop_map(regex::escape),
        prop::sample::select(
            &[
                "[ab]",
                "[a-c]",
                "[^a]",
                ".",
                r"\b",
                "^",
                "$",
                "[kK]",
                "[éx]",
                r"\w",
                "(?i:ab)",
                "(?-u:a)",
                "[A-C]",
                "[ÉB]",
                "[K\u{212A}]",
                "(?-u:[AB])"
            ][..]
        )
        .prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..5).prop_map(|parts| parts.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|parts| format!("({})", parts.join("|"))),
            (inner.clone(), prop::sample::select(&["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{3}"][..]))
                .prop_map(|(part, op)| format!("(?:{part}){op}")),
        ]
    })
}

#[derive(Debug, Clone)]
enum Change {
    Upsert(usize, String),
    Remove(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..12, text()).prop_map(|(doc, text)| Change::Upsert(doc, text)),
        (0usize..12).prop_map(Change::Remove)
    ]
}

/// Builds the base from `docs` (doc id = position, `None` = not in the base), applies
/// `changes` through the overlay, and returns the index with the final content of each doc.
fn index_of(docs: &[Option<String>], changes: &[Change]) -> (LayeredIndex, Vec<Option<String>>) {
    let mut builder = IndexBuilder::new();
    let mut trigrams = Vec::new();
    for (id, text) in docs.iter().enumerate() {
        if let Some(text) = text {
            trigrams_of(text.as_bytes(), &mut trigrams);
            builder.add(id as u32, &trigrams);
        }
    }
    let mut index = LayeredIndex::new(Some(builder.finish()));
    let mut current = docs.to_vec();
    if current.len() < 12 {
        current.resize(12, None);
    }
    for change in changes {
        match change {
            Change::Upsert(id, text) => {
                trigrams_of(text.as_bytes(), &mut trigrams);
                index.upsert(*id as u32, &trigrams);
                current[*id] = Some(text.clone());
            }
            Change::Remove(id) => {
                index.remove(*id as u32);
                current[*id] = None;
            }
        }
    }
    (index, current)
}

fn assert_superset(candidates: &Candidates, truth: &[u32], query: &str) -> Result<(), TestCaseError> {
    for &doc in truth {
        prop_assert!(
            candidates.contains(doc),
            "query {query:?}: doc {doc} matches but is not a candidate ({candidates:?})"
        );
    }
    Ok(())
}

fn corpus() -> impl Strategy<Value = Vec<Option<String>>> {
    prop::collection::vec(prop::option::weighted(0.85, text()), 1..10)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn literal_candidates_are_a_superset(
        docs in corpus(),
        changes in prop::collection::vec(change(), 0..6),
        queries in prop::collection::vec(text(), 1..6),
    ) {
        let (index, current) = index_of(&docs, &changes);
        // Substrings of real documents make matches likely.
        let mut queries = queries;
        for text in current.iter().flatten() {
            let bytes = text.as_bytes();
            if bytes.len() > 4 {
                let middle = String::from_utf8_lossy(&bytes[1..bytes.len() - 1]).into_owned();
                queries.push(middle.replace('\u{FFFD}', ""));
            }
        }
        for query in &queries {
            let candidates = index.candidates(&plan_literal(query));
            let truth: Vec<u32> = current
                .iter()
                .enumerate()
                .filter_map(|(id, text)| text.as_ref().map(|text| (id as u32, text)))
                .filter(|(_, text)| text.to_ascii_lowercase().contains(&query.to_ascii_lowercase()))
                .map(|(id, _)| id)
                .collect();
            assert_superset(&candidates, &truth, query)?;
            // Unicode case folding goes through the regex planner.
            let folded = plan_regex(&regex::escape(query), true).unwrap();
            let matcher = RegexBuilder::new(&regex::escape(query)).case_insensitive(true).build().unwrap();
            let truth: Vec<u32> = current
                .iter()
                .enumerate()
                .filter_map(|(id, text)| text.as_ref().filter(|text| matcher.is_match(text)).map(|_| id as u32))
                .collect();
            assert_superset(&index.candidates(&folded), &truth, query)?;
        }
    }

    #[test]
    fn regex_candidates_are_a_superset(
        docs in corpus(),
        changes in prop::collection::vec(change(), 0..4),
        patterns in prop::collection::vec((regex_pattern(), any::<bool>()), 1..6),
        seed in any::<u64>(),
    ) {
        // Random texts rarely match a complex pattern: add texts sampled from each pattern, some
        // to the base and some through the overlay.
        let mut docs = docs;
        let mut changes = changes;
        let mut rng = seed | 1;
        for (pattern, case_insensitive) in &patterns {
            let hir = regex_syntax::ParserBuilder::new().case_insensitive(*case_insensitive).build().parse(pattern).unwrap();
            for round in 0..3 {
                let mut sampled = b"x".to_vec();
                sample(&hir, &mut rng, &mut sampled);
                sampled.push(b'_');
                let Ok(text) = String::from_utf8(sampled) else { continue };
                if round == 2 {
                    changes.push(Change::Upsert((next(&mut rng) % 12) as usize, text));
                } else {
                    docs.push(Some(text));
                }
            }
        }
        let (index, current) = index_of(&docs, &changes);
        for (pattern, case_insensitive) in &patterns {
            // Every generated pattern is valid; only the regex crate's size limit could refuse one.
            let Ok(matcher) = RegexBuilder::new(pattern).case_insensitive(*case_insensitive).build() else { continue };
            let plan = plan_regex(pattern, *case_insensitive).map_err(|error| TestCaseError::fail(error.to_string()))?;
            let candidates = index.candidates(&plan);
            let truth: Vec<u32> = current
                .iter()
                .enumerate()
                .filter_map(|(id, text)| text.as_ref().filter(|text| matcher.is_match(text)).map(|_| id as u32))
                .collect();
            assert_superset(&candidates, &truth, pattern)?;
            // The plan alone must also admit each matching document's own trigram set.
            for text in current.iter().flatten().filter(|text| matcher.is_match(text)) {
                let mut trigrams = Vec::new();
                trigrams_of(text.as_bytes(), &mut trigrams);
                prop_assert!(plan.matches(&trigrams), "pattern {pattern:?} plan {plan:?} rejects matching {text:?}");
            }
        }
    }
}

fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// Appends a text the pattern likely matches (anchors and word boundaries are ignored, so a
/// sample may not match; the truth is always computed by the regex crate).
fn sample(hir: &Hir, rng: &mut u64, out: &mut Vec<u8>) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.extend_from_slice(&literal.0),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges();
            if ranges.is_empty() {
                return;
            }
            let range = ranges[(next(rng) % ranges.len() as u64) as usize];
            let span = u64::from(range.end()) - u64::from(range.start()) + 1;
            let code = u64::from(range.start()) + next(rng) % span.min(64);
            let c = char::from_u32(code as u32).unwrap_or(range.start());
            out.extend_from_slice(c.to_string().as_bytes());
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges = class.ranges();
            if ranges.is_empty() {
                return;
            }
            let range = ranges[(next(rng) % ranges.len() as u64) as usize];
            let span = u64::from(range.end()) - u64::from(range.start()) + 1;
            out.push(range.start() + (next(rng) % span) as u8);
        }
        HirKind::Repetition(repetition) => {
            let extra = repetition.max.map_or(3, |max| (max - repetition.min).min(3));
            let count = repetition.min + (next(rng) % (u64::from(extra) + 1)) as u32;
            for _ in 0..count {
                sample(&repetition.sub, rng, out);
            }
        }
        HirKind::Capture(capture) => sample(&capture.sub, rng, out),
        HirKind::Concat(children) => children.iter().for_each(|child| sample(child, rng, out)),
        HirKind::Alternation(children) => sample(&children[(next(rng) % children.len() as u64) as usize], rng, out),
    }
}
