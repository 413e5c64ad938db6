//! Resolving a call site (or a use of a name) to the definitions it may mean, with how sure
//! the resolution is: through the file's own definitions, its imports (explicit names,
//! aliases, modules, globs, re-exports one hop away), its package, the receiver (`self`,
//! `this`, a type or module qualifier) and the type hierarchy.
//!
//! Resolution is syntactic: a receiver whose type is not written at the call (`client.get()`)
//! is matched by name among the methods the file can see, and marked accordingly.

use std::sync::Arc;

use loupe_core::RepoPath;
use loupe_syntax::{CallSite, Definition, Import, Lang, Span, SymbolKind};
use serde::Serialize;

use crate::types::{TypeGraph, simple_name};

/// How sure an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Resolved through the file itself, an import that names it, a module qualifier, or the
    /// enclosing type (`self.m()`).
    Exact,
    /// Resolved through a scope that could hold more than one candidate but holds one: a glob
    /// or module import, the package, an inherited method, the only method of that name in
    /// the files the caller can see.
    Scoped,
    /// Matched by name alone.
    NameOnly,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Scoped => "scoped",
            Confidence::NameOnly => "name_only",
        }
    }
}

/// A definition somewhere in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SymbolRef {
    pub path: RepoPath,
    pub lang: Lang,
    pub name: String,
    pub kind: SymbolKind,
    pub container: Option<String>,
    pub signature: String,
    pub span: Span,
    /// The line of the name.
    pub line: usize,
}

impl SymbolRef {
    pub fn from_definition(path: &RepoPath, lang: Lang, definition: &Definition) -> SymbolRef {
        SymbolRef {
            path: path.clone(),
            lang,
            name: definition.name.clone(),
            kind: definition.kind,
            container: definition.container.clone(),
            signature: definition.signature.clone(),
            span: definition.span,
            line: definition.name_line,
        }
    }

    /// The container chain and the name, joined by the language's separator: `Config::load`.
    pub fn qualified(&self) -> String {
        match &self.container {
            Some(container) => format!("{container}{}{}", self.lang.separator(), self.name),
            None => self.name.clone(),
        }
    }

    /// A constructor: Java's and C++'s named after the class, `__init__`, `constructor`.
    pub fn is_constructor(&self) -> bool {
        self.kind == SymbolKind::Constructor
            || (self.container.is_some() && matches!(self.name.as_str(), "__init__" | "constructor"))
    }

    /// `path#qualified`: the node id analyze answers with.
    pub fn id(&self) -> String {
        format!("{}#{}", self.path.as_str(), self.qualified())
    }

    fn is_callable(&self) -> bool {
        matches!(
            self.kind,
            SymbolKind::Function
                | SymbolKind::Method
                | SymbolKind::Constructor
                | SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Macro
        )
    }

    fn is_type(&self) -> bool {
        is_type_kind(self.kind)
    }

    /// The last segment of the container (`Config` for `outer::Config`).
    pub fn owner(&self) -> Option<&str> {
        self.container.as_deref().map(simple_name)
    }
}

/// Kinds that name a type (what `types` walks and `Type::member` qualifies).
pub fn is_type_kind(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Interface
            | SymbolKind::Trait
            | SymbolKind::Enum
            | SymbolKind::Union
            | SymbolKind::TypeAlias
    )
}

/// Languages whose files can call each other share a family number.
pub fn family(lang: Lang) -> u8 {
    match lang {
        Lang::Rust => 0,
        Lang::Python => 1,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => 2,
        Lang::Go => 3,
        Lang::Java | Lang::Kotlin => 4,
        Lang::C | Lang::Cpp => 5,
        Lang::CSharp => 6,
        Lang::Ruby => 7,
        Lang::Php => 8,
    }
}

/// A file's imports, each with the workspace files it resolved to.
pub type ResolvedImports = Vec<(Import, Vec<RepoPath>)>;

/// What resolution asks of the workspace.
pub trait Workspace {
    /// Definitions whose name is exactly `name` (shared: `__init__` has thousands).
    fn named(&self, name: &str) -> Arc<Vec<SymbolRef>>;
    /// The imports of a file, each with the workspace files it resolved to.
    fn imports(&self, path: &RepoPath) -> Arc<ResolvedImports>;
    /// The other files of the file's package, visible without an import (Go, Java).
    fn package(&self, path: &RepoPath) -> Vec<RepoPath>;
    fn types(&self) -> &TypeGraph;
}

/// The files `path` can see a name through, and how.
struct Visibility {
    /// Imports that name it explicitly (`from x import f`, `use a::f`, `import {f}`), after
    /// following one re-export.
    named: Vec<RepoPath>,
    /// Module, glob and include imports, and the package.
    scoped: Vec<RepoPath>,
}

