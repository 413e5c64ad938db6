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
use loupe_syntax::{Definition, FileFacts, FlowKind, Reference};

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
    let import_lines: Vec<usize> = view.imports(path).iter().map(|(import, _)| import.line).collect();
    let mut plain = Plain::new(view, path, lang, facts);
    for reference in &facts.references {
        if !names.contains(&reference.name) || (*path == target.path && reference.line == target.line) {
            continue;
        }
        let site_here = facts.calls.iter().find(|site| site.line == reference.line && site.column == reference.column);
        let mut confidence = judge(view, path, lang, target, reference, site_here, file_confidence);
        // `buf.capacity()` after `let mut buf = BytesMut::new()`: a receiver the call's
        // resolution could not type, typed by the local assignment that made it.
        if let (Some(call), Some(owner)) = (site_here, target.owner())
            && matches!(confidence, None | Some(Confidence::NameOnly))
            && let Some(receiver) = call.receiver.as_deref()
            && let Some(local) = plain.local_type(receiver, reference.line)
        {
            confidence = (local == owner).then_some(Confidence::Exact);
        }
        // A use that is neither a call nor on an import line was judged by what the file can
        // see: whether it is a member access, and of what, or a local, decides.
        if site_here.is_none() && !import_lines.contains(&reference.line) {
            confidence = confidence.and_then(|confidence| plain.refine(target, reference, confidence));
        }
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
        let found =
            resolved.iter().find(|(callee, _)| same_symbol(callee, target) || constructs(callee)).map(|(_, c)| *c);
        // A symbol gone from the tree (line 0: a review's removed or renamed one) resolves no
        // call; a call of its name that resolves to nothing else is judged like a plain use,
        // by what the file can see.
        if found.is_none() && target.line == 0 && resolved.is_empty() {
            return file_confidence;
        }
        return found;
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

/// What decides a plain use (not a call, not an import): the file's text around it, and the
/// data flow of the name in the function it is in, parsed once per function.
struct Plain<'v> {
    view: &'v View<'v>,
    path: &'v RepoPath,
    lang: Lang,
    facts: &'v FileFacts,
    text: Option<Option<String>>,
    /// Where each line of `text` starts, once it is read.
    starts: Vec<usize>,
    /// The flows computed so far, each with the name it follows.
    flows: Vec<(String, loupe_syntax::DataFlow)>,
}

/// Languages whose members are never named bare (always `self.x`, `this.x`, `obj.x`).
fn members_need_a_receiver(lang: Lang) -> bool {
    matches!(lang, Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Rust | Lang::Go)
}

