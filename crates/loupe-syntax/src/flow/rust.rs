//! Rust: parameters (patterns included, `self` left out), `let`, `if let`, `while let`, `for`
//! and match-arm pattern bindings, assignments and compound assignments, calls (paths,
//! methods, generic functions) with `&x`, `&mut x` and `*x` passing `x`, `return x` and tail
//! expressions (through `if`, `match` and `unsafe` blocks), closure bodies.
//!
//! Must not guess at macro expansion: macro arguments are token trees, so a name inside one is
//! a use; nor at which capitalised name in a pattern is a constant rather than a binding.

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, name_field, named_children, no_imports, node_text, parameter_text};

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier", "shorthand_field_identifier"],
    functions: &["function_item", "closure_expression"],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name: name_field,
    parameters,
    imported_names: no_imports,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    match o.kind(1) {
        // Paths (`a::x`, `x::f`), `use` trees, item names, labels, lifetimes, attributes.
        "scoped_identifier"
        | "scoped_type_identifier"
        | "use_as_clause"
        | "use_list"
        | "scoped_use_list"
        | "use_declaration"
        | "use_wildcard"
        | "extern_crate_declaration"
        | "macro_definition"
        | "function_item"
        | "function_signature_item"
        | "mod_item"
        | "type_item"
        | "enum_variant"
        | "struct_item"
        | "union_item"
        | "trait_item"
        | "label"
        | "lifetime"
        | "attribute"
        | "macro_invocation" => return Role::NotVariable,
        "const_item" | "static_item" if field == Some("name") => return Role::Definition,
        "tuple_struct_pattern" if field == Some("type") => return Role::NotVariable,
        "call_expression" if field == Some("function") => return Role::Called,
        "generic_function" if field == Some("function") && o.kind(2) == "call_expression" => return Role::Called,
        _ => {}
    }
    if let Some(role) = binding(o) {
        return role;
    }
    if o.kind(0) == "shorthand_field_identifier" {
        return Role::NotVariable;
    }
    if is_assigned(o) {
        return Role::Assignment;
    }
    if is_returned(o) {
        return Role::Return;
    }
    argument(o).unwrap_or(Role::Use)
}

/// A name bound by a pattern: in a parameter (of the function or a closure) or in `let`,
/// `if let`, `while let`, `for` or a match arm.
fn binding(o: &Occurrence<'_, '_>) -> Option<Role> {
    for up in 0..16 {
        let field = o.field(up);
        match o.kind(up + 1) {
            "tuple_pattern" | "slice_pattern" | "or_pattern" | "mut_pattern" | "ref_pattern" | "reference_pattern"
            | "captured_pattern" | "struct_pattern" => {}
            "tuple_struct_pattern" if field != Some("type") => {}
            "field_pattern" if field == Some("pattern") || o.kind(up) == "shorthand_field_identifier" => {}
            "match_pattern" if field != Some("condition") => {}
            "let_declaration" | "let_condition" | "for_expression" | "match_arm" => {
                return (field == Some("pattern")).then_some(Role::Definition);
            }
            "parameter" => return (field == Some("pattern")).then_some(Role::Parameter),
            "closure_parameters" => return Some(Role::Parameter),
            _ => return None,
        }
    }
    None
}

/// `x = …`, `x += …`, and `x` inside a destructuring assignment `(x, y) = …`.
fn is_assigned(o: &Occurrence<'_, '_>) -> bool {
    let mut up = 0;
    while matches!(o.kind(up + 1), "tuple_expression" | "array_expression") && up < 8 {
        up += 1;
    }
    matches!(o.kind(up + 1), "assignment_expression" | "compound_assignment_expr") && o.field(up) == Some("left")
}

/// `return x`, a closure whose body is `x`, or `x` as the tail expression of the function's
/// body (also the tail of an `if` / `match` / `unsafe` block that is itself the tail).
fn is_returned(o: &Occurrence<'_, '_>) -> bool {
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    if o.kind(up + 1) == "return_expression" {
        return true;
    }
    for _ in 0..64 {
        let Some(parent) = o.node(up + 1) else { return false };
        let field = o.field(up);
        let continues = match parent.kind() {
            "block" => o.node(up).is_some_and(|child| is_last(parent, child)),
            "expression_statement" => !o.has_token(up + 1, ";"),
            "if_expression" => matches!(field, Some("consequence" | "alternative")),
            "match_arm" => field == Some("value"),
            "match_expression" => field == Some("body"),
            "else_clause" | "match_block" | "unsafe_block" => true,
            "function_item" | "closure_expression" => return field == Some("body"),
            _ => false,
        };
        if !continues {
            return false;
        }
        up += 1;
    }
    false
}

/// Whether `child` is the last statement or expression of `block`.
fn is_last(block: Node<'_>, child: Node<'_>) -> bool {
    named_children(block).last().is_some_and(|last| last.id() == child.id())
}

/// `f(x)`, `f(&x)`, `f(&mut x)`, `f(*x)`, `f((x))`.
fn argument(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut up = 0;
    loop {
        match o.kind(up + 1) {
            "parenthesized_expression" => {}
            "reference_expression" if o.field(up) == Some("value") => {}
            "unary_expression" if o.has_token(up + 1, "*") => {}
            _ => break,
        }
        up += 1;
    }
    let (call, index) = o.argument_at(up, &["arguments"])?;
    if call.kind() != "call_expression" {
        return None;
    }
    let call = callee(o.src, call.child_by_field_name("function")?)?;
    Some(Role::Argument(call, index))
}

/// The call named the way the walk names it: `f`, `A::f` (qualifier `A`), `recv.f`
/// (receiver `recv`), `f::<T>`.
fn callee(src: &str, function: Node<'_>) -> Option<Call> {
    match function.kind() {
        "identifier" => Call::plain(node_text(src, function)),
        "scoped_identifier" => {
            let name = function.child_by_field_name("name")?;
            let qualifier = function.child_by_field_name("path").map(|path| node_text(src, path).to_owned());
            Call::qualified(node_text(src, name), qualifier)
        }
        "field_expression" => {
            let field = function.child_by_field_name("field")?;
            let value = function.child_by_field_name("value")?;
            Call::method(node_text(src, field), node_text(src, value))
        }
        "generic_function" => callee(src, function.child_by_field_name("function")?),
        _ => None,
    }
}

/// The parameters of a function or closure, `self` left out; a `mut x` parameter is `x`.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    named_children(list)
        .into_iter()
        .filter_map(|parameter| match parameter.kind() {
            "self_parameter" | "attribute_item" | "variadic_parameter" => None,
            "parameter" => parameter.child_by_field_name("pattern").map(|pattern| pattern_text(src, pattern)),
            _ => Some(pattern_text(src, parameter)),
        })
        .collect()
}

fn pattern_text(src: &str, pattern: Node<'_>) -> String {
    match pattern.kind() {
        "mut_pattern" => named_children(pattern).last().map_or_else(String::new, |inner| pattern_text(src, *inner)),
        _ => parameter_text(src, pattern),
    }
}