impl Visibility {
    /// The `candidates` a file at `path` can see: its own, and those its imports reach.
    fn seen_from<'a>(&self, path: &RepoPath, candidates: &'a [SymbolRef]) -> Vec<&'a SymbolRef> {
        candidates
            .iter()
            .filter(|candidate| {
                &candidate.path == path || self.named.contains(&candidate.path) || self.scoped.contains(&candidate.path)
            })
            .collect()
    }
}

fn visibility(workspace: &dyn Workspace, path: &RepoPath, name: &str) -> Visibility {
    let mut visible = Visibility { named: Vec::new(), scoped: workspace.package(path) };
    for (import, files) in workspace.imports(path).iter() {
        if names_it(import, name) {
            visible.named.extend(files.iter().cloned());
            // A re-export: the file imported from may itself import the name from elsewhere.
            for file in files {
                for (inner, inner_files) in workspace.imports(file).iter() {
                    if names_it(inner, name) || is_glob(inner) {
                        visible.named.extend(inner_files.iter().cloned());
                    }
                }
            }
        } else {
            // Globs, includes, whole modules (usable as qualifiers), Java/TS class imports.
            visible.scoped.extend(files.iter().cloned());
        }
    }
    visible.named.sort();
    visible.named.dedup();
    visible.scoped.sort();
    visible.scoped.dedup();
    visible
}

fn names_it(import: &Import, name: &str) -> bool {
    import.names.iter().any(|imported| simple_name(imported) == name) || import.alias.as_deref() == Some(name)
}

fn is_glob(import: &Import) -> bool {
    import.names.iter().any(|name| name == "*")
}

/// The name a call uses may be an alias: `use a::load as load_a` → `load`, or a re-export's
/// alias one file away (`export { applyDiscount as discount } from "./discount"`).
fn unalias(workspace: &dyn Workspace, path: &RepoPath, callee: &str) -> String {
    let original = |import: &Import| {
        import
            .names
            .first()
            .filter(|name| !matches!(name.as_str(), "*" | "default"))
            .map(|name| simple_name(name).to_owned())
    };
    let imports = workspace.imports(path);
    for (import, _) in imports.iter() {
        if import.alias.as_deref() == Some(callee)
            && let Some(name) = original(import)
        {
            return name;
        }
    }
    for (import, files) in imports.iter() {
        if !names_it(import, callee) {
            continue;
        }
        for file in files {
            for (inner, _) in workspace.imports(file).iter() {
                if inner.alias.as_deref() == Some(callee)
                    && let Some(name) = original(inner)
                {
                    return name;
                }
            }
        }
    }
    callee.to_owned()
}

