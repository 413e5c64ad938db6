//! The text index: a trigram index in the manner of Russ Cox's codesearch.
//!
//! Owns turning text into trigrams, building and persisting posting lists, layering updates
//! over a persisted base, and turning literal and regex queries into plans that narrow the
//! documents to search. It answers with *candidates*: a superset of the documents that can
//! match. Must not read the repository or verify matches; the caller reads each candidate
//! through `loupe-vfs` and checks it against the query, which is also where case sensitivity is
//! decided (trigrams are ASCII-lowercased, so one index serves both).
//!
//! ```text
//! caller:  walk + read ──▶ trigrams_of (parallel) ──▶ IndexBuilder::add (in doc-id order)
//!                                                           │ write
//!          query ──▶ plan_literal / plan_regex ──▶ Plan     ▼
//!                                                   LayeredIndex { TrigramIndex (file),
//!                                                     Overlay + tombstones (changes since) }
//!                                                           │ candidates
//!                                                           ▼
//!                                          Candidates::All | Docs(sorted ids) ──▶ verify
//! ```
//!
//! The soundness contract (candidates ⊇ true matches) holds when the caller
//! - computes a document's trigrams over the same bytes it later verifies against (for a file
//!   decoded from Latin-1 or UTF-16, the decoded UTF-8 text, not the raw bytes);
//! - verifies a literal case-sensitively or with ASCII case folding (for Unicode case folding,
//!   plan `plan_regex(&regex_syntax::escape(text), true)` instead of `plan_literal`);
//! - compiles a regex with the same syntax options `plan_regex` parses with: the defaults
//!   (Unicode, UTF-8) plus `case_insensitive`; other flags belong inline in the pattern.
//!
//! Files: `extract` (trigrams of a text), `postings` (list encoding and set algebra),
//! `builder` (in-memory lists of a build), `format` (file layout and the atomic writer),
//! `reader` (opening and validating a file), `eval` (evaluating a plan against a layer),
//! `layered` (overlay, tombstones, compaction), `plan` (plans and literals), `regex_plan`
//! (required-substring analysis of a regex).

mod builder;
mod eval;
mod extract;
mod format;
mod layered;
mod plan;
mod postings;
mod reader;
mod regex_plan;

pub use builder::IndexBuilder;
pub use extract::trigrams_of;
pub(crate) use format::AtomicFile;
pub use layered::{LayeredIndex, Overlay};
pub use plan::{Plan, plan_literal};
pub use reader::TrigramIndex;
pub use regex_plan::{line_pattern, max_match_len, plan_regex};

/// The documents a query must be verified against.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Candidates {
    /// The plan could not narrow: scan every document.
    All,
    /// Only these documents (sorted doc ids) can match.
    Docs(Vec<u32>),
}

impl Candidates {
    /// Whether `doc_id` must be verified.
    pub fn contains(&self, doc_id: u32) -> bool {
        match self {
            Candidates::All => true,
            Candidates::Docs(docs) => docs.binary_search(&doc_id).is_ok(),
        }
    }

    /// The number of candidates, `None` for all.
    pub fn len(&self) -> Option<usize> {
        match self {
            Candidates::All => None,
            Candidates::Docs(docs) => Some(docs.len()),
        }
    }

    /// Whether no document can match.
    pub fn is_empty(&self) -> bool {
        matches!(self, Candidates::Docs(docs) if docs.is_empty())
    }
}

/// The trigram of three bytes as the index stores it (ASCII-lowercased, first byte highest).
pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    extract::trigram(a, b, c)
}
