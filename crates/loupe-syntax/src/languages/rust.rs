//! Rust: items (fn, struct, enum and variants, union, trait, impl, mod, const, static, type,
//! macro_rules, fields), `use` trees, `mod x;`, `extern crate`, calls (paths, methods, macros,
//! and calls written inside macro arguments), `impl Trait for Type` and supertraits.
//!
//! Must not guess beyond the syntax: macro bodies are token trees, so calls inside them are
//! recognised only in the `name(...)`, `a.name(...)` and `a::name(...)` shapes.

use tree_sitter::Node;

use super::shared::{children, field_start, named_children};
use crate::facts::{Import, ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Rust,
    language: || tree_sitter_rust::LANGUAGE.into(),
    references: &["identifier", "type_identifier", "field_identifier", "shorthand_field_identifier"],
    comments: &["line_comment", "block_comment"],
    attributes: &["attribute_item"],
    handled: &[
        "function_item",
        "function_signature_item",
        "struct_item",
        "union_item",
        "enum_item",
        "enum_variant",
        "field_declaration",
        "trait_item",
        "impl_item",
        "mod_item",
        "const_item",
        "static_item",
        "type_item",
        "associated_type",
        "macro_definition",
        "use_declaration",
        "extern_crate_declaration",
        "call_expression",
        "macro_invocation",
        "token_tree",
        "let_declaration",
        "parameter",
        "closure_parameters",
        "for_expression",
        "type_parameter",
        "lifetime",
        "use_as_clause",
    ],
    opaque: &["string_literal", "raw_string_literal", "char_literal"],
    decorations: &[],
    not_references: &[],
    doc_style: DocStyle::RustOuter,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "function_item" | "function_signature_item" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let kind = match w.scope_kind() {
                Some(SymbolKind::Impl | SymbolKind::Trait) => SymbolKind::Method,
                _ => SymbolKind::Function,
            };
            let mut def = w.def(kind, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "struct_item" => define_type(w, node, SymbolKind::Struct),
        "union_item" => define_type(w, node, SymbolKind::Union),
        "enum_item" => define_type(w, node, SymbolKind::Enum),
        "enum_variant" => define_type(w, node, SymbolKind::EnumMember),
        "field_declaration" => {
            if let Some(name) = node.child_by_field_name("name") {
                let def = w.def(SymbolKind::Field, name);
                w.define(def);
            }
        }
        "trait_item" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let trait_name = w.text(name);
            if let Some(bounds) = node.child_by_field_name("bounds") {
                for bound in named_children(bounds) {
                    if let Some(supertype) = bound_name(w, bound) {
                        w.relation(trait_name, supertype, RelationKind::Extends, bound);
                    }
                }
            }
            let mut def = w.def(SymbolKind::Trait, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "impl_item" => {
            let Some(type_node) = node.child_by_field_name("type") else { return Flow::Descend };
            let name_node = type_base(type_node);
            let type_name = text::last_segment(w.text(name_node));
            if let Some(trait_node) = node.child_by_field_name("trait") {
                let supertype = text::strip_generics(w.text(trait_node));
                w.relation(type_name, supertype, RelationKind::Impl, trait_node);
            }
            let mut def = w.def(SymbolKind::Impl, name_node);
            def.name = type_name;
            def.body = field_start(node, "body");
            w.define(def);
        }
        "mod_item" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let body = node.child_by_field_name("body");
            if body.is_none() {
                // `mod x;` inside `mod a { }` is the file `a/x.rs` under the declaring module.
                let modules = w.enclosing_modules();
                let path = join_path(&modules.join("::"), w.text(name));
                let mut import = w.simple_import(ImportKind::Mod, &path);
                import.relative_level = modules.len();
                w.import(import);
            }
            let mut def = w.def(SymbolKind::Module, name);
            def.body = body.map(|body| body.start_byte());
            def.doc = body.and_then(|body| inner_docs(w, body));
            w.define(def);
        }
        "const_item" => define_value(w, node, SymbolKind::Constant),
        "static_item" => define_value(w, node, SymbolKind::Variable),
        "type_item" | "associated_type" => define_value(w, node, SymbolKind::TypeAlias),
        "macro_definition" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Macro, name);
            def.body = children(node)
                .into_iter()
                .find(|child| matches!(child.kind(), "{" | "(" | "["))
                .map(|b| b.start_byte());
            w.define(def);
        }
        "use_declaration" => use_declaration(w, node),
        "extern_crate_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut import = w.simple_import(ImportKind::Use, w.text(name));
            if let Some(alias) = node.child_by_field_name("alias") {
                import.alias = Some(w.text(alias).to_owned());
                w.suppress(alias);
            }
            w.import(import);
        }
        "call_expression" => {
            if let Some(function) = node.child_by_field_name("function") {
                call_target(w, function);
            }
        }
        "macro_invocation" => {
            let Some(path) = node.child_by_field_name("macro") else { return Flow::Descend };
            let (name, qualifier) = match path.kind() {
                "scoped_identifier" => (
                    path.child_by_field_name("name").unwrap_or(path),
                    path.child_by_field_name("path").map(|q| w.text(q).to_owned()),
                ),
                _ => (path, None),
            };
            let callee = format!("{}!", w.text(name));
            w.call(name, &callee, qualifier, None);
        }
        "token_tree" => token_tree_calls(w, node),
        "let_declaration" | "parameter" | "for_expression" => {
            if let Some(pattern) = node.child_by_field_name("pattern") {
                suppress_pattern(w, pattern, 0);
            }
        }
        "type_parameter" => {
            if let Some(name) = node.child_by_field_name("name") {
                w.suppress(name);
            }
        }
        // `'a` is a lifetime, not a use of an identifier `a`.
        "lifetime" => return Flow::Skip,
        "use_as_clause" => {
            if let Some(alias) = node.child_by_field_name("alias") {
                w.suppress(alias);
            }
        }
        "closure_parameters" => {
            for child in named_children(node) {
                suppress_pattern(w, child, 0);
            }
        }
        _ => {}
    }
    Flow::Descend
}

