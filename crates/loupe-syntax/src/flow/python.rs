//! Python: parameters (`self` / `cls` of methods left out, `*args` and `**kwargs` kept),
//! assignment targets (the first binding of a name is its definition), augmented
//! assignments, `for`, `with … as`, `except … as`, the walrus, `match` capture patterns,
//! imports inside the scope; comprehensions and class bodies as scopes of their own; `global`
//! / `nonlocal`; calls with positional arguments; `return x` and lambda bodies.
//!
//! Must not count a keyword argument (`f(key=x)`) or a splat (`f(*x)`) as a positional
//! argument: those are uses.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, name_field, named_children, node_text, parameter_text};

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier"],
    functions: &["function_definition", "lambda"],
    scopes: &["list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"],
    class_scopes: &["class_definition"],
    classify,
    function_name: name_field,
    parameters,
    imported_names,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    match o.kind(1) {
        "attribute" if field == Some("attribute") => return Role::NotVariable,
        "keyword_argument" if field == Some("name") => return Role::NotVariable,
        "function_definition" | "class_definition" if field == Some("name") => return Role::NotVariable,
        "global_statement" | "nonlocal_statement" => return Role::DeclaresOuter,
        "call" if field == Some("function") => return Role::Called,
        _ => {}
    }
    if let Some(role) = import(o) {
        return role;
    }
    if let Some(role) = case_pattern(o) {
        return role;
    }
    if in_annotation(o) {
        return Role::NotVariable;
    }
    if let Some(role) = parameter(o) {
        return role;
    }
    if let Some(role) = target(o) {
        return role;
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    match o.kind(up + 1) {
        "return_statement" => return Role::Return,
        "expression_list" if o.kind(up + 2) == "return_statement" => return Role::Return,
        "lambda" if o.field(up) == Some("body") => return Role::Return,
        _ => {}
    }
    argument(o, up).unwrap_or(Role::Use)
}

/// Names inside an import: the name an import binds is a definition, the paths are not
/// variables.
fn import(o: &Occurrence<'_, '_>) -> Option<Role> {
    let (statement_up, statement) = (1..=3)
        .map(|up| (up, o.kind(up)))
        .find(|(_, kind)| matches!(*kind, "import_statement" | "import_from_statement" | "future_import_statement"))?;
    let binds = match o.kind(1) {
        // `import a as b`, `from m import a as b`: `b`.
        "aliased_import" => o.field(0) == Some("alias"),
        // `import a.b` binds `a`; `from m import a` binds `a`.
        "dotted_name" => {
            let first = o.node(1).and_then(|dotted| dotted.named_child(0)).map(|first| first.id());
            let is_first = first == o.node(0).map(|node| node.id());
            let whole_name = o.node(1).is_some_and(|dotted| dotted.named_child_count() == 1);
            statement_up == 2
                && match statement {
                    "import_statement" => is_first,
                    _ => o.field(1) == Some("name") && whole_name,
                }
        }
        _ => false,
    };
    Some(if binds { Role::Definition } else { Role::NotVariable })
}

/// Names in a `case` pattern: a capture (`case [x, *rest]`, `case {"k": x}`, `… as x`) binds;
/// `Point` in `case Point(x=…)` and `Color` in `case Color.RED` are read; the keyword `x` and
/// the attribute `RED` are not variables.
fn case_pattern(o: &Occurrence<'_, '_>) -> Option<Role> {
    match o.kind(1) {
        "splat_pattern" | "double_star_pattern" => Some(Role::Definition),
        "keyword_pattern" => Some(Role::NotVariable),
        "as_pattern" if o.kind(2) == "case_pattern" => Some(Role::Definition),
        "dotted_name" if matches!(o.kind(2), "case_pattern" | "class_pattern" | "keyword_pattern") => {
            let dotted = o.node(1)?;
            let is_first = dotted.named_child(0).map(|first| first.id()) == o.node(0).map(|node| node.id());
            let role = if !is_first {
                Role::NotVariable
            } else if dotted.named_child_count() == 1 && o.kind(2) != "class_pattern" {
                Role::Definition
            } else {
                Role::Use
            };
            Some(role)
        }
        _ => None,
    }
}

/// Whether the name is part of a type annotation (`x: List[T]`, `-> T`).
fn in_annotation(o: &Occurrence<'_, '_>) -> bool {
    (1..12)
        .map(|up| o.kind(up))
        .take_while(|kind| !kind.ends_with("statement") && !kind.is_empty())
        .any(|kind| kind == "type")
}

