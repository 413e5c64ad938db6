//! Go: functions, methods (container = receiver type), struct / interface / defined types
//! and aliases, package-level const and var, struct fields and interface methods; imports
//! with aliases; calls (selector calls decided between package and value after the walk);
//! struct and interface embedding.
//!
//! Must not report Go's predeclared type names (`int`, `string`, `error`…) as references.

use tree_sitter::Node;

use super::shared::{children, named_children, unquote};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Go,
    language: || tree_sitter_go::LANGUAGE.into(),
    references: &["identifier", "type_identifier", "field_identifier", "package_identifier"],
    comments: &["comment"],
    attributes: &[],
    handled: &[
        "function_declaration",
        "method_declaration",
        "type_spec",
        "type_alias",
        "field_declaration",
        "method_elem",
        "type_elem",
        "const_spec",
        "var_spec",
        "import_spec",
        "call_expression",
        "type_conversion_expression",
        "package_clause",
        "parameter_declaration",
        "variadic_parameter_declaration",
        "short_var_declaration",
        "range_clause",
        "type_parameter_declaration",
    ],
    opaque: &["interpreted_string_literal", "raw_string_literal", "rune_literal"],
    decorations: &[],
    not_references: &[
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
        "comparable",
        "_",
    ],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "function_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Function, name);
            def.body = node.child_by_field_name("body").map(|body| body.start_byte());
            w.define(def);
        }
        "method_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let receiver = node.child_by_field_name("receiver").and_then(receiver_type).map(|t| w.text(t));
            let mut def = w.def(SymbolKind::Method, name);
            def.container = receiver.map(|receiver| text::strip_generics(receiver).to_owned());
            def.body = node.child_by_field_name("body").map(|body| body.start_byte());
            w.define(def);
        }
        "type_spec" | "type_alias" => type_spec(w, node),
        "field_declaration" => field(w, node),
        "method_elem" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let def = w.def(SymbolKind::Method, name);
            w.define(def);
        }
        "type_elem" if w.ancestor_kind(1) == "interface_type" => {
            // One type is an embedded interface; several (`int | float64`) are a constraint.
            let types = named_children(node);
            if let ([embedded], Some(interface)) = (types.as_slice(), w.scope_name()) {
                let interface = interface.to_owned();
                let supertype = w.text(*embedded).trim_start_matches('~');
                w.relation(&interface, supertype, RelationKind::Embeds, *embedded);
            }
        }
        "const_spec" | "var_spec" => value_spec(w, node),
        "import_spec" => {
            let Some(path) = node.child_by_field_name("path") else { return Flow::Descend };
            let mut import = w.simple_import(ImportKind::Import, unquote(w.text(path)));
            import.line = node.start_position().row + 1;
            if let Some(alias) = node.child_by_field_name("name") {
                import.alias = Some(w.text(alias).to_owned());
                w.suppress(alias);
            }
            w.import(import);
        }
        "call_expression" => {
            let Some(mut function) = node.child_by_field_name("function") else { return Flow::Descend };
            // `f[T](x)`: an explicit instantiation of a generic function.
            if function.kind() == "index_expression" || function.kind() == "generic_type" {
                function = function
                    .child_by_field_name("operand")
                    .or(function.child_by_field_name("type"))
                    .unwrap_or(function);
            }
            match function.kind() {
                "identifier" => {
                    let callee = w.text(function);
                    w.call(function, callee, None, None);
                }
                "selector_expression" => {
                    let (Some(operand), Some(field)) =
                        (function.child_by_field_name("operand"), function.child_by_field_name("field"))
                    else {
                        return Flow::Descend;
                    };
                    w.member_call(field, operand);
                }
                _ => {}
            }
        }
        // `f[int](x)` and `pkg.F[int](x)` parse as conversions to a generic type.
        "type_conversion_expression" => {
            let Some(generic) = node.child_by_field_name("type").filter(|t| t.kind() == "generic_type") else {
                return Flow::Descend;
            };
            let Some(base) = generic.child_by_field_name("type") else { return Flow::Descend };
            match base.kind() {
                "qualified_type" => {
                    let (Some(package), Some(name)) =
                        (base.child_by_field_name("package"), base.child_by_field_name("name"))
                    else {
                        return Flow::Descend;
                    };
                    let callee = w.text(name);
                    let qualifier = Some(w.text(package).to_owned());
                    w.call(name, callee, qualifier, None);
                }
                _ => {
                    let callee = w.text(base);
                    w.call(base, callee, None, None);
                }
            }
        }
        "package_clause" => return Flow::Skip,
        "parameter_declaration" | "variadic_parameter_declaration" | "type_parameter_declaration" => {
            for name in children(node).into_iter().filter(|c| c.kind() == "identifier") {
                w.suppress(name);
            }
        }
        "short_var_declaration" | "range_clause" => {
            if let Some(left) = node.child_by_field_name("left") {
                for name in named_children(left).into_iter().filter(|c| c.kind() == "identifier") {
                    w.suppress(name);
                }
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// The type named by a receiver list `(s *Server[T])`.
fn receiver_type(receiver: Node<'_>) -> Option<Node<'_>> {
    let parameter = named_children(receiver).into_iter().find(|p| p.kind() == "parameter_declaration")?;
    let mut node = parameter.child_by_field_name("type")?;
    for _ in 0..4 {
        match node.kind() {
            "pointer_type" => node = node.named_child(0)?,
            "generic_type" => node = node.child_by_field_name("type")?,
            _ => break,
        }
    }
    Some(node)
}

fn type_spec<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let type_node = node.child_by_field_name("type");
    let kind = match (node.kind(), type_node.map(|t| t.kind())) {
        ("type_alias", _) => SymbolKind::TypeAlias,
        (_, Some("struct_type")) => SymbolKind::Struct,
        (_, Some("interface_type")) => SymbolKind::Interface,
        _ => SymbolKind::TypeAlias,
    };
    let mut def = w.def(kind, name);
    if single_spec(w) {
        def.outer = w.depth - 1;
    }
    def.body = type_node.and_then(|t| match t.kind() {
        "struct_type" => {
            named_children(t).into_iter().find(|c| c.kind() == "field_declaration_list").map(|b| b.start_byte())
        }
        "interface_type" => children(t).into_iter().find(|c| c.kind() == "{").map(|b| b.start_byte()),
        _ => None,
    });
    w.define(def);
}

/// Whether the visited spec is alone in its declaration (`type X struct{}` rather than
/// `type ( … )`): then the declaration's keyword and doc belong to it.
fn single_spec(w: &Walker<'_>) -> bool {
    w.ancestor(1).is_some_and(|parent| {
        matches!(parent.kind(), "type_declaration" | "const_declaration" | "var_declaration")
            && !children(parent).iter().any(|c| c.kind() == "(")
    })
}

fn field<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let names: Vec<Node<'a>> = children(node).into_iter().filter(|c| c.kind() == "field_identifier").collect();
    if names.is_empty() {
        // An embedded field: `Base`, `*Base`, `io.Reader`.
        let (Some(struct_name), Some(type_node)) = (w.scope_name(), node.child_by_field_name("type")) else {
            return;
        };
        let struct_name = struct_name.to_owned();
        let supertype = text::strip_generics(w.text(type_node));
        w.relation(&struct_name, supertype, RelationKind::Embeds, type_node);
        return;
    }
    for name in names {
        let mut def = w.def(SymbolKind::Field, name);
        def.opens_scope = false;
        w.define(def);
    }
}

fn value_spec<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let names: Vec<Node<'a>> = children(node).into_iter().filter(|c| c.kind() == "identifier").collect();
    if w.in_function() {
        for name in names {
            w.suppress(name);
        }
        return;
    }
    let kind = if node.kind() == "const_spec" { SymbolKind::Constant } else { SymbolKind::Variable };
    let single = single_spec(w) && names.len() == 1;
    for name in names {
        if name.start_byte() == name.end_byte() || w.text(name) == "_" {
            continue;
        }
        let mut def = w.def(kind, name);
        if single {
            def.outer = w.depth - 1;
        } else {
            def.signature_node = Some(node);
        }
        def.opens_scope = false;
        w.define(def);
    }
}
