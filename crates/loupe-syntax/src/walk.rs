//! The one pass over a syntax tree that every language shares.
//!
//! Owns the walk (a `TreeCursor` in document order, each node classified through a per-language
//! table indexed by kind id), the stack of enclosing definitions (containers, depth), the
//! comments and attributes seen before each node (doc comments, spans), the names that are
//! definitions rather than uses, and the shaping of facts (signatures, docs, positions).
//! Must not know any grammar's node names: those live in the language modules, which receive
//! the nodes their table marks as handled.
//!
//! Why one walk rather than tree-sitter queries: on sqlite3.c (9 MB) a single `QueryCursor`
//! pass costs about twice a bare cursor walk (~400 ms against ~210 ms, the parse being
//! ~700 ms), and containers, doc comments and `export`/decorator/template wrappers need the
//! ancestors and previous siblings of a match, which the walk has for free while
//! `Node::parent` and `Node::prev_sibling` rescan from the root (quadratic on large files).

use std::collections::{BTreeSet, HashSet};

use tree_sitter::{Language, Node, Tree};

use crate::Extract;
use crate::facts::{
    CallSite, Definition, FileFacts, Import, ImportKind, Lang, Reference, RelationKind, Span, SymbolKind, TypeRelation,
};
use crate::text;

/// What the walk does with a node of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Nothing but bookkeeping; children are visited.
    Plain,
    /// An identifier whose occurrences are uses unless a handler said otherwise.
    Reference,
    /// A comment: a doc comment candidate for the next sibling.
    Comment,
    /// An attribute or decorator standing before the next sibling (Rust `#[...]`, TS method
    /// decorators): part of that sibling's span.
    Attribute,
    /// Passed to the language's `visit`.
    Handled,
    /// A literal whose insides hold no names (strings, numbers): not descended into.
    Opaque,
}

/// Which comments count as documentation when they stand right above a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocStyle {
    /// Any comment block.
    AnyComment,
    /// Rust: `///`, `/** */` only (`//!` is handled by the Rust module for modules).
    RustOuter,
    /// Python: comments are never docs (docstrings are).
    None,
}

/// The language-specific half of the walk.
pub(crate) struct Rules {
    pub(crate) lang: Lang,
    pub(crate) language: fn() -> Language,
    pub(crate) references: &'static [&'static str],
    pub(crate) comments: &'static [&'static str],
    pub(crate) attributes: &'static [&'static str],
    pub(crate) handled: &'static [&'static str],
    /// Literals not descended into.
    pub(crate) opaque: &'static [&'static str],
    /// Kinds skipped at the start of a signature (annotations, decorators, attributes);
    /// `modifiers` nodes are looked into.
    pub(crate) decorations: &'static [&'static str],
    /// Identifiers that are never reported as references (`self` in Python, Go's predeclared
    /// types).
    pub(crate) not_references: &'static [&'static str],
    pub(crate) doc_style: DocStyle,
    pub(crate) visit: for<'a> fn(&mut Walker<'a>, Node<'a>) -> Flow,
}

/// Whether the walk goes into a handled node's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Descend,
    Skip,
}

/// A language's rules with its kind table, built once.
pub(crate) struct Compiled {
    pub(crate) rules: &'static Rules,
    pub(crate) language: Language,
    table: Vec<Class>,
    /// Kind names by kind id (`Node::kind` measures and validates the C string each call).
    names: Vec<Box<str>>,
    not_references: HashSet<&'static str>,
}

impl Compiled {
    pub(crate) fn new(rules: &'static Rules) -> Compiled {
        let language = (rules.language)();
        let mut table = vec![Class::Plain; language.node_kind_count() + 1];
        let mut mark = |kinds: &[&str], class: Class| {
            for kind in kinds {
                for named in [true, false] {
                    let id = language.id_for_node_kind(kind, named) as usize;
                    if id != 0 && id < table.len() {
                        table[id] = class;
                    }
                }
            }
        };
        mark(rules.references, Class::Reference);
        mark(rules.comments, Class::Comment);
        mark(rules.attributes, Class::Attribute);
        mark(rules.opaque, Class::Opaque);
        mark(rules.handled, Class::Handled);
        let not_references = rules.not_references.iter().copied().collect();
        let names = (0..table.len())
            .map(|id| u16::try_from(id).ok().and_then(|id| language.node_kind_for_id(id)).unwrap_or("").into())
            .collect();
        Compiled { rules, language, table, names, not_references }
    }