/// A parameter of the innermost function or lambda.
fn parameter(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut up = 0;
    loop {
        match o.kind(up + 1) {
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" if up < 2 => {}
            "default_parameter" | "typed_default_parameter" if o.field(up) == Some("name") => {}
            "parameters" | "lambda_parameters" => return Some(Role::Parameter),
            _ => return None,
        }
        up += 1;
    }
}

/// An assignment or binding target: `x = …`, `a, x = …`, `x += …`, `for x in`, `with … as x`,
/// `except E as x`, `(x := …)`.
fn target(o: &Occurrence<'_, '_>) -> Option<Role> {
    let mut up = 0;
    while matches!(
        o.kind(up + 1),
        "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "expression_list"
    ) && up < 8
    {
        up += 1;
    }
    let field = o.field(up);
    let role = match o.kind(up + 1) {
        "assignment" if field == Some("left") => Role::Binding,
        "named_expression" if field == Some("name") => Role::Binding,
        "augmented_assignment" if field == Some("left") => Role::Assignment,
        "for_statement" | "for_in_clause" if field == Some("left") => Role::Definition,
        "as_pattern_target" => Role::Definition,
        _ => return None,
    };
    Some(role)
}

/// `f(x)`, `obj.m(x)`: positional arguments only.
fn argument(o: &Occurrence<'_, '_>, up: usize) -> Option<Role> {
    let (call, index) = o.argument_at(up, &["argument_list"])?;
    if call.kind() != "call" {
        return None;
    }
    let function = call.child_by_field_name("function")?;
    let call = match function.kind() {
        "identifier" => Call::plain(node_text(o.src, function))?,
        "attribute" => {
            let object = function.child_by_field_name("object")?;
            let name = function.child_by_field_name("attribute")?;
            Call::member(node_text(o.src, name), node_text(o.src, object))?
        }
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// The parameters of a function or lambda; the first one of a method (`self`, `cls`) is the
/// receiver and left out, unless the method is a `@staticmethod`.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    let mut names: Vec<String> = named_children(list)
        .into_iter()
        .filter_map(|parameter| match parameter.kind() {
            "positional_separator" | "keyword_separator" => None,
            "default_parameter" | "typed_default_parameter" => {
                parameter.child_by_field_name("name").map(|name| parameter_text(src, name))
            }
            "typed_parameter" => parameter.named_child(0).map(|name| parameter_text(src, name)),
            _ => Some(parameter_text(src, parameter)),
        })
        .collect();
    if is_method(src, function) && !names.is_empty() {
        names.remove(0);
    }
    names
}

/// A `def` directly in a class body, not decorated `@staticmethod`.
fn is_method(src: &str, function: Node<'_>) -> bool {
    if function.kind() != "function_definition" {
        return false;
    }
    let Some(mut parent) = function.parent() else { return false };
    if parent.kind() == "decorated_definition" {
        let mut cursor = parent.walk();
        let is_static = parent
            .named_children(&mut cursor)
            .filter(|child| child.kind() == "decorator")
            .any(|decorator| node_text(src, decorator).trim_start_matches('@').trim().ends_with("staticmethod"));
        if is_static {
            return false;
        }
        let Some(grandparent) = parent.parent() else { return false };
        parent = grandparent;
    }
    parent.kind() == "block" && parent.parent().is_some_and(|class| class.kind() == "class_definition")
}

/// The names module-level imports bind: `import a.b` binds `a`, `import a as b` and
/// `from m import a as b` bind `b`, `from m import a` binds `a`.
fn imported_names(src: &str, root: Node<'_>) -> HashSet<String> {
    let mut names = HashSet::new();
    for statement in named_children(root) {
        let is_from = match statement.kind() {
            "import_statement" => false,
            "import_from_statement" => true,
            _ => continue,
        };
        let module = statement.child_by_field_name("module_name").map(|module| module.id());
        for part in named_children(statement) {
            if Some(part.id()) == module {
                continue;
            }
            let bound = match part.kind() {
                "aliased_import" => part.child_by_field_name("alias").map(|alias| node_text(src, alias)),
                "dotted_name" if is_from => Some(node_text(src, part)),
                "dotted_name" => part.named_child(0).map(|first| node_text(src, first)),
                _ => None,
            };
            if let Some(bound) = bound {
                names.insert(bound.to_owned());
            }
        }
    }
    names
}
