//! The review of a diff (§5): which symbols each changed file changed, computed from the
//! syntax facts of both sides (`loupe_syntax::changes`), who in the tree as it is now still
//! refers to the ones whose change can break a caller (removed, re-signatured, renamed or
//! moved public symbols), which test files name the changed symbols, and how risky each change
//! is. `diff_preview` of a directory renders it; `analyze impact` of a range walks from it.

use std::time::{Duration, Instant};

use loupe_core::{RepoPath, text};
use loupe_graph::{Confidence, SymbolRef};
use loupe_index::IndexState;
use loupe_index::trigram::plan_literal;
use loupe_syntax::changes::{ChangeKind, SymbolChange};
use loupe_syntax::{Lang, Span, SymbolKind};

use crate::work::Work;
use crate::workspace::Workspace;
use crate::workspace::references::reference_sites;
use crate::workspace::relations::View;

/// Two versions of a file compared: its language and each side's content hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ComparedKey {
    lang: Lang,
    old: Option<loupe_core::ContentHash>,
    new: Option<loupe_core::ContentHash>,
}

/// The changed symbols of the files compared lately, so a review's pages (each recomputes
/// the review) and repeated reviews parse each pair of versions once. Bounded: past
/// `COMPARED_ENTRIES` it starts over.
#[derive(Debug, Default)]
pub(crate) struct Compared {
    entries: std::sync::Mutex<rustc_hash::FxHashMap<ComparedKey, Vec<SymbolChange>>>,
}

const COMPARED_ENTRIES: usize = 8192;

impl Compared {
    fn get(&self, key: &ComparedKey) -> Option<Vec<SymbolChange>> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    fn keep(&self, key: ComparedKey, changes: &[SymbolChange]) {
        let Ok(mut entries) = self.entries.lock() else { return };
        if entries.len() >= COMPARED_ENTRIES {
            entries.clear();
        }
        entries.insert(key, changes.to_vec());
    }
}

/// One changed file as the review sees it: its path (and old path when renamed) and the bytes of
/// each side that has it and was read.
pub(crate) struct FileSides<'a> {
    pub(crate) path: &'a str,
    pub(crate) old_path: Option<&'a str>,
    pub(crate) old: Option<&'a [u8]>,
    pub(crate) new: Option<&'a [u8]>,
}

/// A changed symbol, with what is known of its reach.
#[derive(Debug, Clone)]
pub(crate) struct Reviewed {
    pub(crate) change: SymbolChange,
    /// For a change that can break a caller: the uses of its old name in the tree now; `None`
    /// when they were not looked for (private, the index not ready, the time budget spent).
    pub(crate) refs: Option<Refs>,
    /// For a symbol moved from another file: that file.
    pub(crate) moved_from_file: Option<String>,
}

/// The uses of a symbol found in the tree as it is now.
#[derive(Debug, Clone, Default)]
pub(crate) struct Refs {
    /// (path, line, confidence) of each use line, in path order; at most `MAX_SITES`.
    pub(crate) sites: Vec<(String, usize, Confidence)>,
    /// More uses exist than `sites` holds.
    pub(crate) more: bool,
}

impl Refs {
    /// The uses resolved through imports or scope (not by name alone).
    pub(crate) fn resolved(&self) -> usize {
        self.sites.iter().filter(|(_, _, confidence)| *confidence != Confidence::NameOnly).count()
    }
}

impl Reviewed {
    /// How risky the change is, lower first: a public symbol that callers may break on
    /// (removed, re-signatured, renamed, moved) with uses left, then one without, then public
    /// bodies, additions, and private changes last.
    pub(crate) fn rank(&self) -> u8 {
        let used = self.refs.as_ref().is_some_and(|refs| refs.resolved() > 0);
        match (self.can_break(), self.change.public) {
            (true, _) if used => 0,
            (true, _) => 1,
            (false, true) if self.change.change == ChangeKind::Body => 2,
            (false, true) => 3,
            (false, false) => 4,
        }
    }

    /// Whether the change can break a caller, so its uses are looked for.
    fn can_break(&self) -> bool {
        self.change.public
            && matches!(
                self.change.change,
                ChangeKind::Removed | ChangeKind::Signature | ChangeKind::Renamed | ChangeKind::Moved
            )
    }

    /// The line a reader finds it at: the new side's, else the old one's.
    pub(crate) fn line(&self) -> usize {
        self.change.new.or(self.change.old).map_or(1, |span| span.start_line)
    }
}

