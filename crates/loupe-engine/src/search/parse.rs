//! Parsing a `search` call into its `SearchRequest`: filters, globs, and what `auto` infers from the
//! query (a file name, a qualified symbol, a pattern, or text).

use globset::{Glob, GlobMatcher};
use loupe_core::{ErrorCode, RepoPath, ToolError};
use regex::Regex;
use serde_json::{Map, Value};

use super::render::decode_cursor;
use super::{
    CONTEXT_PAGE_LINES, DEFAULT_PREVIEW_CHARS, DEFAULT_RESULTS, Filters, MAX_CONTEXT, MAX_RESULTS, Output,
    SIGNATURE_CHARS, SearchKind, SearchRequest,
};
use crate::args::{Args, Parsed, Rejected};
use crate::params;

/// Parses a `search` call's arguments into its request.
pub(crate) fn parse(arguments: Value) -> Parsed<SearchRequest> {
    Rejected::parsing("search", arguments, parse_request).map_err(|(rejected, _)| rejected)
}

fn parse_request(arguments: Value, original: Map<String, Value>) -> Result<SearchRequest, ToolError> {
    let mut args = Args::new(&params::SEARCH, arguments)?;
    let query = args.required_string("query", "\"query\": \"parse_config\"")?;
    let kind = args.choice("type")?.as_deref().and_then(SearchKind::parse).unwrap_or(SearchKind::Auto);
    let under = match args.string("path")? {
        Some(path) if path.contains(['*', '?', '[']) => {
            return finish_parse(args, query, kind, Some(path), original);
        }
        Some(path) => Some(RepoPath::normalize(&path.replace('\\', "/")).ok_or_else(|| {
            ToolError::new(
                ErrorCode::PathOutsideRoot,
                format!("`{path}` is outside the workspace root"),
                "pass a path relative to the root",
            )
        })?),
        None => None,
    };
    let mut request = finish_parse(args, query, kind, None, original)?;
    request.filters.under = under;
    Ok(request)
}

fn finish_parse(
    mut args: Args,
    query: String,
    kind: SearchKind,
    path_glob: Option<String>,
    original: Map<String, Value>,
) -> Result<SearchRequest, ToolError> {
    let mut globs = Vec::new();
    for pattern in path_glob.into_iter().chain(args.string_list("glob")?) {
        globs.push(compile_glob("glob", &pattern)?);
    }
    let excludes = args
        .string_list("exclude")?
        .iter()
        .map(|pattern| compile_glob("exclude", pattern))
        .collect::<Result<Vec<_>, _>>()?;
    let file_types =
        args.string_list("file_types")?.into_iter().map(|ext| ext.trim_start_matches('.').to_lowercase()).collect();
    let kinds = args.string_list("kinds")?.into_iter().map(|kind| kind.to_lowercase()).collect();
    let case_sensitive = args.boolean("case_sensitive")?;
    let whole_word = args.boolean("whole_word")?.unwrap_or(false);
    let mut clamped = Vec::new();
    let asked_results = args.integer("max_results")?;
    let mut max_results = asked_results.map_or(DEFAULT_RESULTS, |value| value.max(1) as usize);
    if max_results > MAX_RESULTS {
        max_results = MAX_RESULTS;
        clamped.push("max_results");
    }
    let cursor_offset = match args.string("cursor")? {
        Some(cursor) => Some(decode_cursor(&cursor).ok_or_else(|| {
            ToolError::invalid_args(
                "`cursor` is not a search cursor issued by loupe",
                "pass `next_cursor` exactly as returned, or drop it",
            )
        })?),
        None => None,
    };
    let offset = cursor_offset.or(args.integer("offset")?.map(|value| value as usize)).unwrap_or(0);
    let output = args.choice("output")?.as_deref().and_then(Output::parse).unwrap_or(Output::Matches);
    let mut context_lines = args.integer("context_lines")?.unwrap_or(0) as usize;
    if context_lines > MAX_CONTEXT {
        context_lines = MAX_CONTEXT;
        clamped.push("context_lines");
    }
    let asked_preview = args.integer("max_preview_chars")?;
    if asked_results.is_none() && context_lines > 0 {
        max_results = max_results.min((CONTEXT_PAGE_LINES / (2 * context_lines + 1)).max(1));
    }
    let preview_chars = asked_preview.map_or(DEFAULT_PREVIEW_CHARS, |value| (value as usize).clamp(20, 2000));
    let metadata = args.metadata()?;
    let session_id = args.string("session_id")?;
    args.finish()?;
    if kind == SearchKind::Regex
        && let Err(error) = Regex::new(&query)
    {
        return Err(ToolError::invalid_args(
            format!("invalid regex: {error}"),
            "fix the pattern, or use type='text' for a literal search",
        ));
    }
    Ok(SearchRequest {
        query,
        kind,
        filters: Filters { under: None, globs, excludes, file_types, kinds },
        case_sensitive,
        whole_word,
        max_results,
        page_asked: asked_results.is_some(),
        offset,
        output,
        context_lines,
        preview_chars,
        signature_chars: if asked_preview.is_some() { preview_chars } else { SIGNATURE_CHARS },
        metadata,
        session_id,
        original,
        clamped,
    })
}