impl<'v> Plain<'v> {
    fn new(view: &'v View<'v>, path: &'v RepoPath, lang: Lang, facts: &'v FileFacts) -> Plain<'v> {
        Plain { view, path, lang, facts, text: None, starts: Vec::new(), flows: Vec::new() }
    }

    fn text(&mut self) -> Option<&str> {
        if self.text.is_none() {
            let workspace = self.view.workspace();
            let read = workspace.root().read_indexed(self.path, workspace.config().max_file_bytes).ok();
            let text = read.and_then(|bytes| loupe_core::text::decode(&bytes).ok().map(|decoded| decoded.text));
            if let Some(text) = &text {
                self.starts = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
            }
            self.text = Some(text);
        }
        self.text.as_ref().and_then(|text| text.as_deref())
    }

    /// The text of the reference's line before it.
    fn before(&mut self, line: usize, column: usize) -> Option<String> {
        self.text()?;
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let text = self.text.as_ref()?.as_deref()?;
        text.get(start..start + column.saturating_sub(1)).map(str::to_owned)
    }

    /// `confidence` kept, lowered or dropped for a plain use of `target`'s name.
    fn refine(&mut self, target: &SymbolRef, reference: &Reference, confidence: Confidence) -> Option<Confidence> {
        let before = self.before(reference.line, reference.column)?;
        let trimmed = before.trim_end();
        let accessor = [".", "?.", "->", "::"].into_iter().find(|accessor| trimmed.ends_with(accessor));
        let member = target.container.is_some()
            && matches!(
                target.kind,
                SymbolKind::Method
                    | SymbolKind::Field
                    | SymbolKind::Property
                    | SymbolKind::Constructor
                    | SymbolKind::EnumMember
                    | SymbolKind::Constant
                    | SymbolKind::Variable
            );
        match accessor {
            Some(accessor) => {
                let head_text = &trimmed[..trimmed.len() - accessor.len()];
                let head: String = head_text
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if member {
                    self.member_access(target, reference, &head, confidence)
                } else {
                    // `obj.name` of a top-level name: only through a module that leads to it.
                    self.module_head(target, &head).then_some(Confidence::Exact)
                }
            }
            None if member && members_need_a_receiver(self.lang) => {
                // A bare name is never a member here; Rust's `Self::X` / `Type::X` came above.
                None
            }
            None => (!self.is_local(reference) && self.nearest_is(target, reference)).then_some(confidence),
        }
    }

    /// When the file defines the name more than once (a `make_input` in each inline module), a
    /// bare use means the one in its nearest enclosing scope: whether that is `target`.
    fn nearest_is(&self, target: &SymbolRef, reference: &Reference) -> bool {
        // A member is named bare only where members need no receiver (Java, C++, …).
        let bare = |definition: &&Definition| {
            !members_need_a_receiver(self.lang)
                || !matches!(
                    definition.kind,
                    SymbolKind::Method
                        | SymbolKind::Field
                        | SymbolKind::Property
                        | SymbolKind::Constructor
                        | SymbolKind::EnumMember
                        | SymbolKind::Impl
                )
        };
        let same: Vec<&Definition> =
            self.facts.definitions.iter().filter(|definition| definition.name == target.name).filter(bare).collect();
        if same.len() < 2 || *self.path != target.path {
            return true;
        }
        let scope = reference.container.as_deref().unwrap_or("");
        let sep = self.lang.separator();
        let encloses = |container: &Option<String>| match container {
            None => true,
            Some(container) => scope == container || scope.starts_with(&format!("{container}{sep}")),
        };
        let nearest = same
            .iter()
            .filter(|definition| encloses(&definition.container))
            .max_by_key(|definition| definition.container.as_ref().map_or(0, String::len));
        nearest.is_none_or(|definition| definition.name_line == target.line)
    }

    /// `head.name` for a member `target`: its own class's `self`/`this`, the type itself, or a
    /// parameter declared with it; any other receiver is only a name match.
    fn member_access(
        &mut self,
        target: &SymbolRef,
        reference: &Reference,
        head: &str,
        confidence: Confidence,
    ) -> Option<Confidence> {
        let owner = target.owner().unwrap_or("");
        if matches!(head, "self" | "this" | "Self" | "cls") {
            return Some(confidence);
        }
        if head == owner {
            return Some(Confidence::Exact);
        }
        if head.is_empty() {
            return Some(Confidence::NameOnly);
        }
        let enclosing = self
            .facts
            .definitions
            .iter()
            .filter(|definition| {
                definition.span.start_line <= reference.line
                    && reference.line <= definition.span.end_line
                    && matches!(definition.kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor)
            })
            .max_by_key(|definition| definition.depth);
        let declared = enclosing
            .and_then(|function| loupe_graph::calls::parameter_type(&function.signature, head, self.lang))
            .or_else(|| self.local_type(head, reference.line));
        match declared {
            Some(declared) if declared == owner => Some(Confidence::Exact),
            Some(_) => None,
            None => Some(Confidence::NameOnly),
        }
    }

    /// Whether `head` is an import binding that leads to `target`'s file (`helpers.get_x`).
    fn module_head(&self, target: &SymbolRef, head: &str) -> bool {
        !head.is_empty()
            && self.view.imports(self.path).iter().any(|(import, files)| {
                let last = import.module.rsplit(['.', '/', ':']).find(|part| !part.is_empty()).unwrap_or("");
                let binds = import.alias.as_deref() == Some(head)
                    || (import.alias.is_none() && (last == head || import.names.iter().any(|name| name == head)));
                binds
                    && files.iter().any(|file| {
                        *file == target.path
                            || self.view.imports(file).iter().any(|(_, inner)| inner.contains(&target.path))
                    })
            })
    }

    /// The type a local was made as, from the assignment that defines it in the function
    /// around `line`: `x = Blueprint(…)`, `let mut buf = BytesMut::with_capacity(…)`,
    /// `const c = new Cart()`, `s := Server{…}`: the last capitalised segment of the
    /// constructor's path. `None` when the name is no simple local or the value is no such call.
    fn local_type(&mut self, name: &str, line: usize) -> Option<String> {
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let lang = self.lang;
        let flow = loupe_syntax::data_flow(lang, self.text()?, line, name)?;
        flow.function.as_ref()?;
        let defined =
            flow.events.iter().rev().find(|event| event.kind == FlowKind::Definition && event.line <= line)?;
        let start = *self.starts.get(defined.line.checked_sub(1)?)?;
        let text = self.text.as_ref()?.as_deref()?;
        let rest = text.get(start + defined.column - 1 + name.len()..)?;
        let line_rest = rest.split('\n').next().unwrap_or("");
        let value = line_rest.split_once('=').map(|(_, value)| value)?.trim_start();
        let value = value.strip_prefix("new ").or_else(|| value.strip_prefix("await ")).unwrap_or(value);
        let head_end =
            value.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':')).unwrap_or(value.len());
        let (head, after) = value.split_at(head_end);
        if !(after.starts_with('(') || after.starts_with('{')) {
            return None;
        }
        head.rsplit(['.', ':']).find(|segment| segment.starts_with(|c: char| c.is_ascii_uppercase())).map(str::to_owned)
    }

    /// Whether the reference is a parameter or local of the function it is in.
    fn is_local(&mut self, reference: &Reference) -> bool {
        let known = self.flows.iter().position(|(name, flow)| {
            *name == reference.name && flow.span.start_line <= reference.line && reference.line <= flow.span.end_line
        });
        let flow = match known {
            Some(at) => &self.flows[at].1,
            None => {
                let lang = self.lang;
                let Some(text) = self.text() else { return false };
                let Some(flow) = loupe_syntax::data_flow(lang, text, reference.line, &reference.name) else {
                    return false;
                };
                if flow.function.is_none() {
                    return false;
                }
                self.flows.push((reference.name.clone(), flow));
                &self.flows.last().expect("just pushed").1
            }
        };
        let binds = flow.events.iter().any(|event| matches!(event.kind, FlowKind::Parameter | FlowKind::Definition));
        binds && flow.events.iter().any(|event| event.line == reference.line && event.column == reference.column)
    }
}
