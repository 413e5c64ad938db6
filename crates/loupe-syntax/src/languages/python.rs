//! Python: def / async def (methods in classes, `__init__` as constructor, `@property` as
//! property), classes with their bases, module-level assignments (constants when ALL_CAPS),
//! class attributes as fields, `type` aliases; `import` / `from … import` with relative
//! levels and aliases; calls; docstrings.
//!
//! Must not treat comments as docs: Python documents with docstrings.

use tree_sitter::Node;

use super::shared::{children, named_children};
use crate::facts::{Import, ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Python,
    language: || tree_sitter_python::LANGUAGE.into(),
    references: &["identifier"],
    comments: &["comment"],
    attributes: &[],
    handled: &[
        "function_definition",
        "block",
        "class_definition",
        "expression_statement",
        "type_alias_statement",
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "call",
        "parameters",
        "lambda_parameters",
        "for_statement",
        "for_in_clause",
        "as_pattern_target",
        "keyword_argument",
    ],
    opaque: &[],
    decorations: &["decorator"],
    not_references: &["self", "cls"],
    doc_style: DocStyle::None,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "function_definition" => function(w, node),
        "block" if skippable_body(w, node) => return Flow::Skip,
        "class_definition" => class(w, node),
        "expression_statement" => assignment(w, node),
        "type_alias_statement" => {
            let Some(left) = node.child_by_field_name("left") else { return Flow::Descend };
            let name = named_children(left).into_iter().find(|n| n.kind() == "identifier").unwrap_or(left);
            let def = w.def(SymbolKind::TypeAlias, name);
            w.define(def);
        }
        "import_statement" => import_statement(w, node),
        "import_from_statement" | "future_import_statement" => from_import(w, node),
        "call" => {
            let Some(function) = node.child_by_field_name("function") else { return Flow::Descend };
            match function.kind() {
                "identifier" => {
                    let callee = w.text(function);
                    w.call(function, callee, None, None);
                }
                "attribute" => {
                    let (Some(object), Some(name)) =
                        (function.child_by_field_name("object"), function.child_by_field_name("attribute"))
                    else {
                        return Flow::Descend;
                    };
                    w.member_call(name, object);
                }
                _ => {}
            }
        }
        "parameters" | "lambda_parameters" => {
            for parameter in named_children(node) {
                suppress_parameter(w, parameter);
            }
        }
        "for_statement" | "for_in_clause" => {
            if let Some(left) = node.child_by_field_name("left") {
                suppress_targets(w, left, 0);
            }
        }
        "as_pattern_target" => suppress_targets(w, node, 0),
        // `f(name=value)`: `name` names a parameter of the callee, it is not a variable here.
        "keyword_argument" => {
            if let Some(name) = node.child_by_field_name("name") {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// Without uses, a function body holds nothing the walk keeps (its assignments are locals)
/// unless it defines a function or class, imports, or declares a type alias: a body whose
/// text can hold none of those is not walked (a fifth of a cold build's CPU on django went to
/// walking trees, most of it inside bodies). The test is by text and errs towards walking.
fn skippable_body(w: &Walker<'_>, body: Node<'_>) -> bool {
    if w.collects_uses() || w.ancestor_kind(1) != "function_definition" || body.has_error() {
        return false;
    }
    !holds_declaration_words(w.text(body).as_bytes())
}

/// Whether `text` (a function body) may define a function or class, import, or declare a type
/// alias: it holds `def`, `class` or `import` as a word, or a line starting with `type`
/// (`content_type = …` does not count). The index's parse leaves out bodies without them
/// (`skim/python.rs`).
pub(crate) fn holds_declaration_words(text: &[u8]) -> bool {
    let word = |byte: Option<&u8>| byte.is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_');
    let holds_word = |needle: &[u8]| {
        memchr::memmem::find_iter(text, needle).any(|at| {
            !word(at.checked_sub(1).and_then(|before| text.get(before))) && !word(text.get(at + needle.len()))
        })
    };
    holds_word(b"def")
        || holds_word(b"class")
        || holds_word(b"import")
        || memchr::memmem::find_iter(text, b"type")
            .any(|at| text[..at].iter().rev().take_while(|&&byte| byte != b'\n').all(|byte| byte.is_ascii_whitespace()))
}

fn function<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let decorated = w.ancestor_kind(1) == "decorated_definition";
    let in_class = w.scope_kind() == Some(SymbolKind::Class);
    let kind = if !in_class {
        SymbolKind::Function
    } else if w.text(name) == "__init__" {
        SymbolKind::Constructor
    } else if decorated && is_property(w, w.ancestor(1)) {
        SymbolKind::Property
    } else {
        SymbolKind::Method
    };
    let body = node.child_by_field_name("body");
    let mut def = w.def(kind, name);
    def.outer = if decorated { w.depth - 1 } else { w.depth };
    def.signature_node = Some(node);
    // The signature ends at the body's `:`: the index's parse may have left out the start of the
    // body (`skim/python.rs`), so the body's first node can be lines further on.
    let mut cursor = node.walk();
    let colon = node.children(&mut cursor).filter(|child| child.kind() == ":").last();
    def.body = colon.map(|colon| colon.end_byte()).or(body.map(|body| body.start_byte()));
    def.head_end = head_end(node, body);
    def.doc = body.and_then(|body| docstring(w, body));
    w.define(def);
}

fn is_property(w: &Walker<'_>, decorated: Option<Node<'_>>) -> bool {
    let Some(decorated) = decorated else { return false };
    children(decorated).iter().filter(|child| child.kind() == "decorator").any(|decorator| {
        let text = w.text(*decorator).trim_start_matches('@').trim();
        matches!(text, "property" | "cached_property" | "functools.cached_property" | "abstractproperty")
    })
}

fn class<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let class_name = w.text(name);
    if let Some(bases) = node.child_by_field_name("superclasses") {
        for base in named_children(bases) {
            let base_node = match base.kind() {
                "subscript" => base.child_by_field_name("value").unwrap_or(base),
                "identifier" | "attribute" => base,
                _ => continue,
            };
            let supertype = w.text(base_node);
            w.relation(class_name, supertype, RelationKind::Extends, base);
        }
    }
    let decorated = w.ancestor_kind(1) == "decorated_definition";
    let body = node.child_by_field_name("body");
    let mut def = w.def(SymbolKind::Class, name);
    def.outer = if decorated { w.depth - 1 } else { w.depth };
    def.signature_node = Some(node);
    def.body = body.map(|body| body.start_byte());
    def.head_end = head_end(node, body);
    def.doc = body.and_then(|body| docstring(w, body));
    w.define(def);
}

/// Where a body replacement starts: after the docstring, else after the header's `:`.
fn head_end(node: Node<'_>, body: Option<Node<'_>>) -> Option<usize> {
    let first = body.and_then(|body| body.named_child(0));
    if let Some(first) = first
        && first.kind() == "expression_statement"
        && first.named_child_count() == 1
        && first.named_child(0).is_some_and(|string| string.kind() == "string")
    {
        return Some(first.end_byte());
    }
    let mut cursor = node.walk();
    let colon = node.children(&mut cursor).filter(|child| child.kind() == ":").last();
    colon.map(|colon| colon.end_byte())
}

/// The docstring of a body: its first statement when that is a string.
fn docstring(w: &Walker<'_>, body: Node<'_>) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" || first.named_child_count() != 1 {
        return None;
    }
    let doc = text::clean_docstring(w.text(string));
    if doc.is_empty() { None } else { Some(doc) }
}