pub(super) fn compile_glob(name: &str, pattern: &str) -> Result<GlobMatcher, ToolError> {
    let pattern = if pattern.contains('/') { pattern.to_owned() } else { format!("**/{pattern}") };
    Glob::new(&pattern).map(|glob| glob.compile_matcher()).map_err(|error| {
        ToolError::invalid_args(
            format!("`{name}` has an invalid glob `{pattern}`: {error}"),
            "use a glob like \"src/**/*.rs\"",
        )
    })
}

/// `auto`: globs and paths are files, a trailing `/` a directory, identifiers symbols (then
/// text), a question or several plain words their terms (§6), anything else text.
pub(super) fn infer(query: &str) -> SearchKind {
    let trimmed = query.trim();
    if trimmed.ends_with('/') {
        return SearchKind::Directory;
    }
    if is_natural_language(trimmed) {
        return SearchKind::Terms;
    }
    if trimmed.contains(['*', '?'])
        || (trimmed.contains('/') && !trimmed.contains(' '))
        || looks_like_file_name(trimmed)
    {
        return SearchKind::File;
    }
    if is_identifier_path(trimmed) {
        return SearchKind::Symbol;
    }
    SearchKind::Text
}

/// Words that carry no meaning of their own in a question about code.
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can", "code", "do", "does", "done",
    "find", "for", "from", "get", "gets", "how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "show", "some", "that", "the", "their", "them", "there", "these", "this", "those", "to", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "you",
];

/// A question or several plain words (§6: "a natural-language question"): at least two words
/// of letters (an ending `?`, `.` or `,` aside), which are not one identifier or path.
fn is_natural_language(query: &str) -> bool {
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.len() < 2 {
        return false;
    }
    let plain = words.iter().all(|word| {
        let word = word.trim_end_matches(['?', '.', ',', '!']);
        !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '\'' || c == '-')
    });
    plain && !significant_terms(query).is_empty()
}

/// The significant terms of a query: its words without stop words, lower-cased, each once.
pub(super) fn significant_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if word.chars().count() < 2 || STOP_WORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
    }
    terms
}

/// What a term matches in code: its stem, so `configs` finds `config` and `parsed` finds
/// `parse`, `parser` and `parsing` (a crude suffix strip, never shorter than 3 letters).
pub(super) fn stem(term: &str) -> &str {
    for suffix in ["ies", "ing", "ed", "es", "s"] {
        if let Some(stem) = term.strip_suffix(suffix)
            && stem.chars().count() >= 3
        {
            return stem;
        }
    }
    term
}

fn looks_like_file_name(query: &str) -> bool {
    let Some((stem, extension)) = query.rsplit_once('.') else { return false };
    !stem.is_empty()
        && !stem.contains(' ')
        && (1..=5).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_lowercase())
        && loupe_index::Lang::from_path(query).is_some()
        || matches!(
            query.rsplit_once('.').map(|(_, ext)| ext),
            Some("md" | "toml" | "json" | "yaml" | "yml" | "txt" | "lock")
        )
}

fn is_identifier_path(query: &str) -> bool {
    let parts: Vec<&str> = query.split("::").flat_map(|part| part.split('.')).collect();
    !parts.is_empty()
        && parts.iter().all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        })
}
