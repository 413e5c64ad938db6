//! C#: method, constructor, local-function, lambda and accessor parameters (`params` arrays
//! included; an extension method's `this` parameter is the receiver, left out), locals,
//! `foreach`, `catch`, `using` and `out var` declarations, `is` pattern bindings; assignments
//! (tuple deconstruction too), `++` / `--`; calls and `new` (positional arguments, `ref` and
//! `out` ones included; `Util.M(x)` has qualifier `Util`, `obj.M(x)` and `obj?.M(x)` receiver
//! `obj`); `return x`, lambda and `=>` bodies.
//!
//! Must not report type names, which this grammar writes as plain identifiers, or member names
//! (`this.x`, `obj.M`) as the variable; nor count a named argument (`f(name: x)`) as
//! positional.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, name_field, named_children, node_text, parameter_text};

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier", "implicit_parameter"],
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "operator_declaration",
        "conversion_operator_declaration",
        "local_function_statement",
        "accessor_declaration",
        "lambda_expression",
        "anonymous_method_expression",
    ],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name: name_field,
    parameters,
    imported_names,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    if o.kind(0) == "implicit_parameter" {
        return Role::Parameter;
    }
    // Types: a declaration's `type`, a method's `returns`, generic and qualified names.
    if matches!(field, Some("type" | "returns" | "qualifier")) {
        return Role::NotVariable;
    }
    match o.kind(1) {
        "member_access_expression" | "member_binding_expression" if field == Some("name") => return Role::NotVariable,
        "generic_name"
        | "qualified_name"
        | "type_argument_list"
        | "type_parameter"
        | "attribute"
        | "name_colon"
        | "labeled_statement"
        | "goto_statement"
        | "using_directive"
        | "namespace_declaration"
        | "file_scoped_namespace_declaration"
        | "base_list"
        | "type_parameter_constraints_clause" => {
            return Role::NotVariable;
        }
        "method_declaration"
        | "constructor_declaration"
        | "destructor_declaration"
        | "class_declaration"
        | "struct_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "enum_member_declaration"
        | "property_declaration"
        | "event_declaration"
        | "delegate_declaration"
        | "local_function_statement"
            if field == Some("name") =>
        {
            return Role::NotVariable;
        }
        "invocation_expression" if field == Some("function") => return Role::Called,
        "parameter" if field == Some("name") => return Role::Parameter,
        // `params int[] rest` is written straight into the parameter list.
        "parameter_list" if field == Some("name") => return Role::Parameter,
        "variable_declarator" if field == Some("name") => {
            let is_field = matches!(o.kind(3), "field_declaration" | "event_field_declaration");
            return if is_field { Role::NotVariable } else { Role::Definition };
        }
        "foreach_statement" if field == Some("left") => return Role::Definition,
        "catch_declaration"
        | "declaration_pattern"
        | "declaration_expression"
        | "tuple_pattern"
        | "parenthesized_variable_designation"
        | "var_pattern"
        | "recursive_pattern" => {
            return if o.kind(1) == "recursive_pattern" && field != Some("name") {
                Role::Use
            } else {
                Role::Definition
            };
        }
        "postfix_unary_expression" | "prefix_unary_expression" if o.has_token(1, "++") || o.has_token(1, "--") => {
            return Role::Assignment;
        }
        _ => {}
    }
    if is_assigned(o) {
        return Role::Assignment;
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    match o.kind(up + 1) {
        "return_statement" => return Role::Return,
        "lambda_expression" if o.field(up) == Some("body") => return Role::Return,
        // `int Twice(int x) => x;`: the body of the function itself.
        "arrow_expression_clause" if o.kind(up + 2) != "property_declaration" => return Role::Return,
        _ => {}
    }
    argument(o, up).unwrap_or(Role::Use)
}

