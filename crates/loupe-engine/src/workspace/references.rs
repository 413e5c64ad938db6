//! Where a symbol is used: the sites `analyze references` shows and `edit`'s symbol operations
//! change or check (a rename, a delete, what an edit left behind), found once here. Files that
//! may use the symbol come from the text index and the import graph; each is parsed as it is on
//! disk now, and each use is judged by `loupe-graph`'s resolution (calls by their call's
//! resolution, import lines by where the import leads, other uses by what the file can see).

use loupe_core::RepoPath;
use loupe_graph::calls::{family, is_header, is_type_kind};
use loupe_graph::{Confidence, Resolved, SymbolRef, Workspace as _, reference_confidence, resolve_call};
use loupe_index::trigram::plan_literal;
use loupe_index::{Lang, SymbolKind};
use loupe_syntax::{Definition, FileFacts};

use crate::workspace::relations::View;

pub(crate) fn same_symbol(left: &SymbolRef, right: &SymbolRef) -> bool {
    left.path == right.path && left.name == right.name && left.line == right.line
}

/// The name code uses for `symbol`: a constructor is called by its class's name.
pub(crate) fn used_name(symbol: &SymbolRef) -> &str {
    match symbol.owner() {
        Some(owner) if symbol.is_constructor() => owner,
        _ => &symbol.name,
    }
}

/// Files that may use `symbol`: those that mention its name (per the text index), and those
/// that import its file directly or through one re-export (they may use it under an alias).
pub(crate) fn mentioning(view: &View<'_>, symbol: &SymbolRef) -> Vec<RepoPath> {
    let mut files = view.index().text_candidates(&plan_literal(used_name(symbol)));
    let graph = &view.graphs.imports;
    let own = Resolved::File(symbol.path.clone());
    for (importer, _) in graph.importers_of(&own) {
        for (second, _) in graph.importers_of(&Resolved::File(importer.clone())) {
            files.push(second);
        }
        files.push(importer);
    }
    let mut seen = rustc_hash::FxHashSet::default();
    files.retain(|file| seen.insert(file.clone()));
    files
}

/// The files in a language that can use code of `lang` (a Python name in a `.c` file is not
/// a use).
pub(crate) fn same_family(mut files: Vec<RepoPath>, lang: Lang) -> Vec<RepoPath> {
    files.retain(|file| Lang::from_path(file.as_str()).is_some_and(|other| family(other) == family(lang)));
    files
}

/// Files parsed together (on every core) before checking whether enough was found.
pub(crate) const FILES_PER_CHUNK: usize = 64;

/// One use of a symbol: where its name is written, and how sure the resolution is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) line: usize,
    /// 1-based byte column of the name.
    pub(crate) column: usize,
    /// The name as written there: the symbol's own, or an alias an import gave it.
    pub(crate) name: String,
    pub(crate) confidence: Confidence,
}

/// Every use of `target` in the workspace (its definition not included), file by file in path
/// order, each file's sites in source order, handed to `each` with the file's facts; `each`
/// answers whether to go on. Returns whether every file was seen (not stopped by `each`, a
/// cancellation or a budget). `analyze references` and `edit`'s symbol operations share it.
pub(crate) fn reference_sites(
    view: &View<'_>,
    target: &SymbolRef,
    each: &mut dyn FnMut(&RepoPath, &FileFacts, &[Site]) -> bool,
) -> bool {
    let files = same_family(mentioning(view, target), target.lang);
    let parsed = files.chunks(FILES_PER_CHUNK).flat_map(|chunk| chunk.iter().zip(view.facts_of(chunk)));
    for (path, facts) in parsed {
        if view.work().stopped().is_some() {
            return false;
        }
        let Some(lang) = Lang::from_path(path.as_str()) else { continue };
        let Some(facts) = facts else { continue };
        let sites = sites_in(view, path, lang, &facts, target);
        if !sites.is_empty() && !each(path, &facts, &sites) {
            return false;
        }
    }
    true
}