fn define_type<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let mut def = w.def(kind, name);
    // A tuple struct or variant keeps its `(u8, u8)` in the signature; braces are a body.
    def.body = node
        .child_by_field_name("body")
        .filter(|body| body.kind() != "ordered_field_declaration_list")
        .map(|body| body.start_byte());
    w.define(def);
}

fn define_value<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let def = w.def(kind, name);
    w.define(def);
}

/// The node naming the type of an `impl`: `Foo` in `impl<T> Trait for a::Foo<T>`.
fn type_base(mut node: Node<'_>) -> Node<'_> {
    for _ in 0..8 {
        let next = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
            "scoped_type_identifier" => node.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => break,
        }
    }
    node
}

/// The name of a trait bound (`Display`, `fmt::Debug`), none for lifetimes and `?Sized`.
fn bound_name<'a>(w: &Walker<'a>, bound: Node<'a>) -> Option<&'a str> {
    match bound.kind() {
        "type_identifier" | "scoped_type_identifier" | "generic_type" => Some(text::strip_generics(w.text(bound))),
        "higher_ranked_trait_bound" => bound.child_by_field_name("type").and_then(|inner| bound_name(w, inner)),
        _ => None,
    }
}

/// `//!` and `/*! */` comments at the start of a module body.
fn inner_docs(w: &Walker<'_>, body: Node<'_>) -> Option<String> {
    let mut parts = Vec::new();
    for child in named_children(body) {
        if !matches!(child.kind(), "line_comment" | "block_comment") {
            break;
        }
        let raw = w.text(child);
        if raw.starts_with("//!") || raw.starts_with("/*!") {
            parts.push(text::clean_comment(raw));
        }
    }
    if parts.is_empty() { None } else { Some(parts.join("\n")) }
}

fn call_target<'a>(w: &mut Walker<'a>, function: Node<'a>) {
    match function.kind() {
        "identifier" => {
            let callee = w.text(function);
            w.call(function, callee, None, None);
        }
        "scoped_identifier" => {
            let Some(name) = function.child_by_field_name("name") else { return };
            let qualifier = function.child_by_field_name("path").map(|path| w.text(path).to_owned());
            let callee = w.text(name);
            w.call(name, callee, qualifier, None);
        }
        "field_expression" => {
            let Some(field) = function.child_by_field_name("field") else { return };
            let receiver =
                function.child_by_field_name("value").map(|value| text::cut(w.text(value), text::RECEIVER_CHARS));
            let callee = w.text(field);
            w.call(field, callee, None, receiver);
        }
        "generic_function" => {
            if let Some(inner) = function.child_by_field_name("function") {
                call_target(w, inner);
            }
        }
        _ => {}
    }
}

/// Calls written inside macro arguments, which the grammar leaves as token trees:
/// `name(...)`, `recv.name(...)`, `path::name(...)` and nested `name!(...)`.
fn token_tree_calls<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    if !w.collects_uses() || w.ancestor_kind(1) == "macro_rule" || node.child_count() < 3 {
        return;
    }
    let tokens = children(node);
    for (index, token) in tokens.iter().enumerate() {
        if token.kind() != "identifier" {
            continue;
        }
        let Some(next) = tokens.get(index + 1) else { continue };
        let (is_macro, args) = match next.kind() {
            "!" => (true, tokens.get(index + 2)),
            _ => (false, Some(next)),
        };
        let Some(args) = args else { continue };
        if args.kind() != "token_tree" || !w.text(*args).starts_with('(') {
            continue;
        }
        let previous = index.checked_sub(1).map(|i| tokens[i]);
        let name = w.text(*token);
        let callee = if is_macro { format!("{name}!") } else { name.to_owned() };
        match previous.map(|p| p.kind()) {
            Some(".") => {
                let start = chain_start(&tokens, index - 1, ".");
                let receiver = w.src.get(tokens[start].start_byte()..tokens[index - 1].start_byte()).unwrap_or("");
                if receiver.is_empty() {
                    continue;
                }
                w.call(*token, &callee, None, Some(text::cut(receiver, text::RECEIVER_CHARS)));
            }
            Some("::") => {
                let start = chain_start(&tokens, index - 1, "::");
                let qualifier = w.src.get(tokens[start].start_byte()..tokens[index - 1].start_byte()).unwrap_or("");
                w.call(*token, &callee, Some(qualifier.to_owned()), None);
            }
            // `fn name(` and `struct Name(` are declarations written in macro input.
            Some("fn" | "struct" | "enum" | "union" | "macro_rules!" | "$") => {}
            _ => w.call(*token, &callee, None, None),
        }
    }
}

