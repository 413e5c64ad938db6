//! JavaScript, JSX, TypeScript and TSX: functions (also arrow and function expressions bound
//! to a `const`), classes, methods, constructors, accessors, fields, interfaces, type
//! aliases, enums and members, namespaces and ambient modules, top-level consts and
//! variables; the ES5 and CommonJS forms (`var X = (function () { function X() … }())`
//! classes, `X.prototype.m = function`, `exports.f = function`, `{ m: function … }`); `import`, `export … from`, `require`, `import x = require()`, dynamic
//! `import()`; calls and `new X()`; `extends` / `implements`.
//!
//! Must not invent names for anonymous values other than `default` for `export default`.

use tree_sitter::Node;

use super::shared::{children, field_start, named_children, unquote};
use crate::facts::{Import, ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

const REFERENCES: &[&str] = &[
    "identifier",
    "type_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "private_property_identifier",
];

const HANDLED: &[&str] = &[
    "function_declaration",
    "generator_function_declaration",
    "function_signature",
    "function_expression",
    "function",
    "class_declaration",
    "abstract_class_declaration",
    "class",
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "public_field_definition",
    "field_definition",
    "property_signature",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "enum_body",
    "internal_module",
    "module",
    "variable_declarator",
    "import_statement",
    "export_statement",
    "call_expression",
    "new_expression",
    "formal_parameters",
    "arrow_function",
    "catch_clause",
    "type_parameter",
    "for_in_statement",
    "jsx_opening_element",
    "jsx_closing_element",
    "jsx_self_closing_element",
    "jsx_attribute",
    "assignment_expression",
    "pair",
];

pub(crate) static TYPESCRIPT: Rules = Rules {
    lang: Lang::TypeScript,
    language: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    references: REFERENCES,
    comments: &["comment"],
    attributes: &["decorator"],
    handled: HANDLED,
    opaque: &["string", "number", "regex"],
    decorations: &["decorator"],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

pub(crate) static TSX: Rules =
    Rules { lang: Lang::Tsx, language: || tree_sitter_typescript::LANGUAGE_TSX.into(), ..TYPESCRIPT };

pub(crate) static JAVASCRIPT: Rules =
    Rules { lang: Lang::JavaScript, language: || tree_sitter_javascript::LANGUAGE.into(), ..TYPESCRIPT };

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            // `function X` inside the ES5 class `var X = (function () { … }())` constructs it.
            let constructs = node
                .child_by_field_name("name")
                .is_some_and(|name| w.scope_kind() == Some(SymbolKind::Class) && w.scope_name() == Some(w.text(name)));
            define_named(w, node, if constructs { SymbolKind::Constructor } else { SymbolKind::Function });
        }
        "function_expression" | "function"
            // Named function expressions bound to a variable are defined by the declarator.
            if w.ancestor_kind(1) == "export_statement" => {
                define_named(w, node, SymbolKind::Function);
            }
        "class_declaration" | "abstract_class_declaration" => {
            heritage(w, node);
            define_named(w, node, SymbolKind::Class);
        }
        "class"
            if w.ancestor_kind(1) == "export_statement" => {
                heritage(w, node);
                define_named(w, node, SymbolKind::Class);
            }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let is_accessor = children(node).iter().any(|child| matches!(child.kind(), "get" | "set"));
            let kind = if w.text(name) == "constructor" {
                SymbolKind::Constructor
            } else if is_accessor {
                SymbolKind::Property
            } else {
                SymbolKind::Method
            };
            let mut def = w.def(kind, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "public_field_definition" | "field_definition" => {
            let name = node.child_by_field_name("name").or_else(|| node.child_by_field_name("property"));
            let Some(name) = name else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Field, name);
            def.opens_scope = false;
            w.define(def);
        }
        // Members of interfaces and object type aliases; inline object types in parameters are
        // not definitions.
        "property_signature" if matches!(w.scope_kind(), Some(SymbolKind::Interface | SymbolKind::TypeAlias)) => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let def = w.def(SymbolKind::Property, name);
            w.define(def);
        }
        "interface_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let interface_name = w.text(name);
            for clause in children(node).into_iter().filter(|c| c.kind() == "extends_type_clause") {
                for supertype in named_children(clause) {
                    let supertype_name = text::strip_generics(w.text(supertype));
                    w.relation(interface_name, supertype_name, RelationKind::Extends, supertype);
                }
            }
            define_named(w, node, SymbolKind::Interface);
        }
        "type_alias_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::TypeAlias, name);
            def.outer = lifted(w);
            def.opens_scope = node.child_by_field_name("value").is_some_and(|v| v.kind() == "object_type");
            w.define(def);
        }
        "enum_declaration" => define_named(w, node, SymbolKind::Enum),
        "enum_body" => {
            for member in named_children(node) {
                let name = match member.kind() {
                    "property_identifier" | "string" => member,
                    "enum_assignment" => member.child_by_field_name("name").unwrap_or(member),
                    _ => continue,
                };
                let mut def = w.def(SymbolKind::EnumMember, name);
                def.name = unquote(w.text(name));
                def.span_node = Some(member);
                def.signature_node = Some(member);
                def.opens_scope = false;
                w.define(def);
            }
        }
        "internal_module" => define_named(w, node, SymbolKind::Namespace),
        "module" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Module, name);
            def.name = unquote(w.text(name));
            def.outer = lifted(w);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "variable_declarator" => declarator(w, node),
        "assignment_expression" => assignment(w, node),
        "pair" => object_member(w, node),
        "import_statement" => import_statement(w, node),
        "export_statement" => export_from(w, node),
        "call_expression" => call(w, node),
        "new_expression" => {
            let Some(constructor) = node.child_by_field_name("constructor") else { return Flow::Descend };
            match constructor.kind() {
                "identifier" => {
                    let callee = w.text(constructor);
                    w.call(constructor, callee, None, None);
                }
                "member_expression" => {
                    let (Some(object), Some(property)) =
                        (constructor.child_by_field_name("object"), constructor.child_by_field_name("property"))
                    else {
                        return Flow::Descend;
                    };
                    let callee = w.text(property);
                    let qualifier = Some(w.text(object).to_owned());
                    w.call(property, callee, qualifier, None);
                }
                _ => {}
            }
        }
        "formal_parameters" => {
            for parameter in named_children(node) {
                suppress_parameter(w, parameter);
            }
        }
        "arrow_function" => {
            if let Some(parameter) = node.child_by_field_name("parameter") {
                suppress_binding(w, parameter, 0);
            }
        }
        "catch_clause" => {
            if let Some(parameter) = node.child_by_field_name("parameter") {
                suppress_binding(w, parameter, 0);
            }
        }
        "for_in_statement" => {
            if let Some(left) = node.child_by_field_name("left") {
                suppress_binding(w, left, 0);
            }
        }
        "type_parameter" => {
            if let Some(name) = node.child_by_field_name("name") {
                w.suppress(name);
            }
        }
        // `<div className=…>`: intrinsic elements and attribute names are not identifiers in
        // scope; `<Button …>` is a use of `Button`.
        "jsx_opening_element" | "jsx_closing_element" | "jsx_self_closing_element" => {
            if let Some(name) = node.child_by_field_name("name")
                && name.kind() == "identifier" && w.text(name).starts_with(|c: char| c.is_ascii_lowercase()) {
                    w.suppress(name);
                }
        }
        "jsx_attribute" => {
            if let Some(name) = node.named_child(0).filter(|n| n.kind() == "property_identifier") {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// The depth of the node a definition's span starts at: the visited node, or the `export`
/// / `declare` statement wrapping it.
fn lifted(w: &Walker<'_>) -> usize {
    let mut outer = w.depth;
    while outer > 0 {
        let parent_kind = w.ancestor_kind(w.depth - outer + 1);
        if matches!(parent_kind, "export_statement" | "ambient_declaration") {
            outer -= 1;
        } else {
            break;
        }
    }
    outer
}

/// A declaration with a `name` field (`default` when an exported value has none) and a
/// `body` field.
fn define_named<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let name = node.child_by_field_name("name");
    let mut def = match name {
        Some(name) => w.def(kind, name),
        None if w.ancestor_kind(1) == "export_statement" => {
            let mut def = w.def(kind, node);
            def.name = "default";
            def
        }
        None => return,
    };
    def.outer = lifted(w);
    def.body = field_start(node, "body");
    w.define(def);
}

fn heritage<'a>(w: &mut Walker<'a>, class: Node<'a>) {
    let Some(name) = class.child_by_field_name("name") else { return };
    let class_name = w.text(name);
    let Some(heritage) = children(class).into_iter().find(|child| child.kind() == "class_heritage") else {
        return;
    };
    for clause in named_children(heritage) {
        match clause.kind() {
            "extends_clause" => {
                for value in named_children(clause).into_iter().filter(|v| v.kind() != "type_arguments") {
                    let supertype = text::strip_generics(w.text(value));
                    w.relation(class_name, supertype, RelationKind::Extends, value);
                }
            }
            "implements_clause" => {
                for value in named_children(clause) {
                    let supertype = text::strip_generics(w.text(value));
                    w.relation(class_name, supertype, RelationKind::Implements, value);
                }
            }
            // JavaScript: `class A extends B` has the expression right under the heritage.
            _ => {
                let supertype = text::strip_generics(w.text(clause));
                w.relation(class_name, supertype, RelationKind::Extends, clause);
            }
        }
    }
}