    fn class(&self, kind_id: u16) -> Class {
        self.table.get(kind_id as usize).copied().unwrap_or(Class::Plain)
    }
}

/// A definition being registered; built with `Walker::def` and adjusted by the handler.
pub(crate) struct Def<'a> {
    pub(crate) kind: SymbolKind,
    pub(crate) name: &'a str,
    /// Where the name is: its line is `name_line`; it is not reported as a reference.
    pub(crate) name_node: Node<'a>,
    /// Depth (in the walk) of the node whose range is the span and whose preceding comments
    /// are the doc: the handled node itself or an ancestor (`export`, decorators, `template`).
    pub(crate) outer: usize,
    /// A node whose rows are the span instead of the outer node's (no doc is looked for).
    pub(crate) span_node: Option<Node<'a>>,
    /// The node the signature is taken from; the outer node when `None`.
    pub(crate) signature_node: Option<Node<'a>>,
    /// The signature ends here (the body's start); the signature node's end when `None`.
    pub(crate) body: Option<usize>,
    /// What a body replacement keeps ends here, when not at `body` (Python: after the `:`, or
    /// after the docstring).
    pub(crate) head_end: Option<usize>,
    /// A scope inside the current container (a Go receiver type, C++ `Foo::` of `Foo::bar`).
    pub(crate) container: Option<String>,
    /// How many of the innermost open scopes this definition is not inside (a C typedef
    /// alias defined next to the struct its handler just opened, a PHP promoted property that
    /// belongs to the class rather than the constructor).
    pub(crate) outside_scopes: usize,
    /// Whether what follows inside the handled node is contained by this definition.
    pub(crate) opens_scope: bool,
    /// The scope lasts to the end of the file (C# and PHP file-scoped namespaces).
    pub(crate) scope_to_end: bool,
    /// A doc found by the handler (Python docstring, Rust `//!`), after any doc comment.
    pub(crate) doc: Option<String>,
    /// A signature the handler composed itself.
    pub(crate) signature: Option<String>,
    /// A function declared without its body (a C/C++ prototype): the signature ends in `;`,
    /// which is how readers tell it from the definition.
    pub(crate) declaration_only: bool,
}

struct Scope {
    depth: usize,
    qualified: String,
    kind: SymbolKind,
}

#[derive(Clone, Copy)]
enum TriviaKind {
    Comment,
    Attribute,
}

#[derive(Clone, Copy)]
struct Trivia {
    kind: TriviaKind,
    start_byte: usize,
    end_byte: usize,
    start_row: usize,
    end_row: usize,
}

/// Per depth of the walk: the comments and attributes since the last other sibling.
#[derive(Default)]
struct Level<'a> {
    /// Trivia since the last non-trivia sibling.
    run: Vec<Trivia>,
    /// Trivia right before the current non-trivia node at this depth.
    current: Vec<Trivia>,
    /// The last non-trivia sibling (its rows are computed only when a doc is looked for).
    previous: Option<Node<'a>>,
    /// The non-trivia sibling before the current one.
    current_previous: Option<Node<'a>>,
}

