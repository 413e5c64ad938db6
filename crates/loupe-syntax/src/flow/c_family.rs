//! C and C++: parameters (through pointer, array and reference declarators; `(void)` is none,
//! unnamed ones are `_`), local declarations, range-`for` and structured bindings, `catch`;
//! assignments (compound ones too), `++` / `--`; calls (`f`, `obj.m` / `p->m` with a
//! receiver, `ns::f` with a qualifier), `new Foo(x)`; `&x` and `*x` pass `x`; `return x`;
//! C++ lambdas as nested functions whose captures are uses.
//!
//! Must not expand macros or read `ns::x` as the local `x`.

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, named_children, no_imports, node_text};
use crate::languages::c_family::{base_name_node, split_qualified, unwrap_declarator};

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier"],
    functions: &["function_definition", "lambda_expression"],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name,
    parameters,
    imported_names: no_imports,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    let parent = o.kind(1);
    if parent.starts_with("preproc_") {
        return Role::NotVariable;
    }
    match parent {
        "qualified_identifier" | "enumerator" | "labeled_statement" | "goto_statement" => return Role::NotVariable,
        "lambda_capture_specifier" => return Role::UseOutside,
        "call_expression" if field == Some("function") => return Role::Called,
        "template_function" if field == Some("name") && o.kind(2) == "call_expression" => return Role::Called,
        "assignment_expression" if field == Some("left") => return Role::Assignment,
        "update_expression" => return Role::Assignment,
        _ => {}
    }
    if let Some(role) = declared(o) {
        return role;
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    if o.kind(up + 1) == "return_statement" {
        return Role::Return;
    }
    argument(o).unwrap_or(Role::Use)
}

/// A name a declarator declares: a local, a parameter, a range-`for` or `catch` variable, a
/// structured binding; a declared function's name is not a variable, a function pointer's is.
fn declared(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut through_pointer = false;
    for up in 0..16 {
        let field = o.field(up);
        match o.kind(up + 1) {
            "pointer_declarator" | "reference_declarator" => through_pointer = true,
            "array_declarator" | "init_declarator" | "attributed_declarator" if field == Some("declarator") => {}
            "parenthesized_declarator" | "structured_binding_declarator" => {}
            // `int (*cb)(int)` declares the pointer `cb`; `int f(int)` the function `f`.
            "function_declarator" if field == Some("declarator") && through_pointer => through_pointer = false,
            "function_declarator" => return (field == Some("declarator")).then_some(Role::NotVariable),
            "declaration" | "for_range_loop" | "condition_clause" => {
                return (field == Some("declarator")).then_some(Role::Definition);
            }
            "field_declaration" => return Some(Role::NotVariable),
            "parameter_declaration" | "optional_parameter_declaration" => {
                return (field == Some("declarator")).then(|| parameter(o, up + 1));
            }
            _ => return None,
        }
    }
    None
}

/// A parameter declaration `at` levels above: a parameter of the function being defined or of
/// a lambda, a `catch` variable, or a name in a prototype or function-pointer type (not a
/// variable).
fn parameter(o: &Occurrence<'_, '_>, at: usize) -> Role {
    if o.kind(at + 1) != "parameter_list" {
        return Role::NotVariable;
    }
    match o.kind(at + 2) {
        "catch_clause" => Role::Definition,
        "abstract_function_declarator" | "lambda_declarator" if o.kind(at + 3) == "lambda_expression" => {
            Role::Parameter
        }
        "function_declarator" => {
            // The function's own parameters: those of the declarator naming it (not of a
            // function type it returns), under a function definition.
            if o.node(at + 2).is_none_or(|declarator| innermost_function_declarator(declarator) != Some(declarator)) {
                return Role::NotVariable;
            }
            let mut up = at + 2;
            while up < at + 16 {
                match o.kind(up + 1) {
                    "pointer_declarator" | "reference_declarator" | "parenthesized_declarator" => {}
                    "function_declarator" if o.field(up) == Some("declarator") => {}
                    _ => break,
                }
                up += 1;
            }
            if o.kind(up + 1) == "function_definition" && o.field(up) == Some("declarator") {
                Role::Parameter
            } else {
                Role::NotVariable
            }
        }
        _ => Role::NotVariable,
    }
}

