//! The `search` tool (§6): text, regex, symbol, file and directory search with `auto`
//! inference, filters, deterministic ranking, paging with totals, stable candidate ids and
//! ready-to-run reads for the top hits.
//!
//! The index narrows (candidate files, symbol locations); every text hit is verified against
//! the file as it is on disk now, so a result is never stale. While the index builds, text
//! search scans the walk instead and says `index_state: building`.

mod hits;
mod parse;
mod render;

use globset::GlobMatcher;
use loupe_core::{RepoPath, ToolError};
use loupe_index::{IndexState, SymbolHit};
use serde_json::{Map, Value};

pub(crate) use crate::params::{Output, SearchKind};
use crate::response::{MetadataLevel, Outcome};
use crate::work::Work;
use crate::workspace::Workspace;
use hits::{file_hits, symbol_hits, terms_hits, text_hits};
use parse::infer;
use render::render;

pub(crate) use parse::parse;

const DEFAULT_RESULTS: usize = 20;
/// A page of line hits listed one per row holds at most this many hits…
const LINE_PAGE: usize = 40;
/// …and at most this many characters of their lines (about 800 tokens).
const LINE_PAGE_CHARS: usize = 3000;
const MAX_RESULTS: usize = 100;
const MAX_CONTEXT: usize = 20;

/// Context lines a page of hits holds at most, when `max_results` is not given: wide context
/// shows fewer hits per page (`context_lines: 20` shows 4).
const CONTEXT_PAGE_LINES: usize = 200;
/// Verification stops after this many matching lines; the total is then a lower bound.
const MAX_MATCHES: usize = 2000;
/// A search that shows matches stops sooner: once this many are counted and no file left to
/// verify can change the page asked for (`hits::Settled`); the total is then a lower bound.
/// Counting on to 2,000 only to show 20 was most of a common query's time.
const COUNTED_MATCHES: usize = 500;
const DEFAULT_PREVIEW_CHARS: usize = 200;
/// Symbols with a partial name match considered per search, after every exact match.
const PARTIAL_SYMBOLS: usize = 2000;

/// A `search` call, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    pub(crate) query: String,
    kind: SearchKind,
    filters: Filters,
    case_sensitive: Option<bool>,
    whole_word: bool,
    max_results: usize,
    /// `max_results` was given: the page is the size asked, not the exact names alone.
    page_asked: bool,
    offset: usize,
    output: Output,
    context_lines: usize,
    preview_chars: usize,
    /// How much of a symbol hit's signature its row shows: `max_preview_chars` when given,
    /// else `SIGNATURE_CHARS` (a read of the symbol shows the rest).
    signature_chars: usize,
    pub(crate) metadata: Option<MetadataLevel>,
    pub(crate) session_id: Option<String>,
    original: Map<String, Value>,
    clamped: Vec<&'static str>,
}

#[derive(Debug, Clone, Default)]
struct Filters {
    under: Option<RepoPath>,
    globs: Vec<GlobMatcher>,
    excludes: Vec<GlobMatcher>,
    file_types: Vec<String>,
    kinds: Vec<String>,
}

/// The characters of a signature a symbol hit shows by default.
const SIGNATURE_CHARS: usize = 72;

/// One ranked result before paging.
#[derive(Debug, Clone)]
struct Hit {
    kind: &'static str,
    path: RepoPath,
    line: Option<usize>,
    end_line: Option<usize>,
    score: f64,
    preview: String,
    symbol: Option<SymbolHit>,
    file_hash: String,
}

impl SearchRequest {
    /// Where the page asked for ends in the ranked hits, when the answer shows hits (not
    /// files or counts, which need every match counted).
    fn page_end(&self) -> Option<usize> {
        (self.output == Output::Matches).then_some(self.offset + self.max_results.max(self.line_page().unwrap_or(0)))
    }

    /// How many line hits (one per row) a page may hold, when its size is loupe's to choose:
    /// no `max_results` asked, no context lines. The page also stops at `LINE_PAGE_CHARS`.
    fn line_page(&self) -> Option<usize> {
        (self.output == Output::Matches && self.context_lines == 0 && !self.page_asked).then_some(LINE_PAGE)
    }

    /// The arguments as given, to build follow-up calls from.
    pub(crate) fn original(&self) -> &Map<String, Value> {
        &self.original
    }
}

/// Runs a parsed search.
pub(crate) fn run(workspace: &Workspace, request: &SearchRequest, work: &Work) -> Outcome {
    execute(workspace, request, work)
        .unwrap_or_else(|error| {
            Outcome::failure("search", Some(request.kind.to_string()), Some(request.query.clone()), error)
        })
        .with_metadata(request.metadata)
}