/// The state of one walk: what has been found and where the walk stands.
pub(crate) struct Walker<'a> {
    pub(crate) src: &'a str,
    pub(crate) lang: Lang,
    compiled: &'a Compiled,
    pub(crate) facts: FileFacts,
    /// Depth of the node being visited (the root is 0).
    pub(crate) depth: usize,
    ancestors: Vec<Node<'a>>,
    levels: Vec<Level<'a>>,
    scopes: Vec<Scope>,
    suppressed: BTreeSet<usize>,
    /// Calls written `a.b.c()` whose `a.b` may be a module or type path rather than a value:
    /// decided after the walk, once the file's imports are known.
    ambiguous_calls: Vec<usize>,
    /// Whether calls and references are collected (`Extract::All`).
    uses: bool,
    /// Whether doc comments are read (all but `Extract::Declarations`).
    docs: bool,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(src: &'a str, compiled: &'a Compiled, extract: Extract) -> Walker<'a> {
        let lang = compiled.rules.lang;
        Walker {
            src,
            lang,
            compiled,
            facts: FileFacts::empty(lang),
            depth: 0,
            ancestors: Vec::with_capacity(64),
            levels: Vec::with_capacity(64),
            scopes: Vec::new(),
            suppressed: BTreeSet::new(),
            ambiguous_calls: Vec::new(),
            uses: extract == Extract::All,
            docs: extract != Extract::Declarations,
        }
    }

    /// Walks the whole tree once and returns the facts.
    pub(crate) fn run(mut self, tree: &'a Tree) -> FileFacts {
        let root = tree.root_node();
        if root.has_error() {
            self.facts.error_nodes = count_errors(root);
        }
        let mut cursor = root.walk();
        self.enter_level(0);
        'walk: loop {
            let node = cursor.node();
            let depth = self.depth;
            while self.scopes.last().is_some_and(|scope| scope.depth >= depth) {
                self.scopes.pop();
            }
            self.ancestors.truncate(depth);
            self.ancestors.push(node);
            let descend = match self.compiled.class(node.kind_id()) {
                Class::Plain => {
                    self.code(depth, node);
                    true
                }
                Class::Reference => {
                    self.code(depth, node);
                    self.reference(node);
                    false
                }
                Class::Comment => {
                    self.trivia(depth, node, TriviaKind::Comment);
                    false
                }
                Class::Attribute => {
                    self.trivia(depth, node, TriviaKind::Attribute);
                    true
                }
                Class::Opaque => {
                    self.code(depth, node);
                    false
                }
                Class::Handled => {
                    self.code(depth, node);
                    (self.compiled.rules.visit)(&mut self, node) == Flow::Descend
                }
            };
            if descend && cursor.goto_first_child() {
                self.depth += 1;
                self.enter_level(self.depth);
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                self.depth -= 1;
            }
        }
        self.finish()
    }

    fn enter_level(&mut self, depth: usize) {
        if self.levels.len() <= depth {
            self.levels.resize_with(depth + 1, Level::default);
        }
        let level = &mut self.levels[depth];
        level.run.clear();
        level.current.clear();
        level.previous = None;
        level.current_previous = None;
    }

    fn code(&mut self, depth: usize, node: Node<'a>) {
        let level = &mut self.levels[depth];
        if !level.run.is_empty() || !level.current.is_empty() {
            std::mem::swap(&mut level.run, &mut level.current);
            level.run.clear();
        }
        level.current_previous = level.previous;
        level.previous = Some(node);
    }

    fn trivia(&mut self, depth: usize, node: Node<'a>, kind: TriviaKind) {
        let trivia = Trivia {
            kind,
            start_byte: node.start_byte(),
            end_byte: node.end_byte(),
            start_row: node.start_position().row,
            end_row: last_row(node),
        };
        self.levels[depth].run.push(trivia);
    }

    fn finish(mut self) -> FileFacts {
        if !self.ambiguous_calls.is_empty() {
            let bound = bound_names(self.lang, &self.facts.imports);
            for index in std::mem::take(&mut self.ambiguous_calls) {
                let call = &mut self.facts.calls[index];
                let Some(receiver) = call.receiver.as_deref() else { continue };
                let first = receiver.split(['.', ':']).next().unwrap_or(receiver);
                let is_path = first.starts_with(|c: char| c.is_ascii_uppercase()) || bound.contains(first);
                if is_path {
                    call.qualifier = call.receiver.take();
                }
            }
        }
        // Calls are recorded outer first (`a(b())` gives `a`, `b`) and macro bodies are
        // scanned before their parameters: put both lists in source order.
        self.facts.calls.sort_by_key(|call| (call.line, call.column));
        self.facts.references.sort_by_key(|reference| (reference.line, reference.column));
        self.facts
    }

    // ----- reading the tree -------------------------------------------------------------

    /// The source text of a node ("" if its range is not valid UTF-8 boundaries).
    pub(crate) fn text(&self, node: Node<'_>) -> &'a str {
        self.src.get(node.start_byte()..node.end_byte()).unwrap_or("")
    }

    /// The kind name of a node.
    pub(crate) fn kind(&self, node: Node<'_>) -> &'a str {
        let compiled: &'a Compiled = self.compiled;
        match compiled.names.get(node.kind_id() as usize) {
            Some(name) => name,
            None if node.is_error() => "ERROR",
            None => "",
        }
    }

    /// The ancestor `up` levels above the visited node (1 = parent).
    pub(crate) fn ancestor(&self, up: usize) -> Option<Node<'a>> {
        self.depth.checked_sub(up).and_then(|depth| self.ancestors.get(depth).copied())
    }

    /// The kind of the ancestor `up` levels above the visited node, "" above the root.
    pub(crate) fn ancestor_kind(&self, up: usize) -> &'a str {
        self.ancestor(up).map_or("", |node| self.kind(node))
    }

    /// The qualified name of the innermost enclosing definition.
    pub(crate) fn container(&self) -> Option<&str> {
        self.scopes.last().map(|scope| scope.qualified.as_str())
    }

    /// The kind of the innermost enclosing definition.
    pub(crate) fn scope_kind(&self) -> Option<SymbolKind> {
        self.scopes.last().map(|scope| scope.kind)
    }

    /// Whether the visited node is inside a function, method or constructor.
    pub(crate) fn in_function(&self) -> bool {
        self.scopes
            .iter()
            .any(|scope| matches!(scope.kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor))
    }

    /// Whether the innermost enclosing definition is a type (class, struct, trait, impl…).
    pub(crate) fn in_type(&self) -> bool {
        matches!(
            self.scope_kind(),
            Some(
                SymbolKind::Class
                    | SymbolKind::Struct
                    | SymbolKind::Union
                    | SymbolKind::Enum
                    | SymbolKind::Interface
                    | SymbolKind::Trait
                    | SymbolKind::Impl
            )
        )
    }

    /// The simple names of the enclosing module definitions, outermost first: the inline
    /// `mod a { mod b { … } }` blocks around a Rust item.
    pub(crate) fn enclosing_modules(&self) -> Vec<&str> {
        let sep = self.lang.separator();
        self.scopes
            .iter()
            .filter(|scope| scope.kind == SymbolKind::Module)
            .map(|scope| scope.qualified.rsplit(sep).next().unwrap_or(&scope.qualified))
            .collect()
    }

    /// The simple name of the innermost enclosing definition (`Config` for `a::Config`).
    pub(crate) fn scope_name(&self) -> Option<&str> {
        let qualified = self.container()?;
        let sep = self.lang.separator();
        Some(qualified.rsplit(sep).next().unwrap_or(qualified))
    }

    // ----- recording facts -------------------------------------------------------------

    /// A definition of `kind` named by `name_node`, for the visited node.
    pub(crate) fn def(&self, kind: SymbolKind, name_node: Node<'a>) -> Def<'a> {
        Def {
            kind,
            name: self.text(name_node),
            name_node,
            outer: self.depth,
            span_node: None,
            signature_node: None,
            body: None,
            head_end: None,
            container: None,
            outside_scopes: 0,
            opens_scope: true,
            scope_to_end: false,
            doc: None,
            signature: None,
            declaration_only: false,
        }
    }

    /// Records a definition; returns its index in `facts.definitions`.
    pub(crate) fn define(&mut self, def: Def<'a>) -> usize {
        let outer_depth = def.outer.min(self.depth);
        let outer = self.ancestors[outer_depth];
        let (comment_doc, span) = match def.span_node {
            Some(node) => (None, Span { start_line: node.start_position().row + 1, end_line: last_row(node) + 1 }),
            None => {
                let (doc, first_row) = self.leading_trivia(outer_depth, outer);
                (doc, Span { start_line: first_row + 1, end_line: last_row(outer) + 1 })
            }
        };
        let end = def.span_node.unwrap_or(outer).end_byte();
        let body = def.head_end.or(def.body).filter(|&start| start <= end).map(|start| (start, end));
        let mut signature = match def.signature {
            Some(signature) => signature,
            None => self.signature(def.signature_node.unwrap_or(outer), def.body),
        };
        if def.declaration_only && !signature.ends_with('…') {
            signature.push(';');
        }
        let doc = match (comment_doc, def.doc) {
            (Some(mut comment), Some(extra)) if !extra.is_empty() => {
                comment.push('\n');
                comment.push_str(&extra);
                Some(comment)
            }
            (comment, extra) => comment.or(extra.filter(|doc| !doc.is_empty())),
        };
        let sep = self.lang.separator();
        let visible = self.scopes.len().saturating_sub(def.outside_scopes);
        let scope = visible.checked_sub(1).map(|index| self.scopes[index].qualified.as_str());
        let container = match (scope, def.container) {
            (Some(scope), Some(extra)) => Some(format!("{scope}{sep}{extra}")),
            (Some(scope), None) => Some(scope.to_owned()),
            (None, extra) => extra,
        };
        self.suppress_name(def.name_node);
        let name = def.name.to_owned();
        let visible = visible.min(self.scopes.len());
        if def.opens_scope {
            let qualified = match &container {
                Some(container) => format!("{container}{sep}{name}"),
                None => name.clone(),
            };
            let depth = if def.scope_to_end { 0 } else { self.depth };
            self.scopes.push(Scope { depth, qualified, kind: def.kind });
        }
        self.facts.definitions.push(Definition {
            name,
            kind: def.kind,
            container,
            signature,
            doc,
            span,
            name_line: def.name_node.start_position().row + 1,
            name_column: def.name_node.start_position().column + 1,
            body,
            depth: visible,
        });
        self.facts.definitions.len() - 1
    }

    /// Marks a definition's name and, for a composite name (`A.B`, `~Foo`, `a\\b`), every
    /// identifier in it as not being uses.
    fn suppress_name(&mut self, name_node: Node<'_>) {
        self.suppressed.insert(name_node.start_byte());
        if name_node.child_count() == 0 || name_node.end_byte() - name_node.start_byte() > 200 {
            return;
        }
        let mut cursor = name_node.walk();
        let mut stack = vec![name_node];
        while let Some(node) = stack.pop() {
            for child in node.named_children(&mut cursor) {
                self.suppressed.insert(child.start_byte());
                stack.push(child);
            }
        }
    }

    /// Marks an identifier as a name being bound (a parameter, a local), not a use.
    pub(crate) fn suppress(&mut self, node: Node<'_>) {
        self.suppressed.insert(node.start_byte());
    }

    /// Whether calls and references are wanted: rules skip the work of finding them if not.
    pub(crate) fn collects_uses(&self) -> bool {
        self.uses
    }

    /// Records a use of an identifier, unless it was suppressed.
    pub(crate) fn reference(&mut self, node: Node<'a>) {
        if !self.uses {
            return;
        }
        let start = node.start_byte();
        while let Some(&first) = self.suppressed.first() {
            if first > start {
                break;
            }
            self.suppressed.pop_first();
            if first == start {
                return;
            }
        }
        let name = self.text(node);
        if name.is_empty() || self.compiled.not_references.contains(name) {
            return;
        }
        let position = node.start_position();
        let container = self.container().map(str::to_owned);
        self.facts.references.push(Reference {
            name: name.to_owned(),
            line: position.row + 1,
            column: position.column + 1,
            container,
        });
    }

    /// Records a call of `callee` whose name is at `name_node`.
    pub(crate) fn call(
        &mut self,
        name_node: Node<'_>,
        callee: &str,
        qualifier: Option<String>,
        receiver: Option<String>,
    ) {
        let position = name_node.start_position();
        self.call_at(position.row, position.column, callee, qualifier, receiver);
    }

    /// Records a call whose name starts at 0-based `row` and byte `column`.
    pub(crate) fn call_at(
        &mut self,
        row: usize,
        column: usize,
        callee: &str,
        qualifier: Option<String>,
        receiver: Option<String>,
    ) {
        if callee.is_empty() || !self.uses {
            return;
        }
        let container = self.container().map(str::to_owned);
        self.facts.calls.push(CallSite {
            callee: callee.to_owned(),
            qualifier: qualifier.filter(|q| !q.is_empty()),
            receiver: receiver.filter(|r| !r.is_empty()),
            line: row + 1,
            column: column + 1,
            container,
        });
    }

    /// Records a use of `name` found in text the grammar does not parse (a macro body).
    pub(crate) fn reference_at(&mut self, row: usize, column: usize, name: &str) {
        if !self.uses {
            return;
        }
        let container = self.container().map(str::to_owned);
        self.facts.references.push(Reference { name: name.to_owned(), line: row + 1, column: column + 1, container });
    }

    /// Records `object.name(...)`: `object` is a receiver, or a qualifier when it is a plain
    /// dotted path starting with an imported name or a capitalised (type) name.
    pub(crate) fn member_call(&mut self, name_node: Node<'_>, object: Node<'_>) {
        let callee = self.text(name_node);
        let object_text = self.text(object);
        let receiver = Some(text::cut(object_text, text::RECEIVER_CHARS));
        let is_plain_path = !object_text.is_empty()
            && object_text.len() <= 200
            && object_text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b':'));
        self.call(name_node, callee, None, receiver);
        if is_plain_path && self.uses {
            self.ambiguous_calls.push(self.facts.calls.len() - 1);
        }
    }

    pub(crate) fn import(&mut self, import: Import) {
        self.facts.imports.push(import);
    }

    /// An import of `module` on the visited node's line, with no names.
    pub(crate) fn simple_import(&self, kind: ImportKind, module: &str) -> Import {
        Import {
            kind,
            module: module.to_owned(),
            names: Vec::new(),
            alias: None,
            line: self.ancestors[self.depth].start_position().row + 1,
            relative_level: 0,
            is_system: false,
        }
    }

    pub(crate) fn relation(&mut self, subtype: &str, supertype: &str, kind: RelationKind, at: Node<'_>) {
        if subtype.is_empty() || supertype.is_empty() {
            return;
        }
        self.facts.type_relations.push(TypeRelation {
            subtype: subtype.to_owned(),
            supertype: supertype.to_owned(),
            kind,
            line: at.start_position().row + 1,
        });
    }

    // ----- shaping -------------------------------------------------------------------------

    /// The doc comment and first row of the comments and attributes right above `outer`.
    fn leading_trivia(&self, depth: usize, outer: Node<'a>) -> (Option<String>, usize) {
        let mut first_row = outer.start_position().row;
        // A node that opens its parent (the first statement of a Ruby body, say) may have its
        // comments before the parent rather than before itself.
        let mut depth = depth;
        while depth > 0
            && self.levels.get(depth).is_some_and(|level| level.current.is_empty() && level.current_previous.is_none())
            && self.ancestors.get(depth - 1).is_some_and(|parent| parent.start_byte() == outer.start_byte())
        {
            depth -= 1;
        }
        let Some(level) = self.levels.get(depth) else { return (None, first_row) };
        if level.current.is_empty() {
            return (None, first_row);
        }
        let previous_row = level.current_previous.map(last_row);
        let mut doc_parts: Vec<&Trivia> = Vec::new();
        for trivia in level.current.iter().rev() {
            if trivia.end_row + 1 < first_row {
                break;
            }
            if previous_row == Some(trivia.start_row) {
                break;
            }
            match trivia.kind {
                TriviaKind::Attribute => {}
                TriviaKind::Comment => {
                    let raw = self.src.get(trivia.start_byte..trivia.end_byte).unwrap_or("");
                    let is_doc = match self.compiled.rules.doc_style {
                        DocStyle::AnyComment => true,
                        DocStyle::RustOuter => is_rust_outer_doc(raw),
                        DocStyle::None => false,
                    };
                    if !is_doc {
                        break;
                    }
                    doc_parts.push(trivia);
                }
            }
            first_row = trivia.start_row;
        }
        // The index's parse reads no doc text: only its rows count.
        if doc_parts.is_empty() || !self.docs {
            return (None, first_row);
        }
        let doc = doc_parts
            .iter()
            .rev()
            .map(|trivia| text::clean_comment(self.src.get(trivia.start_byte..trivia.end_byte).unwrap_or("")))
            .collect::<Vec<_>>()
            .join("\n");
        let doc = doc.trim_matches('\n').to_owned();
        (if doc.is_empty() { None } else { Some(doc) }, first_row)
    }

    fn signature(&self, node: Node<'a>, body: Option<usize>) -> String {
        let start = self.signature_start(node);
        let mut end = body.unwrap_or(node.end_byte()).clamp(start, node.end_byte().max(start));
        // A comment between the head and the body (Python's `def f(): # note`) is not part
        // of the signature.
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if self.compiled.rules.comments.contains(&child.kind())
                && child.start_byte() > start
                && child.start_byte() < end
            {
                end = child.start_byte();
                break;
            }
        }
        text::one_line(self.src.get(start..end).unwrap_or(""))
    }

    /// The first byte of `node` that is not a decoration (annotation, decorator, attribute,
    /// comment).
    fn signature_start(&self, node: Node<'a>) -> usize {
        let rules = self.compiled.rules;
        let skip = |child: Node<'_>| {
            let kind = child.kind();
            rules.decorations.contains(&kind) || rules.comments.contains(&kind)
        };
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if skip(child) {
                continue;
            }
            if child.kind() == "modifiers" {
                let mut inner = child.walk();
                if let Some(first) = child.children(&mut inner).find(|grandchild| !skip(*grandchild)) {
                    return first.start_byte();
                }
                continue;
            }
            return child.start_byte();
        }
        node.start_byte()
    }
}

