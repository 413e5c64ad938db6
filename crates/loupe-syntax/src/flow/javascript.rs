//! JavaScript, JSX, TypeScript and TSX: parameters (destructuring, defaults, rest, TS
//! `this:` left out), `let` / `const` / `var` declarators and their patterns, `for … of` /
//! `for … in`, `catch (e)`, imports; assignments (destructuring included), compound
//! assignments, `++` / `--`; calls and `new` (`x!`, `x as T` and parentheses pass `x`);
//! `return x` and arrow-function expression bodies; `{ x }` shorthand properties as uses.
//!
//! Must not treat property names (`obj.x`, `{ x: 1 }`, `this.x`) or type names as the variable.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{Call, FlowRules, Occurrence, Role, named_children, node_text, parameter_text};

pub(crate) static RULES: FlowRules = FlowRules {
    names: &["identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"],
    functions: &[
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "arrow_function",
        "method_definition",
    ],
    scopes: &[],
    class_scopes: &[],
    classify,
    function_name,
    parameters,
    imported_names,
};

fn classify(o: &Occurrence<'_, '_>) -> Role {
    let field = o.field(0);
    match o.kind(1) {
        "function_declaration"
        | "generator_function_declaration"
        | "function_expression"
        | "function"
        | "generator_function"
        | "class_declaration"
        | "class"
        | "abstract_class_declaration"
        | "enum_declaration"
        | "internal_module"
        | "module"
        | "interface_declaration"
        | "type_alias_declaration"
            if field == Some("name") =>
        {
            return Role::NotVariable;
        }
        "call_expression" if field == Some("function") => return Role::Called,
        "new_expression" if field == Some("constructor") => return Role::Called,
        "jsx_opening_element" | "jsx_closing_element" | "jsx_self_closing_element" if field == Some("name") => {
            return Role::Called;
        }
        "labeled_statement" | "break_statement" | "continue_statement" => return Role::NotVariable,
        // `import { a as b }`: `b` is bound, `a` names the export; `import { a }` binds `a`.
        "import_specifier" => {
            let aliased = o.node(1).is_some_and(|specifier| specifier.child_by_field_name("alias").is_some());
            return if !aliased || field == Some("alias") { Role::Definition } else { Role::NotVariable };
        }
        "import_clause" | "namespace_import" | "import_require_clause" => return Role::Definition,
        "export_specifier" if field == Some("alias") => return Role::NotVariable,
        _ => {}
    }
    if let Some(role) = binding(o) {
        return role;
    }
    let mut up = 0;
    while o.kind(up + 1) == "parenthesized_expression" {
        up += 1;
    }
    match o.kind(up + 1) {
        "update_expression" => return Role::Assignment,
        "return_statement" => return Role::Return,
        "arrow_function" if o.field(up) == Some("body") => return Role::Return,
        _ => {}
    }
    argument(o).unwrap_or(Role::Use)
}

/// A name a pattern binds or assigns: declarators, parameters, `catch`, `for … of`,
/// assignments (destructuring too).
fn binding(o: &Occurrence<'_, '_>) -> Option<Role> {
    for up in 0..16 {
        let field = o.field(up);
        match o.kind(up + 1) {
            "object_pattern" | "array_pattern" | "rest_pattern" => {}
            "pair_pattern" if field == Some("value") => {}
            "assignment_pattern" | "object_assignment_pattern" if field == Some("left") => {}
            "variable_declarator" => return (field == Some("name")).then_some(Role::Definition),
            "formal_parameters" => return Some(Role::Parameter),
            "required_parameter" | "optional_parameter" => {
                return (field == Some("pattern")).then_some(Role::Parameter);
            }
            "arrow_function" => return (field == Some("parameter")).then_some(Role::Parameter),
            "catch_clause" => return (field == Some("parameter")).then_some(Role::Definition),
            "for_in_statement" if field == Some("left") => {
                let declares = o.node(up + 1).is_some_and(|statement| statement.child_by_field_name("kind").is_some());
                return Some(if declares { Role::Definition } else { Role::Assignment });
            }
            "assignment_expression" | "augmented_assignment_expression" => {
                return (field == Some("left")).then_some(Role::Assignment);
            }
            _ => return None,
        }
    }
    None
}