/// The names `path` may use for a definition called `name`: the name itself, import aliases
/// of it, and aliases a re-export one file away gave it.
pub fn local_names(workspace: &dyn Workspace, path: &RepoPath, name: &str) -> Vec<String> {
    let mut names = vec![name.to_owned()];
    for (import, files) in workspace.imports(path).iter() {
        if let Some(alias) = &import.alias
            && import.names.iter().any(|imported| simple_name(imported) == name)
        {
            names.push(alias.clone());
        }
        for file in files {
            for (inner, _) in workspace.imports(file).iter() {
                if let Some(alias) = &inner.alias
                    && inner.names.iter().any(|imported| simple_name(imported) == name)
                    && import.names.iter().any(|imported| imported == alias)
                {
                    names.push(alias.clone());
                }
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

const SELF_WORDS: &[&str] = &["self", "this", "Self", "cls", "self.__class__"];

/// The definitions `site` (in `path`, of `lang`) may call, each with a confidence, best
/// first. Empty when the callee is not defined in the workspace.
pub fn resolve_call(
    workspace: &dyn Workspace,
    path: &RepoPath,
    lang: Lang,
    site: &CallSite,
) -> Vec<(SymbolRef, Confidence)> {
    let callee = site.callee.trim_end_matches('!');
    if callee == "super" && site.qualifier.is_none() && site.receiver.is_none() && lang != Lang::Python {
        // `super(...)` in a constructor (TypeScript, Java): the parent's constructor.
        return parent_constructor(workspace, lang, site);
    }
    let name = unalias(workspace, path, callee);
    let candidates: Vec<SymbolRef> = workspace
        .named(&name)
        .iter()
        .filter(|candidate| candidate.is_callable() && family(candidate.lang) == family(lang))
        .cloned()
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let head = site.qualifier.as_deref().or(site.receiver.as_deref());
    let resolved = match head {
        None => plain_call(workspace, path, lang, site, &name, candidates),
        Some(head) if head == "super()" || head == "super" => {
            let own = enclosing_types(site.container.as_deref());
            inherited(workspace, &own, &candidates, Confidence::Exact)
        }
        Some(head) if SELF_WORDS.contains(&head) => {
            let own = enclosing_types(site.container.as_deref());
            let direct: Vec<SymbolRef> = candidates
                .iter()
                .filter(|candidate| candidate.owner().is_some_and(|owner| own.iter().any(|own| own == owner)))
                .cloned()
                .collect();
            if let Some(best) = prefer_file(&direct, path) {
                return vec![(best, Confidence::Exact)];
            }
            inherited(workspace, &own, &candidates, Confidence::Scoped)
        }
        Some(head) => qualified_call(workspace, path, lang, site, head, &name, candidates),
    };
    resolved
        .into_iter()
        .map(|(symbol, confidence)| (constructor_of(workspace, symbol), confidence))
        .map(|(symbol, confidence)| (definition_of(workspace, symbol), confidence))
        .collect()
}

/// A class called (`Item(…)`, `new Cart()`) runs its constructor when it declares one
/// (`__init__`, `constructor`; Java's and C++'s share the class's name and are found as such).
fn constructor_of(workspace: &dyn Workspace, symbol: SymbolRef) -> SymbolRef {
    if !matches!(symbol.kind, SymbolKind::Class | SymbolKind::Struct) {
        return symbol;
    }
    let name = match symbol.lang {
        Lang::Python => "__init__",
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => "constructor",
        _ => return symbol,
    };
    workspace
        .named(name)
        .iter()
        .find(|candidate| candidate.path == symbol.path && candidate.owner() == Some(symbol.name.as_str()))
        .cloned()
        .unwrap_or(symbol)
}

/// A C/C++ prototype in a header stands for the function's definition: the one in a source
/// file (not `static` elsewhere) when there is exactly one.
fn definition_of(workspace: &dyn Workspace, symbol: SymbolRef) -> SymbolRef {
    if !matches!(symbol.lang, Lang::C | Lang::Cpp) || !is_header(&symbol.path) {
        return symbol;
    }
    let bodies: Vec<SymbolRef> = workspace
        .named(&symbol.name)
        .iter()
        .filter(|candidate| {
            family(candidate.lang) == family(symbol.lang)
                && !is_header(&candidate.path)
                && candidate.container == symbol.container
                && !candidate.signature.starts_with("static ")
        })
        .cloned()
        .collect();
    match <[SymbolRef; 1]>::try_from(bodies) {
        Ok([body]) => body,
        Err(_) => symbol,
    }
}

/// A C/C++ header, by extension.
pub fn is_header(path: &RepoPath) -> bool {
    let name = path.file_name();
    [".h", ".hh", ".hpp", ".hxx"].iter().any(|extension| name.ends_with(extension))
}

/// The constructor of the enclosing class's parent (`super(...)`).
fn parent_constructor(workspace: &dyn Workspace, lang: Lang, site: &CallSite) -> Vec<(SymbolRef, Confidence)> {
    let own = enclosing_types(site.container.as_deref());
    for name in &own {
        for relation in workspace.types().supertypes_of(name) {
            if !matches!(relation.kind, loupe_syntax::RelationKind::Extends) {
                continue;
            }
            let parent = relation.supertype.as_str();
            let constructor_name = match lang {
                Lang::TypeScript | Lang::Tsx | Lang::JavaScript => "constructor",
                Lang::Python => "__init__",
                _ => parent,
            };
            let found: Vec<SymbolRef> = workspace
                .named(constructor_name)
                .iter()
                .filter(|candidate| {
                    family(candidate.lang) == family(lang)
                        && candidate.owner() == Some(parent)
                        && (candidate.kind == SymbolKind::Constructor || constructor_name != parent)
                })
                .cloned()
                .collect();
            if let [one] = found.as_slice() {
                return vec![(one.clone(), Confidence::Exact)];
            }
            if !found.is_empty() {
                return name_only(found);
            }
        }
    }
    Vec::new()
}

/// The candidate in `path` if there is one, else the only candidate.
fn prefer_file(candidates: &[SymbolRef], path: &RepoPath) -> Option<SymbolRef> {
    let local: Vec<&SymbolRef> = candidates.iter().filter(|candidate| &candidate.path == path).collect();
    match (local.as_slice(), candidates) {
        ([one], _) => Some((*one).clone()),
        ([], [one]) => Some(one.clone()),
        _ => None,
    }
}

/// The simple names of the types around a call: for a container `Parser.parse` (a method)
/// that is `Parser`; every segment but the last, innermost first.
fn enclosing_types(container: Option<&str>) -> Vec<String> {
    let Some(container) = container else { return Vec::new() };
    let segments: Vec<&str> = container.split("::").flat_map(|part| part.split('.')).collect();
    let mut types: Vec<String> = segments.iter().rev().map(|segment| (*segment).to_owned()).collect();
    // The last segment is usually the method itself, but a call directly in a class body
    // (or a Go method, whose container is its receiver type) has the type last.
    types.dedup();
    types
}

/// Methods of the supertypes (transitively, 5 levels) of `own`.
fn inherited(
    workspace: &dyn Workspace,
    own: &[String],
    candidates: &[SymbolRef],
    confidence: Confidence,
) -> Vec<(SymbolRef, Confidence)> {
    let mut frontier: Vec<String> = own.to_vec();
    let mut seen: Vec<String> = own.to_vec();
    for _ in 0..5 {
        let mut next = Vec::new();
        for name in &frontier {
            for relation in workspace.types().supertypes_of(name) {
                if !seen.contains(&relation.supertype) {
                    seen.push(relation.supertype.clone());
                    next.push(relation.supertype.clone());
                }
            }
        }
        let found: Vec<SymbolRef> = candidates
            .iter()
            .filter(|candidate| candidate.owner().is_some_and(|owner| next.iter().any(|name| name == owner)))
            .cloned()
            .collect();
        if !found.is_empty() {
            let confidence = if found.len() == 1 { confidence } else { Confidence::NameOnly };
            return found.into_iter().map(|candidate| (candidate, confidence)).collect();
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Vec::new()
}

fn plain_call(
    workspace: &dyn Workspace,
    path: &RepoPath,
    lang: Lang,
    site: &CallSite,
    name: &str,
    candidates: Vec<SymbolRef>,
) -> Vec<(SymbolRef, Confidence)> {
    // In the file: a free function, or a method of the enclosing type (`helper()` in Java).
    let own = enclosing_types(site.container.as_deref());
    let local: Vec<&SymbolRef> = candidates
        .iter()
        .filter(|candidate| &candidate.path == path)
        .filter(|candidate| match candidate.owner() {
            None => true,
            Some(owner) => own.iter().any(|own| own == owner) || candidate.kind == SymbolKind::Constructor,
        })
        .collect();
    if let Some(best) = best_of(&local) {
        return vec![(best, Confidence::Exact)];
    }
    let visible = visibility(workspace, path, name);
    let named: Vec<&SymbolRef> =
        candidates.iter().filter(|candidate| visible.named.contains(&candidate.path)).collect();
    if let Some(best) = best_of(&named) {
        return vec![(best, Confidence::Exact)];
    }
    let scoped: Vec<&SymbolRef> = candidates
        .iter()
        .filter(|candidate| visible.scoped.contains(&candidate.path))
        .filter(|candidate| candidate.container.is_none() || candidate.kind == SymbolKind::Constructor)
        .filter(|candidate| !is_declaration_only(candidate))
        .collect();
    if let [one] = scoped.as_slice() {
        return vec![((*one).clone(), Confidence::Scoped)];
    }
    if matches!(lang, Lang::C | Lang::Cpp) {
        // A prototype in an included header names a function defined in some `.c` file: the
        // one definition that is not `static` elsewhere.
        let external: Vec<&SymbolRef> = candidates
            .iter()
            .filter(|candidate| &candidate.path != path && !candidate.signature.starts_with("static "))
            .filter(|candidate| !is_declaration_only(candidate))
            .collect();
        if let [one] = external.as_slice() {
            return vec![((*one).clone(), Confidence::Scoped)];
        }
    }
    let free: Vec<SymbolRef> = candidates
        .into_iter()
        .filter(|candidate| candidate.container.is_none() || candidate.kind == SymbolKind::Constructor)
        .filter(|candidate| !is_declaration_only(candidate))
        .filter(|candidate| !(matches!(lang, Lang::C | Lang::Cpp) && candidate.signature.starts_with("static ")))
        .collect();
    name_only(free)
}

/// A C/C++ prototype (a function declared without its body).
fn is_declaration_only(candidate: &SymbolRef) -> bool {
    loupe_syntax::is_prototype(&candidate.signature)
}

/// A constructor, or the class itself, or the single candidate.
fn best_of(candidates: &[&SymbolRef]) -> Option<SymbolRef> {
    match candidates {
        [] => None,
        [one] => Some((*one).clone()),
        many => {
            // A class and its constructor: the constructor is what runs.
            let constructors: Vec<&&SymbolRef> =
                many.iter().filter(|candidate| candidate.kind == SymbolKind::Constructor).collect();
            if let [one] = constructors.as_slice() {
                return Some((**one).clone());
            }
            let bodies: Vec<&&SymbolRef> = many.iter().filter(|candidate| !is_declaration_only(candidate)).collect();
            if let [one] = bodies.as_slice() { Some((**one).clone()) } else { None }
        }
    }
}

/// At most 5 name-only guesses; more than that is noise.
fn name_only(candidates: Vec<SymbolRef>) -> Vec<(SymbolRef, Confidence)> {
    if candidates.len() > 5 {
        return Vec::new();
    }
    candidates.into_iter().map(|candidate| (candidate, Confidence::NameOnly)).collect()
}

/// The type a parameter of the function around `site` is declared with, when `head` is that
/// parameter's name and the declaration names one type (`app: Flask`, `s: &shapes::Square`,
/// `cart: Cart | None`, `s *Server`, `Config config`): its last segment, read from the
/// function's signature. `None` for anything else (an untyped or a generic parameter).
fn declared_type(
    workspace: &dyn Workspace,
    path: &RepoPath,
    lang: Lang,
    site: &CallSite,
    head: &str,
) -> Option<String> {
    if head.is_empty() || !head.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return None;
    }
    let container = site.container.as_deref()?;
    let last = container.rsplit(['.', ':']).next().unwrap_or(container);
    let named = workspace.named(last);
    let function = named.iter().find(|symbol| &symbol.path == path && symbol.qualified() == container)?;
    parameter_type(&function.signature, head, lang)
}

/// Wrappers whose value has the wrapped type's methods (`Optional[Flask]`, `Box<Config>`): the
/// declared type is their argument's.
const TRANSPARENT: &[&str] = &["Optional", "Box", "Rc", "Arc", "Annotated", "Final", "ClassVar", "Readonly", "Partial"];

/// Capitalised names that are containers or language types, not a type of the workspace whose
/// methods a call could mean.
const NOT_A_TYPE: &[&str] = &[
    "Union", "List", "Dict", "Set", "Tuple", "Type", "Sequence", "Iterable", "Iterator", "Mapping", "Callable", "Any",
    "None", "Self", "Option", "Vec", "RefCell", "Cell", "Mutex", "Result", "Promise", "Array", "Record", "String",
    "Object",
];

/// The type a declaration names at its outside: through `Optional[…]`, `Box<…>`, `&`, `*`,
/// `mut`, `const`, quotes and a union with `None`; `None` for a container (`dict[str, T]`,
/// `Vec<T>`), a union of types or a lower-case (built-in) type.
fn outer_type(declaration: &str) -> Option<String> {
    let parts: Vec<&str> = split_top_level_on(declaration, '|')
        .into_iter()
        .map(|part| part.trim().trim_matches(['"', '\'']).trim())
        .filter(|part| !matches!(*part, "None" | "null" | "undefined" | ""))
        .collect();
    let [mut part] = parts[..] else { return None };
    loop {
        let stripped = part
            .trim_start_matches(['&', '*'])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("final ")
            .trim_start_matches("readonly ")
            .trim_start_matches("dyn ")
            .trim_start_matches("impl ")
            .trim_start();
        let stripped = match stripped.strip_prefix('\'') {
            // A Rust lifetime: `&'a Config`.
            Some(rest) => rest.split_once(char::is_whitespace).map_or(rest, |(_, rest)| rest).trim_start(),
            None => stripped,
        };
        if stripped == part {
            break;
        }
        part = stripped;
    }
    let head_end =
        part.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':')).unwrap_or(part.len());
    let head = part[..head_end].trim_end_matches([':', '.']);
    let last = head.rsplit(['.', ':']).next().unwrap_or(head);
    let rest = part[head_end..].trim_start();
    if TRANSPARENT.contains(&last) && (rest.starts_with('[') || rest.starts_with('<')) {
        let inner = &rest[1..rest.rfind([']', '>']).unwrap_or(rest.len())];
        return outer_type(split_top_level(inner).first().copied().unwrap_or(""));
    }
    let capitalised = last.starts_with(|c: char| c.is_ascii_uppercase());
    (capitalised && !NOT_A_TYPE.contains(&last) && !TRANSPARENT.contains(&last)).then(|| last.to_owned())
}

/// `name`'s declared type in a signature's parameter lists (every parenthesised group: a Go
/// receiver is one): `name: T` (Python, TypeScript, Rust, Kotlin), `name T` / `name *T` (Go),
/// `T name` (Java, C#, C++), as `outer_type` reads the declaration.
pub fn parameter_type(signature: &str, name: &str, lang: Lang) -> Option<String> {
    let mut groups = Vec::new();
    let mut depth = 0usize;
    let mut start = None;
    for (at, c) in signature.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = Some(at + 1);
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    groups.extend(start.take().map(|from| &signature[from..at]));
                }
            }
            _ => {}
        }
    }
    for group in groups {
        for parameter in split_top_level(group) {
            let parameter = parameter.trim();
            let declaration = match lang {
                Lang::Go => {
                    let (own, rest) = parameter.split_once(char::is_whitespace)?;
                    (own == name).then_some(rest)
                }
                Lang::Java | Lang::CSharp | Lang::C | Lang::Cpp => {
                    let own = parameter.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                    (own == name).then(|| &parameter[..parameter.len() - own.len()])
                }
                _ => parameter.split_once(':').and_then(|(own, rest)| {
                    let own = own.trim().trim_start_matches(['*', '&']);
                    let own = own.rsplit(char::is_whitespace).next().unwrap_or(own);
                    (own == name).then(|| rest.split_once('=').map_or(rest, |(annotation, _)| annotation))
                }),
            };
            let Some(declaration) = declaration else { continue };
            return outer_type(declaration);
        }
    }
    None
}