/// `const f = () => …` is a function, `const C = class …` a class; other top-level
/// declarators are constants (`const`) or variables; inside functions they are locals.
fn declarator<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let value = node.child_by_field_name("value");
    let value_kind = value.map_or("", |value| value.kind());
    if name.kind() != "identifier" || value.is_some_and(|value| is_require(w, value)) {
        suppress_binding(w, name, 0);
        return;
    }
    let declaration = w.ancestor(1);
    let is_const = declaration.is_some_and(|d| d.child(0).is_some_and(|keyword| keyword.kind() == "const"));
    let es5_class = value.and_then(|value| es5_class_body(w, value, w.text(name)));
    let (kind, body) = match value_kind {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            (SymbolKind::Function, value.and_then(|value| field_start(value, "body")))
        }
        "class" => (SymbolKind::Class, value.and_then(|value| field_start(value, "body"))),
        _ if es5_class.is_some() => (SymbolKind::Class, es5_class),
        _ => {
            let module_level = matches!(w.scope_kind(), None | Some(SymbolKind::Namespace | SymbolKind::Module));
            if !module_level || w.in_function() || in_anonymous_function(w) {
                w.suppress(name);
                return;
            }
            (if is_const { SymbolKind::Constant } else { SymbolKind::Variable }, None)
        }
    };
    if kind == SymbolKind::Class
        && let Some(value) = value
    {
        heritage_of_expression(w, w.text(name), value);
    }
    let mut def = w.def(kind, name);
    let single = declaration.is_some_and(|d| d.named_child_count() == 1);
    if single {
        def.outer = w.depth - 1;
        if w.ancestor_kind(2) == "export_statement" {
            def.outer = w.depth - 2;
        }
    }
    def.body = body;
    def.opens_scope = matches!(kind, SymbolKind::Function | SymbolKind::Class) || value_kind == "object";
    w.define(def);
}

