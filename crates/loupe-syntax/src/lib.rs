//! tree-sitter facts for one file: symbols, imports, calls, refs; never fails.
//!
//! `parse(lang, text)` parses once and walks the tree once, returning plain data
//! (`FileFacts`): definitions with kinds, containers, signatures, docs and spans; imports;
//! call sites; type relations; identifier references; and a count of syntax errors. Broken
//! code is input: whatever parses around the damage is still reported.
//!
//! This crate must not do IO, resolve names across files or keep state between calls beyond
//! per-thread parsers and per-language tables.
//!
//! Supported: Rust, Python, TypeScript, TSX, JavaScript/JSX, Go, Java, C, C++, C#, Ruby, PHP and
//! Kotlin, each with its rules in `languages/`. `parse_with(…, Extract)` does less for callers that
//! need less: `Definitions` (symbol reads, outlines) skips calls and references and does not walk
//! C/C++ function bodies that define no macro; `Declarations` (the index) also skips doc text, and
//! for C and Python the bodies are not even parsed (`skim.rs`, `skim/python.rs`). `data_flow`
//! (`flow.rs`, per-language rules in `flow/`) answers for one variable of one function with one
//! parse and one walk of that function.
//! A C/C++ prototype's signature ends in `;` (`is_prototype`). `changes::compare` names the
//! symbols that changed between two versions of a file.

// Tests write their fixtures; production code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod changes;
mod facts;
mod flow;
mod languages;
mod skim;
mod text;
mod walk;

use std::cell::RefCell;

pub use facts::is_prototype;
pub use facts::{
    CallSite, Definition, FileFacts, Import, ImportKind, Lang, Reference, RelationKind, Span, SymbolKind, TypeRelation,
};
pub use flow::{DataFlow, FlowEvent, FlowKind, data_flow};

thread_local! {
    static PARSER: RefCell<Option<(Lang, tree_sitter::Parser)>> = const { RefCell::new(None) };
}

/// Parses `text` as `lang` and extracts its facts. Never fails: a file that does not parse
/// yields what could be recognised, with `error_nodes` counting the damage.
pub fn parse(lang: Lang, text: &str) -> FileFacts {
    parse_with(lang, text, Extract::All)
}

/// Which facts a parse collects. Uses (calls and references) are most of what a walk
/// allocates; the index keeps only definitions, imports and type relations, and the
/// relationship queries parse the few files they need with `All`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extract {
    /// Every fact `FileFacts` has.
    All,
    /// Definitions with their doc comments, imports and type relations; `calls` and
    /// `references` stay empty. What symbol reads and outlines need.
    Definitions,
    /// `Definitions` without doc comments (their lines still start the span): what the index
    /// keeps.
    Declarations,
}

/// `parse`, collecting only the facts `extract` asks for.
pub fn parse_with(lang: Lang, text: &str, extract: Extract) -> FileFacts {
    let compiled = languages::compiled(lang);
    let parse = |ranges: Option<&[tree_sitter::Range]>| parse_tree(lang, &compiled.language, text, ranges);
    // Without uses the walk skips C function bodies: the parser may leave them out too.
    let tree = match (lang, extract) {
        (Lang::C, Extract::Definitions | Extract::Declarations) => skim::parse_c_declarations(text, parse),
        (Lang::Python, Extract::Declarations) => skim::python::parse_python_declarations(text, parse),
        _ => parse(None),
    };
    let Some(tree) = tree else {
        return FileFacts::empty(lang);
    };
    let extract = || walk::Walker::new(text, compiled, extract).run(&tree);
    if cfg!(debug_assertions) {
        // Debug builds (tests) let a bug surface; release builds degrade to empty facts.
        return extract();
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(extract)).unwrap_or_else(|_| {
        let mut facts = FileFacts::empty(lang);
        facts.error_nodes = 1;
        facts
    })
}

/// `parse_with(lang, text, Extract::Declarations)` from a parse of the whole text: what the
/// skims that leave bodies out are checked against (`examples/skim_check.rs`).
#[cfg(feature = "test-hooks")]
pub fn declarations_of_whole_parse(lang: Lang, text: &str) -> FileFacts {
    let compiled = languages::compiled(lang);
    match parse_tree(lang, &compiled.language, text, None) {
        Some(tree) => walk::Walker::new(text, compiled, Extract::Declarations).run(&tree),
        None => FileFacts::empty(lang),
    }
}

/// The number of ERROR and MISSING nodes when `text` is parsed as `lang`: the same count as
/// `parse(..).error_nodes`, without extracting facts (what an edit's syntax check needs).
pub fn error_count(lang: Lang, text: &str) -> usize {
    let compiled = languages::compiled(lang);
    let Some(tree) = parse_tree(lang, &compiled.language, text, None) else { return 0 };
    let root = tree.root_node();
    if root.has_error() { walk::count_errors(root) } else { 0 }
}

/// Parses `text`, all of it or only `ranges` (positions stay those of the whole text).
fn parse_tree(
    lang: Lang,
    language: &tree_sitter::Language,
    text: &str,
    ranges: Option<&[tree_sitter::Range]>,
) -> Option<tree_sitter::Tree> {
    let parse = |parser: &mut tree_sitter::Parser| match ranges {
        None => parser.parse(text, None),
        Some(ranges) => {
            let tree = parser.set_included_ranges(ranges).ok().and_then(|()| parser.parse(text, None));
            // An empty list is the whole document again, for the thread's next parse.
            let _ = parser.set_included_ranges(&[]);
            tree
        }
    };
    PARSER.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(language).ok()?;
            return parse(&mut parser);
        };
        if slot.as_ref().is_none_or(|(current, _)| *current != lang) {
            let mut parser = slot.take().map(|(_, parser)| parser).unwrap_or_default();
            parser.set_language(language).ok()?;
            *slot = Some((lang, parser));
        }
        let (_, parser) = slot.as_mut()?;
        parse(parser)
    })
}
