//! Java: classes, interfaces, enums and constants, records and components, annotation types,
//! methods, constructors, fields (`static final` ones as constants); imports (static and
//! wildcard); method calls and `new`; `extends` / `implements`.
//!
//! Must not resolve names: `Foo.bar()` is a qualifier when `Foo` is capitalised or imported,
//! a receiver otherwise.

use tree_sitter::Node;

use super::shared::{children, field_start, named_children};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Java,
    language: || tree_sitter_java::LANGUAGE.into(),
    references: &["identifier", "type_identifier"],
    comments: &["line_comment", "block_comment"],
    attributes: &[],
    handled: &[
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
        "method_declaration",
        "annotation_type_element_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
        "field_declaration",
        "constant_declaration",
        "enum_constant",
        "import_declaration",
        "package_declaration",
        "method_invocation",
        "explicit_constructor_invocation",
        "object_creation_expression",
        "formal_parameter",
        "spread_parameter",
        "local_variable_declaration",
        "catch_formal_parameter",
        "enhanced_for_statement",
        "lambda_expression",
        "type_parameter",
    ],
    opaque: &["string_literal", "character_literal"],
    decorations: &["marker_annotation", "annotation"],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "class_declaration" => type_declaration(w, node, SymbolKind::Class),
        "interface_declaration" | "annotation_type_declaration" => type_declaration(w, node, SymbolKind::Interface),
        "enum_declaration" => type_declaration(w, node, SymbolKind::Enum),
        "record_declaration" => {
            type_declaration(w, node, SymbolKind::Class);
            if let Some(parameters) = node.child_by_field_name("parameters") {
                for component in named_children(parameters) {
                    if let Some(name) = component.child_by_field_name("name") {
                        let mut def = w.def(SymbolKind::Field, name);
                        def.span_node = Some(component);
                        def.signature_node = Some(component);
                        def.opens_scope = false;
                        w.define(def);
                    }
                }
            }
        }
        "method_declaration" | "annotation_type_element_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Method, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "constructor_declaration" | "compact_constructor_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Constructor, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "field_declaration" | "constant_declaration" => {
            let modifiers = children(node).into_iter().find(|c| c.kind() == "modifiers").map_or("", |m| w.text(m));
            let is_constant = node.kind() == "constant_declaration"
                || w.scope_kind() == Some(SymbolKind::Interface)
                || (has_word(modifiers, "static") && has_word(modifiers, "final"));
            let kind = if is_constant { SymbolKind::Constant } else { SymbolKind::Field };
            for declarator in children(node).into_iter().filter(|c| c.kind() == "variable_declarator") {
                let Some(name) = declarator.child_by_field_name("name") else { continue };
                let mut def = w.def(kind, name);
                def.opens_scope = false;
                w.define(def);
            }
        }
        "enum_constant" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::EnumMember, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "import_declaration" => {
            let parts = named_children(node);
            let Some(path) = parts.iter().find(|p| matches!(p.kind(), "scoped_identifier" | "identifier")) else {
                return Flow::Descend;
            };
            let path = w.text(*path);
            let wildcard = parts.iter().any(|p| p.kind() == "asterisk");
            let (module, name) = if wildcard { (path, "*") } else { path.rsplit_once('.').unwrap_or(("", path)) };
            let mut import = w.simple_import(ImportKind::Import, module);
            import.names.push(name.to_owned());
            w.import(import);
        }
        "package_declaration" => return Flow::Skip,
        "method_invocation" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            match node.child_by_field_name("object") {
                Some(object) => w.member_call(name, object),
                None => {
                    let callee = w.text(name);
                    w.call(name, callee, None, None);
                }
            }
        }
        // `super(…)` / `this(…)` in a constructor: the parent's (or a sibling) constructor.
        "explicit_constructor_invocation" => {
            if let Some(constructor) = node.child_by_field_name("constructor")
                && w.text(constructor) == "super"
            {
                w.call(constructor, "super", None, None);
            }
        }
        "object_creation_expression" => {
            let Some(type_node) = node.child_by_field_name("type") else { return Flow::Descend };
            constructor_call(w, type_node);
        }
        "formal_parameter" | "spread_parameter" | "catch_formal_parameter" | "enhanced_for_statement" => {
            if let Some(name) = node.child_by_field_name("name") {
                w.suppress(name);
            } else if let Some(declarator) = children(node).into_iter().find(|c| c.kind() == "variable_declarator")
                && let Some(name) = declarator.child_by_field_name("name")
            {
                w.suppress(name);
            }
        }
        "local_variable_declaration" => {
            for declarator in children(node).into_iter().filter(|c| c.kind() == "variable_declarator") {
                if let Some(name) = declarator.child_by_field_name("name") {
                    w.suppress(name);
                }
            }
        }
        "lambda_expression" => {
            if let Some(parameters) = node.child_by_field_name("parameters") {
                if parameters.kind() == "identifier" {
                    w.suppress(parameters);
                }
                for parameter in named_children(parameters).into_iter().filter(|p| p.kind() == "identifier") {
                    w.suppress(parameter);
                }
            }
        }
        "type_parameter" => {
            if let Some(name) = named_children(node).into_iter().find(|c| c.kind() == "type_identifier") {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|part| part == word)
}

fn type_declaration<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let type_name = w.text(name);
    let is_interface = kind == SymbolKind::Interface;
    for clause in named_children(node) {
        let relation = match clause.kind() {
            "superclass" => RelationKind::Extends,
            "super_interfaces" if !is_interface => RelationKind::Implements,
            "extends_interfaces" | "super_interfaces" => RelationKind::Extends,
            _ => continue,
        };
        for supertype in supertypes(clause) {
            let supertype_name = text::strip_generics(w.text(supertype));
            w.relation(type_name, supertype_name, relation, supertype);
        }
    }
    let mut def = w.def(kind, name);
    def.body = field_start(node, "body");
    w.define(def);
}

/// The types listed by `extends X` or `implements A, B` (directly or in a `type_list`).
fn supertypes(clause: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    for child in named_children(clause) {
        if child.kind() == "type_list" {
            out.extend(named_children(child));
        } else {
            out.push(child);
        }
    }
    out
}

fn constructor_call<'a>(w: &mut Walker<'a>, type_node: Node<'a>) {
    let base = match type_node.kind() {
        "generic_type" => named_children(type_node).into_iter().next().unwrap_or(type_node),
        _ => type_node,
    };
    match base.kind() {
        "scoped_type_identifier" => {
            let parts = named_children(base);
            let Some(name) = parts.last().copied() else { return };
            let qualifier = w.src.get(base.start_byte()..name.start_byte()).unwrap_or("").trim_end_matches('.');
            let callee = w.text(name);
            w.call(name, callee, Some(qualifier.to_owned()), None);
        }
        _ => {
            let callee = text::strip_generics(w.text(base));
            w.call(base, callee, None, None);
        }
    }
}
