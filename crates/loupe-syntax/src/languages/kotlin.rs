//! Kotlin: classes, interfaces, enum classes and entries, objects and companion objects,
//! functions and methods, primary (`val`/`var` parameters as properties) and secondary
//! constructors, properties, top-level `val`/`var`/`const val`, type aliases; imports with
//! wildcards and aliases; calls; supertypes (`Base()` extends, a bare type implements).
//!
//! Must not guess more than the delegation syntax says about a supertype.

use tree_sitter::Node;

use super::shared::{children, named_children};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Kotlin,
    language: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    references: &["identifier"],
    comments: &["line_comment", "block_comment"],
    attributes: &[],
    handled: &[
        "class_declaration",
        "object_declaration",
        "companion_object",
        "function_declaration",
        "secondary_constructor",
        "class_parameter",
        "property_declaration",
        "enum_entry",
        "type_alias",
        "import",
        "call_expression",
        "parameter",
        "lambda_parameters",
        "package_header",
    ],
    opaque: &[],
    decorations: &["annotation"],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "class_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let modifiers = children(node).into_iter().find(|c| c.kind() == "modifiers").map_or("", |m| w.text(m));
            let kind = if children(node).iter().any(|c| c.kind() == "interface") {
                SymbolKind::Interface
            } else if modifiers.split_whitespace().any(|m| m == "enum") {
                SymbolKind::Enum
            } else {
                SymbolKind::Class
            };
            supertypes(w, node, w.text(name), kind == SymbolKind::Interface);
            let mut def = w.def(kind, name);
            def.body = body_start(node);
            w.define(def);
        }
        "object_declaration" | "companion_object" => {
            let name = node
                .child_by_field_name("name")
                .or_else(|| named_children(node).into_iter().find(|c| c.kind() == "identifier"));
            let mut def = match name {
                Some(name) => w.def(SymbolKind::Class, name),
                None => {
                    let mut def = w.def(SymbolKind::Class, node);
                    def.name = "Companion";
                    def
                }
            };
            def.body = body_start(node);
            let object_name = def.name;
            supertypes(w, node, object_name, false);
            w.define(def);
        }
        "function_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let kind = if w.in_type() { SymbolKind::Method } else { SymbolKind::Function };
            let mut def = w.def(kind, name);
            def.body = children(node).into_iter().find(|c| c.kind() == "function_body").map(|b| b.start_byte());
            w.define(def);
        }
        "secondary_constructor" => {
            let mut def = w.def(SymbolKind::Constructor, node);
            def.name = "constructor";
            def.body = children(node).into_iter().find(|c| c.kind() == "block").map(|b| b.start_byte());
            w.define(def);
        }
        "class_parameter" => {
            let Some(name) = named_children(node).into_iter().find(|c| c.kind() == "identifier") else {
                return Flow::Descend;
            };
            if children(node).iter().any(|c| matches!(c.kind(), "val" | "var")) {
                let mut def = w.def(SymbolKind::Property, name);
                def.opens_scope = false;
                w.define(def);
            } else {
                w.suppress(name);
            }
        }
        "property_declaration" => {
            let Some(variable) = children(node).into_iter().find(|c| c.kind() == "variable_declaration") else {
                return Flow::Descend;
            };
            let Some(name) = named_children(variable).into_iter().find(|c| c.kind() == "identifier") else {
                return Flow::Descend;
            };
            if w.in_function() {
                w.suppress(name);
                return Flow::Descend;
            }
            let modifiers = children(node).into_iter().find(|c| c.kind() == "modifiers").map_or("", |m| w.text(m));
            let kind = if modifiers.split_whitespace().any(|m| m == "const") {
                SymbolKind::Constant
            } else if w.in_type() {
                SymbolKind::Property
            } else {
                SymbolKind::Variable
            };
            let mut def = w.def(kind, name);
            def.opens_scope = false;
            def.body =
                children(node).into_iter().find(|c| matches!(c.kind(), "getter" | "setter")).map(|g| g.start_byte());
            w.define(def);
        }
        "enum_entry" => {
            let Some(name) = named_children(node).into_iter().find(|c| c.kind() == "identifier") else {
                return Flow::Descend;
            };
            let mut def = w.def(SymbolKind::EnumMember, name);
            def.opens_scope = false;
            w.define(def);
        }
        "type_alias" => {
            let Some(name) = node.child_by_field_name("type") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::TypeAlias, name);
            def.opens_scope = false;
            w.define(def);
        }
        "import" => {
            let Some(path) = named_children(node).into_iter().find(|c| c.kind() == "qualified_identifier") else {
                return Flow::Descend;
            };
            let path_text = w.text(path);
            let wildcard = children(node).iter().any(|c| c.kind() == "*");
            let (module, name) =
                if wildcard { (path_text, "*") } else { path_text.rsplit_once('.').unwrap_or(("", path_text)) };
            let mut import = w.simple_import(ImportKind::Import, module);
            import.names.push(name.to_owned());
            if let Some(alias) = named_children(node).into_iter().find(|c| c.kind() == "identifier") {
                import.alias = Some(w.text(alias).to_owned());
                w.suppress(alias);
            }
            w.import(import);
        }
        "call_expression" => {
            let Some(function) = node.named_child(0) else { return Flow::Descend };
            match function.kind() {
                "identifier" => {
                    let callee = w.text(function);
                    w.call(function, callee, None, None);
                }
                "navigation_expression" => {
                    let parts = named_children(function);
                    if let [object, .., name] = parts.as_slice()
                        && name.kind() == "identifier"
                    {
                        w.member_call(*name, *object);
                    }
                }
                _ => {}
            }
        }
        "parameter" => {
            if let Some(name) = named_children(node).into_iter().find(|c| c.kind() == "identifier") {
                w.suppress(name);
            }
        }
        "lambda_parameters" => {
            for parameter in named_children(node) {
                let name =
                    if parameter.kind() == "variable_declaration" { parameter.named_child(0) } else { Some(parameter) };
                if let Some(name) = name.filter(|n| n.kind() == "identifier") {
                    w.suppress(name);
                }
            }
        }
        // `package a.b.c` declares, it does not use.
        "package_header" => return Flow::Skip,
        _ => {}
    }
    Flow::Descend
}

fn body_start(node: Node<'_>) -> Option<usize> {
    children(node).into_iter().find(|c| matches!(c.kind(), "class_body" | "enum_class_body")).map(|b| b.start_byte())
}

fn supertypes<'a>(w: &mut Walker<'a>, node: Node<'a>, subtype: &str, is_interface: bool) {
    let Some(specifiers) = children(node).into_iter().find(|c| c.kind() == "delegation_specifiers") else { return };
    for specifier in named_children(specifiers) {
        let Some(inner) = specifier.named_child(0) else { continue };
        let (type_node, relation) = match inner.kind() {
            "constructor_invocation" => (inner.named_child(0).unwrap_or(inner), RelationKind::Extends),
            _ if is_interface => (inner, RelationKind::Extends),
            _ => (inner, RelationKind::Implements),
        };
        let supertype = text::strip_generics(w.text(type_node));
        w.relation(subtype, supertype, relation, type_node);
    }
}