/// The body start of the ES5 class pattern compilers emit, `var X = (function (_super) {
/// function X() {…} X.prototype.m = …; return X; }(Base))`: an immediately called function
/// that declares a function of the variable's name.
fn es5_class_body<'a>(w: &Walker<'a>, value: Node<'a>, name: &str) -> Option<usize> {
    fn unwrap(mut node: Node<'_>) -> Node<'_> {
        while node.kind() == "parenthesized_expression" {
            match node.named_child(0) {
                Some(inner) => node = inner,
                None => break,
            }
        }
        node
    }
    let call = unwrap(value);
    if call.kind() != "call_expression" {
        return None;
    }
    let function = unwrap(call.child_by_field_name("function")?);
    if !matches!(function.kind(), "function_expression" | "function") {
        return None;
    }
    let body = function.child_by_field_name("body")?;
    let declares_it = named_children(body).into_iter().any(|statement| {
        statement.kind() == "function_declaration"
            && statement.child_by_field_name("name").is_some_and(|declared| w.text(declared) == name)
    });
    declares_it.then(|| body.start_byte())
}

const FUNCTION_VALUES: &[&str] = &["function_expression", "function", "arrow_function", "generator_function"];

/// `X.prototype.m = function …` is a method of `X`; `X.f = function …` a function with
/// container `X` (a static method when `X` is the class being defined), `exports.f = …` and
/// `module.exports.f = …` plain functions: the ES5 and CommonJS ways of defining them.
fn assignment<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
        return;
    };
    if left.kind() != "member_expression" || !FUNCTION_VALUES.contains(&right.kind()) {
        return;
    }
    let (Some(object), Some(property)) = (left.child_by_field_name("object"), left.child_by_field_name("property"))
    else {
        return;
    };
    if property.kind() != "property_identifier" {
        return;
    }
    let object_text = w.text(object);
    let plain_path = |text: &str| {
        !text.is_empty()
            && text.split('.').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
            })
    };
    let enclosing_class = (w.scope_kind() == Some(SymbolKind::Class)).then(|| w.scope_name()).flatten();
    let (kind, owner) = match object_text.strip_suffix(".prototype") {
        Some(owner) if plain_path(owner) => (SymbolKind::Method, owner),
        _ if matches!(object_text, "exports" | "module.exports") => (SymbolKind::Function, ""),
        _ if plain_path(object_text) && enclosing_class == Some(object_text) => (SymbolKind::Method, object_text),
        _ if plain_path(object_text) => (SymbolKind::Function, object_text),
        _ => return,
    };
    let mut def = w.def(kind, property);
    if !owner.is_empty() && enclosing_class != Some(owner) {
        def.container = Some(owner.to_owned());
    }
    def.body = field_start(right, "body");
    w.define(def);
}

