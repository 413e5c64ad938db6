//! Go: parameters (receivers bound but not listed, unnamed ones as `_`), named results as
//! definitions, `:=`, `var`, `const`, `range` and `select` receive bindings, type-switch
//! aliases; assignments, `++` / `--`; calls (`&x`, `*x`, `x...` and parentheses pass `x`,
//! package-qualified calls told from method calls by the file's imports); `return x, y`.
//!
//! Must not report struct literal keys or selector fields (`s.x`) as the variable.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, name_field, named_children, node_text};
use crate::languages::shared::unquote;
use crate::walk::go_package_name;

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier"],
    functions: &["function_declaration", "method_declaration", "func_literal"],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name: name_field,
    parameters,
    imported_names,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    match o.kind(1) {
        "function_declaration" if field == Some("name") => return Role::NotVariable,
        "call_expression" if field == Some("function") => return Role::Called,
        "labeled_statement" | "break_statement" | "continue_statement" | "goto_statement" => {
            return Role::NotVariable;
        }
        "parameter_declaration" | "variadic_parameter_declaration" => {
            return if field == Some("name") { parameter(o) } else { Role::NotVariable };
        }
        "var_spec" | "const_spec" if field == Some("name") => return Role::Definition,
        "inc_statement" | "dec_statement" => return Role::Assignment,
        // `Point{x: 1}` names a field; `map[string]int{x: 1}` reads `x`.
        "literal_element" if o.field(1) == Some("key") && !is_map_key(o) => return Role::NotVariable,
        "expression_list" => {
            if let Some(role) = list_target(o) {
                return role;
            }
        }
        _ => {}
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    match o.kind(up + 1) {
        "return_statement" => return Role::Return,
        "expression_list" if o.kind(up + 2) == "return_statement" => return Role::Return,
        _ => {}
    }
    argument(o).unwrap_or(Role::Use)
}

/// Whether a keyed element's key is an expression: the literal is a map, slice or array.
fn is_map_key(o: &Occurrence<'_, '_>) -> bool {
    o.kind(2) == "keyed_element"
        && o.kind(3) == "literal_value"
        && o.kind(4) == "composite_literal"
        && o.node(4).and_then(|literal| literal.child_by_field_name("type")).is_some_and(|literal_type| {
            matches!(literal_type.kind(), "map_type" | "slice_type" | "array_type" | "implicit_length_array_type")
        })
}

/// A name declared by a parameter list: a parameter or the receiver of the function, or a
/// named result (a local); in a function type, not a variable.
fn parameter(o: &Occurrence<'_, '_>) -> Role {
    if o.kind(2) != "parameter_list" {
        return Role::NotVariable;
    }
    match (o.kind(3), o.field(2)) {
        ("function_declaration" | "method_declaration" | "func_literal", Some("parameters" | "receiver")) => {
            Role::Parameter
        }
        ("function_declaration" | "method_declaration" | "func_literal", Some("result")) => Role::Definition,
        _ => Role::NotVariable,
    }
}

/// A name on the left of `:=` / `=` (also in `range`, `select` receives and type switches).
fn list_target(o: &Occurrence<'_, '_>) -> Option<Role> {
    let field = o.field(1);
    let declares = o.has_token(2, ":=");
    let role = match o.kind(2) {
        "short_var_declaration" if field == Some("left") => Role::Definition,
        "assignment_statement" if field == Some("left") => Role::Assignment,
        "range_clause" | "receive_statement" if field == Some("left") => {
            if declares {
                Role::Definition
            } else {
                Role::Assignment
            }
        }
        "type_switch_statement" if field == Some("alias") => Role::Definition,
        _ => return None,
    };
    Some(role)
}

/// `f(x)`, `v.m(x)`, `pkg.F(x)`, with `&x`, `*x`, `x...` and parentheses passing `x`.
fn argument(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut up = 0;
    loop {
        match o.kind(up + 1) {
            "parenthesized_expression" | "variadic_argument" => {}
            "unary_expression" if o.has_token(up + 1, "&") || o.has_token(up + 1, "*") => {}
            _ => break,
        }
        up += 1;
    }
    let (call, index) = o.argument_at(up, &["argument_list"])?;
    if call.kind() != "call_expression" {
        return None;
    }
    let mut function = call.child_by_field_name("function")?;
    // `f[T](x)`: an explicit instantiation of a generic function.
    if matches!(function.kind(), "index_expression" | "generic_type") {
        function = function.child_by_field_name("operand").or(function.child_by_field_name("type"))?;
    }
    let src = o.src;
    let call = match function.kind() {
        "identifier" => Call::plain(node_text(src, function))?,
        "selector_expression" => {
            let operand = function.child_by_field_name("operand")?;
            let field = function.child_by_field_name("field")?;
            Call::member(node_text(src, field), node_text(src, operand))?
        }
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// The parameters in order, several per declaration (`a, b int`), `_` for an unnamed one.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    let mut names = Vec::new();
    for declaration in named_children(list) {
        if !matches!(declaration.kind(), "parameter_declaration" | "variadic_parameter_declaration") {
            continue;
        }
        let mut cursor = declaration.walk();
        let before = names.len();
        names.extend(
            declaration.children_by_field_name("name", &mut cursor).map(|name| node_text(src, name).to_owned()),
        );
        if names.len() == before {
            names.push("_".to_owned());
        }
    }
    names
}

/// The package names the file's imports bind: the alias, else the path's package name.
fn imported_names(src: &str, root: Node<'_>) -> HashSet<String> {
    let mut names = HashSet::new();
    for declaration in named_children(root).into_iter().filter(|node| node.kind() == "import_declaration") {
        let mut stack = named_children(declaration);
        while let Some(node) = stack.pop() {
            match node.kind() {
                "import_spec_list" => stack.extend(named_children(node)),
                "import_spec" => {
                    let bound = match node.child_by_field_name("name") {
                        Some(alias) => node_text(src, alias).to_owned(),
                        None => {
                            let path = node.child_by_field_name("path").map_or("", |path| node_text(src, path));
                            go_package_name(unquote(path)).to_owned()
                        }
                    };
                    names.insert(bound);
                }
                _ => {}
            }
        }
    }
    names
}