/// `f(x)`, `obj.m(x)`, `new Foo(x)`, with `x!`, `x as T`, `<T>x` and parentheses passing `x`.
fn argument(o: &Occurrence<'_, '_>) -> Option<Role> {
    if o.kind(0) != "identifier" {
        return None;
    }
    let mut up = 0;
    while matches!(
        o.kind(up + 1),
        "parenthesized_expression"
            | "non_null_expression"
            | "as_expression"
            | "satisfies_expression"
            | "type_assertion"
    ) {
        up += 1;
    }
    let (call, index) = o.argument_at(up, &["arguments"])?;
    let src = o.src;
    let call = match call.kind() {
        "call_expression" => {
            let function = call.child_by_field_name("function")?;
            match function.kind() {
                "identifier" => Call::plain(node_text(src, function))?,
                "member_expression" => {
                    let object = function.child_by_field_name("object")?;
                    let property = function.child_by_field_name("property")?;
                    Call::member(node_text(src, property), node_text(src, object))?
                }
                _ => return None,
            }
        }
        "new_expression" => {
            let constructor = call.child_by_field_name("constructor")?;
            match constructor.kind() {
                "identifier" => Call::plain(node_text(src, constructor))?,
                "member_expression" => {
                    let object = constructor.child_by_field_name("object")?;
                    let property = constructor.child_by_field_name("property")?;
                    Call::qualified(node_text(src, property), Some(node_text(src, object).to_owned()))?
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(Role::Argument(call, index))
}

/// A function's name; an anonymous function or arrow bound by `const f = …` or a class field
/// `f = …` takes that name.
fn function_name(src: &str, function: Node<'_>) -> Option<String> {
    if let Some(name) = function.child_by_field_name("name") {
        return Some(node_text(src, name).to_owned());
    }
    let parent = function.parent()?;
    let name = match parent.kind() {
        "variable_declarator" => parent.child_by_field_name("name").filter(|name| name.kind() == "identifier")?,
        "public_field_definition" | "field_definition" => {
            parent.child_by_field_name("name").or_else(|| parent.child_by_field_name("property"))?
        }
        _ => return None,
    };
    Some(node_text(src, name).to_owned())
}

/// The parameters: names, or destructuring patterns as written; `this: T` is left out.
fn parameters(src: &str, function: Node<'_>) -> Vec<String> {
    if let Some(parameter) = function.child_by_field_name("parameter") {
        return vec![parameter_text(src, parameter)];
    }
    let Some(list) = function.child_by_field_name("parameters") else { return Vec::new() };
    named_children(list)
        .into_iter()
        .filter_map(|parameter| {
            let pattern = match parameter.kind() {
                "required_parameter" | "optional_parameter" => parameter.child_by_field_name("pattern")?,
                _ => parameter,
            };
            match pattern.kind() {
                "this" | "decorator" => None,
                "assignment_pattern" => pattern.child_by_field_name("left").map(|left| parameter_text(src, left)),
                "rest_pattern" => pattern.named_child(0).map(|inner| parameter_text(src, inner)),
                _ => Some(parameter_text(src, pattern)),
            }
        })
        .collect()
}

/// The names top-level `import`s and `require`s bind.
fn imported_names(src: &str, root: Node<'_>) -> HashSet<String> {
    let mut names = HashSet::new();
    for statement in named_children(root) {
        match statement.kind() {
            "import_statement" => {
                let mut stack = named_children(statement);
                while let Some(node) = stack.pop() {
                    match node.kind() {
                        "import_clause" | "named_imports" | "namespace_import" | "import_require_clause" => {
                            stack.extend(named_children(node));
                        }
                        "import_specifier" => {
                            let bound = node.child_by_field_name("alias").or_else(|| node.child_by_field_name("name"));
                            if let Some(bound) = bound {
                                names.insert(node_text(src, bound).to_owned());
                            }
                        }
                        "identifier" => {
                            names.insert(node_text(src, node).to_owned());
                        }
                        _ => {}
                    }
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                for declarator in named_children(statement) {
                    let (Some(name), Some(value)) =
                        (declarator.child_by_field_name("name"), declarator.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    let is_require = value.kind() == "call_expression"
                        && value
                            .child_by_field_name("function")
                            .is_some_and(|function| node_text(src, function) == "require");
                    if is_require && name.kind() == "identifier" {
                        names.insert(node_text(src, name).to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    names
}
