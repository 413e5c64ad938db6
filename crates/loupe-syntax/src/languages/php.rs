//! PHP: namespaces (block and file-scoped), classes, interfaces, traits, enums and cases,
//! functions, methods (`__construct` as constructor), properties (also promoted constructor
//! parameters), class constants; `use` (grouped, aliased, function/const), `require` and
//! `include`; function, method, static and `new` calls; `extends`, `implements`, trait `use`.
//!
//! Must not report variables with their `$`: a variable `$x` is the reference `x`.

use tree_sitter::Node;

use super::shared::{children, field_start, named_children, unquote};
use crate::facts::{Import, ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

pub(crate) static RULES: Rules = Rules {
    lang: Lang::Php,
    language: || tree_sitter_php::LANGUAGE_PHP.into(),
    references: &["name"],
    comments: &["comment"],
    attributes: &[],
    handled: &[
        "namespace_definition",
        "class_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
        "enum_case",
        "function_definition",
        "method_declaration",
        "property_declaration",
        "property_promotion_parameter",
        "const_declaration",
        "use_declaration",
        "namespace_use_declaration",
        "require_expression",
        "require_once_expression",
        "include_expression",
        "include_once_expression",
        "function_call_expression",
        "member_call_expression",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
        "object_creation_expression",
        "simple_parameter",
    ],
    opaque: &["string"],
    decorations: &["attribute_list"],
    not_references: &["this"],
    doc_style: DocStyle::AnyComment,
    visit,
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "namespace_definition" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let body = node.child_by_field_name("body");
            let mut def = w.def(SymbolKind::Namespace, name);
            def.body = body.map(|b| b.start_byte());
            def.scope_to_end = body.is_none();
            w.define(def);
        }
        "class_declaration" => type_declaration(w, node, SymbolKind::Class),
        "interface_declaration" => type_declaration(w, node, SymbolKind::Interface),
        "trait_declaration" => type_declaration(w, node, SymbolKind::Trait),
        "enum_declaration" => type_declaration(w, node, SymbolKind::Enum),
        "enum_case" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::EnumMember, name);
            def.opens_scope = false;
            w.define(def);
        }
        "function_definition" | "method_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let kind = match (node.kind(), w.text(name)) {
                ("function_definition", _) => SymbolKind::Function,
                (_, "__construct") => SymbolKind::Constructor,
                _ => SymbolKind::Method,
            };
            let mut def = w.def(kind, name);
            def.body = field_start(node, "body");
            w.define(def);
        }
        "property_declaration" => {
            for element in children(node).into_iter().filter(|c| c.kind() == "property_element") {
                let Some(variable) = element.child_by_field_name("name") else { continue };
                let name = variable.named_child(0).unwrap_or(variable);
                let mut def = w.def(SymbolKind::Property, name);
                def.opens_scope = false;
                w.define(def);
            }
        }
        "property_promotion_parameter" => {
            let Some(variable) = node.child_by_field_name("name") else { return Flow::Descend };
            let name = variable.named_child(0).unwrap_or(variable);
            let mut def = w.def(SymbolKind::Property, name);
            def.outside_scopes = 1;
            def.opens_scope = false;
            w.define(def);
        }
        "const_declaration" => {
            for element in children(node).into_iter().filter(|c| c.kind() == "const_element") {
                let Some(name) = element.named_child(0) else { continue };
                let mut def = w.def(SymbolKind::Constant, name);
                def.opens_scope = false;
                w.define(def);
            }
        }
        "use_declaration" => {
            // `use SomeTrait;` inside a class.
            if let Some(class) = w.scope_name().map(str::to_owned) {
                for used in named_children(node).into_iter().filter(|c| matches!(c.kind(), "name" | "qualified_name")) {
                    let supertype = w.text(used);
                    w.relation(&class, supertype, RelationKind::Implements, used);
                }
            }
        }
        "namespace_use_declaration" => namespace_use(w, node),
        "require_expression" | "require_once_expression" | "include_expression" | "include_once_expression" => {
            let kind = if node.kind().starts_with("require") { ImportKind::Require } else { ImportKind::Include };
            if let Some(argument) = node.named_child(0) {
                let module = match argument.kind() {
                    "string" | "encapsed_string" => unquote(w.text(argument)),
                    _ => w.text(argument),
                };
                let import = w.simple_import(kind, module);
                w.import(import);
            }
        }
        "function_call_expression" => {
            let Some(function) = node.child_by_field_name("function") else { return Flow::Descend };
            let (qualifier, name) = split_name(w, function);
            let callee = w.text(name);
            w.call(name, callee, qualifier, None);
        }
        "member_call_expression" | "nullsafe_member_call_expression" => {
            let (Some(object), Some(name)) = (node.child_by_field_name("object"), node.child_by_field_name("name"))
            else {
                return Flow::Descend;
            };
            let receiver = Some(text::cut(w.text(object), text::RECEIVER_CHARS));
            let callee = w.text(name);
            w.call(name, callee, None, receiver);
        }
        "scoped_call_expression" => {
            let (Some(scope), Some(name)) = (node.child_by_field_name("scope"), node.child_by_field_name("name"))
            else {
                return Flow::Descend;
            };
            let callee = w.text(name);
            let qualifier = Some(w.text(scope).to_owned());
            w.call(name, callee, qualifier, None);
        }
        "object_creation_expression" => {
            let Some(class) = named_children(node).into_iter().find(|c| matches!(c.kind(), "name" | "qualified_name"))
            else {
                return Flow::Descend;
            };
            let (qualifier, name) = split_name(w, class);
            let callee = w.text(name);
            w.call(name, callee, qualifier, None);
        }
        "simple_parameter" => {
            if let Some(variable) = node.child_by_field_name("name")
                && let Some(name) = variable.named_child(0)
            {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// `\A\B\f` → (`\A\B`, `f`); a plain name has no qualifier.
fn split_name<'a>(w: &Walker<'a>, node: Node<'a>) -> (Option<String>, Node<'a>) {
    if node.kind() != "qualified_name" {
        return (None, node);
    }
    let name =
        node.child_by_field_name("name").or_else(|| named_children(node).into_iter().rfind(|c| c.kind() == "name"));
    let Some(name) = name else { return (None, node) };
    let qualifier = w.src.get(node.start_byte()..name.start_byte()).unwrap_or("").trim_end_matches('\\');
    (if qualifier.is_empty() { None } else { Some(qualifier.to_owned()) }, name)
}

fn type_declaration<'a>(w: &mut Walker<'a>, node: Node<'a>, kind: SymbolKind) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let type_name = w.text(name);
    for clause in children(node) {
        let relation = match clause.kind() {
            "base_clause" => RelationKind::Extends,
            "class_interface_clause" => RelationKind::Implements,
            _ => continue,
        };
        for base in named_children(clause).into_iter().filter(|c| matches!(c.kind(), "name" | "qualified_name")) {
            let supertype = w.text(base);
            w.relation(type_name, supertype, relation, base);
        }
    }
    let mut def = w.def(kind, name);
    def.body = field_start(node, "body");
    w.define(def);
}