/// The review of a set of changed files.
#[derive(Debug, Default)]
pub(crate) struct Review {
    /// Per input file, in input order: its changed symbols, riskiest first.
    pub(crate) files: Vec<Vec<Reviewed>>,
    /// Test files that name changed symbols, most first: (path, how many names).
    pub(crate) tests: Vec<(String, usize)>,
    /// Why some uses were not looked for, when they were not.
    pub(crate) note: Option<String>,
}

/// At most this many uses are kept per symbol.
const MAX_SITES: usize = 24;
/// At most this many symbols have their uses looked for in one review.
const MAX_CHECKED: usize = 64;
/// Looking for uses stops after this long; the symbols not reached say so.
const REFS_BUDGET: Duration = Duration::from_millis(300);
/// At most this many test files are parsed to see which changed names they use, those whose
/// text holds the most of the first `MAX_TEST_NAMES` names.
const MAX_TEST_FILES: usize = 48;
const MAX_TEST_NAMES: usize = 256;

pub(crate) fn review(workspace: &Workspace, work: &Work, files: &[FileSides<'_>]) -> Review {
    let limit = workspace.config().max_file_bytes as usize;
    let mut per_file: Vec<Vec<Reviewed>> = Vec::with_capacity(files.len());
    loupe_core::parallel::map_in_order(
        files,
        loupe_core::parallel::cores(),
        || (),
        |_, file| changed_symbols(workspace, file, limit),
        |_, changes| {
            per_file.push(
                changes.into_iter().map(|change| Reviewed { change, refs: None, moved_from_file: None }).collect(),
            );
            true
        },
    );
    pair_moves(files, &mut per_file);
    let mut review = Review { files: per_file, ..Review::default() };
    let index = workspace.index_for_query().filter(|index| index.state() == IndexState::Ready);
    let Some(index) = index else {
        if review.files.iter().flatten().any(Reviewed::can_break) {
            review.note = Some("uses not looked for: the index is still building".into());
        }
        sort(&mut review);
        return review;
    };
    let view = View::new(workspace, index, work);
    find_uses(&view, files, &mut review);
    review.tests = tests_naming(&view, &review);
    sort(&mut review);
    review
}

/// The changed symbols of one file, riskiest first, without looking for their uses.
pub(crate) fn symbols_of(workspace: &Workspace, file: &FileSides<'_>, limit: usize) -> Vec<Reviewed> {
    let mut symbols: Vec<Reviewed> = changed_symbols(workspace, file, limit)
        .into_iter()
        .map(|change| Reviewed { change, refs: None, moved_from_file: None })
        .collect();
    symbols.sort_by_key(|symbol| (symbol.rank(), symbol.line()));
    symbols
}

/// The changed symbols of one file; none for a file in no known language, a side not read
/// (binary, over the size limit) or not text.
fn changed_symbols(workspace: &Workspace, file: &FileSides<'_>, limit: usize) -> Vec<SymbolChange> {
    let Some(lang) = Lang::from_path(file.path) else { return Vec::new() };
    // A page of a long review, a review asked again, or a symbol's diff after its review
    // compares the same two versions: parsed once.
    let key = ComparedKey {
        lang,
        old: file.old.map(loupe_core::ContentHash::of),
        new: file.new.map(loupe_core::ContentHash::of),
    };
    if let Some(found) = workspace.compared.get(&key) {
        return found;
    }
    let changes = compare_sides(lang, file, limit);
    workspace.compared.keep(key, &changes);
    changes
}

fn compare_sides(lang: Lang, file: &FileSides<'_>, limit: usize) -> Vec<SymbolChange> {
    let side = |bytes: Option<&[u8]>| -> Option<String> {
        match bytes {
            None => Some(String::new()),
            Some(bytes) if bytes.len() > limit || text::looks_binary(bytes) => None,
            Some(bytes) => text::decode(bytes).ok().map(|decoded| decoded.text),
        }
    };
    match (side(file.old), side(file.new)) {
        (Some(old), Some(new)) => loupe_syntax::changes::compare(lang, &old, &new),
        _ => Vec::new(),
    }
}

/// A symbol removed from one file and added to another with the same name, kind and text is
/// moved: the addition says from where, the removal goes.
fn pair_moves(files: &[FileSides<'_>], per_file: &mut [Vec<Reviewed>]) {
    // The additions by what a move keeps: kind, simple name, text.
    type Kept<'n> = (SymbolKind, &'n str, u64);
    let mut added: rustc_hash::FxHashMap<Kept<'_>, Vec<(usize, usize)>> = rustc_hash::FxHashMap::default();
    let mut removed: Vec<(usize, usize)> = Vec::new();
    for (file, symbols) in per_file.iter().enumerate() {
        for (at, symbol) in symbols.iter().enumerate() {
            let change = &symbol.change;
            match change.change {
                ChangeKind::Added => added
                    .entry((change.kind, simple_name(&change.name), change.text_hash))
                    .or_default()
                    .push((file, at)),
                ChangeKind::Removed => removed.push((file, at)),
                _ => {}
            }
        }
    }
    let mut moves: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for (file, at) in removed {
        let old = &per_file[file][at].change;
        let Some(candidates) = added.get_mut(&(old.kind, simple_name(&old.name), old.text_hash)) else { continue };
        if let Some(position) = candidates.iter().position(|(other, _)| *other != file) {
            moves.push(((file, at), candidates.remove(position)));
        }
    }
    let mut gone: Vec<(usize, usize)> = Vec::with_capacity(moves.len());
    for ((file, at), (other, position)) in moves {
        let old = per_file[file][at].change.clone();
        let moved = &mut per_file[other][position];
        moved.change.change = ChangeKind::Moved;
        moved.change.from = Some(old.name);
        moved.change.old = old.old;
        moved.change.public |= old.public;
        moved.moved_from_file = Some(files[file].old_path.unwrap_or(files[file].path).to_owned());
        gone.push((file, at));
    }
    gone.sort_unstable_by(|a, b| b.cmp(a));
    for (file, at) in gone {
        per_file[file].remove(at);
    }
}

/// The last part of a qualified name.
fn simple_name(qualified: &str) -> &str {
    qualified.rsplit(['.', ':', '/']).next().unwrap_or(qualified)
}

/// Looks for the uses of every change that can break a caller, in the tree as it is now, until
/// `MAX_CHECKED` symbols or `REFS_BUDGET` are spent.
fn find_uses(view: &View<'_>, files: &[FileSides<'_>], review: &mut Review) {
    let started = Instant::now();
    let mut checked = 0;
    let mut skipped = 0;
    for (file, symbols) in files.iter().zip(review.files.iter_mut()) {
        let Some(lang) = Lang::from_path(file.path) else { continue };
        for symbol in symbols.iter_mut().filter(|symbol| symbol.can_break()) {
            if checked >= MAX_CHECKED || started.elapsed() > REFS_BUDGET || view.work().stopped().is_some() {
                skipped += 1;
                continue;
            }
            checked += 1;
            let Some(target) = target_of(view, file, lang, symbol) else { continue };
            let mut refs = Refs::default();
            reference_sites(view, &target, &mut |path, facts, sites| {
                if target.line == 0 && finds_it_elsewhere(view, path, facts, &target) {
                    return true;
                }
                let mut lines: Vec<(usize, Confidence)> =
                    sites.iter().map(|site| (site.line, site.confidence)).collect();
                lines.dedup_by_key(|(line, _)| *line);
                for (line, confidence) in lines {
                    if refs.sites.len() == MAX_SITES {
                        refs.more = true;
                        return false;
                    }
                    refs.sites.push((path.as_str().to_owned(), line, confidence));
                }
                true
            });
            // The uses resolved through imports or scope first; those matched by name alone last.
            refs.sites.sort_by_key(|(_, _, confidence)| *confidence == Confidence::NameOnly);
            symbol.refs = Some(refs);
        }
    }
    if skipped > 0 {
        review.note = Some(format!(
            "uses of {skipped} more symbol(s) not looked for (at most {MAX_CHECKED} per answer, or out of time)"
        ));
    }
}