/// `{ name: function () {…} }` and `{ name: () => … }`: a method of an object literal, like
/// `{ name() {…} }` is.
fn object_member<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let (Some(key), Some(value)) = (node.child_by_field_name("key"), node.child_by_field_name("value")) else {
        return;
    };
    if !FUNCTION_VALUES.contains(&value.kind()) || !matches!(key.kind(), "property_identifier" | "string") {
        return;
    }
    let mut def = w.def(SymbolKind::Method, key);
    def.name = unquote(w.text(key));
    def.body = field_start(value, "body");
    w.define(def);
}

/// Inside the body of a function no definition names (`var f = cond || function () { var
/// m; }`, an IIFE): its variables are locals, not module-level definitions.
fn in_anonymous_function(w: &Walker<'_>) -> bool {
    (1..=w.depth).any(|up| {
        matches!(w.ancestor_kind(up), "function_expression" | "function" | "arrow_function" | "generator_function")
    })
}

fn heritage_of_expression<'a>(w: &mut Walker<'a>, name: &'a str, class: Node<'a>) {
    let Some(heritage) = children(class).into_iter().find(|child| child.kind() == "class_heritage") else {
        return;
    };
    for clause in named_children(heritage) {
        let values = if clause.kind().ends_with("_clause") { named_children(clause) } else { vec![clause] };
        let kind = if clause.kind() == "implements_clause" { RelationKind::Implements } else { RelationKind::Extends };
        for value in values.into_iter().filter(|v| v.kind() != "type_arguments") {
            let supertype = text::strip_generics(w.text(value));
            w.relation(name, supertype, kind, value);
        }
    }
}