/// How many positional arguments a function takes: at least `min`, at most `max` (`None`:
/// any number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arity {
    pub min: usize,
    pub max: Option<usize>,
}

impl Arity {
    pub fn accepts(self, count: usize) -> bool {
        count >= self.min && self.max.is_none_or(|max| count <= max)
    }
}

/// The positional arity a signature declares, where the language makes it decidable from the
/// signature alone: Python (defaults optional, `*args` any number; a required keyword-only
/// parameter makes it undecidable) and Rust; the receiver (`self`, `cls`, `&self`) is not
/// counted for a method. `None` for other languages and signatures it cannot read.
pub fn arity(signature: &str, lang: Lang, method: bool) -> Option<Arity> {
    if !matches!(lang, Lang::Python | Lang::Rust) {
        return None;
    }
    let open = signature.find('(')?;
    let mut depth = 0usize;
    let mut close = None;
    for (at, c) in signature[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + at);
                    break;
                }
            }
            _ => {}
        }
    }
    let inside = &signature[open + 1..close?];
    let mut parameters: Vec<&str> =
        split_top_level(inside).into_iter().map(str::trim).filter(|parameter| !parameter.is_empty()).collect();
    let receiver = |parameter: &str| {
        let name = parameter.split(':').next().unwrap_or("").trim().trim_start_matches('&').trim();
        let name = name.strip_prefix("mut ").unwrap_or(name).trim();
        matches!(name, "self" | "cls" | "'_ self") || name.ends_with(" self")
    };
    if method && parameters.first().is_some_and(|first| receiver(first)) {
        parameters.remove(0);
    }
    let (mut min, mut max, mut keyword_only) = (0, Some(0usize), false);
    for parameter in parameters {
        if lang == Lang::Rust {
            min += 1;
            max = max.map(|max| max + 1);
            continue;
        }
        match parameter {
            "/" => continue,
            "*" => keyword_only = true,
            _ if parameter.starts_with("**") => {}
            _ if parameter.starts_with('*') => {
                max = None;
                keyword_only = true;
            }
            _ if keyword_only => {
                if !parameter.contains('=') {
                    return None;
                }
            }
            _ if parameter.contains('=') => max = max.map(|max| max + 1),
            _ => {
                min += 1;
                max = max.map(|max| max + 1);
            }
        }
    }
    Some(Arity { min, max })
}