/// Whether a file's uses of a symbol gone from its place now reach a definition elsewhere: the
/// file imports the name from another file, or (a top-level name) defines it itself. Those uses
/// were carried along (the symbol moved, the import followed), not left behind.
fn finds_it_elsewhere(view: &View<'_>, path: &RepoPath, facts: &loupe_syntax::FileFacts, target: &SymbolRef) -> bool {
    use loupe_graph::Workspace as _;
    let imported = view.imports(path).iter().any(|(import, files)| {
        import.names.contains(&target.name) && !files.is_empty() && !files.contains(&target.path)
    });
    let defined = target.container.is_none()
        && facts.definitions.iter().any(|definition| definition.depth == 0 && definition.name == target.name);
    imported || defined
}

/// What the uses of a changed symbol are uses of: the definition of its old name in the file
/// as it is now when there is one (a re-signatured symbol), else the symbol as it was (a removed,
/// renamed or moved one: uses of the old name are left behind).
pub(crate) fn target_of(view: &View<'_>, file: &FileSides<'_>, lang: Lang, symbol: &Reviewed) -> Option<SymbolRef> {
    let change = &symbol.change;
    let old_name = change.from.as_deref().unwrap_or(&change.name);
    let old_path = symbol.moved_from_file.as_deref().or(file.old_path).unwrap_or(file.path);
    let (container, name) = match old_name.rsplit_once(lang.separator()) {
        Some((container, name)) => (Some(container.to_owned()), name.to_owned()),
        None => (None, old_name.to_owned()),
    };
    let path = RepoPath::normalize(old_path)?;
    if matches!(change.change, ChangeKind::Signature | ChangeKind::Body)
        && let Some(facts) = view.facts(&path)
        && let Some(definition) =
            facts.definitions.iter().find(|definition| definition.name == name && definition.container == container)
    {
        return Some(SymbolRef::from_definition(&path, lang, definition));
    }
    Some(SymbolRef {
        path,
        lang,
        name,
        kind: change.kind,
        container,
        signature: String::new(),
        span: change.old.or(change.new).unwrap_or(Span { start_line: 0, end_line: 0 }),
        // No line of the tree now is this definition's.
        line: 0,
    })
}