fn is_require(w: &Walker<'_>, value: Node<'_>) -> bool {
    value.kind() == "call_expression"
        && value.child_by_field_name("function").is_some_and(|f| f.kind() == "identifier" && w.text(f) == "require")
}

fn suppress_parameter(w: &mut Walker<'_>, parameter: Node<'_>) {
    match parameter.kind() {
        "required_parameter" | "optional_parameter" => {
            if let Some(pattern) = parameter.child_by_field_name("pattern") {
                suppress_binding(w, pattern, 0);
            }
        }
        _ => suppress_binding(w, parameter, 0),
    }
}

/// Marks the names a binding pattern introduces (`x`, `{ a, b: c }`, `[x, ...rest]`,
/// `x = 1`) as locals rather than uses.
fn suppress_binding(w: &mut Walker<'_>, pattern: Node<'_>, depth: usize) {
    if depth > 4 {
        return;
    }
    match pattern.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => w.suppress(pattern),
        "assignment_pattern" | "object_assignment_pattern" => {
            if let Some(left) = pattern.child_by_field_name("left") {
                suppress_binding(w, left, depth + 1);
            }
        }
        "pair_pattern" => {
            if let Some(value) = pattern.child_by_field_name("value") {
                suppress_binding(w, value, depth + 1);
            }
        }
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            for child in named_children(pattern) {
                suppress_binding(w, child, depth + 1);
            }
        }
        _ => {}
    }
}

fn string_value<'a>(w: &Walker<'a>, node: Node<'a>) -> &'a str {
    unquote(w.text(node))
}

fn call<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(function) = node.child_by_field_name("function") else { return };
    match function.kind() {
        "identifier" => {
            let callee = w.text(function);
            if callee == "require"
                && let Some(module) = first_string_argument(w, node)
            {
                require(w, node, module);
                return;
            }
            w.call(function, callee, None, None);
        }
        // `super(…)` in a constructor: the parent's constructor.
        "super" => w.call(function, "super", None, None),
        "import" => {
            if let Some(module) = first_string_argument(w, node) {
                let import = w.simple_import(ImportKind::Import, module);
                w.import(import);
            }
        }
        "member_expression" => {
            let (Some(object), Some(property)) =
                (function.child_by_field_name("object"), function.child_by_field_name("property"))
            else {
                return;
            };
            w.member_call(property, object);
        }
        _ => {}
    }
}

fn first_string_argument<'a>(w: &Walker<'a>, call: Node<'a>) -> Option<&'a str> {
    let arguments = call.child_by_field_name("arguments")?;
    let first = arguments.named_child(0)?;
    matches!(first.kind(), "string" | "template_string").then(|| string_value(w, first))
}

