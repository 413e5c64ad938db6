//! Ruby: modules, classes (`class A < B` extends, `include M` implements), methods and
//! singleton methods, constants, `attr_*` properties; `require`, `require_relative`, `load`;
//! calls (`X.new` is a call of `X`).
//!
//! Must not treat a bare identifier as a call: without arguments or a receiver Ruby cannot
//! tell a local variable from a method call, so only explicit calls are recorded.

use tree_sitter::Node;

use super::shared::{named_children, unquote};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Ruby,
    language: || tree_sitter_ruby::LANGUAGE.into(),
    references: &["identifier", "constant"],
    comments: &["comment"],
    attributes: &[],
    handled: &[
        "module",
        "class",
        "method",
        "singleton_method",
        "assignment",
        "call",
        "method_parameters",
        "lambda_parameters",
        "block_parameters",
    ],
    opaque: &[],
    decorations: &[],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "module" | "class" => {
            let Some(name_node) = node.child_by_field_name("name") else { return Flow::Descend };
            let (scope, name) = split_scope(w, name_node);
            let kind = if node.kind() == "module" { SymbolKind::Module } else { SymbolKind::Class };
            if let Some(superclass) = node.child_by_field_name("superclass")
                && let Some(base) = superclass.named_child(0)
            {
                let supertype = w.text(base);
                w.relation(w.text(name), supertype, RelationKind::Extends, base);
            }
            let mut def = w.def(kind, name);
            def.container = scope;
            // The signature ends with the name or superclass: the body may begin with comments.
            def.body = Some(node.child_by_field_name("superclass").map_or(name_node.end_byte(), |s| s.end_byte()));
            w.define(def);
        }
        "method" | "singleton_method" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let kind = if w.container().is_some() { SymbolKind::Method } else { SymbolKind::Function };
            let end = node.child_by_field_name("parameters").map(|p| p.end_byte()).unwrap_or(name.end_byte());
            let mut def = w.def(kind, name);
            def.body = Some(end);
            w.define(def);
        }
        "assignment" => {
            let Some(left) = node.child_by_field_name("left") else { return Flow::Descend };
            match left.kind() {
                "constant" if !w.in_function() => {
                    let mut def = w.def(SymbolKind::Constant, left);
                    def.opens_scope = false;
                    w.define(def);
                }
                "identifier" => w.suppress(left),
                _ => {}
            }
        }
        "call" => call(w, node),
        "method_parameters" | "lambda_parameters" | "block_parameters" => {
            for parameter in named_children(node) {
                let name = match parameter.kind() {
                    "identifier" => Some(parameter),
                    _ => parameter.child_by_field_name("name"),
                };
                if let Some(name) = name {
                    w.suppress(name);
                }
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// `Outer::Inner` → (`Outer`, `Inner`).
fn split_scope<'a>(w: &Walker<'a>, node: Node<'a>) -> (Option<String>, Node<'a>) {
    if node.kind() != "scope_resolution" {
        return (None, node);
    }
    let scope = node.child_by_field_name("scope").map(|s| w.text(s).replace("::", "."));
    (scope, node.child_by_field_name("name").unwrap_or(node))
}

fn call<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(method) = node.child_by_field_name("method") else { return };
    let name = w.text(method);
    let receiver = node.child_by_field_name("receiver");
    let Some(receiver) = receiver else {
        match name {
            "require" | "require_relative" | "load" => {
                let argument = node.child_by_field_name("arguments").and_then(|a| a.named_child(0));
                if let Some(argument) = argument.filter(|a| a.kind() == "string") {
                    let mut import = w.simple_import(ImportKind::Require, unquote(w.text(argument)));
                    import.relative_level = usize::from(name == "require_relative");
                    w.import(import);
                    return;
                }
            }
            "include" | "prepend" | "extend" if w.in_type() => {
                let subtype = w.scope_name().unwrap_or("").to_owned();
                let modules = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                for module in modules.into_iter().filter(|m| matches!(m.kind(), "constant" | "scope_resolution")) {
                    let supertype = w.text(module);
                    w.relation(&subtype, supertype, RelationKind::Implements, module);
                }
            }
            "attr_reader" | "attr_writer" | "attr_accessor" if w.in_type() => {
                let symbols = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                for symbol in symbols.into_iter().filter(|s| s.kind() == "simple_symbol") {
                    let mut def = w.def(SymbolKind::Property, symbol);
                    def.name = w.text(symbol).trim_start_matches(':');
                    def.span_node = Some(node);
                    def.signature_node = Some(node);
                    def.opens_scope = false;
                    w.define(def);
                }
            }
            _ => {}
        }
        w.call(method, name, None, None);
        return;
    };
    if name == "new" && matches!(receiver.kind(), "constant" | "scope_resolution") {
        let (scope, class) = split_scope(w, receiver);
        let callee = w.text(class);
        w.call(class, callee, scope, None);
        return;
    }
    if receiver.kind() == "scope_resolution" || receiver.kind() == "constant" {
        let qualifier = w.text(receiver).replace("::", ".");
        w.call(method, name, Some(qualifier), None);
        return;
    }
    let receiver_text = text::cut(w.text(receiver), text::RECEIVER_CHARS);
    w.call(method, name, None, Some(receiver_text));
}