/// `use A\B;`, `use A\B as C;`, `use A\{B, C as D};`, `use function A\f;`.
fn namespace_use<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let line = node.start_position().row + 1;
    let group_prefix = named_children(node).into_iter().find(|c| c.kind() == "namespace_name").map(|p| w.text(p));
    let mut clauses = Vec::new();
    for child in named_children(node) {
        match child.kind() {
            "namespace_use_clause" => clauses.push(child),
            "namespace_use_group" => {
                clauses.extend(named_children(child).into_iter().filter(|c| c.kind() == "namespace_use_clause"));
            }
            _ => {}
        }
    }
    let mut plain: Vec<(String, String)> = Vec::new();
    let mut aliased: Vec<Import> = Vec::new();
    for clause in clauses {
        let Some(path) = named_children(clause).into_iter().find(|c| matches!(c.kind(), "qualified_name" | "name"))
        else {
            continue;
        };
        let full = match group_prefix {
            Some(prefix) => format!("{prefix}\\{}", w.text(path)),
            None => w.text(path).trim_start_matches('\\').to_owned(),
        };
        let (module, name) = match full.rsplit_once('\\') {
            Some((module, name)) => (module.to_owned(), name.to_owned()),
            None => (String::new(), full.clone()),
        };
        match clause.child_by_field_name("alias") {
            Some(alias) => {
                w.suppress(alias);
                aliased.push(Import {
                    kind: ImportKind::Import,
                    module,
                    names: vec![name],
                    alias: Some(w.text(alias).to_owned()),
                    line,
                    relative_level: 0,
                    is_system: false,
                });
            }
            None => plain.push((module, name)),
        }
    }
    // Group plain names by module, keeping first-seen order.
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    for (module, name) in plain {
        match grouped.iter_mut().find(|(m, _)| *m == module) {
            Some((_, names)) => names.push(name),
            None => grouped.push((module, vec![name])),
        }
    }
    for (module, names) in grouped {
        w.import(Import {
            kind: ImportKind::Import,
            module,
            names,
            alias: None,
            line,
            relative_level: 0,
            is_system: false,
        });
    }
    for import in aliased {
        w.import(import);
    }
}