/// ERROR and MISSING nodes under `root`, visiting only subtrees that contain some.
pub(crate) fn count_errors(root: Node<'_>) -> usize {
    let mut count = 0;
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            count += 1;
        }
        stack.extend(node.children(&mut cursor).filter(|child| child.has_error() || child.is_missing()));
    }
    count
}

/// The last row a node covers: a node ending at column 0 (a trailing newline) ends on the row
/// before.
pub(crate) fn last_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row { end.row - 1 } else { end.row }
}

fn is_rust_outer_doc(raw: &str) -> bool {
    (raw.starts_with("///") && !raw.starts_with("////")) || (raw.starts_with("/**") && !raw.starts_with("/***"))
}

/// Names the file's imports bind, used to tell `module.f()` from `value.f()`.
fn bound_names(lang: Lang, imports: &[Import]) -> HashSet<String> {
    let mut bound = HashSet::new();
    for import in imports {
        if let Some(alias) = &import.alias {
            bound.insert(alias.clone());
            continue;
        }
        if import.names.is_empty() {
            let name = match lang {
                Lang::Go => go_package_name(&import.module),
                Lang::Python => import.module.split('.').next().unwrap_or(""),
                _ => import.module.rsplit(['.', '/', ':', '\\']).next().unwrap_or(""),
            };
            bound.insert(name.to_owned());
        }
        for name in &import.names {
            if name != "*" {
                bound.insert(name.clone());
            }
        }
    }
    bound
}

/// The package name Go code uses for an import path: its last segment, without a major
/// version suffix (`gopkg.in/yaml.v3` → `yaml`, `example.com/mod/v2` → `mod`).
pub(crate) fn go_package_name(path: &str) -> &str {
    let mut segments = path.rsplit('/');
    let mut last = segments.next().unwrap_or(path);
    if last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit()) {
        last = segments.next().unwrap_or(last);
    }
    match last.rsplit_once(".v") {
        Some((name, version)) if version.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => last.strip_prefix("go-").unwrap_or(last),
    }
}