/// `f(x)`, `obj.m(x)`, `p->m(x)`, `ns::f(x)`, `new Foo(x)`, with `&x`, `*x` and parentheses
/// passing `x`.
fn argument(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut up = 0;
    while matches!(o.kind(up + 1), "parenthesized_expression" | "pointer_expression") && up < 8 {
        up += 1;
    }
    let (call, index) = o.argument_at(up, &["argument_list"])?;
    let src = o.src;
    let call = match call.kind() {
        "call_expression" => callee(src, call.child_by_field_name("function")?)?,
        "new_expression" => {
            let (scope, name) = split_qualified(src, call.child_by_field_name("type")?);
            Call::qualified(node_text(src, base_name_node(name)), scope)?
        }
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// The call named the way the walk names it.
fn callee(src: &str, function: Node<'_>) -> Option<Call> {
    match function.kind() {
        "identifier" => Call::plain(node_text(src, function)),
        "field_expression" => {
            let argument = function.child_by_field_name("argument")?;
            let (_, field) = split_qualified(src, function.child_by_field_name("field")?);
            Call::method(node_text(src, base_name_node(field)), node_text(src, argument))
        }
        "qualified_identifier" | "template_function" => {
            let (scope, name) = split_qualified(src, function);
            Call::qualified(node_text(src, base_name_node(name)), scope)
        }
        _ => None,
    }
}

/// The declarator whose parameters are the function's: the innermost function declarator on
/// the way to the name, under pointer, reference and parenthesised declarators (`int *f(int
/// a)`, `int (*f(int a))(int)`: `a`, not the returned pointer's `int`); a lambda's own.
fn function_declarator(function: Node<'_>) -> Option<Node<'_>> {
    innermost_function_declarator(function.child_by_field_name("declarator")?)
}

fn innermost_function_declarator(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    let mut innermost = None;
    for _ in 0..16 {
        match node.kind() {
            "function_declarator" | "abstract_function_declarator" | "lambda_declarator" => {
                innermost = Some(node);
                match node.child_by_field_name("declarator") {
                    Some(inner) => node = inner,
                    None => break,
                }
            }
            "pointer_declarator" | "reference_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                match node.child_by_field_name("declarator").or_else(|| node.named_child(0)) {
                    Some(inner) => node = inner,
                    None => break,
                }
            }
            _ => break,
        }
    }
    innermost
}

/// The name of a function definition (`bar` for `ns::Foo::bar`); lambdas have none.
fn function_name(src: &str, function: Node<'_>) -> Option<String> {
    if function.kind() != "function_definition" {
        return None;
    }
    let declared = unwrap_declarator(function.child_by_field_name("declarator")?)?;
    let (_, name) = split_qualified(src, declared.name);
    Some(node_text(src, base_name_node(name)).to_owned())
}

/// The parameters in order: `_` for an unnamed one, none for `(void)`, `...` left out.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function_declarator(function).and_then(|declarator| declarator.child_by_field_name("parameters"))
    else {
        return Vec::new();
    };
    let declarations: Vec<Node<'_>> = named_children(list)
        .into_iter()
        .filter(|parameter| matches!(parameter.kind(), "parameter_declaration" | "optional_parameter_declaration"))
        .collect();
    if let [only] = declarations.as_slice()
        && only.child_by_field_name("declarator").is_none()
        && only.child_by_field_name("type").is_some_and(|t| node_text(src, t) == "void")
    {
        return Vec::new();
    }
    declarations
        .into_iter()
        .map(|parameter| {
            parameter
                .child_by_field_name("declarator")
                .and_then(unwrap_declarator)
                .map_or_else(|| "_".to_owned(), |declared| node_text(src, declared.name).to_owned())
        })
        .collect()
}