/// `NAME = …` at module level (constant or variable), `name = …` / `name: T = …` in a class
/// body (field); inside functions, the assigned names are locals, not uses.
fn assignment<'a>(w: &mut Walker<'a>, statement: Node<'a>) {
    let Some(assignment) = statement.named_child(0) else { return };
    if assignment.kind() != "assignment" {
        return;
    }
    let Some(left) = assignment.child_by_field_name("left") else { return };
    if w.in_function() {
        suppress_targets(w, left, 0);
        return;
    }
    let in_class = w.scope_kind() == Some(SymbolKind::Class);
    if w.container().is_some() && !in_class {
        return;
    }
    let targets = match left.kind() {
        "identifier" => vec![left],
        "pattern_list" | "tuple_pattern" => {
            named_children(left).into_iter().filter(|target| target.kind() == "identifier").collect()
        }
        _ => return,
    };
    let annotation = assignment.child_by_field_name("type").map(|t| w.text(t));
    for target in targets {
        let name = w.text(target);
        let kind = if in_class {
            SymbolKind::Field
        } else if matches!(annotation, Some("TypeAlias" | "typing.TypeAlias")) {
            SymbolKind::TypeAlias
        } else if text::is_constant_case(name) {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        let mut def = w.def(kind, target);
        def.signature_node = Some(assignment);
        def.opens_scope = false;
        w.define(def);
    }
}