/// `x = …`, `x += …`, and `x` inside a deconstruction `(x, y) = …`.
fn is_assigned(o: &Occurrence<'_, '_>) -> bool {
    let mut up = 0;
    while matches!(o.kind(up + 1), "argument" | "tuple_expression") && up < 8 {
        up += 1;
    }
    o.kind(up + 1) == "assignment_expression" && o.field(up) == Some("left")
}

/// `F(x)`, `obj.M(ref x)`, `obj?.M(x)`, `new Foo(x)`; named arguments are uses.
fn argument(o: &Occurrence<'_, '_>, up: usize) -> Option<Role> {
    if o.kind(up + 1) != "argument" || o.node(up + 1)?.child_by_field_name("name").is_some() {
        return None;
    }
    let (call, index) = o.argument_at(up + 1, &["argument_list"])?;
    let src = o.src;
    let call = match call.kind() {
        "invocation_expression" => {
            let function = call.child_by_field_name("function")?;
            match function.kind() {
                "identifier" | "generic_name" => Call::plain(node_text(src, generic_base(function)))?,
                "member_access_expression" => {
                    let object = function.child_by_field_name("expression")?;
                    let name = generic_base(function.child_by_field_name("name")?);
                    Call::member(node_text(src, name), node_text(src, object))?
                }
                "conditional_access_expression" => {
                    let object = function.child_by_field_name("condition")?;
                    let binding = named_children(function)
                        .into_iter()
                        .find(|child| child.kind() == "member_binding_expression")?;
                    let name = generic_base(binding.child_by_field_name("name")?);
                    Call::method(node_text(src, name), node_text(src, object))?
                }
                _ => return None,
            }
        }
        "object_creation_expression" => {
            let type_node = call.child_by_field_name("type")?;
            match type_node.kind() {
                "qualified_name" => {
                    let qualifier = type_node.child_by_field_name("qualifier").map(|q| node_text(src, q).to_owned());
                    let name = generic_base(type_node.child_by_field_name("name")?);
                    Call::qualified(node_text(src, name), qualifier)?
                }
                _ => Call::plain(node_text(src, generic_base(type_node)))?,
            }
        }
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// `Run<T>` → `Run`.
fn generic_base(node: Node<'_>) -> Node<'_> {
    if node.kind() == "generic_name" {
        return named_children(node).into_iter().find(|child| child.kind() == "identifier").unwrap_or(node);
    }
    node
}

/// The parameters in order; an extension method's `this` parameter is its receiver and left
/// out.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    if list.kind() == "implicit_parameter" {
        return vec![parameter_text(src, list)];
    }
    let mut cursor = list.walk();
    let mut names = Vec::new();
    for (index, child) in list.named_children(&mut cursor).enumerate() {
        let name = match child.kind() {
            "parameter" => {
                let is_receiver = index == 0
                    && named_children(child)
                        .iter()
                        .any(|part| part.kind() == "modifier" && node_text(src, *part) == "this");
                if is_receiver {
                    continue;
                }
                child.child_by_field_name("name")
            }
            "identifier" => Some(child),
            _ => None,
        };
        if let Some(name) = name {
            names.push(parameter_text(src, name));
        }
    }
    names
}

/// The names `using` directives bind: an alias, else the namespace's last segment.
fn imported_names(src: &str, root: Node<'_>) -> HashSet<String> {
    let mut names = HashSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        for child in named_children(node) {
            match child.kind() {
                "namespace_declaration" | "file_scoped_namespace_declaration" | "declaration_list" => stack.push(child),
                "using_directive" => {
                    let bound = match child.child_by_field_name("name") {
                        Some(alias) => node_text(src, alias),
                        None => named_children(child).last().map_or("", |path| {
                            let path = node_text(src, *path);
                            path.rsplit('.').next().unwrap_or(path)
                        }),
                    };
                    if !bound.is_empty() {
                        names.insert(bound.to_owned());
                    }
                }
                _ => {}
            }
        }
    }
    names
}
