//! Every fixture under `tests/fixtures/<lang>/` parsed and snapshotted as JSON, and every
//! fixture's truncated prefixes parsed without a panic.
//!
//! Owns the fixture-driven checks; must not hold hand-written expectations (those live in
//! `cases.rs`).

use std::path::{Path, PathBuf};

use loupe_syntax::{Extract, Lang, parse, parse_with};

fn fixtures() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for lang_dir in std::fs::read_dir(&root).unwrap() {
        let lang_dir = lang_dir.unwrap().path();
        for file in std::fs::read_dir(&lang_dir).unwrap() {
            let file = file.unwrap().path();
            let name = format!(
                "{}__{}",
                lang_dir.file_name().unwrap().to_string_lossy(),
                file.file_name().unwrap().to_string_lossy().replace('.', "_")
            );
            out.push((name, file));
        }
    }
    out.sort();
    out
}

fn lang_of(path: &Path) -> Lang {
    Lang::from_path(&path.to_string_lossy()).unwrap_or_else(|| panic!("no language for {}", path.display()))
}

#[test]
fn every_language_has_a_fixture() {
    let fixtures = fixtures();
    for lang in Lang::ALL {
        assert!(fixtures.iter().any(|(_, path)| lang_of(path) == *lang), "no fixture for {}", lang.name());
    }
}

#[test]
fn fixtures_snapshot() {
    for (name, path) in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let facts = parse(lang_of(&path), &text);
        let broken = name.contains("broken");
        assert_eq!(facts.error_nodes == 0, !broken, "{name}: error_nodes = {}", facts.error_nodes);
        insta::assert_compact_json_snapshot!(name, facts);
    }
}

/// The index parses with `Extract::Declarations`: the same definitions (less comment docs), imports and type
/// relations as a full parse, no uses, except for types declared inside a clean C/C++
/// function body, which that mode does not walk; `Extract::Definitions` keeps the docs.
#[test]
fn declarations_are_the_full_parse_without_uses() {
    for (name, path) in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lang = lang_of(&path);
        let full = parse(lang, &text);
        let declarations = parse_with(lang, &text, Extract::Declarations);
        assert!(declarations.calls.is_empty() && declarations.references.is_empty(), "{name}: uses collected");
        assert_eq!(declarations.imports, full.imports, "{name}");
        assert_eq!(declarations.type_relations, full.type_relations, "{name}");
        assert_eq!(declarations.error_nodes, full.error_nodes, "{name}");
        let in_clean_c_body = |definition: &loupe_syntax::Definition| {
            matches!(lang, Lang::C | Lang::Cpp)
                && full.definitions.iter().any(|outer| {
                    outer.kind == loupe_syntax::SymbolKind::Function
                        && outer.span.start_line < definition.span.start_line
                        && definition.span.end_line <= outer.span.end_line
                })
        };
        // Doc comments are not collected (docs a handler finds itself, docstrings, may be).
        let without_comment_docs = |definition: &loupe_syntax::Definition| {
            let mut definition = definition.clone();
            definition.doc = None;
            definition
        };
        let expected: Vec<_> =
            full.definitions.iter().filter(|d| !in_clean_c_body(d)).map(without_comment_docs).collect();
        let kept: Vec<_> =
            declarations.definitions.iter().filter(|d| !in_clean_c_body(d)).map(without_comment_docs).collect();
        assert_eq!(kept, expected, "{name}");
        assert!(!declarations.definitions.is_empty() || full.definitions.is_empty(), "{name}");
        // Symbol reads and outlines parse with `Definitions`: the same, with the docs.
        let definitions = parse_with(lang, &text, Extract::Definitions);
        assert!(definitions.calls.is_empty() && definitions.references.is_empty(), "{name}: uses collected");
        let with_docs: Vec<_> = full.definitions.iter().filter(|d| !in_clean_c_body(d)).cloned().collect();
        let kept: Vec<_> = definitions.definitions.iter().filter(|d| !in_clean_c_body(d)).cloned().collect();
        assert_eq!(kept, with_docs, "{name}");
    }
}

#[test]
fn truncated_prefixes_never_panic() {
    for (_, path) in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lang = lang_of(&path);
        let mut end = 0;
        while end < text.len() {
            if text.is_char_boundary(end) {
                let facts = parse(lang, &text[..end]);
                for definition in &facts.definitions {
                    assert!(definition.span.start_line <= definition.span.end_line, "{}", path.display());
                    assert!(definition.span.start_line <= definition.name_line, "{}", path.display());
                }
            }
            end += 37;
        }
    }
}
