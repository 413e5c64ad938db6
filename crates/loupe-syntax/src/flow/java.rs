//! Java: method, constructor and lambda parameters (varargs included), local variables,
//! enhanced `for`, `catch`, try-with-resources and `instanceof` / switch pattern bindings;
//! assignments (compound ones too), `++` / `--`; method calls and `new` (`Foo.m(x)` has
//! qualifier `Foo`, `obj.m(x)` receiver `obj`); `return x` and lambda expression bodies.
//!
//! Must not report field accesses (`this.x`, `obj.x`), method names, labels or package paths
//! as the variable: Java keeps methods and variables in separate namespaces, so a called name
//! is never a use.

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, name_field, named_children, no_imports, node_text, parameter_text};
use crate::text;

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier"],
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
        "lambda_expression",
    ],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name: name_field,
    parameters,
    // Imported names are types (capitalised) or static members, never a call's receiver.
    imported_names: no_imports,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    match o.kind(1) {
        "method_invocation" if field == Some("name") => return Role::NotVariable,
        "field_access" if field == Some("field") => return Role::NotVariable,
        "method_declaration"
        | "constructor_declaration"
        | "compact_constructor_declaration"
        | "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration"
        | "enum_constant"
        | "marker_annotation"
        | "annotation"
        | "scoped_identifier"
        | "labeled_statement"
        | "break_statement"
        | "continue_statement" => return Role::NotVariable,
        // `x::m` reads `x`; `Foo::m` and the `m` are not variables.
        "method_reference" => {
            let first = o.node(1).and_then(|reference| reference.named_child(0)).map(|first| first.id());
            if first != o.node(0).map(|node| node.id()) {
                return Role::NotVariable;
            }
        }
        "variable_declarator" if field == Some("name") => {
            return match o.kind(2) {
                "local_variable_declaration" => Role::Definition,
                "spread_parameter" => Role::Parameter,
                _ => Role::NotVariable,
            };
        }
        "formal_parameter" if field == Some("name") => {
            return if o.kind(3) == "record_declaration" { Role::NotVariable } else { Role::Parameter };
        }
        "lambda_expression" if field == Some("parameters") => return Role::Parameter,
        "inferred_parameters" => return Role::Parameter,
        "catch_formal_parameter" | "enhanced_for_statement" | "resource" | "instanceof_expression"
            if field == Some("name") =>
        {
            return Role::Definition;
        }
        "type_pattern" | "record_pattern_component" => return Role::Definition,
        "assignment_expression" if field == Some("left") => return Role::Assignment,
        "update_expression" => return Role::Assignment,
        _ => {}
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    match o.kind(up + 1) {
        "return_statement" => return Role::Return,
        "lambda_expression" if o.field(up) == Some("body") => return Role::Return,
        _ => {}
    }
    argument(o, up).unwrap_or(Role::Use)
}

/// `m(x)`, `obj.m(x)`, `Util.m(x)`, `new Foo(x)`.
fn argument(o: &Occurrence<'_, '_>, up: usize) -> Option<Role> {
    let (call, index) = o.argument_at(up, &["argument_list"])?;
    let src = o.src;
    let call = match call.kind() {
        "method_invocation" => {
            let name = node_text(src, call.child_by_field_name("name")?);
            match call.child_by_field_name("object") {
                Some(object) => Call::member(name, node_text(src, object))?,
                None => Call::plain(name)?,
            }
        }
        "object_creation_expression" => constructor(src, call.child_by_field_name("type")?)?,
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// `new a.b.Foo<T>(…)`: callee `Foo`, qualifier `a.b`.
fn constructor(src: &str, type_node: Node<'_>) -> Option<Call> {
    let base = match type_node.kind() {
        "generic_type" => type_node.named_child(0).unwrap_or(type_node),
        _ => type_node,
    };
    match base.kind() {
        "scoped_type_identifier" => {
            let name = *named_children(base).last()?;
            let qualifier = src.get(base.start_byte()..name.start_byte()).unwrap_or("").trim_end_matches('.');
            Call::qualified(node_text(src, name), Some(qualifier.to_owned()))
        }
        _ => Call::plain(text::strip_generics(node_text(src, base))),
    }
}

/// The parameters of a method, constructor or lambda; the receiver parameter (`Foo this`) is
/// left out.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    if list.kind() == "identifier" {
        return vec![parameter_text(src, list)];
    }
    named_children(list)
        .into_iter()
        .filter_map(|parameter| match parameter.kind() {
            "formal_parameter" => parameter.child_by_field_name("name").map(|name| parameter_text(src, name)),
            "spread_parameter" => named_children(parameter)
                .into_iter()
                .find(|child| child.kind() == "variable_declarator")
                .and_then(|declarator| declarator.child_by_field_name("name"))
                .map(|name| parameter_text(src, name)),
            "identifier" => Some(parameter_text(src, parameter)),
            _ => None,
        })
        .collect()
}
