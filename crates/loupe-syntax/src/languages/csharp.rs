//! C#: namespaces (block and file-scoped), classes, structs, interfaces, enums and members,
//! records, delegates, methods, constructors, destructors, operators, properties, indexers,
//! fields (`const` ones as constants), events; `using` directives (static, aliased); calls and
//! `new`; base lists (an `I`-prefixed name in a class's base list is an interface).
//!
//! Must not resolve whether a base type is a class or an interface beyond that naming rule.

use tree_sitter::Node;

use super::shared::{children, field_start, named_children};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::CSharp,
    language: || tree_sitter_c_sharp::LANGUAGE.into(),
    references: &["identifier"],
    comments: &["comment"],
    attributes: &[],
    handled: &[
        "namespace_declaration",
        "file_scoped_namespace_declaration",
        "class_declaration",
        "struct_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "record_struct_declaration",
        "delegate_declaration",
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "operator_declaration",
        "property_declaration",
        "indexer_declaration",
        "field_declaration",
        "event_field_declaration",
        "event_declaration",
        "enum_member_declaration",
        "using_directive",
        "invocation_expression",
        "object_creation_expression",
        "parameter",
        "variable_declaration",
        "foreach_statement",
        "type_parameter",
    ],
    opaque: &["string_literal", "verbatim_string_literal", "character_literal", "raw_string_literal"],
    decorations: &["attribute_list"],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "namespace_declaration" | "file_scoped_namespace_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Namespace, name);
            def.body = field_start(node, "body");
            def.scope_to_end = node.kind() == "file_scoped_namespace_declaration";
            w.define(def);
        }
        "class_declaration" | "record_declaration" => type_declaration(w, node, SymbolKind::Class),
        "struct_declaration" | "record_struct_declaration" => type_declaration(w, node, SymbolKind::Struct),
        "interface_declaration" => type_declaration(w, node, SymbolKind::Interface),
        "enum_declaration" => type_declaration(w, node, SymbolKind::Enum),
        "delegate_declaration" => simple(w, node, SymbolKind::TypeAlias),
        "method_declaration" | "destructor_declaration" | "operator_declaration" => {
            let name = node.child_by_field_name("name").or_else(|| node.child_by_field_name("operator"));
            let Some(name) = name else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Method, name);
            if node.kind() == "destructor_declaration"
                && let Some(tilde) = children(node).into_iter().find(|c| c.kind() == "~")
            {
                def.name = w.src.get(tilde.start_byte()..name.end_byte()).unwrap_or(def.name);
            }
            def.body = body_start(node);
            w.define(def);
        }
        "constructor_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Constructor, name);
            def.body = body_start(node);
            w.define(def);
        }
        "property_declaration" | "event_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Property, name);
            def.body = field_start(node, "accessors").or_else(|| field_start(node, "value"));
            w.define(def);
        }
        "indexer_declaration" => {
            let mut def = w.def(SymbolKind::Property, node);
            def.name = "this[]";
            def.body = field_start(node, "accessors");
            w.define(def);
        }
        "field_declaration" | "event_field_declaration" => {
            let is_const = children(node).iter().any(|c| c.kind() == "modifier" && w.text(*c) == "const");
            let kind = if is_const { SymbolKind::Constant } else { SymbolKind::Field };
            let Some(declaration) = children(node).into_iter().find(|c| c.kind() == "variable_declaration") else {
                return Flow::Descend;
            };
            for declarator in children(declaration).into_iter().filter(|c| c.kind() == "variable_declarator") {
                let Some(name) = declarator.child_by_field_name("name") else { continue };
                let mut def = w.def(kind, name);
                def.opens_scope = false;
                w.define(def);
            }
        }
        "enum_member_declaration" => simple(w, node, SymbolKind::EnumMember),
        "using_directive" => {
            let parts = named_children(node);
            let alias = node.child_by_field_name("name");
            let Some(path) = parts.iter().rev().find(|p| Some(p.start_byte()) != alias.map(|a| a.start_byte())) else {
                return Flow::Descend;
            };
            let mut import = w.simple_import(ImportKind::Import, w.text(*path));
            if children(node).iter().any(|c| c.kind() == "static") {
                import.names.push("*".to_owned());
            }
            if let Some(alias) = alias {
                import.alias = Some(w.text(alias).to_owned());
                w.suppress(alias);
            }
            w.import(import);
        }
        "invocation_expression" => {
            let Some(function) = node.child_by_field_name("function") else { return Flow::Descend };
            match function.kind() {
                "identifier" | "generic_name" => {
                    let name = generic_base(function);
                    let callee = w.text(name);
                    w.call(name, callee, None, None);
                }
                "member_access_expression" => {
                    let (Some(object), Some(name)) =
                        (function.child_by_field_name("expression"), function.child_by_field_name("name"))
                    else {
                        return Flow::Descend;
                    };
                    w.member_call(generic_base(name), object);
                }
                _ => {}
            }
        }
        "object_creation_expression" => {
            let Some(type_node) = node.child_by_field_name("type") else { return Flow::Descend };
            let (qualifier, name) = match type_node.kind() {
                "qualified_name" => (
                    type_node.child_by_field_name("qualifier").map(|q| w.text(q).to_owned()),
                    type_node.child_by_field_name("name").map_or(type_node, generic_base),
                ),
                _ => (None, generic_base(type_node)),
            };
            let callee = w.text(name);
            w.call(name, callee, qualifier, None);
        }
        "parameter" | "foreach_statement" => {
            if let Some(name) = node.child_by_field_name("name").or_else(|| node.child_by_field_name("left"))
                && name.kind() == "identifier"
            {
                w.suppress(name);
            }
        }
        "variable_declaration" if w.in_function() => {
            for declarator in children(node).into_iter().filter(|c| c.kind() == "variable_declarator") {
                if let Some(name) = declarator.child_by_field_name("name") {
                    w.suppress(name);
                }
            }
        }
        "type_parameter" => {
            if let Some(name) = node.child_by_field_name("name") {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// `Run<T>` → `Run`.
fn generic_base(node: Node<'_>) -> Node<'_> {
    if node.kind() == "generic_name" {
        return named_children(node).into_iter().find(|c| c.kind() == "identifier").unwrap_or(node);
    }
    node
}

fn body_start(node: Node<'_>) -> Option<usize> {
    field_start(node, "body")
        .or_else(|| children(node).into_iter().find(|c| c.kind() == "arrow_expression_clause").map(|c| c.start_byte()))
}

fn simple<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let mut def = w.def(kind, name);
    def.opens_scope = false;
    w.define(def);
}

fn type_declaration<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let type_name = w.text(name);
    if let Some(bases) = children(node).into_iter().find(|c| c.kind() == "base_list") {
        for (index, base) in named_children(bases).into_iter().enumerate() {
            if matches!(base.kind(), "argument_list" | "comment") {
                continue;
            }
            let supertype = text::strip_generics(w.text(base));
            let simple_name = text::last_segment(supertype);
            let looks_like_interface = simple_name.len() > 1
                && simple_name.starts_with('I')
                && simple_name[1..].starts_with(|c: char| c.is_ascii_uppercase());
            let relation = match kind {
                SymbolKind::Interface => RelationKind::Extends,
                SymbolKind::Struct => RelationKind::Implements,
                _ if looks_like_interface || index > 0 => RelationKind::Implements,
                _ => RelationKind::Extends,
            };
            w.relation(type_name, supertype, relation, base);
        }
    }
    let mut def = w.def(kind, name);
    def.body = field_start(node, "body");
    w.define(def);
}