/// The number of arguments of the call whose argument list starts `text` (at its `(`), when
/// they are all positional: `None` for a keyword argument, a splat (`*args`, `..`), an
/// unclosed list or one that is not there.
pub fn positional_arguments(text: &str) -> Option<usize> {
    let text = text.trim_start();
    if !text.starts_with('(') {
        return None;
    }
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let (mut arguments, mut from): (Vec<&str>, usize) = (Vec::new(), 1);
    for (at, c) in text.char_indices() {
        if let Some(open) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == open => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ',' if depth == 1 => {
                arguments.push(&text[from..at]);
                from = at + 1;
            }
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    arguments.push(&text[from..at]);
                    let arguments: Vec<&str> = arguments.into_iter().map(str::trim).filter(|a| !a.is_empty()).collect();
                    let plain = arguments.iter().all(|argument| {
                        !argument.starts_with('*') && !argument.starts_with("..") && !is_keyword_argument(argument)
                    });
                    return plain.then_some(arguments.len());
                }
            }
            _ => {}
        }
    }
    None
}

/// `name=value` at the top of an argument (not `==`, `<=`, `>=`, `!=`).
fn is_keyword_argument(argument: &str) -> bool {
    let Some(at) = argument.find('=') else { return false };
    let name = &argument[..at];
    !argument[at + 1..].starts_with('=')
        && !name.is_empty()
        && name.trim().chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `text` split at its commas outside brackets.
fn split_top_level(text: &str) -> Vec<&str> {
    split_top_level_on(text, ',')
}

/// `text` split at `separator` outside brackets.
fn split_top_level_on(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            c if c == separator && depth <= 0 => {
                parts.push(&text[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
}

fn qualified_call(
    workspace: &dyn Workspace,
    path: &RepoPath,
    lang: Lang,
    site: &CallSite,
    head: &str,
    name: &str,
    candidates: Vec<SymbolRef>,
) -> Vec<(SymbolRef, Confidence)> {
    // `Config().load()`, `new Cart().total()`: a method of a new instance of that type.
    let head = match head.strip_prefix("new ").unwrap_or(head).strip_suffix(')').and_then(|h| h.split_once('(')) {
        Some((name, _))
            if name
                .rsplit(['.', ':'])
                .next()
                .is_some_and(|last| last.starts_with(|c: char| c.is_ascii_uppercase()))
                && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$')) =>
        {
            name
        }
        _ => head,
    };
    // `app.route()` in `def f(app: Flask)`: a method of the parameter's declared type.
    let declared = declared_type(workspace, path, lang, site, head);
    let head = declared.as_deref().unwrap_or(head);
    let segments: Vec<&str> = head.split("::").flat_map(|part| part.split('.')).filter(|s| !s.is_empty()).collect();
    let first = segments.first().copied().unwrap_or(head);
    // `Rectangle::new` after `use shapes::Rect as Rectangle` is `Rect::new`.
    let last = unalias(workspace, path, segments.last().copied().unwrap_or(head));
    let last = last.as_str();
    // A module qualifier: an import whose alias or last module segment is the head's first
    // segment (`m.f` after `import pkg.mod as m`, `store.New` after importing `…/store`,
    // `config::load` after `use crate::config`).
    let mut module_files: Vec<RepoPath> = Vec::new();
    for (import, files) in workspace.imports(path).iter() {
        let module_last = import.module.rsplit(['/', '.', ':']).find(|part| !part.is_empty()).unwrap_or("");
        let binds = import.alias.as_deref() == Some(first)
            || module_last == first
            || import.names.iter().any(|imported| simple_name(imported) == first);
        if binds {
            module_files.extend(files.iter().cloned());
        }
    }
    // `flask.abort()` where `flask/__init__.py` has `from .helpers import abort`: a module
    // re-exports what it imports by name (or glob), one hop.
    let reexported: Vec<RepoPath> = module_files
        .iter()
        .flat_map(|file| {
            workspace
                .imports(file)
                .iter()
                .filter(|(import, _)| {
                    import.names.iter().any(|imported| imported == "*" || simple_name(imported) == name)
                })
                .flat_map(|(_, files)| files.iter().cloned())
                .collect::<Vec<_>>()
        })
        .collect();
    module_files.extend(reexported);
    let is_type_head = last.starts_with(|c: char| c.is_ascii_uppercase());
    if !module_files.is_empty() {
        let in_module: Vec<&SymbolRef> = candidates
            .iter()
            .filter(|candidate| module_files.contains(&candidate.path))
            .filter(|candidate| {
                candidate.container.is_none()
                    || candidate.owner() == Some(last)
                    || candidate.kind == SymbolKind::Constructor
            })
            .collect();
        if let Some(best) = best_of(&in_module) {
            return vec![(best, Confidence::Exact)];
        }
    }
    if is_type_head {
        // `Config::load`, `Parser.parse`, `Util.helper`: a member of a type of that name.
        let members: Vec<SymbolRef> =
            candidates.iter().filter(|candidate| candidate.owner() == Some(last)).cloned().collect();
        let seen = visibility(workspace, path, last).seen_from(path, &members);
        if let Some(best) = best_of(&seen) {
            return vec![(best, Confidence::Exact)];
        }
        if let [one] = members.as_slice() {
            return vec![(one.clone(), Confidence::Scoped)];
        }
        if !members.is_empty() {
            return name_only(members);
        }
        // A type head whose member is inherited: `Child.helper()` defined on `Base`.
        let inherited = inherited(workspace, &[last.to_owned()], &candidates, Confidence::Scoped);
        if !inherited.is_empty() {
            return inherited;
        }
        // `String.format(…)`: a type the workspace does not define.
        let defined =
            workspace.named(last).iter().any(|symbol| symbol.is_type() && family(symbol.lang) == family(lang));
        if !defined {
            return Vec::new();
        }
    }
    // A receiver whose type the syntax does not say: methods of that name the file can see,
    // but not the calling method itself (`self.items.get()` inside `get` is another object's).
    let caller = site.container.as_deref();
    let methods: Vec<SymbolRef> = candidates
        .into_iter()
        .filter(|candidate| candidate.container.is_some())
        .filter(|candidate| !(&candidate.path == path && Some(candidate.qualified().as_str()) == caller))
        .collect();
    let seen = visibility(workspace, path, name).seen_from(path, &methods);
    // Only a receiver named after the type (`item.total()` on an `Item`) makes the match
    // more than a name: `row.get()` is as likely a dictionary's.
    let word: String = head
        .rsplit(['.', ':', '>'])
        .next()
        .unwrap_or(head)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    let named_after = |candidate: &SymbolRef| {
        candidate.owner().is_some_and(|owner| {
            let owner = owner.to_lowercase();
            word.len() >= 3 && (word.contains(&owner) || owner.contains(&word))
        })
    };
    if let [one] = seen.as_slice()
        && named_after(one)
    {
        return vec![((*one).clone(), Confidence::Scoped)];
    }
    let after: Vec<&SymbolRef> = methods.iter().filter(|candidate| named_after(candidate)).collect();
    if let [one] = after.as_slice() {
        return vec![((*one).clone(), Confidence::Scoped)];
    }
    name_only(methods)
}

/// How sure it is that a use of `target`'s name in `path` means `target`, from what `path`
/// can see; `None` when the file has its own definition of that name (the use means that).
pub fn reference_confidence(
    workspace: &dyn Workspace,
    path: &RepoPath,
    lang: Lang,
    target: &SymbolRef,
    own_definitions: &[Definition],
) -> Option<Confidence> {
    if family(lang) != family(target.lang) {
        return None;
    }
    if &target.path == path {
        return Some(Confidence::Exact);
    }
    let shadowed = own_definitions.iter().any(|definition| {
        definition.name == target.name
            && definition.container.as_deref().map(simple_name) == target.owner()
            && !matches!(definition.kind, SymbolKind::Impl)
    });
    if shadowed {
        return None;
    }
    let visible = visibility(workspace, path, &target.name);
    if visible.named.contains(&target.path) {
        return Some(Confidence::Exact);
    }
    if let Some(owner) = target.owner() {
        let owner_visible = visibility(workspace, path, owner);
        if owner_visible.named.contains(&target.path) {
            return Some(Confidence::Scoped);
        }
    }
    if visible.scoped.contains(&target.path) {
        return Some(Confidence::Scoped);
    }
    Some(Confidence::NameOnly)
}

#[cfg(test)]
mod parameter_type_tests {
    use super::{Arity, arity, parameter_type, positional_arguments};

    #[test]
    fn arity_is_read_where_the_language_decides_it() {
        let any = |min| Some(Arity { min, max: None });
        let range = |min, max| Some(Arity { min, max: Some(max) });
        let cases = [
            ("def f(a, b=1, *args, **kw)", Lang::Python, false, any(1)),
            ("def load(self, path, silent: bool = False)", Lang::Python, true, range(1, 2)),
            ("def f(a, *, key)", Lang::Python, false, None),
            ("def f(a, *, key=None)", Lang::Python, false, range(1, 1)),
            ("def f(a, /, b)", Lang::Python, false, range(2, 2)),
            ("pub fn area(&self, scale: u32, f: impl Fn(u32, u32) -> u32) -> u32", Lang::Rust, true, range(2, 2)),
            ("fn new() -> Self", Lang::Rust, false, range(0, 0)),
            ("function f(a, b)", Lang::JavaScript, false, None),
        ];
        for (signature, lang, method, expected) in cases {
            assert_eq!(arity(signature, lang, method), expected, "{signature}");
        }
        assert_eq!(positional_arguments("(a, f(b, c), \"x, y\")"), Some(3));
        assert_eq!(positional_arguments("()"), Some(0));
        assert_eq!(positional_arguments("(a, key=1)"), None);
        assert_eq!(positional_arguments("(a == b, c)"), Some(2));
        assert_eq!(positional_arguments("(*args)"), None);
        assert_eq!(positional_arguments(" = 3"), None);
    }
    use loupe_syntax::Lang;

    #[test]
    fn a_parameters_declared_type_is_read_from_the_signature() {
        let cases = [
            ("def f(self, app: Flask, x=1)", "app", Lang::Python, Some("Flask")),
            ("def f(app: t.Optional[\"Flask\"] = None)", "app", Lang::Python, Some("Flask")),
            ("def f(app: Flask | None, other)", "other", Lang::Python, None),
            ("def f(items: dict[str, Config])", "items", Lang::Python, None),
            ("def f(items: List[Config])", "items", Lang::Python, None),
            ("def f(a: A | B)", "a", Lang::Python, None),
            ("fn f(c: &'a mut Config)", "c", Lang::Rust, Some("Config")),
            ("def f(a: A, b: B)", "b", Lang::Python, Some("B")),
            ("def f(a: str)", "a", Lang::Python, None),
            ("pub fn area_of(square: &shapes::Square) -> u32", "square", Lang::Rust, Some("Square")),
            ("fn f(mut cfg: Box<Config>)", "cfg", Lang::Rust, Some("Config")),
            ("fn f(map: HashMap<Key, Value>)", "map", Lang::Rust, Some("HashMap")),
            ("fn f(v: Vec<Config>)", "v", Lang::Rust, None),
            ("total(cart: Cart): number", "cart", Lang::TypeScript, Some("Cart")),
            ("constructor(private readonly store: Store)", "store", Lang::TypeScript, Some("Store")),
            ("func (s *Server) Handle(w http.ResponseWriter, r *http.Request)", "s", Lang::Go, Some("Server")),
            ("func (s *Server) Handle(w http.ResponseWriter, r *http.Request)", "r", Lang::Go, Some("Request")),
            ("public void run(final Config config, int n)", "config", Lang::Java, Some("Config")),
            ("void draw(const Shape& shape)", "shape", Lang::Cpp, Some("Shape")),
        ];
        for (signature, name, lang, expected) in cases {
            assert_eq!(parameter_type(signature, name, lang).as_deref(), expected, "{signature} / {name}");
        }
    }
}