/// The test files that name the changed public symbols (by name: a test that uses `get`
/// names every `get`), with how many names each uses, most first.
fn tests_naming(view: &View<'_>, review: &Review) -> Vec<(String, usize)> {
    let mut names: Vec<&str> = review
        .files
        .iter()
        .flatten()
        .filter(|symbol| symbol.change.public && symbol.change.kind != SymbolKind::Impl)
        .map(|symbol| simple_name(symbol.change.from.as_deref().unwrap_or(&symbol.change.name)))
        .filter(|name| name.len() >= 3 && !(name.starts_with("__") && name.ends_with("__")))
        .collect();
    names.sort_unstable();
    names.dedup();
    // The test files whose text may hold the most of the names (per the trigram index) are
    // parsed to confirm which they use.
    let mut mentions: rustc_hash::FxHashMap<RepoPath, usize> = rustc_hash::FxHashMap::default();
    for name in names.iter().take(MAX_TEST_NAMES) {
        for path in view.index().text_candidates(&plan_literal(name)) {
            if is_test_path(path.as_str()) {
                *mentions.entry(path).or_default() += 1;
            }
        }
    }
    let mut candidates: Vec<(RepoPath, usize)> = mentions.into_iter().collect();
    candidates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let candidates: Vec<RepoPath> = candidates.into_iter().take(MAX_TEST_FILES).map(|(path, _)| path).collect();
    // Which of the names each file writes as a word: its identifiers, read once (a use by name,
    // as the answer says; a parse would say no more about a name than that).
    let wanted: rustc_hash::FxHashSet<&str> = names.iter().copied().collect();
    let workspace = view.workspace();
    let mut tests: Vec<(String, usize)> = Vec::new();
    loupe_core::parallel::map_in_order(
        &candidates,
        loupe_core::parallel::cores(),
        || (),
        |_, path| {
            let text = crate::workspace::relations::read_text(workspace, path)?;
            let words: rustc_hash::FxHashSet<&str> =
                text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|word| wanted.contains(word)).collect();
            (!words.is_empty()).then(|| (path.as_str().to_owned(), words.len()))
        },
        |_, found| {
            tests.extend(found);
            true
        },
    );
    tests.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    tests
}

/// Whether a path is a test file by the common conventions: a `test`/`tests`/`__tests__`/`spec`
/// directory, `test_*.py`, `*_test.*`, `*.test.*`, `*.spec.*`, `*Test.java`, `conftest.py`.
pub(crate) fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let file = parts.pop().unwrap_or_default();
    if parts.iter().any(|dir| matches!(*dir, "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "e2e")) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    file == "conftest.py"
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || file.contains(".test.")
        || file.contains(".spec.")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
}

/// Each file's symbols riskiest first (then in source order).
fn sort(review: &mut Review) {
    for symbols in &mut review.files {
        symbols.sort_by_key(|symbol| (symbol.rank(), symbol.line()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_by_convention() {
        for path in [
            "tests/test_app.py",
            "src/a_test.go",
            "web/x.test.ts",
            "a/__tests__/b.js",
            "conftest.py",
            "src/FooTest.java",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in ["src/flask/app.py", "src/testing_utils.rs", "contest.py", "src/attest.py"] {
            assert!(!is_test_path(path), "{path}");
        }
    }
}