/// `require("m")`, with the names it is bound to when it initialises a declarator.
fn require<'a>(w: &mut Walker<'a>, call: Node<'a>, module: &str) {
    let mut import = w.simple_import(ImportKind::Require, module);
    import.line = call.start_position().row + 1;
    if w.ancestor_kind(1) == "variable_declarator"
        && let Some(binding) = w.ancestor(1).and_then(|d| d.child_by_field_name("name"))
    {
        match binding.kind() {
            "identifier" => import.alias = Some(w.text(binding).to_owned()),
            "object_pattern" => {
                for property in named_children(binding) {
                    match property.kind() {
                        "shorthand_property_identifier_pattern" => import.names.push(w.text(property).to_owned()),
                        "pair_pattern" => {
                            if let Some(key) = property.child_by_field_name("key") {
                                import.names.push(w.text(key).to_owned());
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    w.import(import);
}

fn import_statement<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let line = node.start_position().row + 1;
    let make = |kind: ImportKind, module: &str, names: Vec<String>, alias: Option<String>| Import {
        kind,
        module: module.to_owned(),
        names,
        alias,
        line,
        relative_level: 0,
        is_system: false,
    };
    if let Some(require_clause) = children(node).into_iter().find(|c| c.kind() == "import_require_clause") {
        let module = require_clause.child_by_field_name("source").map_or("", |s| string_value(w, s));
        let alias = named_children(require_clause).into_iter().find(|c| c.kind() == "identifier");
        if let Some(alias) = alias {
            w.suppress(alias);
        }
        let import = make(ImportKind::Require, module, Vec::new(), alias.map(|a| w.text(a).to_owned()));
        w.import(import);
        return;
    }
    let Some(source) = node.child_by_field_name("source") else { return };
    let module = string_value(w, source);
    let Some(clause) = children(node).into_iter().find(|c| c.kind() == "import_clause") else {
        w.import(make(ImportKind::Import, module, Vec::new(), None));
        return;
    };
    let mut plain = Vec::new();
    let mut aliased: Vec<(String, String)> = Vec::new();
    for part in named_children(clause) {
        match part.kind() {
            // The default import's local name is the module's one mention of what it
            // imports: it stays a reference (an alias of a named import does not).
            "identifier" => aliased.push(("default".to_owned(), w.text(part).to_owned())),
            "namespace_import" => {
                if let Some(alias) = named_children(part).into_iter().find(|c| c.kind() == "identifier") {
                    w.suppress(alias);
                    aliased.push(("*".to_owned(), w.text(alias).to_owned()));
                }
            }
            "named_imports" => {
                for specifier in named_children(part).into_iter().filter(|s| s.kind() == "import_specifier") {
                    let name = specifier.child_by_field_name("name").map_or("", |n| w.text(n));
                    match specifier.child_by_field_name("alias") {
                        Some(alias) => {
                            w.suppress(alias);
                            aliased.push((name.to_owned(), w.text(alias).to_owned()));
                        }
                        None => plain.push(name.to_owned()),
                    }
                }
            }
            _ => {}
        }
    }
    if !plain.is_empty() || aliased.is_empty() {
        w.import(make(ImportKind::Import, module, plain, None));
    }
    for (name, alias) in aliased {
        w.import(make(ImportKind::Import, module, vec![name], Some(alias)));
    }
}

/// `export { a, b as c } from "m"`, `export * from "m"`, `export * as ns from "m"`.
fn export_from<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(source) = node.child_by_field_name("source") else { return };
    let module = string_value(w, source);
    let line = node.start_position().row + 1;
    let make = |names: Vec<String>, alias: Option<String>| Import {
        kind: ImportKind::Export,
        module: module.to_owned(),
        names,
        alias,
        line,
        relative_level: 0,
        is_system: false,
    };
    let mut plain = Vec::new();
    let mut aliased = Vec::new();
    let mut any_clause = false;
    for part in named_children(node) {
        match part.kind() {
            "export_clause" => {
                any_clause = true;
                for specifier in named_children(part).into_iter().filter(|s| s.kind() == "export_specifier") {
                    let name = specifier.child_by_field_name("name").map_or("", |n| w.text(n));
                    match specifier.child_by_field_name("alias") {
                        Some(alias) => aliased.push((name.to_owned(), w.text(alias).to_owned())),
                        None => plain.push(name.to_owned()),
                    }
                }
            }
            "namespace_export" => {
                any_clause = true;
                let alias = named_children(part).into_iter().find(|c| c.kind() != "*").map(|a| w.text(a).to_owned());
                aliased.push(("*".to_owned(), alias.unwrap_or_default()));
            }
            _ => {}
        }
    }
    if !any_clause {
        plain.push("*".to_owned());
    }
    if !plain.is_empty() || aliased.is_empty() {
        w.import(make(plain, None));
    }
    for (name, alias) in aliased {
        w.import(make(vec![name], Some(alias).filter(|a| !a.is_empty())));
    }
}