fn sites_in(view: &View<'_>, path: &RepoPath, lang: Lang, facts: &FileFacts, target: &SymbolRef) -> Vec<Site> {
    let mut sites: Vec<Site> = Vec::new();
    let site = |definition: &Definition, confidence| Site {
        line: definition.name_line,
        column: definition.name_column,
        name: definition.name.clone(),
        confidence,
    };
    if matches!(lang, Lang::C | Lang::Cpp) && *path != target.path && is_header(path) {
        // A header's prototype of a function defined in a source file is a use of it.
        for definition in facts.definitions.iter().filter(|definition| definition.name == target.name) {
            sites.push(site(definition, Confidence::Scoped));
        }
    }
    let file_confidence = reference_confidence(view, path, lang, target, &facts.definitions);
    if let Some(file_confidence) = file_confidence {
        // `impl Config {`: a Rust impl block names its type.
        for definition in &facts.definitions {
            if definition.kind == SymbolKind::Impl && definition.name == target.name && is_type_kind(target.kind) {
                sites.push(site(definition, file_confidence));
            }
        }
    }
    let names = loupe_graph::local_names(view, path, &target.name);
    // One line's uses are judged once per name: a line holds the same call many times only in
    // minified code.
    let mut judged: Vec<(usize, String, Option<Confidence>)> = Vec::new();
    for reference in &facts.references {
        if !names.contains(&reference.name) || (*path == target.path && reference.line == target.line) {
            continue;
        }
        let site_here = facts.calls.iter().find(|site| site.line == reference.line && site.column == reference.column);
        let known = judged
            .iter()
            .find(|(line, name, _)| site_here.is_none() && *line == reference.line && *name == reference.name);
        let confidence = match known {
            Some((_, _, confidence)) => *confidence,
            None => {
                let confidence = judge(view, path, lang, target, reference, site_here, file_confidence);
                if site_here.is_none() {
                    judged.push((reference.line, reference.name.clone(), confidence));
                }
                confidence
            }
        };
        let Some(confidence) = confidence else { continue };
        sites.push(Site { line: reference.line, column: reference.column, name: reference.name.clone(), confidence });
    }
    sites.sort_by_key(|site| (site.line, site.column));
    sites.dedup_by_key(|site| (site.line, site.column));
    sites
}

/// How sure it is that `reference` in `path` means `target`; `None`: it does not.
fn judge(
    view: &View<'_>,
    path: &RepoPath,
    lang: Lang,
    target: &SymbolRef,
    reference: &loupe_syntax::Reference,
    call: Option<&loupe_syntax::CallSite>,
    file_confidence: Option<Confidence>,
) -> Option<Confidence> {
    // A use that is a call is judged by the call's own resolution, one on an import line by
    // where that import leads.
    if let Some(call) = call {
        let resolved = resolve_call(view, path, lang, call);
        // `Item(…)` runs `Item.__init__`: a use of the class too.
        let constructs = |callee: &SymbolRef| {
            callee.is_constructor() && callee.path == target.path && callee.owner() == Some(target.name.as_str())
        };
        return resolved.iter().find(|(callee, _)| same_symbol(callee, target) || constructs(callee)).map(|(_, c)| *c);
    }
    let on_import: loupe_graph::ResolvedImports =
        view.imports(path).iter().filter(|(import, _)| import.line == reference.line).cloned().collect();
    if on_import.is_empty() {
        return file_confidence;
    }
    let leads_there = on_import.iter().any(|(_, files)| files.contains(&target.path));
    // A re-export: the imported file defines no such name itself but imports the target (by
    // name or glob) from its file.
    let defines = |file: &RepoPath| view.named(&target.name).iter().any(|symbol| &symbol.path == file);
    let via_reexport = on_import.iter().any(|(_, files)| {
        files.iter().filter(|file| !defines(file)).any(|file| {
            view.imports(file).iter().any(|(inner, inner_files)| {
                inner_files.contains(&target.path)
                    && inner.names.iter().any(|name| name == "*" || name.ends_with(target.name.as_str()))
            })
        })
    });
    match (leads_there, via_reexport) {
        (true, _) => Some(Confidence::Exact),
        (false, true) => Some(Confidence::Scoped),
        (false, false) => None,
    }
}