fn execute(workspace: &Workspace, request: &SearchRequest, work: &Work) -> Result<Outcome, ToolError> {
    let index = workspace.index_for_query();
    let index_state = index.map_or(IndexState::Building, |index| index.state());

    let (effective, inferred) = match request.kind {
        // `whole_word` is a text search's option: an identifier asked for with it is every line
        // the word is on, not its definition.
        SearchKind::Auto => match infer(&request.query) {
            SearchKind::Symbol if request.whole_word => (SearchKind::Text, true),
            kind => (kind, true),
        },
        kind => (kind, false),
    };
    let mut fell_back = false;
    let searched_all = |(hits, lower_bound): (Vec<Hit>, bool)| (hits, lower_bound, 0);
    let mut hits = match effective {
        SearchKind::Symbol => searched_all(symbol_hits(workspace, request, work)),
        SearchKind::File => searched_all(file_hits(workspace, request, false)),
        SearchKind::Directory => searched_all(file_hits(workspace, request, true)),
        SearchKind::Regex => text_hits(workspace, request, true, request.page_end(), work)?,
        SearchKind::Text | SearchKind::Auto => text_hits(workspace, request, false, request.page_end(), work)?,
        SearchKind::Terms => terms_hits(workspace, request, work)?,
    };
    let mut used = effective;
    if inferred && effective == SearchKind::Symbol && hits.0.is_empty() {
        fell_back = true;
        used = SearchKind::Text;
        hits = text_hits(workspace, request, false, request.page_end(), work)?;
    }
    // Several plain words are a phrase before they are terms: `import os` is 177 lines of
    // flask, and its terms found `os` inside `verbose` first. The terms are searched only
    // when the phrase is nowhere.
    if inferred && effective == SearchKind::Terms {
        let mut phrase = request.clone();
        phrase.query = request.query.trim().trim_end_matches(['?', '.', '!']).to_owned();
        let literal = text_hits(workspace, &phrase, false, request.page_end(), work)?;
        if !literal.0.is_empty() {
            used = SearchKind::Text;
            hits = literal;
        } else {
            fell_back = true;
        }
    }
    let (mut hits, lower_bound, not_searched) = hits;
    hits.sort_by(|left, right| {
        right
            .score
            .total_cmp(&left.score)
            .then_with(|| left.path.cmp(&right.path))
            .then_with(|| left.line.cmp(&right.line))
    });
    let terms = if used == SearchKind::Terms { parse::significant_terms(&request.query) } else { Vec::new() };
    let unwalkable = workspace.unwalkable();
    let found = Found { hits, lower_bound, not_searched, unwalkable, terms, stopped: work.stopped_early() };
    Ok(render(workspace, request, used, inferred, fell_back, index_state, found))
}

/// What a search found: the hits, whether the total is a lower bound (the 2,000-match cut),
/// and how many files in scope were too large to read and so not searched.
struct Found {
    hits: Vec<Hit>,
    lower_bound: bool,
    not_searched: usize,
    /// Entries the index's last walk could not read (a path too long, a directory it may not
    /// enter): not searched, and said so.
    unwalkable: usize,
    /// The terms a `terms` search looked for, as the query spelled them.
    terms: Vec<String>,
    /// Why the search stopped before it had verified every candidate (cancelled, or at the
    /// call's time budget): its hits are a part, and "no results" would not be true.
    stopped: Option<crate::work::Stopped>,
}

impl Filters {
    fn admits(&self, path: &RepoPath) -> bool {
        if let Some(under) = &self.under
            && !under.is_root()
            && path.as_str() != under.as_str()
            && !path.as_str().starts_with(&format!("{}/", under.as_str()))
        {
            return false;
        }
        if !self.globs.is_empty() && !self.globs.iter().any(|glob| glob.is_match(path.as_str())) {
            return false;
        }
        if self.excludes.iter().any(|glob| glob.is_match(path.as_str())) {
            return false;
        }
        if !self.file_types.is_empty() {
            let extension = path.file_name().rsplit_once('.').map(|(_, ext)| ext.to_lowercase()).unwrap_or_default();
            if !self.file_types.contains(&extension) {
                return false;
            }
        }
        true
    }
}

fn smart_case(request: &SearchRequest) -> bool {
    request.case_sensitive.unwrap_or_else(|| request.query.chars().any(char::is_uppercase))
}

/// `Type.method`, `Type::method`, `Type/method` → (container, name); a bare name has none.
fn split_qualified(query: &str) -> (Option<&str>, &str) {
    for separator in ["::", ".", "/"] {
        if let Some((container, name)) = query.rsplit_once(separator)
            && !container.is_empty()
            && !name.is_empty()
        {
            return (Some(container), name);
        }
    }
    (None, query)
}
