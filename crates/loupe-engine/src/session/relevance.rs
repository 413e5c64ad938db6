//! The relevance guard (§9.5): after a search, a read of a path outside the top 10 results of
//! the session's last 3 searches gets the soft warning `LOW_RELEVANCE` (reason
//! `LOW_RELEVANCE_OUTSIDE_TOPK`) and up to 3 alternatives.
//!
//! Soft by default (`relevance = "warn"`); `block` refuses such a read when its path is known
//! from the arguments (a symbol read without `path` is warned after resolution); `off` says
//! nothing. A read that came with a ref is not judged.
//! Paths under `vendor/`, `node_modules/`, `.git/` and `dist/` are not judged. Paths are
//! compared normalised (root-relative, `/`-separated), never as raw strings.

use super::store::{Candidate, Session};

/// §9.5: K = 10.
pub(crate) const TOP_K: usize = 10;
/// How many of the latest searches make up "the last searches".
pub(crate) const SEARCHES_JUDGED: usize = 3;
/// At most this many alternatives are offered.
const ALTERNATIVES: usize = 3;
/// Trees that are never judged.
const NOT_JUDGED: &[&str] = &["vendor", "node_modules", ".git", "dist"];

/// `None` when the path is relevant or not judged; else the alternatives (maybe empty).
pub(crate) fn judge(session: &Session, path: &str, outline: bool) -> Option<Vec<Candidate>> {
    if path.split('/').any(|component| NOT_JUDGED.contains(&component)) {
        return None;
    }
    let recent = session.searches.iter().take(SEARCHES_JUDGED);
    let top: Vec<&Candidate> = recent.flat_map(|search| search.candidates.iter().take(TOP_K)).collect();
    if top.is_empty() {
        return None;
    }
    let inside = |candidate: &&Candidate| {
        candidate.path == path || (outline && (path.is_empty() || candidate.path.starts_with(&format!("{path}/"))))
    };
    if top.iter().any(inside) {
        return None;
    }
    let mut alternatives: Vec<Candidate> = Vec::new();
    for candidate in top {
        if alternatives.len() == ALTERNATIVES {
            break;
        }
        if NOT_JUDGED.iter().any(|tree| candidate.path.split('/').any(|c| c == *tree)) {
            continue;
        }
        if !alternatives.iter().any(|kept| kept.path == candidate.path) {
            alternatives.push(candidate.clone());
        }
    }
    Some(alternatives)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::store::SearchRecord;

    fn session_with(paths: &[&str]) -> Session {
        let mut store = crate::session::store::SessionStore::new(std::time::Duration::from_secs(60), 4);
        let session = store.session("k", std::time::Instant::now());
        let candidates = paths
            .iter()
            .enumerate()
            .map(|(index, path)| Candidate {
                id: format!("c_{index}"),
                path: (*path).to_owned(),
                symbol: None,
                line: None,
                read: serde_json::Map::new(),
            })
            .collect();
        session.remember_search(SearchRecord { bundle_id: "b_1".into(), candidates, read_calls: Vec::new() });
        session.clone()
    }

    #[test]
    fn a_top_k_path_is_a_hit_and_another_is_a_miss_with_alternatives() {
        let session = session_with(&["src/a.rs", "src/b.rs", "src/a.rs", "vendor/x.rs", "src/c.rs", "src/d.rs"]);
        assert!(judge(&session, "src/b.rs", false).is_none());
        assert!(judge(&session, "src", true).is_none(), "an outline of a directory holding a hit");
        let alternatives = judge(&session, "src/z.rs", false).unwrap();
        let paths: Vec<&str> = alternatives.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "src/b.rs", "src/c.rs"]);
    }

    #[test]
    fn excluded_trees_and_sessions_without_results_are_not_judged() {
        let session = session_with(&["src/a.rs"]);
        assert!(judge(&session, "node_modules/pkg/index.js", false).is_none());
        assert!(judge(&session, "dist/app.js", false).is_none());
        assert!(judge(&session_with(&[]), "src/z.rs", false).is_none());
    }
}