fn suppress_parameter(w: &mut Walker<'_>, parameter: Node<'_>) {
    match parameter.kind() {
        "identifier" => w.suppress(parameter),
        "default_parameter" | "typed_default_parameter" => {
            if let Some(name) = parameter.child_by_field_name("name") {
                w.suppress(name);
            }
        }
        "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
            if let Some(name) = parameter.named_child(0) {
                suppress_parameter(w, name);
            }
        }
        "tuple_pattern" => suppress_targets(w, parameter, 0),
        _ => {}
    }
}

fn suppress_targets(w: &mut Walker<'_>, target: Node<'_>, depth: usize) {
    if depth > 4 {
        return;
    }
    match target.kind() {
        "identifier" => w.suppress(target),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "as_pattern_target" | "list_splat_pattern" => {
            for child in named_children(target) {
                suppress_targets(w, child, depth + 1);
            }
        }
        _ => {}
    }
}

fn import_statement<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let line = node.start_position().row + 1;
    for name in named_children(node) {
        let (module, alias) = match name.kind() {
            "dotted_name" => (w.text(name), None),
            "aliased_import" => {
                let module = name.child_by_field_name("name").map_or("", |n| w.text(n));
                let alias = name.child_by_field_name("alias");
                if let Some(alias) = alias {
                    w.suppress(alias);
                }
                (module, alias.map(|alias| w.text(alias).to_owned()))
            }
            _ => continue,
        };
        w.import(Import {
            kind: ImportKind::Import,
            module: module.to_owned(),
            names: Vec::new(),
            alias,
            line,
            relative_level: 0,
            is_system: false,
        });
    }
}

fn from_import<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let line = node.start_position().row + 1;
    let (module, relative_level) = match node.child_by_field_name("module_name") {
        Some(module) if module.kind() == "relative_import" => {
            let mut level = 0;
            let mut name = "";
            for part in named_children(module) {
                match part.kind() {
                    "import_prefix" => level = w.text(part).bytes().filter(|b| *b == b'.').count(),
                    _ => name = w.text(part),
                }
            }
            (name, level)
        }
        Some(module) => (w.text(module), 0),
        None if node.kind() == "future_import_statement" => ("__future__", 0),
        None => ("", 0),
    };
    let module_start = node.child_by_field_name("module_name").map(|m| m.start_byte());
    let mut plain = Vec::new();
    let mut aliased = Vec::new();
    for child in named_children(node) {
        if Some(child.start_byte()) == module_start {
            continue;
        }
        match child.kind() {
            "dotted_name" => plain.push(w.text(child).to_owned()),
            "wildcard_import" => plain.push("*".to_owned()),
            "aliased_import" => {
                let name = child.child_by_field_name("name").map_or("", |n| w.text(n));
                let alias = child.child_by_field_name("alias");
                if let Some(alias) = alias {
                    w.suppress(alias);
                }
                aliased.push((name.to_owned(), alias.map(|alias| w.text(alias).to_owned())));
            }
            _ => {}
        }
    }
    let import = |names: Vec<String>, alias: Option<String>| Import {
        kind: ImportKind::From,
        module: module.to_owned(),
        names,
        alias,
        line,
        relative_level,
        is_system: false,
    };
    if !plain.is_empty() || aliased.is_empty() {
        w.import(import(plain, None));
    }
    for (name, alias) in aliased {
        w.import(import(vec![name], alias));
    }
}