/// The first token of a `a.b.c` or `a::b::c` chain ending with the separator at `sep_index`.
fn chain_start(tokens: &[Node<'_>], sep_index: usize, separator: &str) -> usize {
    let mut start = sep_index;
    while start >= 1 {
        let operand = tokens[start - 1];
        if !matches!(operand.kind(), "identifier" | "self" | "integer_literal" | "super" | "crate") {
            break;
        }
        start -= 1;
        if start >= 1 && tokens[start - 1].kind() == separator {
            start -= 1;
        } else {
            break;
        }
    }
    start
}

/// Marks the names a pattern binds (`x`, `(a, b)`, `mut x`, `Some(x)`) as definitions of
/// locals rather than uses.
fn suppress_pattern(w: &mut Walker<'_>, pattern: Node<'_>, depth: usize) {
    if depth > 4 {
        return;
    }
    match pattern.kind() {
        "identifier" => w.suppress(pattern),
        "tuple_pattern" | "mut_pattern" | "ref_pattern" | "reference_pattern" | "slice_pattern"
        | "captured_pattern" => {
            for child in named_children(pattern) {
                suppress_pattern(w, child, depth + 1);
            }
        }
        "tuple_struct_pattern" => {
            let type_start = pattern.child_by_field_name("type").map(|t| t.start_byte());
            for child in named_children(pattern) {
                if Some(child.start_byte()) != type_start {
                    suppress_pattern(w, child, depth + 1);
                }
            }
        }
        "parameter" => {
            if let Some(inner) = pattern.child_by_field_name("pattern") {
                suppress_pattern(w, inner, depth + 1);
            }
        }
        _ => {}
    }
}

/// `use` trees, flattened: one `Import` per module with its plain names, one per renamed name.
fn use_declaration<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(argument) = node.child_by_field_name("argument") else { return };
    let kind = if children(node).iter().any(|child| child.kind() == "visibility_modifier") {
        ImportKind::Export
    } else {
        ImportKind::Use
    };
    let line = node.start_position().row + 1;
    // `self` and `super` inside `mod tests { }` start from the inline module, not the file's.
    let relative_level = w.enclosing_modules().len();
    let mut out = Vec::new();
    flatten_use(w, argument, "", &mut out, 0);
    for (module, names, alias) in out {
        w.import(Import { kind, module, names, alias, line, relative_level, is_system: false });
    }
}

type UseItem = (String, Vec<String>, Option<String>);

fn join_path(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (_, true) => prefix.to_owned(),
        _ => format!("{prefix}::{path}"),
    }
}

/// Splits `a::b::c` (with `prefix` before it) into module `prefix::a::b` and name `c`.
fn split_path(prefix: &str, path: &str) -> (String, String) {
    match path.rsplit_once("::") {
        Some((module, name)) => (join_path(prefix, module), name.to_owned()),
        None => (prefix.to_owned(), path.to_owned()),
    }
}

fn flatten_use(w: &Walker<'_>, node: Node<'_>, prefix: &str, out: &mut Vec<UseItem>, depth: usize) {
    if depth > 16 {
        return;
    }
    match node.kind() {
        "use_list" => {
            let mut plain = Vec::new();
            let mut nested = Vec::new();
            for item in named_children(node) {
                match item.kind() {
                    "identifier" | "self" | "super" | "crate" => plain.push(w.text(item).to_owned()),
                    "use_wildcard" if item.named_child_count() == 0 => plain.push("*".to_owned()),
                    _ => flatten_use(w, item, prefix, &mut nested, depth + 1),
                }
            }
            if !plain.is_empty() {
                out.push((prefix.to_owned(), plain, None));
            }
            out.append(&mut nested);
        }
        "scoped_use_list" => {
            let path = node.child_by_field_name("path").map_or("", |path| w.text(path));
            let inner = join_path(prefix, path);
            if let Some(list) = node.child_by_field_name("list") {
                flatten_use(w, list, &inner, out, depth + 1);
            }
        }
        "use_as_clause" => {
            let Some(path) = node.child_by_field_name("path") else { return };
            let (module, name) = split_path(prefix, w.text(path));
            let alias = node.child_by_field_name("alias").map(|alias| w.text(alias).to_owned());
            out.push((module, vec![name], alias));
        }
        "use_wildcard" => {
            let path = named_children(node).first().map_or("", |path| w.text(*path));
            out.push((join_path(prefix, path), vec!["*".to_owned()], None));
        }
        _ => {
            let path = w.text(node);
            if prefix.is_empty() && !path.contains("::") {
                out.push((path.to_owned(), Vec::new(), None));
            } else {
                let (module, name) = split_path(prefix, path);
                out.push((module, vec![name], None));
            }
        }
    }
}
